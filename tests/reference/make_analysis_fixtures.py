#!/usr/bin/python3
"""Per-query quantities of the paper, computed the plain way, for `attnlab analyze`.

An implementation independent of AttnLab's C++: float64 numpy written straight from the
definitions in /work/shared/PAPER.md (sections 2-5) and the `analyze` contract
(tests/cli/analyze_test.mjs reads the output). Loops and sums are spelled out as the
formulas read; nothing is shared with src/analysis.

Regenerate (from the repository root; Debian's python3 has numpy, a pyenv python may not):

    /usr/bin/python3 tests/reference/make_analysis_fixtures.py

It writes tests/fixtures/analysis/cases.json: a list of {"name", "input", "expected"}.
"input" is what `attnlab analyze --input FILE --json` reads; "expected" holds every key of
the output. Two parts are not deterministic and are described, not prescribed:
  - expected_A / expected_B: the EXACT expectation over all N-subsets when C(L, N) <= 50000
    ("exact": true, "se": 0), else our own Monte Carlo with 200000 subsets and its standard
    error ("exact": false). "std" is the standard deviation of the per-subset value, so the
    tool's standard error should be close to std / sqrt(samples).
  - sensitivity[k].g uses a random direction v that numpy cannot reproduce: only its bound is
    given ("g": null).
The script also checks itself: Jacobians against finite differences, sparsemax and
1.5-entmax against their optimality conditions, the paper's bounds (d_A <= bound_A, ...),
and that no case sits on a rounding knife edge (a near-tie in the weights that decide
`selected`, or in the distances that decide N_s) unless the tie is exact by construction.
Only numpy, json, itertools and math are imported.
"""
import itertools
import json
import math

import numpy as np

HERE = __file__.rpartition("/")[0] or "."
OUT = HERE + "/../fixtures/analysis/cases.json"

ENUMERATE_MAX = 50000      # exact expectation when C(L, N) is at most this
MC_SAMPLES = 200000        # else Monte Carlo with this many random subsets
DEFAULTS = dict(normalizer="softmax", seed=0, samples=1000, M=1.0, eps=[0.001, 0.1, 10.0])


# --- normalizers: logits l (L,), temperature T -> weights alpha (L,) on the simplex -------

def softmax(l, T):
    z = l / T
    e = np.exp(z - z.max())  # shift by the max: same ratios, no overflow
    return e / e.sum()


def sparsemax(l, T):
    # Euclidean projection of z = l/T onto the simplex: p = [z - tau]_+, sum p = 1.
    # Sorted z descending, the support is the largest k with 1 + k z_(k) > sum_{j<=k} z_(j).
    z = l / T
    zs = np.sort(z)[::-1]
    cumulative = np.cumsum(zs)
    k = np.arange(1, len(z) + 1)
    k_support = k[1 + k * zs > cumulative][-1]
    tau = (cumulative[k_support - 1] - 1) / k_support
    return np.maximum(z - tau, 0.0)


def entmax15(l, T):
    # p_i = [0.5 z_i - tau]_+^2, sum p = 1, tau by bisection. sum p is decreasing in tau;
    # at tau = max(u) - 1 the top entry alone gives 1, at max(u) - sqrt(1/L) every entry gives <= 1/L.
    u = 0.5 * (l / T)
    lo, hi = u.max() - 1.0, u.max() - math.sqrt(1.0 / len(u))
    mass = lambda tau: np.sum(np.maximum(u - tau, 0.0) ** 2)
    while hi - lo > 1e-15:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:  # the interval is one ulp wide
            break
        if mass(mid) >= 1.0:
            lo = mid
        else:
            hi = mid
    tau = 0.5 * (lo + hi)
    p = np.maximum(u - tau, 0.0) ** 2
    return p / p.sum()


NORMALIZERS = {"softmax": softmax, "sparsemax": sparsemax, "entmax-1.5": entmax15}


def jacobian(alpha, T, normalizer):
    """d alpha / d l (L, L)."""
    if normalizer == "softmax":
        return (np.diag(alpha) - np.outer(alpha, alpha)) / T
    if normalizer == "sparsemax":
        s = (alpha > 0).astype(float)
        return (np.diag(s) - np.outer(s, s) / s.sum()) / T
    g = np.sqrt(alpha)  # 1.5-entmax: differentiate sum_i (0.5 z_i - tau)^2 = 1 on the support
    return (np.diag(g) - np.outer(g, g) / g.sum()) / T


# --- self-checks of the normalizers ----------------------------------------------------

def check_normalizer(l, T, normalizer, alpha):
    assert abs(alpha.sum() - 1) < 1e-13 and (alpha >= 0).all(), normalizer
    z = l / T
    if normalizer == "sparsemax":
        # KKT: z_i - p_i equals one tau on the support and is >= tau off it.
        on = alpha > 0
        tau = (z - alpha)[on]
        assert np.ptp(tau) < 1e-12 * max(1, abs(z).max()), "sparsemax tau"
        assert (z[~on] <= tau[0] + 1e-12 * max(1, abs(z).max())).all(), "sparsemax support"
    if normalizer == "entmax-1.5":
        # Closed form on the support S (k entries of u = z/2): sum (u_i - tau)^2 = 1, tau < min u_S.
        u = 0.5 * z
        on = alpha > 0
        k, su, suu = on.sum(), u[on].sum(), (u[on] ** 2).sum()
        tau = (su - math.sqrt(su * su - k * (suu - 1))) / k
        p = np.maximum(u - tau, 0.0) ** 2
        assert np.abs(p - alpha).max() < 1e-12, ("entmax bisection vs closed form", np.abs(p - alpha).max())
        assert (u[~on] <= tau + 1e-12 * max(1, abs(u).max())).all()
    # Jacobian against central differences; h relative to the logit scale T.
    J = jacobian(alpha, T, normalizer)
    h = 1e-6 * T
    f = NORMALIZERS[normalizer]
    J_fd = np.zeros_like(J)
    for j in range(len(l)):
        e = np.zeros(len(l))
        e[j] = h
        J_fd[:, j] = (f(l + e, T) - f(l - e, T)) / (2 * h)
    err = np.abs(J - J_fd).max() * T
    assert err < 1e-6, (normalizer, "Jacobian vs finite differences", err)


# --- random-subset expectations --------------------------------------------------------

def subset_values(Y, subsets):
    """For each N-subset S (rows of `subsets`, (B, N)): sum_{i not in S} ||y_i - s_S|| and
    || sum_{i not in S} y_i - s_S ||, with s_S = sum_{j in S} y_j. Returns two (B,) arrays."""
    B, L = len(subsets), len(Y)
    inside = np.zeros((B, L), bool)
    np.put_along_axis(inside, subsets, True, axis=1)
    s = Y[subsets].sum(axis=1)                                     # (B, d)
    dist = np.linalg.norm(Y[None, :, :] - s[:, None, :], axis=2)   # (B, L)
    value_A = np.where(inside, 0.0, dist).sum(axis=1)
    outer_sum = Y.sum(axis=0)[None, :] - s                         # sum over i not in S of y_i
    value_B = np.linalg.norm(outer_sum - s, axis=1)
    return value_A, value_B


def random_subset_expectations(Y, N, seed):
    L = len(Y)
    count = math.comb(L, N)
    if count <= ENUMERATE_MAX:
        all_subsets = np.array(list(itertools.combinations(range(L), N)), dtype=np.int64)
        parts = [subset_values(Y, all_subsets[i:i + 4000]) for i in range(0, count, 4000)]
        values = [np.concatenate([p[k] for p in parts]) for k in (0, 1)]
        out = []
        for v in values:
            mean = math.fsum(v) / count
            std = math.sqrt(math.fsum((v - mean) ** 2) / count)
            out.append(dict(mean=mean, se=0.0, std=std, exact=True, subsets=count))
        return out
    rng = np.random.default_rng(seed)
    values = ([], [])
    for _ in range(MC_SAMPLES // 4000):
        subsets = np.argsort(rng.random((4000, L)), axis=1)[:, :N]  # uniform N-subsets
        a, b = subset_values(Y, subsets)
        values[0].append(a)
        values[1].append(b)
    out = []
    for v in values:
        v = np.concatenate(v)
        std = float(v.std(ddof=1))
        out.append(dict(mean=float(v.mean()), se=std / math.sqrt(len(v)), std=std, exact=False, subsets=len(v)))
    return out


# --- the analysis of one query ---------------------------------------------------------

def analyze(inp, mc_seed):
    p = dict(DEFAULTS, **inp)
    l = np.array(p["logits"], dtype=float)               # (L,)
    X = np.array(p["vectors"], dtype=float)              # (L, d)
    L, d = X.shape
    N, T, M, normalizer = p["N"], float(p["T"]), float(p["M"]), p["normalizer"]
    norm = np.linalg.norm

    alpha = NORMALIZERS[normalizer](l, T)
    check_normalizer(l, T, normalizer, alpha)

    # Top-N by weight; equal weights: lower index first.
    selected = sorted(range(L), key=lambda i: (-alpha[i], i))[:N]
    outer = [i for i in range(L) if i not in selected]

    # Distances (raw vectors, weighted): y_i = alpha_i x_i.
    Y = alpha[:, None] * X
    abar = sum(alpha[j] for j in selected)
    s = sum(Y[j] for j in selected)
    d_A = sum(norm(Y[i] - s) for i in outer)
    d_B = norm(sum(Y[i] for i in outer) - s)
    d_1 = max(norm(X[i] - X[j]) for i in outer for j in selected)
    X_max = max(norm(X[j]) for j in selected)
    bound_A = (1 - abar) * d_1 + X_max * (abar * (L - N) - (1 - abar))
    bound_B = (1 - abar) * d_1 + X_max * abs(1 - 2 * abar)
    assert d_A <= bound_A * (1 + 1e-12) + 1e-15 and d_B <= bound_B * (1 + 1e-12) + 1e-15, "Theorem 1 (R) violated"

    expected_A, expected_B = random_subset_expectations(Y, N, mc_seed)
    approx_A = ((L - N) / L) * sum(norm(Y[i] - (N / (L - 1)) * sum(Y[j] for j in range(L) if j != i)) for i in range(L))
    sum_weighted_norms = sum(norm(Y[i]) for i in range(L))

    # Separability (Theorem 2): vectors on the sphere of radius M.
    Xh = np.array([M * X[i] / norm(X[i]) for i in range(L)])
    U = alpha[:, None] * Xh
    s_sep = sum(U[j] for j in selected)
    dist = np.array([norm(U[i] - s_sep) for i in range(L)])
    r = min(dist[j] for j in outer)
    N_s = sum(1 for i in selected if dist[i] < r)
    delta = None if N == 1 else min(norm(Xh[i] - Xh[j]) for i, j in itertools.combinations(selected, 2))
    delta_used = 0.0 if delta is None else delta
    xi = []
    for i in selected:
        others = [j for j in selected if j != i]
        a1 = sum(alpha[j] for j in others)
        a2 = sum(alpha[j] ** 2 for j in others)
        xi.append(math.sqrt(max(0.0, M * M * a2 + (M * M - delta_used ** 2 / 2) * (a1 * a1 - a2))))
    lower = 1 - sum(xi) / (r * N)
    upper = sum(math.exp(-max(0.0, x - r) ** 2 / (2 * M * M)) for x in xi) / N

    # Gradients.
    jacobian_norm = np.linalg.norm(jacobian(alpha, T, normalizer), 2)
    if normalizer == "softmax":
        assert jacobian_norm <= 1 / (2 * T) * (1 + 1e-12), "softmax Jacobian above 1/(2T)"
        a = max(abs(l))
        lemma1 = dict(a=a, lower=math.exp(-2 * a / T) / L, upper=math.exp(2 * a / T) / L)
        assert all(lemma1["lower"] * (1 - 1e-12) <= w <= lemma1["upper"] * (1 + 1e-12) for w in alpha), "Lemma 1"
    else:
        lemma1 = None
    # g(T, eps) is the paper's softmax metric (PAPER.md §5): reported for softmax only.
    sensitivity = ([dict(eps=float(e), g=None, bound=min(1 / (2 * T), math.sqrt(2) / e)) for e in p["eps"]]
                   if normalizer == "softmax" else None)

    # Knife edges: a comparison whose outcome could flip under a different summation order.
    # Exact ties (equal logits, repeated vectors, zero weights) are fine: both sides round alike.
    w_sorted = np.sort(alpha)[::-1]
    if N < L:
        gap = w_sorted[N - 1] - w_sorted[N]
        assert gap == 0 or gap > 1e-12 * w_sorted[N - 1], ("near-tie at the selection boundary", gap)
    for i in selected:
        gap = abs(dist[i] - r)
        assert gap == 0 or gap > 1e-12 * r, ("near-tie between a selected distance and r", gap)

    expected = dict(
        L=L, d=d, N=N, T=T, normalizer=normalizer, seed=p["seed"], samples=p["samples"], M=M,
        weights=[float(w) for w in alpha],
        selected=[int(i) for i in selected],
        abar=float(abar), d_A=float(d_A), d_B=float(d_B), d_1=float(d_1), X=float(X_max),
        bound_A=float(bound_A), bound_B=float(bound_B),
        expected_A=expected_A, expected_B=expected_B,
        approx_A=float(approx_A), sum_weighted_norms=float(sum_weighted_norms),
        r=float(r), N_s=int(N_s), ratio=N_s / N,
        delta=None if delta is None else float(delta),
        xi=[float(x) for x in xi], lower=float(lower), upper=float(upper),
        jacobian_norm=float(jacobian_norm),
        bound_paper=min(1 / (4 * T), math.sqrt(2)), bound_tight=1 / (2 * T),
        lemma1=None if lemma1 is None else {k: float(v) for k, v in lemma1.items()},
        sensitivity=sensitivity,
    )
    return expected, dict(dist=dist, selected=selected, alpha=alpha)


# --- the cases -------------------------------------------------------------------------

def short(a, digits=6):
    """Round to `digits` significant digits, so the JSON stays small; the rounded numbers ARE the input."""
    a = np.asarray(a, dtype=float)
    return np.array([float(f"{x:.{digits}g}") for x in a.ravel()]).reshape(a.shape)


def random_case(rng, L, d, logit_scale=1.0, norm_spread=0.0):
    logits = short(rng.normal(0, logit_scale, L))
    vectors = rng.normal(0, 1, (L, d))
    if norm_spread:
        vectors *= 10.0 ** rng.uniform(-norm_spread, norm_spread, (L, 1))
    return logits, short(vectors)


def make_cases():
    cases = []

    def add(name, logits, vectors, N, T, **options):
        inp = dict(logits=[float(x) for x in logits], vectors=[[float(x) for x in row] for row in vectors], N=N, T=T)
        inp.update(options)
        cases.append((name, inp))

    rng = np.random.default_rng(20250817)
    # Plain softmax cases over the ranges of L, d, N, T. Logit scales keep every softmax
    # weight a normal double (no underflow to 0, whose ties would depend on how exp is taken)
    # and e^{2a/T} of Lemma 1 finite.
    for name, L, d, N, T, scale, options in [
        ("L2-N1-d1", 2, 1, 1, 1.0, 1.0, {}),
        ("L3-N2-d2", 3, 2, 2, 0.5, 1.0, {}),
        ("L5-N1-d3-T2", 5, 3, 1, 2.0, 1.0, {}),
        ("L4-N3-d1", 4, 1, 3, 1.0, 2.0, {}),
        ("L16-N8-d10", 16, 10, 8, 0.7, 1.0, {}),
        ("L20-N10-d2-montecarlo", 20, 2, 10, 1.0, 1.0, dict(seed=7)),
        ("L30-N29-d3-T5", 30, 3, 29, 5.0, 2.0, {}),
        ("L50-N2-d32-T0.05", 50, 32, 2, 0.05, 0.2, {}),
        ("L8-N3-d4-T0.01", 8, 4, 3, 0.01, 0.02, {}),
        ("L60-N16-d64-T0.01", 60, 64, 16, 0.01, 0.03, dict(samples=3000)),
        ("L40-N6-d12-T100", 40, 12, 6, 100.0, 3.0, {}),
        ("L100-N50-d16-T0.1", 100, 16, 50, 0.1, 1.0, dict(seed=3)),
        ("L150-N3-d6-T3", 150, 6, 3, 3.0, 2.0, {}),
        ("L200-N5-d8", 200, 8, 5, 1.0, 1.5, dict(seed=11)),
        ("L200-N199-d4-T1.5", 200, 4, 199, 1.5, 1.0, {}),
        ("L25-N7-d5-M3-own-eps", 25, 5, 7, 0.8, 1.0,
         dict(M=3.0, eps=[1e-06, 0.5, 1000.0], seed=12345, samples=4000, normalizer="softmax")),
        ("L9-N3-d3-big-seed", 9, 3, 3, 1.0, 1.0, dict(seed=4294967297, samples=2000)),
    ]:
        logits, vectors = random_case(rng, L, d, scale)
        add(name, logits, vectors, N, T, **options)

    # Large logits: the max shift matters (e^{80/0.5} alone would be 3e69, fine, but e^{400} is not far).
    logits, vectors = random_case(rng, 12, 4)
    add("L12-N4-large-logits", short(60 + 20 * rng.random(12)), vectors, 4, 0.5)

    # Vectors whose norms span 12 orders of magnitude.
    logits, vectors = random_case(rng, 20, 6, 1.0, norm_spread=6)
    add("L20-N5-norms-1e-6-to-1e6", logits, vectors, 5, 1.0)

    # Ties in the logits: the 3s at indices 1,3,4 come first, then the first of the two 2s.
    _, vectors = random_case(rng, 7, 4)
    add("ties-cross-the-boundary", [1, 3, 2, 3, 3, 0, 2], vectors, 4, 1.0)
    _, vectors = random_case(rng, 12, 3)
    add("ties-integer-logits", rng.integers(0, 3, 12).astype(float), vectors, 5, 0.3)

    # All logits equal: uniform weights, selection = the first N indices.
    _, vectors = random_case(rng, 10, 8)
    add("all-logits-equal", [0.7] * 10, vectors, 3, 1.0)

    # One vector repeated inside the selection: delta = 0.
    logits, vectors = random_case(rng, 12, 5)
    top = sorted(range(12), key=lambda i: -logits[i])
    vectors[top[2]] = vectors[top[0]]
    add("repeated-vector-delta-0", logits, vectors, 4, 1.0)

    # The last selected token and the first outer one share logit and vector: their distances
    # to s are equal, that distance is r, and the strict rule does not count the selected one.
    L, d = 10, 3
    logits = np.concatenate([[2.0, 1.5, 1.0, 1.0], short(-1 - rng.random(L - 4))])
    vectors = np.zeros((L, d))
    vectors[:4, 0] = 1.0
    vectors[:4, 1:] = short(0.2 * rng.normal(0, 1, (4, d - 1)))
    vectors[3] = vectors[2]
    vectors[4:, 0] = -1.0
    vectors[4:, 1:] = short(0.2 * rng.normal(0, 1, (L - 4, d - 1)))
    add("repeated-vector-tie-at-r", logits, vectors, 3, 1.0)

    # sparsemax: exact zeros, and more selected than the support (zero weights tie, by index).
    for name, L, d, N, T, scale, options in [
        ("sparsemax-L10-N3", 10, 4, 3, 0.5, 1.0, {}),
        ("sparsemax-L15-N8-zeros-selected", 15, 3, 8, 0.2, 1.0, {}),
        ("sparsemax-L120-N10-montecarlo", 120, 8, 10, 1.0, 0.5, dict(seed=5)),
    ]:
        logits, vectors = random_case(rng, L, d, scale)
        add(name, logits, vectors, N, T, normalizer="sparsemax", **options)
    _, vectors = random_case(rng, 6, 2)
    add("sparsemax-all-logits-equal", [-0.25] * 6, vectors, 2, 2.0, normalizer="sparsemax")

    for name, L, d, N, T, scale, options in [
        ("entmax-L10-N4", 10, 5, 4, 1.0, 1.0, {}),
        ("entmax-L80-N20-T0.05-montecarlo", 80, 8, 20, 0.05, 0.05, {}),
        ("entmax-L14-N9-zeros-selected", 14, 3, 9, 0.3, 1.0, dict(M=0.5)),
    ]:
        logits, vectors = random_case(rng, L, d, scale)
        add(name, logits, vectors, N, T, normalizer="entmax-1.5", **options)
    return cases


def main():
    out = []
    for k, (name, inp) in enumerate(make_cases()):
        expected, extra = analyze(inp, mc_seed=1000 + k)
        alpha, sel, dist = extra["alpha"], extra["selected"], extra["dist"]
        if name == "repeated-vector-tie-at-r":
            assert sel == [0, 1, 2] and dist[2] == dist[3] == expected["r"] and expected["N_s"] < 3, "tie case not built"
        if name.startswith("ties-cross"):
            assert sel == [1, 3, 4, 2]
        if "zeros-selected" in name:
            assert alpha[sel[-1]] == 0 and alpha[sel[-2]] == 0, name + ": fewer zeros selected than meant"
        if name == "repeated-vector-delta-0":
            assert expected["delta"] == 0.0
        out.append(dict(name=name, input=inp, expected=expected))
        ea = expected["expected_A"]
        print(f"{name:36s} L={expected['L']:3d} N={expected['N']:3d} sel={expected['selected'][:4]} "
              f"d_A={expected['d_A']:.4g} E[d_A]={ea['mean']:.4g}{'(exact)' if ea['exact'] else '(mc)'} "
              f"N_s={expected['N_s']} |J|={expected['jacobian_norm']:.4g}")
    text = json.dumps(out, separators=(",", ":"))
    with open(OUT, "w") as f:
        f.write(text + "\n")
    print(f"wrote {len(out)} cases, {len(text)} bytes to {OUT}")


if __name__ == "__main__":
    main()
