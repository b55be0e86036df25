#!/usr/bin/python3
"""alpha-entmax weights at 50 digits, for tests/analysis/entmax_reference_test.cpp.

Written from the definition alone (Peters, Niculae & Martins 2019), nothing shared with
src/: with z = l / T,
    p_i = [(alpha - 1) z_i - tau]_+ ^ (1 / (alpha - 1)),   sum_i p_i = 1,
solved in mpmath at 50 significant digits by Newton's method kept inside a bisection bracket,
with tau taken relative to the last key in the support (see entmax() for why), and checked
against plain bisection on tau where 50 digits suffice for that (alpha <= 10, rows up to 64
keys; the 1024-key rows would take minutes that way).

Inputs are rounded to float32 first (logits and T), so that the fp64 analysis path and the
fp32 in-model path read the very same numbers; the reference is exact for those numbers.
-inf logits (masks) are written as the string "-inf" and weigh 0.

Regenerate (from the repository root; Debian's python3-mpmath):

    /usr/bin/python3 tests/reference/make_entmax_fixtures.py

It writes tests/fixtures/entmax/cases.json: {"rows": [{"name", "logits"}], "cases": [{"row" (an
index into rows), "alpha", "T", "p"}]}; logits and T to 9 digits (float32 round-trips), p to 12.
"""
import random
import struct

import mpmath

mpmath.mp.dps = 50
HERE = __file__.rpartition("/")[0] or "."
OUT = HERE + "/../fixtures/entmax/cases.json"

ALPHAS = [1.0001, 1.01, 1.25, 1.5, 1.75, 2.0, 3.0, 7.0, 10.0, 12.0, 30.0, 100.0, 300.0, 1000.0]
TEMPERATURES = [1e-4, 1e-2, 1.0, 1e2, 1e4]


def f32(x):
    if x == float("-inf"):
        return x
    return struct.unpack("f", struct.pack("f", x))[0]


def weights_at(x, tau, am1):
    """The definition: p_i = [x_i - tau]_+^(1/(alpha-1)), x = (alpha-1) z."""
    return [mpmath.mpf(0) if v is None or v <= tau else (v - tau) ** (1 / am1) for v in x]


def entmax(logits, T, alpha):
    """tau is written as x_k - t, with x_k the last (smallest) x in the support, so that every
    x_i - tau = (x_i - x_k) + t is a sum of two non-negative numbers: at alpha = 1000 a weight of
    0.5 has x_i - tau = 2^-999, which no 50-digit tau near x_i could resolve. The keys are sorted
    once; key j (in that order) is in the support iff the definition's mass at tau = x_j is below
    1, which rises with j, so the support's size is found by binary search. The differences
    d_i = (alpha-1)(l_i - l_k)/T are formed from the logits, exactly, not from two large x."""
    am1 = mpmath.mpf(alpha) - 1
    scale = am1 / mpmath.mpf(T)
    order = sorted((i for i, l in enumerate(logits) if l != float("-inf")), key=lambda i: -logits[i])
    ls = [mpmath.mpf(logits[i]) for i in order]
    def mass_at_key(j):  # the mass at tau = x_j; keys tied with j add 0
        return mpmath.fsum((scale * (ls[i] - ls[j])) ** (1 / am1) for i in range(j) if ls[i] > ls[j])
    lo_j, hi_j = 0, len(ls) - 1  # key 0 is always in; find the last j with mass_at_key(j) < 1
    while lo_j < hi_j:
        mid = (lo_j + hi_j + 1) // 2
        if mass_at_key(mid) < 1:
            lo_j = mid
        else:
            hi_j = mid - 1
    k = lo_j + 1
    d = [scale * (ls[i] - ls[lo_j]) for i in range(k)]  # >= 0 on the support
    def mass(s):  # s = log t, t = p_k^(alpha-1); returns the mass and its derivative in s
        t = mpmath.exp(s)
        terms = [(v + t) ** (1 / am1) for v in d]
        return mpmath.fsum(terms), mpmath.fsum(p / (v + t) for p, v in zip(terms, d)) * t / am1
    # t <= (1/k)^(alpha-1); it can be e^-1000 and less (alpha near 1: p_k tiny), so the search runs
    # on log t, from a lower end stepped down until the mass is below 1.
    hi = am1 * mpmath.log(1 / mpmath.mpf(k))
    step = mpmath.mpf(1)
    while mass(hi - step)[0] >= 1:
        step *= 2
    lo = hi - step
    # Newton's method on log mass (linear in log t where the weights are near a softmax, alpha near
    # 1), convex and increasing like the mass; its step where it halves the bracket at least as fast
    # as bisection would (far above the root it is flat, and Newton crawls there), else bisection.
    def log_mass(s):
        m, dm = mass(s)
        return mpmath.log(m), dm / m
    s, dx_old, dx = hi, hi - lo, hi - lo
    f, df = log_mass(s)
    for _ in range(600):
        if abs(f) < mpmath.mpf("1e-46"):  # the weights are then right to about that much
            break
        if abs(2 * f) > abs(dx_old * df) or not lo < s - f / df < hi:
            dx_old, dx = dx, (hi - lo) / 2
            s = lo + dx
        else:
            dx_old, dx = dx, f / df
            s -= dx
        if abs(dx) < mpmath.mpf("1e-46") * max(1, abs(s)):
            break
        f, df = log_mass(s)
        if f < 0:
            lo = s
        else:
            hi = s
    else:
        raise RuntimeError(f"no convergence: alpha {alpha} T {T} n {len(logits)}")
    t = mpmath.exp(s)
    p = [mpmath.mpf(0)] * len(logits)
    for r, i in enumerate(order[:k]):
        p[i] = (d[r] + t) ** (1 / am1)
    total = mpmath.fsum(p)
    assert abs(total - 1) < mpmath.mpf("1e-40"), (logits[:4], alpha, T, total)
    if alpha <= 10 and len(logits) <= 64:  # a second route where plain tau has the digits
        q = entmax_plain_tau(logits, T, alpha)
        assert max(abs(u - v) for u, v in zip(p, q)) < mpmath.mpf("1e-20"), (alpha, T)
    return [float(v) for v in p]


def entmax_plain_tau(logits, T, alpha):
    """Bisection on tau itself, x = (alpha-1) l / T: 50 digits suffice for it at alpha <= 10."""
    am1 = mpmath.mpf(alpha) - 1
    x = [None if l == float("-inf") else am1 * mpmath.mpf(l) / mpmath.mpf(T) for l in logits]
    top = max(v for v in x if v is not None)
    a, b = top - 1, top
    for _ in range(180):  # 2^-180 < 1e-54
        m = (a + b) / 2
        if mpmath.fsum(weights_at(x, m, am1)) >= 1:
            a = m
        else:
            b = m
    return weights_at(x, (a + b) / 2, am1)


def rows():
    """(name, logits, temperatures, alphas): every short row on the whole grid; the 1024-key
    rows on the part of it where their support is neither one key nor (T = 1e4) all of them at
    once uniform, to keep the file small."""
    rng = random.Random(36)
    yield "one-hot", [0.0]
    yield "pair", [1.0, 0.0]
    yield "close-pair", [0.0, -1e-4]
    yield "ties-4", [2.0] * 4
    yield "ties-2-of-5", [3.0, 3.0, 1.0, 0.5, -2.0]
    yield "near-uniform-64", [1.0 + 1e-6 * rng.uniform(-1, 1) for _ in range(64)]
    yield "near-ties-huge-gap", [5.0, 5.0 - 1e-5, 5.0 - 2e-5, -3e4, -3e4]
    yield "huge-gap", [3e4, -3e4, 0.0, 1.0]
    yield "tiny-gaps", [1e-7 * i for i in range(8)]
    yield "large-offset", [1e4 + 0.01 * i for i in range(6)]
    yield "masked", [0.5, float("-inf"), 0.25, float("-inf"), -1.0]
    yield "one-left-by-mask", [float("-inf"), 7.0, float("-inf")]
    yield "geometric", [-(2.0 ** k) for k in range(-6, 10)]
    yield "two-clusters", [1.0] * 10 + [-1.0] * 10
    long_alphas = [1.0001, 1.25, 1.5, 2.0, 3.0, 12.0, 100.0, 1000.0]
    yield "long-1024-normal", [rng.gauss(0, 3) for _ in range(1024)], [1.0, 1e2], long_alphas
    yield "long-1024-spike", [8.0] + [rng.gauss(0, 1) for _ in range(1023)], [1.0, 1e2], long_alphas
    yield "long-1024-near-ties", [1.0 + 1e-3 * rng.gauss(0, 1) for _ in range(1024)], [1e-4, 1e-2], long_alphas


def number(v, digits):
    return '"-inf"' if v == float("-inf") else "0" if v == 0 else f"%.{digits}g" % v


def main():
    out_rows, out_cases = [], []
    for r, (name, row, *grid) in enumerate(rows()):
        temperatures, alphas = grid if grid else (TEMPERATURES, ALPHAS)
        logits = [f32(v) for v in row]
        out_rows.append('{"name":"%s","logits":[%s]}' % (name, ",".join(number(v, 9) for v in logits)))
        for T in temperatures:
            for alpha in alphas:
                Tf = f32(T)
                p = entmax(logits, Tf, alpha)
                out_cases.append('{"row":%d,"alpha":%r,"T":%s,"p":[%s]}'
                                 % (r, alpha, number(Tf, 9), ",".join(number(v, 12) for v in p)))
        print(name, len(out_cases), flush=True)
    with open(OUT, "w") as f:
        f.write('{"rows":[\n%s\n],\n"cases":[\n%s\n]}\n' % (",\n".join(out_rows), ",\n".join(out_cases)))
    print(f"{len(out_cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
