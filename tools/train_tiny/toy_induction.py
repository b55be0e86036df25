#!/usr/bin/python3
"""The first recipe under which train_tiny's block forms a textbook induction head (issue 12, toy r44).

Developer-time only. A 2-layer (or `n_layer`) copy of train_tiny.py's TinyGpt (128 dimensions, 4 heads, GPT-2's
learned positions), from scratch, on synthetic windows over a 1,000-token vocabulary (or `V`):
- half the windows are train_tiny.py's recall windows (pairs (a, b) of the window's own, each 3 times
  at random places: after a repeat of a comes b);
- half hold one run of 4-14 random tokens repeated once, among random tokens;
- the loss is taken on the predictable targets only (the b of every repeat of a pair, the run's repeat);
- layer 0's value and output maps start at random (std `ov0`) and stay frozen (Bietti et al. 2023,
  "Birth of a Transformer"): layer 0 then writes what it attends to into directions of its own, not
  into the token's own directions (which the skip windows of train_tiny.py train it to use), so a
  layer-1 key can tell "my previous token is a" from "my token is a". Its attention still learns.

Prints every `every` steps: step, training loss, then on 16 probes of P random tokens repeated once
(P = 12 and 8): l2 = the loss on the second copy (log 1,000 = 6.9 is no copying), ind = the best
head's induction score (src/analysis's: weight on the key just after the first occurrence), late =
the same one key later, prev = the best previous-token score; at the end, every head's mean weight
at offsets -2..+3 from the first occurrence on fresh probes.

    /usr/bin/python3 tools/train_tiny/toy_induction.py "ov0=0.09,recall=0.5"     # r44: heads form
    /usr/bin/python3 tools/train_tiny/toy_induction.py "ov0=0.09"                # r41: copying 3 keys late
"""
import importlib.util
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # train_tiny re-executes itself without it
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tt = load("train_tiny")
torch, F = tt.torch, tt.F


def run(name, V=1000, T=32, B=32, lo=4, hi=14, steps=4000, lr=3e-3, ov0=0.0, recall=0.0, pairs=3, each=3, n_layer=2,
        seed=0, every=500, periods=(12, 8)):
    torch.manual_seed(seed)
    cfg = {"n_layer": n_layer, "n_head": 4, "n_embd": 128, "n_positions": 256, "qk_init_std": 0.02,
           "sinusoidal_positions": 0, "position_scale": 0.1, "position_dims": 0}
    model = tt.TinyGpt(V + 1, 1, cfg)
    if ov0:
        tt.freeze_first_values(model, ov0, lambda: True)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    g = torch.Generator().manual_seed(seed)
    t0 = time.time()
    for step in range(1, steps + 1):
        w, mask = tt.induction_windows(g, B, T, V, recall, 0.0, lo, hi, pairs, each)
        x, y = w[:, :-1], w[:, 1:]
        # Logits at the predictable targets only: the same loss, without the output product elsewhere.
        loss = F.cross_entropy(model.logits(model.hidden(x)[mask]), y[mask])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % every:
            continue
        model.eval()
        out = []
        with torch.no_grad():
            for P in periods:
                probe = tt.random_repeats(16, P, V, 99)
                l2 = F.cross_entropy(model(probe).view(16, 2 * P, -1)[:, P:-1].flatten(0, 1), probe[:, P + 1:].flatten()).item()
                ind, late = tt.induction_scores(model.attention(), P, 1), tt.induction_scores(model.attention(), P, 2)
                prev = tt.previous_token_scores(model.attention()).max().item()
                out.append(f"P{P}:l2={l2:.2f},ind={ind.max().item():.2f}(L{int(ind.argmax()) // 4}H{int(ind.argmax()) % 4}),"
                           f"late={late.max().item():.2f},prev={prev:.2f}")
        model.train()
        print(name, step, f"loss={loss.item():.3f}", " ".join(out), f"{time.time() - t0:.0f}s", flush=True)
    model.eval()
    with torch.no_grad():
        for P in periods:
            model(tt.random_repeats(16, P, V, 5))
            for offset in (-2, -1, 0, 1, 2, 3):
                print(name, f"P{P} offset {offset} per head", tt.induction_scores(model.attention(), P, offset).numpy().round(2).tolist(), flush=True)
    return model


if __name__ == "__main__":
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    for spec in sys.argv[1:]:
        run(spec, **eval(f"dict({spec})"))
