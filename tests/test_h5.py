#!/usr/bin/env python3
"""End-to-end tests of `cosmic sweep` / `cosmic merge` / `cosmic search` result files, read with
h5py (Debian's python3-h5py) and, when importable, xarray.

    python3 tests/test_h5.py COSMIC_BINARY DATA_DIR     (ctest runs it)

The sweeps and searches take `--backend cpu`, or COSMIC_TEST_BACKEND's value (bench/gpu_check.sh
runs the file with `cuda` on a machine with a GPU); the few runs that name no backend take `auto`.

Checks: the attributes of docs/results-format.md; top-1 equal to the best of the points the
sweep kept with --keep all and to a brute force of one `cosmic eval` per point; evaluated count
equal to `cosmic space`'s feasible count; shards merged equal to one sweep; an interrupted
sweep (SIGINT, SIGKILL) leaves a file whose every dataset reads, marked incomplete, and
--resume finishes it with the same result as an uninterrupted run. Search files: the time
breakdown attributes, /evaluated through xarray, and a search killed (SIGKILL) while its
background writer runs leaves a file whose every dataset reads, and that --resume finishes with
the uninterrupted run's rows. A run that ends before its signal is retried with more work; the
test fails when none was interrupted.
"""
import concurrent.futures
import importlib.util
import json
import re
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import numpy as np

COSMIC = DATA = None
BACKEND = os.environ.get("COSMIC_TEST_BACKEND", "cpu")


def sweep(psa, out, *args, check=True):
    cmd = [COSMIC, "sweep", os.path.join(DATA, "psa", "cosmic", psa), "-o", out, "--quiet", *args]
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def points_psa(folder):
    """A small space (224 points, two objectives) with a gene no result depends on
    (collective.policy, which a sweep folds); returns the PSA file's path."""
    psa = os.path.join(folder, "points.yaml")
    with open(psa, "w") as f:
        f.write("base: " + os.path.join(DATA, "configs", "cosmic-system1-baseline.yaml") + "\n"
                "parameters:\n  workload: {dp: {pow2: {min: 1, max: 64}}, recompute: [none, full]}\n"
                "  collective: {policy: [LIFO, FIFO]}\n"
                "  network: {topology.1: [Ring, FullyConnected], npu_bandwidth_GBps.1: [100, 150]}\n"
                "derived: {tp: auto}\nobjectives: [latency, network_cost]\n")
    return psa


def top1(path):
    with h5py.File(path, "r") as f:
        obj = f.attrs["objectives"][0]
        if isinstance(obj, bytes):
            obj = obj.decode()
        g = f["top"][obj]
        return int(g["index"][0]), float(g[obj][0])


def read_everything(path, all_rows=False):
    """Reads every dataset and attribute of a file, through the soft links (/top, ... and
    /state/current) and under /state (both copies of the reductions); raises if one does not read.
    all_rows: of /all, only the rows the all_rows attribute counts (after a kill, the rows past them
    need not read)."""
    with h5py.File(path, "r") as f:
        def walk(g):
            for k in g.attrs:
                g.attrs[k]
            for name in g:
                obj = g[name]
                if isinstance(obj, h5py.Group):
                    walk(obj)
                else:
                    obj[:f.attrs["all_rows"]] if all_rows and obj.parent.name == "/all" else obj[()]
                    for k in obj.attrs:
                        obj.attrs[k]
        walk(f)


def h5_groups(path):
    """The groups of a result file that hold datasets, by path from the root, soft links followed
    (so a sweep's /top, /pareto, /histogram and /reasons are listed as well as /state/0, /state/1
    and /state/current)."""
    found = []
    with h5py.File(path, "r") as f:
        def walk(g, at):
            if any(isinstance(g[k], h5py.Dataset) for k in g):
                found.append(at or "/")
            for k in g:
                if isinstance(g[k], h5py.Group):
                    walk(g[k], at + "/" + k)
        walk(f, "")
    return found


def row_dimension(group):
    """The dimension of every column of a group of a result file (docs/results-format.md), or
    None for a group whose every dataset is a dimension of its own (/genes, /checkpoint)."""
    parts = group.strip("/").split("/")
    if parts[-1] in ("pareto", "all") or (len(parts) > 1 and parts[-2] == "top"):
        return "index"
    return {"evaluated": "evaluation", "generations": "generation", "best": "gene", "reasons": "code",
            "histogram": "bin", "genes": None, "checkpoint": None}[parts[-1]]


# The xarray checks need xarray and its h5netcdf engine (scripts/setup.sh installs both); without
# them those tests skip, saying why.
HAVE_XARRAY = bool(importlib.util.find_spec("xarray") and importlib.util.find_spec("h5netcdf"))
NO_XARRAY = "needs xarray and h5netcdf (Debian: python3-xarray, python3-h5netcdf)"


def dimension_problems(path):
    """Opens the root and every group of a result file with xarray (h5netcdf, no phony_dims) and
    lists what is not as docs/results-format.md says: each group's columns on its dimension
    (row_dimension), whose coordinate holds the column of that name and has no repeated value;
    /genes and /checkpoint with a dimension per dataset; /histogram's edges on their own; every
    variable reading back the dataset's values. Empty when all is well."""
    import xarray as xr
    problems = []
    with xr.open_dataset(path, engine="h5netcdf"):  # the root: attributes only
        pass
    with h5py.File(path, "r") as f:
        for group in h5_groups(path):
            dim = row_dimension(group)
            try:
                ds = xr.open_dataset(path, group=group, engine="h5netcdf")
            except ValueError as e:  # a dataset without a dimension scale
                problems.append(f"{group}: {str(e).splitlines()[0]}")
                continue
            with ds:
                names = set(f[group].keys())
                if set(ds.variables) != names:
                    problems.append(f"{group}: variables {sorted(ds.variables)}, datasets {sorted(names)}")
                for name in sorted(names & set(ds.variables)):
                    own = dim is None or name == dim or (dim == "bin" and name == "edges")
                    want = (name,) if own else (dim,)
                    if ds[name].dims != want:
                        problems.append(f"{group}/{name}: dimensions {ds[name].dims}, expected {want}")
                    column = f[group][name]
                    stored = column.asstr()[:] if column.dtype.kind == "O" else column[:]
                    if list(np.ravel(ds[name].values)) != list(np.ravel(stored)):
                        problems.append(f"{group}/{name}: xarray reads other values than h5py")
                if dim is not None and dim in ds.indexes and not ds.indexes[dim].is_unique:
                    problems.append(f"{group}: coordinate {dim} repeats values")
    return problems


def same_result(test, a, b):
    """Two result files hold the same reductions."""
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for k in ("swept_count", "evaluated_count", "feasible_count", "space_size"):
            test.assertEqual(fa.attrs[k], fb.attrs[k], k)
        np.testing.assert_array_equal(fa["reasons/count"][:], fb["reasons/count"][:])
        test.assertEqual(sorted(fa["histogram"]), sorted(fb["histogram"]))
        for name in fa["histogram"]:
            np.testing.assert_array_equal(fa["histogram"][name][:], fb["histogram"][name][:])
        test.assertEqual(sorted(fa["top"]), sorted(fb["top"]))
        test.assertEqual("pareto" in fa, "pareto" in fb)
        tables = [f"top/{obj}" for obj in fa["top"]] + (["pareto"] if "pareto" in fa else [])
        for t in tables:
            test.assertEqual(sorted(fa[t]), sorted(fb[t]), t)
            for col in fa[t]:
                np.testing.assert_array_equal(fa[t][col][:], fb[t][col][:], f"{t}/{col}")


def damage_heap_object(test, path, content):
    """Makes the size of the global heap object holding `content` huge (its 8 bytes after the
    object's index, reference count and reserved bytes), in the file at `path`."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    damaged = 0
    at = data.find(b"GCOL")
    while at >= 0 and not damaged:
        end, o = at + struct.unpack_from("<Q", data, at + 8)[0], at + 16
        while o + 16 <= end:
            index, size = struct.unpack_from("<H", data, o)[0], struct.unpack_from("<Q", data, o + 8)[0]
            if index == 0:
                break
            if data[o + 16:o + 16 + size] == content:
                struct.pack_into("<Q", data, o + 8, size | 0x80000000)
                damaged += 1
                break
            o += 16 + (size + 7) // 8 * 8
        at = data.find(b"GCOL", at + 4)
    test.assertEqual(damaged, 1)
    with open(path, "wb") as f:
        f.write(data)


class SweepFile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_show_and_resume_report_a_damaged_string_heap_as_a_damaged_file(self):
        # HDF5 trusts the global heap that variable-length strings live in: an object's size
        # made huge crashed it inside memcpy (`cosmic show` died of SIGSEGV, and so did `sweep
        # --resume` and `search --resume`, which read the file's attributes). The size field of
        # the heap object holding a gene's name is damaged; show and --resume must exit 1 and say
        # the file is damaged, leaving it as it was.
        out = os.path.join(self.dir, "heap.h5")
        sweep("workload-system1.yaml", out, "--backend", BACKEND)
        damage_heap_object(self, out, b"workload.sharding")
        with open(out, "rb") as f:
            before = f.read()
        for extra in ([], ["--json"]):
            r = subprocess.run([COSMIC, "show", out, *extra], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("the file is damaged", r.stderr)
        psa = os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml")
        for given in ([], [psa]):  # the recorded space, or the PSA file given again
            r = subprocess.run([COSMIC, "sweep", *given, "--resume", "-o", out, "-q"], capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stderr.count("the file is damaged")), (1, 1), r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), before)
        searched = os.path.join(self.dir, "heap-search.h5")
        subprocess.run([COSMIC, "search", os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml"), "--agent", "ga",
                        "--budget", "200", "--population", "50", "-o", searched, "-q"], check=True)
        shutil.copy(searched, searched + ".lists")
        damage_heap_object(self, searched, b"workload.sharding")
        for given in ([], [psa]):
            r = subprocess.run([COSMIC, "search", *given, "--resume", "--budget", "400", "-o", searched, "-q"],
                               capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stderr.count("the file is damaged")), (1, 1), r.stderr)
        # A column's list of dimension scales (DIMENSION_LIST, object references) lives in the
        # same heap: one made huge crashed the resumed search's writer (SIGSEGV) as it attached
        # the scales, past a check that read only the strings.
        lists = searched + ".lists"
        with h5py.File(lists, "r") as f:
            scale_at = h5py.h5o.get_info(f["evaluated"]["evaluation"].id).addr
        damage_heap_object(self, lists, struct.pack("<Q", scale_at))
        r = subprocess.run([COSMIC, "search", "--resume", "--budget", "400", "-o", lists, "-q"], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stderr.count("the file is damaged")), (1, 1), r.stderr)

    def test_csv_export_of_a_point_table(self):
        # `show --csv all`: a row per point, genes by their labels, the derived TP decoded, the
        # index, reason by name, numbers that read back to the file's doubles.
        out = os.path.join(self.dir, "csv.h5")
        sweep("workload-system1.yaml", out, "--keep", "all", "--backend", BACKEND)
        text = subprocess.run([COSMIC, "show", out, "--csv", "all"], check=True, capture_output=True, text=True).stdout
        import csv
        import io
        rows = list(csv.DictReader(io.StringIO(text)))
        with h5py.File(out, "r") as f:
            table = f["all"]
            self.assertEqual(len(rows), len(table["index"]))
            names = [g.decode() if isinstance(g, bytes) else g for g in f["genes"].attrs["gene_names"]]
            for name in names:
                labels = [v.decode() if isinstance(v, bytes) else v for v in f["genes"][name][:]]
                self.assertEqual([r[name] for r in rows], [labels[int(v)] for v in table[name][:]], name)
            self.assertEqual([int(r["index"]) for r in rows], [int(v) for v in table["index"][:]])
            self.assertEqual([float(r["time_s"]) for r in rows], list(table["time_s"][:]))
            codes = sorted({int(v) for v in table["reason"][:]})
        self.assertIn("OK", {r["reason"] for r in rows})
        self.assertEqual(len({r["reason"] for r in rows}), len(codes))
        for r in rows:  # System 1: 1,024 NPUs; TP = 1024 / (dp x cp x pp), 0 where not whole
            others = int(r["workload.dp"]) * int(r["workload.cp"]) * int(r["workload.pp"])
            self.assertEqual(int(r["workload.tp"]), 1024 // others if 1024 % others == 0 else 0)
        r = subprocess.run([COSMIC, "show", out, "--csv", "nothing"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no table /nothing", r.stderr)
        with h5py.File(out, "r") as f:  # the tables the file has, and no other
            tables = ["top/" + o for o in f["top"]] + [t for t in ("pareto", "all", "evaluated") if t in f]
        self.assertIn("(this file's tables: " + ", ".join(tables) + ")", r.stderr)
        # A search's name for a sweep's points: the table, and the --keep that writes it.
        r = subprocess.run([COSMIC, "show", out, "--csv", "evaluated"], capture_output=True, text=True)
        self.assertIn("; a sweep keeps its points in /all with --keep all)", r.stderr)
        # One objective (runtime_x_bw): no front whatever --keep said.
        r = subprocess.run([COSMIC, "show", out, "--csv", "pareto"], capture_output=True, text=True)
        self.assertIn("; a sweep of one objective has no Pareto front)", r.stderr)

    def test_attributes_and_top1_against_brute_force(self):
        out = os.path.join(self.dir, "w.h5")
        sweep("workload-system1.yaml", out, "--keep", "all", "--seed", "7", "--backend", BACKEND)
        with h5py.File(out, "r") as f:
            a = f.attrs
            for k in ("tool_version", "psa", "backend", "device", "seed", "evaluated_count", "feasible_count",
                      "wall_time_s", "configs_per_s", "format_version", "complete", "next_index", "space_size", "shard"):
                self.assertIn(k, a, k)
            self.assertEqual(a["complete"], 1)
            self.assertEqual(a["seed"], 7)
            self.assertEqual(a["backend"], BACKEND)
            self.assertEqual(a["space_size"], "600")
            self.assertEqual(a["next_index"], "600")
            self.assertEqual(a["swept_count"], 600)
            self.assertIn("workload-system1", a["psa"])
            # When, where, by what command.
            self.assertRegex(a["created"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
            self.assertEqual(a["host"], os.uname().nodename)
            self.assertIn(" sweep ", a["command_line"])
            self.assertIn("--seed 7", a["command_line"])
            self.assertAlmostEqual(a["evaluated_per_s"], a["evaluated_count"] / a["wall_time_s"], delta=1e-6 * a["evaluated_per_s"])
            # The reductions: links to the published one of the two copies in /state.
            self.assertEqual(a["format_version"], 3)
            self.assertEqual(a["kind"], "sweep")
            for name in ("top", "histogram", "reasons"):  # and pareto, with two objectives or more
                self.assertEqual(f.get(name, getlink=True).path, "/state/current/" + name)
            self.assertNotIn("pareto", f)
            self.assertEqual(f["state"].get("current", getlink=True).path, f"/state/{a['state_slot']}")
            self.assertEqual(list(f[f"state/{a['state_slot']}"].attrs["next_index"]), [600, 0])
            obj = a["objectives"][0]
            obj = obj.decode() if isinstance(obj, bytes) else obj
            # Counts: reasons add up to the space, the histogram to the feasible points.
            self.assertEqual(int(f["reasons/count"][:].sum()), 600)
            self.assertEqual(int(f["histogram"][obj][:].sum()), a["feasible_count"])
            # Units on the objective and metric columns, not on counts or genes.
            for table in (f["all"], f["top"][obj]):
                self.assertEqual(table[obj].attrs["units"], "s x GB/s / 2000")  # runtime_x_bw
                self.assertEqual(table["memory_bytes"].attrs["units"], "bytes")
                self.assertEqual(table["tokens_per_s"].attrs["units"], "tokens/s")
                self.assertNotIn("units", table["reason"].attrs)
                self.assertNotIn("units", table["workload.dp"].attrs)
            self.assertNotIn("units", f["histogram"][obj].attrs)
            # /all holds every point that passed the constraints; top-1 is its best feasible one.
            allg = f["all"]
            self.assertEqual(allg["index"].shape[0], a["evaluated_count"])
            ok = allg["reason"][:] == 0
            self.assertEqual(int(ok.sum()), a["feasible_count"])
            # Infeasible rows have no objective value (+inf, as a search's); out-of-memory ones keep
            # the memory the model found (above the 24 GB of System 1's NPUs).
            self.assertTrue(np.all(np.isposinf(allg[a["objectives"][0]][:][~ok])))
            oom = allg["reason"][:] == 9  # OUT_OF_MEMORY
            self.assertGreater(int(oom.sum()), 0)
            self.assertTrue(np.all(allg["memory_bytes"][:][oom] > 24e9))
            vals, idx = allg[obj][:][ok], allg["index"][:][ok]
            best = np.lexsort((idx, vals))[0]
            top = f["top"][obj]
            self.assertEqual(int(top["index"][0]), int(idx[best]))
            self.assertEqual(float(top[obj][0]), float(vals[best]))
            self.assertTrue(np.all(np.diff(top[obj][:]) >= 0))
            self.assertEqual(obj, "runtime_x_bw")
            top_index, top_value, top_time = int(top["index"][0]), float(top[obj][0]), float(top["time_s"][0])
            top_memory = float(top["memory_bytes"][0])
            # The genes and their values as the PSA file lists them; the first gene varies fastest in the index.
            genes = [("workload.dp", [str(2 ** e) for e in range(10)]), ("workload.pp", ["1", "2", "4"]),
                     ("workload.cp", [str(2 ** e) for e in range(10)]), ("workload.sharding", ["none", "zero3"])]
            for gene, values in genes:
                self.assertEqual(labels_of(f, gene), values, gene)
            rest = top_index
            for gene, values in genes:
                self.assertEqual(int(top[gene][0]), rest % len(values), gene)
                rest //= len(values)
            evaluated, feasible = a["evaluated_count"], a["feasible_count"]
        # Brute force, independent of the sweep: every point that passes the constraint
        # dp x cp x pp <= 1024, each through its own `cosmic eval` (the scalar model, with the
        # configuration read from YAML). Passing (dp, cp) exponent pairs, a + b <= 10 - log2(pp):
        # pp 1: 64, pp 2: 55, pp 4: 45, so 164 x 2 sharding values = 328 points.
        points = []
        for sh in range(2):
            for cp in range(10):
                for pp in range(3):
                    for dp in range(10):
                        if dp + cp + pp <= 10:
                            points.append((dp + 10 * (pp + 3 * (cp + 10 * sh)), [
                                "--set", f"workload.dp={2 ** dp}", "--set", f"workload.pp={2 ** pp}",
                                "--set", f"workload.cp={2 ** cp}", "--set", f"workload.sharding={genes[3][1][sh]}",
                                "--set", f"workload.tp={2 ** (10 - dp - cp - pp)}"]))  # derived: 1024 / (dp cp pp)
        self.assertEqual(len(points), 328)
        self.assertEqual(evaluated, 328)

        def run_eval(point):
            out = subprocess.run([COSMIC, "eval", os.path.join(DATA, "configs", "cosmic-system1-baseline.yaml"),
                                  *point[1], "--json"], check=True, capture_output=True, text=True).stdout
            return point[0], json.loads(out)

        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(run_eval, points))
        ok = [(ev["time_s"], index) for index, ev in results if ev["reason"] == "OK"]
        self.assertEqual(len(ok), feasible)
        best_time, best_index = min(ok)  # ties to the lower index, as the sweep's order
        self.assertEqual(top_index, best_index)
        self.assertAlmostEqual(top_time, best_time, delta=1e-12 * best_time)
        best_memory = dict(results)[best_index]["memory_bytes"]
        self.assertAlmostEqual(top_memory, best_memory, delta=1e-12 * best_memory)
        # runtime_x_bw = time_s x (per-NPU bandwidth summed over dims) / 2000 (docs/psa.md); System 1
        # (data/systems/cosmic-system1.yaml, links per NPU: Ring 2, FullyConnected 7, Switch 1):
        # 2 x 187.5 + 7 x 25 + 2 x 75 + 1 x 100 = 800 GB/s, so runtime_x_bw = 0.4 time_s.
        self.assertAlmostEqual(top_value, 0.4 * best_time, delta=1e-12 * best_time)
        # xarray (Debian: python3-xarray with python3-h5netcdf); a failure to open is a failure.
        if not HAVE_XARRAY:
            self.skipTest(NO_XARRAY)
        import xarray as xr
        with xr.open_dataset(out, group=f"top/{obj}", engine="h5netcdf") as ds, h5py.File(out, "r") as f:  # no phony dims
            # The table's rows are its points: `index` is the dimension and its coordinate.
            self.assertEqual(list(ds.dims), ["index"])
            np.testing.assert_array_equal(ds["index"].values, f["top"][obj]["index"][:])
            np.testing.assert_array_equal(ds[obj].values, top1_column(out, obj))

    def test_evaluated_count_equals_space_feasible_count(self):
        for psa in ("workload-system1.yaml", "network-system3.yaml"):
            out = os.path.join(self.dir, psa + ".h5")
            sweep(psa, out, "--backend", BACKEND)
            info = json.loads(subprocess.run([COSMIC, "space", os.path.join(DATA, "psa", "cosmic", psa), "--json"],
                                             check=True, capture_output=True, text=True).stdout)
            with h5py.File(out, "r") as f:
                self.assertEqual(str(f.attrs["evaluated_count"]), info["feasible_count"], psa)

    def test_shards_merge_to_the_whole(self):
        whole = os.path.join(self.dir, "whole.h5")
        sweep("workload-system1.yaml", whole, "--backend", BACKEND)
        parts = []
        for i in range(3):
            parts.append(os.path.join(self.dir, f"part{i}.h5"))
            sweep("workload-system1.yaml", parts[-1], "--shard", f"{i}/3", "--backend", BACKEND)
        merged = os.path.join(self.dir, "merged.h5")
        subprocess.run([COSMIC, "merge", merged, *reversed(parts), "--quiet"], check=True)
        same_result(self, merged, whole)
        with h5py.File(merged, "r") as f:
            self.assertEqual(f.attrs["complete"], 1)
        # A missing shard leaves the merged file incomplete: next_index stops at the gap,
        # swept_count adds the shards', and the file cannot be resumed (resume the shards).
        subprocess.run([COSMIC, "merge", merged, parts[0], parts[2], "--quiet"], check=True)
        counts = []
        for p in (parts[0], parts[2]):
            with h5py.File(p, "r") as f:
                counts.append(int(f.attrs["swept_count"]))
        with h5py.File(parts[0], "r") as f:
            gap = f.attrs["range_end"]
        with h5py.File(merged, "r") as f:
            self.assertEqual(f.attrs["complete"], 0)
            self.assertEqual(f.attrs["next_index"], gap)
            self.assertEqual(int(f.attrs["swept_count"]), sum(counts))
            self.assertEqual(int(f["reasons/count"][:].sum()), sum(counts))
            # It says what it lacks, and show tells the user which shard to merge.
            self.assertEqual([x.decode() if isinstance(x, bytes) else x for x in f.attrs["merge_lacks"]],
                             ["shard 1/3 (not merged)"])
        shown = subprocess.run([COSMIC, "show", merged], check=True, capture_output=True, text=True).stdout
        self.assertIn("it lacks shard 1/3 (not merged): sweep or finish those, then merge every shard file again", shown)
        # Runs of missing shards are ranges (an HDF5 attribute holds 64 KiB: 4,095 names did not fit).
        sixteenths = []
        for i in (0, 1, 5):
            sixteenths.append(os.path.join(self.dir, f"sixteenth{i}.h5"))
            sweep("workload-system1.yaml", sixteenths[-1], "--shard", f"{i}/16", "--backend", BACKEND)
        ranged = os.path.join(self.dir, "ranged.h5")
        subprocess.run([COSMIC, "merge", ranged, *sixteenths, "--quiet"], check=True)
        with h5py.File(ranged, "r") as f:
            self.assertEqual([x.decode() if isinstance(x, bytes) else x for x in f.attrs["merge_lacks"]],
                             ["shards 2-4 of 16 (not merged)", "shards 6-15 of 16 (not merged)"])
        r = sweep("workload-system1.yaml", merged, "--resume", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cosmic merge and cannot be resumed", r.stderr)
        with h5py.File(merged, "r") as f:
            self.assertEqual(int(f.attrs["swept_count"]), sum(counts))
        # A merged file from before next_index stopped at gaps (it said range_end) is not taken
        # for a whole one when merged again.
        old_style = os.path.join(self.dir, "old_style.h5")
        shutil.copy(merged, old_style)
        with h5py.File(old_style, "r+") as f:
            end = int(f.attrs["range_end"])
            f.attrs["next_index"] = str(end)
            f["state/current"].attrs["next_index"] = np.array([end, 0], dtype=np.uint64)
        remerged = os.path.join(self.dir, "remerged.h5")
        subprocess.run([COSMIC, "merge", remerged, old_style, "--quiet"], check=True)
        with h5py.File(remerged, "r") as f:
            self.assertEqual(f.attrs["complete"], 0)
            self.assertEqual(f.attrs["next_index"], "0")
            self.assertEqual(int(f.attrs["swept_count"]), sum(counts))
            self.assertEqual([x.decode() if isinstance(x, bytes) else x for x in f.attrs["merge_lacks"]],
                             [old_style + " (unfinished, a merge with gaps)"])
        # Merged files merge again: shards 0 and 1, then that with shard 2, is the whole.
        m01, again = os.path.join(self.dir, "m01.h5"), os.path.join(self.dir, "again.h5")
        subprocess.run([COSMIC, "merge", m01, parts[0], parts[1], "--quiet"], check=True)
        subprocess.run([COSMIC, "merge", again, parts[2], m01, "--quiet"], check=True)
        same_result(self, again, whole)
        with h5py.File(again, "r") as f, h5py.File(whole, "r") as w:
            self.assertEqual(f.attrs["complete"], 1)
            self.assertEqual(f.attrs["next_index"], w.attrs["next_index"])
        # A merged file with a gap covers its whole range: the missing shard is refused, saying
        # to merge the shard files instead (it said only "overlaps").
        gap, late = os.path.join(self.dir, "gap.h5"), os.path.join(self.dir, "late.h5")
        subprocess.run([COSMIC, "merge", gap, parts[0], parts[2], "--quiet"], check=True)
        r = subprocess.run([COSMIC, "merge", late, gap, parts[1]], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("a merged file counts as covering its whole range, gaps too; merge the shard files", r.stderr)
        # The output may not be one of the inputs (it would be overwritten).
        before = open(parts[0], "rb").read()
        r = subprocess.run([COSMIC, "merge", parts[0], parts[0], parts[1]], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("is also an input", r.stderr)
        self.assertEqual(open(parts[0], "rb").read(), before)
        # `cosmic merge part*.h5` (the output forgotten) would take the first shard for the
        # output: a sweep's file is never written over, nor a search's; a merge's may be.
        for target, what in ((parts[0], "holds a sweep's results (shard 0/3), not a merge's"),
                             (whole, "holds a sweep's results, not a merge's")):
            before = open(target, "rb").read()
            r = subprocess.run([COSMIC, "merge", target, parts[1], parts[2]], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn(what, r.stderr)
            self.assertIn("the output comes first", r.stderr)
            self.assertEqual(open(target, "rb").read(), before)
        searched = os.path.join(self.dir, "searched.h5")
        subprocess.run([COSMIC, "search", os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml"), "--agent", "rw",
                        "--budget", "10", "--population", "10", "-o", searched, "--quiet"], check=True)
        r = subprocess.run([COSMIC, "merge", searched, parts[1]], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("holds a search's results", r.stderr)

    def test_show_config_reevaluates_points(self):
        # `cosmic show --config`: a point of a sweep (index in the folded space: the policy gene
        # is folded) or a search, written as a configuration, evaluates to the numbers the run
        # recorded for it, bit for bit (derived TP, per-NPU bandwidth over 7 links included).
        psa = points_psa(self.dir)
        out = os.path.join(self.dir, "points.h5")
        subprocess.run([COSMIC, "sweep", psa, "-o", out, "-q"], check=True)

        def evaluated(h5, point):
            text = subprocess.run([COSMIC, "show", h5, "--config", point], check=True, capture_output=True,
                                  text=True).stdout
            self.assertTrue(text.startswith("# point "), text[:80])
            config = os.path.join(self.dir, "point.yaml")
            with open(config, "w") as f:
                f.write(text)
            return json.loads(subprocess.run([COSMIC, "eval", config, "--json"], check=True, capture_output=True,
                                             text=True).stdout)

        with h5py.File(out, "r") as f:
            self.assertEqual(list(f.attrs["folded_genes"]), ["collective.policy"])
            front = len(f["pareto/index"])
            self.assertGreaterEqual(front, 2)
            rows = [("best", f["top/latency"]), *((str(int(f["pareto/index"][i])), f["pareto"]) for i in range(front))]
            for k, (point, table) in enumerate(rows):
                r = k - 1 if k else 0
                got = evaluated(out, point)
                self.assertEqual(got["time_s"], table["time_s"][r], point)
                if point == "best":  # show's derived TP is the one the configuration evaluates with
                    shown = json.loads(subprocess.run([COSMIC, "show", out, "--json", "--top", "1"], check=True,
                                                      capture_output=True, text=True).stdout)
                    self.assertEqual(shown["top"]["latency"][0]["derived"]["tp"], got["workload"]["tp"])
                self.assertEqual(got["network_cost_usd"], table["network_cost_usd"][r], point)
        searched = os.path.join(self.dir, "points-search.h5")
        subprocess.run([COSMIC, "search", psa, "--agent", "rw", "--budget", "60", "--population", "20", "-o", searched,
                        "-q"], check=True)
        with h5py.File(searched, "r") as f:
            self.assertEqual(evaluated(searched, "best")["time_s"], f["best"].attrs["time_s"])
        # A search's front: show --json gives each point's index.
        fronted = os.path.join(self.dir, "points-nsga2.h5")
        subprocess.run([COSMIC, "search", psa, "--agent", "nsga2", "--budget", "200", "--population", "20", "-o", fronted,
                        "-q"], check=True)
        shown = json.loads(subprocess.run([COSMIC, "show", fronted, "--json", "--top", "3"], check=True,
                                          capture_output=True, text=True).stdout)
        self.assertGreaterEqual(len(shown["pareto"]), 2)
        with h5py.File(fronted, "r") as f:
            # The file alone decodes its points: labels in /genes, and the index in the space of
            # /best and of each /pareto row (mixed radix over the label counts, gene 0 the least
            # significant digit).
            names = [g.decode() if isinstance(g, bytes) else g for g in f["gene_names"][:]] if "gene_names" in f else \
                [g.decode() if isinstance(g, bytes) else g for g in f.attrs["gene_names"]]
            cards = [len(labels_of(f, g)) for g in names]

            def index_of(digits):
                index, stride = 0, 1
                for d, card in zip(digits, cards):
                    index, stride = index + int(d) * stride, stride * card
                return index

            best = f["best"]
            values = [v.decode() if isinstance(v, bytes) else v for v in best["value"][:]]
            self.assertEqual([labels_of(f, g)[int(best["index"][k])] for k, g in enumerate(names)], values)
            self.assertEqual(int(best.attrs["space_index"]), index_of(best["index"][:]))
            table = f["pareto"]
            for row in range(len(table["index"])):
                self.assertEqual(int(table["index"][row]), index_of(table[g][row] for g in names))
                self.assertEqual(int(table["index_hi"][row]), 0)
            by_row = {int(table["evaluation"][row]): int(table["index"][row]) for row in range(len(table["index"]))}
            # Sorted by the first objective, as a sweep's front (a front's second objective falls then).
            first, second = table["latency"][:], table["cost"][:]
            self.assertTrue(np.all(np.diff(first) > 0) and np.all(np.diff(second) < 0), (first, second))
        for p in shown["pareto"]:
            self.assertEqual(int(p["index"]), by_row[p["found_at_evaluation"] - 1])
            got = evaluated(fronted, p["index"])
            self.assertEqual(got["time_s"], p["objectives"]["latency"])
            self.assertEqual(got["network_cost_usd"], p["objectives"]["cost"])
            self.assertEqual(got["workload"]["tp"], p["derived"]["tp"])
        r = subprocess.run([COSMIC, "show", out, "--config", str(10 ** 30)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--config expects best or an index of the space below 56, got", r.stderr)  # 224 folded by 2
        r = subprocess.run([COSMIC, "show", out, "--config", "best", "--json"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        # A point outside the constraints is written with a note saying so; one whose derived TP
        # is not a whole number (1024 NPUs over dp 3) has no configuration.
        odd = os.path.join(self.dir, "odd.yaml")
        with open(odd, "w") as f:
            f.write("base: " + os.path.join(DATA, "configs", "cosmic-system1-baseline.yaml") + "\n"
                    "parameters:\n  workload: {dp: [8, 16, 3]}\nderived: {tp: auto}\n"
                    "constraints: [\"dp <= 8\"]\nobjectives: [latency]\n")
        odd_h5 = os.path.join(self.dir, "odd.h5")
        subprocess.run([COSMIC, "sweep", odd, "-o", odd_h5, "-q"], check=True)
        r = subprocess.run([COSMIC, "show", odd_h5, "--config", "1"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("point 1 of odd (swept in", r.stdout)
        self.assertIn("; it violates the PSA's constraints", r.stdout.splitlines()[0])
        self.assertIn("cosmic show: note: point 1: it violates the PSA's constraints", r.stderr)
        r = subprocess.run([COSMIC, "show", odd_h5, "--config", "2"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("point 2 has no configuration: its derived TP", r.stderr)

    def test_compare_h5_sees_both_sides(self):
        # bench/compare_h5.py (the CUDA-vs-CPU check of bench/gpu_check.sh): a group only one
        # file has is a difference whichever file comes first.
        compare = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "compare_h5.py")
        files = {keep: os.path.join(self.dir, keep + ".h5") for keep in ("top", "pareto")}
        psa = os.path.join(self.dir, "two.yaml")
        with open(os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml")) as f:
            text = f.read()
        with open(psa, "w") as f:
            f.write(text.replace("objectives: [runtime_x_bw]", "objectives: [latency, memory]"))
        for keep in ("top", "pareto"):
            subprocess.run([COSMIC, "sweep", psa, "-o", files[keep], "--keep", keep, "--quiet"], check=True)
        for a, b in (("top", "pareto"), ("pareto", "top")):
            r = subprocess.run([sys.executable, compare, files[a], files[b]], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("pareto/", r.stdout)
        r = subprocess.run([sys.executable, compare, files["pareto"], files["pareto"]], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        # Two searches of one seed on 1 and 2 threads: identical but for their timings, device and
        # command line, which are left out; another seed differs, down to /best's attributes.
        runs = {}
        for name, seed, threads in (("a", "5", "1"), ("b", "5", "2"), ("c", "6", "2")):
            runs[name] = os.path.join(self.dir, "search-%s.h5" % name)
            subprocess.run([COSMIC, "search", psa, "--agent", "ga", "--population", "100", "--budget", "1000", "--seed",
                            seed, "-o", runs[name], "--quiet"], check=True, env=dict(os.environ, OMP_NUM_THREADS=threads))
        r = subprocess.run([sys.executable, compare, runs["a"], runs["b"]], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("all identical", r.stdout)
        r = subprocess.run([sys.executable, compare, runs["a"], runs["c"]], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("attribute seed", r.stdout)
        self.assertIn("attribute best:found_at_evaluation", r.stdout)
        r = subprocess.run([sys.executable, compare, runs["a"], os.path.join(self.dir, "none.h5")], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 2, r.stdout)

    def test_bad_files_are_refused_and_left_alone(self):
        psa = "workload-system1.yaml"
        # An output that is a directory or in a missing folder: refused, no OUT.partial left.
        for out, says in ((self.dir, "is a directory"), (os.path.join(self.dir, "no", "x.h5"), "does not exist")):
            for cmd in (["sweep"], ["search", "--budget", "100"]):
                r = subprocess.run([COSMIC, *cmd, os.path.join(DATA, "psa", "cosmic", psa), "-o", out, "-q"],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(says, r.stderr)
                self.assertFalse(os.path.exists(out + ".partial"))
        # An error after OUT.partial was made (an input without a column /all should hold)
        # removes it, and leaves no OUT.
        parts = []
        for i in range(2):
            parts.append(os.path.join(self.dir, f"all{i}.h5"))
            sweep(psa, parts[-1], "--shard", f"{i}/2", "--keep", "all", "--backend", BACKEND)
        with h5py.File(parts[1], "r+") as f:
            del f["all/reason"]
        out = os.path.join(self.dir, "m.h5")
        r = subprocess.run([COSMIC, "merge", out, *parts], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertFalse(os.path.exists(out + ".partial"))
        self.assertFalse(os.path.exists(out))
        # --resume on an empty file or on the other kind of result file: refused, file unchanged.
        empty = os.path.join(self.dir, "empty.h5")
        open(empty, "wb").close()
        r = sweep(psa, empty, "--resume", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("not an HDF5 file", r.stderr)
        self.assertEqual(os.path.getsize(empty), 0)
        searched = os.path.join(self.dir, "searched.h5")
        subprocess.run([COSMIC, "search", os.path.join(DATA, "psa", "cosmic", psa), "--budget", "100", "-o", searched,
                        "-q"], check=True)
        r = sweep(psa, searched, "--resume", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("not a cosmic sweep file (a search file)", r.stderr)
        # --shard takes I/N and nothing else.
        for bad in ("1/2/3", "1/2abc", "3/2", "0/0", "/2", "1/"):
            r = sweep(psa, os.path.join(self.dir, "shard.h5"), "--shard", bad, check=False)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("--shard expects I/N", r.stderr)
        r = sweep(psa, os.path.join(self.dir, "top.h5"), "--top", "70000", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--top expects 1 to 65536", r.stderr)
        for bad in ("0", "-1", "1e9"):
            r = sweep(psa, os.path.join(self.dir, "batch.h5"), "--batch-seconds", bad, check=False)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("--batch-seconds expects seconds above 0", r.stderr)
        # Damaged attributes: an out-of-range state_slot is refused (it was read as an index), and
        # an unreadable attribute's error names the file, for each command that reads it.
        for name, edit, says in (("slot.h5", lambda f: f.attrs.modify("state_slot", 7), "damaged: state_slot is 7"),
                                 ("psa.h5", lambda f: f.attrs.__setitem__("psa", 3.5), "read attribute psa")):
            damaged = os.path.join(self.dir, name)
            sweep(psa, damaged, "--shard", "0/2")
            with h5py.File(damaged, "r+") as f:
                edit(f)
            other = os.path.join(self.dir, "other-" + name)
            sweep(psa, other, "--shard", "1/2")
            for cmd in ([COSMIC, "merge", os.path.join(self.dir, "m-" + name), damaged, other, "-q"],
                        [COSMIC, "sweep", os.path.join(DATA, "psa", "cosmic", psa), "-o", damaged, "--resume", "-q"]):
                r = subprocess.run(cmd, capture_output=True, text=True)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(damaged + ": ", r.stderr)
                self.assertIn(says, r.stderr)

    def test_results_of_another_base_or_model_are_not_mixed(self):
        # A PSA whose base file changes after the runs: --resume and a search's --resume refuse
        # the files, naming the changed line; merge uses the base the shards recorded (so it needs
        # neither file) and refuses shards of different bases; files of another model revision
        # are refused by all three.
        base = os.path.join(self.dir, "base.yaml")
        shutil.copy(os.path.join(DATA, "configs", "cosmic-system1-baseline.yaml"), base)
        with open(os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml")) as f:
            text = re.sub(r"(?m)^base:.*$", "base: base.yaml", f.read())
        psa = os.path.join(self.dir, "psa.yaml")
        with open(psa, "w") as f:
            f.write(text)
        parts = [os.path.join(self.dir, f"p{i}.h5") for i in range(2)]
        for i, part in enumerate(parts):
            subprocess.run([COSMIC, "sweep", psa, "-o", part, "--shard", f"{i}/2", "-q"], check=True)
        searched = os.path.join(self.dir, "s.h5")
        search = [COSMIC, "search", psa, "--budget", "200", "--population", "50", "-o", searched, "-q"]
        subprocess.run(search, check=True)
        resume_search = [COSMIC, "search", psa, "-o", searched, "-q", "--resume"]
        with h5py.File(parts[0], "r") as f:
            self.assertGreaterEqual(f.attrs["model_revision"], 2)
            recorded = f.attrs["base_config"]
            self.assertIn("global_batch: 2048", recorded)
        info = json.loads(subprocess.run([COSMIC, "show", parts[0], "--json"], check=True, capture_output=True,
                                         text=True).stdout)
        self.assertEqual(info["model_revision"], int(h5py.File(parts[0], "r").attrs["model_revision"]))
        merged = os.path.join(self.dir, "m.h5")
        subprocess.run([COSMIC, "merge", merged, *parts, "-q"], check=True)
        with open(base) as f:
            original = f.read()
        with open(base, "w") as f:
            f.write(original.replace("global_batch: 2048", "global_batch: 1024"))
        for cmd in ([COSMIC, "sweep", psa, "-o", parts[0], "--shard", "0/2", "--resume", "-q"], resume_search):
            r = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, cmd)
            self.assertIn("base configuration", r.stderr)
            self.assertIn("'global_batch: 1024' now, 'global_batch: 2048' in the file", r.stderr)
        # Merged again with the base file changed, and then with the PSA and base files gone:
        # the same result as before, from the recorded base.
        again = os.path.join(self.dir, "m2.h5")
        subprocess.run([COSMIC, "merge", again, *parts, "-q"], check=True)
        same_result(self, merged, again)
        os.remove(psa)
        os.remove(base)
        gone = os.path.join(self.dir, "m3.h5")
        subprocess.run([COSMIC, "merge", gone, *parts, "-q"], check=True)
        same_result(self, merged, gone)
        # A shard swept from the changed base does not merge with one from the original.
        with open(psa, "w") as f:
            f.write(text)
        with open(base, "w") as f:
            f.write(original.replace("global_batch: 2048", "global_batch: 1024"))
        other = os.path.join(self.dir, "p1-other.h5")
        subprocess.run([COSMIC, "sweep", psa, "-o", other, "--shard", "1/2", "-q"], check=True)
        r = subprocess.run([COSMIC, "merge", os.path.join(self.dir, "m4.h5"), parts[0], other, "-q"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("swept from another base configuration than " + parts[0], r.stderr)
        self.assertIn("'global_batch: 1024' here, 'global_batch: 2048' there", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "m4.h5")))
        with open(base, "w") as f:  # the base as it was: resumes accepted again
            f.write(original)
        subprocess.run(resume_search, check=True)
        # Another model revision, or none recorded (an older cosmic): refused.
        for change, says in ((lambda a: a.__setitem__("model_revision", 1), "model revision 1, this cosmic has"),
                             (lambda a: a.__delitem__("model_revision"), "did not record its model revision")):
            for path, cmd in ((parts[1], [COSMIC, "sweep", psa, "-o", parts[1], "--shard", "1/2", "--resume", "-q"]),
                              (parts[1], [COSMIC, "merge", os.path.join(self.dir, "m5.h5"), parts[0], parts[1], "-q"]),
                              (searched, resume_search)):
                copy = path + ".old.h5"
                shutil.copy(path, copy)
                with h5py.File(copy, "r+") as f:
                    change(f.attrs)
                r = subprocess.run([copy if c == path else c for c in cmd], capture_output=True, text=True)
                self.assertEqual(r.returncode, 1, cmd)
                self.assertIn(says, r.stderr)

    # Shards of collective-system1.yaml (all points feasible; its 512 copies of each result folded:
    # 1.3e8 points swept): 16.8M points, then 2x and 4x that when a run finished before the signal
    # (a fast machine). The H200 sweeps the folded space whole in 0.7 s (docs/performance.md),
    # before any signal, so on CUDA the runs sweep every value (6.9e10 points): 1.1e9, 4.3e9, 1.7e10.
    GPU = BACKEND == "cuda"
    KILL_SHARDS = ["0/64", "0/16", "0/4"] if GPU else ["0/8", "0/4", "0/2"]
    KILL_ENV = dict(os.environ, OMP_NUM_THREADS="2")
    references = {}  # uninterrupted runs by shard, shared by the kill tests

    def kill_cmd(self, out, shard):
        return [COSMIC, "sweep", os.path.join(DATA, "psa", "cosmic", "collective-system1.yaml"), "-o", out, "--quiet",
                "--shard", shard, "--backend", BACKEND, "--batch-seconds", "0.1", *(["--no-fold"] if self.GPU else [])]

    def interrupted_then_resumed(self, sig, edits=()):
        """edits: --set arguments of the interrupted run and the reference; the resume is not given
        them (it takes the file's)."""
        out = os.path.join(self.dir, "killed.h5")
        shard, rc = interrupt(self, lambda shard: self.kill_cmd(out, shard) + list(edits), self.KILL_SHARDS, sig, 1.0,
                              self.KILL_ENV)
        self.assertEqual(rc, 128 + sig if sig == signal.SIGINT else -sig)
        read_everything(out)
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["complete"], 0)
            # The published copy of the reductions agrees with its own next_index. (The root's
            # counters equal the copy's unless the kill landed inside the publishing flush:
            # docs/results-format.md, "Writing, interruption, resume".)
            lo, hi = f["state/current"].attrs["next_index"]
            nxt = int(lo) + (int(hi) << 64)
            self.assertLess(nxt, int(f.attrs["range_end"]))
            self.assertEqual(int(f["reasons/count"][:].sum()), nxt - int(f.attrs["range_begin"]))
        # A new sweep does not replace it (nor does a search): --resume continues it.
        for cmd in (self.kill_cmd(out, shard), [COSMIC, "search", os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml"),
                                                "-o", out, "--budget", "10"]):
            r = subprocess.run(cmd, env=self.KILL_ENV, capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, cmd)
            self.assertIn(out + ": holds an unfinished sweep (cosmic sweep --resume -o " + out + " continues it)", r.stderr)
        if sig == signal.SIGINT:  # --resume without the PSA file (from another directory): the space the file recorded
            subprocess.run([os.path.abspath(COSMIC), "sweep", "--resume", "-o", out, "--quiet", "--backend", BACKEND,
                            "--batch-seconds", "0.1"], env=self.KILL_ENV, cwd=self.dir, check=True)
        else:
            subprocess.run(self.kill_cmd(out, shard) + ["--resume"], env=self.KILL_ENV, check=True)
        key = (shard, *edits)
        if key not in SweepFile.references:
            SweepFile.references[key] = tempfile.NamedTemporaryFile(suffix=".h5", delete=False).name
            subprocess.run(self.kill_cmd(SweepFile.references[key], shard) + list(edits), env=self.KILL_ENV, check=True)
        ref = SweepFile.references[key]
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["complete"], 1)
        self.assertEqual(top1(out), top1(ref))
        same_result(self, out, ref)

    def test_sigint_leaves_a_resumable_file(self):
        self.interrupted_then_resumed(signal.SIGINT)

    def test_set_edits_are_applied_recorded_resumed_and_merged(self):
        # --set on sweep and search gives the results of the PSA and base files edited by hand; the
        # files record the edits (psa_sets, cosmic show), shards merge only with the same edits,
        # and --resume applies them without being given them again.
        edits = ["--set", "base.workload.global_batch=1024", "--set", "parameters.workload.pp=[1,2]",
                 "--set", "objectives=[latency,memory]"]
        base = os.path.join(self.dir, "base.yaml")
        with open(os.path.join(DATA, "configs", "cosmic-system1-baseline.yaml")) as f:
            text = f.read()
        self.assertIn("global_batch: 2048", text)
        with open(base, "w") as f:
            f.write(text.replace("global_batch: 2048", "global_batch: 1024"))
        psa = os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml")
        with open(psa) as f:
            text = f.read()
        for old, new in (("base: configs/cosmic-system1-baseline.yaml", "base: base.yaml"),
                         ("pp: {values: [1, 2, 4]}", "pp: {values: [1, 2]}"),
                         ("objectives: [runtime_x_bw]", "objectives: [latency, memory]")):
            self.assertIn(old, text)
            text = text.replace(old, new)
        by_hand = os.path.join(self.dir, "by-hand.yaml")
        with open(by_hand, "w") as f:
            f.write(text)
        edited, hand = os.path.join(self.dir, "edited.h5"), os.path.join(self.dir, "hand.h5")
        sweep("workload-system1.yaml", edited, *edits)
        subprocess.run([COSMIC, "sweep", by_hand, "-o", hand, "-q"], check=True)
        same_result(self, edited, hand)
        with h5py.File(edited, "r") as f:
            self.assertEqual([e.decode() if isinstance(e, bytes) else e for e in f.attrs["psa_sets"]], edits[1::2])
            self.assertEqual(f.attrs["space_size"], "400")  # 10 x 2 x 10 x 2 (pp 1, 2)
            self.assertIn("global_batch: 1024", f.attrs["base_config"])
        with h5py.File(hand, "r") as f:
            self.assertNotIn("psa_sets", f.attrs)
        shown = subprocess.run([COSMIC, "show", edited], check=True, capture_output=True, text=True).stdout
        self.assertIn("PSA edited by --set base.workload.global_batch=1024, --set parameters.workload.pp=[1,2], "
                      "--set objectives=[latency,memory]\n", shown)
        shown = subprocess.run([COSMIC, "show", edited, "--psa"], check=True, capture_output=True, text=True).stdout
        self.assertTrue(shown.endswith("# edited by --set objectives=[latency,memory]\n"), shown[-200:])
        # A PSA without a final newline: the edits still follow on lines of their own.
        unended = os.path.join(self.dir, "unended.yaml")
        with open(unended, "w") as f:
            f.write(text.rstrip("\n"))
        unended_h5 = os.path.join(self.dir, "unended.h5")
        subprocess.run([COSMIC, "sweep", unended, "-o", unended_h5, "-q", "--set", "derived.tp=auto"], check=True)
        shown = subprocess.run([COSMIC, "show", unended_h5, "--psa"], check=True, capture_output=True, text=True).stdout
        self.assertTrue(shown.endswith("objectives: [latency, memory]\n# edited by --set derived.tp=auto\n"), shown)
        # Shards of a PSA without name: merged under the name a sweep of it has, its file's stem.
        nameless = os.path.join(self.dir, "nameless.yaml")
        with open(nameless, "w") as f:
            f.write(re.sub(r"(?m)^name:.*\n", "", text))
        nameless_parts = [os.path.join(self.dir, f"n{i}.h5") for i in range(2)]
        for i, part in enumerate(nameless_parts):
            subprocess.run([COSMIC, "sweep", nameless, "-o", part, "-q", "--shard", f"{i}/2"], check=True)
        subprocess.run([COSMIC, "merge", os.path.join(self.dir, "nm.h5"), *nameless_parts, "-q"], check=True)
        with h5py.File(nameless_parts[0], "r") as a, h5py.File(os.path.join(self.dir, "nm.h5"), "r") as b:
            self.assertEqual(a.attrs["space_name"], "nameless")
            self.assertEqual(b.attrs["space_name"], "nameless")
        # --resume with another PSA: refused as such, before the recorded edits are applied to it.
        r = subprocess.run([COSMIC, "sweep", os.path.join(DATA, "psa", "cosmic", "collective-system1.yaml"), "-o",
                            edited, "--resume", "-q"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"{edited} was written for a different PSA text than ", r.stderr)
        # Shards with the edits merge to the whole sweep (from the files alone); without, refused.
        parts = [os.path.join(self.dir, f"p{i}.h5") for i in range(2)]
        for i, part in enumerate(parts):
            sweep("workload-system1.yaml", part, "--shard", f"{i}/2", *edits)
        merged = os.path.join(self.dir, "m.h5")
        subprocess.run([COSMIC, "merge", merged, *parts, "-q"], check=True)
        same_result(self, merged, edited)
        with h5py.File(merged, "r") as f:
            self.assertEqual(len(f.attrs["psa_sets"]), 3)
            self.assertEqual(f.attrs["space_name"], "workload-system1")
        # Another base file by --set base=FILE, a path relative to where the sweeps ran: merged
        # elsewhere from the files alone (the merge must not look for FILE again).
        shutil.copy(os.path.join(DATA, "configs", "cosmic-system2-baseline.yaml"), os.path.join(self.dir, "other.yaml"))
        other = [os.path.abspath(COSMIC), "sweep", os.path.abspath(psa), "-q", "--set", "base=other.yaml"]
        other_parts = [os.path.join(self.dir, f"o{i}.h5") for i in range(2)]
        for i, part in enumerate(other_parts):
            subprocess.run(other + ["-o", part, "--shard", f"{i}/2"], cwd=self.dir, check=True)
        other_whole, other_merged = os.path.join(self.dir, "ow.h5"), os.path.join(self.dir, "om.h5")
        subprocess.run(other + ["-o", other_whole], cwd=self.dir, check=True)
        subprocess.run([COSMIC, "merge", other_merged, *other_parts, "-q"], check=True)
        same_result(self, other_merged, other_whole)
        with h5py.File(other_whole, "r") as a, h5py.File(edited, "r") as b:
            self.assertNotEqual(a.attrs["base_config"], b.attrs["base_config"])
        # A resume whose base file has an error of its own reports that error, not the edits.
        base_edit = os.path.join(self.dir, "base-edit.h5")
        subprocess.run([COSMIC, "sweep", by_hand, "-o", base_edit, "-q", "--set", "objectives=[latency]"], check=True)
        with open(base, "a") as f:
            f.write("bogus_key: 1\n")
        r = subprocess.run([COSMIC, "sweep", by_hand, "-o", base_edit, "--resume", "-q"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown key 'bogus_key'", r.stderr)
        self.assertNotIn("was written with", r.stderr)
        with open(base, "w") as f:
            f.write(open(os.path.join(DATA, "configs", "cosmic-system1-baseline.yaml")).read()
                    .replace("global_batch: 2048", "global_batch: 1024"))
        plain = os.path.join(self.dir, "plain.h5")
        sweep("workload-system1.yaml", plain, "--shard", "1/2")
        r = subprocess.run([COSMIC, "merge", os.path.join(self.dir, "m2.h5"), parts[0], plain, "-q"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("its list of --set edits differs", r.stderr)
        # A search stopped after each generation and resumed without the edits equals one run
        # through, and the search of the file edited by hand.
        search = [COSMIC, "search", psa, "--agent", "nsga2", "--budget", "300", "--population", "20", "--seed", "4",
                  "-q", "--backend", BACKEND]
        stepped, through, hand_s = (os.path.join(self.dir, n) for n in ("st.h5", "th.h5", "hs.h5"))
        subprocess.run(search + ["-o", stepped, "--time-limit", "1e-9", *edits], check=True)
        for _ in range(20):
            subprocess.run([COSMIC, "search", psa, "-o", stepped, "--resume", "-q", "--time-limit", "1e-9"], check=True)
        subprocess.run(search + ["-o", through, *edits], check=True)
        subprocess.run([c if c != psa else by_hand for c in search] + ["-o", hand_s], check=True)
        with h5py.File(stepped, "r") as a, h5py.File(through, "r") as b, h5py.File(hand_s, "r") as c:
            self.assertEqual(a.attrs["complete"], 1)
            for name in b["evaluated"]:
                np.testing.assert_array_equal(a["evaluated"][name][:], b["evaluated"][name][:], name)
                np.testing.assert_array_equal(c["evaluated"][name][:], b["evaluated"][name][:], name)
        # A sweep interrupted and resumed without the edits equals one run through with them.
        self.interrupted_then_resumed(signal.SIGINT, ["--set", "base.workload.global_batch=1024"])

    def test_two_runs_started_together_leave_one_intact_file(self):
        # Each run makes OUT.partial exclusively: the one that loses refuses, and cannot empty the
        # winner's (it truncated it: a file marked complete with blank gene labels).
        out = os.path.join(self.dir, "race.h5")
        cmd = [COSMIC, "sweep", os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml"), "-o", out, "-q"]
        for _ in range(10):
            for path in (out, out + ".partial"):
                if os.path.exists(path):
                    os.remove(path)
            runs = [subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True) for _ in range(2)]
            codes = [(p.wait(timeout=60), p.stderr.read()) for p in runs]
            self.assertIn(0, [c for c, _ in codes], codes)
            for c, err in codes:
                if c != 0:
                    self.assertIn("another cosmic run is writing it", err)
            with h5py.File(out, "r") as f:
                self.assertEqual(f.attrs["complete"], 1)
                self.assertTrue(all(len(x) > 0 for x in f["genes"]["workload.dp"][:]))

    def test_a_file_being_written_is_not_taken_by_a_second_run(self):
        # Both runs used to exit 0, the file holding the second one's results only. cosmic's own
        # lock holds also where HDF5's locks are turned off (HDF5_USE_FILE_LOCKING=FALSE).
        base = {k: v for k, v in self.KILL_ENV.items() if k != "HDF5_USE_FILE_LOCKING"}
        for env in (base, dict(base, HDF5_USE_FILE_LOCKING="FALSE")):
            out = os.path.join(self.dir, "busy.h5")
            if os.path.exists(out):
                os.remove(out)
            p = subprocess.Popen(self.kill_cmd(out, "0/16"), env=env)
            try:
                for _ in range(200):
                    if os.path.exists(out) or p.poll() is not None:
                        break
                    time.sleep(0.05)
                self.assertIsNone(p.poll(), "the first run stopped before the second started")
                for cmd in ("sweep", "search"):
                    second = [COSMIC, cmd, os.path.join(DATA, "psa", "cosmic", "workload-system1.yaml"), "-o", out,
                              "-q", "--budget", "10"][:6 if cmd == "sweep" else 8]
                    r = subprocess.run(second, capture_output=True, text=True, env=env)
                    self.assertEqual(r.returncode, 1, r.stderr)
                    self.assertIn("another cosmic run is writing it", r.stderr)
                r = subprocess.run(self.kill_cmd(out, "0/16") + ["--resume"], capture_output=True, text=True, env=env)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("another cosmic run is writing it", r.stderr)
            finally:
                p.send_signal(signal.SIGINT)
                p.wait(timeout=60)
            with h5py.File(out, "r") as f:
                self.assertIn("collective-system1", f.attrs["psa_file"])

    def test_sigkill_leaves_a_readable_file(self):
        self.interrupted_then_resumed(signal.SIGKILL)

    def test_sigkill_during_keep_all_leaves_readable_rows(self):
        # /all is appended in whole chunks; a kill leaves the rows all_rows counts (below
        # all_next_index), and --resume regenerates the rest: the result equals an uninterrupted
        # run's, row for row. Also from what a kill inside an HDF5 flush can leave: columns
        # extended past their stored chunks (rows that read as zeros), in a file that records
        # all_rows and in one written before it did (the rows below all_next_index count).
        def args(shard):
            return [COSMIC, "sweep", os.path.join(DATA, "psa", "cosmic", "collective-system1.yaml"), "--quiet",
                    "--shard", shard, "--backend", BACKEND, "--batch-seconds", "0.1", "--keep", "all"]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        out = os.path.join(self.dir, "all-killed.h5")
        shard, rc = interrupt(self, lambda shard: args(shard) + ["-o", out], ["0/64", "0/16", "0/4"],
                              signal.SIGKILL, 1.0, env)
        self.assertEqual(rc, -signal.SIGKILL)
        read_everything(out, all_rows=True)
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["complete"], 0)
            self.assertEqual(f.attrs["all_rows"] % 16384, 0)  # whole chunks only
            for c in f["all"]:
                self.assertGreaterEqual(len(f["all"][c]), f.attrs["all_rows"], c)
                self.assertEqual(len(f["all"][c]) % 16384, 0, c)
        extended, old = os.path.join(self.dir, "all-extended.h5"), os.path.join(self.dir, "all-old.h5")
        shutil.copy(out, extended)
        with h5py.File(extended, "r+") as f:
            for c in f["all"]:
                f["all"][c].resize((len(f["all"][c]) + 2 * 16384,))
        shutil.copy(extended, old)
        with h5py.File(old, "r+") as f:
            for g in [f] + list(f["state"].values()):
                if "all_rows" in g.attrs:
                    del g.attrs["all_rows"]
        ref = os.path.join(self.dir, "all-ref.h5")
        subprocess.run(args(shard) + ["-o", ref], env=env, check=True)
        # cosmic merge takes a killed shard's rows that all_rows counts, not the zeros past them.
        merged = os.path.join(self.dir, "all-merged.h5")
        subprocess.run([COSMIC, "merge", merged, extended, "--quiet"], check=True)
        with h5py.File(merged, "r") as f, h5py.File(ref, "r") as g, h5py.File(extended, "r") as e:
            rows = e["state/current"].attrs["all_rows"]
            self.assertEqual(f.attrs["all_rows"], rows)
            for c in g["all"]:
                self.assertEqual(len(f["all"][c]), rows, c)
                self.assertTrue(np.array_equal(f["all"][c][:], g["all"][c][:rows]), c)
        for path in (out, extended, old):
            subprocess.run(args(shard) + ["-o", path, "--resume"], env=env, check=True, stderr=subprocess.DEVNULL)
            with h5py.File(path, "r") as f, h5py.File(ref, "r") as g:
                self.assertEqual(f.attrs["complete"], 1)
                self.assertEqual(f.attrs["all_rows"], len(g["all/index"]))
                for c in ["index", "index_hi"] + list(g["all"]):
                    self.assertEqual(len(f["all"][c]), len(g["all"][c]), f"{path}: {c}")
                    self.assertTrue(np.array_equal(f["all"][c][:], g["all"][c][:]), f"{path}: {c}")
            same_result(self, path, ref)


class Dimensions(unittest.TestCase):
    """Every group of every kind of result file opens in xarray without phony_dims, with
    meaningful dimensions (docs/results-format.md, "Reading with xarray")."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    @unittest.skipUnless(HAVE_XARRAY, NO_XARRAY)
    def test_every_group_opens_with_named_dimensions(self):
        import xarray as xr
        psa = points_psa(self.dir)
        files = {}

        def run(name, *args):
            files[name] = os.path.join(self.dir, name + ".h5")
            subprocess.run([COSMIC, *args[:1], psa, "-o", files[name], "-q", "--backend", BACKEND, *args[1:]], check=True)

        run("sweep", "sweep", "--keep", "all")
        run("shard0", "sweep", "--keep", "all", "--shard", "0/2")
        run("shard1", "sweep", "--keep", "all", "--shard", "1/2")
        files["merged"] = os.path.join(self.dir, "merged.h5")
        subprocess.run([COSMIC, "merge", files["merged"], files["shard0"], files["shard1"], "--quiet"], check=True)
        search = ["search", "--agent", "ga", "--budget", "200", "--population", "20", "--seed", "3"]
        run("search", *search)
        run("feasible", *search, "--keep", "feasible")
        run("nsga2", "search", "--agent", "nsga2", "--budget", "200", "--population", "20")
        for name, path in files.items():
            self.assertEqual(dimension_problems(path), [], name)
            with h5py.File(path, "r") as f:
                groups = {g.lstrip("/") for g in h5_groups(path)}
                expected = {"genes", "reasons", "best", "evaluated", "generations", "checkpoint"} \
                    if name in ("search", "feasible") \
                    else {"genes", "reasons", "best", "evaluated", "generations", "checkpoint", "pareto"} if name == "nsga2" \
                    else {"genes", "top/latency", "top/cost", "pareto", "histogram", "reasons", "all"}
                self.assertLessEqual(expected, groups, name)
                if "reasons" in f:
                    self.assertEqual(list(f["reasons/code"][:]), list(range(-1, len(f["reasons/code"]) - 1)))
                if "histogram" in f:
                    self.assertEqual(list(f["histogram/bin"][:]), list(range(302)))
                if "generations" in f:
                    self.assertEqual(list(f["generations/generation"][:]), list(range(int(f.attrs["generations"]))))
                    self.assertEqual(list(f["best/gene"].asstr()[:]), list(f.attrs["gene_names"]))
                # /genes: a dimension per gene, even where genes have as many values as each other.
                with xr.open_dataset(path, group="genes", engine="h5netcdf") as genes:
                    names = [x.decode() if isinstance(x, bytes) else x for x in f["genes"].attrs["gene_names"]]
                    self.assertEqual(sorted(genes.dims), sorted(names))
                    self.assertEqual(list(genes["workload.recompute"].values), ["none", "full"])
        # A search's /reasons names its reason codes, as a sweep's does (which counts them too).
        with h5py.File(files["sweep"], "r") as a, h5py.File(files["search"], "r") as b:
            np.testing.assert_array_equal(b["reasons/code"][:], a["reasons/code"][:])
            self.assertEqual(list(b["reasons/name"].asstr()[:]), list(a["reasons/name"].asstr()[:]))
            self.assertNotIn("count", b["reasons"])
            names = dict(zip(b["reasons/code"][:], b["reasons/name"].asstr()[:]))
            self.assertEqual(names[-1], "CONSTRAINT")
            self.assertEqual(names[0], "OK")
            self.assertLessEqual(set(b["evaluated/reason"][:]), set(names))
        # /evaluated's evaluation numbers: 0, 1, ... with --keep all; with --keep feasible those of
        # the feasible evaluations, as the same search with --keep all numbers them.
        with h5py.File(files["search"], "r") as a, h5py.File(files["feasible"], "r") as b:
            self.assertEqual(list(a["evaluated/evaluation"][:]), list(range(200)))
            feasible = a["evaluated/evaluation"][:][a["evaluated/violation"][:] == 0]
            self.assertGreater(len(feasible), 0)
            self.assertLess(len(feasible), 200)
            np.testing.assert_array_equal(b["evaluated/evaluation"][:], feasible)
            np.testing.assert_array_equal(b["evaluated/latency"][:], a["evaluated/latency"][:][feasible])


    def test_a_sweep_and_a_search_join_on_their_genes(self):
        # A sweep that folds a gene numbers its points in the folded space, a search (and a
        # sweep with --no-fold) in the PSA's; index_space says which. The search's rows map to
        # the folded sweep's index as docs/results-format.md says (mixed radix over the sweep's
        # /genes lengths, the folded genes left out), where the values agree; its /pareto index
        # is the unfolded sweep's.
        psa = points_psa(self.dir)
        out = {k: os.path.join(self.dir, k + ".h5") for k in ("folded", "unfolded", "search")}
        subprocess.run([COSMIC, "sweep", psa, "-o", out["folded"], "-q", "--keep", "all", "--backend", BACKEND], check=True)
        subprocess.run([COSMIC, "sweep", psa, "-o", out["unfolded"], "-q", "--keep", "all", "--no-fold", "--backend",
                        BACKEND], check=True)
        subprocess.run([COSMIC, "search", psa, "-o", out["search"], "-q", "--agent", "nsga2", "--budget", "400",
                        "--population", "40", "--backend", BACKEND], check=True)
        with h5py.File(out["folded"], "r") as sw, h5py.File(out["unfolded"], "r") as full, \
                h5py.File(out["search"], "r") as se:
            self.assertEqual(sw.attrs["index_space"], "folded")
            self.assertEqual(full.attrs["index_space"], "psa")
            self.assertEqual(se.attrs["index_space"], "psa")
            genes = list(sw["genes"].attrs["gene_names"])
            folded = set(sw.attrs["folded_genes"])
            self.assertEqual(folded, {"collective.policy"})
            ev = se["evaluated"]
            index = np.zeros(len(ev["violation"]), dtype=np.uint64)
            stride = 1
            for g in genes:
                if g not in folded:
                    index += ev[g][:].astype(np.uint64) * np.uint64(stride)
                stride *= len(sw["genes"][g])  # a folded gene's: 1
            row = {int(i): k for k, i in enumerate(sw["all/index"][:])}
            swept = ev["reason"][:] != -1  # /all lists the points that meet the PSA's constraints
            self.assertGreater(int(swept.sum()), 0)
            for k in np.flatnonzero(swept):
                r = row[int(index[k])]
                self.assertEqual(ev["latency"][k], sw["all/latency"][r], k)
                self.assertEqual(ev["reason"][k], sw["all/reason"][r], k)
                for g in genes:
                    if g not in folded:
                        self.assertEqual(ev[g][k], sw["all"][g][r], g)
            # A search's front by its index (the PSA's space) in the unfolded sweep.
            full_row = {int(i): k for k, i in enumerate(full["all/index"][:])}
            self.assertGreater(len(se["pareto/index"]), 1)
            for k, i in enumerate(se["pareto/index"][:]):
                self.assertEqual(se["pareto/latency"][k], full["all/latency"][full_row[int(i)]])

    @unittest.skipUnless(HAVE_XARRAY, NO_XARRAY)
    def test_docs_xarray_recipe(self):
        # docs/results-format.md "Reading a search with xarray", run as written: on a search with
        # one objective (xarray gives its objectives attribute as a plain string), whole and as a
        # kill can leave it (rows committed past the generations /generations lists).
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "results-format.md")) as f:
            doc = f.read()
        recipe = doc.split("### Reading a search with xarray", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
        psa = points_psa(self.dir)
        whole, killed = os.path.join(self.dir, "whole.h5"), os.path.join(self.dir, "killed.h5")
        subprocess.run([COSMIC, "search", psa, "-o", whole, "-q", "--agent", "ga", "--budget", "200", "--population",
                        "20", "--set", "objectives=[latency]", "--backend", BACKEND], check=True)
        shutil.copy(whole, killed)
        with h5py.File(killed, "r+") as f:
            for d in f["generations"].values():
                d.resize((7,))
        uneven = os.path.join(self.dir, "uneven.h5")  # killed inside the flush of /generations
        shutil.copy(killed, uneven)
        with h5py.File(uneven, "r+") as f:
            f["generations"]["eval_s"].resize((6,))
        for path, listed in ((whole, 10), (killed, 7), (uneven, 6)):
            ns = {}
            exec(recipe.replace('"search.h5"', repr(path)), ns)
            with h5py.File(path, "r") as f:
                self.assertEqual(ns["objectives"], ["latency"])
                self.assertIsInstance(ns["root"].attrs["objectives"], str)  # one element: a plain string
                rows = f["evaluated/generation"][:] < listed
                self.assertEqual(int(rows.sum()), 20 * listed)
                np.testing.assert_array_equal(ns["ev"]["evaluation"].values, f["evaluated/evaluation"][:][rows])
                names = dict(zip(f["reasons/code"][:], f["reasons/name"].asstr()[:]))
                self.assertEqual(list(ns["reason"].values), [names[c] for c in f["evaluated/reason"][:][rows]])
                labels = f["genes/workload.dp"].asstr()[:]
                self.assertEqual(list(ns["dp"].values), [labels[v] for v in f["evaluated/workload.dp"][:][rows]])
                curve = f["generations/best_objective"][:]
                np.testing.assert_array_equal(ns["best_so_far"].values, curve[f["evaluated/generation"][:][rows]])

    def test_every_value_carries_units(self):
        # Every double column (objectives, metrics, times, a search's curves) has a `units`
        # attribute, but for the histogram's edges (each objective's own units) and a search's
        # violation (a ranking, not a quantity); /best's values have theirs as NAME_units.
        psa = points_psa(self.dir)
        sweep_out, search_out = os.path.join(self.dir, "u-sweep.h5"), os.path.join(self.dir, "u-search.h5")
        subprocess.run([COSMIC, "sweep", psa, "-o", sweep_out, "-q", "--keep", "all", "--backend", BACKEND], check=True)
        subprocess.run([COSMIC, "search", psa, "-o", search_out, "-q", "--agent", "nsga2", "--budget", "200",
                        "--population", "20", "--backend", BACKEND], check=True)
        want = {"latency": "s", "cost": "USD", "time_s": "s", "first_token_s": "s", "memory_bytes": "bytes",
                "network_cost_usd": "USD", "tokens_per_s": "tokens/s", "mfu": "fraction of peak", "wall_s": "s",
                "agent_s": "s", "eval_s": "s", "best_objective": "s", "generation_best": "s"}  # objective 0: latency
        for path in (sweep_out, search_out):
            with h5py.File(path, "r") as f:
                checked = 0
                for group in h5_groups(path):
                    for name, d in f[group].items():
                        if d.dtype != np.float64 or name in ("edges", "violation"):
                            continue
                        self.assertEqual(d.attrs.get("units"), want[name], f"{path}: {group}/{name}")
                        checked += 1
                self.assertGreater(checked, 20)
        with h5py.File(search_out, "r") as f:
            best = f["best"].attrs
            for name in ("latency", "cost", "time_s", "first_token_s", "memory_bytes", "network_cost_usd",
                         "tokens_per_s", "mfu"):
                self.assertIn(name, best)
                self.assertEqual(best[name + "_units"], want[name], name)

    @unittest.skipUnless(HAVE_XARRAY, NO_XARRAY)
    def test_resume_gives_an_earlier_format_its_dimensions(self):
        # A sweep file as format 2 wrote it (no dimension on /genes, /histogram, /reasons; no
        # `bin`), left unfinished with nothing more to sweep: --resume publishes its reductions
        # again in format 3, with the same results.
        psa = points_psa(self.dir)
        out, ref = os.path.join(self.dir, "old.h5"), os.path.join(self.dir, "ref.h5")
        subprocess.run([COSMIC, "sweep", psa, "-o", ref, "-q", "--keep", "all", "--backend", BACKEND], check=True)
        shutil.copy(ref, out)
        with h5py.File(out, "r+") as f:
            for group in ("genes", "state/0/histogram", "state/1/histogram", "state/0/reasons", "state/1/reasons"):
                g = f[group]
                if "bin" in g:
                    del g["bin"]
                for d in g.values():
                    for a in ("DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME"):
                        if a in d.attrs:
                            del d.attrs[a]
            f.attrs["format_version"] = np.int64(2)
            f.attrs["complete"] = np.int64(0)
            f["state/current"].attrs["complete"] = np.int64(0)
        self.assertNotEqual(dimension_problems(out), [])
        subprocess.run([COSMIC, "sweep", psa, "-o", out, "--resume", "-q", "--backend", BACKEND], check=True)
        self.assertEqual(dimension_problems(out), [])
        same_result(self, out, ref)
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["format_version"], 3)
            self.assertEqual(f.attrs["complete"], 1)

    def test_a_search_of_an_earlier_format_is_not_resumed(self):
        # Format 1 lacks /evaluated's evaluation and /generations' generation, which a resumed
        # session would append to: refused with the reason, the file left as it was.
        psa = points_psa(self.dir)
        out = os.path.join(self.dir, "old.h5")
        subprocess.run([COSMIC, "search", psa, "-o", out, "-q", "--agent", "ga", "--budget", "200", "--population", "20",
                        "--time-limit", "1e-9", "--backend", BACKEND], check=True)
        with h5py.File(out, "r+") as f:
            self.assertEqual(f.attrs["format_version"], 2)
            self.assertEqual(f.attrs["complete"], 0)
            f.attrs["format_version"] = np.int64(1)
        with open(out, "rb") as f:
            before = f.read()
        r = subprocess.run([COSMIC, "search", psa, "-o", out, "--resume", "-q"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("cannot resume: the file is in search format 1, this cosmic writes format 2", r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), before)


class SearchFile(unittest.TestCase):
    FULL = ["fullstack-system2.yaml", "--agent", "nsga2", "--seed", "1", "--backend", BACKEND, "--quiet"]
    ENV = dict(os.environ, OMP_NUM_THREADS="2")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def search(self, out, *args, psa="workload-system1.yaml"):
        return [COSMIC, "search", os.path.join(DATA, "psa", "cosmic", psa), "-o", out, *args]

    def test_best_breaks_ties_by_the_other_objectives(self):
        # System 1's third dimension carries only DP traffic, hidden behind the backward pass on
        # the ideal machine: its bandwidth moves the cost, not the latency. Of the points tied on
        # latency /best is the cheapest, as a sweep's top list ranks them, not the first found.
        psa = os.path.join(self.dir, "ties.yaml")
        with open(psa, "w") as f:
            f.write("base: " + os.path.join(DATA, "configs", "cosmic-system1-baseline.yaml") + "\n"
                    "parameters:\n  network: {bandwidth_GBps.2: [150, 75, 25, 50]}\nobjectives: [latency, cost]\n")
        out = os.path.join(self.dir, "ties.h5")
        subprocess.run([COSMIC, "search", psa, "--agent", "rw", "--budget", "40", "--population", "8", "--seed", "1",
                        "-o", out, "-q"], check=True)
        with h5py.File(out, "r") as f:
            ev = f["evaluated"]
            latency, cost = ev["latency"][:], ev["cost"][:]
            self.assertEqual(len(set(latency)), 1)  # all tied
            self.assertNotEqual(cost[0], cost.min())  # the first found is not the cheapest
            self.assertEqual(f["best"].attrs["cost"], cost.min())
            self.assertEqual(labels_of(f, "network.bandwidth_GBps.2")[int(f["best"]["index"][0])], "25")
            self.assertEqual(int(f["best"].attrs["found_at_evaluation"]) - 1, int(np.argmin(cost)))
        # A search killed before it wrote /best: show --config best picks the same point from
        # /evaluated, by the same rule (ties by the other objectives), and says where it came from.
        config = ["show", out, "--config", "best"]
        written = subprocess.run([COSMIC, *config], check=True, capture_output=True, text=True).stdout
        with h5py.File(out, "r+") as f:
            del f["best"]
        read = subprocess.run([COSMIC, *config], check=True, capture_output=True, text=True)
        self.assertEqual(read.stdout, written)
        self.assertIn("the search stopped before writing /best; its best point is row", read.stderr)

    def test_show_takes_a_killed_searchs_best_from_the_generations_listed(self):
        # A killed search's /evaluated may commit rows of a generation /generations does not
        # list yet: show's best point (no /best) is the best of the listed generations' rows, the
        # point of the best so far it reports.
        out = os.path.join(self.dir, "cut.h5")
        subprocess.run(self.search(out, "--agent", "ga", "--budget", "400", "--population", "40", "--seed", "2",
                                   "--backend", BACKEND, "-q"), check=True)
        with h5py.File(out, "r+") as f:
            del f["best"]
            for a in ("stopped", "feasible_count", "best_objective"):
                del f.attrs[a]
            curve = f["generations/best_objective"][:]
            listed = int(np.argmax(curve < curve[0])) or len(curve)  # up to the first improvement, not after
            self.assertLess(listed, len(curve))
            for d in f["generations"].values():
                d.resize((listed,))
            obj = f["evaluated/runtime_x_bw"][:]
            ok = (f["evaluated/reason"][:] == 0) & (f["evaluated/generation"][:] < listed)
            expected = int(np.flatnonzero(ok)[np.argmin(obj[ok])])
            self.assertLess(obj[f["evaluated/reason"][:] == 0].min(), obj[expected])  # a later row is better
        shown = json.loads(subprocess.run([COSMIC, "show", out, "--json"], check=True, capture_output=True,
                                          text=True).stdout)
        self.assertTrue(shown["killed"])
        self.assertEqual(shown["best_objective_so_far"], obj[expected])
        r = subprocess.run([COSMIC, "show", out, "--config", "best"], check=True, capture_output=True, text=True)
        self.assertIn(f"its best point is row {expected} of /evaluated", r.stderr)

    def test_a_killed_extension_leaves_no_stale_results(self):
        # A finished search resumed with a larger budget and killed: what the last session wrote
        # when it stopped (stopped, feasible_count, best_objective, /best, /pareto) is gone, as
        # in a killed first session, until a session stops again.
        out, ref = os.path.join(self.dir, "ext.h5"), os.path.join(self.dir, "ext-ref.h5")
        args = [*self.FULL[1:], "--set", "objectives=[latency,cost]"]
        subprocess.run(self.search(out, "--budget", "20000", *args, psa=self.FULL[0]), env=self.ENV, check=True)
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["complete"], 1)
            self.assertIn("best", f)
        p = subprocess.Popen(self.search(out, "--resume", "--budget", "50000000", "--quiet", psa=self.FULL[0]), env=self.ENV)
        time.sleep(2.0)
        p.send_signal(signal.SIGKILL)
        self.assertEqual(p.wait(timeout=600), -signal.SIGKILL)
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["complete"], 0)
            self.assertEqual(f.attrs["budget"], 50000000)
            for a in ("stopped", "feasible_count", "best_objective"):
                self.assertNotIn(a, f.attrs)
            self.assertNotIn("best", f)
            self.assertNotIn("pareto", f)
            # The generations all its columns hold (a kill inside their flush can leave some
            # longer: docs/results-format.md, "Reading a killed search"), which --resume replays.
            generations = min(len(c) for c in f["generations"].values())
        shown = subprocess.run([COSMIC, "show", out], check=True, capture_output=True, text=True).stdout
        self.assertIn("killed", shown)
        # Resumed again (for a second here), it writes them anew.
        subprocess.run(self.search(out, "--resume", "--quiet", "--time-limit", "1", psa=self.FULL[0]), env=self.ENV,
                       check=True)
        with h5py.File(out, "r") as f:
            self.assertGreater(generations, 0)
            self.assertEqual(f.attrs["stopped"], "time_limit")
            self.assertIn("best", f)
            self.assertIn("pareto", f)
            self.assertGreater(len(f["generations/evaluations"]), generations)

    def test_csv_of_a_search(self):
        # --csv evaluated stops at the rows the file commits (a killed run may hold a batch past
        # evaluated_rows); --csv generations is the best-so-far curve; a sweep's table is refused
        # with the tables this file has, before anything is printed.
        out = os.path.join(self.dir, "csv.h5")
        subprocess.run(self.search(out, "--agent", "ga", "--budget", "300", "--population", "30", "--seed", "3", "--quiet"),
                       check=True)
        with h5py.File(out, "r+") as f:
            self.assertEqual(len(f["evaluated/reason"]), 300)
            self.assertEqual(f["evaluated/runtime_x_bw"].attrs["units"], "s x GB/s / 2000")
            self.assertEqual(f["evaluated/time_s"].attrs["units"], "s")
            self.assertEqual(f["generations/wall_s"].attrs["units"], "s")
            f.attrs["evaluated_rows"] = np.uint64(120)
            curve = {k: f["generations"][k][:] for k in f["generations"]}
        rows = subprocess.run([COSMIC, "show", out, "--csv", "evaluated"], check=True, capture_output=True, text=True).stdout
        self.assertEqual(len(rows.splitlines()), 1 + 120)
        import csv
        import io
        gens = list(csv.DictReader(io.StringIO(subprocess.run([COSMIC, "show", out, "--csv", "generations"], check=True,
                                                              capture_output=True, text=True).stdout)))
        self.assertEqual(sorted(gens[0]), sorted(curve))
        self.assertEqual(len(gens), 10)
        for k, v in curve.items():
            self.assertEqual([float(r[k]) for r in gens], [float(x) for x in v], k)
        r = subprocess.run([COSMIC, "show", out, "--csv", "top"], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertIn("no table /top (this file's tables: evaluated, generations)", r.stderr)
        r = subprocess.run([COSMIC, "show", out, "--csv", "all"], capture_output=True, text=True)
        self.assertIn("(this file's tables: evaluated, generations; a search keeps its points in /evaluated unless "
                      "--keep none)", r.stderr)

    def test_front_is_sorted_by_the_first_objective(self):
        # The archive finds its points in another order (evaluation numbers not increasing with
        # latency here): /pareto is written by latency, memory falling as latency rises.
        out = os.path.join(self.dir, "front.h5")
        subprocess.run(self.search(out, "--agent", "nsga2", "--budget", "2000", "--population", "100", "--seed", "0",
                                   "--set", "objectives=[latency,memory]", "--quiet"), check=True)
        with h5py.File(out, "r") as f:
            latency, memory, found = f["pareto/latency"][:], f["pareto/memory"][:], f["pareto/evaluation"][:]
            # The front's points carry the model's metrics, those of their rows in /evaluated.
            for m in ("time_s", "memory_bytes", "tokens_per_s", "mfu", "network_cost_usd", "first_token_s"):
                np.testing.assert_array_equal(f["pareto"][m][:], f["evaluated"][m][:][found.astype(np.int64)], m)
            np.testing.assert_array_equal(f["pareto/time_s"][:], latency)
        self.assertGreater(len(latency), 5)
        self.assertTrue(np.all(np.diff(latency) > 0) and np.all(np.diff(memory) < 0), (latency, memory))
        self.assertFalse(np.all(np.diff(found.astype(np.int64)) > 0), found)  # so the sort did something

    def test_serving_limits_and_first_token_column(self):
        # A serving space (generate mode) under a limit on the time to the first token, which is
        # not an objective: the sweep's /all and the search's /evaluated record each point's
        # first_token_s; the points within the limit are OK, the others the model could run are
        # LIMIT_EXCEEDED (12), and the limit in force is recorded.
        psa = os.path.join(self.dir, "serve.yaml")
        with open(psa, "w") as f:
            f.write("base: " + os.path.join(DATA, "configs", "cosmic-system1-chat.yaml") + "\n"
                    "parameters:\n  workload: {dp: {pow2: {min: 1, max: 64}}, pp: [1, 2, 4]}\n"
                    "  network: {npu_bandwidth_GBps.1: [100, 200]}\n"
                    "derived: {tp: auto}\nlimits: {first_token: 40.0}\nobjectives: [cost, per_output_token]\n")
        swept, searched = os.path.join(self.dir, "serve-sweep.h5"), os.path.join(self.dir, "serve-search.h5")
        subprocess.run([COSMIC, "sweep", psa, "--keep", "all", "-o", swept, "-q"], check=True)
        subprocess.run([COSMIC, "search", psa, "--agent", "nsga2", "--budget", "400", "--population", "40", "--seed", "2",
                        "-o", searched, "-q"], check=True)
        for path, group in ((swept, "all"), (searched, "evaluated")):
            with h5py.File(path, "r") as f:
                self.assertEqual([s.decode() if isinstance(s, bytes) else s for s in f.attrs["limits"]],
                                 ["first_token <= 40"])
                rows = f[group]
                reason, first = rows["reason"][:], rows["first_token_s"][:]
                ok, over = reason == 0, reason == 12
                self.assertGreater(int(ok.sum()), 0, path)
                self.assertGreater(int(over.sum()), 0, path)
                self.assertTrue(np.all(first[ok] <= 40.0), path)
                self.assertTrue(np.all(first[over] > 40.0), path)
                self.assertTrue(np.all(first[ok] < rows["time_s"][:][ok]), path)  # the prefill, then the decode
        # In prefill mode the first token comes at the end: first_token_s is the time.
        prefill = os.path.join(self.dir, "prefill.h5")
        subprocess.run([COSMIC, "sweep", psa, "--set", "base.workload.mode=prefill", "--set", "limits={}",
                        "--set", "objectives=[latency]", "--keep", "all", "-o", prefill, "-q"], check=True)
        with h5py.File(prefill, "r") as f:
            ok = f["all/reason"][:] == 0
            self.assertGreater(int(ok.sum()), 0)
            self.assertTrue(np.array_equal(f["all/first_token_s"][:][ok], f["all/time_s"][:][ok]))
        with h5py.File(searched, "r") as f:
            self.assertLessEqual(f["best"].attrs["first_token_s"], 40.0)

    def test_times_and_xarray(self):
        out = os.path.join(self.dir, "s.h5")
        subprocess.run(self.search(out, "--agent", "ga", "--budget", "3000", "--population", "300", "--backend", BACKEND,
                                   "--quiet"), check=True)
        with h5py.File(out, "r") as f:
            a = f.attrs
            for k in ("wall_time_s", "eval_s", "agent_s", "write_s", "writer_s"):
                self.assertIn(k, a, k)
                self.assertGreaterEqual(float(a[k]), 0.0, k)
            self.assertLessEqual(float(a["eval_s"] + a["agent_s"] + a["write_s"]), float(a["wall_time_s"]))
            self.assertAlmostEqual(float(f["generations/eval_s"][:].sum()), float(a["eval_s"]), delta=1e-9)
            self.assertEqual(len(f["evaluated/violation"]), 3000)
            self.assertEqual(a["evaluated_rows"], 3000)  # the run stopped: every row
            obj = f.attrs["objectives"][0]
            obj = obj.decode() if isinstance(obj, bytes) else obj
            col = f["evaluated"][obj][:]
        if not HAVE_XARRAY:
            self.skipTest(NO_XARRAY)
        import xarray as xr
        with xr.open_dataset(out, group="evaluated", engine="h5netcdf", phony_dims="sort") as ds:
            np.testing.assert_array_equal(ds[obj].values, col)
        # /best is a row per gene: its `index` column holds value indices, not points, so the
        # dimension is `gene` (the gene names), not `index`.
        with xr.open_dataset(out, group="best", engine="h5netcdf") as best, h5py.File(out, "r") as f:
            self.assertEqual(list(best.dims), ["gene"])
            self.assertEqual(list(best["gene"].values), list(f["best/gene"].asstr()[:]))
            self.assertEqual(best["index"].dims, ("gene",))
            np.testing.assert_array_equal(best["index"].values, f["best/index"][:])

    def test_every_time_limited_session_moves_on(self):
        # A limit shorter than one generation (or than a resume's replay) still runs one new
        # generation per session.
        out = os.path.join(self.dir, "t.h5")
        args = ["--agent", "ga", "--budget", "3000", "--population", "300", "--backend", BACKEND, "--quiet",
                "--time-limit", "1e-9"]
        counts = []
        for k in range(3):
            subprocess.run(self.search(out, *args, *(["--resume"] if k else [])), check=True, capture_output=True)
            with h5py.File(out, "r") as f:
                counts.append(int(f.attrs["evaluated_count"]))
                self.assertEqual(f.attrs["stopped"], "time_limit")
        self.assertEqual(counts, [300, 600, 900])
        # --resume without the PSA file (from another directory) takes the space the file
        # recorded, --set edits included, and ends where an uninterrupted run does.
        edited = ["--set", "objectives=[latency,cost]"]
        # A new run does not replace the unfinished one (its work would be lost) until it is removed.
        r = subprocess.run(self.search(out, *args, *edited), capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("holds an unfinished search (cosmic search --resume -o " + out + " continues it)", r.stderr)
        with h5py.File(out, "r") as f:
            self.assertEqual(int(f.attrs["evaluated_count"]), 900)
        os.remove(out)
        subprocess.run(self.search(out, *args, *edited), check=True, capture_output=True)
        # A search its --target stopped ended as asked: a new run may replace it.
        target = os.path.join(self.dir, "target.h5")
        for k in range(2):
            subprocess.run(self.search(target, "--agent", "ga", "--budget", "3000", "--population", "300", "--quiet",
                                       *(["--target", "1e9"] if k == 0 else [])), check=True, capture_output=True)
            with h5py.File(target, "r") as f:
                self.assertEqual(f.attrs["stopped"], "target" if k == 0 else "budget")
        while True:
            r = subprocess.run([os.path.abspath(COSMIC), "search", "--resume", "-o", out, "--quiet", "--time-limit", "1e-9"],
                               cwd=self.dir, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with h5py.File(out, "r") as f:
                if f.attrs["complete"]:
                    break
        whole = os.path.join(self.dir, "whole.h5")
        subprocess.run(self.search(whole, *args[:-2], *edited), check=True, capture_output=True)
        with h5py.File(out, "r") as a, h5py.File(whole, "r") as b:
            for name in ("evaluated/latency", "evaluated/cost", "pareto/index", "generations/best_objective"):
                np.testing.assert_array_equal(a[name][:], b[name][:], name)
            self.assertEqual(a.attrs["psa"], b.attrs["psa"])
        r = subprocess.run([COSMIC, "search", "-o", out, "--budget", "5"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing PSA.yaml", r.stderr)

    def test_sigkill_leaves_a_readable_file(self):
        out = os.path.join(self.dir, "killed.h5")
        # 1.5M evaluations, then 4x and 16x that when the search finished before the kill.
        budget, rc = interrupt(self, lambda b: self.search(out, "--budget", b, *self.FULL[1:], psa=self.FULL[0]),
                               ["1500000", "6000000", "24000000"], signal.SIGKILL, 0.8, self.ENV)
        self.assertEqual(rc, -signal.SIGKILL)
        budget = ["--budget", budget]
        with h5py.File(out, "r") as f:
            self.assertEqual(f.attrs["complete"], 0)
            # Every chunk decompresses: /generations whole, /evaluated's committed rows (a kill
            # inside an HDF5 flush can leave the rows that flush wrote past the file's end of
            # allocation: "addr overflow"; evaluated_rows counts only rows a completed flush wrote).
            committed = int(f.attrs.get("evaluated_rows", 0))
            for name, d in (f["evaluated"].items() if "evaluated" in f else ()):
                self.assertLessEqual(committed, len(d), name)
                d[:committed]
            for name, d in (f["generations"].items() if "generations" in f else ()):  # made at the first write
                d[:]
            if "generations" in f:
                # The generations listed have their rows among the committed ones (--keep all: a
                # row per evaluation); the committed rows past them are later generations', up to a
                # batch of them (4 at this population when the kill fell between a batch's flush of
                # its rows and of its /generations rows).
                listed, last = len(f["generations/generation"]), int(f["generations/evaluations"][-1])
                self.assertGreaterEqual(committed, last)
                generation = f["evaluated/generation"][:committed]
                self.assertTrue((generation[:last] < listed).all())
                self.assertTrue((generation[last:] >= listed).all())
        # Also from what a kill inside an HDF5 flush can leave: /evaluated's last chunk not stored
        # although the columns (and /generations) count its rows, which then read as zeros.
        extended = os.path.join(self.dir, "extended.h5")
        shutil.copy(out, extended)
        with h5py.File(extended, "r+") as f:
            for d in (f["evaluated"].values() if "evaluated" in f else ()):
                n = len(d)
                d.resize((max(n - 1, 0) // 16384 * 16384,))  # frees the last chunk
                d.resize((n,))
        # And from a kill between a batch's flush of its rows (and evaluated_rows) and of its
        # /generations rows: the last generations listed, and their counters, not yet written.
        behind = os.path.join(self.dir, "behind.h5")
        shutil.copy(out, behind)
        with h5py.File(behind, "r+") as f:
            if "generations" in f:
                g = f["generations"]
                keep = max(min(len(c) for c in g.values()) - 3, 1)
                for c in g.values():
                    c.resize((keep,))
                for a, v in (("generations", keep), ("evaluated_count", g["evaluations"][keep - 1])):
                    f.attrs[a] = np.array(v, dtype=f.attrs[a].dtype)
        ref = os.path.join(self.dir, "ref.h5")
        subprocess.run(self.search(ref, *budget, *self.FULL[1:], psa=self.FULL[0]), env=self.ENV, check=True)
        for path in (out, extended, behind):
            subprocess.run(self.search(path, "--resume", "--quiet", "--backend", BACKEND, psa=self.FULL[0]),
                           env=self.ENV, check=True)
            with h5py.File(path, "r") as a, h5py.File(ref, "r") as b:
                self.assertEqual(a.attrs["complete"], 1)
                self.assertEqual(a.attrs["best_objective"], b.attrs["best_objective"])
                for name in b["evaluated"]:
                    np.testing.assert_array_equal(a["evaluated"][name][:], b["evaluated"][name][:], name)
                np.testing.assert_array_equal(a["generations/best_objective"][:], b["generations/best_objective"][:])


def interrupt(test, cmd_for, levels, sig, delay, env):
    """Runs cmd_for(level) and sends it `sig` after `delay` seconds. When the run finished before
    the signal (exit status 0), the file is removed and the next level (more work) is tried; the
    test fails when no level was interrupted. Returns (level, exit status)."""
    for level in levels:
        cmd = cmd_for(level)
        out = cmd[cmd.index("-o") + 1]
        if os.path.exists(out):
            os.remove(out)
        p = subprocess.Popen(cmd, env=env)
        time.sleep(delay)
        p.send_signal(sig)
        rc = p.wait(timeout=600)
        if rc != 0:
            return level, rc
        print(f"{' '.join(cmd)}: finished before the signal ({delay} s)", file=sys.stderr)
    test.fail(f"every run finished before the signal ({delay} s); levels tried: {levels}")


def labels_of(f, gene):
    return [x.decode() if isinstance(x, bytes) else x for x in f["genes"][gene][:]]


def top1_column(path, obj):
    with h5py.File(path, "r") as f:
        return f["top"][obj][obj][:]


if __name__ == "__main__":
    COSMIC, DATA = sys.argv[1], sys.argv[2]
    try:
        unittest.main(argv=[sys.argv[0], "-v", *sys.argv[3:]])
    finally:
        for path in SweepFile.references.values():
            os.remove(path)
