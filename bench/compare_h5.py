#!/usr/bin/env python3
"""Compares two cosmic result files dataset by dataset (bytes, or values for strings), in both
directions, and their attributes (of the root, every group and every dataset); prints one line:
the counts both files record and what differs. What differs by nature between two runs of the
same work is left out: the per-generation timings (/generations/*_s), the root's timings, host,
backend and device (thread count), creation time and command line (which names the output file). bench/gpu_check.sh uses it for
CUDA-vs-CPU sweeps; where the device lacks h5py, run it on the files from logs.tar.gz instead.

usage: compare_h5.py A.h5 B.h5 [LABEL]
exit status 0 when identical, 1 when they differ, 2 when they could not be compared
"""
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError:
    print("  h5py not installed: files not compared (run bench/compare_h5.py where it is)")
    sys.exit(2)

TIMINGS = {"generations/wall_s", "generations/agent_s", "generations/eval_s"}
VOLATILE = {"agent_s", "eval_s", "write_s", "writer_s", "wall_time_s", "configs_per_s", "evaluated_per_s", "created", "host",
            "command_line", "state_slot",  # a sweep's published state slot: as many flips as batches
            "backend", "device", "breeding",  # where it ran: the results are the same on any backend and thread count
            "DIMENSION_LIST", "REFERENCE_LIST"}  # the last two: object references, which differ between files


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
        out[name] = f[name]
        if isinstance(f[name], h5py.Group):
            f[name].visititems(lambda sub, obj, top=name: out.__setitem__(top + "/" + sub, obj))
    return {n: o for n, o in out.items() if n not in TIMINGS}


def attributes_differ(x, y):
    """Names of the attributes of two objects that differ, the volatile ones aside."""
    keys = (set(x.attrs) | set(y.attrs)) - VOLATILE
    return sorted(k for k in keys if (k in x.attrs) != (k in y.attrs) or
                  (k in x.attrs and not np.array_equal(np.asarray(x.attrs[k]), np.asarray(y.attrs[k]))))


def same(x, y):
    if isinstance(x, h5py.Group) or isinstance(y, h5py.Group):
        return isinstance(x, h5py.Group) and isinstance(y, h5py.Group)
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
        return 2
    try:
        a, b = h5py.File(a_path, "r"), h5py.File(b_path, "r")
    except OSError as e:
        print(f"  {label}: not compared, {e}")
        return 2
    with a, b:
        da, db = datasets(a), datasets(b)
        differ = [n + " (missing in B)" for n in sorted(set(da) - set(db))]
        differ += [n + " (missing in A)" for n in sorted(set(db) - set(da))]
        both = sorted(set(da) & set(db))
        differ += [n for n in both if not same(da[n], db[n])]
        differ += [f"attribute {k}" for k in attributes_differ(a, b)]
        differ += [f"attribute {n}:{k}" for n in both for k in attributes_differ(da[n], db[n])]
        counts = " ".join(f"{k} {a.attrs[k]}/{b.attrs[k]}" for k in ("evaluated_count", "feasible_count")
                          if k in a.attrs and k in b.attrs)
        print(f"  {label}: {sum(isinstance(o, h5py.Dataset) for o in da.values())} datasets, {counts}; "
              + ("all identical" if not differ else "DIFFERENT: " + ", ".join(differ)))
        return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
