#!/usr/bin/env python3
"""Compares two cosmic result files dataset by dataset (bytes, or values for strings) and prints
one line: the counts both files record and which datasets differ. bench/gpu_check.sh uses it for
CUDA-vs-CPU sweeps; where the device lacks h5py, run it on the files from logs.tar.gz instead.

usage: compare_h5.py A.h5 B.h5 [LABEL]      exit status 0 when every dataset is identical
"""
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError:
    print("  h5py not installed: files not compared (run bench/compare_h5.py where it is)")
    sys.exit(0)


def main():
    a_path, b_path = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else os.path.basename(a_path)
    if not (os.path.exists(a_path) and os.path.exists(b_path)):
        print(f"  {label}: not compared, a file is missing")
        return 1
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        differ, count = [], 0

        def visit(name, obj):
            nonlocal count
            if not isinstance(obj, h5py.Dataset):
                return
            count += 1
            if name not in b:
                differ.append(name + " (missing)")
                return
            x, y = obj[()], b[name][()]
            if x.dtype.kind == "O":
                same = list(np.ravel(x)) == list(np.ravel(y))
            else:
                same = x.shape == y.shape and x.tobytes() == y.tobytes()
            if not same:
                differ.append(name)

        # Sweep files keep two copies of their reductions (/state/0, /state/1); the published one
        # is reached through the soft links /top, /pareto, /histogram, /reasons, which
        # visititems does not follow. The other copy holds an older batch's state, which depends
        # on how the backend split the work, so it is not compared.
        for name in a:  # a[name] follows a soft link
            if name == "state":
                continue
            if isinstance(a[name], h5py.Dataset):
                visit(name, a[name])
            else:
                a[name].visititems(lambda sub, obj, top=name: visit(top + "/" + sub, obj))
        counts = " ".join(f"{k} {a.attrs[k]}/{b.attrs[k]}" for k in ("evaluated_count", "feasible_count")
                          if k in a.attrs and k in b.attrs)
        print(f"  {label}: {count} datasets, {counts}; "
              + ("all identical" if not differ else "DIFFERENT: " + ", ".join(differ)))
        return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
