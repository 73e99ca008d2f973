#!/usr/bin/env python3
"""Scan the DGX presets' calibration constants against the ground-truth set.

Shows how the shipped constants were chosen: for each grid point it writes temporary copies
of data/systems/dgx-a100.yaml and dgx-h100.yaml with the constants replaced, runs
`cosmic validate --json` on the CSV and prints the summary. Constants are shared by every row
of a GPU type (no per-row fitting); the grid is small and coarse on purpose.

usage: scripts/calibration_scan.py [--cosmic build/cosmic] [--csv data/validation/groundtruth-dev.csv]
       [--set KEY=v1,v2,...]...   (KEY = a100.gemm_eff_max, h100.fp8_eff, both.dp_overlap, ...)
"""
import argparse
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--cosmic", default="build/cosmic")
ap.add_argument("--csv", default="data/validation/groundtruth-dev.csv")
ap.add_argument("--set", action="append", default=[], help="KEY=v1,v2,... grid axis")
ap.add_argument("--top", type=int, default=10)
args = ap.parse_args()

axes = []
for s in args.set:
    key, vals = s.split("=", 1)
    axes.append((key, vals.split(",")))

src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
results = []
with tempfile.TemporaryDirectory() as tmp:
    data = os.path.join(tmp, "data")
    shutil.copytree(src, data)
    originals = {g: open(os.path.join(src, "systems", f"dgx-{g}.yaml")).read() for g in ("a100", "h100")}
    for point in itertools.product(*[v for _, v in axes]):
        texts = dict(originals)
        for (key, _), val in zip(axes, point):
            gpu, const = key.split(".")
            for g in (("a100", "h100") if gpu == "both" else (gpu,)):
                texts[g], n = re.subn(rf"(\n  {const}: )[^\n]*", rf"\g<1>{val}", texts[g])
                if n != 1:
                    raise SystemExit(f"{const} not found once in dgx-{g}.yaml")
        for g, t in texts.items():
            open(os.path.join(data, "systems", f"dgx-{g}.yaml"), "w").write(t)
        out = subprocess.run([args.cosmic, "validate", args.csv, "--json"], capture_output=True, text=True,
                             env=dict(os.environ, COSMIC_DATA_DIR=data), check=True).stdout
        rep = json.loads(out)
        s = rep["summary"]
        korth = [abs(r["error_pct"]) for r in rep["rows"] if r["row_id"] in {str(i) for i in range(23, 31)}]
        results.append((s["median_abs_pct"], s["max_abs_pct"], s["mean_abs_pct"], statistics.mean(korth), point))

results.sort(key=lambda r: (max(r[0] / 10, r[1] / 25, r[3] / 5), r[2]))
print("median  max    mean   korth5  " + "  ".join(k for k, _ in axes))
for med, mx, mean, k5, point in results[: args.top]:
    print(f"{med:6.2f} {mx:6.2f} {mean:6.2f} {k5:6.2f}   " + "  ".join(point))
