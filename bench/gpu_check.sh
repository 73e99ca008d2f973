#!/usr/bin/env bash
# GPU check in one go (about 5 minutes on an H200, 7 with the study): builds cosmic with CUDA
# (sm_90) in build-gpu/, runs the GPU tests (batch backend and sweep parity, CPU vs CUDA), the
# sweep throughput benchmark (CPU and CUDA, System 1 full-stack space), one `cosmic sweep
# --backend cuda` into an HDF5 file, small --keep all sweeps (one with ASTRA-sim collectives)
# compared dataset by dataset with the CPU's, the agents' benchmark next to CPU and GPU
# population evaluation, and the whole study on both backends (STUDY=0 skips it); writes
# everything to $OUT (default bench/gpu-results/).
#
#   bench/gpu_check.sh            # then read $OUT/summary.txt
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-bench/gpu-results}"
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
summary="$out/summary.txt"
: >"$summary"
log() { echo "$*" | tee -a "$summary"; }

log "== $(date -u +%FT%TZ) $(hostname)"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1 && log "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
log "cores: $(nproc)"

start=$(date +%s)
if ! cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCOSMIC_CUDA=ON >"$out/cmake.log" 2>&1; then
  log "configure FAILED"; tail -30 "$out/cmake.log" | tee -a "$summary"; exit 1
fi
if ! cmake --build build-gpu -j"$(nproc)" --target cosmic cosmic_tests cosmic_bench >"$out/build.log" 2>&1; then
  log "build FAILED"; grep -E "error" "$out/build.log" | head -30 | tee -a "$summary"; exit 1
fi
log "build: $(( $(date +%s) - start )) s"

# GPU tests: backend parity and sweep parity (CPU vs CUDA); they skip only without a device.
timeout 240 build-gpu/tests/cosmic_tests --gtest_filter='AllBackends/*:Sweep.*:PopulationEvaluator.*' >"$out/gpu_tests.txt" 2>&1
log "gpu tests: exit $? ($(grep -cE '^\[       OK' "$out/gpu_tests.txt") ok, $(grep -cE '^\[  SKIPPED' "$out/gpu_tests.txt") skipped, $(grep -cE '^\[  FAILED' "$out/gpu_tests.txt") failed lines)"
grep -E "^\[  (FAILED|SKIPPED) |Failure|Skipped" "$out/gpu_tests.txt" | head -20 | tee -a "$summary"

# Throughput: configurations per second of the sweeps (and of the batch backends).
timeout 240 build-gpu/bench/cosmic_bench --benchmark_filter='Sweep|BatchCpu' \
  --benchmark_out="$out/bench_sweep.json" --benchmark_out_format=json >"$out/bench_sweep.txt" 2>&1
log "bench: exit $?"
grep -E "^BM_" "$out/bench_sweep.txt" | tee -a "$summary"

# Optional: the CUDA sweep benchmarks again with other kernel settings (kernels/sweep_cuda.cu),
# one build each, one nvcc define per variant (about 2 minutes each on 16 cores), e.g.
#   CUDA_VARIANTS="-DCOSMIC_SWEEP_MIN_BLOCKS=1 -DCOSMIC_SWEEP_MIN_BLOCKS=2 -DCOSMIC_SWEEP_MAX_PER_THREAD=1" \
#     bench/gpu_check.sh
i=0
for v in ${CUDA_VARIANTS:-}; do
  i=$((i + 1))
  dir="build-gpu-v$i"
  if cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCOSMIC_CUDA=ON "-DCMAKE_CUDA_FLAGS=$v" >"$out/cmake-v$i.log" 2>&1 &&
     cmake --build "$dir" -j"$(nproc)" --target cosmic_bench >"$out/build-v$i.log" 2>&1; then
    timeout 240 "$dir/bench/cosmic_bench" --benchmark_filter='SweepCuda' >"$out/bench_sweep_v$i.txt" 2>&1
    log "bench with $v: exit $?"
    grep -E "^BM_" "$out/bench_sweep_v$i.txt" | tee -a "$summary"
  else
    log "build with $v FAILED (see $out/build-v$i.log)"
  fi
done

# The command line on the device: a network-only System 1 sweep (6.6e7 points).
timeout 60 build-gpu/cosmic sweep data/psa/cosmic/network-system1.yaml -o "$out/network-system1-cuda.h5" \
  --backend cuda --keep pareto >"$out/sweep_cli.txt" 2>&1
log "cli sweep (cuda): exit $?; $(tail -1 "$out/sweep_cli.txt")"
timeout 60 build-gpu/cosmic sweep data/psa/cosmic/network-system1.yaml -o "$out/network-system1-cpu.h5" \
  --backend cpu --keep pareto >>"$out/sweep_cli.txt" 2>&1
log "cli sweep (cpu): exit $?; $(tail -1 "$out/sweep_cli.txt")"
python3 - "$out" <<'EOF' 2>&1 | tee -a "$summary"
import sys
try:
    import h5py
except ImportError:
    print("h5py not installed: files not compared"); sys.exit(0)
d = sys.argv[1]
with h5py.File(f"{d}/network-system1-cuda.h5") as g, h5py.File(f"{d}/network-system1-cpu.h5") as c:
    for k in ("device", "evaluated_count", "feasible_count", "configs_per_s", "wall_time_s"):
        print(f"  {k}: cuda {g.attrs[k]}  cpu {c.attrs[k]}")
    obj = g.attrs["objectives"][0]
    print("  top-1 index cuda", g["top"][obj]["index"][0], "cpu", c["top"][obj]["index"][0])
EOF
# Small sweeps with --keep all (rows written by the kernel; rows of points it does not score stay
# at reason -1), one of them with ASTRA-sim collectives (the kernels' Conventions::Any
# instantiation; the parity tests above sweep Physical spaces only): CUDA against CPU, every
# dataset of the files compared.
cat >"$out/astra-base.yaml" <<'EOF'
name: astra-base
model: GPT3-175B
system: {preset: cosmic-system1, network: {convention: astra-sim}}
workload: {mode: training, global_batch: 2048, micro_batch: 1, dp: 8, pp: 4, cp: 8, tp: 4, schedule: 1f1b,
           sharding: zero3, recompute: selective}
EOF
cat >"$out/astra-workload.yaml" <<'EOF'
name: astra-workload
base: astra-base.yaml
parameters:
  workload: {dp: {pow2: {min: 1, max: 512}}, pp: {values: [1, 2, 4]}, cp: {pow2: {min: 1, max: 512}},
             sharding: {values: [none, zero3]}}
  collective: {chunks: {values: [2, 4, 8, 16]}, multidim: {values: [baseline, localBWAware]}}
derived: {tp: auto}
constraints: ["workload.dp * workload.cp * workload.pp <= 1024"]
objectives: [runtime_x_bw, memory]
EOF
for psa in data/psa/cosmic/workload-system1.yaml data/psa/study/collective-reduced-system1.yaml \
           "$out/astra-workload.yaml"; do
  name=$(basename "$psa" .yaml)
  for b in cuda cpu; do
    timeout 60 build-gpu/cosmic sweep "$psa" -o "$out/all-$name-$b.h5" --backend "$b" --keep all --quiet \
      >>"$out/sweep_cli.txt" 2>&1 || log "keep-all sweep $name ($b): FAILED"
  done
  python3 - "$out/all-$name-cuda.h5" "$out/all-$name-cpu.h5" "$name" <<'EOF' 2>&1 | tee -a "$summary"
import sys
try:
    import h5py
    import numpy as np
except ImportError:
    print("h5py not installed: files not compared"); sys.exit(0)
g, c = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
diff = []
def visit(name, obj):
    if not isinstance(obj, h5py.Dataset):
        return
    x, y = obj[()], c[name][()]
    if x.dtype.kind == "O":
        same = list(np.ravel(x)) == list(np.ravel(y))
    else:
        same = x.shape == y.shape and x.tobytes() == y.tobytes()
    if not same:
        diff.append(name)
g.visititems(visit)
print(f"  keep-all {sys.argv[3]}: evaluated cuda {g.attrs['evaluated_count']} cpu {c.attrs['evaluated_count']}; "
      + ("all datasets identical" if not diff else "DIFFERENT: " + ", ".join(diff)))
EOF
done

# Agents next to evaluation at population 10^5 (issue #5): ask + tell on the CPU cores, the
# population evaluated on the CPU and on the GPU (copies included).
timeout 180 build-gpu/bench/cosmic_bench --benchmark_filter='Agent|PopulationEval' \
  >"$out/bench_agents.txt" 2>&1
log "agents bench: exit $?"
grep -E "^BM_" "$out/bench_agents.txt" | tee -a "$summary"

# The whole study on each backend (issue #6), figures off; where the time went, from
# summary.json; the best point of every experiment compared between the two.
if [ "${STUDY:-1}" = 1 ]; then
  for b in cuda cpu; do
    rm -rf "/tmp/cosmic-study-$b"
    t0=$(date +%s)
    timeout 300 build-gpu/cosmic study data/studies/cosmic.yaml -o "/tmp/cosmic-study-$b" --backend "$b" \
      --no-plots -q >"$out/study_$b.txt" 2>&1
    log "study ($b): exit $?, $(( $(date +%s) - t0 )) s wall"
  done
  python3 - /tmp/cosmic-study-cuda/summary.json /tmp/cosmic-study-cpu/summary.json <<'EOF' 2>&1 | tee -a "$summary"
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
for name, d in zip(("cuda", "cpu"), runs):
    t, s = d["time"], d["time"]["searches"]
    print(f"  {name}: experiments {t['experiments_s']:.1f} s = sweeps {t['sweeps']['wall_s']:.1f} + searches "
          f"{s['wall_s']:.1f} (evaluation {s['eval_s']:.1f}, agents {s['agent_s']:.1f}, waiting for writes "
          f"{s['write_s']:.1f}) + {t['around_runs_s']:.1f}; comparisons {t['comparisons_s']:.1f} s")
best = [{k: e["best"] for k, e in d["experiments"].items()} for d in runs]
print("  best points:", "identical on cuda and cpu" if best[0] == best[1] else "DIFFERENT between cuda and cpu")
EOF
fi

log "total: $(( $(date +%s) - start )) s"
