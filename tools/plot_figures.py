#!/usr/bin/python3
"""Draw the paper's Figures 2a, 2b, 2c, 3 and 4 from the CSVs of `attnlab experiment`, and the
normalizer swap's figure (`attnlab experiment normalizer-swap`, plot_normalizer_swap.py), and the fading
figure and, with --needle, the needle probe's (`attnlab experiment fading`, plot_fading.py).

usage: /usr/bin/python3 tools/plot_figures.py DIR [--out DIR2] [--format png|svg|pdf] [--compare DIR3] [--heads L.H,...]

  DIR       a folder written by `attnlab experiment NAME --out DIR` (any subset of the five experiments)
  --out     where to write the figures (default: DIR)
  --format  png (default), svg or pdf
  --compare another `attnlab experiment fading` folder, drawn on DIR's fading plot (repeatable)
  --heads   the fading plot's panels: these heads (e.g. 1.1,2.2) instead of each layer's mean

Run it with Debian's /usr/bin/python3: it needs python3-matplotlib and python3-numpy, which a
pyenv `python3` on PATH usually does not have (sudo apt-get install python3-matplotlib).
Figures whose CSV is missing are skipped with a message; a malformed CSV stops the script
with a non-zero exit and names the file and the column. The science: PAPER.md §3-§6
(../shared/PAPER.md beside the repository).
"""
import argparse
import csv
import json
import math
import os
import sys

USAGE_HINT = "run it with /usr/bin/python3 (Debian's python, which has python3-matplotlib and python3-numpy)"

try:
    import numpy as np
    import matplotlib
    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    import plot_normalizer_swap  # beside this script
    import plot_fading
except ImportError as missing:
    sys.stderr.write(f"plot_figures.py: {missing}.\n"
                     "  Install Debian's packages:  sudo apt-get install python3-matplotlib python3-numpy\n"
                     f"  and {USAGE_HINT}.\n")
    sys.exit(3)


class MalformedInput(Exception):
    """A CSV the figures cannot be drawn from; the message names the file and the column."""


# --- reading -------------------------------------------------------------------------------

_tables = {}  # (path, columns) -> table: all CSVs are checked before the first figure is drawn


def read_table(path, columns):
    """Read a tidy numeric CSV; returns {column: float array (rows,)} for the requested columns.
    Every requested column must be present and every cell a number ("nan" and "inf" allowed)."""
    key = (path, tuple(columns))
    if key not in _tables:
        _tables[key] = parse_table(path, columns)
    return _tables[key]


def parse_table(path, columns):
    name = os.path.basename(path)
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if not header:
            raise MalformedInput(f"{name}: empty file, expected a header with columns {', '.join(columns)}")
        header = [h.strip() for h in header]
        for c in columns:
            if c not in header:
                raise MalformedInput(f"{name}: missing column '{c}' (header: {','.join(header)})")
        where = {c: header.index(c) for c in columns}
        values = {c: [] for c in columns}
        for line, row in enumerate(reader, start=2):
            if not row or all(not cell.strip() for cell in row):
                continue  # a trailing blank line
            if len(row) != len(header):
                raise MalformedInput(f"{name}: line {line} has {len(row)} fields, the header has {len(header)}")
            for c in columns:
                cell = row[where[c]].strip()
                try:
                    values[c].append(float(cell))
                except ValueError:
                    raise MalformedInput(f"{name}: line {line}, column '{c}': '{cell}' is not a number") from None
    if not values[columns[0]]:
        raise MalformedInput(f"{name}: no data rows")
    return {c: np.asarray(v, dtype=float) for c, v in values.items()}


def read_summary(folder, experiment):
    """The experiment's JSON summary (parameters, model, text, notes), or {} when absent or unreadable:
    it only decorates the figures, the CSVs carry the numbers."""
    try:
        with open(os.path.join(folder, experiment + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def source_note(summary):
    """One line naming the model and the text the numbers come from, for a figure's footer."""
    parts = []
    model = summary.get("model", {})
    if model.get("path"):
        layers, heads = model.get("n_layer"), model.get("n_head")
        shape = f", {layers}x{heads} heads" if layers and heads else ""
        parts.append(f"model: {os.path.basename(model['path'])} (sha256 {str(model.get('sha256', ''))[:8]}{shape})")
    text = summary.get("text", {})
    if text.get("path"):
        parts.append(f"text: {os.path.basename(text['path'])} ({text.get('tokens_used', '?')} tokens used)")
    vectors = summary.get("parameters", {}).get("vectors")
    if vectors:
        parts.append(f"x = {'value vectors' if vectors == 'values' else vectors}")
    queries = summary.get("queries", {})
    if "skipped" in queries:
        parts.append(f"{queries['skipped']} queries skipped (too few visible tokens)")
    return "AttnLab: " + "; ".join(parts) if parts else ""


def unique_sorted(a):
    return np.unique(a[np.isfinite(a)])


def quantile_band(values):
    """Mean and 10/90% quantiles over heads of one group of per-head values, ignoring nans."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return math.nan, math.nan, math.nan
    return finite.mean(), np.quantile(finite, 0.1), np.quantile(finite, 0.9)


def over_heads(table, x_column, column, keep):
    """Group the per-head rows by x_column; returns x, mean, q10, q90 arrays (one entry per x)."""
    x = table[x_column][keep]
    v = table[column][keep]
    xs = unique_sorted(x)
    stats = np.array([quantile_band(v[x == value]) for value in xs]).reshape(-1, 3)
    return xs, stats[:, 0], stats[:, 1], stats[:, 2]


def plain_log_ticks(ax, values):
    """Label a log x axis with plain numbers (1, 5, 10, not 10^0): the swept values when few."""
    values = unique_sorted(np.asarray(values, dtype=float))
    if 0 < len(values) <= 12:
        ax.set_xticks(values)
        ax.set_xticklabels([f"{v:g}" for v in values])
        ax.minorticks_off()
    else:
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def save(fig, out_dir, stem, fmt, written):
    path = os.path.join(out_dir, f"{stem}.{fmt}")
    fig.savefig(path, dpi=120, bbox_inches="tight")  # "tight": legends placed outside the axes stay in
    plt.close(fig)
    written.append(path)


# --- Figures 2a and 2b: distance between the selection and the rest -----------------------

DISTANCE_COLUMNS = ["layer", "head", "L", "N", "queries", "skipped"] + [
    f"{f}_{s}" for f in ("d_A", "d_B", "bound_A", "bound_B", "expected_A", "expected_B", "approx_A", "abar")
    for s in ("mean", "sd")] + ["expected_A_mc_se"]


def distance_panel(ax, t, x_column, keep, reading):
    """One reading (A: sum of norms, B: norm of the sum) of the distance against L or N."""
    # The measured line is drawn wide underneath so that it stays visible where E[d] lies on it.
    series = [
        (f"d_{reading}", f"d_{reading}: top-N selection (measured)", "C0", "-", "o", 3.5),
        (f"expected_{reading}", f"E[d_{reading}]: random N-subset (Monte Carlo)", "C1", "-", ".", 1.3),
        (f"bound_{reading}", f"(R) reconstructed bound on d_{reading} (Theorem 1)", "C3", "--", "^", 1.5),
    ]
    if reading == "A":
        series.append(("approx_A", "paper's Eq.8 main term for E[d_A] (R)", "C2", ":", "x", 1.5))
    spread = []
    for column, label, color, style, marker, width in series:
        x, mean, lo, hi = over_heads(t, x_column, column + "_mean", keep)
        spread += [v for v in mean if np.isfinite(v)]
        ax.plot(x, mean, style, color=color, marker=marker, markersize=4, linewidth=width,
                label=label + ", mean over heads")
        ax.fill_between(x, lo, hi, color=color, alpha=0.12, linewidth=0)
    ax.fill_between([], [], [], color="0.5", alpha=0.15, label="band: 10-90% of heads")
    # Over a wide N range the distances span decades; a linear axis would flatten the small-N end.
    if spread and min(spread) > 0 and max(spread) / min(spread) > 100:
        ax.set_yscale("log")
        ax.set_ylabel("distance (units of x, log scale)")
    else:
        ax.set_ylabel("distance (units of x)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")


def load_figure_inputs(folder, csv_name, columns, stem, experiment):
    """(table, summary) for one figure, or None (with a message) when its CSV is not in folder."""
    path = os.path.join(folder, csv_name)
    if not os.path.isfile(path):
        print(f"skipping {stem}: {csv_name} not found in {folder}")
        return None
    return read_table(path, columns), read_summary(folder, experiment)


def figure_distance(folder, out_dir, fmt, written, which):
    csv_name = "distance_vs_L.csv" if which == "L" else "distance_vs_N.csv"
    stem = "fig2a_distance_vs_L" if which == "L" else "fig2b_distance_vs_N"
    loaded = load_figure_inputs(folder, csv_name, DISTANCE_COLUMNS, stem, "distance-vs-L" if which == "L" else "distance-vs-N")
    if loaded is None:
        return
    t, summary = loaded
    # The sweep varies one of L, N; the other is fixed (N = 5 for Fig.2a, L = 1024 for Fig.2b).
    # A file with several fixed values would mix curves: plot the paper's value if present.
    fixed_column, paper_value = ("N", 5) if which == "L" else ("L", 1024)
    fixed_values = unique_sorted(t[fixed_column])
    fixed = paper_value if paper_value in fixed_values else fixed_values[0]
    keep = t[fixed_column] == fixed
    n_heads = len({(a, b) for a, b in zip(t["layer"][keep], t["head"][keep])})

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
    for ax, reading, title in ((axes[0], "A", "reading A: d_A = sum over i outside I_N of ||alpha_i x_i - s||"),
                               (axes[1], "B", "reading B: d_B = ||sum over i outside I_N of alpha_i x_i - s||")):
        distance_panel(ax, t, which, keep, reading)
        ax.set_title(title, fontsize=9)
        if which == "L":
            ax.set_xlabel("context length L (first L tokens; query t sees tokens 1..t, t <= L)")
        else:
            ax.set_xscale("log")
            ax.set_xlabel("selection size N (top-N tokens, log scale)")
            plain_log_ticks(ax, t["N"][keep])
    if which == "L":
        heading = f"Paper Fig. 2a (Alg. 1): distance vs context length L, N = {fixed:g}"
    else:
        heading = f"Paper Fig. 2b (Alg. 2): distance vs selection size N, L = {fixed:g}"
    fig.suptitle(f"{heading}; {n_heads} heads, per head the mean over queries")
    fig.text(0.01, 0.01, source_note(summary), fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, out_dir, stem, fmt, written)


# --- Figure 2c: the critical selection size N* --------------------------------------------

CRITICAL_N_COLUMNS = ["L", "N_star", "found", "N_star_over_L", "D", "p_value", "exact"]
CRITICAL_N_SCAN_COLUMNS = ["L", "N", "D", "p_value", "exact", "rejected"]


def figure_critical_n(folder, out_dir, fmt, written):
    loaded = load_figure_inputs(folder, "critical_n.csv", CRITICAL_N_COLUMNS, "fig2c_critical_n", "critical-n")
    if loaded is None:
        return
    t, summary = loaded
    scan_path = os.path.join(folder, "critical_n_scan.csv")
    scan = None
    if os.path.isfile(scan_path):
        scan = read_table(scan_path, CRITICAL_N_SCAN_COLUMNS)
    else:
        print("fig2c_critical_n: critical_n_scan.csv not found, drawing N* only")
    level = summary.get("parameters", {}).get("ks_level", 0.01)

    fig, axes = plt.subplots(1, 2 if scan is not None else 1, figsize=(13 if scan is not None else 7, 5.2), squeeze=False)
    ax = axes[0][0]
    found = t["found"] > 0.5
    order = np.argsort(t["L"])
    L, n_star = t["L"][order], t["N_star"][order]
    found = found[order]
    ax.plot(L[found], n_star[found], "o-", color="C0", label="N*(L): smallest N where KS does not reject")
    L_line = np.linspace(0, max(L.max(), 1), 100)
    ax.plot(L_line, 0.06 * L_line, "--", color="C3", label="paper: N* = 0.06 L")
    if (~found).any():
        # Not found: the test rejected at every scanned N, so N* lies above the largest one.
        scanned = scan["N"][np.isin(scan["L"], L[~found])] if scan is not None else np.array([])
        if scanned.size:
            top = scanned.max()
        else:
            top = max(n_star[found].max() if found.any() else 1.0, 0.06 * L.max())
        ax.plot(L[~found], np.full((~found).sum(), top), "x", color="k", markersize=9, markeredgewidth=2,
                label=f"no N* found (rejected at every N scanned, up to {top:g})")
    ax.set_xlabel("context length L")
    ax.set_ylabel("critical selection size N*")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(f"N* against L (KS level {level:g})", fontsize=9)

    if scan is not None:
        ax = axes[0][1]
        Ls = unique_sorted(scan["L"])
        picks = Ls[np.unique(np.linspace(0, len(Ls) - 1, min(5, len(Ls))).round().astype(int))]
        floor = 1e-300  # p-values can underflow to 0; keep them on the log axis
        for i, value in enumerate(picks):
            rows = scan["L"] == value
            N, p = scan["N"][rows], scan["p_value"][rows]
            o = np.argsort(N)
            ax.plot(N[o], np.maximum(p[o], floor), "o-", markersize=3, color=f"C{i}", label=f"L = {value:g}")
            star = t["N_star"][(t["L"] == value) & (t["found"] > 0.5)]
            if star.size:
                ax.axvline(star[0], color=f"C{i}", linestyle=":", alpha=0.6)
        ax.axhline(level, color="k", linestyle="--", label=f"level {level:g}: below it KS rejects")
        ax.set_yscale("log")
        ax.set_xscale("log")
        plain_log_ticks(ax, scan["N"])
        ax.set_xlabel("selection size N (log scale)")
        model = summary.get("model", {})
        heads = f"{model['n_layer'] * model['n_head']} " if model.get("n_layer") and model.get("n_head") else ""
        ax.set_ylabel(f"two-sample KS p-value over {heads}heads (log scale)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="center right")
        ax.set_title("KS test of per-head mean d_A against per-head mean E[d_A] along the scan (dotted: N*)", fontsize=9)
    fig.suptitle("Paper Fig. 2c (Alg. 3): critical top-N, where the selection stops being told apart from a random one")
    fig.text(0.01, 0.01, source_note(summary), fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, out_dir, "fig2c_critical_n", fmt, written)


# --- Figure 3: geometric separability ------------------------------------------------------

SEPARABILITY_COLUMNS = ["layer", "head", "L", "N", "queries", "skipped"] + [
    f"{f}_{s}" for f in ("ratio", "N_s", "r", "delta", "lower", "upper") for s in ("mean", "sd")]


def pick_ns(Ns, wanted=(1, 2, 4, 8, 16, 32, 64), most=10):
    """A readable subset of the N grid: the powers of two the paper shows when present."""
    if len(Ns) <= most:
        return Ns
    subset = np.array([n for n in Ns if n in wanted])
    if subset.size >= 3:
        return subset
    return Ns[np.unique(np.linspace(0, len(Ns) - 1, most).round().astype(int))]


def figure_separability(folder, out_dir, fmt, written):
    loaded = load_figure_inputs(folder, "separability.csv", SEPARABILITY_COLUMNS, "fig3_separability", "separability")
    if loaded is None:
        return
    t, summary = loaded
    Ns = pick_ns(unique_sorted(t["N"]))
    boxes, lower, upper = [], [], []
    for n in Ns:
        rows = t["N"] == n
        ratio = t["ratio_mean"][rows]
        boxes.append(ratio[np.isfinite(ratio)])
        lower.append(quantile_band(t["lower_mean"][rows])[0])
        upper.append(quantile_band(t["upper_mean"][rows])[0])
    positions = np.arange(1, len(Ns) + 1)

    fig, ax = plt.subplots(figsize=(10, 5.6))
    ax.axhspan(0.70, 0.85, color="C2", alpha=0.18, label="paper: saturates at 0.70-0.85")
    ax.boxplot(boxes, positions=positions, widths=0.5, whis=(5, 95), showfliers=True, showmeans=True,
               flierprops={"markersize": 2, "alpha": 0.5}, medianprops={"color": "C0"},
               meanprops={"marker": "D", "markersize": 4, "markerfacecolor": "C1", "markeredgecolor": "C1"})
    ax.plot([], [], color="C0", label="N_s / N over heads: box 25-75%, whiskers 5-95%, line median")
    ax.plot([], [], "D", color="C1", markersize=4, label="N_s / N: mean over heads")
    ax.plot(positions, upper, "v-", color="C3", label="(R) upper bound (Hoeffding), mean over heads")
    ax.plot(positions, lower, "^-", color="C4", label="(R) lower bound (Markov + Cauchy-Schwarz), mean over heads")
    ax.set_xticks(positions)
    ax.set_xticklabels([f"{n:g}" for n in Ns])
    ax.set_xlabel("selection size N (top-N tokens)")
    ax.set_ylabel("N_s / N: fraction of the selection inside the ball B_r(s)")
    finite_lower = [v for v in lower if np.isfinite(v)]
    bottom = -0.05
    if finite_lower and min(finite_lower) < bottom:
        # The lower bound is conservative and can be far below 0; keep the ratios readable.
        ax.text(0.01, 0.02, f"lower bound clipped: its minimum is {min(finite_lower):.3g}", transform=ax.transAxes,
                fontsize=8, color="C4")
    ax.set_ylim(bottom, 1.05)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=2)
    L = unique_sorted(t["L"])
    heads = len({(a, b) for a, b in zip(t["layer"], t["head"])})
    ax.set_title(f"Paper Fig. 3 (Alg. 4): geometric separability, {heads} heads, "
                 f"L = {', '.join(f'{v:g}' for v in L)}, x on the unit sphere")
    fig.text(0.01, 0.01, source_note(summary), fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, out_dir, "fig3_separability", fmt, written)


# --- Figure 4: gradient sensitivity against temperature ------------------------------------

GRADIENT_COLUMNS = ["T", "T_paper", "eps", "g_max_over_heads", "g_mean_over_heads", "jacobian_norm_max_over_heads",
                    "jacobian_norm_max_over_queries", "bound_paper", "bound_tight", "bound_g"]


def figure_gradient(folder, out_dir, fmt, written):
    loaded = load_figure_inputs(folder, "gradient_summary.csv", GRADIENT_COLUMNS, "fig4_gradient", "gradient")
    if loaded is None:
        return
    t, summary = loaded
    epss = unique_sorted(t["eps"])

    fig, ax = plt.subplots(figsize=(10, 6.2))
    first = t["eps"] == epss[0]  # bound_paper, bound_tight and ||J|| do not depend on eps
    o = np.argsort(t["T"][first])
    T = t["T"][first][o]
    # Bounds are wide pale bands underneath; measurements are thin lines with markers on top,
    # so that curves lying on a bound (or on each other) stay visible.
    ax.plot(T, t["bound_tight"][first][o], "-", color="0.6", linewidth=5, alpha=0.6, label="tight bound on ‖J‖₂: 1/(2T)")
    ax.plot(T, t["bound_paper"][first][o], "-", color="k", linewidth=2,
            label="paper's bound min{1/(4T), √2} (check: not valid)")
    for i, eps in enumerate(epss):
        rows = t["eps"] == eps
        o_eps = np.argsort(t["T"][rows])
        ax.plot(t["T"][rows][o_eps], t["bound_g"][rows][o_eps], "--", color=f"C{i}", alpha=0.8,
                label=f"tight bound on g: min{{1/(2T), √2 / {eps:g}}}")
    ax.plot(T, t["jacobian_norm_max_over_queries"][first][o], "D:", color="C4", markersize=4, markerfacecolor="none",
            label="exact ‖J‖₂: max over queries and heads")
    ax.plot(T, t["jacobian_norm_max_over_heads"][first][o], "s-", color="C4", markersize=6, markerfacecolor="none",
            label="exact ‖J‖₂: mean over queries, max over heads")
    for i, eps in enumerate(epss):
        rows = t["eps"] == eps
        o_eps = np.argsort(t["T"][rows])
        width = 1.2 + 2.0 * (len(epss) - 1 - i) / max(len(epss) - 1, 1)  # wider first: coinciding curves show
        ax.plot(t["T"][rows][o_eps], t["g_max_over_heads"][rows][o_eps], "o-", color=f"C{i}", linewidth=width,
                markersize=1.5 + width, label=f"g(T, eps = {eps:g}): mean over queries, max over heads")
    # The (check) of PAPER.md §5 on these data: where the exact norm exceeds the paper's bound.
    over = t["jacobian_norm_max_over_queries"][first] > t["bound_paper"][first] * (1 + 1e-9)
    check_line = (f"exact ‖J‖₂ (max over queries and heads) exceeds the paper's bound at {int(over.sum())} "
                  f"of {int(first.sum())} temperatures")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("temperature T (AttnLab's: softmax(q.k / sqrt(d_head) / T), T = 1 is GPT-2)")
    ax.set_ylabel("sensitivity of the attention weights (log scale)")
    ax.axvline(1.0, color="0.6", linestyle=":", linewidth=1)
    ax.grid(True, which="both", alpha=0.25)

    # The paper's T multiplies ours by sqrt(d_head); a second axis reads it off.
    both = (t["T"] > 0) & np.isfinite(t["T_paper"])
    if both.any():
        scale = float(np.median(t["T_paper"][both] / t["T"][both]))
        top = ax.secondary_xaxis("top", functions=(lambda x: x * scale, lambda x: x / scale))
        top.set_xlabel(f"the paper's T = T × {scale:.3g} (√d_head)")
        ax.axvline(0.1 / scale, color="C3", linestyle=":", linewidth=1.2,
                   label="paper's guideline: avoid T_paper <= 0.1")
        ax.text(1.0, 0.97, " GPT-2 (T = 1)", transform=ax.get_xaxis_transform(), fontsize=8, color="0.4", va="top")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Paper Fig. 4 (Alg. 5): gradient sensitivity of softmax against temperature\n" + check_line, pad=28)
    fig.text(0.01, 0.01, source_note(summary), fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, out_dir, "fig4_gradient", fmt, written)


TABLE_COLUMNS = {
    "distance_vs_L.csv": DISTANCE_COLUMNS,
    "distance_vs_N.csv": DISTANCE_COLUMNS,
    "critical_n.csv": CRITICAL_N_COLUMNS,
    "critical_n_scan.csv": CRITICAL_N_SCAN_COLUMNS,
    "separability.csv": SEPARABILITY_COLUMNS,
    "gradient_summary.csv": GRADIENT_COLUMNS,
    plot_fading.CSV: plot_fading.COLUMNS,
    plot_fading.NEEDLE_CSV: plot_fading.NEEDLE_COLUMNS,
}


# --- main ----------------------------------------------------------------------------------

def main(argv):
    parser = argparse.ArgumentParser(
        prog="plot_figures.py",
        description="Draw the paper's Figures 2a, 2b, 2c, 3 and 4, and the normalizer swap's figure, from the CSVs of "
                    "`attnlab experiment`. "
                    "Run it with /usr/bin/python3 (needs Debian's python3-matplotlib and python3-numpy).",
        usage="/usr/bin/python3 tools/plot_figures.py DIR [--out DIR2] [--format png|svg|pdf] [--compare DIR3] [--heads L.H,...]")
    parser.add_argument("dir", metavar="DIR", help="folder written by `attnlab experiment ... --out DIR`")
    parser.add_argument("--out", metavar="DIR2", help="folder for the figures (default: DIR)")
    parser.add_argument("--format", choices=("png", "svg", "pdf"), default="png", help="file format (default png)")
    parser.add_argument("--compare", metavar="DIR", action="append", default=[],
                        help="another `attnlab experiment fading` folder drawn on the same fading plot (repeatable)")
    parser.add_argument("--heads", metavar="L.H,...", help="fig_fading: a panel per listed head instead of per layer")
    args = parser.parse_args(argv)
    try:
        heads = plot_fading.parse_heads(args.heads) if args.heads else None
    except ValueError:
        sys.stderr.write(f"plot_figures.py: --heads wants LAYER.HEAD items separated by commas, got '{args.heads}'\n")
        return 2

    for folder in [args.dir] + args.compare:
        if not os.path.isdir(folder):
            sys.stderr.write(f"plot_figures.py: {folder}: no such directory\n")
            return 2
    for folder in args.compare:
        if not os.path.isfile(os.path.join(folder, plot_fading.CSV)):
            sys.stderr.write(f"plot_figures.py: --compare {folder}: no {plot_fading.CSV} there\n")
            return 2
    out_dir = args.out or args.dir
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        sys.stderr.write(f"plot_figures.py: cannot create {out_dir}: {e}\n")
        return 2

    for folder in args.compare:  # checked before any drawing, like DIR's CSVs below
        try:
            read_table(os.path.join(folder, plot_fading.CSV), plot_fading.COLUMNS)
            if os.path.isfile(os.path.join(folder, plot_fading.NEEDLE_CSV)):
                read_table(os.path.join(folder, plot_fading.NEEDLE_CSV), plot_fading.NEEDLE_COLUMNS)
        except MalformedInput as e:
            sys.stderr.write(f"plot_figures.py: malformed CSV in {folder}: {e}\n")
            return 1
    written = []
    try:
        # Check every CSV first, so that a malformed one leaves no half-drawn set of figures.
        for name, columns in TABLE_COLUMNS.items():
            if os.path.isfile(os.path.join(args.dir, name)):
                read_table(os.path.join(args.dir, name), columns)
        swap_tables = plot_normalizer_swap.check_tables(args.dir, MalformedInput)
        figure_distance(args.dir, out_dir, args.format, written, "L")
        figure_distance(args.dir, out_dir, args.format, written, "N")
        figure_critical_n(args.dir, out_dir, args.format, written)
        figure_separability(args.dir, out_dir, args.format, written)
        figure_gradient(args.dir, out_dir, args.format, written)
        plot_normalizer_swap.figure_normalizer_swap(args.dir, out_dir, args.format, written, swap_tables, plt, save, source_note,
                                                    read_summary(args.dir, "normalizer-swap"))
        plot_fading.figure_fading([args.dir] + args.compare, out_dir, args.format, written, plt, save, read_table, heads)
        plot_fading.figure_needle([args.dir] + args.compare, out_dir, args.format, written, plt, save, read_table)
    except MalformedInput as e:
        sys.stderr.write(f"plot_figures.py: malformed CSV in {args.dir}: {e}\n")
        return 1
    if not written:
        sys.stderr.write(f"plot_figures.py: {args.dir} holds none of distance_vs_L.csv, distance_vs_N.csv, "
                         "critical_n.csv, separability.csv, gradient_summary.csv, normalizer_swap.csv, fading.csv\n")
        return 1
    print(f"wrote {len(written)} figure(s):")
    for path in written:
        print(f"  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
