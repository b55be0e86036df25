"""AttnLab tiny's outputs: the Hugging Face GPT-2 checkpoint (F16 safetensors), an independent float64
forward pass over it for the fixtures, the loss plot, and the baselines. Used by train_tiny.py."""
import hashlib
import json
import math
import struct
import textwrap

import numpy as np
import torch
import torch.nn.functional as F

VOCAB = 50257
LOG_COLUMNS = ("step", "train_loss", "val_loss", "seconds", "previous_token_max", "induction_max",
               "previous_token_modern_max", "tokens")


# Export: HF names, Conv1D weights stored (in, out), F16.

def hf_tensors(model, used_ids):
    sd = {k: v.detach().to("cpu", torch.float64) for k, v in model.state_dict().items()}
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


# The attention plan in config.json ("attnlab_attention"), in the grammar of the CLI's --attention SPEC:
# comma-separated items HEADS=NORMALIZER[@T], HEADS `all`, `L.*` or `L.H` (0-based layer.head), later
# items overriding earlier ones. A checkpoint without the key is softmax at T = 1 in every head. Of the
# normalizers, this trainer makes and reads `softmax` and `ssmax:S`.

def attention_spec(model):
    """The plan of a TinyGpt: None for softmax everywhere, else one `L.H=ssmax:S` item per head, S the
    shortest decimal that gives back the float32 s ("0.43", not %.9g's "0.430000007", which the page
    would otherwise show in its titles, state() and links)."""
    if model.h[0].ssmax_s is None:
        return None
    return ",".join(f"{l}.{h}=ssmax:{np.format_float_positional(np.float32(s), unique=True, trim='-')}"
                    for l, b in enumerate(model.h) for h, s in enumerate(b.ssmax_s.tolist()))


def parse_attention_spec(spec, n_layer, n_head):
    """[[(normalizer, parameter, T) for each head] for each layer]; normalizer is "softmax" or "ssmax".
    Raises ValueError naming the bad item."""
    plan = [[("softmax", None, 1.0)] * n_head for _ in range(n_layer)]
    for item in (spec or "").split(",") if spec else []:
        try:
            heads, _, rhs = item.partition("=")
            if not rhs:
                raise ValueError("expected HEADS=NORMALIZER[@T]")
            norm, at, temp = rhs.partition("@")
            T = float(temp) if at else 1.0
            if not (T > 0 and math.isfinite(T)):
                raise ValueError("the temperature must be a finite number above 0")
            name, colon, param = norm.partition(":")
            if name == "softmax" and not colon:
                value = ("softmax", None, T)
            elif name == "ssmax" and colon:
                S = float(param)
                if not math.isfinite(S):
                    raise ValueError("ssmax's scale must be finite")
                value = ("ssmax", S, T)
            else:
                raise ValueError(f"normalizer {norm!r}: this trainer reads softmax and ssmax:S only")
            if heads == "all":
                cells = [(l, h) for l in range(n_layer) for h in range(n_head)]
            else:
                L, dot, H = heads.partition(".")
                if not dot or not L.isdigit() or not (H == "*" or H.isdigit()) or int(L) >= n_layer or \
                        (H != "*" and int(H) >= n_head):
                    raise ValueError(f"heads {heads!r}: expected all, L.* or L.H inside {n_layer} x {n_head}")
                cells = [(int(L), h) for h in range(n_head)] if H == "*" else [(int(L), int(H))]
            for l, h in cells:
                plan[l][h] = value
        except ValueError as e:
            raise ValueError(f"attnlab_attention item {item!r}: {e}") from None
    return plan


def load_hf_tensors(model, tensors, used_ids, spec=None):
    """The inverse of hf_tensors: a model's parameters from an HF GPT-2 checkpoint of the same shape.
    An SSMax model takes its per-head s from `spec` (config.json's attnlab_attention, every head ssmax at
    T = 1); with no spec it keeps the s it was made with."""
    used = set(used_ids)
    unused = next(i for i in range(VOCAB) if i not in used)
    sd = {"wte.weight": torch.cat([tensors["wte.weight"][torch.tensor(used_ids)], tensors["wte.weight"][unused][None]]),
          "wpe.weight": tensors["wpe.weight"], "ln_f.weight": tensors["ln_f.weight"], "ln_f.bias": tensors["ln_f.bias"]}
    for l in range(len(model.h)):
        p = f"h.{l}."
        for ours, theirs, transpose in (("ln_1", "ln_1", False), ("c_attn", "attn.c_attn", True),
                                        ("attn_proj", "attn.c_proj", True), ("ln_2", "ln_2", False),
                                        ("c_fc", "mlp.c_fc", True), ("mlp_proj", "mlp.c_proj", True)):
            w = tensors[p + theirs + ".weight"]
            sd[p + ours + ".weight"], sd[p + ours + ".bias"] = (w.T if transpose else w), tensors[p + theirs + ".bias"]
    if model.h[0].ssmax_s is not None:
        if spec is None:
            print("load_hf_tensors: the checkpoint has no attnlab_attention; its s stays at --ssmax-init", flush=True)
        plan = parse_attention_spec(spec, len(model.h), model.h[0].n_head)
        for l, b in enumerate(model.h):
            if spec is None:
                sd[f"h.{l}.ssmax_s"] = b.ssmax_s.detach().clone()
                continue
            if any(norm != "ssmax" or T != 1.0 for norm, _, T in plan[l]):
                raise ValueError(f"layer {l} of {spec!r} is not ssmax at T = 1 in every head")
            sd[f"h.{l}.ssmax_s"] = torch.tensor([S for _, S, _ in plan[l]], dtype=torch.float32)
    elif parse_attention_spec(spec, len(model.h), model.h[0].n_head) != parse_attention_spec(None, len(model.h),
                                                                                                  model.h[0].n_head):
        raise ValueError(f"a softmax model cannot start from a checkpoint with attention {spec!r}")
    model.load_state_dict({k: v.to(torch.float32).contiguous() for k, v in sd.items()})


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


def read_safetensors(path, dtype=torch.float64):
    """Every tensor of an F16, BF16 or F32 safetensors file, as `dtype` (bench/onnx/export_gpt2.py and
    export_llama.py read F32)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        element = {"F16": "<f2", "F32": "<f4", "BF16": "<u2"}.get(info["dtype"])
        if element is None:
            raise ValueError(f"{path}: tensor {name} is {info['dtype']}; only F16, BF16 and F32 are read")
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[8 + n + a:8 + n + b], dtype=element).reshape(info["shape"])
        if info["dtype"] == "BF16":  # the upper half of a float32
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        out[name] = torch.from_numpy(arr.astype(np.float64 if dtype == torch.float64 else np.float32))
    return out


def reference_logits(t, cfg, ids, attention=None):
    """Float64 GPT-2 forward pass over the full vocabulary, straight from the HF-layout tensors, with the
    attention plan of cfg["attnlab_attention"] when there is one (softmax and ssmax:S, each at its T).
    Each layer's (H, T, T) attention weights are appended to `attention` when a list is given."""
    C, H = cfg["n_embd"], cfg["n_head"]
    T = len(ids)
    x = t["wte.weight"][torch.tensor(ids)] + t["wpe.weight"][:T]  # x: (T, C)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    ln = lambda x, p: F.layer_norm(x, (C,), t[p + ".weight"], t[p + ".bias"], 1e-5)
    plan = parse_attention_spec(cfg.get("attnlab_attention"), cfg["n_layer"], H)
    log_n = torch.log(torch.arange(1, T + 1, dtype=torch.float64))  # the keys query i sees: i + 1
    for l in range(cfg["n_layer"]):
        p = f"h.{l}."
        qkv = ln(x, p + "ln_1") @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        q, k, v = (a.view(T, H, C // H).transpose(0, 1) for a in qkv.split(C, dim=1))  # (H, T, d)
        # Each head's logits are multiplied by its row factor (ssmax: S * log(n)) and divided by its T
        # before the mask: at n = 1, 0 * -inf would be NaN.
        factor = torch.stack([(S * log_n if norm == "ssmax" else torch.ones(T, dtype=torch.float64)) / temp
                              for norm, S, temp in plan[l]])[:, :, None]  # (H, T, 1)
        att = (q @ k.transpose(-1, -2) / math.sqrt(C // H) * factor).masked_fill(~mask, float("-inf")).softmax(-1)
        if attention is not None:
            attention.append(att)
        x = x + (att @ v).transpose(0, 1).reshape(T, C) @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        h = F.gelu(ln(x, p + "ln_2") @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
    return ln(x, "ln_f") @ t["wte.weight"].T  # (T, VOCAB)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def plot_losses(rows, baselines, path, title, induction_period):
    """rows: LOG_COLUMNS; baselines: {"unigram": ppl, "bigram": ppl}."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps = [r[0] for r in rows]
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.5, 7), dpi=110, sharex=True)
    ax.plot(steps, [r[1] for r in rows], label="training loss (mean since last point)")
    ax.plot(steps, [r[2] for r in rows], label="validation loss (held-out KJV chapters)")
    for (name, ppl), ls in zip(sorted(baselines.items()), ("--", ":")):
        ax.axhline(math.log(ppl), color="gray", ls=ls, label=f"{name} baseline (ppl {ppl:.0f})")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title(textwrap.fill(title, 90), fontsize=10)  # the models' labels are longer than the plot is wide
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax2.plot(steps, [r[4] for r in rows], label="previous-token score, best head, held-out KJV")
    ax2.plot(steps, [r[6] for r in rows], label="previous-token score, best head, modern English")
    ax2.plot(steps, [r[5] for r in rows], label=f"induction score, best head, {induction_period} random tokens x 2")
    ax2.axhline(0.5, color="tab:blue", ls=":", lw=0.8, label="target for a previous-token head (0.5)")
    ax2.axhline(0.3, color="tab:green", ls=":", lw=0.8, label="target for an induction head (0.3)")
    ax2.set_ylim(0, 1)
    ax2.set_xlabel("optimizer step")
    ax2.set_ylabel("mean attention weight")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def baselines(train_ids, val_ids):
    """Validation perplexity of an add-one unigram model and of an interpolated bigram model
    (lambda picked on validation itself, which flatters the baseline, not us)."""
    tr, va = np.array(train_ids), np.array(val_ids)
    counts = np.bincount(tr, minlength=VOCAB).astype(np.float64) + 1.0
    p_uni = counts / counts.sum()
    unigram = float(np.exp(-np.mean(np.log(p_uni[va]))))
    pairs = tr[:-1].astype(np.int64) * VOCAB + tr[1:]
    keys, n = np.unique(pairs, return_counts=True)
    ctx = np.bincount(tr[:-1], minlength=VOCAB).astype(np.float64)
    q = va[:-1].astype(np.int64) * VOCAB + va[1:]
    at = np.searchsorted(keys, q).clip(0, len(keys) - 1)
    c_pair = np.where(keys[at] == q, n[at], 0).astype(np.float64)
    c_ctx = ctx[va[:-1]]
    p_ml = np.divide(c_pair, c_ctx, out=np.zeros_like(c_pair), where=c_ctx > 0)
    best = min((float(np.exp(-np.mean(np.log(lam * p_ml + (1 - lam) * p_uni[va[1:]])))), lam)
               for lam in np.linspace(0.05, 0.95, 19))
    return {"unigram": unigram, "bigram": best[0], "bigram_lambda": round(best[1], 2)}
