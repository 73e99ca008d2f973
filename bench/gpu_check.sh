#!/usr/bin/env bash
# GPU check in one go (about 5 minutes on an H200): builds cosmic with CUDA (sm_90) in
# build-gpu/, runs the GPU tests (batch backend and sweep parity, CPU vs CUDA), the sweep
# throughput benchmark (CPU and CUDA, System 1 full-stack space) and one `cosmic sweep
# --backend cuda` into an HDF5 file, and writes everything to $OUT (default bench/gpu-results/).
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
log "total: $(( $(date +%s) - start )) s"
