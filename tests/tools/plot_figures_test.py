#!/usr/bin/python3
"""Test of tools/plot_figures.py on synthetic experiment folders it writes itself.

    /usr/bin/python3 tests/tools/plot_figures_test.py tools/plot_figures.py

Needs Debian's python3-matplotlib and python3-numpy (hence /usr/bin/python3). The synthetic CSVs
have the columns of `attnlab experiment` and a known shape (distances linear in L, N* = 0.06 L
with one L where no N* is found, ratios saturating near 0.78, g following min{1/(2T), sqrt 2/eps}),
so every figure has lines, bands and boxes to draw. Checks: every figure is written and is a real
picture (size, distinct colours), missing CSVs are skipped, and a malformed CSV, a missing column or
a missing folder exits non-zero naming the file and the column.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import matplotlib.image

FIGURES = ["fig2a_distance_vs_L", "fig2b_distance_vs_N", "fig2c_critical_n", "fig3_separability", "fig4_gradient",
           "fig_normalizer_swap"]
failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        failures.append(message)


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join("nan" if isinstance(v, float) and math.isnan(v) else v if isinstance(v, str) else repr(v)
                             for v in row) + "\n")


DISTANCE_HEADER = ["layer", "head", "L", "N", "queries", "skipped"] + [
    f"{f}_{s}" for f in ("d_A", "d_B", "bound_A", "bound_B", "expected_A", "expected_B", "approx_A", "abar")
    for s in ("mean", "sd")] + ["expected_A_mc_se"]


def distance_rows(rng, Ls, Ns):
    rows = []
    for layer in range(3):
        for head in range(4):
            c = 0.5 + 0.1 * layer + 0.05 * head  # per-head slope: a spread over heads to band
            for L in Ls:
                for N in Ns:
                    d_A = c * (L - N) / 100.0
                    d_B = c * 0.3 * math.log(L / N + 1.0)
                    e_A = d_A * (1.1 + 0.2 * rng.random())
                    e_B = d_B * 1.05
                    rows.append([layer, head, L, N, L - N, N,
                                 d_A, 0.1 * d_A, d_B, 0.1 * d_B, 1.5 * e_A, 0.1, 1.4 * e_B, 0.1,
                                 e_A, 0.1 * e_A, e_B, 0.1 * e_B, 0.6 * e_A, 0.05, 0.3 + 0.1 * rng.random(), 0.05,
                                 0.001])
    return rows


def write_folder(folder):
    rng = np.random.default_rng(7)
    write_csv(os.path.join(folder, "distance_vs_L.csv"), DISTANCE_HEADER, distance_rows(rng, range(32, 513, 32), [5]))
    write_csv(os.path.join(folder, "distance_vs_N.csv"), DISTANCE_HEADER, distance_rows(rng, [1024], [1, 5, 10, 20, 100]))
    with open(os.path.join(folder, "distance-vs-L.json"), "w") as f:
        json.dump({"experiment": "distance-vs-L", "parameters": {"N": 5, "vectors": "values"},
                   "model": {"path": "/x/model.safetensors", "sha256": "ab" * 32, "n_layer": 3, "n_head": 4},
                   "text": {"path": "/x/text.txt", "tokens_used": 512}, "queries": {"used": 100, "skipped": 60}}, f)

    # Critical N: N* = 0.06 L, except at the largest L where every scanned N is rejected.
    Ls, scan_Ns = [64, 128, 256, 512, 1024], [1, 2, 4, 8, 16, 32, 64]
    summary, scan = [], []
    for L in Ls:
        star = None
        for N in scan_Ns:
            p = 10.0 ** (-6.0 + 6.0 * N / (0.06 * L)) if L < 1024 else 1e-8 * N
            p = min(p, 1.0)
            rejected = p < 0.01
            scan.append([L, N, 0.5 / N, p, 1.0, 1.0 if rejected else 0.0])
            if not rejected and star is None:
                star = (N, 0.5 / N, p)
        if star:
            summary.append([L, star[0], 1.0, star[0] / L, star[1], star[2], 1.0])
        else:
            summary.append([L, float("nan"), 0.0, float("nan"), float("nan"), float("nan"), 0.0])
    write_csv(os.path.join(folder, "critical_n.csv"), ["L", "N_star", "found", "N_star_over_L", "D", "p_value", "exact"], summary)
    write_csv(os.path.join(folder, "critical_n_scan.csv"), ["L", "N", "D", "p_value", "exact", "rejected"], scan)

    # Separability: N = 1..64 (the script keeps a subset), ratios falling to about 0.78 with a spread.
    header = ["layer", "head", "L", "N", "queries", "skipped"] + [
        f"{f}_{s}" for f in ("ratio", "N_s", "r", "delta", "lower", "upper") for s in ("mean", "sd")]
    rows = []
    for layer in range(3):
        for head in range(4):
            for N in range(1, 65):
                ratio = min(1.0, 0.78 + 0.22 * math.exp(-N / 6.0) + 0.08 * rng.standard_normal())
                rows.append([layer, head, 512, N, 512 - N, N, ratio, 0.1, ratio * N, 1.0, 0.4, 0.01,
                             1.2 if N > 1 else float("nan"), 0.05, ratio - 0.5, 0.1, min(1.0, ratio + 0.1), 0.05])
    write_csv(os.path.join(folder, "separability.csv"), header, rows)

    # Gradient: g follows the tight bound, times a factor below one.
    header = ["T", "T_paper", "eps", "g_max_over_heads", "g_mean_over_heads", "jacobian_norm_max_over_heads",
              "jacobian_norm_max_over_queries", "bound_paper", "bound_tight", "bound_g"]
    rows = []
    for T in np.logspace(-3, 1, 13):
        for eps in (1e-3, 1e-1, 10.0):
            bound_g = min(1 / (2 * T), math.sqrt(2) / eps)
            rows.append([T, 8 * T, eps, 0.7 * bound_g, 0.3 * bound_g, 0.35 / T, 0.49 / T,
                         min(1 / (4 * T), math.sqrt(2)), 1 / (2 * T), bound_g])
    write_csv(os.path.join(folder, "gradient_summary.csv"), header, rows)


SWAP_SETTINGS = ["sparsemax", "entmax-1.5", "ssmax:0.3", "ssmax:0.43", "ssmax:1", "sa-softmax", "softmax@0.5", "softmax@2"]


def write_swap_folder(folder, layers=3):
    """normalizer_swap.csv and normalizer_swap_layers.csv as `attnlab experiment normalizer-swap` writes
    them: the unmodified model, the control, then each setting on all heads and on each layer."""
    plans = [["none", "unmodified", "", -1, 1.0, 200, 3.0, math.exp(3.0), 1.0, 0.0, 1.0],
             ["all", "softmax@1", "all=softmax@1", -1, 1.0, 200, 3.0, math.exp(3.0), 1.0, 0.0, 1.0]]
    # The 95% intervals: 10% either side of each figure, over 4 windows.
    for k, s in enumerate(SWAP_SETTINGS):
        T = 0.5 if s == "softmax@0.5" else 2.0 if s == "softmax@2" else 1.0
        for heads, layer in [("all", -1)] + [(f"{l}.*", l) for l in range(layers)]:
            nll = 3.0 + 0.05 * (k + 1) * (3 if heads == "all" else 1) / (1 + max(layer, 0))
            plans.append([heads, s, f"{heads}={s}", layer, T, 200, nll, math.exp(nll), math.exp(nll - 3.0), nll - 3.0 + 0.01,
                          1.0 - (nll - 3.0)])
    plans = [p + [4] + [v * f for v in p[7:11] for f in (0.9, 1.1)] for p in plans]
    write_csv(os.path.join(folder, "normalizer_swap.csv"),
              ["heads", "normalizer", "spec", "layer", "T", "tokens", "mean_nll", "perplexity", "perplexity_ratio", "kl_mean",
               "top1_agreement", "windows"] + [f"{c}_{e}" for c in ("perplexity", "perplexity_ratio", "kl_mean", "top1_agreement")
                                               for e in ("lower", "upper")], plans)
    rows = []
    for p in plans:
        for layer in range(layers):
            swapped = 1 if p[0] == "all" or p[3] == layer else 0
            entropy = 2.0 - 0.3 * swapped * (SWAP_SETTINGS.index(p[1]) + 1 if p[1] in SWAP_SETTINGS else 0) / 4
            rows.append([p[0], p[1], layer, swapped, entropy, 0.4 + 0.05 * layer, entropy - 0.1, entropy + 0.1])
    write_csv(os.path.join(folder, "normalizer_swap_layers.csv"),
              ["heads", "normalizer", "layer", "swapped", "entropy_mean", "max_weight_mean", "entropy_mean_lower", "entropy_mean_upper"],
              rows)


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=300)


def distinct_colours(path):
    pixels = matplotlib.image.imread(path)  # (h, w, 3 or 4) floats in [0, 1]
    quantized = (pixels[..., :3] * 255).round().astype(np.uint32).reshape(-1, 3)
    return len(np.unique(quantized[:, 0] << 16 | quantized[:, 1] << 8 | quantized[:, 2]))


FADING_HEADER = ["L", "layer", "head", "queries", "max_weight_mean", "entropy_mean", "previous_weight_mean", "uniform_weight",
                 "uniform_entropy", "lemma1_lower_mean", "lemma1_upper_mean", "softmax_head", "max_weight_mean_lower",
                 "max_weight_mean_upper"]


def write_needle_csv(folder):
    """needle.csv for 3 layers x 2 heads: head 1 of layer 1 retrieves (weight 0.9), the rest spread."""
    rows = [[L, layer, head, 8, w, 1 if (layer, head) == (1, 1) else L / 2, 1.0 / L, 0.8 * w, min(1.0, 1.2 * w)]
            for L in range(8, 257, 8) for layer in range(3) for head in range(2)
            for w in [0.9 if (layer, head) == (1, 1) else 1.0 / L]]
    write_csv(os.path.join(folder, "needle.csv"), ["L", "layer", "head", "queries", "needle_weight_mean", "needle_rank_mean",
                                                   "uniform_weight", "needle_weight_mean_lower", "needle_weight_mean_upper"], rows)


def write_fading_folder(folder, spec, zero_shot, slope, spread=0.3):
    """fading.csv and fading.json for 3 layers x 2 heads, L = 8..256: the largest weight falls as
    L^-slope; softmax runs have Lemma 1's band, a swap (zero_shot) has nan there, as the tool writes."""
    rows = []
    for L in range(8, 257, 8):
        for layer in range(3):
            for head in range(2):
                top = min(1.0, (0.9 - 0.1 * head) * (L / 8.0) ** -slope)
                band = [math.nan, math.nan] if zero_shot else [math.exp(-6) / L, min(1.0, math.exp(6) / L)]
                interval = [top * (1 - spread), min(1.0, top * (1 + spread))] if spread is not None else [math.nan, math.nan]
                rows.append([L, layer, head, 8, top, math.log(L) * (1 - top), 0.1, 1.0 / L, math.log(L)] + band + [0 if zero_shot else 1] +
                            interval)
    write_csv(os.path.join(folder, "fading.csv"), FADING_HEADER, rows)
    with open(os.path.join(folder, "fading.json"), "w") as f:
        json.dump({"experiment": "fading", "model": {"path": "assets/tiny/model.safetensors"},
                   "parameters": {"attention": spec, "zero_shot_swap": zero_shot, "windows": 8}}, f)


def colour_pixels(path, rgb, tolerance=30):
    """How many pixels are within `tolerance` of the colour rgb (0..255 each)."""
    pixels = (matplotlib.image.imread(path)[..., :3] * 255).astype(int)
    return int((np.abs(pixels - np.asarray(rgb)).max(axis=-1) <= tolerance).sum())


def check_fading(script, tmp):
    """fig_fading alone and with --compare: the second run is drawn in red, labelled; bad input is named."""
    one, two = os.path.join(tmp, "fading_one"), os.path.join(tmp, "fading_two")
    os.makedirs(one)
    os.makedirs(two)
    write_fading_folder(one, "", False, 0.5)
    write_fading_folder(two, "all=ssmax:0.43", True, 0.1)
    r = run(script, one, "--out", os.path.join(tmp, "f1"))
    single = os.path.join(tmp, "f1", "fig_fading.png")
    check(r.returncode == 0 and os.path.isfile(single), f"fading alone: fig_fading.png written ({r.stderr.strip()[-300:]})")
    check("skipping fig_needle" in r.stdout, "fading without needle.csv: fig_needle is skipped with a message")
    write_needle_csv(one)
    write_needle_csv(two)
    r = run(script, one, "--compare", two, "--out", os.path.join(tmp, "f2"))
    both = os.path.join(tmp, "f2", "fig_fading.png")
    needle = os.path.join(tmp, "f2", "fig_needle.png")
    check(os.path.isfile(needle) and distinct_colours(needle) > 100 and colour_pixels(needle, (214, 39, 40)) > 500,
          "with needle.csv: fig_needle.png is written, with the second run in red")
    check(r.returncode == 0 and os.path.isfile(both), f"fading --compare: fig_fading.png written ({r.stderr.strip()[-300:]})")
    if os.path.isfile(single) and os.path.isfile(both):
        red_single, red_both = colour_pixels(single, (214, 39, 40)), colour_pixels(both, (214, 39, 40))
        check(red_single < 50 and red_both > 1000, f"--compare draws the second run in red ({red_single} red pixels alone, {red_both} with it)")
        check(distinct_colours(single) > 300, "fig_fading.png is a real picture (> 300 colours)")
    r = run(script, one, "--heads", "2.1,0.0", "--out", os.path.join(tmp, "f3"))
    check(r.returncode == 0 and os.path.isfile(os.path.join(tmp, "f3", "fig_fading.png")), "fading --heads 2.1,0.0: drawn")
    # The intervals are drawn: the same run with nan intervals (one window) has fewer blue pixels.
    no_bars = os.path.join(tmp, "fading_no_bars")
    os.makedirs(no_bars)
    write_fading_folder(no_bars, "", False, 0.5, spread=None)
    r2 = run(script, no_bars, "--heads", "2.1,0.0", "--out", os.path.join(tmp, "f3n"))
    blue = [colour_pixels(os.path.join(tmp, d, "fig_fading.png"), (31, 119, 180)) if os.path.isfile(os.path.join(tmp, d, "fig_fading.png"))
            else 0 for d in ("f3", "f3n")]
    check(r2.returncode == 0 and blue[1] > 0 and blue[0] > blue[1] + 300,
          f"fading --heads: the 95% intervals are drawn as error bars ({blue[0]} blue pixels with them, {blue[1]} without)")
    r = run(script, one, "--heads", "two")
    check(r.returncode == 2 and "--heads" in r.stderr, f"--heads two: exit 2 naming --heads ({r.stderr.strip()})")
    r = run(script, one, "--compare", os.path.join(tmp, "f1"))
    check(r.returncode == 2 and "fading.csv" in r.stderr, f"--compare a folder without fading.csv: exit 2 ({r.stderr.strip()})")
    rewrite_cell(os.path.join(two, "fading.csv"), "max_weight_mean", "big")
    r = run(script, one, "--compare", two, "--out", os.path.join(tmp, "f4"))
    check(r.returncode != 0 and two in r.stderr and "fading.csv" in r.stderr and "max_weight_mean" in r.stderr
          and not os.path.isfile(os.path.join(tmp, "f4", "fig_fading.png")),
          f"fading --compare, a malformed max_weight_mean: non-zero exit naming its folder and column, nothing drawn ({r.stderr.strip()})")


def rewrite_cell(path, column, value):
    with open(path) as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    cells = lines[2].split(",")
    cells[header.index(column)] = value
    lines[2] = ",".join(cells)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def drop_column(path, column):
    with open(path) as f:
        rows = [line.split(",") for line in f.read().splitlines()]
    k = rows[0].index(column)
    with open(path, "w") as f:
        f.write("\n".join(",".join(r[:k] + r[k + 1:]) for r in rows) + "\n")


def main():
    script = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "plot_figures.py")
    with tempfile.TemporaryDirectory(prefix="attnlab_plot_") as tmp:
        data, out = os.path.join(tmp, "data"), os.path.join(tmp, "out")
        os.makedirs(data)
        write_folder(data)
        write_swap_folder(data)

        # All five figures.
        r = run(script, data, "--out", out)
        check(r.returncode == 0, f"full folder: exit 0 (got {r.returncode}; stderr: {r.stderr.strip()[-500:]})")
        for name in FIGURES:
            path = os.path.join(out, name + ".png")
            exists = os.path.isfile(path)
            check(exists, f"{name}.png written")
            check(path in r.stdout, f"{name}.png listed on stdout")
            if exists:
                size = os.path.getsize(path)
                check(size > 10_000, f"{name}.png is {size} bytes (> 10 KB)")
                colours = distinct_colours(path)
                check(colours > 300, f"{name}.png has {colours} distinct colours (> 300)")

        # Only some CSVs: the others are skipped with a message; another format.
        part = os.path.join(tmp, "part")
        os.makedirs(part)
        os.rename(os.path.join(data, "gradient_summary.csv"), os.path.join(part, "gradient_summary.csv"))
        r = run(script, part, "--format", "svg")
        check(r.returncode == 0, f"partial folder: exit 0 (got {r.returncode}; stderr: {r.stderr.strip()[-500:]})")
        check(sorted(os.listdir(part)) == ["fig4_gradient.svg", "gradient_summary.csv"],
              f"partial folder: only fig4_gradient.svg written (folder holds {sorted(os.listdir(part))})")
        check("skipping fig3_separability" in r.stdout, "partial folder: the skipped figures are reported")

        # A cell that is not a number: non-zero exit naming the file and the column.
        # Every CSV is checked before drawing, so the figures of the good CSVs are not written either.
        rewrite_cell(os.path.join(data, "separability.csv"), "ratio_mean", "0.7x")
        out_bad = os.path.join(tmp, "out_bad")
        r = run(script, data, "--out", out_bad)
        check(r.returncode != 0, f"malformed cell: non-zero exit (got {r.returncode})")
        check("separability.csv" in r.stderr and "ratio_mean" in r.stderr,
              f"malformed cell: stderr names separability.csv and ratio_mean ({r.stderr.strip()})")
        left = os.listdir(out_bad) if os.path.isdir(out_bad) else []
        check(not left, f"malformed cell: no figure written ({left})")

        # A missing column.
        drop_column(os.path.join(part, "gradient_summary.csv"), "bound_g")
        r = run(script, part)
        check(r.returncode != 0, f"missing column: non-zero exit (got {r.returncode})")
        check("gradient_summary.csv" in r.stderr and "bound_g" in r.stderr,
              f"missing column: stderr names gradient_summary.csv and bound_g ({r.stderr.strip()})")

        # The normalizer swap: alone in a folder it is drawn; a text where a number belongs, or a
        # missing column, is named.
        swap = os.path.join(tmp, "swap")
        os.makedirs(swap)
        write_swap_folder(swap, layers=12)
        r = run(script, swap)
        check(r.returncode == 0 and os.path.isfile(os.path.join(swap, "fig_normalizer_swap.png")),
              f"normalizer swap alone, 12 layers: fig_normalizer_swap.png written ({r.stderr.strip()[-300:]})")
        rewrite_cell(os.path.join(swap, "normalizer_swap.csv"), "kl_mean", "lots")
        r = run(script, swap, "--out", os.path.join(tmp, "swap_bad"))
        check(r.returncode != 0 and "normalizer_swap.csv" in r.stderr and "kl_mean" in r.stderr,
              f"normalizer swap, a malformed kl_mean: non-zero exit naming the file and column ({r.stderr.strip()})")
        write_swap_folder(swap)
        drop_column(os.path.join(swap, "normalizer_swap_layers.csv"), "entropy_mean")
        r = run(script, swap)
        check(r.returncode != 0 and "normalizer_swap_layers.csv" in r.stderr and "entropy_mean" in r.stderr,
              f"normalizer swap, no entropy_mean column: non-zero exit naming it ({r.stderr.strip()})")

        check_fading(script, tmp)

        # No such folder.
        missing = os.path.join(tmp, "no_such_dir")
        r = run(script, missing)
        check(r.returncode != 0 and missing in r.stderr,
              f"missing folder: non-zero exit naming it (got {r.returncode}: {r.stderr.strip()})")

        # A folder without any experiment CSV.
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        r = run(script, empty)
        check(r.returncode != 0, f"folder without CSVs: non-zero exit (got {r.returncode})")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
