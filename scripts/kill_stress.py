#!/usr/bin/env python3
"""Kill stress test of `cosmic sweep` result files (docs/results-format.md, "Writing,
interruption, resume"): starts a sweep, sends it SIGKILL after a random delay, checks that every
dataset and attribute of the file reads with h5py and that the counters agree with the
reductions, resumes with --resume (killing the resumed run too, at random), and when a run
finishes compares the file with an uninterrupted run's, dataset by dataset (times aside).

    python3 scripts/kill_stress.py build/cosmic [--kills 200] [--jobs 2] [--keep all]
        [--shard 0/64] [--objectives runtime_x_bw,latency] [--psa data/psa/cosmic/X.yaml]

Prints one line per failure and a summary; exit status 1 when any kill left a file that does not
read, does not resume, or resumes to a different result. Needs h5py (Debian: python3-h5py).
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import h5py
import numpy as np

# Not compared: times, where and when the file was made, and which of the two copies of the
# reductions is published (/state).
NOT_COMPARED = {"wall_time_s", "configs_per_s", "evaluated_per_s", "backend", "device", "state_slot", "created", "host",
                "command_line"}


def walk(group, prefix=""):
    """Every dataset reachable by name (soft links followed), as (path, dataset)."""
    for name in group:
        obj = group[name]
        path = prefix + "/" + name
        if isinstance(obj, h5py.Group):
            yield from walk(obj, path)
        else:
            yield path, obj


def check_file(path):
    """Reads every dataset and attribute of every object (both copies under /state included),
    then checks the published counters against /reasons, /histogram and /all. Returns (kind,
    problems): kind "unreadable", "inconsistent" or "root_behind", or None."""
    bad, lag = [], []
    try:
        with h5py.File(path, "r") as f:
            # /all: the rows all_rows counts (the rows past them, written after the last publish,
            # need not read after a kill inside a flush; --resume cuts them).
            all_rows = f.attrs.get("all_rows")

            def read(name, obj):
                try:
                    for k in obj.attrs:
                        obj.attrs[k]
                    if isinstance(obj, h5py.Dataset):
                        obj[:all_rows] if all_rows is not None and obj.parent.name == "/all" else obj[()]
                except Exception as e:  # noqa: BLE001 (any read error is a failure)
                    bad.append(f"{name}: {e}")
            read("/", f)
            f.visititems(read)
            if bad:
                return "unreadable", bad
            # The published copy of the reductions (format 2: /state/current, with its own
            # next_index; format 1: the root) must agree with itself; the root's counters must
            # equal it (checked apart: a kill inside the publishing flush can leave them behind).
            a = f.attrs
            begin = int(a["range_begin"])
            counts = f["reasons/count"][()]
            codes = f["reasons/code"][()]
            if "state" in f:
                lo, hi = f["state/current"].attrs["next_index"]
                nxt = int(lo) + (int(hi) << 64)
            else:
                nxt = int(a["next_index"])
            if int(counts.sum()) != nxt - begin:
                bad.append(f"reasons/count sums to {counts.sum()}, next_index says {nxt - begin}")
            feasible = int(counts[codes == 0].sum())
            for obj in a["objectives"]:
                obj = obj.decode() if isinstance(obj, bytes) else obj
                h = f["histogram"][obj][()]
                if int(h.sum()) != feasible:
                    bad.append(f"histogram/{obj} sums to {h.sum()}, reason OK counts {feasible}")
            if (int(a["next_index"]), int(a["swept_count"]), int(a["feasible_count"])) != (nxt, nxt - begin, feasible):
                lag.append(f"root next_index {a['next_index']}, swept_count {a['swept_count']}, feasible_count "
                           f"{a['feasible_count']}; the published copy: {nxt}, {nxt - begin}, {feasible}")
            if "all" in f:
                rows = int(all_rows)
                short = [c for c, d in f["all"].items() if len(d) < rows]
                if short:
                    bad.append(f"/all columns shorter than all_rows = {rows}: {short}")
                index = f["all/index"][:rows]
                if np.any(index[:-1] >= index[1:]):
                    bad.append("/all/index not increasing")
                below = int(a["all_next_index"])
                if np.count_nonzero(index >= below):
                    bad.append("/all holds rows at or past all_next_index")
                if rows % 16384 and below != int(a["next_index"]):
                    bad.append("/all below all_next_index is not whole chunks")
    except Exception as e:  # noqa: BLE001 (the file does not open)
        return "unreadable", [f"open: {e}"]
    return ("inconsistent", bad) if bad else ("root_behind", lag) if lag else (None, [])


def differences(path, ref):
    out = []
    with h5py.File(path, "r") as a, h5py.File(ref, "r") as b:
        for k in b.attrs:
            if k in NOT_COMPARED:
                continue
            if k not in a.attrs:
                out.append(f"attribute {k} missing")
            elif not np.array_equal(np.asarray(a.attrs[k]), np.asarray(b.attrs[k])):
                out.append(f"attribute {k}: {a.attrs[k]!r} != {b.attrs[k]!r}")
        # /state holds the two copies of the reductions: the one not published depends on the batches.
        da = {p: d for p, d in walk(a) if not p.startswith("/state/")}
        db = {p: d for p, d in walk(b) if not p.startswith("/state/")}
        if sorted(da) != sorted(db):
            out.append(f"datasets differ: {sorted(set(da) ^ set(db))}")
        for p in db:
            if p in da and not np.array_equal(da[p][()], db[p][()]):
                out.append(f"{p} differs")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cosmic")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--psa", default=os.path.join(here, "..", "data", "psa", "cosmic", "collective-system1.yaml"))
    ap.add_argument("--objectives", help="comma-separated: replaces the PSA's objectives (two or more: a front)")
    ap.add_argument("--shard", default="0/64")  # 2.1M points (the PSA folded: 1.3e8)
    ap.add_argument("--keep", default="all")
    ap.add_argument("--batch-seconds", default="0.1")
    ap.add_argument("--kills", type=int, default=200, help="stop after this many kills")
    ap.add_argument("--jobs", type=int, default=2, help="sweeps run at once (one OpenMP thread each)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep-failed", help="copy files that failed a check into this folder")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="kill-stress-")
    psa = os.path.abspath(args.psa)
    if args.objectives:
        text = open(psa).read()
        lines = [ln for ln in text.splitlines() if not ln.startswith("objectives:")]
        psa = os.path.join(tmp, "stress.yaml")
        with open(psa, "w") as fh:
            fh.write("\n".join(lines + [f"objectives: [{args.objectives}]"]) + "\n")
    env = dict(os.environ, OMP_NUM_THREADS="1")

    def cmd(out, *extra):
        return [args.cosmic, "sweep", psa, "-o", out, "--quiet", "--backend", "cpu", "--shard", args.shard,
                "--keep", args.keep, "--batch-seconds", args.batch_seconds, *extra]

    ref = os.path.join(tmp, "ref.h5")
    t0 = time.time()
    subprocess.run(cmd(ref), env=env, check=True)
    span = time.time() - t0
    print(f"uninterrupted run: {span:.2f} s; kills after 0-{span:.2f} s", flush=True)

    lock = threading.Lock()
    stats = dict.fromkeys(("kills", "no_file", "trials", "finished", "unreadable", "inconsistent", "root_behind",
                           "resume_failed", "different"), 0)
    rng = random.Random(args.seed)

    def fail(kind, out, lines):
        with lock:
            stats[kind] += 1
            label = "NOTE" if kind == "root_behind" else "FAIL"
            print(f"{label} {kind} (kill {stats['kills']}): " + "; ".join(lines[:4]), flush=True)
            if args.keep_failed:
                os.makedirs(args.keep_failed, exist_ok=True)
                shutil.copy(out, os.path.join(args.keep_failed, f"{kind}-{stats['kills']}.h5"))

    def trial(job):
        out = os.path.join(tmp, f"job{job}.h5")
        while True:
            with lock:
                if stats["kills"] >= args.kills:
                    return
                stats["trials"] += 1
            if os.path.exists(out):
                os.remove(out)
            resume = False
            while True:
                with lock:
                    delay = rng.uniform(0, span)
                p = subprocess.Popen(cmd(out, *(["--resume"] if resume else [])), env=env,
                                     stderr=subprocess.PIPE, text=True)
                try:
                    _, err = p.communicate(timeout=delay)
                except subprocess.TimeoutExpired:
                    p.send_signal(signal.SIGKILL)
                    p.communicate()
                if p.returncode == 0:
                    break
                if p.returncode != -signal.SIGKILL:
                    fail("resume_failed", out, [f"exit {p.returncode}: {err.strip()}"])
                    break
                with lock:
                    stats["kills"] += 1
                    if stats["kills"] % 50 == 0:
                        print(f"{stats['kills']} kills, {stats['finished']} sweeps finished", flush=True)
                if not os.path.exists(out):  # killed before it created the file: start again
                    with lock:
                        stats["no_file"] += 1
                    resume = False
                    continue
                kind, bad = check_file(out)
                if kind:
                    fail(kind, out, bad)
                    # Go on: a file that does not read usually does not resume either.
                resume = True
            if p.returncode == 0:
                diff = differences(out, ref)
                if diff:
                    fail("different", out, diff)
                with lock:
                    stats["finished"] += 1

    threads = [threading.Thread(target=trial, args=(j,)) for j in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shutil.rmtree(tmp)
    print("kills {kills} ({no_file} before the file existed), sweeps started {trials}, finished {finished}\n"
          "failures: unreadable after a kill {unreadable}, inconsistent after a kill {inconsistent}, "
          "resume failed {resume_failed}, resumed to a different result {different}\n"
          "root counters behind the published reductions after a kill: {root_behind} "
          "(a kill inside the publishing flush; --resume republishes)".format(**stats))
    return 1 if sum(stats[k] for k in ("unreadable", "inconsistent", "resume_failed", "different")) else 0


if __name__ == "__main__":
    sys.exit(main())
