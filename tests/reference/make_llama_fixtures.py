#!/usr/bin/python3
"""Random Llama / Qwen2 / Qwen3 checkpoints in the Hugging Face layout, and what those models compute.

Independent of AttnLab's C++: numpy in float64, written from Hugging Face transformers'
definitions (models/llama/modeling_llama.py, qwen2, qwen3, modeling_rope_utils.py):
  RMSNorm          w * x / sqrt(mean(x^2) + eps)
  rotary           inv_freq_i = theta^(-2i/d); rotate_half pairs dimension i with i + d/2;
                   rope_scaling "linear" divides inv_freq by factor, "llama3" divides the
                   long wavelengths by factor, keeps the short ones and blends the band between
  attention        q k^T * head_dim^-0.5, causal, softmax; query head h reads key/value head
                   h // (heads / kv_heads) (repeat_kv)
  Qwen2            q, k, v projections have biases, o_proj none
  Qwen3            RMSNorm over each head's q and k (q_norm, k_norm) before the rotation
  MLP              down(silu(gate(x)) * up(x))
  lm_head          embed_tokens when tie_word_embeddings, else lm_head.weight
nn.Linear weights are stored (out, in) and applied as x @ W^T + b.

    /usr/bin/python3 tests/reference/make_llama_fixtures.py tests/fixtures

Writes tests/fixtures/<case>/: model.safetensors (or its shards and model.safetensors.index.json),
config.json, expected.json. Needs python3-numpy
at developer time only; the outputs are committed.
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_gpt2_fixtures import (  # noqa: E402
    make_cases, next_token_nll, normalize, parse_plan, report_size, stored, write_expected, write_safetensors)

CASES = [
    # GQA 4 query heads on 2 key/value heads, untied, no biases, plain rotary.
    dict(name="llama-gqa-f32", arch="llama", C=32, H=4, KV=2, d=8, I=48, L=2, V=64, P=64, theta=10000.0, scaling=None,
         tied=False, attention_bias=False, mlp_bias=False, dtype="F32", eps=1e-6, seed=11, T=20),
    # One key/value head, head_dim 16 != C / H, every bias, tied, llama3 scaling whose three bands all occur, F16.
    dict(name="llama3-bias-tied-f16", arch="llama", C=32, H=4, KV=1, d=16, I=40, L=2, V=50, P=128, theta=10000.0,
         scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 32},
         tied=True, attention_bias=True, mlp_bias=True, dtype="F16", eps=1e-5, seed=12, T=24),
    # Qwen2: q/k/v biases, linear scaling, a large theta.
    dict(name="qwen2-linear-f32", arch="qwen2", C=32, H=4, KV=2, d=8, I=48, L=2, V=70, P=64, theta=1e6,
         scaling={"type": "linear", "factor": 2.0}, tied=False, attention_bias=False, mlp_bias=False, dtype="F32", eps=1e-6,
         seed=13, T=18),
    # Qwen3: q_norm/k_norm, head_dim 16 with 4 heads on hidden 32, tied, BF16.
    dict(name="qwen3-qknorm-bf16", arch="qwen3", C=32, H=4, KV=2, d=16, I=48, L=2, V=60, P=64, theta=1e6, scaling=None,
         tied=True, attention_bias=False, mlp_bias=False, dtype="BF16", eps=1e-6, seed=14, T=16),
    # Qwen2 with GQA in BF16, in 3 shards with model.safetensors.index.json, its config.json as
    # transformers 5 writes it: rope_parameters (holding rope_theta 1e6) and no top-level rope_theta.
    dict(name="qwen2-sharded-bf16", arch="qwen2", C=32, H=4, KV=2, d=8, I=40, L=2, V=56, P=64, theta=1e6, scaling=None,
         tied=False, attention_bias=False, mlp_bias=False, dtype="BF16", eps=1e-6, seed=16, T=14, shards=3,
         rope_parameters=True),
    # Llama in F32 with the data off 4-byte alignment, as some writers leave it: matrices that
    # cannot be read in place are copied to fp32, and compute the same.
    dict(name="llama-unaligned-f32", arch="llama", C=32, H=4, KV=4, d=8, I=48, L=2, V=48, P=64, theta=10000.0,
         scaling={"rope_type": "linear", "factor": 4.0}, tied=False, attention_bias=True, mlp_bias=False, dtype="F32",
         eps=1e-5, seed=17, T=12, aligned=False),
    # Positions past 2,048 (llama3 scaling at its real constants, rope_theta 500000): only the
    # last `tail` positions' logits are kept, and no attention matrices, to keep the file small.
    dict(name="llama-long-f32", arch="llama", C=32, H=4, KV=2, d=8, I=32, L=2, V=40, P=4096, theta=500000.0,
         scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 1024},
         tied=True, attention_bias=False, mlp_bias=False, dtype="F32", eps=1e-5, seed=15, T=2200, tail=4),
]

# Plans run on a case, as in make_gpt2_fixtures: every normalizer, with temperatures.
PLANS = {"qwen3-qknorm-bf16": ["all=sparsemax", "0.1=entmax:1.5@0.7,1.*=ssmax:1.3,1.2=sa-softmax", "0.*=softmax@2,1.3=entmax:1"]}


def rms_norm(x, w, eps):
    return w * (x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps))


def inverse_frequencies(case):
    d, theta = case["d"], case["theta"]
    inv = 1.0 / theta ** (np.arange(0, d, 2) / d)
    s = case["scaling"]
    kind = None if s is None else s.get("rope_type", s.get("type"))
    if kind == "linear":
        inv = inv / s["factor"]
    elif kind == "llama3":
        factor, low, high, old = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen > old / low, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        blended = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old / high) & ~(wavelen > old / low)
        inv = np.where(medium, blended, scaled)
    return inv


def rotate(x, positions, inv):
    """x: (T, heads, d), rotate_half form."""
    angle = positions[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(angle)] * 2, axis=1)[:, None, :]
    sin = np.concatenate([np.sin(angle)] * 2, axis=1)[:, None, :]
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def forward(p, case, ids, plan=None):
    """Returns logits (T, V), attention (L, H, T, T) and the final norm's output (T, C)."""
    C, H, KV, d, eps = case["C"], case["H"], case["KV"], case["d"], case["eps"]
    T = len(ids)
    inv = inverse_frequencies(case)
    pos = np.arange(T, dtype=np.float64)
    x = p["model.embed_tokens.weight"][ids]
    attentions = []

    def linear(h, name, bias):
        y = h @ p[name + ".weight"].T
        return y + p[name + ".bias"] if bias else y

    qkv_bias = case["arch"] == "qwen2" or case["attention_bias"]
    o_bias = case["arch"] != "qwen2" and case["attention_bias"]
    for l in range(case["L"]):
        a = f"model.layers.{l}."
        h = rms_norm(x, p[a + "input_layernorm.weight"], eps)
        q = linear(h, a + "self_attn.q_proj", qkv_bias).reshape(T, H, d)
        k = linear(h, a + "self_attn.k_proj", qkv_bias).reshape(T, KV, d)
        v = linear(h, a + "self_attn.v_proj", qkv_bias).reshape(T, KV, d)
        if case["arch"] == "qwen3":
            q = rms_norm(q, p[a + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, p[a + "self_attn.k_norm.weight"], eps)
        q, k = rotate(q, pos, inv), rotate(k, pos, inv)
        heads, layer_att = [], []
        for hd in range(H):
            kv = hd // (H // KV)
            scores = q[:, hd] @ k[:, kv].T * d ** -0.5
            head = (plan or {}).get((l, hd), ("softmax", 0.0, 1.0))
            w = np.zeros((T, T))
            for i in range(T):
                w[i, :i + 1] = normalize(head, scores[i, :i + 1])
            layer_att.append(w)
            heads.append(w @ v[:, kv])
        attentions.append(layer_att)
        x = x + linear(np.concatenate(heads, axis=1), a + "self_attn.o_proj", o_bias)
        h = rms_norm(x, p[a + "post_attention_layernorm.weight"], eps)
        gate = linear(h, a + "mlp.gate_proj", case["mlp_bias"])
        up = linear(h, a + "mlp.up_proj", case["mlp_bias"])
        x = x + linear(gate / (1.0 + np.exp(-gate)) * up, a + "mlp.down_proj", case["mlp_bias"])
    normed = rms_norm(x, p["model.norm.weight"], eps)
    head = p["model.embed_tokens.weight"] if case["tied"] else p["lm_head.weight"]
    return normed @ head.T, np.array(attentions), normed


def write_checkpoint(folder, tensors, shards, aligned):
    """model.safetensors, or `shards` files of consecutive tensors and model.safetensors.index.json
    as Hugging Face names and writes them."""
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors, aligned)
        return
    weight_map, total = {}, 0
    for s in range(shards):
        part = tensors[s * len(tensors) // shards:(s + 1) * len(tensors) // shards]
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(os.path.join(folder, name), part, aligned)
        for t in part:
            weight_map[t[0]] = name
            total += len(t[3])
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)


def make_case(out_dir, case):
    rng = np.random.default_rng(case["seed"])
    C, H, KV, d, I, L, V = case["C"], case["H"], case["KV"], case["d"], case["I"], case["L"], case["V"]
    dtype = case["dtype"]
    tensors, params = [], {}

    def add(name, shape, scale, mean=0.0):
        data, exact = stored(mean + scale * rng.standard_normal(shape), dtype)
        tensors.append((name, dtype, shape, data))
        params[name] = exact

    qkv_bias = case["arch"] == "qwen2" or case["attention_bias"]
    add("model.embed_tokens.weight", (V, C), 0.5)
    for l in range(L):
        a = f"model.layers.{l}."
        add(a + "input_layernorm.weight", (C,), 0.1, mean=1.0)
        # Larger q/k weights than an init's, so that attention has structure worth comparing.
        for name, out in (("q_proj", H * d), ("k_proj", KV * d), ("v_proj", KV * d)):
            add(a + f"self_attn.{name}.weight", (out, C), 0.35)
            if qkv_bias:
                add(a + f"self_attn.{name}.bias", (out,), 0.1)
        if case["arch"] == "qwen3":
            add(a + "self_attn.q_norm.weight", (d,), 0.3, mean=1.0)
            add(a + "self_attn.k_norm.weight", (d,), 0.3, mean=1.0)
        add(a + "self_attn.o_proj.weight", (C, H * d), 0.1)
        if case["arch"] != "qwen2" and case["attention_bias"]:
            add(a + "self_attn.o_proj.bias", (C,), 0.05)
        add(a + "post_attention_layernorm.weight", (C,), 0.1, mean=1.0)
        add(a + "mlp.gate_proj.weight", (I, C), 0.2)
        add(a + "mlp.up_proj.weight", (I, C), 0.2)
        add(a + "mlp.down_proj.weight", (C, I), 0.1)
        if case["mlp_bias"]:
            add(a + "mlp.gate_proj.bias", (I,), 0.05)
            add(a + "mlp.up_proj.bias", (I,), 0.05)
            add(a + "mlp.down_proj.bias", (C,), 0.05)
    add("model.norm.weight", (C,), 0.1, mean=1.0)
    if not case["tied"]:
        add("lm_head.weight", (V, C), 0.5)
    order = rng.permutation(len(tensors))  # offsets must be honoured, not assumed
    tensors = [tensors[i] for i in order]

    folder = os.path.join(out_dir, case["name"])
    os.makedirs(folder, exist_ok=True)
    write_checkpoint(folder, tensors, case.get("shards", 1), case.get("aligned", True))
    config = {"model_type": case["arch"], "architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
                                                             "qwen3": "Qwen3ForCausalLM"}[case["arch"]]],
              "hidden_act": "silu", "hidden_size": C, "num_attention_heads": H, "num_key_value_heads": KV, "head_dim": d,
              "intermediate_size": I, "num_hidden_layers": L, "vocab_size": V, "max_position_embeddings": case["P"],
              "rms_norm_eps": case["eps"], "rope_theta": case["theta"], "rope_scaling": case["scaling"],
              "tie_word_embeddings": case["tied"], "attention_bias": case["attention_bias"], "torch_dtype": "float32"}
    if case.get("rope_parameters"):
        # transformers 5: rope_scaling and rope_theta become one rope_parameters (modeling_rope_utils).
        config["rope_parameters"] = dict(case["scaling"] or {"rope_type": "default"}, rope_theta=case["theta"])
        del config["rope_theta"], config["rope_scaling"]
    if case["arch"] == "llama":
        config["mlp_bias"] = case["mlp_bias"]
    else:
        config["use_sliding_window"] = False
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)

    ids = rng.integers(0, V, size=case["T"]).tolist()
    logits, att, normed = forward(params, case, ids)
    expected = {"tokens": ids, "logits": logits.tolist(), "attention": att.tolist(), "final_norm": normed.tolist(),
                "nll": next_token_nll(logits, np.array(ids)).tolist()}
    if "tail" in case:
        expected = {"tokens": ids, "tail": case["tail"], "logits_tail": logits[-case["tail"]:].tolist(),
                    "nll": expected["nll"]}
    runs = []
    for spec in PLANS.get(case["name"], []):
        plan = parse_plan(spec, L, H)
        lp, ap, _ = forward(params, case, ids, plan)
        runs.append({"spec": spec, "logits": lp.tolist(), "attention": ap.tolist()})
    if runs:
        expected["plans"] = runs
    write_expected(folder, expected)
    report_size(folder, len(tensors))


if __name__ == "__main__":
    make_cases(CASES, make_case)
