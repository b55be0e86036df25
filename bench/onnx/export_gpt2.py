"""Export a GPT-2 checkpoint (Hugging Face layout, F32 safetensors, as `attnlab random-checkpoint`
writes) to ONNX, for ONNX Runtime to run beside AttnLab in bench/onnx/compare.mjs.

Developer-time only (Debian's python3-torch and python3-onnx), never in CI:

    /usr/bin/python3 bench/onnx/export_gpt2.py CHECKPOINT_DIR OUT.onnx

The graph is a plain PyTorch GPT-2 (pre-LayerNorm, tanh GELU, tied lm_head) written here from the
paper-free definition, not AttnLab's code: input_ids (1, T) int64 -> logits (1, vocab) at the last
position, the same output AttnLab's prefill computes. T is a dynamic axis. Opset 14.
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


class Gpt2LastLogits(torch.nn.Module):
    def __init__(self, t, cfg):
        super().__init__()
        self.C, self.H, self.L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
        self.eps = cfg.get("layer_norm_epsilon", 1e-5)
        for name, value in t.items():
            self.register_buffer(name.replace(".", "_"), value)
        n = cfg["n_positions"]
        self.register_buffer("causal", torch.full((n, n), float("-inf")).triu(1))

    def w(self, name):
        return getattr(self, name.replace(".", "_"))

    def ln(self, x, p):
        return F.layer_norm(x, (self.C,), self.w(p + ".weight"), self.w(p + ".bias"), self.eps)

    def forward(self, input_ids):  # (1, T)
        T = input_ids.shape[1]
        C, H = self.C, self.H
        d = C // H
        x = self.w("wte.weight")[input_ids[0]] + self.w("wpe.weight")[:T]  # (T, C)
        mask = self.causal[:T, :T]
        for l in range(self.L):
            p = f"h.{l}."
            qkv = self.ln(x, p + "ln_1") @ self.w(p + "attn.c_attn.weight") + self.w(p + "attn.c_attn.bias")  # (T, 3C)
            q, k, v = (a.reshape(T, H, d).transpose(0, 1) for a in qkv.split(C, dim=1))  # (H, T, d)
            att = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d) + mask, dim=-1)  # (H, T, T)
            y = (att @ v).transpose(0, 1).reshape(T, C)
            x = x + y @ self.w(p + "attn.c_proj.weight") + self.w(p + "attn.c_proj.bias")
            h = F.gelu(self.ln(x, p + "ln_2") @ self.w(p + "mlp.c_fc.weight") + self.w(p + "mlp.c_fc.bias"), approximate="tanh")
            x = x + h @ self.w(p + "mlp.c_proj.weight") + self.w(p + "mlp.c_proj.bias")
        last = self.ln(x[T - 1:], "ln_f")  # (1, C)
        return last @ self.w("wte.weight").t()  # (1, vocab)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ckpt, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(ckpt, "config.json")) as f:
        cfg = json.load(f)
    model = Gpt2LastLogits(read_safetensors(os.path.join(ckpt, "model.safetensors"), torch.float32), cfg).eval()
    ids = torch.zeros((1, 16), dtype=torch.int64)
    # The TorchScript exporter: from torch 2.9 the default is the dynamo one, which needs onnxscript.
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with torch.no_grad():
        torch.onnx.export(model, (ids,), out, input_names=["input_ids"], output_names=["logits"],
                          dynamic_axes={"input_ids": {1: "T"}}, opset_version=14, do_constant_folding=True, **legacy)
    print(f"wrote {out} ({os.path.getsize(out) / 1e6:.0f} MB), torch {torch.__version__}")


if __name__ == "__main__":
    main()
