#!/usr/bin/env python3
"""The figures of docs/science.md section 12 from an `attnlab experiment all --out DIR` folder.

    python3 tools/train_tiny/science_table.py DIR

Prints, for the model the folder was made with: the median over heads of N_s/N at each N (with the
interquartile range at N = 16), the critical N* at each L, the mean over heads of d_A, E[d_A] and the
bound (R) at each N for the longest L, and the gradient g(T, eps = 1e-3) as the maximum over heads of
the mean over queries. Standard library only.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict


def rows(folder, name):
    with open(os.path.join(folder, name), newline="") as f:
        return list(csv.DictReader(f))


def quartiles(values):
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def main():
    folder = sys.argv[1]
    by_n = defaultdict(list)
    for r in rows(folder, "separability.csv"):
        if r["ratio_mean"] != "nan":
            by_n[int(r["N"])].append(float(r["ratio_mean"]))
    print("separability N_s/N, median over heads:",
          ", ".join(f"{statistics.median(v):.2f} at N = {n}" for n, v in sorted(by_n.items()) if n in (2, 4, 8, 16, 32, 64)))
    if 16 in by_n:
        lo, hi = quartiles(by_n[16])
        print(f"  interquartile range at N = 16: {lo:.2f}-{hi:.2f} over {len(by_n[16])} heads")
    print("critical N*:", ", ".join(
        f"{r['N_star'] if r['found'] == '1' else 'none'} at L = {r['L']}" +
        (f" (N*/L {float(r['N_star_over_L']):.2f}, D = {float(r['D']):.4f}, p = {float(r['p_value']):.3f})" if r["found"] == "1" else "")
        for r in rows(folder, "critical_n.csv")))
    dist = rows(folder, "distance_vs_N.csv")
    longest = max(int(r["L"]) for r in dist)
    means = defaultdict(lambda: defaultdict(list))
    for r in dist:
        if int(r["L"]) == longest:
            for key in ("d_A_mean", "expected_A_mean", "bound_A_mean", "d_B_mean", "expected_B_mean"):
                means[int(r["N"])][key].append(float(r[key]))
    print(f"distance at L = {longest}, mean over heads:")
    for n, m in sorted(means.items()):
        f = {k: statistics.fmean(v) for k, v in m.items()}
        print(f"  N = {n}: d_A {f['d_A_mean']:.3g}, E[d_A] {f['expected_A_mean']:.3g}, bound (R) {f['bound_A_mean']:.3g}; "
              f"d_B {f['d_B_mean']:.3g}, E[d_B] {f['expected_B_mean']:.3g}")
    grad = [r for r in rows(folder, "gradient_summary.csv") if abs(float(r["eps"]) - 1e-3) < 1e-12]
    near = lambda r, t: abs(float(r["T"]) - t) <= 1e-9 * t  # the grid's 0.1 is 0.10000000000000001
    print("gradient g(T, 1e-3), max over heads of the mean over queries:",
          ", ".join(f"{float(r['g_max_over_heads']):.2g} at T = {t:g}" for t in (1.0, 0.1, 0.01, 0.001) for r in grad if near(r, t)))
    last = [r for r in grad if near(r, 0.001)]
    if last:
        print(f"  exact ||J||_2 at T = 0.001, max over heads of the mean over queries: {float(last[0]['jacobian_norm_max_over_heads']):.2g}")


if __name__ == "__main__":
    main()
