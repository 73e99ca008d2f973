#!/usr/bin/env python3
"""The tables of docs/cosmic-study.md, printed from a `cosmic study data/studies/cosmic.yaml`
output folder's summary.json (Markdown, in the page's order): sections 1-4 and the ranges its
comparison with the paper quotes.

usage: python3 scripts/study_tables.py DIR

Numbers only: the prose around them is written by hand from these and from DIR/report.md.
"""
import json
import os
import sys

SYSTEMS = ["system1", "system2", "system3"]
METRICS = [("bw", "runtime*bw"), ("cost", "runtime*cost")]


def gain(g):
    return "%.3gx" % g


def by_title(summary):
    return {c["title"]: c for c in summary["comparisons"]}


def per_system_metric(comps, title):
    """(system digit, metric name, comparison) for each system and metric of a titled family,
    title a format with the system and the metric's suffix (bw, cost)."""
    for s in SYSTEMS:
        for m, name in METRICS:
            yield s[-1], name, comps[title % (s, m)]


def rows_by_label(comp):
    return {r["label"]: r for r in comp["rows"]}


def main_gains(comps):
    labels = ["baseline (no search)", "workload only (sweep)", "collective only, 1 algorithm/dim (sweep)",
              "collective only, algorithm per type (sweep)", "network only (sweep)"]
    print("| system | metric | vs baseline | vs workload only | vs collective only (1 algorithm/dim, exact) "
          "| vs collective only (per type, exact) | vs network only (exact) |")
    print("|---|---|---|---|---|---|---|")
    for s, name, comp in per_system_metric(comps, "Full stack vs single stacks: %s, runtime_x_%s"):
        rows = rows_by_label(comp)
        cells = ["%s (time %s)" % (gain(rows[l]["gain_metric"]), gain(rows[l]["gain_time"])) for l in labels]
        print("| %s | %s | %s |" % (s, name, " | ".join(cells)))
    print()


def layout(config):
    """'dp .. cp .., zero3; <collectives>; Ring 4 @ 50 GB/s (AR ..) | ...' without the collectives:
    'dp .. cp .., zero3; Ring 4 @ 50, ...'."""
    workload, _, network = config.split("; ", 2)
    dims = [d.split(" (")[0].replace(" GB/s", "") for d in network.split(" | ")]
    return "%s; %s" % (workload, ", ".join(dims))


def winners(comps):
    print("| system | objective | time (s) | memory/NPU | bw/NPU (GB/s) | network | configuration |")
    print("|---|---|---|---|---|---|---|")
    for s, name, comp in per_system_metric(comps, "Full stack vs single stacks: %s, runtime_x_%s"):
        b = next(r for r in comp["rows"] if r["role"] == "target")["best"]
        print("| %s | %s | %.4g | %.1f GiB | %.4g | $%.3gM | %s |" % (
            s, name, b["time_s"], b["memory_bytes"] / 2**30, b["bandwidth_GBps"], b["network_cost_usd"] / 1e6,
            layout(b["config"])))
    print()


def latency(comps):
    labels = ["baseline (no search)", "workload only (sweep)", "collective only, 1 algorithm/dim (sweep)",
              "network only (sweep)"]
    print("| system | vs baseline | vs workload only | vs collective only | vs network only |")
    print("|---|---|---|---|---|")
    for s in SYSTEMS:
        rows = rows_by_label(comps["Full stack vs single stacks: %s, latency" % s])
        print("| %s | %s |" % (s[-1], " | ".join(gain(rows[l]["gain_metric"]) for l in labels)))
    print()


def same_budget(comps):
    print("| system | metric | workload + network (GA) | collective + network (GA) | network only (exact) |")
    print("|---|---|---|---|---|")
    for s, name, comp in per_system_metric(comps, "Full stack vs same-budget baselines: %s, runtime_x_%s"):
        cells = ["%s (%s)" % (gain(r["gain_metric"]), gain(r["gain_time"]))
                 for r in comp["rows"] if r["role"] == "baseline"]
        print("| %s | %s | %s |" % (s, name, " | ".join(cells)))
    print()


def gaps(comps):
    """Each agent run's gap to the exact optimum of a swept space."""
    spaces = [("workload only", "workload only"), ("network only", "network only"),
              ("collective, per type", "collective algorithm per type")]
    print("| system | metric | %s |" % " | ".join(label for label, _ in spaces))
    print("|---|---|%s" % ("---|" * len(spaces)))
    for s in SYSTEMS:
        for m, name in METRICS:
            cells = []
            for _, part in spaces:
                comp = comps["Agents vs the exact optimum, %s: %s, runtime_x_%s" % (part, s, m)]
                cells.append(", ".join("%.3f%%" % (100 * r["gap"]) if r["gap"] is not None else "-" for r in comp["rows"]))
            print("| %s | %s | %s |" % (s[-1], name, " | ".join(cells)))
    print()


def near_optimal(comps):
    print("| system | metric | workload (exact) | collective (exact) | network (exact) | full stack (evaluated) |")
    print("|---|---|---|---|---|---|")
    for s, name, comp in per_system_metric(comps, "Near-optimal configurations (within 1%%): %s, runtime_x_%s"):
        cells = []
        for r in comp["rows"]:
            capped = ">= " if r["capped"] else ""
            text = "%s%d structure%s" % (capped, r["structures"], "" if r["structures"] == 1 else "s")
            if r["genomes"] != r["structures"]:
                text += " (%s%s genomes)" % (capped, format(r["genomes"], ","))
            cells.append(text)
        print("| %s | %s | %s |" % (s, name, " | ".join(cells)))
    print()


def batch(comps):
    batches = ["1024", "2048", "4096", "8192", "16384"]
    print("| model | %s |" % " | ".join(batches))
    print("|---|%s" % ("---|" * len(batches)))
    for model in ["GPT3-175B", "LLaMA-7B", "ViT-Large"]:
        cells = []
        for b in batches:
            comp = comps["Batch study (System 2, runtime_x_bw): %s, global batch %s" % (model, b)]
            r = next(r for r in comp["rows"] if r["role"] == "baseline")
            cells.append("%s (%s)" % (gain(r["gain_metric"]), gain(r["gain_time"])))
        print("| %s | %s |" % (model, " | ".join(cells)))
    print()


def ranges(comps):
    """The ranges the comparison with the paper quotes."""
    def span(titles, keep=lambda label: label != "baseline (no search)", key="gain_metric"):
        values = [r[key] for t in titles for r in comps[t]["rows"]
                  if r["role"] == "baseline" and keep(r["label"]) and key in r]
        return "%s-%s" % (gain(min(values)), gain(max(values)))
    for m, name in METRICS:
        titles = ["Full stack vs single stacks: %s, runtime_x_%s" % (s, m) for s in SYSTEMS]
        print("%s: vs the searched single stacks %s" % (name, span(titles)))
        for s in SYSTEMS:
            print("  %s raw time: %s" % (s, span(["Full stack vs single stacks: %s, runtime_x_%s" % (s, m)],
                                                 key="gain_time")))
    print("batch study: %s" % span([t for t in comps if t.startswith("Batch study")]))
    print("same budget, workload + network: %s" % span([t for t in comps if t.startswith("Full stack vs same-budget")],
                                                       keep=lambda label: label.startswith("workload")))


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    with open(os.path.join(sys.argv[1], "summary.json")) as f:
        comps = by_title(json.load(f))
    for section in (main_gains, winners, latency, same_budget, gaps, near_optimal, batch, ranges):
        print("<!-- %s -->" % section.__name__)
        section(comps)


if __name__ == "__main__":
    main()
