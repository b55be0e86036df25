#!/usr/bin/python3
"""How fast do previous-token and induction heads form in train_tiny's model? A toy study (issue 12).

Developer-time only. Trains train_tiny.py's TinyGpt (2 layers unless told) from scratch on synthetic
windows alone, one CPU thread, a few minutes a run, and prints every 100 steps:

    step:loss/ind16/ind32/ind12/prev   (with recall windows: step:loss/r<their loss>/ind16/...)

- loss: cross-entropy on the predictable part of the periodic windows (a run of n random tokens,
  8 <= n <= 32, repeated to fill the window): log(V) means nothing is copied, about 0 means copying;
- ind16/ind32/ind12: the best head's induction score (src/analysis's definition: weight on the key
  just after the query token's first occurrence) on 8 probes of P random tokens repeated once (three
  periods, since a head at a fixed offset can score on one of them);
- prev: the best head's previous-token score on the period-16 probes.
At the end, each head's three strongest keys for query 24 of the period-16 probes (its first
occurrence is at 8, so an induction head looks at 9).

    /usr/bin/python3 tools/train_tiny/toy_heads.py "steps=1000,skip=0.5" "steps=1000,pos='sep'"

Each argument is one run's keywords (see run()); results/toy_heads_log.txt has the runs of 2026-12-02.
"""
import importlib.util
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # train_tiny re-executes itself without it
_spec = importlib.util.spec_from_file_location("train_tiny", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                          "train_tiny.py"))
tt = importlib.util.module_from_spec(_spec)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_spec.loader.exec_module(tt)
torch, F = tt.torch, tt.F


def markov_windows(k, T, V, g, states=16, jump=0.25):
    """k windows of T tokens, each an in-context Markov chain: `states` tokens of the window's own, each
    with a successor of the window's own (a random permutation of them); each step follows it, or with
    probability `jump` goes to a random one of the states. Once a token has occurred, only a head that
    finds its earlier occurrence by the token itself (a textbook induction head) predicts its successor.
    Returns the windows and a mask of those predictable targets (as targets of x = w[:, :-1])."""
    w = torch.zeros(k, T, dtype=torch.long)
    target = torch.zeros(k, T - 1, dtype=torch.bool)
    for i in range(k):
        tokens = torch.randperm(V, generator=g)[:states]
        successor = torch.randperm(states, generator=g).tolist()
        jumps = (torch.rand(T, generator=g) < jump).tolist()
        random_state = torch.randint(0, states, (T,), generator=g).tolist()
        state, seen = int(torch.randint(0, states, (1,), generator=g)), set()
        for t in range(T):
            w[i, t] = tokens[state]
            if t < T - 1 and state in seen and not jumps[t + 1]:
                target[i, t] = True
            seen.add(state)
            if t < T - 1:
                state = random_state[t + 1] if jumps[t + 1] else successor[state]
    return w, target


def run(name, V=1000, n_layer=2, T=64, B=32, steps=1500, lr=3e-3, skip=0.0, skip_until=10**9, perm=0,
        pos="gpt2", pscale=0.1, emb=0.02, seed=0, recall=0.0, pairs=4, each=3, markov=0.0, states=16, jump=0.25,
        sub=0, untied=0):
    """V: vocabulary; skip: the fraction of each batch that is train_tiny's --skip-rate windows (each
    token repeats the one two back with probability 1/2), until step skip_until; perm: repeat a fixed
    permutation of it instead; pos: "gpt2" (N(0, 0.02)) or "sep" (--position-dims 32 at pscale);
    emb: the token table's starting standard deviation; recall: the fraction of each batch that is
    recall_windows(pairs, each); markov: the fraction that is markov_windows(states, jump); the rest of
    the batch is periodic windows, drawn from the first `sub` tokens only if sub is set (the probes still
    draw from all V); untied: a separate output matrix instead of the token table (not GPT-2's layout, so
    never shippable: it asks whether the tied table is what keeps the textbook head from forming).
    Returns the model."""
    assert not (recall and markov), "one kind of recall windows a run"
    torch.manual_seed(seed)
    cfg = {"n_layer": n_layer, "n_head": 4, "n_embd": 128, "n_positions": 256, "qk_init_std": 0.02,
           "sinusoidal_positions": 0, "position_scale": pscale, "position_dims": 32 if pos == "sep" else 0}
    model = tt.TinyGpt(V + 1, 1, cfg)
    if emb != 0.02:
        with torch.no_grad():
            model.wte.weight.normal_(0.0, emb)
    head = torch.nn.Parameter(torch.randn(V + 1, 128) * 0.02) if untied else None
    params = list(model.parameters()) + ([head] if untied else [])
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0)

    def forward(x):  # logits, (B * T, V + 1)
        if not untied:
            return model(x)
        h = model.wte(x) + model.wpe(torch.arange(x.shape[1]))
        for block in model.h:
            h = block(h)
        return model.ln_f(h).flatten(0, 1) @ head.T

    g = torch.Generator().manual_seed(seed)
    image = torch.randperm(V, generator=torch.Generator().manual_seed(7)) if perm else None
    rows, t0 = [], time.time()
    for step in range(1, steps + 1):
        n = int(torch.randint(8, 33, (1,), generator=g))
        w = torch.randint(0, sub or V, (B, n), generator=g).repeat(1, T // n + 1)[:, :T + 1]
        k = int(B * skip) if step <= skip_until else 0
        if k:
            s = torch.randint(0, V, (k, T + 1), generator=g)
            w = torch.cat([w[:B - k], tt.repeat_two_back(s, torch.rand(k, T + 1, generator=g) < 0.5, image)])
        r, m = int(B * recall), int(B * markov)
        if r:
            rw, rmask = tt.recall_windows(r, T + 1, V, g, pairs, each)
            w = torch.cat([rw, w[r:]])
        if m:  # the recall loss column reports these windows' predictable targets when recall is 0
            rw, rmask = markov_windows(m, T + 1, V, g, states, jump)
            w, r = torch.cat([rw, w[m:]]), m
        x, y = w[:, :-1], w[:, 1:]
        logits = forward(x).view(B, T, -1)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step % 100:
            continue
        model.eval()
        with torch.no_grad():
            repeat_loss = F.cross_entropy(logits[r:B - k, n:].flatten(0, 1), y[r:B - k, n:].flatten()).item() if B - k > r else 0.0
            recall_loss = F.cross_entropy(logits[:r][rmask], y[:r][rmask]).item() if r else 0.0
            ind = []
            for period in (16, 32, 12):
                forward(tt.random_repeats(8, period, V, 99))
                ind.append(tt.induction_scores(model.attention(), period).max().item())
                if period == 16:
                    att16 = model.attention()
            prev = tt.previous_token_scores(att16).max().item()
        model.train()
        rows.append(f"{step}:{repeat_loss:.2f}/" + (f"r{recall_loss:.2f}/" if r else "") + "/".join(f"{v:.2f}" for v in ind) + f"/{prev:.2f}")
        print(name, rows[-1], flush=True)
    for layer, a in enumerate(att16):
        for h in range(a.shape[1]):
            top = torch.topk(a[:, h, 24].mean(0), 3)
            print(f"{name} L{layer}H{h} query 24 strongest keys {top.indices.tolist()} "
                  f"{[round(v, 2) for v in top.values.tolist()]}", flush=True)
    print(name, f"{time.time() - t0:.0f} s:", " ".join(rows), flush=True)
    # Every head's induction score on probes of the periods that fit the window: a head at a fixed
    # offset scores on one period only, an induction head on all of them.
    model.eval()
    with torch.no_grad():
        for period, probe_seed in ((6, 3), (8, 4), (12, 5), (16, 99), (24, 7)):
            if 2 * period <= T:
                forward(tt.random_repeats(8, period, V, probe_seed))
                print(f"{name} ind{period} per head", tt.induction_scores(model.attention(), period).numpy().round(2).tolist(), flush=True)
    return model


if __name__ == "__main__":
    torch.set_num_threads(1)
    for spec in sys.argv[1:]:
        run(spec, **eval(f"dict({spec})"))
