#!/usr/bin/python3
"""AttnLab tiny beside its SSMax twin (issue 29), read off the exported F16 files. Developer-time only.

    /usr/bin/python3 tools/train_tiny/twins.py assets/tiny tools/train_tiny/results/summary.json \\
        assets/tiny-ssmax tools/train_tiny/results/ssmax/summary.json tests/fixtures/tiny_heads.json \\
        > tools/train_tiny/results/twins_summary.json

From each model's training summary (written by train_tiny.py's export, on the 24 held-out KJV windows, the
modern English text and 64 fresh probes): the held-out perplexity against the unigram and bigram
baselines, the best previous-token and induction heads, every head's scores. From config.json: the
attention plan (the twin's learned s per head). And, as a first look at the fading (Lemma 1) inside the
models, from float64 forward passes over the F16 files (hf_export.reference_logits) on the held-out KJV
window and the modern text of the heads fixture: for queries that see n keys, grouped by n, each layer's
mean over heads and queries of the largest weight and of the entropy (nats), beside uniform's 1/n and
log n. Prints JSON.
"""
import json
import math
import os
import sys

import torch

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_export import parse_attention_spec, read_safetensors, reference_logits  # noqa: E402

BINS = [(1, 8), (9, 16), (17, 32), (33, 64), (65, 128), (129, 256)]  # n, the keys a query sees


def fading(t, cfg, ids):
    attention = []
    reference_logits(t, cfg, ids, attention)
    rows = []
    for lo, hi in BINS:
        if lo > len(ids):
            break
        q = torch.arange(lo - 1, min(hi, len(ids)))  # query i sees n = i + 1 keys
        n = (q + 1).double()
        row = {"n": [lo, min(hi, len(ids))], "uniform_max": (1 / n).mean().item(), "uniform_entropy": n.log().mean().item(),
               "max_weight": [], "entropy": []}
        for a in attention:  # (H, T, T)
            w = a[:, q]
            ent = -(w * w.clamp_min(1e-300).log()).sum(-1)
            row["max_weight"].append(round(w.max(-1).values.mean().item(), 4))
            row["entropy"].append(round(ent.mean().item(), 4))
        rows.append(row)
    return rows


def model(folder, summary_path, fixture):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    with open(summary_path) as f:
        s = json.load(f)
    t = read_safetensors(os.path.join(folder, "model.safetensors"))
    plan = parse_attention_spec(cfg.get("attnlab_attention"), cfg["n_layer"], cfg["n_head"])
    a = s["attention_scores"]
    return {
        "name": cfg["attnlab_name"], "model_sha256": s["model_sha256"], "attnlab_attention": cfg.get("attnlab_attention"),
        "ssmax_s": [[S for _, S, _ in layer] for layer in plan] if cfg.get("attnlab_attention") else None,
        "steps_trained_last_stage": s["steps_trained"], "tokens_trained_last_stage": s["tokens_trained"],
        "heldout_val_loss_f16": s["shipped_f16_val_loss"], "heldout_perplexity_f16": s["shipped_f16_val_ppl"],
        "best_previous_token_head": a["best_previous_token_head"], "best_induction_head": a["best_induction_head"],
        "previous_token_kjv": a["previous_token_kjv"], "previous_token_modern": a["previous_token_modern"],
        "induction": a["induction"], "baselines": s["baselines"],
        "fading_kjv": fading(t, cfg, fixture["kjv"]["ids"]), "fading_modern": fading(t, cfg, fixture["modern"]["ids"]),
    }


def main():
    tiny, tiny_summary, twin, twin_summary, fixture_path = sys.argv[1:6]
    with open(fixture_path) as f:
        fixture = json.load(f)
    out = {"what": "AttnLab tiny and its SSMax twin (issue 29), tools/train_tiny/twins.py; the fading rows are "
                   "one 256-token held-out KJV window and the 223-token modern text, so a first look only",
           "fixture": fixture_path, "softmax": model(tiny, tiny_summary, fixture), "ssmax": model(twin, twin_summary, fixture)}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
