#!/usr/bin/env python3
"""End-to-end test of `cosmic study` on data/studies/ci-small.yaml: runs the reduced study, then
checks report.md and summary.json against the HDF5 files they came from (best objective per
experiment, gains, gaps, near-optimal genome counts, budget limits, the time breakdown).

usage: test_study.py COSMIC_BINARY DATA_DIR
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_h5 import dimension_problems  # noqa: E402  (every group through xarray)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def best_from_h5(folder, exp):
    """(objective, time_s, network_cost_usd) of an experiment's best point, straight from its files."""
    obj = exp["objectives"][0]
    best = None
    for run in exp["runs"]:
        with h5py.File(os.path.join(folder, run["file"]), "r") as f:
            check(int(f.attrs["complete"]) == 1, run["file"] + " is not complete")
            if exp["method"] == "sweep":
                top = f["top"][obj]
                if len(top[obj]) == 0:
                    continue
                cand = (float(top[obj][0]), float(top["time_s"][0]), float(top["network_cost_usd"][0]))
            else:
                if "best" not in f or int(f["best"].attrs["feasible"]) != 1:
                    continue
                b = f["best"].attrs
                cand = (float(b[obj]), float(b["time_s"]), float(b["network_cost_usd"]))
        if best is None or cand[0] < best[0]:
            best = cand
    return best


def near_optimal_genomes(cosmic, folder, exp, within):
    """(distinct genomes within `within` of an experiment's best, whether a sweep's list was full), straight from
    its files: a sweep's /top list, a search's feasible /evaluated rows; genes `cosmic space` says a sweep folds
    (no result depends on them) count as their first value."""
    obj = exp["objectives"][0]
    bound = best_from_h5(folder, exp)[0] * (1 + within)
    r = subprocess.run([cosmic, "space", os.path.join(folder, exp["psa"]), "--json"], capture_output=True, text=True)
    check(r.returncode == 0, exp["psa"] + ": cosmic space failed: " + r.stderr)
    genes = json.loads(r.stdout)["genes"]
    seen, capped = set(), False
    for run in exp["runs"]:
        with h5py.File(os.path.join(folder, run["file"]), "r") as f:
            if exp["method"] == "sweep":
                t = f["top"][obj]
                v = t[obj][:]
                rows = [i for i in range(len(v)) if v[i] <= bound]
                capped = capped or (len(v) >= int(f.attrs["top_k"]) and len(v) > 0 and v[-1] <= bound)
            else:
                t = f["evaluated"]
                v, reason, violation = t[obj][:], t["reason"][:], t["violation"][:]
                rows = [i for i in range(len(v)) if reason[i] == 0 and violation[i] == 0 and v[i] <= bound]
            cols = [None if g["sweep_folds"] else t[g["name"]][:] for g in genes]
            for i in rows:
                seen.add(tuple(0 if c is None else int(c[i]) for c in cols))
    return len(seen), capped


def check_times(folder, summary, report):
    """summary.json's time breakdown is the sum of the runs' file attributes; each search's phases fit in its wall time."""
    keys = ("wall_s", "eval_s", "agent_s", "write_s", "writer_s")
    sums = {"sweeps": dict.fromkeys(keys, 0.0), "searches": dict.fromkeys(keys, 0.0)}
    counts = {"sweeps": 0, "searches": 0}
    for eid, e in summary["experiments"].items():
        kind = "sweeps" if e["method"] == "sweep" else "searches"
        for run in e["runs"]:
            counts[kind] += 1
            with h5py.File(os.path.join(folder, run["file"]), "r") as f:
                a = f.attrs
                sums[kind]["wall_s"] += float(a["wall_time_s"])
                if kind == "sweeps":
                    continue
                phases = 0.0
                for k in keys[1:]:
                    check(k in a, "%s: no attribute %s" % (run["file"], k))
                    check(float(a[k]) >= 0, "%s: %s < 0" % (run["file"], k))
                    sums[kind][k] += float(a[k])
                    if k != "writer_s":
                        phases += float(a[k])
                        check(close(run["times"][k], float(a[k])), "%s: summary %s differs from the file" % (eid, k))
                check(phases <= float(a["wall_time_s"]) * (1 + 1e-12), "%s: phases %r over the wall time %r"
                      % (run["file"], phases, float(a["wall_time_s"])))
    t = summary["time"]
    check(t["sweeps"]["runs"] == counts["sweeps"] and t["searches"]["runs"] == counts["searches"], "time: run counts")
    check(close(t["sweeps"]["wall_s"], sums["sweeps"]["wall_s"]), "time: sweeps' wall")
    for k in keys:
        check(close(t["searches"][k], sums["searches"][k]), "time: searches' " + k)
    s = t["searches"]
    check(close(s["other_s"], max(0.0, s["wall_s"] - s["eval_s"] - s["agent_s"] - s["write_s"])), "time: other_s")
    by = t["searches_by_method"]
    check(close(sum(m["wall_s"] for m in by.values()), s["wall_s"]), "time: methods do not add up")
    # At most `jobs` runs at a time: their wall times add up to at most jobs x the experiments' time.
    check(t["experiments_s"] * t["jobs"] >= t["sweeps"]["wall_s"] + s["wall_s"] - 1e-6,
          "time: runs longer than the experiments")
    check("## Where the time went" in report, "report lacks the time breakdown")
    check("| all searches | %d | %.1f |" % (s["runs"], s["wall_s"]) in report, "report's search total differs")


def untimed(x):
    """A summary without its times (wall_s, eval_s, ..., the time section), which differ run to run."""
    if isinstance(x, dict):
        return {k: untimed(v) for k, v in x.items() if k not in ("time", "times", "wall_s")}
    if isinstance(x, list):
        return [untimed(v) for v in x]
    return x


def fmt_gain(g):
    return "%.4gx" % g


def small_study_checks(cosmic, data):
    """A one-experiment study: --reuse runs an experiment again when its params change; bad seeds
    and bad hyperparameters are refused before any run, naming the study file's line."""
    psa = os.path.join(data, "psa", "cosmic", "workload-system3.yaml")
    # (a label is free text: braces that are no variable stay, for the figures' mathtext)
    head = "name: r\nexperiments:\n  - id: a\n    label: 'GA 2^{8}'\n    psa: %s\n    method: ga\n    budget: 256\n" % psa
    with tempfile.TemporaryDirectory() as tmp:
        def study(name, tail, *args):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(head + tail)
            return path, subprocess.run([cosmic, "study", path, "-o", os.path.join(tmp, "out"), "--quiet",
                                         "--no-plots", *args], capture_output=True, text=True)
        _, r = study("m1.yaml", "    seeds: [1]\n    params: {population: 32, mutation_rate: 0.05}\n")
        check(r.returncode == 0, "small study failed: " + r.stderr)
        _, r = study("m2.yaml", "    seeds: [1]\n    params: {population: 32, mutation_rate: 1}\n", "--reuse")
        check(r.returncode == 0 and "(reused)" not in r.stdout, "--reuse kept a run made with other params")
        _, r = study("m1.yaml", "    seeds: [1]\n    params: {population: 32, mutation_rate: 0.05}\n", "--reuse")
        check(r.returncode == 0 and "(reused)" not in r.stdout, "--reuse kept the run of m2's params")
        _, r = study("m1.yaml", "    seeds: [1]\n    params: {population: 32, mutation_rate: 0.05}\n", "--reuse")
        check("(reused)" in r.stdout, "--reuse ran an unchanged experiment again")
        # A same-budget experiment whose reference found nothing feasible: no budget, said with the place.
        path, r = study("oom.yaml", "    seeds: [1]\n    set: [\"base.workload.micro_batch=256\"]\n"
                        "  - id: b\n    psa: %s\n    top: 4\n    budget_of: {experiment: a, limit: cost}\n" % psa)
        check(r.returncode == 1 and path + ":10:" in r.stderr and "'a' found no feasible point" in r.stderr
              and "no cost budget" in r.stderr, "budget_of a reference without a feasible point: " + r.stderr)
        sweep = "  - {id: w, psa: %s}\n" % psa
        notcfg = os.path.join(tmp, "notcfg.txt")
        with open(notcfg, "w") as f:
            f.write("hello\n")
        for tail, says in (("    seeds: [1, 1]\n", ":8:16: key 'experiments.0.seeds.1': expected a seed not listed before"),
                           ("    seeds: [-1]\n", ":8:13: key 'experiments.0.seeds.0': expected a non-negative integer, got '-1'"),
                           ("    seeds: []\n", "at least one seed"),
                           ("    params: {populaton: 8}\n", ":8:25: experiment 'a': params: ga.populaton: unknown hyperparameter"),
                           # a hyperparameter's error at its own line (was the experiment's id)
                           ("    params:\n      population: abc\n",
                            ":9:19: experiment 'a': params: ga.population: expected an integer"),
                           ("    params: {population: ''}\n", ":8:26: key 'experiments.0.params.population': expected a value"),
                           # an objective checked in the study file (was: in the PSA file written from it)
                           ("    objective: runtime_x_bww\n", ":8:16: key 'experiments.0.objective': expected one of latency"),
                           ("comparisons:\n  - {kind: convergence, experiments: [a], figure: ''}\n",
                            ":9:51: key 'comparisons.0.figure': expected bars"),
                           # an absent key: the line of the mapping that lacks it
                           ("  - {id: b, psa: %s, method: ga}\n" % psa, ":8:5: key 'experiments.1.budget'"),
                           # two experiments' runs writing one file
                           ("    seeds: [1]\n  - {id: a-s1, psa: %s}\n" % psa, "would both write a-s1.h5"),
                           # comparisons that cannot be reported, refused before any run
                           (sweep.replace("}", ", objective: latency}") + "comparisons:\n  - {kind: gain, target: w, baselines: [a]}\n",
                            "a optimises runtime_x_bw, w latency"),
                           ("comparisons:\n  - {kind: pareto, front: a}\n", "front a has one objective"),
                           (sweep + "comparisons:\n  - {kind: convergence, experiments: [a, w]}\n", "'w' is a sweep"),
                           ("comparisons:\n  - {kind: convergence, experiments: [a], figure: bars}\n", "bars draws gain"),
                           (sweep + "comparisons:\n  - {kind: gain, target: w, baselines: [a], figure: batch}\n",
                            "a variable of this comparison's `for:`"),
                           ("comparisons:\n  - {kind: gain, target: a, baselines: [a]}\n", "other than the target"),
                           (sweep + "comparisons:\n  - {kind: gain, target: w, baselines: [a, a]}\n",
                            "key 'comparisons.0.baselines': expected distinct experiment ids ('a' twice)"),
                           ("comparisons:\n  - {kind: convergence, experiments: [a], title: ''}\n",
                            "key 'comparisons.0.title': expected a title"),
                           # a {var} the entry does not define (was: "expected letters, digits...")
                           ("  - {id: 'b-{nope}', psa: %s}\n" % psa, ":8:10: key 'experiments.1.id': expected variables of the "
                            "entry's `for:` in braces ('{nope}' is not one: the entry has no `for:`)"),
                           # a `set: [base=FILE]` whose FILE is no configuration (its text was quoted)
                           ("    set: [base=%s]\n" % notcfg, notcfg + ": expected a mapping with model, system and workload"),
                           (sweep + "comparisons:\n  - {kind: gap, target: w, agents: [a]}\n",
                            "key 'comparisons.0.target': expected nothing for kind gap, which takes optimum and agents"),
                           ("    seeds: [1]\n  - {id: b, psa: %s, method: rw, budget: 64, objective: latency}\n"
                            "comparisons:\n  - {kind: convergence, experiments: [a, b]}\n" % psa, "b optimises latency, a"),
                           # a preset a `set` picks that does not exist: the edit named, not the base file's line 1
                           ("    set: [base.model=NoSuch]\n", "experiment 'a': set: key 'model': no model preset or file named 'NoSuch'"),
                           # an error in the PSA file written from a `set`: named as kept in DIR/psa
                           ("    set: [base.workload.dq=4]\n", os.path.join(tmp, "out", "psa", "a.yaml") + ":")):
            path, r = study("bad.yaml", tail)
            # `says` from ":LINE:COL:" on must follow the file name; otherwise anywhere after it
            where = path + says if says.startswith(":") else path + ":"
            check(r.returncode != 0 and where in r.stderr and says in r.stderr,
                  "bad study accepted or unclear: %r -> %s" % (tail, r.stderr))
            check("[1/" not in r.stdout, "a bad study ran an experiment first")
        # A `set` edit of a key the base's preset holds (System 3's pod bandwidth) reaches it, as
        # `cosmic sweep --set` does (the study applied it before the preset was read: refused).
        edit = "base.system.network.dims.3.bandwidth_GBps=50"
        path = os.path.join(tmp, "preset_key.yaml")
        with open(path, "w") as f:
            f.write("name: p\nexperiments:\n  - {id: s, psa: %s, set: [\"%s\"]}\n" % (psa, edit))
        r = subprocess.run([cosmic, "study", path, "-o", os.path.join(tmp, "pk"), "--quiet", "--no-plots"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "a study's edit of a preset's key failed: " + r.stderr)
        swept = os.path.join(tmp, "pk-sweep.h5")
        subprocess.run([cosmic, "sweep", psa, "--set", edit, "-q", "-o", swept], check=True)
        with h5py.File(swept, "r") as a, h5py.File(os.path.join(tmp, "pk", "s.h5"), "r") as b:
            for name in a["top"]:  # (the study keeps a sweep's best 1,000, the sweep its best 10)
                check(list(a["top"][name][name][:]) == list(b["top"][name][name][:10]),
                      "the study's edited sweep differs from cosmic sweep --set on " + name)
        # A study refused before any run (by the checks of its experiments' spaces, once it holds
        # the folder) leaves no folder it made.
        fresh = os.path.join(tmp, "fresh")
        with open(os.path.join(tmp, "refused.yaml"), "w") as f:
            f.write(head + "  - {id: w, psa: %s, objective: latency}\n"
                    "comparisons:\n  - {kind: gain, target: w, baselines: [a]}\n" % psa)
        r = subprocess.run([cosmic, "study", os.path.join(tmp, "refused.yaml"), "-o", fresh, "--quiet", "--no-plots"],
                           capture_output=True, text=True)
        check(r.returncode != 0 and "a optimises runtime_x_bw, w latency" in r.stderr and not os.path.exists(fresh),
              "a refused study left its folder: " + r.stderr)
        # ... and nothing of a folder that was there: one reached through a folder it made
        # (kept/new/..), nor its claim on one (no .cosmic-study in it after a refusal).
        kept = os.path.join(tmp, "kept")
        os.makedirs(kept)
        with open(os.path.join(kept, "data.txt"), "w") as f:
            f.write("mine\n")
        for out_dir in (os.path.join(kept, "new", ".."), kept):
            r = subprocess.run([cosmic, "study", os.path.join(tmp, "refused.yaml"), "-o", out_dir, "--quiet", "--no-plots"],
                               capture_output=True, text=True)
            check(r.returncode != 0 and os.path.exists(os.path.join(kept, "data.txt"))
                  and not os.path.exists(os.path.join(kept, ".cosmic-study")),
                  "a refused study changed a folder it did not make (%s): %s" % (out_dir, os.listdir(kept)))
        # A folder holds one study's results: another study is refused, the folder left as it was.
        other = os.path.join(tmp, "other.yaml")
        with open(other, "w") as f:
            f.write(head.replace("name: r", "name: q") + "    seeds: [1]\n")
        out = os.path.join(tmp, "out")
        before = {n: os.path.getmtime(os.path.join(out, n)) for n in os.listdir(out)}
        r = subprocess.run([cosmic, "study", other, "-o", out, "--quiet", "--no-plots"], capture_output=True, text=True)
        check(r.returncode == 1 and out + ": holds the results of study 'r', not of 'q'" in r.stderr,
              "a study wrote into another study's folder: " + r.stderr)
        check({n: os.path.getmtime(os.path.join(out, n)) for n in os.listdir(out)} == before,
              "a refused study changed the folder")
        # One study at a time in a folder: a second one is refused while the first runs.
        first = subprocess.Popen([cosmic, "study", os.path.join(data, "studies", "ci-small.yaml"), "-o",
                                  os.path.join(tmp, "busy"), "--quiet", "--no-plots"], stdout=subprocess.DEVNULL)
        try:
            for _ in range(200):  # its first PSA file is written once it holds the folder
                if os.path.isdir(os.path.join(tmp, "busy", "psa")) and os.listdir(os.path.join(tmp, "busy", "psa")):
                    break
                time.sleep(0.05)
            path = os.path.join(tmp, "m1.yaml")
            r = subprocess.run([cosmic, "study", path, "-o", os.path.join(tmp, "busy"), "--quiet", "--no-plots"],
                               capture_output=True, text=True)
            check(r.returncode != 0 and "another cosmic study is writing this folder" in r.stderr,
                  "a second study ran into a folder in use: " + r.stderr)
        finally:
            check(first.wait(timeout=300) == 0, "the first study failed")


def check_one_point_curve():
    """A convergence curve of one point (a search of one generation) shows: scripts/study_plots.py
    draws something at the point, not a line of no length."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    import numpy as np
    import study_plots
    fig, ax = study_plots.plt.subplots(figsize=(3, 3))
    line = study_plots.best_so_far(ax, [2048], [4.5], "one generation")
    ax.set_xscale("log")
    ax.set_yscale("log")
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[:, :, :3].astype(int)
    x, y = ax.transData.transform((2048, 4.5))
    row, col = int(round(image.shape[0] - y)), int(round(x))
    patch = image[row - 2:row + 3, col - 2:col + 3]
    color = 255 * np.array(study_plots.matplotlib.colors.to_rgb(line.get_color()))
    check(np.abs(patch - color).sum(axis=2).min() < 60, "a one-point convergence curve draws nothing at its point")
    study_plots.plt.close(fig)


def main():
    cosmic, data = sys.argv[1], sys.argv[2]
    small_study_checks(cosmic, data)
    study = os.path.join(data, "studies", "ci-small.yaml")
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([cosmic, "study", study, "-o", out, "--quiet"], capture_output=True, text=True)
        print(r.stdout[-3000:], r.stderr[-3000:])
        check(r.returncode == 0, "cosmic study failed")
        check("report: " in r.stdout, "no report path printed")
        report = open(os.path.join(out, "report.md")).read()
        summary = json.load(open(os.path.join(out, "summary.json")))
        exps = summary["experiments"]

        # Every experiment's best point equals what its HDF5 files hold.
        for eid, e in exps.items():
            h = best_from_h5(out, e)
            if h is None:
                check(not e["best"]["found"], eid + ": summary has a best point, the files none")
                continue
            b = e["best"]
            check(b["found"], eid + ": no best point in summary")
            check(close(b["objective"], h[0], 1e-12), "%s: objective %r vs file %r" % (eid, b["objective"], h[0]))
            check(close(b["time_s"], h[1]), "%s: time %r vs file %r" % (eid, b["time_s"], h[1]))
            check(close(b["network_cost_usd"], h[2]), "%s: cost %r vs file %r" % (eid, b["network_cost_usd"], h[2]))
            if e["objectives"][0] == "runtime_x_bw":  # objective = time x bw / 2000
                check(close(b["bandwidth_GBps"], h[0] * 2000 / h[1], 1e-9), eid + ": bandwidth inconsistent")
            # Same-budget experiments stay within the full-stack winner's bandwidth or dollars.
            if "budget_of" in e:
                ref = exps[e["budget_of"]["experiment"]]["best"]
                key = "bandwidth_GBps" if e["budget_of"]["limit"] == "bandwidth" else "network_cost_usd"
                check(close(e["budget_of"]["value"], ref[key]), eid + ": limit is not the reference's " + key)
                check(b[key] <= ref[key] * (1 + 1e-9), "%s: %s %r over the limit %r" % (eid, key, b[key], ref[key]))

        kinds = set()
        rows_checked = {"gain": 0, "gap": 0, "near_optimal": 0, "convergence": 0}  # rows compared with the HDF5 files
        for c in summary["comparisons"]:
            kinds.add(c["kind"])
            check(("## " + c["title"]) in report, "report lacks section " + c["title"])
            if c["kind"] == "gain":
                t = best_from_h5(out, exps[c["target"]])
                for row in c["rows"]:
                    if row["role"] != "baseline" or "gain_metric" not in row:
                        continue
                    b = best_from_h5(out, exps[row["experiment"]])
                    gm, gt = b[0] / t[0], b[1] / t[1]
                    check(close(row["gain_metric"], gm), "%s: gain %r vs %r" % (row["experiment"], row["gain_metric"], gm))
                    check(close(row["gain_time"], gt), "%s: time gain %r vs %r" % (row["experiment"], row["gain_time"], gt))
                    check(close(row["gain_denominator"] * gt, gm), row["experiment"] + ": split does not multiply out")
                    line = [l for l in report.splitlines() if l.startswith("| " + row["label"].replace("|", "\\|") + " |")]
                    check(any(fmt_gain(gm) in l and fmt_gain(gt) in l for l in line),
                          "report row of %s lacks %s / %s" % (row["experiment"], fmt_gain(gm), fmt_gain(gt)))
                    rows_checked["gain"] += 1
            elif c["kind"] == "gap":
                opt = best_from_h5(out, exps[c["optimum"]])[0]
                check(close(c["optimum_value"], opt, 1e-12), "gap: optimum differs")
                for row in c["rows"]:
                    check(row["best"] >= opt * (1 - 1e-12), "an agent beat the exhaustive optimum")
                    check(close(row["gap"], row["best"] / opt - 1), "gap value")
                    check(("%.3f%%" % (100 * row["gap"])) in report, "gap not in report")
                    rows_checked["gap"] += 1
            elif c["kind"] == "near_optimal":
                for row in c["rows"]:
                    check(1 <= row["structures"] <= row["genomes"], "near-optimal counts")
                    genomes, capped = near_optimal_genomes(cosmic, out, exps[row["experiment"]], c["within"])
                    check(row["genomes"] == genomes and row["capped"] == capped,
                          "%s: %r genomes within (capped %r), the files hold %r (%r)" %
                          (row["experiment"], row["genomes"], row["capped"], genomes, capped))
                    rows_checked["near_optimal"] += 1
            elif c["kind"] == "convergence":
                rows = [r for r in c["rows"] if r["best"] is not None]
                best_all = min(r["best"] for r in rows)
                for row in c["rows"]:
                    check(exps[row["experiment"]]["method"] != "sweep", "a sweep in a convergence comparison")
                    with h5py.File(os.path.join(out, row["file"]), "r") as f:
                        curve = f["generations/best_objective"][:]
                        evals = f["generations/evaluations"][:]
                        check(row["evaluations"] == int(f.attrs["evaluated_count"]), row["file"] + ": evaluations")
                    if row["best"] is not None:
                        check(close(row["best"], float(curve[-1])), row["file"] + ": best is not the curve's last")
                    reached = [int(e) for b, e in zip(curve, evals) if b <= best_all * 1.01]
                    check(row["to_within_1pct"] == (reached[0] if reached else None), row["file"] + ": evaluations to 1%")
                    rows_checked["convergence"] += 1
            elif c["kind"] == "pareto":
                # The seeds' fronts merged from the files: the points no other one dominates.
                o0, o1 = c["objectives"]
                pts = []
                for run in exps[c["front"]]["runs"]:
                    with h5py.File(os.path.join(out, run["file"]), "r") as f:
                        pts += list(zip(f["pareto"][o0][:], f["pareto"][o1][:]))
                front, lowest = 0, float("inf")
                for _, y in sorted(pts):
                    if y < lowest:
                        front, lowest = front + 1, y
                check(len(exps[c["front"]]["runs"]) > 1 and front < len(pts), "the front's seeds are not merged here")
                check(c["front_points"] == front >= 1, "front points %r, the files' merged front %r" % (c["front_points"], front))
                # Each mark's values are its best point's metrics, by objective.
                metric = {"latency": "time_s", "cost": "network_cost_usd", "memory": "memory_bytes"}
                for row in c["rows"]:
                    b = exps[row["experiment"]]["best"]
                    for o in (o0, o1):
                        check(close(row[o], b[metric[o]]), "%s: %s %r, its best point's %r" % (row["experiment"], o, row[o], b[metric[o]]))
        check(kinds == {"gain", "gap", "near_optimal", "convergence", "pareto"}, "comparison kinds: %r" % kinds)
        check(all(n > 0 for n in rows_checked.values()), "comparisons without rows checked: %r" % rows_checked)
        check_times(out, summary, report)
        # Every group of every run's file opens in xarray with its dimensions, no phony_dims.
        if importlib.util.find_spec("xarray") and importlib.util.find_spec("h5netcdf"):
            for name in sorted(os.listdir(out)):
                if name.endswith(".h5"):
                    problems = dimension_problems(os.path.join(out, name))
                    check(not problems, name + ": " + "; ".join(problems))
        else:
            print("xarray check skipped: no xarray or h5netcdf")

        figs = os.path.join(out, "figures")
        if os.path.isdir(figs):
            pngs = sorted(os.listdir(figs))
            print("figures:", pngs)
            for want in ("bars-0.png", "convergence-4.png", "pareto-5.png", "batch-6.png"):
                check(want in pngs, "missing figure " + want)
            check_one_point_curve()
        else:
            check("study_plots.py" in r.stdout, "no figures and no hint how to make them")

        # --reuse: nothing is run again, the numbers are the same.
        r2 = subprocess.run([cosmic, "study", study, "-o", out, "--quiet", "--reuse", "--no-plots"],
                            capture_output=True, text=True)
        check(r2.returncode == 0, "--reuse failed: " + r2.stderr)
        check(r2.stdout.count("(reused)") == len(exps), "--reuse ran some experiments again")
        again = json.load(open(os.path.join(out, "summary.json")))
        for eid, e in exps.items():
            check(again["experiments"][eid]["best"] == e["best"], eid + ": --reuse changed the best point")
        # The time around the runs counts this invocation's runs only (it read -434 s once).
        around = again["time"]["around_runs_s"]
        check(0 <= around <= again["time"]["experiments_s"], "--reuse: time around the runs %r" % around)
        check("reused runs' times above are from their files" in open(os.path.join(out, "report.md")).read(),
              "--reuse: the report does not say where reused runs' times come from")
        # Sweep files written before sweeps folded genes (no fold attributes): reused where nothing
        # would fold (workload), swept again where something would (the collective policy).
        with h5py.File(os.path.join(out, exps["s3-bw-workload"]["runs"][0]["file"]), "r+") as f:
            del f.attrs["fold_copies"]
        with h5py.File(os.path.join(out, exps["s3-bw-collective"]["runs"][0]["file"]), "r+") as f:
            check(list(f.attrs["folded_genes"]) == ["collective.policy"], "collective sweep: folded genes")
            del f.attrs["fold_copies"], f.attrs["folded_genes"]
        r4 = subprocess.run([cosmic, "study", study, "-o", out, "--quiet", "--reuse", "--no-plots"],
                            capture_output=True, text=True)
        check(r4.returncode == 0, "--reuse failed: " + r4.stderr)
        lines = {l.split()[1]: l for l in r4.stdout.splitlines() if l.startswith("[")}
        check("(reused)" in lines["s3-bw-workload"], "--reuse swept an unfolded workload file again")
        check("(reused)" not in lines["s3-bw-collective"], "--reuse kept an unfolded collective sweep")
        check(r4.stdout.count("(reused)") == len(exps) - 1, "--reuse: other experiments ran again")

        # --jobs 3: the runs as child processes, three at a time (each with a third of the
        # threads), finishing in another order; the same results, times aside.
        with tempfile.TemporaryDirectory() as out3:
            r3 = subprocess.run([cosmic, "study", study, "-o", out3, "--quiet", "--no-plots", "--jobs", "3"],
                                capture_output=True, text=True)
            check(r3.returncode == 0, "--jobs 3 failed: " + r3.stderr)
            par = json.load(open(os.path.join(out3, "summary.json")))
            check(par["time"]["jobs"] == 3, "summary does not record --jobs")
            check_times(out3, par, open(os.path.join(out3, "report.md")).read())
            check(untimed(par) == untimed(summary), "--jobs 3 gave other results than one run at a time")
    check_runs_stop_with_a_killed_study(cosmic)
    print("ok")


def check_runs_stop_with_a_killed_study(cosmic):
    """A study killed outright (SIGKILL, which it cannot pass on) takes its --jobs runs with it:
    they get SIGTERM and leave valid, resumable files, rather than run on for no one."""
    with tempfile.TemporaryDirectory() as d:
        study, out = os.path.join(d, "long.yaml"), os.path.join(d, "out")
        with open(study, "w") as f:
            f.write("name: long\nexperiments:\n  - id: long\n    psa: psa/cosmic/fullstack-system1.yaml\n"
                    "    objective: runtime_x_bw\n    method: ga\n    budget: 1000000000\n    seeds: [1, 2]\n"
                    "    params: {population: 20000}\n")
        p = subprocess.Popen([cosmic, "study", study, "-o", out, "--jobs", "2", "--no-plots", "-q"])
        files = [os.path.join(out, f"long-s{s}.h5") for s in (1, 2)]
        deadline = time.time() + 60
        while time.time() < deadline and not all(os.path.exists(f) for f in files):
            time.sleep(0.2)
        check(all(os.path.exists(f) for f in files), "the study's runs did not start")
        p.kill()
        p.wait()
        def running():  # the processes whose command line names the study's folder
            found = []
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as c:
                        if out.encode() in c.read():
                            found.append(pid)
                except OSError:
                    pass
            return found
        deadline = time.time() + 30
        while time.time() < deadline and running():
            time.sleep(0.2)
        left = running()
        for pid in left:  # (not left to run on, nor to hold the folder this test removes)
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass
        check(not left, "runs went on after their study was killed: " + " ".join(left))
        for f in files:
            shown = subprocess.run([cosmic, "show", f], capture_output=True, text=True)
            check(shown.returncode == 0 and "incomplete (stopped: signal)" in shown.stdout,
                  f"{f} after the study was killed: " + shown.stdout + shown.stderr)


if __name__ == "__main__":
    main()
