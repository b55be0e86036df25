"""The figure of `attnlab experiment normalizer-swap` (issue 26, PAPER.md §7), for tools/plot_figures.py.

normalizer_swap.csv has a row per plan (the unmodified model, the control all=softmax@1, then each
setting on every head and on one layer at a time); normalizer_swap_layers.csv a row per plan and layer.
The figure: heat maps of the perplexity ratio, the KL and the top-1 agreement (a row per setting, a
column for all heads and one per layer), each cell with its 95% interval over windows under its value
(when the run had more than one window), and each layer's attention entropy with every head swapped,
with the intervals as error bars.
Malformed input raises the caller's exception class with the file and the column named.
"""
import csv
import math
import os

import matplotlib.colors
import numpy as np

PLANS_CSV = "normalizer_swap.csv"
LAYERS_CSV = "normalizer_swap_layers.csv"
PLAN_FIGURES = ["perplexity", "perplexity_ratio", "kl_mean", "top1_agreement"]
PLAN_NUMBERS = (["layer", "T", "tokens", "mean_nll", "windows"] + PLAN_FIGURES +
                [f"{c}_{end}" for c in PLAN_FIGURES for end in ("lower", "upper")])
PLAN_TEXT = ["heads", "normalizer", "spec"]
LAYER_NUMBERS = ["layer", "swapped", "entropy_mean", "max_weight_mean", "entropy_mean_lower", "entropy_mean_upper"]
LAYER_TEXT = ["heads", "normalizer"]


def read_rows(path, numbers, text, error):
    """Rows as dicts: `numbers` columns as floats, `text` columns as strings."""
    name = os.path.basename(path)
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = [h.strip() for h in next(reader, [])]
        for c in numbers + text:
            if c not in header:
                raise error(f"{name}: missing column '{c}' (header: {','.join(header)})")
        rows = []
        for line, cells in enumerate(reader, start=2):
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise error(f"{name}: line {line} has {len(cells)} fields, the header has {len(header)}")
            row = {c: cells[header.index(c)].strip() for c in text}
            for c in numbers:
                cell = cells[header.index(c)].strip()
                try:
                    row[c] = float(cell)
                except ValueError:
                    raise error(f"{name}: line {line}, column '{c}': '{cell}' is not a number") from None
            rows.append(row)
    if not rows:
        raise error(f"{name}: no data rows")
    return rows


def check_tables(folder, error):
    """Reads both CSVs when present (so that a malformed one stops the script before any drawing)."""
    tables = {}
    for name, numbers, text in ((PLANS_CSV, PLAN_NUMBERS, PLAN_TEXT), (LAYERS_CSV, LAYER_NUMBERS, LAYER_TEXT)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            tables[name] = read_rows(path, numbers, text, error)
    return tables


def grid(plans, column):
    """(settings, columns, values): a row per setting, a column for all heads then one per layer."""
    settings = []
    for p in plans:
        if p["heads"] != "none" and p["normalizer"] not in settings:
            settings.append(p["normalizer"])
    layers = sorted({int(p["layer"]) for p in plans if p["heads"] not in ("none", "all")})
    columns = ["all"] + [f"{layer}.*" for layer in layers]
    values = np.full((len(settings), len(columns)), np.nan)
    for p in plans:
        if p["heads"] in columns and p["normalizer"] in settings:
            values[settings.index(p["normalizer"]), columns.index(p["heads"])] = p[column]
    return settings, columns, values


def heat_map(fig, ax, plans, column, title, ratio=False, cmap="viridis", fmt="{:.3g}"):
    """One quantity over settings x heads swapped; a ratio gets a log colour scale centred on 1."""
    settings, columns, values = grid(plans, column)
    norm = None
    if ratio:
        finite = values[np.isfinite(values) & (values > 0)]
        spread = max(abs(math.log(finite.min())), abs(math.log(finite.max())), 1e-3) if finite.size else 1.0
        norm = matplotlib.colors.LogNorm(vmin=math.exp(-spread), vmax=math.exp(spread))
    image = ax.imshow(values, cmap=cmap, norm=norm, aspect="auto")
    _, _, lower = grid(plans, column + "_lower")
    _, _, upper = grid(plans, column + "_upper")
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels(["all heads"] + [f"layer {c[:-2]}" for c in columns[1:]], rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(settings)))
    ax.set_yticklabels(settings, fontsize=8)
    ax.set_xlabel("heads swapped")
    ax.set_ylabel("normalizer (@T: temperature)")
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if np.isfinite(values[i, j]):
                text = fmt.format(values[i, j])
                if np.isfinite(lower[i, j]) and np.isfinite(upper[i, j]):
                    text += f"\n[{fmt.format(lower[i, j])}, {fmt.format(upper[i, j])}]"
                ax.text(j, i, text, ha="center", va="center", fontsize=6, color="w",
                        bbox={"boxstyle": "round,pad=0.1", "fc": "0.15", "alpha": 0.35, "lw": 0})
    ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, shrink=0.8)


def entropy_panel(ax, layers_rows):
    settings = []
    for r in layers_rows:
        if r["heads"] == "all" and r["normalizer"] not in settings:
            settings.append(r["normalizer"])
    for i, s in enumerate(settings):
        rows = sorted((r for r in layers_rows if r["heads"] == "all" and r["normalizer"] == s), key=lambda r: r["layer"])
        x, y = [r["layer"] for r in rows], [r["entropy_mean"] for r in rows]
        ax.plot(x, y, "o-", color=f"C{i % 10}", markersize=4, linewidth=2.5 if s == "softmax@1" else 1.2, label=f"all heads {s}")
        if all(math.isfinite(r["entropy_mean_lower"]) and math.isfinite(r["entropy_mean_upper"]) for r in rows):
            ax.errorbar(x, y, yerr=[[max(r["entropy_mean"] - r["entropy_mean_lower"], 0) for r in rows],
                                    [max(r["entropy_mean_upper"] - r["entropy_mean"], 0) for r in rows]],
                        fmt="none", ecolor=f"C{i % 10}", elinewidth=1, capsize=2)
    base = sorted((r for r in layers_rows if r["heads"] == "none"), key=lambda r: r["layer"])
    ax.plot([r["layer"] for r in base], [r["entropy_mean"] for r in base], "k--", linewidth=1.5, label="unmodified model")
    ax.set_xlabel("layer")
    ax.set_ylabel("mean attention entropy (nats), over heads and queries")
    ax.set_xticks(sorted({int(r["layer"]) for r in layers_rows}))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("attention entropy per layer, every head swapped (bars: 95% intervals over windows)", fontsize=9)


def figure_normalizer_swap(folder, out_dir, fmt, written, tables, plt, save, source_note, summary):
    """Draws fig_normalizer_swap when normalizer_swap.csv is in `tables` (from check_tables)."""
    if PLANS_CSV not in tables:
        print(f"skipping fig_normalizer_swap: {PLANS_CSV} not found in {folder}")
        return
    plans = tables[PLANS_CSV]
    base = next((p for p in plans if p["heads"] == "none"), None)
    fig, axes = plt.subplots(2, 2, figsize=(15, 11))
    heat_map(fig, axes[0][0], plans, "perplexity_ratio", "perplexity / unmodified perplexity (log colour scale, 1 = no change)",
             ratio=True, cmap="RdBu_r")
    heat_map(fig, axes[0][1], plans, "kl_mean", "mean KL(unmodified ‖ swapped) of the next-token distribution (nats)",
             cmap="magma_r", fmt="{:.2g}")
    heat_map(fig, axes[1][0], plans, "top1_agreement", "top-1 agreement with the unmodified model", cmap="viridis", fmt="{:.2f}")
    if LAYERS_CSV in tables:
        entropy_panel(axes[1][1], tables[LAYERS_CSV])
    else:
        axes[1][1].axis("off")
        axes[1][1].text(0.5, 0.5, f"{LAYERS_CSV} not found", ha="center")
    tokens = int(base["tokens"]) if base else "?"
    heading = "Normalizer swap (PAPER.md §7): each normalizer on every head, or on one layer's heads, with no retraining"
    if base:
        heading += f"\nunmodified perplexity {base['perplexity']:.4g} over {tokens} predicted tokens in {int(base['windows'])} window(s)"
        if math.isfinite(base["perplexity_lower"]):
            heading += f" (95% interval {base['perplexity_lower']:.4g} to {base['perplexity_upper']:.4g}); [ ]: 95% intervals over windows"
    fig.suptitle(heading)
    fig.text(0.01, 0.005, source_note(summary), fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    save(fig, out_dir, "fig_normalizer_swap", fmt, written)
