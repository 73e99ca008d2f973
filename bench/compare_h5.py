#!/usr/bin/env python3
"""Compares two cosmic result files dataset by dataset (bytes, or values for strings), in both
directions, and the counts of their root attributes; prints one line: the counts both files
record and what differs. bench/gpu_check.sh uses it for CUDA-vs-CPU sweeps; where the device
lacks h5py, run it on the files from logs.tar.gz instead.

usage: compare_h5.py A.h5 B.h5 [LABEL]      exit status 0 when every dataset and count is identical
"""
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError:
    print("  h5py not installed: files not compared (run bench/compare_h5.py where it is)")
    sys.exit(0)

COUNTS = ("swept_count", "evaluated_count", "feasible_count", "space_size", "next_index", "complete")


def datasets(f):
    """name -> dataset of a file's results. Sweep files keep two copies of their reductions
    (/state/0, /state/1); the published one is reached through the soft links /top, /pareto,
    /histogram, /reasons, which visititems does not follow. The other copy holds an older batch's
    state, which depends on how the backend split the work, so it is left out; so are a search's
    /checkpoint slots, taken at moments that depend on timing."""
    out = {}
    for name in f:  # f[name] follows a soft link
        if name in ("state", "checkpoint"):
            continue
        if isinstance(f[name], h5py.Dataset):
            out[name] = f[name]
        else:
            f[name].visititems(lambda sub, obj, top=name: out.__setitem__(top + "/" + sub, obj)
                               if isinstance(obj, h5py.Dataset) else None)
    return out


def same(x, y):
    x, y = x[()], y[()]
    if getattr(x, "dtype", None) is not None and x.dtype.kind == "O":
        return list(np.ravel(x)) == list(np.ravel(y))
    return np.shape(x) == np.shape(y) and np.asarray(x).tobytes() == np.asarray(y).tobytes()


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    a_path, b_path = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else os.path.basename(a_path)
    if not (os.path.isfile(a_path) and os.path.isfile(b_path)):
        print(f"  {label}: not compared, a file is missing")
        return 1
    try:
        a, b = h5py.File(a_path, "r"), h5py.File(b_path, "r")
    except OSError as e:
        print(f"  {label}: not compared, {e}")
        return 1
    with a, b:
        da, db = datasets(a), datasets(b)
        differ = [n + " (missing in B)" for n in sorted(set(da) - set(db))]
        differ += [n + " (missing in A)" for n in sorted(set(db) - set(da))]
        differ += [n for n in sorted(set(da) & set(db)) if not same(da[n], db[n])]
        differ += [f"attribute {k}" for k in COUNTS
                   if (k in a.attrs) != (k in b.attrs) or (k in a.attrs and str(a.attrs[k]) != str(b.attrs[k]))]
        counts = " ".join(f"{k} {a.attrs[k]}/{b.attrs[k]}" for k in ("evaluated_count", "feasible_count")
                          if k in a.attrs and k in b.attrs)
        print(f"  {label}: {len(da)} datasets, {counts}; "
              + ("all identical" if not differ else "DIFFERENT: " + ", ".join(differ)))
        return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
