#!/usr/bin/env python3
"""Kill stress test of `cosmic search` result files (docs/results-format.md, "Writing,
interruption, resume"). For each agent and --keep setting: one uninterrupted reference run, then
trials that each start the same search, send it SIGKILL after a random delay, resume it up to
--max-kills more times while killing each resume at random too, and finally resume it to the end.
The finished file must equal the reference dataset by dataset (per-generation timings aside) and
in its counters.

    python3 scripts/kill_stress_search.py build/cosmic [--trials 10] [--seed 1]
        [--runs ga:7000:80000,nsga2:3000:60000] [--keep all,feasible,none]
        [--psa data/psa/cosmic/fullstack-system2.yaml] [--max-kills 2] [--checkpoint S]

Prints one line per trial and a summary; exit status 1 when any trial failed. Needs h5py.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

TIMINGS = {"wall_s", "agent_s", "eval_s"}  # /generations columns that differ run to run
COUNTERS = ("evaluated_count", "feasible_count", "best_objective", "complete")


def differences(path, ref_path):
    """Names of the datasets and counters where `path` differs from `ref_path`."""
    bad = []
    with h5py.File(path, "r") as f, h5py.File(ref_path, "r") as ref:
        for group in ("evaluated", "generations", "pareto", "best"):
            if (group in f) != (group in ref):
                bad.append(group)
                continue
            if group not in ref:
                continue
            names = set(f[group]) | set(ref[group])
            for name in sorted(names - TIMINGS if group == "generations" else names):
                if name not in f[group] or name not in ref[group] or \
                        not np.array_equal(f[group][name][()], ref[group][name][()]):
                    bad.append(group + "/" + name)
        bad += [k for k in COUNTERS if f.attrs.get(k) != ref.attrs.get(k)]
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cosmic")
    ap.add_argument("--trials", type=int, default=10, help="trials per agent and --keep")
    ap.add_argument("--seed", type=int, default=1, help="seed of the kill times")
    ap.add_argument("--runs", default="ga:7000:80000,nsga2:3000:60000", help="agent:population:budget,...")
    ap.add_argument("--keep", default="all,feasible,none", help="--keep settings; 'default' passes none (older builds)")
    ap.add_argument("--psa", default=os.path.join(os.path.dirname(__file__), "..", "data", "psa", "cosmic",
                                                  "fullstack-system2.yaml"))
    ap.add_argument("--max-kills", type=int, default=2, help="most kills of resumed sessions per trial")
    ap.add_argument("--checkpoint", help="cosmic search --checkpoint S (seconds between checkpoints; 0: every generation)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    work = tempfile.mkdtemp(prefix="cosmic-kill-search-")
    failed = total = 0
    for run in args.runs.split(","):
        agent, population, budget = run.split(":")
        for keep in args.keep.split(","):
            base = [args.cosmic, "search", args.psa, "--agent", agent, "--param", f"{agent}.population={population}",
                    "--budget", budget, "--seed", "3", "--backend", "cpu", "--quiet"]
            base += [] if keep == "default" else ["--keep", keep]
            base += [] if args.checkpoint is None else ["--checkpoint", args.checkpoint]
            # --resume takes the settings from the file (and refuses any given again that differ).
            resume = [args.cosmic, "search", args.psa, "--backend", "cpu", "--quiet", "--resume"]
            resume += [] if args.checkpoint is None else ["--checkpoint", args.checkpoint]
            ref = os.path.join(work, f"ref-{agent}-{keep}.h5")
            t0 = time.time()
            subprocess.run(base + ["-o", ref], env=env, check=True)
            full_s = time.time() - t0
            for trial in range(args.trials):
                out = os.path.join(work, "killed.h5")
                if os.path.exists(out):
                    os.remove(out)
                kills = 0
                command = base + ["-o", out]
                for attempt in range(1 + rng.randint(0, args.max_kills)):
                    p = subprocess.Popen(command, env=env)
                    time.sleep(rng.uniform(0.02, full_s))
                    p.send_signal(signal.SIGKILL)
                    kills += p.wait() == -signal.SIGKILL
                    if not os.path.exists(out):
                        break
                    command = resume + ["-o", out]
                label = f"{agent} --keep {keep} trial {trial} ({kills} kills)"
                if not os.path.exists(out):
                    print(label, "no file left: nothing to resume (not counted)")
                    continue
                total += 1
                r = subprocess.run(resume + ["-o", out], env=env, capture_output=True, text=True)
                bad = ["resume failed: " + r.stderr.strip()[-300:]] if r.returncode else differences(out, ref)
                failed += bool(bad)
                print(label, "OK" if not bad else "FAILED " + ", ".join(bad), flush=True)
    print(f"{total - failed} of {total} trials resumed to the uninterrupted run's file")
    if failed:
        print("files left in", work)
        return 1
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
