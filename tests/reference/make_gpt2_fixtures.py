#!/usr/bin/python3
"""Random GPT-2 checkpoints in the Hugging Face layout, and what GPT-2 computes on them.

An implementation independent of AttnLab's C++: numpy in float64, written from the Hugging
Face GPT2Model formulas (Conv1D x @ W + b, causal attention scaled by 1/sqrt(head_dim),
tanh GELU "gelu_new", LayerNorm with the config's epsilon, lm_head tied to wte unless the
checkpoint has its own). The safetensors files are written by hand from the format's
definition, not by any library AttnLab uses.

    /usr/bin/python3 tests/reference/make_gpt2_fixtures.py tests/fixtures

Writes one folder per case: model.safetensors, config.json (when the case has one) and
expected.json. Needs Debian's python3-numpy at developer time only; the outputs are committed.
"""
import json
import os
import struct
import sys

import numpy as np

CASES = [
    # name, n_embd, n_head, n_layer, vocab, n_positions, dtype, prefix, config.json?, own lm_head?, aligned?, eps, seed
    dict(name="tiny-f32", C=32, H=4, L=2, V=96, P=32, dtype="F32", prefix="", config=True, lm_head=False, aligned=True, eps=1e-5, seed=1),
    dict(name="prefixed-untied-f32", C=48, H=3, L=3, V=80, P=24, dtype="F32", prefix="transformer.", config=True, lm_head=True,
         aligned=False, eps=1e-5, seed=2),
    dict(name="inferred-f16", C=128, H=2, L=1, V=64, P=16, dtype="F16", prefix="", config=False, lm_head=False, aligned=True,
         eps=1e-5, seed=3),
    dict(name="bf16-eps", C=32, H=2, L=2, V=50, P=20, dtype="BF16", prefix="", config=True, lm_head=False, aligned=True,
         eps=1e-6, seed=4),
]


def to_bf16_bits(x):
    """float32 -> bfloat16 bit patterns, round to nearest even."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def stored(x, dtype):
    """The bytes a tensor is stored as, and the float64 values those bytes hold."""
    if dtype == "F32":
        a = np.asarray(x, dtype=np.float32)
        return a.tobytes(), a.astype(np.float64)
    if dtype == "F16":
        a = np.asarray(x, dtype=np.float16)
        return a.tobytes(), a.astype(np.float64)
    b = to_bf16_bits(x)
    return b.tobytes(), from_bf16_bits(b).astype(np.float64)


def write_safetensors(path, tensors, aligned):
    """tensors: list of (name, dtype, shape, bytes). Data in list order."""
    header, offset = {}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header["__metadata__"] = {"format": "pt", "made_by": "attnlab tests/reference/make_gpt2_fixtures.py"}
    text = json.dumps(header, separators=(",", ":")).encode()
    if aligned:  # the usual writer pads the header with spaces to a multiple of 8
        text += b" " * (-len(text) % 8)
    elif len(text) % 4 == 0:  # make the data start off a 4-byte boundary
        text += b" "
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, _, data in tensors:
            f.write(data)


def layer_norm(x, w, b, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def forward(p, cfg, ids, temperatures=None):
    """Hugging Face GPT2LMHeadModel.forward, float64. Returns logits (T, V), attention (L, H, T, T), ln_f (T, C)."""
    C, H = cfg["n_embd"], cfg["n_head"]
    d = C // H
    T = len(ids)
    x = p["wte"][ids] + p["wpe"][np.arange(T)]
    attentions = []
    causal = np.tril(np.ones((T, T), dtype=bool))
    for l in range(cfg["n_layer"]):
        h = layer_norm(x, p[f"h.{l}.ln_1.weight"], p[f"h.{l}.ln_1.bias"], cfg["eps"])
        qkv = h @ p[f"h.{l}.attn.c_attn.weight"] + p[f"h.{l}.attn.c_attn.bias"]
        q, k, v = qkv[:, :C], qkv[:, C:2 * C], qkv[:, 2 * C:]
        heads, layer_att = [], []
        for hd in range(H):
            qh, kh, vh = q[:, hd * d:(hd + 1) * d], k[:, hd * d:(hd + 1) * d], v[:, hd * d:(hd + 1) * d]
            scores = qh @ kh.T / np.sqrt(d)
            tau = (temperatures or {}).get((l, hd), 1.0)
            scores = np.where(causal, scores / tau, -np.inf)
            w = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            layer_att.append(w)
            heads.append(w @ vh)
        attentions.append(layer_att)
        a = np.concatenate(heads, axis=1)
        x = x + a @ p[f"h.{l}.attn.c_proj.weight"] + p[f"h.{l}.attn.c_proj.bias"]
        h = layer_norm(x, p[f"h.{l}.ln_2.weight"], p[f"h.{l}.ln_2.bias"], cfg["eps"])
        m = gelu_new(h @ p[f"h.{l}.mlp.c_fc.weight"] + p[f"h.{l}.mlp.c_fc.bias"])
        x = x + m @ p[f"h.{l}.mlp.c_proj.weight"] + p[f"h.{l}.mlp.c_proj.bias"]
    ln_f = layer_norm(x, p["ln_f.weight"], p["ln_f.bias"], cfg["eps"])
    head = p["lm_head"] if "lm_head" in p else p["wte"]
    return ln_f @ head.T, np.array(attentions), ln_f


def rounded(x):
    if isinstance(x, float):
        return float(f"{x:.9g}")
    if isinstance(x, list):
        return [rounded(v) for v in x]
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


def make_case(out_dir, case):
    rng = np.random.default_rng(case["seed"])
    C, H, L, V, P = case["C"], case["H"], case["L"], case["V"], case["P"]
    cfg = {"n_embd": C, "n_head": H, "n_layer": L, "vocab_size": V, "n_positions": P, "eps": case["eps"]}
    dtype, prefix = case["dtype"], case["prefix"]

    tensors, params = [], {}

    def add(name, shape, scale, mean=0.0, key=None, store_prefix=True):
        values = mean + scale * rng.standard_normal(shape)
        data, exact = stored(values, dtype)
        tensors.append(((prefix if store_prefix else "") + name, dtype, shape, data))
        params[key or name] = exact

    add("wte.weight", (V, C), 0.5, key="wte")
    add("wpe.weight", (P, C), 0.2, key="wpe")
    for l in range(L):
        h = f"h.{l}."
        add(h + "ln_1.weight", (C,), 0.1, mean=1.0)
        add(h + "ln_1.bias", (C,), 0.05)
        # Larger q/k weights than GPT-2's init, so that attention has structure worth comparing.
        add(h + "attn.c_attn.weight", (C, 3 * C), 0.35)
        add(h + "attn.c_attn.bias", (3 * C,), 0.05)
        add(h + "attn.c_proj.weight", (C, C), 0.1)
        add(h + "attn.c_proj.bias", (C,), 0.02)
        add(h + "ln_2.weight", (C,), 0.1, mean=1.0)
        add(h + "ln_2.bias", (C,), 0.05)
        add(h + "mlp.c_fc.weight", (C, 4 * C), 0.1)
        add(h + "mlp.c_fc.bias", (4 * C,), 0.05)
        add(h + "mlp.c_proj.weight", (4 * C, C), 0.05)
        add(h + "mlp.c_proj.bias", (C,), 0.02)
        if prefix:  # old checkpoints carry the causal-mask buffers; a loader must skip them
            mask = np.tril(np.ones((1, 1, P, P), dtype=np.float32))
            tensors.append((prefix + h + "attn.bias", "F32", (1, 1, P, P), mask.tobytes()))
            tensors.append((prefix + h + "attn.masked_bias", "F32", (), np.float32(-1e4).tobytes()))
    add("ln_f.weight", (C,), 0.1, mean=1.0)
    add("ln_f.bias", (C,), 0.05)
    if case["lm_head"]:
        add("lm_head.weight", (V, C), 0.5, key="lm_head", store_prefix=False)

    # Scramble the data order: offsets must be honoured, not assumed.
    order = rng.permutation(len(tensors))
    tensors = [tensors[i] for i in order]

    folder = os.path.join(out_dir, case["name"])
    os.makedirs(folder, exist_ok=True)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, case["aligned"])
    if case["config"]:
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump({"model_type": "gpt2", "activation_function": "gelu_new", "n_embd": C, "n_head": H, "n_layer": L,
                       "vocab_size": V, "n_positions": P, "n_ctx": P, "layer_norm_epsilon": case["eps"]}, f, indent=2)
    elif os.path.exists(os.path.join(folder, "config.json")):
        os.remove(os.path.join(folder, "config.json"))

    T = min(P, 12)
    ids = rng.integers(0, V, size=T).tolist()
    logits, att, ln_f = forward(params, cfg, ids)
    overrides = {(0, H - 1): 0.5, (L - 1, 0): 2.0}
    logits_t, att_t, _ = forward(params, cfg, ids, overrides)
    expected = {
        "config": {k: cfg[k] for k in ("n_embd", "n_head", "n_layer", "vocab_size", "n_positions")},
        "layer_norm_epsilon": case["eps"],
        "has_config_json": case["config"],
        "tokens": ids,
        "logits": logits.tolist(),
        "attention": att.tolist(),
        "ln_f": ln_f.tolist(),
        "temperature_overrides": [{"layer": l, "head": h, "temperature": t} for (l, h), t in overrides.items()],
        "logits_with_overrides": logits_t.tolist(),
        "attention_with_overrides": att_t.tolist(),
    }
    with open(os.path.join(folder, "expected.json"), "w") as f:
        # Nine significant digits are far inside the 1e-4 tolerance and keep the files small.
        f.write(json.dumps(rounded(expected), separators=(",", ":")))
    size = sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder))
    print(f"{folder}: {len(tensors)} tensors, {size / 1024:.0f} KiB")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures"
    for case in CASES:
        make_case(out_dir, case)


if __name__ == "__main__":
    main()
