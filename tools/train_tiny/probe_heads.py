#!/usr/bin/python3
"""Why is there no induction head? Reads an exported AttnLab tiny (issue 12). Developer-time only.

    /usr/bin/python3 tools/train_tiny/probe_heads.py assets/tiny tests/fixtures/tiny_heads.json

On the induction probe of tiny_heads.json (40 random corpus tokens, repeated once) it prints:
- the loss on the first copy and on the second: copying, by any circuit, makes the second far lower;
- for each head, its weight on the keys at offsets -2..+3 from the query token's first occurrence,
  averaged over the second copy (the induction score is offset +1; a head that copies what a
  previous-token head wrote one key later shows at +2), and its previous-token and two-back weights;
- the same losses and the best induction score on 8 probes made the same way from the distinct tokens of
  the held-out KJV window (mostly frequent words), to tell "cannot copy" from "cannot copy rare tokens";
- how alike the token embeddings are after LayerNorm (mean cosine between distinct tokens), for the
  probe's tokens (drawn uniformly from the corpus vocabulary, so mostly rare) and for the tokens of the
  held-out KJV window (mostly frequent): an induction head must tell the probe's tokens apart.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # train_tiny re-executes itself without it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_export import read_safetensors, reference_logits  # noqa: E402
from train_tiny import induction_scores, previous_token_scores  # noqa: E402

OFFSETS = range(-2, 4)  # from the query token's first occurrence; the induction score is +1


def copy_losses(t, cfg, ids, P):
    """Mean loss on predicting the first copy's tokens 1..P-1 and the second copy's, and each layer's
    (1, H, T, T) attention, for P tokens repeated once."""
    attention = []
    lp = reference_logits(t, cfg, ids, attention).log_softmax(-1)
    nll = -lp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]  # nll[i]: predicting token i + 1
    return nll[:P - 1].mean().item(), nll[P:].mean().item(), [a[None] for a in attention]


def mean_cosine(rows):
    n = F.normalize(F.layer_norm(rows, (rows.shape[1],)), dim=1)
    c = n @ n.T
    return c[~torch.eye(len(rows), dtype=torch.bool)].mean().item()


def main():
    model_dir, fixture = sys.argv[1], sys.argv[2]
    t = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    with open(fixture) as f:
        fx = json.load(f)
    ids, P = fx["induction"]["ids"], fx["induction_period"]
    wte = t["wte.weight"]
    used = torch.unique(wte, dim=0).shape[0] - 1  # every unused token shares one row
    first, second, attention = copy_losses(t, cfg, ids, P)
    print(f"loss on the first copy {first:.3f}, on the second {second:.3f} "
          f"(uniform over the {used} tokens the corpus uses: {math.log(used):.3f})")
    previous = previous_token_scores(attention)
    two_back = torch.stack([a.diagonal(offset=-2, dim1=-2, dim2=-1).mean(dim=(0, 2)) for a in attention])
    at = [induction_scores(attention, P, d) for d in OFFSETS]  # each (layers, H)
    for l in range(len(attention)):
        for h in range(attention[l].shape[1]):
            print(f"L{l} H{h}  previous {previous[l, h]:.3f}  two back {two_back[l, h]:.3f}  "
                  "second copy, by offset from the first occurrence:" +
                  "".join(f" {d:+d} {w[l, h]:.3f}" for d, w in zip(OFFSETS, at)))
    pool = sorted(set(fx["kjv"]["ids"]))
    g = torch.Generator().manual_seed(1)
    first = second = best = 0.0
    for _ in range(8):
        r = [pool[i] for i in torch.randperm(len(pool), generator=g)[:P].tolist()]
        one, two, attention = copy_losses(t, cfg, r + r, P)
        first, second = first + one / 8, second + two / 8
        best += induction_scores(attention, P).max().item() / 8
    print(f"8 probes of {P} held-out KJV tokens repeated once: loss on the first copy {first:.3f}, on the second "
          f"{second:.3f}, best induction score {best:.3f}")
    for name, tokens in (("probe", fx["induction"]["ids"][:P]), ("held-out KJV", fx["kjv"]["ids"])):
        rows = wte[torch.tensor(sorted(set(tokens)))]
        print(f"{name} tokens: {len(rows)} distinct, embedding norm {rows.norm(dim=1).mean():.3f}, "
              f"mean cosine after LayerNorm {mean_cosine(rows):.3f}")


if __name__ == "__main__":
    main()
