#!/usr/bin/python3
"""Train "AttnLab tiny": a small GPT-2-architecture model on the King James Bible.

Developer-time only (Debian's python3-torch, bible-kjv, python3-matplotlib); CI and users get the
committed checkpoint in assets/tiny/. See README.md in this folder for the exact command and results.

Writes, into --out:
  model.safetensors   HF GPT-2 layout (wte, wpe, h.N.*, ln_f), F16, tied lm_head, full 50,257 vocabulary
  config.json         HF GPT-2 config, read unchanged by src/model/gpt2_load.cpp
and, into --report:
  loss.csv, loss.png  training and validation loss against step
  summary.json        corpus/split facts, final validation perplexity, unigram baseline, timings, sha256s
and, into --fixture: the held-out logits that tests/tiny_model_tests.cpp compares our C++ forward pass to.

One trick keeps the output layer cheap and exact. The corpus uses ~13k of GPT-2's 50,257 tokens. All the
tokens it never uses share one embedding row u, so their logits are all h.u, and the full softmax equals a
softmax over (used tokens, plus one class "unused" with logit h.u + log(K_unused)). We train on that
compact softmax and export u into every unused row: the exported 50,257-way model is exactly the trained one.
"""
import argparse
import hashlib
import json
import math
import os
import re
import struct
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

VOCAB = 50257
EOT = 50256
NAME = "AttnLab tiny (trained on the King James Bible), not GPT-2"


# --------------------------------------------------------------------------------------------------
# Corpus: the KJV text from Debian's bible-kjv-text, printed by its reader `bible`.

def read_kjv():
    raw = subprocess.run(["bible", "-l10000", "gen1:1-rev22:21"], check=True, capture_output=True, text=True).stdout
    chapters = []  # (title, [verse, ...])
    for line in raw.splitlines():
        if not line.strip():
            continue
        m = re.match(r"^\s+(\d+) (.*)$", line)
        if m:
            chapters[-1][1].append(m.group(2).strip())
        elif re.match(r"^\S.* \d+$", line):
            chapters.append((line.strip(), []))
        else:  # a wrapped continuation of the previous verse
            chapters[-1][1][-1] += " " + line.strip()
    return chapters


def chapter_text(title, verses):
    # One verse a line, a title line, a blank line between chapters: prose-like, no verse numbers.
    return title + "\n" + "\n".join(verses) + "\n\n"


def tokenize(attnlab, text):
    out = subprocess.run([attnlab, "tokenize"], input=text.encode("utf-8"), check=True, capture_output=True).stdout
    return [int(t) for t in out.split()]


# --------------------------------------------------------------------------------------------------
# The model: GPT-2 (pre-LN, gelu_new, tied embeddings), parameters named as in HF's checkpoint.

class Block(torch.nn.Module):
    def __init__(self, C, n_head):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = torch.nn.LayerNorm(C, eps=1e-5)
        self.c_attn = torch.nn.Linear(C, 3 * C)
        self.attn_proj = torch.nn.Linear(C, C)
        self.ln_2 = torch.nn.LayerNorm(C, eps=1e-5)
        self.c_fc = torch.nn.Linear(C, 4 * C)
        self.mlp_proj = torch.nn.Linear(4 * C, C)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        # q, k, v: (B, n_head, T, d_head)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.n_head)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        if not self.training:  # each head's mean weight on the previous token, (n_head,), for the log
            self.previous_token = att.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2))
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.attn_proj(y)
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


class TinyGpt(torch.nn.Module):
    """GPT-2 whose token table has n_used rows plus one shared row (the last) for every unused token."""

    def __init__(self, n_rows, n_unused, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.log_unused = math.log(n_unused) if n_unused > 0 else None
        self.wte = torch.nn.Embedding(n_rows, C)
        self.wpe = torch.nn.Embedding(cfg["n_positions"], C)
        self.h = torch.nn.ModuleList(Block(C, cfg["n_head"]) for _ in range(cfg["n_layer"]))
        self.ln_f = torch.nn.LayerNorm(C, eps=1e-5)
        for name, p in self.named_parameters():  # GPT-2's initialisation, scaled residual projections
            if name == "wpe.weight" and cfg.get("sinusoidal_positions"):
                # Sinusoidal start (Vaswani et al.), at an RMS of --position-scale (0.02, the token table's): relative
                # offsets are then linear in the positions (an attempt at previous-token heads; README).
                pos = torch.arange(cfg["n_positions"], dtype=torch.float64)[:, None]
                freq = torch.pow(10000.0, -torch.arange(0, C, 2, dtype=torch.float64) / C)
                pe = torch.zeros(cfg["n_positions"], C, dtype=torch.float64)
                pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
                with torch.no_grad():
                    p.copy_(pe * (cfg.get("position_scale", 0.02) / math.sqrt(0.5)))
            elif name.endswith("bias"):
                torch.nn.init.zeros_(p)
            elif "ln" in name:
                torch.nn.init.ones_(p)
            else:
                std = 0.02 / math.sqrt(2 * cfg["n_layer"]) if name.endswith("proj.weight") else 0.02
                torch.nn.init.normal_(p, 0.0, std)
        qk_std = cfg.get("qk_init_std", 0.02)
        if qk_std != 0.02:
            # Larger query and key weights (1/sqrt(C) is Xavier's): a score q.k is bilinear in them, so
            # at GPT-2's 0.02 both gradients start near zero and attention stays uniform for long.
            for b in self.h:
                with torch.no_grad():
                    torch.nn.init.normal_(b.c_attn.weight[:2 * C], 0.0, qk_std)
        K = cfg.get("position_dims", 0)
        if K:
            # Positions and tokens start in separate dimensions: the first K carry sin/cos of the
            # position at K/2 frequencies from pi/2 down to pi/n_positions, the token table starts
            # at zero there. Both start with the same norm, so after ln_1 a query or key can read
            # the position without the token's noise.
            pos = torch.arange(cfg["n_positions"], dtype=torch.float64)[:, None]
            freq = self.position_frequencies(K, cfg["n_positions"])
            amplitude = 0.02 * math.sqrt((C - K) / (K / 2))
            with torch.no_grad():
                self.wpe.weight.zero_()
                self.wpe.weight[:, 0:K:2] = amplitude * torch.sin(pos * freq)
                self.wpe.weight[:, 1:K:2] = amplitude * torch.cos(pos * freq)
                self.wte.weight[:, :K] = 0.0
            if cfg.get("previous_token_start"):
                self.start_previous_token_head(self.h[0], K, freq, C)

    def previous_token_head_rows(self):
        C = self.wte.weight.shape[1]
        d_head = C // self.h[0].n_head
        return [slice(0, d_head), slice(C, C + d_head)]  # head 0's query rows and key rows in c_attn

    def hold_previous_token_head(self, held):
        # While held, the started head's query and key rows neither learn nor decay.
        W = self.h[0].c_attn.weight
        with torch.no_grad():
            for rows, value in zip(self.previous_token_head_rows(), held):
                if W.grad is not None:
                    W.grad[rows] = 0.0
                W[rows] = value

    @staticmethod
    def position_frequencies(K, n_positions):
        return torch.logspace(math.log10(math.pi / 2), math.log10(math.pi / n_positions), K // 2, dtype=torch.float64)

    @staticmethod
    def start_previous_token_head(block, K, freq, C):
        # Head 0 of the block starts as a previous-token head: its query is the position part of
        # the input, its key the same rotated one position on, so q_i.k_j ~ c^2 sum_f cos(w_f (i-j-1)),
        # largest at j = i - 1. Training may keep it, sharpen it or repurpose it (README).
        c = 1.5
        W = block.c_attn.weight  # (3C, C): rows [0, C) queries, [C, 2C) keys; head 0 is the first d_head rows
        d_head = C // block.n_head
        with torch.no_grad():
            W[:d_head].zero_()
            W[C:C + d_head].zero_()
            for f in range(min(K, d_head) // 2):
                w = float(freq[f])
                W[2 * f, 2 * f] = W[2 * f + 1, 2 * f + 1] = c
                W[C + 2 * f, 2 * f], W[C + 2 * f, 2 * f + 1] = c * math.cos(w), c * math.sin(w)
                W[C + 2 * f + 1, 2 * f], W[C + 2 * f + 1, 2 * f + 1] = -c * math.sin(w), c * math.cos(w)

    def forward(self, idx, first_position=None):
        # idx: (B, T) compact ids; returns logits over the compact classes, (B, T, n_rows).
        # first_position: (B,) where each window's positions start (training only; GPT-2 starts at 0).
        pos = torch.arange(idx.shape[1], device=idx.device)
        if first_position is not None:
            pos = first_position[:, None] + pos
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.T
        if self.log_unused is not None:  # the shared row stands for K_unused identical logits
            logits = torch.cat([logits[..., :-1], logits[..., -1:] + self.log_unused], dim=-1)
        return logits


# --------------------------------------------------------------------------------------------------
# Export: HF names, Conv1D weights stored (in, out), F16.

def hf_tensors(model, used_ids):
    sd = {k: v.detach().to(torch.float64) for k, v in model.state_dict().items()}
    C = sd["wpe.weight"].shape[1]
    wte = sd["wte.weight"][-1].repeat(VOCAB, 1)  # every unused token gets the shared row u
    wte[torch.tensor(used_ids)] = sd["wte.weight"][:-1]
    out = {"wte.weight": wte, "wpe.weight": sd["wpe.weight"]}
    for l in range(len(model.h)):
        p, q = f"h.{l}.", f"h.{l}."
        out[q + "ln_1.weight"], out[q + "ln_1.bias"] = sd[p + "ln_1.weight"], sd[p + "ln_1.bias"]
        out[q + "attn.c_attn.weight"], out[q + "attn.c_attn.bias"] = sd[p + "c_attn.weight"].T, sd[p + "c_attn.bias"]
        out[q + "attn.c_proj.weight"], out[q + "attn.c_proj.bias"] = sd[p + "attn_proj.weight"].T, sd[p + "attn_proj.bias"]
        out[q + "ln_2.weight"], out[q + "ln_2.bias"] = sd[p + "ln_2.weight"], sd[p + "ln_2.bias"]
        out[q + "mlp.c_fc.weight"], out[q + "mlp.c_fc.bias"] = sd[p + "c_fc.weight"].T, sd[p + "c_fc.bias"]
        out[q + "mlp.c_proj.weight"], out[q + "mlp.c_proj.bias"] = sd[p + "mlp_proj.weight"].T, sd[p + "mlp_proj.bias"]
    out["ln_f.weight"], out["ln_f.bias"] = sd["ln_f.weight"], sd["ln_f.bias"]
    assert out["wte.weight"].shape == (VOCAB, C)
    return out


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        blob = tensors[name].contiguous().numpy().astype("<f2").tobytes()
        header[name] = {"dtype": "F16", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F16"
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[8 + n + a:8 + n + b], dtype="<f2").reshape(info["shape"])
        out[name] = torch.from_numpy(arr.astype(np.float64))
    return out


def reference_logits(t, cfg, ids):
    """Float64 GPT-2 forward pass over the full vocabulary, straight from the HF-layout tensors."""
    C, H = cfg["n_embd"], cfg["n_head"]
    T = len(ids)
    x = t["wte.weight"][torch.tensor(ids)] + t["wpe.weight"][:T]  # x: (T, C)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    ln = lambda x, p: F.layer_norm(x, (C,), t[p + ".weight"], t[p + ".bias"], 1e-5)
    for l in range(cfg["n_layer"]):
        p = f"h.{l}."
        qkv = ln(x, p + "ln_1") @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        q, k, v = (a.view(T, H, C // H).transpose(0, 1) for a in qkv.split(C, dim=1))  # (H, T, d)
        att = (q @ k.transpose(-1, -2) / math.sqrt(C // H)).masked_fill(~mask, float("-inf")).softmax(-1)
        x = x + (att @ v).transpose(0, 1).reshape(T, C) @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        h = F.gelu(ln(x, p + "ln_2") @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
    return ln(x, "ln_f") @ t["wte.weight"].T  # (T, VOCAB)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def plot_losses(rows, unigram_ppl, path):
    """rows: (step, train_loss, val_loss, seconds, previous_token_max) after the header."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    ax.plot(steps, [r[1] for r in rows], label="training loss (mean since last point)")
    ax.plot(steps, [r[2] for r in rows], label="validation loss (59 held-out chapters)")
    ax.axhline(math.log(unigram_ppl), color="gray", ls="--", label=f"unigram baseline (ppl {unigram_ppl:.0f})")
    ax.set_xlabel("optimizer step (2,048 tokens each)")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title(NAME, fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if len(rows[0]) < 5:  # logs from before the previous-token column
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path)
        return
    ax2 = ax.twinx()
    ax2.plot(steps, [r[4] for r in rows], color="tab:green", ls=":",
             label="largest mean weight of a head on the previous token (right axis)")
    ax2.set_ylim(0, 1)
    ax2.set_ylabel("weight on the previous token")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


# --------------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnlab", help="the attnlab CLI, used as the GPT-2 tokenizer (required to train)")
    ap.add_argument("--out", default="assets/tiny")
    ap.add_argument("--report", default="tools/train_tiny/results")
    ap.add_argument("--fixture", default="tests/fixtures/tiny_logits.json")
    ap.add_argument("--seed", type=int, default=1611)
    ap.add_argument("--steps", type=int, default=800)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--n-layer", type=int, default=6)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=128)
    ap.add_argument("--n-positions", type=int, default=256)
    # Tried to make previous-token heads form within this budget; off in the shipped model (README).
    ap.add_argument("--short-steps", type=int, default=0,
                    help="the first steps train on short windows (same tokens per step, more windows)")
    ap.add_argument("--short-context", type=int, default=8)
    ap.add_argument("--sinusoidal-positions", action="store_true",
                    help="start the position table from sinusoids instead of GPT-2's N(0, 0.02)")
    ap.add_argument("--position-scale", type=float, default=0.02,
                    help="with --sinusoidal-positions: the position table's RMS at the start")
    ap.add_argument("--position-dims", type=int, default=0,
                    help="start positions as sinusoids in the first K dimensions only, tokens in the others (0: off)")
    ap.add_argument("--previous-token-start", type=int, default=-1, metavar="STEPS",
                    help="with --position-dims: start head 0 of layer 0 as a previous-token head and hold its "
                         "query and key weights for STEPS steps (-1: off)")
    ap.add_argument("--qk-init-std", type=float, default=0.02,
                    help="standard deviation of the query and key weights at the start (GPT-2: 0.02)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--replot", action="store_true", help="only redraw --report's loss.png from its loss.csv")
    args = ap.parse_args()
    if args.replot:
        with open(os.path.join(args.report, "loss.csv")) as f:
            rows = [tuple(float(v) for v in line.split(",")) for line in f.read().splitlines()[1:]]
        with open(os.path.join(args.report, "summary.json")) as f:
            unigram = json.load(f)["unigram_val_ppl"]
        return plot_losses(rows, unigram, os.path.join(args.report, "loss.png"))
    if not args.attnlab:
        ap.error("--attnlab PATH is required: the attnlab CLI tokenizes the corpus")

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    cfg = {"n_layer": args.n_layer, "n_head": args.n_head, "n_embd": args.n_embd, "n_positions": args.n_positions}
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.report, exist_ok=True)
    os.makedirs(os.path.dirname(args.fixture), exist_ok=True)
    t_start = time.time()

    # Every 20th chapter (from the 8th) is held out: 1,189 chapters give 59 for validation.
    chapters = read_kjv()
    train_text = "".join(chapter_text(*c) for i, c in enumerate(chapters) if i % 20 != 7)
    val_text = "".join(chapter_text(*c) for i, c in enumerate(chapters) if i % 20 == 7)
    corpus_sha = hashlib.sha256((train_text + val_text).encode()).hexdigest()
    train_ids = tokenize(args.attnlab, train_text)
    val_ids = tokenize(args.attnlab, val_text)
    used = sorted(set(train_ids) | set(val_ids) | {EOT})
    compact = {t: i for i, t in enumerate(used)}
    n_unused = VOCAB - len(used)
    print(f"corpus: {len(chapters)} chapters, {len(train_ids)} train / {len(val_ids)} val tokens, "
          f"{len(used)} distinct tokens, {n_unused} unused", flush=True)
    train = torch.tensor([compact[t] for t in train_ids])
    val = torch.tensor([compact[t] for t in val_ids])

    # Unigram baseline: add-one smoothed train counts over the full vocabulary, scored on validation.
    counts = np.bincount(np.array(train_ids), minlength=VOCAB).astype(np.float64) + 1.0
    unigram_ppl = float(np.exp(-np.mean(np.log(counts[np.array(val_ids)] / counts.sum()))))

    model = TinyGpt(len(used) + 1, n_unused, {**cfg, "sinusoidal_positions": args.sinusoidal_positions,
                                                 "qk_init_std": args.qk_init_std, "position_scale": args.position_scale,
                                                 "position_dims": args.position_dims,
                                                 "previous_token_start": args.previous_token_start >= 0})
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    T = args.n_positions
    gen = torch.Generator().manual_seed(args.seed)
    val_starts = torch.arange(0, len(val) - T - 1, (len(val) - T - 1) // 24)[:24]  # fixed windows

    def evaluate():
        # Validation loss, and the largest mean weight any head puts on the previous token.
        model.eval()
        losses, previous = [], torch.zeros(len(model.h), args.n_head, dtype=torch.float64)
        with torch.no_grad():
            for s in val_starts:
                losses.append(F.cross_entropy(model(val[s:s + T][None])[0], val[s + 1:s + T + 1]).item())
                previous += torch.stack([b.previous_token.double() for b in model.h]) / len(val_starts)
        model.train()
        return sum(losses) / len(losses), previous.max().item()

    held = [model.h[0].c_attn.weight[r].detach().clone() for r in model.previous_token_head_rows()]
    log = [("step", "train_loss", "val_loss", "seconds", "previous_token_max")]
    warmup, running = 60, []
    for step in range(1, args.steps + 1):
        lr = args.lr * (step / warmup if step <= warmup else
                        0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (args.steps - warmup))))
        for g in opt.param_groups:
            g["lr"] = lr
        # Optional sequence-length warm-up (an attempt at previous-token heads; README): under
        # near-uniform attention over 256 tokens the previous token is 1/256 of a head's output; over
        # 8-token windows it is 1/8 or more. Each short window sits at a random place in the context,
        # so that every row of the position table is trained.
        t = args.short_context if step <= args.short_steps else T
        b = args.batch * T // t
        starts = torch.randint(0, len(train) - t - 1, (b,), generator=gen)
        x = torch.stack([train[s:s + t] for s in starts])
        y = torch.stack([train[s + 1:s + t + 1] for s in starts])
        first = torch.randint(0, T - t + 1, (b,), generator=gen) if t < T else None
        loss = F.cross_entropy(model(x, first).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if step <= args.previous_token_start:  # the started head's query and key rows are held
            model.hold_previous_token_head(held)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step <= args.previous_token_start:
            model.hold_previous_token_head(held)
        running.append(loss.item())
        if step % args.eval_every == 0 or step == args.steps or step == 1:
            v, prev = evaluate()
            log.append((step, sum(running) / len(running), v, time.time() - t_start, prev))
            running = []
            print(f"step {step:5d}  lr {lr:.2e}  train {log[-1][1]:.4f}  val {v:.4f}  "
                  f"previous-token max {prev:.3f}  ({time.time() - t_start:.0f} s)", flush=True)
    train_seconds = time.time() - t_start

    # Export, then read the F16 file back: everything below uses exactly what ships.
    model_path = os.path.join(args.out, "model.safetensors")
    write_safetensors(model_path, hf_tensors(model, used), {"format": "pt", "name": NAME, "seed": str(args.seed)})
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
              "vocab_size": VOCAB, "n_ctx": T, "layer_norm_epsilon": 1e-5, "bos_token_id": EOT,
              "eos_token_id": EOT, "attnlab_name": NAME, **cfg}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    shipped = read_safetensors(model_path)

    # Validation loss of the shipped (F16, full-vocabulary) model on the same windows.
    with torch.no_grad():
        nll = []
        for s in val_starts:
            ids = val_ids[s:s + T + 1]
            lp = reference_logits(shipped, cfg, ids[:-1]).log_softmax(-1)
            nll.append(-lp[torch.arange(T), torch.tensor(ids[1:])].mean().item())
    val_loss_shipped = sum(nll) / len(nll)

    # The held-out fixture: a validation snippet, float64 logits of the shipped weights.
    fx_ids = val_ids[val_starts[3]:val_starts[3] + 48]
    logits = reference_logits(shipped, cfg, fx_ids)
    rng = np.random.default_rng(args.seed)
    probe = sorted(set(rng.choice(VOCAB, 96, replace=False).tolist()) | set(used[:8]) | {EOT})
    rows = []
    for i in range(len(fx_ids)):
        row = logits[i]
        top = torch.topk(row, 16).indices.tolist()
        cols = sorted(set(probe) | set(top))
        rows.append({"position": i, "max_abs": row.abs().max().item(), "l2": row.norm().item(),
                     "logsumexp": torch.logsumexp(row, 0).item(), "argmax": int(row.argmax()),
                     "ids": cols, "logits": [round(row[c].item(), 9) for c in cols]})
    with open(args.fixture, "w") as f:
        json.dump({"what": "float64 logits of assets/tiny/model.safetensors (F16 weights) from "
                           "tools/train_tiny/train_tiny.py's own PyTorch forward pass, on a held-out snippet",
                   "model_sha256": sha256(model_path), "tokens": fx_ids, "rows": rows}, f, separators=(",", ":"))
        f.write("\n")

    with open(os.path.join(args.report, "loss.csv"), "w") as f:
        for r in log:
            f.write(",".join(f"{v:.5f}" if isinstance(v, float) else str(v) for v in r) + "\n")
    plot_losses(log[1:], unigram_ppl, os.path.join(args.report, "loss.png"))

    summary = {"name": NAME, "seed": args.seed, "config": cfg, "steps": args.steps, "batch": args.batch,
               "short_steps": args.short_steps, "short_context": args.short_context,
               "sinusoidal_positions": args.sinusoidal_positions, "qk_init_std": args.qk_init_std,
               "position_scale": args.position_scale, "position_dims": args.position_dims,
               "previous_token_start": args.previous_token_start,
               "lr": args.lr, "threads": args.threads, "torch": torch.__version__, "parameters": n_params,
               "chapters": len(chapters), "train_tokens": len(train_ids), "val_tokens": len(val_ids),
               "distinct_tokens": len(used), "corpus_sha256": corpus_sha,
               "final_val_loss": log[-1][2], "final_val_ppl": math.exp(log[-1][2]),
               "shipped_f16_val_loss": val_loss_shipped, "shipped_f16_val_ppl": math.exp(val_loss_shipped),
               "unigram_val_ppl": unigram_ppl, "train_seconds": train_seconds,
               "model_bytes": os.path.getsize(model_path), "model_sha256": sha256(model_path)}
    with open(os.path.join(args.report, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    sys.exit(main())
