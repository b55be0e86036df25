"""The figure of `attnlab experiment fading` (issue 29, PAPER.md §2 Lemma 1), for tools/plot_figures.py.

fading.csv has a row per context length L, layer and head: the mean largest weight of the queries that
see L keys, and the mean of Lemma 1's band over those queries, (1/L) e^(-2a/T) .. (1/L) e^(2a/T) with
a = max |logit| of the query (the upper end capped at 1; nan for heads that do not run softmax, which the
lemma does not bound). fig_fading draws, per layer (or per chosen head), the mean largest weight against
L on log axes, the uniform 1/L line, and Lemma 1's band shaded. The 95% intervals over windows
(max_weight_mean_lower/upper, a bootstrap over the windows) are error bars on a chosen head's points;
on a layer's panel, whose line is a mean over heads, the bars span the mean over the layer's heads of
their intervals (the table holds no interval of that mean). Given several folders, each model is a
line of its own colour, labelled with its model and its attention plan.
"""
import json
import os

import numpy as np

CSV = "fading.csv"
COLUMNS = ["L", "layer", "head", "queries", "max_weight_mean", "lemma1_lower_mean", "lemma1_upper_mean", "uniform_weight",
           "max_weight_mean_lower", "max_weight_mean_upper"]
COLOURS = ["tab:blue", "tab:red", "tab:green", "tab:purple"]


def run_label(folder):
    """'<model> — <plan>' from fading.json: the plan is the trained one, or a swap, called zero-shot."""
    try:
        with open(os.path.join(folder, "fading.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        return os.path.basename(os.path.normpath(folder))
    path = summary.get("model", {}).get("path", folder)
    name = os.path.basename(os.path.dirname(path)) if os.path.basename(path) == "model.safetensors" else os.path.basename(path)
    parameters = summary.get("parameters", {})
    spec = parameters.get("attention") or "softmax"
    plan = f"{spec}, zero-shot swap" if parameters.get("zero_shot_swap") else f"{spec} (as trained)"
    windows = parameters.get("windows", "?")
    return f"{name} — {plan}; {windows} windows"


def parse_heads(text):
    """'1.1,2.2' -> [(1, 1), (2, 2)]; ValueError on anything else."""
    heads = []
    for item in text.split(","):
        layer, head = item.strip().split(".")
        heads.append((int(layer), int(head)))
    return heads


def panels(table, heads):
    """[(title, rows of a table in the panel)]: one per layer, or one per chosen (layer, head). The
    panel is looked up by number in every run's table, not by row order."""
    if heads:
        return [(f"head {layer}.{head}", lambda t, layer=layer, head=head: (t["layer"] == layer) & (t["head"] == head))
                for layer, head in heads]
    return [(f"layer {int(layer)}: mean over its heads", lambda t, layer=layer: t["layer"] == layer)
            for layer in np.unique(table["layer"])]


def per_L(table, keep, column):
    """Ls and the mean over the kept rows of `column` at each L, ignoring nans (nan when none)."""
    Ls = np.unique(table["L"][keep])
    out = []
    for L in Ls:
        v = table[column][keep & (table["L"] == L)]
        v = v[np.isfinite(v)]
        out.append(v.mean() if v.size else np.nan)
    return Ls, np.asarray(out)


def error_bars(ax, Ls, mid, lower, upper, colour, label):
    """95% intervals as error bars around `mid` (none where an end is nan: one window)."""
    ok = np.isfinite(lower) & np.isfinite(upper)
    if ok.any():
        ax.errorbar(Ls[ok], mid[ok], yerr=[np.maximum(mid[ok] - lower[ok], 0), np.maximum(upper[ok] - mid[ok], 0)], fmt="none",
                    ecolor=colour, elinewidth=1, capsize=2, label=label)


def draw_panel(ax, title, runs, mask_of, per_head):
    """One panel: each run's mean largest weight with its 95% intervals, Lemma 1 band, and the uniform 1/L."""
    all_Ls, lowest = [], 1.0
    for i, (label, table) in enumerate(runs):
        keep = mask_of(table)
        if not keep.any():
            continue
        colour = COLOURS[i % len(COLOURS)]
        Ls, top = per_L(table, keep, "max_weight_mean")
        _, lower = per_L(table, keep, "lemma1_lower_mean")
        _, upper = per_L(table, keep, "lemma1_upper_mean")
        all_Ls.extend(Ls)
        if np.isfinite(lower).any():
            ax.fill_between(Ls, lower, upper, color=colour, alpha=0.12, linewidth=0,
                            label=f"Lemma 1 band, (1/L)e^(±2a/T), a = max|logit| per query — {label}")
        ax.plot(Ls, top, "o-", color=colour, markersize=3, label=f"mean largest weight — {label}")
        _, top_lower = per_L(table, keep, "max_weight_mean_lower")
        _, top_upper = per_L(table, keep, "max_weight_mean_upper")
        what = "95% interval over windows" if per_head else "heads' 95% intervals over windows, averaged over the layer's heads"
        error_bars(ax, Ls, top, top_lower, top_upper, colour, f"{what} — {label}")
        lowest = min(lowest, np.nanmin(top))
    if all_Ls:
        Ls = np.unique(all_Ls)
        ax.plot(Ls, 1.0 / Ls, "k--", linewidth=1, label="uniform 1/L")
        # With real logits a is large and the band's lower end falls many decades below anything
        # drawn; the axis stops a decade under 1/L and the band runs off its bottom.
        ax.set_ylim(0.1 * min(lowest, 1.0 / Ls.max()), 1.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("L (keys the query sees)")
    ax.set_ylabel("largest attention weight")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.2)


def figure_fading(folders, out_dir, fmt, written, plt, save, read_table, heads=None):
    """Draws fig_fading when the first folder has fading.csv; every folder then needs one."""
    if not os.path.isfile(os.path.join(folders[0], CSV)):
        print(f"skipping fig_fading: {CSV} not found in {folders[0]}")
        return
    runs = [(run_label(folder), read_table(os.path.join(folder, CSV), COLUMNS)) for folder in folders]
    layout = panels(runs[0][1], heads)
    cols = min(4, len(layout))
    rows = (len(layout) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows + 1.2), squeeze=False)
    for k, (title, mask_of) in enumerate(layout):
        draw_panel(axes[k // cols][k % cols], title, runs, mask_of, heads is not None)
    for k in range(len(layout), rows * cols):
        axes[k // cols][k % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", fontsize=7, ncol=1, bbox_to_anchor=(0.5, 0.0))  # under the x labels, any length
    fig.suptitle("Attention fading with context length (PAPER.md §2, Lemma 1): the query that sees L keys\n"
                 "Lemma 1 bounds softmax heads only; SSMax depends on L and has no band")
    fig.tight_layout()
    save(fig, out_dir, "fig_fading", fmt, written)


NEEDLE_CSV = "needle.csv"
NEEDLE_COLUMNS = ["L", "layer", "head", "queries", "needle_weight_mean", "needle_rank_mean", "needle_weight_mean_lower",
                  "needle_weight_mean_upper"]


def figure_needle(folders, out_dir, fmt, written, plt, save, read_table):
    """Draws fig_needle when the first folder has needle.csv (`--needle`): per layer, the weight the
    layer's best head at that L puts on the needle's successor B, for every run that has the probe."""
    runs = [(run_label(folder), read_table(os.path.join(folder, NEEDLE_CSV), NEEDLE_COLUMNS))
            for folder in folders if os.path.isfile(os.path.join(folder, NEEDLE_CSV))]
    if not os.path.isfile(os.path.join(folders[0], NEEDLE_CSV)):
        print(f"skipping fig_needle: {NEEDLE_CSV} not found in {folders[0]}")
        return
    layers = np.unique(runs[0][1]["layer"])
    fig, axes = plt.subplots(1, len(layers), figsize=(4.2 * len(layers), 4.6), squeeze=False)
    for k, layer in enumerate(layers):
        ax = axes[0][k]
        for i, (label, t) in enumerate(runs):
            keep = t["layer"] == layer
            Ls = np.unique(t["L"][keep])
            best = [np.flatnonzero(keep & (t["L"] == L))[np.argmax(t["needle_weight_mean"][keep & (t["L"] == L)])] for L in Ls]
            colour = COLOURS[i % len(COLOURS)]
            ax.plot(Ls, t["needle_weight_mean"][best], "o-", color=colour, markersize=3, label=f"best head's weight on B — {label}")
            error_bars(ax, Ls, t["needle_weight_mean"][best], t["needle_weight_mean_lower"][best], t["needle_weight_mean_upper"][best],
                       colour, f"that head's 95% interval over windows — {label}")
        Ls = np.unique(runs[0][1]["L"])
        ax.plot(Ls, 1.0 / Ls, "k--", linewidth=1, label="uniform 1/L")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("L (keys the query A sees)")
        ax.set_ylabel("weight on B")
        ax.set_title(f"layer {int(layer)}", fontsize=10)
        ax.grid(True, which="both", alpha=0.2)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", fontsize=7, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle("Needle probe: [f, A, B, filler..., A]; the weight the query A puts on B (what an induction head attends to)")
    fig.tight_layout()
    save(fig, out_dir, "fig_needle", fmt, written)
