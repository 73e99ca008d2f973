#!/usr/bin/env python3
"""Figures of a `cosmic study` output folder: DIR/figures/*.png.

usage: python3 scripts/study_plots.py DIR

Reads DIR/summary.json (written by `cosmic study`) and the HDF5 files it names; needs matplotlib
and h5py (Debian: python3-matplotlib, python3-h5py). One figure per comparison entry with a
`figure:` key in the study file:
  bars         full-stack gain over each single-stack result, on the metric and on raw time
  batch        the same gains against a study variable (x), one line per series
  convergence  best objective so far against evaluations, per run (agent and seed): steps,
               the last point marked (a run of one generation is that marker)
  pareto       the front of a two-objective experiment with the marked winners
"""
import json
import math
import os
import sys
from collections import OrderedDict

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 90


def entries(summary, figure):
    """Comparisons with this figure, grouped by the study file's entry they came from."""
    out = OrderedDict()
    for c in summary["comparisons"]:
        if c.get("figure") == figure:
            out.setdefault(c["entry"], []).append(c)
    return out


def vars_text(c):
    return ", ".join(str(v) for v in c["vars"].values()) or c["title"]


def save(fig, folder, name):
    fig.tight_layout()
    fig.savefig(os.path.join(folder, name), dpi=DPI)
    plt.close(fig)
    print("figure:", os.path.join(folder, name))


def bars(summary, folder):
    for entry, comps in entries(summary, "bars").items():
        labels = []
        for c in comps:
            for r in c["rows"]:
                if r["role"] == "baseline" and r["label"] not in labels:
                    labels.append(r["label"])
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        width = 0.8 / max(1, len(labels))
        for k, (key, title) in enumerate([("gain_metric", "gain on the study's metric"), ("gain_time", "gain on raw time")]):
            ax = axes[k]
            for i, lab in enumerate(labels):
                xs, ys = [], []
                for g, c in enumerate(comps):
                    for r in c["rows"]:
                        if r["role"] == "baseline" and r["label"] == lab and key in r:
                            xs.append(g + i * width)
                            ys.append(r[key])
                ax.bar(xs, ys, width, label=lab)
            ax.axhline(1.0, color="black", lw=0.8)
            ax.set_xticks([g + width * (len(labels) - 1) / 2 for g in range(len(comps))])
            # A comparison whose target (or every baseline) found no feasible point has no gain to draw: say so.
            ax.set_xticklabels([vars_text(c) + ("" if any(key in r for r in c["rows"]) else "\n(no feasible point)")
                                for c in comps], rotation=20, ha="right", fontsize=8)
            ax.set_yscale("log")
            ax.set_ylabel("baseline / full stack (x)")
            ax.set_title(title, fontsize=10)
        axes[1].legend(fontsize=6, loc="upper right")
        fig.suptitle(comps[0]["title"].split(":")[0], fontsize=10)
        save(fig, folder, "bars-%d.png" % entry)


def batch(summary, folder):
    for entry, comps in entries(summary, "batch").items():
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        series = OrderedDict()
        for c in comps:
            s = c["vars"].get(c["series"], "")
            x = float(c["vars"][c["x"]])
            for r in c["rows"]:
                if r["role"] == "baseline" and "gain_metric" in r:
                    series.setdefault((s, r["label"]), []).append((x, r["gain_metric"], r["gain_time"]))
        for (s, lab), pts in series.items():
            pts.sort()
            name = s if len({k[1] for k in series}) == 1 else "%s (%s)" % (s, lab)
            axes[0].plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=name)
            axes[1].plot([p[0] for p in pts], [p[2] for p in pts], "o-", label=name)
        for ax, t in zip(axes, ["gain on the study's metric", "gain on raw time"]):
            ax.set_xscale("log", base=2)
            ax.set_xlabel(comps[0]["x"])
            ax.set_ylabel("single stack / full stack (x)")
            ax.axhline(1.0, color="black", lw=0.8)
            ax.set_title(t, fontsize=10)
        axes[0].legend(fontsize=8)
        save(fig, folder, "batch-%d.png" % entry)


def panel_grid(n, width, height):
    """A figure of n panels, at most 3 a row, each width x height inches; the unused cells of the
    last row are hidden. Returns the figure and the n axes in order."""
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, grid = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[n:]:
        ax.axis("off")
    return fig, axes[:n]


def best_so_far(ax, evaluations, best, label):
    """Draws a run's best-so-far curve on ax: a step from each generation's evaluation count to
    the next (the best holds until a later generation improves it), with a marker on the last
    point, so that a run of one generation (or one feasible generation) shows as a marker rather
    than a line of no length. Returns the Line2D."""
    (line,) = ax.step(evaluations, best, where="post", lw=1, marker="o", ms=4, markevery=[len(best) - 1],
                      label=label)
    return line


def convergence(summary, folder, root):
    for entry, comps in entries(summary, "convergence").items():
        fig, axes = panel_grid(len(comps), 4.2, 3.3)
        for ax, c in zip(axes, comps):
            plotted = 0
            for r in c["rows"]:
                with h5py.File(os.path.join(root, r["file"]), "r") as f:
                    if "generations" not in f:
                        continue
                    ev = f["generations/evaluations"][:]
                    best = f["generations/best_objective"][:]
                ok = [i for i in range(len(best)) if math.isfinite(best[i])]
                label = "%s s%d" % (summary["experiments"][r["experiment"]]["method"], r["seed"])
                if ok:
                    best_so_far(ax, [ev[i] for i in ok], [best[i] for i in ok], label)
                else:  # nothing feasible: in the legend, with nothing to draw
                    ax.plot([], [], lw=1, label=label)
                plotted += len(ok)
            ax.set_title(c["title"], fontsize=8)
            if not plotted:  # no run found a feasible point: nothing to draw on log axes
                ax.text(0.5, 0.5, "no feasible point", ha="center", va="center", transform=ax.transAxes)
                continue
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("evaluations")
            ax.set_ylabel("best objective")
            ax.legend(fontsize=6)
        save(fig, folder, "convergence-%d.png" % entry)


def pareto(summary, folder, root):
    for entry, comps in entries(summary, "pareto").items():
        fig, axes = panel_grid(len(comps), 4.5, 3.6)
        for ax, c in zip(axes, comps):
            o0, o1 = c["objectives"]
            xs, ys = [], []
            for run in summary["experiments"][c["front"]]["runs"]:
                with h5py.File(os.path.join(root, run["file"]), "r") as f:
                    if "pareto" in f:
                        xs += list(f["pareto"][o1][:])
                        ys += list(f["pareto"][o0][:])
            # The seeds' fronts merged: the points no other one dominates (as the report counts them).
            pts, lowest = [], float("inf")
            for y, x in sorted(zip(ys, xs)):
                if x < lowest:
                    pts.append((x, y))
                    lowest = x
            pts.sort()
            ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color="gray", lw=1)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ".", color="gray", ms=3, label="front (%d)" % len(pts))
            for r in c["rows"]:
                if o1 in r:  # a marked experiment without a feasible point has none to draw
                    ax.plot([r[o1]], [r[o0]], "o", ms=7, label=r["label"])
            ax.set_xscale("log")
            ax.set_xlabel(o1 + (" ($)" if o1 == "cost" else ""))
            ax.set_ylabel(o0 + (" (s)" if o0 == "latency" else ""))
            ax.set_title(c["title"], fontsize=8)
            ax.legend(fontsize=6)
        save(fig, folder, "pareto-%d.png" % entry)


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    root = sys.argv[1]
    try:
        with open(os.path.join(root, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("study_plots.py: %s: no readable summary.json of a cosmic study (%s)" % (root, e))
    folder = os.path.join(root, "figures")
    os.makedirs(folder, exist_ok=True)
    bars(summary, folder)
    batch(summary, folder)
    try:  # these two read the experiments' HDF5 files
        convergence(summary, folder, root)
        pareto(summary, folder, root)
    except OSError as e:
        sys.exit("study_plots.py: %s: a result file of the study does not read (%s)" % (root, e))


if __name__ == "__main__":
    main()
