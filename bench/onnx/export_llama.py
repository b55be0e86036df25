"""Export a Llama-family checkpoint (model_type "llama", Hugging Face layout, F32, F16 or BF16
safetensors, one file or sharded, as `attnlab random-checkpoint --arch llama` writes) to ONNX, for
ONNX Runtime to run beside AttnLab in bench/onnx/compare.mjs --model smollm2.

Developer-time only (Debian's python3-torch and python3-onnx), never in CI:

    /usr/bin/python3 bench/onnx/export_llama.py CHECKPOINT_DIR OUT.onnx [--decode]

The graph is a plain PyTorch Llama written here from Hugging Face transformers' definitions
(models/llama/modeling_llama.py), not from AttnLab's code: RMSNorm in float32, rotary positions
with rope_theta on the two halves of each head, grouped-query attention (each key/value head
repeated for its group of query heads), a SiLU-gated MLP, tied or untied lm_head. input_ids
(1, T) int64 -> logits (1, vocab) at the last position, the same output AttnLab's prefill
computes; T is a dynamic axis. 16-bit weights are widened to float32 here: the graph is what
onnxruntime-web runs for an F32 model, the peer for both of AttnLab's weight formats. Opset 14.
With --decode the graph also takes and returns the KV cache (LlamaWithCache), for the
decode timing. Refuses rope_scaling, biases and head layouts it does not build, naming the field.
"""
import inspect
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "train_tiny"))
from hf_export import read_safetensors  # noqa: E402  (the same safetensors reader as AttnLab tiny's tools)


def read_checkpoint(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(folder, "model.safetensors"), torch.float32)
    with open(index) as f:
        files = sorted(set(json.load(f)["weight_map"].values()))
    out = {}
    for name in files:
        out.update(read_safetensors(os.path.join(folder, name), torch.float32))
    return out


def check_config(cfg):
    if cfg.get("model_type") != "llama":
        sys.exit(f"export_llama.py: model_type is {cfg.get('model_type')!r}; this exporter builds llama")
    for field in ("rope_scaling",):
        if cfg.get(field) is not None:
            sys.exit(f"export_llama.py: {field} {cfg[field]!r} is not built here (only null)")
    for field in ("attention_bias", "mlp_bias"):
        if cfg.get(field):
            sys.exit(f"export_llama.py: {field} true is not built here")
    if cfg.get("hidden_act", "silu") != "silu":
        sys.exit(f"export_llama.py: hidden_act {cfg['hidden_act']!r}; only silu")


class LlamaLastLogits(torch.nn.Module):
    def __init__(self, t, cfg):
        super().__init__()
        self.C = cfg["hidden_size"]
        self.H = cfg["num_attention_heads"]
        self.KV = cfg.get("num_key_value_heads", self.H)
        self.d = cfg.get("head_dim") or self.C // self.H
        self.L = cfg["num_hidden_layers"]
        self.eps = cfg.get("rms_norm_eps", 1e-6)
        self.tied = cfg.get("tie_word_embeddings", False)
        for name, value in t.items():
            self.register_buffer(name.replace(".", "_"), value)
        # The rotation's angles for every position, computed in float64 then stored as float32.
        inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, self.d, 2, dtype=torch.float64) / self.d))
        angles = torch.outer(torch.arange(cfg["max_position_embeddings"], dtype=torch.float64), inv)
        angles = torch.cat((angles, angles), dim=-1)  # (positions, d): the same angle for i and i + d/2
        self.register_buffer("cos", angles.cos().float())
        self.register_buffer("sin", angles.sin().float())

    def w(self, name):
        return getattr(self, name.replace(".", "_"))

    def rms(self, x, name):
        return self.w(name) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def rotate(self, x, cos, sin):  # x (heads, T, d)
        half = self.d // 2
        turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + turned * sin

    def forward(self, input_ids):  # (1, T)
        return self.run(input_ids, None, None)[0]

    def run(self, input_ids, past_keys, past_values):
        """Logits at the last position, and every key and value so far (layers, KV, P + T, d) when
        past_keys and past_values (layers, KV, P, d) hold the P positions before input_ids."""
        T = input_ids.shape[1]
        P = 0 if past_keys is None else past_keys.shape[2]
        H, KV, d = self.H, self.KV, self.d
        x = self.w("model.embed_tokens.weight")[input_ids[0]]  # (T, C)
        cos, sin = self.cos[P:P + T], self.sin[P:P + T]
        queries, keys = torch.arange(T) + P, torch.arange(P + T)
        mask = torch.zeros(T, P + T).masked_fill(keys[None, :] > queries[:, None], float("-inf"))
        presents_k, presents_v = [], []
        for l in range(self.L):
            p = f"model.layers.{l}."
            h = self.rms(x, p + "input_layernorm.weight")
            q = (h @ self.w(p + "self_attn.q_proj.weight").t()).reshape(T, H, d).transpose(0, 1)
            k = (h @ self.w(p + "self_attn.k_proj.weight").t()).reshape(T, KV, d).transpose(0, 1)
            v = (h @ self.w(p + "self_attn.v_proj.weight").t()).reshape(T, KV, d).transpose(0, 1)
            q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
            if past_keys is not None:
                k, v = torch.cat((past_keys[l], k), dim=1), torch.cat((past_values[l], v), dim=1)
                presents_k.append(k)
                presents_v.append(v)
            S = k.shape[1]
            # Each key/value head serves H / KV consecutive query heads.
            k = k[:, None].expand(KV, H // KV, S, d).reshape(H, S, d)
            v = v[:, None].expand(KV, H // KV, S, d).reshape(H, S, d)
            att = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d) + mask, dim=-1)  # (H, T, T)
            y = (att @ v).transpose(0, 1).reshape(T, H * d)
            x = x + y @ self.w(p + "self_attn.o_proj.weight").t()
            h = self.rms(x, p + "post_attention_layernorm.weight")
            gate = F.silu(h @ self.w(p + "mlp.gate_proj.weight").t())
            x = x + (gate * (h @ self.w(p + "mlp.up_proj.weight").t())) @ self.w(p + "mlp.down_proj.weight").t()
        last = self.rms(x[T - 1:], "model.norm.weight")  # (1, C)
        head = self.w("model.embed_tokens.weight" if self.tied else "lm_head.weight")
        logits = last @ head.t()  # (1, vocab)
        if past_keys is None:
            return logits, None, None
        return logits, torch.stack(presents_k), torch.stack(presents_v)


class LlamaWithCache(torch.nn.Module):
    """The decode graph: input_ids (1, T), past_keys and past_values (layers, KV, P, d) -> logits
    (1, vocab) at the last position, present_keys and present_values (layers, KV, P + T, d)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, past_keys, past_values):
        return self.model.run(input_ids, past_keys, past_values)


def main():
    decode = "--decode" in sys.argv
    argv = [a for a in sys.argv[1:] if a != "--decode"]
    if len(argv) != 2:
        sys.exit(__doc__)
    ckpt, out = argv
    with open(os.path.join(ckpt, "config.json")) as f:
        cfg = json.load(f)
    check_config(cfg)
    tensors = read_checkpoint(ckpt)
    if cfg.get("tie_word_embeddings", False):
        tensors.pop("lm_head.weight", None)
    model = LlamaLastLogits(tensors, cfg).eval()
    ids = torch.zeros((1, 16), dtype=torch.int64)
    # The TorchScript exporter: from torch 2.9 the default is the dynamo one, which needs onnxscript.
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with torch.no_grad():
        if decode:
            d = model.d
            past = torch.zeros((model.L, model.KV, 3, d))
            torch.onnx.export(LlamaWithCache(model), (ids, past, past), out,
                              input_names=["input_ids", "past_keys", "past_values"],
                              output_names=["logits", "present_keys", "present_values"],
                              dynamic_axes={"input_ids": {1: "T"}, "past_keys": {2: "P"}, "past_values": {2: "P"},
                                            "present_keys": {2: "S"}, "present_values": {2: "S"}},
                              opset_version=14, do_constant_folding=True, **legacy)
        else:
            torch.onnx.export(model, (ids,), out, input_names=["input_ids"], output_names=["logits"],
                              dynamic_axes={"input_ids": {1: "T"}}, opset_version=14, do_constant_folding=True, **legacy)
    print(f"wrote {out} ({os.path.getsize(out) / 1e6:.0f} MB), torch {torch.__version__}")


if __name__ == "__main__":
    main()
