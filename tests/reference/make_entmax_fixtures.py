#!/usr/bin/python3
"""alpha-entmax weights at 50 digits, for tests/analysis/entmax_reference_test.cpp.

Written from the definition alone (Peters, Niculae & Martins 2019), nothing shared with
src/: with z = l / T,
    p_i = [(alpha - 1) z_i - tau]_+ ^ (1 / (alpha - 1)),   sum_i p_i = 1,
solved in mpmath at 50 significant digits by bisection, with tau taken relative to the last
key in the support (see entmax() for why), and checked against plain bisection on tau
where 50 digits suffice for that (alpha <= 10).

Inputs are rounded to float32 first (logits and T), so that the fp64 analysis path and the
fp32 in-model path read the very same numbers; the reference is exact for those numbers.
-inf logits (masks) are written as the string "-inf" and weigh 0.

Regenerate (from the repository root; Debian's python3-mpmath):

    /usr/bin/python3 tests/reference/make_entmax_fixtures.py

It writes tests/fixtures/entmax/cases.json: a list of {"name", "alpha", "T", "logits", "p"}.
"""
import json
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
    0.5 has x_i - tau = 2^-999, which no 50-digit tau near x_i could resolve. Key k is in the
    support iff the definition's mass at tau = x_k is below 1 (the mass falls as tau rises)."""
    am1 = mpmath.mpf(alpha) - 1
    x = [None if l == float("-inf") else am1 * mpmath.mpf(l) / mpmath.mpf(T) for l in logits]
    finite = sorted({v for v in x if v is not None}, reverse=True)
    xk = finite[0]
    for v in finite:  # the smallest x with mass(tau = x) < 1 is the last key in the support
        if mpmath.fsum(weights_at(x, v, am1)) < 1:
            xk = v
    d = [None if v is None or v < xk else v - xk for v in x]  # >= 0 on the support
    k = sum(1 for v in d if v is not None)
    def mass(log_t):
        t = mpmath.exp(log_t)
        return mpmath.fsum((v + t) ** (1 / am1) for v in d if v is not None)
    # t = p_k^(alpha-1) <= (1/k)^(alpha-1); it can be e^-1000 and less (alpha near 1: p_k tiny), so
    # the bisection runs on log t, from a lower end stepped down until the mass is below 1.
    hi = am1 * mpmath.log(1 / mpmath.mpf(k))
    step = mpmath.mpf(1)
    while mass(hi - step) >= 1:
        step *= 2
    lo = hi - step
    for _ in range(300):
        mid = (lo + hi) / 2
        if mass(mid) < 1:
            lo = mid
        else:
            hi = mid
    t = mpmath.exp((lo + hi) / 2)
    p = [mpmath.mpf(0) if v is None else (v + t) ** (1 / am1) for v in d]
    s = mpmath.fsum(p)
    assert abs(s - 1) < mpmath.mpf("1e-40"), (logits[:4], alpha, T, s)
    if alpha <= 10:  # a second route where plain tau has the digits: bisection on tau itself
        top = finite[0]
        a, b = top - 1, top
        for _ in range(400):
            m = (a + b) / 2
            if mpmath.fsum(weights_at(x, m, am1)) >= 1:
                a = m
            else:
                b = m
        q = weights_at(x, (a + b) / 2, am1)
        assert max(abs(u - v) for u, v in zip(p, q)) < mpmath.mpf("1e-20"), (alpha, T)
    return [float(v) for v in p]


def rows():
    rng = random.Random(36)
    yield "one-hot", [0.0]
    yield "pair", [1.0, 0.0]
    yield "ties-4", [2.0] * 4
    yield "ties-2-of-5", [3.0, 3.0, 1.0, 0.5, -2.0]
    yield "near-uniform-64", [1.0 + 1e-6 * rng.uniform(-1, 1) for _ in range(64)]
    yield "near-ties-huge-gap", [5.0, 5.0 - 1e-5, 5.0 - 2e-5, -3e4, -3e4]
    yield "huge-gap", [3e4, -3e4, 0.0, 1.0]
    yield "tiny-gaps", [1e-7 * i for i in range(8)]
    yield "large-offset", [1e4 + 0.01 * i for i in range(6)]
    yield "masked", [0.5, float("-inf"), 0.25, float("-inf"), -1.0]
    yield "one-left-by-mask", [float("-inf"), 7.0, float("-inf")]
    yield "long-1024-normal", [rng.gauss(0, 3) for _ in range(1024)]
    yield "long-1024-spike", [8.0] + [rng.gauss(0, 1) for _ in range(1023)]
    yield "geometric", [-(2.0 ** k) for k in range(-6, 10)]
    yield "two-clusters", [1.0] * 10 + [-1.0] * 10


def main():
    cases = []
    for name, row in rows():
        logits = [f32(v) for v in row]
        for T in TEMPERATURES:
            for alpha in ALPHAS:
                Tf = f32(T)
                p = entmax(logits, Tf, alpha)
                cases.append(dict(name=name, alpha=alpha, T=Tf,
                                  logits=["-inf" if v == float("-inf") else repr(v) for v in logits],
                                  p=[repr(v) for v in p]))
    with open(OUT, "w") as f:
        json.dump(cases, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
