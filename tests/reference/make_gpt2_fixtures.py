#!/usr/bin/python3
"""Random GPT-2 checkpoints in the Hugging Face layout, and what GPT-2 computes on them.

An implementation independent of AttnLab's C++: numpy in float64, written from the Hugging
Face GPT2Model formulas (Conv1D x @ W + b, causal attention scaled by 1/sqrt(head_dim),
tanh GELU "gelu_new", LayerNorm with the config's epsilon, lm_head tied to wte unless the
checkpoint has its own). The safetensors files are written by hand from the format's
definition, not by any library AttnLab uses.

    /usr/bin/python3 tests/reference/make_gpt2_fixtures.py tests/fixtures

Writes one folder per case: model.safetensors, config.json (when the case has one),
expected.json, and for two cases plans.json: the same under attention plans, each head running
softmax, sparsemax, entmax or Scalable-Softmax at its temperature, or SA-softmax. Needs Debian's python3-numpy at developer time only; the outputs are committed.
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


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def entmax(z, alpha):
    """alpha-entmax (Peters, Niculae & Martins 2019) from its definition, alpha > 1:
    p_i = [(alpha-1) z_i - tau]_+ ^ (1/(alpha-1)) with tau such that sum p = 1, found by bisection
    on tau itself until the interval stops shrinking (alpha = 2 is sparsemax)."""
    a = (alpha - 1.0) * (z - z.max())  # the top is 0: tau lies in [-1, -(1/n)^(alpha-1)]
    lo, hi = -1.0, -(1.0 / len(z)) ** (alpha - 1.0)

    def mass(tau):
        return (np.maximum(a - tau, 0.0) ** (1.0 / (alpha - 1.0))).sum()

    while True:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if mass(mid) > 1.0:
            lo = mid
        else:
            hi = mid
    p = np.maximum(a - hi, 0.0) ** (1.0 / (alpha - 1.0))
    return p / p.sum()


def sparsemax_sorted(z):
    """Sparsemax by the sort of Martins & Astudillo 2016 (a check on the bisection above)."""
    zs = np.sort(z)[::-1]
    k = np.arange(1, len(z) + 1)
    cs = np.cumsum(zs)
    support = k[1 + k * zs > cs].max()
    tau = (cs[support - 1] - 1.0) / support
    return np.maximum(z - tau, 0.0)


def sa_softmax(x):
    """AttnLab's labelled SA-softmax (src/analysis/normalizers.h): w_i = (x_i - lo)/(hi - lo) softmax(x)_i
    with lo = min(x_min, 0), hi = max(0, x_max), returned as w / sum w; softmax(x) where the range
    or sum w is 0."""
    lo, hi = min(x.min(), 0.0), max(0.0, x.max())
    q = softmax(x)
    if hi - lo == 0.0:
        return q
    w = (x - lo) / (hi - lo) * q
    return q if w.sum() == 0.0 else w / w.sum()


def normalize(head, scores):
    """One query's weights over the n keys it sees. head = (name, parameter, T)."""
    name, param, T = head
    x = scores / T
    if name == "softmax" or (name == "entmax" and param == 1.0):
        return softmax(x)
    if name == "sparsemax":
        p = entmax(x, 2.0)
        assert np.abs(p - sparsemax_sorted(x)).max() < 1e-12
        return p
    if name == "entmax":
        return entmax(x, param)
    if name == "ssmax":  # Scalable-Softmax: n is the number of keys this query sees
        return softmax(param * np.log(len(x)) * x)
    if name == "sa-softmax":
        return sa_softmax(x)
    raise ValueError(name)


def forward(p, cfg, ids, temperatures=None, plan=None):
    """Hugging Face GPT2LMHeadModel.forward, float64. Returns logits (T, V), attention (L, H, T, T), ln_f (T, C).
    plan: {(layer, head): (normalizer, parameter, T)}, softmax at T = 1 elsewhere; temperatures: {(layer, head): T}."""
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
            if plan is not None:
                head = plan.get((l, hd), ("softmax", 0.0, 1.0))
                w = np.zeros((T, T))
                for i in range(T):
                    w[i, :i + 1] = normalize(head, scores[i, :i + 1])
            else:
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


def parse_plan(spec, L, H):
    """The plan's text (docs: HEADS=NORMALIZER[@T], comma-separated, later items win) as
    {(layer, head): (normalizer, parameter, T)}, written from the grammar, not from the C++ parser."""
    plan = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        heads, rest = item.split("=")
        norm, _, t = rest.partition("@")
        name, _, param = norm.partition(":")
        if name == "entmax-1.5":
            name, param = "entmax", "1.5"
        head = (name, float(param) if param else 0.0, float(t) if t else 1.0)
        if heads == "all":
            cells = [(l, h) for l in range(L) for h in range(H)]
        else:
            layer, h = heads.split(".")
            cells = [(int(layer), hh) for hh in range(H)] if h == "*" else [(int(layer), int(h))]
        for c in cells:
            plan[c] = head
    return plan


def next_token_nll(logits, ids):
    """-ln p(ids[i+1] | ids[..i]) for i = 0 .. T-2, float64 log-softmax."""
    top = logits.max(axis=1, keepdims=True)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    return (log_z[:-1] - logits[np.arange(len(ids) - 1), ids[1:]])


def rounded(x):
    if isinstance(x, float):
        return float(f"{x:.9g}")
    if isinstance(x, list):
        return [rounded(v) for v in x]
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


# The attention plans run on two of the shapes (plans.json): model/attention_plan.h's text form.
# "" is the default plan (softmax at T = 1), for its perplexity. Each normalizer runs at T = 1
# and at another T, alone on every head and in per-head mixes where later items override.
PLANS = {
    "tiny-f32": ["", "0.0=sparsemax,0.1=entmax-1.5@0.7,0.2=ssmax:0.43,0.3=sa-softmax@2,1.0=entmax:1.3,1.1=entmax:3@1.5,"
                 "1.2=softmax@0.5,1.3=ssmax:1@0.8",
                 "all=sparsemax", "all=entmax-1.5", "all=ssmax:0.43", "1.*=sa-softmax@2", "all=entmax:1.7@1.3"],
    "prefixed-untied-f32": ["", "all=sparsemax@0.5,1.*=entmax:2.5,1.1=ssmax:-0.5@2,2.*=sa-softmax,2.2=entmax-1.5@3,0.0=softmax@2",
                            "all=sparsemax", "all=entmax-1.5", "all=ssmax:0.43", "0.*=sa-softmax@0.5", "all=sa-softmax@1.5"],
}
PLAN_TOKENS = 20


def write_plans(folder, case, cfg, params):
    """plans.json: for each plan, what GPT-2 computes under it on PLAN_TOKENS tokens: logits, the
    weights of every head (row i: the i + 1 keys query i sees), and the next-token NLL and perplexity."""
    rng = np.random.default_rng(case["seed"] + 1000)  # apart from make_case's draws, which stay as they were
    ids = rng.integers(0, cfg["vocab_size"], size=PLAN_TOKENS).tolist()
    runs = []
    for spec in PLANS[case["name"]]:
        plan = parse_plan(spec, cfg["n_layer"], cfg["n_head"])
        logits, att, _ = forward(params, cfg, ids, plan=plan)
        nll = next_token_nll(logits, np.array(ids))
        heads = [[list(plan.get((l, h), ("softmax", 0.0, 1.0))) for h in range(cfg["n_head"])] for l in range(cfg["n_layer"])]
        runs.append({"spec": spec, "heads": heads, "logits": logits.tolist(),
                     "attention": [[[row[:i + 1] for i, row in enumerate(w.tolist())] for w in layer] for layer in att],
                     "nll": nll.tolist(), "mean_nll": float(nll.mean()), "perplexity": float(np.exp(nll.mean()))})
    with open(os.path.join(folder, "plans.json"), "w") as f:
        f.write(json.dumps(rounded({"tokens": ids, "plans": runs}), separators=(",", ":")))


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
    write_expected(folder, expected)
    if case["name"] in PLANS:
        write_plans(folder, case, cfg, params)
    report_size(folder, len(tensors))


def write_expected(folder, expected):
    with open(os.path.join(folder, "expected.json"), "w") as f:
        # Nine significant digits are far inside the 1e-4 tolerance and keep the files small.
        f.write(json.dumps(rounded(expected), separators=(",", ":")))


def report_size(folder, tensor_count):
    size = sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder))
    print(f"{folder}: {tensor_count} tensors, {size / 1024:.0f} KiB")


def make_cases(cases, make_case):
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures"
    for case in cases:
        make_case(out_dir, case)


if __name__ == "__main__":
    make_cases(CASES, make_case)
