#!/usr/bin/python3
"""Train "AttnLab tiny": a small GPT-2-architecture model on the King James Bible.

Developer-time only (Debian's python3-torch, bible-kjv, python3-matplotlib); CI and users get the
committed checkpoint in assets/tiny/. See README.md in this folder for the exact command and results.

Writes, into --out:
  model.safetensors   HF GPT-2 layout (wte, wpe, h.N.*, ln_f), F16, tied lm_head, full 50,257 vocabulary
  config.json         HF GPT-2 config, read unchanged by src/model/gpt2_load.cpp
and, into --report:
  loss.csv, loss.png  training and validation loss, and the attention scores, against step
  summary.json        corpus/split facts, final validation perplexity, unigram and bigram baselines,
                      the attention scores on held-out text, timings, sha256s
and, into --fixture: the held-out logits that tests/tiny_model_test.cpp compares our C++ forward pass to.
--checkpoint holds the model, the optimizer and the sampler, so that --resume continues a run exactly.

One trick keeps the output layer cheap and exact. The corpus uses ~10k of GPT-2's 50,257 tokens. All the
tokens it never uses share one embedding row u, so their logits are all h.u, and the full softmax equals a
softmax over (used tokens, plus one class "unused" with logit h.u + log(K_unused)). We train on that
compact softmax and export u into every unused row: the exported 50,257-way model is exactly the trained one.

The training text is the KJV, and a copy task made from it (README: "The copy task"): some windows have a
passage of their own text repeated, some a run of random corpus tokens repeated. Only a head that looks
back to what followed the earlier occurrence of the current token predicts a repeat, so these windows pay
for induction and previous-token heads from the first steps instead of after billions of tokens.
"""
import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import time


def fast_environment():
    # Measured here (README, "Speed"): libgomp's busy-waiting threads and OpenBLAS's own pthreads
    # fought over the 2 cores (sys time near user time), and glibc mmaps then unmaps every
    # tensor over 32 MB (the logits) at each step. Passive waiting and tcmalloc gave 2.5x the
    # tokens per second, with bit-identical losses. Both must be set before torch loads, so the
    # script starts itself again with them.
    if os.environ.get("OMP_WAIT_POLICY"):
        return
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    tcmalloc = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
    if os.path.exists(tcmalloc):
        env["LD_PRELOAD"] = ":".join(filter(None, [env.get("LD_PRELOAD"), tcmalloc]))
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


fast_environment()
# --device cuda with deterministic algorithms: cuBLAS is deterministic only with a fixed workspace.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402 (after the re-exec above)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from hf_export import (LOG_COLUMNS, VOCAB, attention_spec, baselines, hf_tensors, load_hf_tensors, plot_losses,  # noqa: E402
                       read_safetensors, reference_logits, sha256, write_safetensors)

EOT = 50256
NAME = "AttnLab tiny (trained on the King James Bible and repeated random words), not GPT-2"
NAME_SSMAX = ("AttnLab tiny-SSMax (trained on the King James Bible and repeated random words, SSMax attention), "
              "not GPT-2")
INDUCTION_PERIOD = 40  # the test: 40 random corpus tokens, repeated once


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


def read_corpus(attnlab, modern_path, cache):
    """(chapters, the corpus text's sha256, train ids, validation ids, the modern text's ids), GPT-2 ids. Every
    20th chapter (from the 8th) is held out: 1,189 chapters give 59 for validation. With a cache path, read
    from there if it exists, else written there: a GPU machine has neither `bible` nor our CLI."""
    with open(modern_path, encoding="utf-8") as f:
        modern_text = f.read()
    modern_sha = hashlib.sha256(modern_text.encode()).hexdigest()
    if cache and os.path.exists(cache):
        z = np.load(cache)
        if "modern_sha256" not in z or str(z["modern_sha256"]) != modern_sha:  # the one input it can check here
            sys.exit(f"--tokens {cache} was made from another {modern_path}: delete it to make it again")
        return (int(z["chapters"]), str(z["corpus_sha256"]), z["train"].tolist(), z["val"].tolist(),
                z["modern"].tolist())
    chapters = read_kjv()
    train_text = "".join(chapter_text(*c) for i, c in enumerate(chapters) if i % 20 != 7)
    val_text = "".join(chapter_text(*c) for i, c in enumerate(chapters) if i % 20 == 7)
    corpus_sha = hashlib.sha256((train_text + val_text).encode()).hexdigest()
    modern = tokenize(attnlab, modern_text)
    out = (len(chapters), corpus_sha, tokenize(attnlab, train_text), tokenize(attnlab, val_text), modern)
    if cache:
        ids = {k: np.array(v, dtype=np.uint16) for k, v in zip(("train", "val", "modern"), out[2:])}
        np.savez_compressed(cache, chapters=out[0], corpus_sha256=out[1], modern_sha256=modern_sha, **ids)
    return out


def gpt2_token_strings(encoder_path):
    """id -> the token's text, undoing GPT-2's byte-to-unicode table (the one in its encoder.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    to_byte = {chr(c): b for b, c in zip(bs, cs)}
    with open(encoder_path, encoding="utf-8") as f:
        encoder = json.load(f)
    return {i: bytes(to_byte[ch] for ch in tok).decode("utf-8", errors="replace") for tok, i in encoder.items()}


def induction_probe_text(attnlab, used, encoder_path, seed):
    """40 random word tokens of the corpus ("Ġ" and letters: a space and a word), and the text that
    tokenizes to exactly them twice over, for the page's and the C++ tests' induction check."""
    strings = gpt2_token_strings(encoder_path)
    words = [t for t in used if re.fullmatch(r" [A-Za-z]+", strings.get(t, ""))]
    rng = np.random.default_rng(seed)
    for _ in range(100):
        ids = [int(t) for t in rng.choice(words, INDUCTION_PERIOD, replace=False)]
        text = "".join(strings[t] for t in ids) * 2
        if tokenize(attnlab, text) == ids * 2:
            return ids, text
    sys.exit("no 40-word sequence tokenized back to itself in 100 tries")


# --------------------------------------------------------------------------------------------------
# The model: GPT-2 (pre-LN, gelu_new, tied embeddings), parameters named as in HF's checkpoint.

class Block(torch.nn.Module):
    def __init__(self, C, n_head, n_positions, ssmax=None):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = torch.nn.LayerNorm(C, eps=1e-5)
        self.c_attn = torch.nn.Linear(C, 3 * C)
        self.attn_proj = torch.nn.Linear(C, C)
        self.ln_2 = torch.nn.LayerNorm(C, eps=1e-5)
        self.c_fc = torch.nn.Linear(C, 4 * C)
        self.mlp_proj = torch.nn.Linear(4 * C, C)
        # -inf above the diagonal, added to the scores (one add, no boolean masking per step).
        self.register_buffer("mask", torch.full((n_positions, n_positions), float("-inf")).triu(1), persistent=False)
        self.attention = None  # (B, n_head, T, T) weights of the last eval pass, for the scores
        if ssmax is None:
            self.ssmax_s = None
        else:
            # Scalable-Softmax (Nakanishi 2025; PAPER.md section 7): softmax(s_h * log(n) * q.k / sqrt(d)),
            # n = the keys the query sees (position t, 0-based: t + 1). One s per head, learned (a
            # parameter) or fixed (a buffer); no random draw, so every other weight starts as softmax's.
            s0, learned = ssmax
            s = torch.full((n_head,), float(s0))
            if learned:
                self.ssmax_s = torch.nn.Parameter(s)
            else:
                self.register_buffer("ssmax_s", s)
            self.register_buffer("log_n", torch.log(torch.arange(1, n_positions + 1, dtype=torch.float32)),
                                 persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        d = C // self.n_head
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        # q, k, v: (B, n_head, T, d_head)
        q, k, v = (t.view(B, T, self.n_head, d).transpose(1, 2) for t in (q, k, v))
        if self.ssmax_s is not None:
            # The factor s_h * log(n_t) / sqrt(d) scales the query row, before the mask is added: at
            # t = 0 it is 0 (log 1) and the row is just the mask, weight 1 on itself (never 0 * -inf).
            q = q * (self.ssmax_s[:, None] * self.log_n[:T] / math.sqrt(d))[None, :, :, None]
            att = torch.baddbmm(self.mask[:T, :T].expand(B * self.n_head, T, T), q.reshape(-1, T, d),
                                k.reshape(-1, T, d).transpose(1, 2)).softmax(dim=-1)
        else:
            att = torch.baddbmm(self.mask[:T, :T].expand(B * self.n_head, T, T), q.reshape(-1, T, d),
                                k.reshape(-1, T, d).transpose(1, 2), alpha=1.0 / math.sqrt(d)).softmax(dim=-1)
        att = att.view(B, self.n_head, T, T)
        if not self.training:
            self.attention = att
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.attn_proj(y)
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


def sinusoid_table(n_positions, C, dims, freq, rms):
    """(n_positions, C): sin and cos of position * freq in the last `dims` coordinates (dims / 2 frequencies),
    at RMS `rms` there, zero elsewhere."""
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    pe = torch.zeros(n_positions, C, dtype=torch.float64)
    pe[:, C - dims::2], pe[:, C - dims + 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe * (rms / math.sqrt(0.5))


class TinyGpt(torch.nn.Module):
    """GPT-2 whose token table has n_used rows plus one shared row (the last) for every unused token."""

    def __init__(self, n_rows, n_unused, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.wte = torch.nn.Embedding(n_rows, C)
        self.wpe = torch.nn.Embedding(cfg["n_positions"], C)
        self.h = torch.nn.ModuleList(Block(C, cfg["n_head"], cfg["n_positions"], cfg.get("ssmax"))
                                     for _ in range(cfg["n_layer"]))
        self.ln_f = torch.nn.LayerNorm(C, eps=1e-5)
        # The shared row stands for K_unused identical logits: + log(K_unused) on its class, added
        # inside the output product (addmm) rather than by a copy of the logits.
        unused = torch.zeros(n_rows)
        unused[-1] = math.log(n_unused) if n_unused > 0 else 0.0
        self.register_buffer("unused_bias", unused, persistent=False)
        for name, p in self.named_parameters():  # GPT-2's initialisation, scaled residual projections
            if name == "wpe.weight" and cfg.get("sinusoidal_positions"):
                # Sinusoids (Vaswani et al.) at an RMS of --position-scale, then learned like any weight.
                # Position i - 1 is then one fixed rotation of position i, so "attend to the previous
                # token" is a single query-key map for every position, not 256 separately learned rows
                # (and rows that short windows have not reached yet are already in step). At GPT-2's
                # 0.02 the token rows, which Adam grows to ~0.1 within a few hundred steps, drown the
                # positions after ln_1 (README, "What made the heads form").
                freq = torch.pow(10000.0, -torch.arange(0, C, 2, dtype=torch.float64) / C)
                with torch.no_grad():
                    p.copy_(sinusoid_table(cfg["n_positions"], C, C, freq, cfg["position_scale"]))
            elif name == "wpe.weight" and cfg.get("position_dims"):
                # --position-dims: sinusoids in coordinates of their own (token rows start at zero there,
                # below), with periods from 2 positions to 2 * n_positions, geometrically: a step of one
                # position turns the fastest pair by pi, so neighbours are told apart; the slow pairs
                # say where in the window. (Vaswani's 10000^(-2k/d) starts at a period of 6.3.)
                d = cfg["position_dims"]
                freq = math.pi * torch.pow(float(cfg["n_positions"]), -torch.arange(d // 2, dtype=torch.float64) / (d // 2 - 1))
                with torch.no_grad():
                    p.copy_(sinusoid_table(cfg["n_positions"], C, d, freq, cfg["position_scale"]))
            elif name.endswith("ssmax_s"):
                pass  # started at --ssmax-init in Block
            elif name.endswith("bias"):
                torch.nn.init.zeros_(p)
            elif "ln" in name:
                torch.nn.init.ones_(p)
            else:
                std = 0.02 / math.sqrt(2 * cfg["n_layer"]) if name.endswith("proj.weight") else 0.02
                torch.nn.init.normal_(p, 0.0, std)
        if cfg.get("position_dims"):
            with torch.no_grad():  # tokens start outside the position subspace
                self.wte.weight[:, C - cfg["position_dims"]:] = 0.0
        for b in self.h if cfg["qk_init_std"] != 0.02 else ():
            # Query and key weights at --qk-init-std: a score q.k is bilinear in them, so at GPT-2's
            # 0.02 both of their gradients start near zero and attention stays uniform for long.
            with torch.no_grad():
                torch.nn.init.normal_(b.c_attn.weight[:2 * C], 0.0, cfg["qk_init_std"])

    def hidden(self, idx):
        # idx: (B, T) compact ids; returns the final layer norm's output, (B, T, C).
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)

    def logits(self, h):
        # h: (N, C) -> logits over the compact classes, (N, n_rows).
        return torch.addmm(self.unused_bias, h, self.wte.weight.T)

    def forward(self, idx):
        # idx: (B, T) compact ids; returns logits over the compact classes, (B * T, n_rows).
        return self.logits(self.hidden(idx).flatten(0, 1))

    def attention(self):
        return [b.attention for b in self.h]


# --------------------------------------------------------------------------------------------------
# The attention scores, as src/analysis computes them (previous_token_weight, induction_score).

def previous_token_scores(attention):
    """attention: per layer (B, H, T, T). Each head's mean over queries 1..T-1 of A(i, i-1): (layers, H)."""
    return torch.stack([a.diagonal(offset=-1, dim1=-2, dim2=-1).double().mean(dim=(0, 2)) for a in attention])


def induction_scores(attention, period, offset=1):
    """Each head's mean over queries i in the second copy (period..2*period-1) of A(i, i - period + offset):
    at offset 1, the weight on the token that followed the query token's first occurrence (the induction
    score); other offsets are its neighbours (probe_heads.py). (layers, H)."""
    return torch.stack([a.diagonal(offset=offset - period, dim1=-2, dim2=-1)[..., max(offset, 0):period + offset]
                        .double().mean(dim=(0, 2)) for a in attention])


def random_repeats(count, period, n_used_tokens, seed):
    """count sequences of `period` random corpus tokens (compact ids, EOT excluded), each repeated once."""
    g = torch.Generator().manual_seed(seed)
    r = torch.randint(0, n_used_tokens, (count, period), generator=g)
    return torch.cat([r, r], dim=1)


# --------------------------------------------------------------------------------------------------
# The windows one step trains on.

class WindowSampler:
    """Draws (x, y) windows of t tokens from the training ids, with the copy task mixed in. All the
    randomness comes from one seeded generator, whose state the checkpoint keeps."""

    def __init__(self, train, n_used_tokens, copy_rate, random_rate, seed, skip_rate=0.0):
        self.train, self.n_used_tokens = train, n_used_tokens
        self.copy_rate, self.random_rate, self.skip_rate = copy_rate, random_rate, skip_rate
        self.gen = torch.Generator().manual_seed(seed)

    def randint(self, lo, hi):  # lo..hi inclusive
        return int(torch.randint(lo, hi + 1, (1,), generator=self.gen))

    def text(self, n):
        s = self.randint(0, len(self.train) - n)
        return self.train[s:s + n]

    def window(self, t):
        u = float(torch.rand(1, generator=self.gen))
        if u < self.random_rate:
            # A run of n random corpus tokens and its repeat, at a random place in the text.
            n = self.randint(8, min(64, (t + 1) // 2))
            base = self.text(t + 1 - 2 * n)
            r = torch.randint(0, self.n_used_tokens, (n,), generator=self.gen)
            p = self.randint(0, len(base))
            return torch.cat([base[:p], r, r, base[p:]])
        if self.random_rate + self.copy_rate <= u < self.random_rate + self.copy_rate + self.skip_rate:
            # Random corpus tokens in which each token, with probability 1/2, repeats the one two
            # places back: the next token is then the query's previous token half the time, which
            # pays a head that attends to the previous token and copies it, from the first steps.
            w = torch.randint(0, self.n_used_tokens, (1, t + 1), generator=self.gen)
            return repeat_two_back(w, torch.rand(1, t + 1, generator=self.gen) < 0.5)[0]
        if u < self.random_rate + self.copy_rate:
            # A passage of m tokens of the window's own text, repeated at a later place.
            m = self.randint(8, (t + 1) // 3)
            base = self.text(t + 1 - m)
            p = self.randint(m, len(base))
            i = self.randint(0, p - m)
            return torch.cat([base[:p], base[i:i + m], base[p:]])
        return self.text(t + 1)

    def batch(self, b, t):
        w = torch.stack([self.window(t) for _ in range(b)])
        return w[:, :-1], w[:, 1:]

    def induction_batch(self, b, t, recall, skip=0.0):
        """--induction-steps' windows (README, "Induction first"), as x, y and the mask of the predictable
        targets: induction_windows with 3 pairs per 32 tokens and runs of 4 to (t - 4) / 2 tokens."""
        w, mask = induction_windows(self.gen, b, t, self.n_used_tokens, recall, skip, 4, (t - 4) // 2, 3 * t // 32)
        return w[:, :-1], w[:, 1:], mask


def repeat_two_back(w, flip, image=None):
    """w: (B, L) tokens. Where flip is set (from position 2 on), the token becomes the one two places back
    (or image of it), left to right, so a repeat can repeat a repeat. toy_heads.py uses it too."""
    for t in range(2, w.shape[1]):
        back = w[:, t - 2] if image is None else image[w[:, t - 2]]
        w[:, t] = torch.where(flip[:, t], back, w[:, t])
    return w


def recall_windows(k, T, V, g, pairs=4, each=3):
    """k windows of T random tokens in which `pairs` pairs (a, b) of the window's own each occur `each`
    times at random places: after a repeat of a comes b, whatever came before a. Only a head that finds
    the earlier a by the query token itself (a textbook induction head) predicts it; matching on the
    tokens before the query, as the one-key-late circuit does, cannot. Returns the windows and a mask
    of the predictable targets (the b of every repeat after the first, as targets of x = w[:, :-1])."""
    assert 2 * pairs * each <= T
    w = torch.randint(0, V, (k, T), generator=g)
    target = torch.zeros(k, T - 1, dtype=torch.bool)
    for i in range(k):
        ab = torch.randperm(V, generator=g)[:2 * pairs].view(pairs, 2)
        # The pairs in a random order, with the filler tokens at random places between them, so
        # that neither the pairs' positions nor their parity says anything.
        items = torch.arange(pairs).repeat(each)[torch.randperm(pairs * each, generator=g)].tolist()
        fillers = T - 2 * pairs * each
        order = torch.randperm(len(items) + fillers, generator=g) < len(items)  # True: a pair here
        p, seen, it = 0, set(), iter(items)
        for is_pair in order.tolist():
            if not is_pair:
                p += 1
                continue
            a, b = ab[next(it)].tolist()
            w[i, p], w[i, p + 1] = a, b
            if a in seen and p < T - 1:
                target[i, p] = True
            seen.add(a)
            p += 2
    return w, target


def repeat_windows(g, B, T, V, lo, hi):
    """B windows of T + 1 random tokens, each holding one run of lo..hi random tokens and its repeat
    at a random place; with the mask of the repeat's targets (as targets of x = w[:, :-1])."""
    w = torch.randint(0, V, (B, T + 1), generator=g)
    mask = torch.zeros(B, T, dtype=torch.bool)
    for i in range(B):
        n = int(torch.randint(lo, hi + 1, (1,), generator=g))
        run = torch.randint(0, V, (n,), generator=g)
        p = int(torch.randint(0, T + 2 - 2 * n, (1,), generator=g))
        w[i, p:p + n] = run
        w[i, p + n:p + 2 * n] = run
        mask[i, p + n:p + 2 * n - 1] = True
    return w, mask


def induction_windows(g, b, t, V, recall, skip, lo, hi, pairs, each=3):
    """b windows of t + 1 random tokens and the mask of their predictable targets: a `recall` share of
    recall windows (`pairs` pairs, `each` times), a `skip` share of skip windows (made over the first
    repeat windows: a run that survives there is not in the mask), the rest one run of lo..hi tokens
    repeated once. The stage-1 windows of train_tiny and toy_induction.py's."""
    w, mask = repeat_windows(g, b, t, V, lo, hi)
    k, s = int(b * recall), int(b * skip)
    assert k + s <= b, "the recall and skip shares share one batch"
    if k:
        w[b - k:], mask[b - k:] = recall_windows(k, t + 1, V, g, pairs, each)
    if s:
        flip = torch.rand(s, t + 1, generator=g) < 0.5
        flip[:, :2] = False
        w[:s], mask[:s] = repeat_two_back(w[:s], flip), flip[:, 1:]
    return w, mask


def freeze_first_values(model, std, is_frozen, start_random=True):
    """Layer 0's value and output maps start at N(0, std) (unless not start_random: a model loaded with
    --init-from keeps its own) and get no gradient while is_frozen() holds
    (Bietti et al. 2023, "Birth of a Transformer"; README, "Induction first"). Layer 0 then writes what
    its heads attend to into random directions of its own, not into the token's own (the tied output
    table's), so that a layer-1 key can tell "my previous token is a" from "my token is a". Its
    attention still learns. With no weight decay meanwhile, Adam's moments stay zero and they do not move."""
    first, C = model.h[0], model.h[0].c_attn.in_features
    with torch.no_grad():
        if start_random:
            first.c_attn.weight[2 * C:].normal_(0.0, std)  # the value rows of the q, k, v product
            first.attn_proj.weight.normal_(0.0, std)

    def hook(rows):
        def zero(grad):
            if not is_frozen():
                return grad
            grad = grad.clone()
            grad[rows] = 0
            return grad
        return zero
    for p, rows in ((first.c_attn.weight, slice(2 * C, None)), (first.c_attn.bias, slice(2 * C, None)),
                    (first.attn_proj.weight, slice(None)), (first.attn_proj.bias, slice(None))):
        p.register_hook(hook(rows))


def save_checkpoint(path, state):
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)  # an interrupt never leaves half a checkpoint


# --------------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnlab", help="the attnlab CLI, used as the GPT-2 tokenizer (required to train)")
    ap.add_argument("--out", default="assets/tiny")
    ap.add_argument("--report", default="tools/train_tiny/results")
    ap.add_argument("--fixture", default="tests/fixtures/tiny_logits.json")
    ap.add_argument("--modern", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "modern_english.txt"),
                    help="modern English text, not from the Bible, for the held-out previous-token score")
    ap.add_argument("--checkpoint", default="build/train_tiny/checkpoint.pt",
                    help="written every --checkpoint-every steps: model, optimizer, sampler, log")
    ap.add_argument("--checkpoint-every", type=int, default=100)
    ap.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    ap.add_argument("--stop-at", type=int, default=0, metavar="STEP",
                    help="checkpoint and exit after this step, as an interrupt would (0: run to the end)")
    ap.add_argument("--export", action="store_true",
                    help="write the model, fixtures and report from --checkpoint as it is, without training on")
    ap.add_argument("--seed", type=int, default=1611)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch-tokens", type=int, default=4096, help="tokens per optimizer step")
    ap.add_argument("--short-steps", type=int, default=800, help="the first steps train on --short-context windows")
    ap.add_argument("--short-context", type=int, default=64)
    ap.add_argument("--init-from", default="", help="an HF GPT-2 safetensors file of this shape to start from")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1, help="on matrices other than the position table")
    ap.add_argument("--copy-rate", type=float, default=0.25, help="windows with a passage of their text repeated")
    ap.add_argument("--skip-rate", type=float, default=0.0,
                    help="windows of random tokens each repeating the one two back with probability 1/2")
    ap.add_argument("--random-rate", type=float, default=0.1, help="windows with a run of random tokens repeated")
    ap.add_argument("--sinusoidal-positions", type=int, default=0, choices=(0, 1),
                    help="1: start the position table from sinusoids; 0: GPT-2's N(0, 0.02)")
    ap.add_argument("--position-dims", type=int, default=0,
                    help="N > 0: sinusoidal positions in the last N coordinates only, token rows starting at zero there")
    ap.add_argument("--position-scale", type=float, default=0.1, help="the sinusoidal position table's RMS at the start")
    ap.add_argument("--qk-init-std", type=float, default=0.02,
                    help="standard deviation of the query and key weights at the start (GPT-2: 0.02; 1/sqrt(128) = 0.088)")
    ap.add_argument("--induction-steps", type=int, default=0,
                    help="the first N steps train on induction windows only (README, \"Induction first\")")
    ap.add_argument("--induction-context", type=int, default=32, help="the induction windows' length")
    ap.add_argument("--induction-batch", type=int, default=32, help="induction windows per step")
    ap.add_argument("--induction-recall", type=float, default=0.5, help="the share of them that are recall windows")
    ap.add_argument("--induction-skip", type=float, default=0.0,
                    help="the share of them that are skip windows (each token repeats the one two back with probability 1/2)")
    ap.add_argument("--induction-mix", type=int, default=0,
                    help="N > 0: after the induction steps, every step also trains on N induction windows (their loss added)")
    ap.add_argument("--frozen-values-std", type=float, default=0.0,
                    help="S > 0: layer 0's value and output maps start at N(0, S) (with --init-from: as loaded) and stay "
                         "frozen during the induction steps")
    ap.add_argument("--attention", default="softmax", choices=("softmax", "ssmax"),
                    help="ssmax: every head's softmax becomes Scalable-Softmax, softmax(s_h * log(n) * q.k / sqrt(d)), n the "
                         "keys the query sees, s_h one scale per head (README, \"AttnLab tiny-SSMax\")")
    ap.add_argument("--ssmax-init", type=float, default=0.43, help="the scale s every head starts from (ssmax)")
    ap.add_argument("--ssmax-fixed", action="store_true", help="keep s at --ssmax-init instead of learning it (ssmax)")
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=128)
    ap.add_argument("--n-positions", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu",
                    help="cuda: train on the GPU (the windows are still drawn on the CPU, from the same generator)")
    ap.add_argument("--tokens", default="",
                    help="the tokenized corpus (.npz): read if it exists, else made with bible and --attnlab and written "
                         "there; a machine that has it needs neither to train")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--replot", action="store_true", help="only redraw --report's loss.png from its loss.csv")
    args = ap.parse_args()
    if args.replot:
        with open(os.path.join(args.report, "loss.csv")) as f:
            rows = [tuple(float(v) for v in line.split(",")) for line in f.read().splitlines()[1:]]
        with open(os.path.join(args.report, "summary.json")) as f:
            b = json.load(f)["baselines"]
        return plot_losses(rows, {"unigram": b["unigram"], "bigram": b["bigram"]}, os.path.join(args.report, "loss.png"),
                           NAME_SSMAX if args.attention == "ssmax" else NAME, INDUCTION_PERIOD)
    if not args.attnlab and not (os.path.exists(args.tokens) and not args.export):
        ap.error("--attnlab PATH is required: the attnlab CLI tokenizes the corpus (and, to export, the probe text)")

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    # On a GPU a kernel with no deterministic version warns instead of stopping the run: a GPU run is not
    # bit-reproducible anyway (README, "Stage 3"), where a CPU run is.
    dev = torch.device(args.device)
    torch.use_deterministic_algorithms(True, warn_only=dev.type != "cpu")
    cfg = {"n_layer": args.n_layer, "n_head": args.n_head, "n_embd": args.n_embd, "n_positions": args.n_positions}
    name = NAME_SSMAX if args.attention == "ssmax" else NAME
    for d in (args.out, args.report, os.path.dirname(args.fixture), os.path.dirname(args.checkpoint)):
        os.makedirs(d or ".", exist_ok=True)

    n_chapters, corpus_sha, train_ids, val_ids, modern_ids = read_corpus(args.attnlab, args.modern, args.tokens)
    used = sorted(set(train_ids) | set(val_ids) | {EOT})  # EOT is the largest id: compact id len(used) - 1
    compact = {t: i for i, t in enumerate(used)}
    n_unused = VOCAB - len(used)
    print(f"corpus: {n_chapters} chapters, {len(train_ids)} train / {len(val_ids)} val tokens, "
          f"{len(used)} distinct tokens, {n_unused} unused", flush=True)
    train = torch.tensor([compact[t] for t in train_ids])
    val = torch.tensor([compact[t] for t in val_ids])
    unused_row = len(used)
    modern = torch.tensor([compact.get(t, unused_row) for t in modern_ids][:args.n_positions])
    base = baselines(train_ids, val_ids)

    model = TinyGpt(len(used) + 1, n_unused, {**cfg, "sinusoidal_positions": args.sinusoidal_positions,
                                                 "position_scale": args.position_scale, "qk_init_std": args.qk_init_std,
                                                 "position_dims": args.position_dims,
                                                 "ssmax": ((args.ssmax_init, not args.ssmax_fixed)
                                                           if args.attention == "ssmax" else None)})
    if args.init_from:  # start from a trained checkpoint's weights (a fresh optimizer), and its s (ssmax)
        init_config = os.path.join(os.path.dirname(args.init_from), "config.json")
        init_spec = None
        if os.path.exists(init_config):
            with open(init_config) as f:
                init_spec = json.load(f).get("attnlab_attention")
        load_hf_tensors(model, read_safetensors(args.init_from), used, init_spec)
    step = 0
    if args.frozen_values_std:
        freeze_first_values(model, args.frozen_values_std, lambda: step <= args.induction_steps, not args.init_from)
    model.to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and n != "wpe.weight"]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n == "wpe.weight"]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95), foreach=True)
    sampler = WindowSampler(train, len(used) - 1, args.copy_rate, args.random_rate, args.seed, args.skip_rate)
    T = args.n_positions
    val_starts = torch.arange(0, len(val) - T - 1, (len(val) - T - 1) // 24)[:24]  # fixed windows
    probes = random_repeats(16, INDUCTION_PERIOD, len(used) - 1, args.seed + 1).to(dev)
    val_x = torch.stack([val[s:s + T] for s in val_starts]).to(dev)
    val_y = torch.stack([val[s + 1:s + T + 1] for s in val_starts]).to(dev)
    modern = modern.to(dev)

    def evaluate():
        # Validation loss; each head's previous-token score on held-out KJV and on modern English;
        # each head's induction score on repeated random tokens. The bests are over heads.
        model.eval()
        with torch.no_grad():
            loss = F.cross_entropy(model(val_x), val_y.flatten()).item()
            prev_kjv = previous_token_scores(model.attention())
            model(modern[None])
            prev_modern = previous_token_scores(model.attention())
            model(probes)
            induction = induction_scores(model.attention(), INDUCTION_PERIOD)
        model.train()
        return loss, prev_kjv, prev_modern, induction

    log = [LOG_COLUMNS]
    running, first_step, elapsed0, tokens = [], 1, 0.0, 0
    if args.resume or args.export:
        ck = torch.load(args.checkpoint, map_location="cpu")
        # Where the outputs go is not an option of the run: --export can write a checkpoint's model, report and
        # fixtures elsewhere than the run that made it would have (a stage trained in build/, shipped to assets/).
        # Nor where it ran or read its inputs from: a run trained on a GPU is exported on the machine that has the CLI.
        where = ("resume", "stop_at", "export", "out", "report", "fixture", "checkpoint", "attnlab", "modern", "tokens",
                 "device", "threads")
        if {k: v for k, v in ck["args"].items() if k not in where} != \
                {k: v for k, v in vars(args).items() if k not in where}:
            sys.exit(f"--resume: {args.checkpoint} was written with other options: {ck['args']}")
        model.load_state_dict(ck["model"])
        if "opt" in ck or not args.export:  # a checkpoint carried off a GPU machine may hold no optimizer
            opt.load_state_dict(ck["opt"])
        sampler.gen.set_state(ck["sampler"])
        log, running, first_step, elapsed0, tokens = ck["log"], ck["running"], ck["step"] + 1, ck["elapsed"], ck["tokens"]
        print(f"resumed from {args.checkpoint} after step {ck['step']}", flush=True)
    last_step = ck["step"] if args.export else args.steps
    t_loop = time.time()

    def induction_loss(b):
        # b induction windows; the loss at their predictable targets only, and the output product only there.
        x, y, mask = (t.to(dev) for t in sampler.induction_batch(b, args.induction_context, args.induction_recall,
                                                                   args.induction_skip))
        return x, F.cross_entropy(model.logits(model.hidden(x)[mask]), y[mask])

    decay_from = max(args.warmup, args.induction_steps)  # the cosine runs over the language-model steps
    for step in range(first_step, last_step + 1):
        induction = step <= args.induction_steps
        lr = args.lr * (step / args.warmup if step <= args.warmup else 1.0 if induction else
                        0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - decay_from) / (args.steps - decay_from))))
        for g, wd in zip(opt.param_groups, (args.weight_decay, 0.0)):
            g["lr"], g["weight_decay"] = lr, 0.0 if induction else wd
        if induction:
            t = args.induction_context
            x, loss = induction_loss(args.induction_batch)
        else:
            # Short windows first: under near-uniform attention over t keys the previous token is 1/t of
            # a head's output, so a short window gives the first attention gradients more to work with.
            t = args.short_context if step - args.induction_steps <= args.short_steps else T
            x, y = (w.to(dev) for w in sampler.batch(args.batch_tokens // t, t))
            loss = F.cross_entropy(model(x), y.flatten())
            if args.induction_mix:  # and a few induction windows, so the heads keep being paid for
                xi, mixed = induction_loss(args.induction_mix)
                loss = loss + mixed
                tokens += xi.numel()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running.append(loss.item())
        tokens += x.numel()
        if step % args.eval_every == 0 or step == args.steps or step == 1:
            v, pk, pm, ind = evaluate()
            seconds = elapsed0 + time.time() - t_loop
            log.append((step, sum(running) / len(running), v, seconds, pk.max().item(), ind.max().item(),
                        pm.max().item(), tokens))
            running = []
            print(f"step {step:5d}  lr {lr:.2e}  t {t}  train {log[-1][1]:.4f}  val {v:.4f}  previous-token max "
                  f"{log[-1][4]:.3f} (modern {log[-1][6]:.3f})  induction max {log[-1][5]:.3f}  "
                  f"({seconds:.0f} s, {tokens / seconds:.0f} tokens/s)", flush=True)
            if args.attention == "ssmax":
                print("      ssmax s by layer: " + "  ".join(" ".join(f"{v:.3f}" for v in b.ssmax_s.tolist())
                                                           for b in model.h), flush=True)
            if induction:  # the 40-token probe does not fit short induction windows: a period that does
                period = (args.induction_context - 4) // 2
                model.eval()
                with torch.no_grad():
                    model(random_repeats(16, period, len(used) - 1, args.seed + 4).to(dev))
                    print(f"      induction max on {period} random tokens twice "
                          f"{induction_scores(model.attention(), period).max().item():.3f}", flush=True)
                model.train()
        if step % args.checkpoint_every == 0 or step == args.stop_at or step == args.steps:
            save_checkpoint(args.checkpoint, {
                "model": model.state_dict(), "opt": opt.state_dict(), "sampler": sampler.gen.get_state(),
                "step": step, "log": log, "running": running, "elapsed": elapsed0 + time.time() - t_loop,
                "tokens": tokens, "args": {k: v for k, v in vars(args).items() if k not in ("resume", "stop_at", "export")}})
        if step == args.stop_at:
            print(f"stopped after step {step}; continue with --resume", flush=True)
            return 0
    train_seconds = elapsed0 + (0.0 if args.export else time.time() - t_loop)

    # Export, then read the F16 file back: everything below uses exactly what ships.
    model_path = os.path.join(args.out, "model.safetensors")
    write_safetensors(model_path, hf_tensors(model, used), {"format": "pt", "name": name, "seed": str(args.seed)})
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
              "vocab_size": VOCAB, "n_ctx": T, "layer_norm_epsilon": 1e-5, "bos_token_id": EOT,
              "eos_token_id": EOT, "attnlab_name": name, **cfg}
    spec = attention_spec(model)
    if spec is not None:  # the normalizer and its per-head s, in --attention SPEC's grammar; none: softmax
        config["attnlab_attention"] = spec
        cfg = {**cfg, "attnlab_attention": spec}  # reference_logits reads it
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

    # The attention scores at the end, on text the run never trained on: the held-out chapters, the
    # modern English file, and 64 fresh random repeats (another seed than the log's 16).
    _, pk, pm, _ = evaluate()
    model.eval()
    with torch.no_grad():
        model(random_repeats(64, INDUCTION_PERIOD, len(used) - 1, args.seed + 2).to(dev))
        ind = induction_scores(model.attention(), INDUCTION_PERIOD)
    both = torch.minimum(pk, pm)  # a head must pass on both kinds of text
    best_prev = divmod(int(both.argmax()), args.n_head)
    best_ind = divmod(int(ind.argmax()), args.n_head)
    scores = {"previous_token_kjv": pk.tolist(), "previous_token_modern": pm.tolist(), "induction": ind.tolist(),
              "best_previous_token_head": {"layer": best_prev[0], "head": best_prev[1], "kjv": pk[best_prev].item(),
                                           "modern": pm[best_prev].item()},
              "best_induction_head": {"layer": best_ind[0], "head": best_ind[1], "score": ind[best_ind].item()}}

    # The attention fixture: held-out token ids (KJV chapters, modern English, a repeated run of 40
    # random corpus words with its text) and every head's scores on them from this PyTorch model.
    # tests/tiny_model_test.cpp recomputes them with our forward pass and src/analysis; the browser
    # suite types the induction text into the page.
    encoder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "gpt2", "encoder.json")
    probe_ids, probe_text = induction_probe_text(args.attnlab, used, encoder, args.seed + 3)
    heads_inputs = {"kjv": val_ids[val_starts[5]:val_starts[5] + T], "modern": modern_ids[:T], "induction": probe_ids * 2}
    heads_fixture = {"what": "every head's previous-token and induction scores (layer-major) from "
                             "tools/train_tiny/train_tiny.py's PyTorch model, on held-out text",
                     "model_sha256": None, "induction_period": INDUCTION_PERIOD, "induction_text": probe_text}
    model.eval()
    with torch.no_grad():
        for key, ids in heads_inputs.items():
            model(torch.tensor([compact.get(t, unused_row) for t in ids])[None].to(dev))
            att = model.attention()
            heads_fixture[key] = {"ids": ids, "previous_token": previous_token_scores(att).flatten().tolist(),
                                  "induction": (induction_scores(att, INDUCTION_PERIOD).flatten().tolist()
                                                if key == "induction" else None)}

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
        json.dump({"what": f"float64 logits of {args.out}/model.safetensors (F16 weights) from "
                           "tools/train_tiny/train_tiny.py's own PyTorch forward pass, on a held-out snippet",
                   "model_sha256": sha256(model_path), "tokens": fx_ids, "rows": rows}, f, separators=(",", ":"))
        f.write("\n")

    heads_fixture["model_sha256"] = sha256(model_path)
    heads_path = os.path.join(os.path.dirname(args.fixture), os.path.basename(args.fixture).replace("logits", "heads"))
    if heads_path == args.fixture:
        heads_path = os.path.join(os.path.dirname(args.fixture), "tiny_heads.json")
    with open(heads_path, "w") as f:
        json.dump(heads_fixture, f, separators=(",", ":"))
        f.write("\n")

    with open(os.path.join(args.report, "loss.csv"), "w") as f:
        for r in log:
            f.write(",".join(f"{v:.5f}" if isinstance(v, float) else str(v) for v in r) + "\n")
    plot_losses(log[1:], {"unigram": base["unigram"], "bigram": base["bigram"]}, os.path.join(args.report, "loss.png"),
                name, INDUCTION_PERIOD)

    summary = {"name": name, "attnlab_attention": spec, "seed": args.seed, "config": cfg, "steps_trained": log[-1][0],
               "options": {k: v for k, v in vars(args).items() if k not in ("attnlab", "resume", "stop_at", "export", "replot")},
               "torch": torch.__version__, "parameters": n_params,
               "chapters": n_chapters, "train_tokens": len(train_ids), "val_tokens": len(val_ids),
               "distinct_tokens": len(used), "corpus_sha256": corpus_sha, "modern_tokens": len(modern),
               "tokens_trained": tokens, "tokens_per_second": tokens / train_seconds,
               "final_val_loss": log[-1][2], "final_val_ppl": math.exp(log[-1][2]),
               "shipped_f16_val_loss": val_loss_shipped, "shipped_f16_val_ppl": math.exp(val_loss_shipped),
               "baselines": base, "attention_scores": scores, "train_seconds": train_seconds,
               "model_bytes": os.path.getsize(model_path), "model_sha256": sha256(model_path)}
    with open(os.path.join(args.report, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    sys.exit(main())
