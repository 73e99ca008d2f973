#!/usr/bin/env python3
"""Agent quality study (docs/agents.md): optimality gap of each search agent against evaluations.

For each design space: `cosmic sweep` gives the true optimum where the space is small enough;
otherwise the reference is the best point any run found. Then `cosmic search` runs each agent
configuration with several seeds at the space's largest budget; the best-so-far curve of each
run (/generations/best_objective vs /generations/evaluations) gives the gap at every checkpoint,
gap = (best after N evaluations - optimum) / optimum. Prints Markdown tables: median gap and
[min, max] over the seeds, and how many seeds found the optimum (gap 0) by the full budget.

  scripts/agent_study.py                       # everything (about 15 minutes on 2 cores)
  scripts/agent_study.py --spaces workload     # one space
  scripts/agent_study.py --seeds 3 --out /tmp/s

Needs h5py (scripts/setup.sh installs it). Runs are cached in --out: delete it to rerun.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import h5py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (PSA, largest budget, checkpoints, exhaustive sweep possible)
SPACES = {
    "workload": ("data/psa/cosmic/workload-system1.yaml", 10_000, [100, 1_000, 10_000], True),
    "network": ("data/psa/cosmic/network-system1.yaml", 300_000, [1_000, 10_000, 100_000, 300_000], True),
    "reduced": ("data/psa/agents/fullstack-reduced-system1.yaml", 300_000, [1_000, 10_000, 100_000, 300_000], True),
    "collective": ("data/psa/cosmic/collective-system1.yaml", 300_000, [1_000, 10_000, 100_000, 300_000], False),
    "fullstack": ("data/psa/cosmic/fullstack-system1.yaml", 1_000_000, [1_000, 10_000, 100_000, 1_000_000], False),
}

# label: (agent, population, budget cap or None, extra --param values)
CONFIGS = {
    "rw": ("rw", 4096, None, []),
    "ga-64 (study)": ("ga", 64, None, []),
    "ga-4096": ("ga", 4096, None, []),
    "ga-16384": ("ga", 16384, None, []),
    "aco-32 (study)": ("aco", 32, None, []),
    "aco-1024": ("aco", 1024, None, []),
    "bo (TPE)": ("bo", 16, 5_000, []),
    "nsga2-4096": ("nsga2", 4096, None, []),
}


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + r.stderr)


def optimum(cosmic, psa, out):
    path = os.path.join(out, os.path.basename(psa).replace(".yaml", ".sweep.h5"))
    if not os.path.exists(path):
        run([cosmic, "sweep", psa, "-o", path, "-q", "--backend", "cpu"])
    with h5py.File(path) as f:
        obj = f.attrs["objectives"][0]
        obj = obj.decode() if isinstance(obj, bytes) else obj
        return float(f["top/%s/%s" % (obj, obj)][0])


def search(cosmic, psa, agent, pop, budget, seed, extra, path):
    if os.path.exists(path):
        with h5py.File(path) as f:
            if f.attrs.get("complete", 0) == 1:
                return
    cmd = [cosmic, "search", psa, "--agent", agent, "--population", str(pop), "--budget", str(budget),
           "--seed", str(seed), "-o", path, "-q", "--backend", "cpu"]
    for p in extra:
        cmd += ["--param", p]
    run(cmd)


def curve(path):
    with h5py.File(path) as f:
        g = f["generations"]
        return list(g["evaluations"][:]), list(g["best_objective"][:]), float(f.attrs["wall_time_s"])


def best_after(evals, best, n):
    """Best objective among the first n evaluations (whole generations), inf if none."""
    b = math.inf
    for e, v in zip(evals, best):
        if e > n:
            break
        b = v
    return b


def fmt_gap(gaps):
    """Median gap and [min, max] over the seeds; a seed that found nothing feasible counts as the
    worst (an infinite gap, "none"), so it moves the median up rather than dropping out of it."""
    if not any(math.isfinite(g) for g in gaps):
        return "-"
    pct = lambda g: "%.2f" % (100 * g) if math.isfinite(g) else "none"
    med = statistics.median(gaps)
    text = "%s%s [%s, %s]" % (pct(med), "%" if math.isfinite(med) else "", pct(min(gaps)), pct(max(gaps)))
    missing = sum(not math.isfinite(g) for g in gaps)
    return text + (" (%d/%d none feasible)" % (missing, len(gaps)) if missing else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cosmic", default=os.path.join(ROOT, "build", "cosmic"))
    ap.add_argument("--out", default="/tmp/cosmic-agent-study")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--spaces", default="workload,network,reduced,collective,fullstack")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    args = ap.parse_args()
    for kind, names, known in (("space", args.spaces, SPACES), ("configuration", args.configs, CONFIGS)):
        for name in names.split(","):
            if name not in known:
                ap.error("unknown %s '%s' (known: %s)" % (kind, name, ", ".join(known)))
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    # Paths given relative to where the script was started, before it moves to the repository.
    args.out, args.cosmic = os.path.abspath(args.out), os.path.abspath(args.cosmic)
    os.makedirs(args.out, exist_ok=True)
    os.chdir(ROOT)
    for space in args.spaces.split(","):
        psa, budget, checks, swept = SPACES[space]
        opt = optimum(args.cosmic, psa, args.out) if swept else None
        results = {}
        for label in args.configs.split(","):
            agent, pop, cap, extra = CONFIGS[label]
            b = min(budget, cap) if cap else budget
            runs = []
            t0 = time.time()
            for seed in range(1, args.seeds + 1):
                path = os.path.join(args.out, "%s.%s.s%d.h5" % (space, label.split()[0], seed))
                search(args.cosmic, psa, agent, pop, b, seed, extra, path)
                runs.append(curve(path))
            results[label] = (b, runs)
            print("  %s %s: %.0f s" % (space, label, time.time() - t0), file=sys.stderr, flush=True)
        ref = opt if opt is not None else min(r[1][-1] for _, runs in results.values() for r in runs)
        print("\n### %s (`%s`): %s %.6g\n" % (space, psa, "optimum (sweep)" if opt is not None else
                                             "best found by any run", ref))
        print("| agent | " + " | ".join("gap after %s evals" % format(c, ",") for c in checks) +
              " | gap at its budget | seeds at optimum | wall s / run |")
        print("|---" * (len(checks) + 4) + "|")
        for label, (b, runs) in results.items():
            cells = []
            for c in checks:
                if c > b:
                    cells.append("")
                    continue
                cells.append(fmt_gap([(best_after(e, v, c) - ref) / ref for e, v, _ in runs]))
            cells.append("%s (%s)" % (fmt_gap([(v[-1] - ref) / ref for e, v, _ in runs]), format(b, ",")))
            hits = sum(1 for e, v, _ in runs if v[-1] <= ref * (1 + 1e-12))
            wall = statistics.median(w for _, _, w in runs)
            print("| %s | %s | %d/%d | %.1f |" % (label, " | ".join(cells), hits, len(runs), wall))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
