#!/usr/bin/env bash
# GPU check in one go, in at most DEADLINE_S seconds (default 420): builds cosmic with CUDA
# (sm_90) in build-gpu/, runs the GPU tests (batch backend, sweep and population parity, CPU vs
# CUDA, physical and ASTRA-sim conventions), searches at population 10^5 on CUDA and CPU
# (compared), the agents' benchmark next to CPU and GPU population evaluation, the sweep
# throughput benchmark (CPU and CUDA, System 1 full-stack space), `cosmic sweep` on CUDA and CPU
# into HDF5 files (compared), small --keep all sweeps (one with ASTRA-sim collectives) compared
# dataset by dataset with the CPU's, tests/test_h5.py with every run on CUDA, and the whole study on both backends
# (STUDY=0 skips it). Steps run in that order, most important first; a step that would not fit
# in the time left is skipped and says so. Scratch files go to $WORK (default /tmp/gpu-check);
# $OUT (default bench/gpu-results/) receives summary.txt and logs.tar.gz (every text log and the
# benchmark JSON), also when the script is stopped: the device tool returns at most 8 files.
#
#   bench/gpu_check.sh            # then read $OUT/summary.txt
#
# Every step, the builds too, ends by the deadline; give the device tool a timeout_s of about
# DEADLINE_S + 120 (the machine's start is not in it): DEADLINE_S=420 with timeout_s 540 leaves
# a 15-minute lease room for a second try. The build took 328 s of the 420 on 2026-12-04 (16
# cores), so the steps after the command-line sweeps were skipped: a second call on the still
# warm machine keeps build-gpu/ (nothing to rebuild) and reaches them. Or build here and carry
# the binaries and the shared libraries the device lacks (docs/performance.md, "Third measurement"):
# PREBUILT=DIR takes cosmic, tests/cosmic_tests and bench/cosmic_bench from DIR and libraries
# from DIR/lib, and builds nothing, not the variants either (bench/gpu_prebuilt.sh packs such a
# directory).
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
deadline=$(( start + ${DEADLINE_S:-420} ))
out="${OUT:-bench/gpu-results}"
work="${WORK:-/tmp/gpu-check}"
rm -rf "$work"
mkdir -p "$out" "$work"
export PATH="/usr/local/cuda/bin:$PATH"
# As `cosmic` sets for itself (host/main.cpp): the benchmarks then measure what the command does.
export OMP_WAIT_POLICY=passive
summary="$out/summary.txt"  # written as it goes: a run killed at its limit still returns it
: >"$summary"
log() { echo "$*" | tee -a "$summary"; }
finish() {
  log "total: $(( $(date +%s) - start )) s"
  # The small sweep files too (under 4 MB each): where the device has no h5py (the H200 machine
  # had none on 2026-11-30), compare them afterwards with bench/compare_h5.py.
  (cd "$work" && find . -maxdepth 1 -type f \( -name '*.txt' -o -name '*.log' -o -name '*.json' -o -name '*.yaml' \
     -o \( -name '*.h5' -size -4M \) \) -printf '%P\n' | tar czf - -T -) >"$out/logs.tar.gz"
}
trap finish EXIT
trap 'exit 143' TERM INT
# fits SECONDS NAME: true when SECONDS more fit before the deadline, else logs the skip.
fits() {
  local left=$(( deadline - $(date +%s) ))
  [ "$left" -ge "$1" ] && return 0
  log "skipped: $2 (needs about $1 s, $left s left)"
  return 1
}
# limit SECONDS: SECONDS, or the time left before the deadline if that is less (at least 1:
# `timeout 0` would mean no limit).
limit() {
  local left=$(( deadline - $(date +%s) ))
  left=$(( left < $1 ? left : $1 ))
  echo $(( left < 1 ? 1 : left ))
}

# The first Python with h5py (on the H200 machine the python3 on PATH, PyTorch's, has it and
# /usr/bin/python3 had none, 2026-11-30); the comparisons say so where none has.
py=python3
for c in python3 /usr/bin/python3; do "$c" -c 'import h5py' 2>/dev/null && { py=$c; break; }; done

log "== $(date -u +%FT%TZ) $(hostname), deadline ${DEADLINE_S:-420} s"
if nvidia-smi >"$work/nvidia-smi.txt" 2>&1; then
  log "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
else
  log "NO DEVICE: nvidia-smi failed (the CUDA tests will skip): $(head -3 "$work/nvidia-smi.txt")"
fi
log "cores: $(nproc); python with h5py: $py"
# What the build needs besides CUDA (the device image is not this project's CI machine): a
# missing one is named before configure fails on it.
for t in cmake make ninja g++ nvcc; do command -v "$t" >/dev/null || log "missing tool: $t"; done
for h in yaml-cpp/yaml.h cxxopts.hpp nlohmann/json.hpp hdf5.h hdf5_hl.h zlib.h gtest/gtest.h benchmark/benchmark.h; do
  echo "#include <$h>" | g++ -std=c++17 -x c++ -fsyntax-only -I/usr/include/hdf5/serial - >/dev/null 2>&1 ||
    log "missing header: $h"
done
gen=()
command -v make >/dev/null || ! command -v ninja >/dev/null || gen=(-G Ninja)

bin=build-gpu
bench=1
if [ -n "${PREBUILT:-}" ]; then
  bin=$PREBUILT
  export LD_LIBRARY_PATH="$PREBUILT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log "prebuilt binaries from $PREBUILT: $(cat "$PREBUILT/commit.txt" 2>/dev/null)"
  build_s=0
  # The data directory compiled into the tests and benchmarks, linked to this tree's where it is
  # missing (`cosmic` itself reads COSMIC_DATA_DIR).
  compiled=$(cat "$PREBUILT/data_dir.txt" 2>/dev/null)
  if [ -n "$compiled" ] && [ ! -e "$compiled" ]; then
    mkdir -p "$(dirname "$compiled")" && ln -s "$PWD/data" "$compiled" || log "cannot link $compiled to data/: tests will fail"
  fi
  export COSMIC_DATA_DIR="$PWD/data"
elif ! cmake -S . -B build-gpu "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCOSMIC_CUDA=ON >"$work/cmake.log" 2>&1; then
  log "configure FAILED"; tail -30 "$work/cmake.log" | tee -a "$summary"; exit 1
else
  timeout "$(limit 600)" cmake --build build-gpu -j"$(nproc)" --target cosmic cosmic_tests >"$work/build.log" 2>&1
  rc=$?
  if [ "$rc" = 124 ]; then log "build timed out at the deadline"; exit 1; fi
  if [ "$rc" != 0 ]; then log "build FAILED"; grep -E "error" "$work/build.log" | head -30 | tee -a "$summary"; exit 1; fi
  timeout "$(limit 600)" cmake --build build-gpu -j"$(nproc)" --target cosmic_bench >>"$work/build.log" 2>&1 ||
    { bench=0; log "cosmic_bench did not build: benchmarks skipped"; }
  build_s=$(( $(date +%s) - start ))
  log "build: $build_s s"
fi

# GPU tests: backend, sweep and population parity (CPU vs CUDA); they skip only without a device.
if fits 40 "GPU tests"; then
  timeout "$(limit 150)" "$bin"/tests/cosmic_tests --gtest_filter='AllBackends/*:Sweep.*:PopulationEvaluator.*' \
    >"$work/gpu_tests.txt" 2>&1
  log "gpu tests: exit $? ($(grep -cE '^\[       OK' "$work/gpu_tests.txt") ok, $(grep -cE '^\[  SKIPPED' "$work/gpu_tests.txt") skipped, $(grep -cE '^\[  FAILED' "$work/gpu_tests.txt") failed lines)"
  # A CUDA test that skipped did not run on the device: not a pass.
  grep -qE 'not tested:|no CUDA device:' "$work/gpu_tests.txt" && log "gpu tests: FAILED to run on the device (CUDA tests skipped)"
  grep -E "^\[  (FAILED|SKIPPED) |Failure|Skipped" "$work/gpu_tests.txt" | head -20 | tee -a "$summary"
fi

# Whole searches at population 10^5 (issue #5's `--backend cuda` searches): GA and NSGA-II (two
# objectives), 2 x 10^6 evaluations each, on CUDA breeding on the GPU (--breed device) and on the
# host, and on the CPU cores; the result files must hold the same history (compared), and their
# rate and where the time went (show's "time:" line).
if fits 60 "searches at 10^5"; then
  for agent in ga nsga2; do
    extra=()
    [ "$agent" = nsga2 ] && extra=(--set 'objectives=[runtime_x_bw, runtime_x_cost]')
    for run in cuda-device cuda-host cpu-host; do
      b=${run%-*}
      timeout "$(limit 90)" "$bin"/cosmic search data/psa/cosmic/fullstack-system1.yaml --agent "$agent" \
        --population 100000 --budget 2000000 --seed 1 --backend "$b" --breed "${run#*-}" "${extra[@]}" \
        -q -o "$work/search-$agent-$run.h5" >"$work/search-$agent-$run.txt" 2>&1
      log "search $agent --backend $b --breed ${run#*-}: exit $?"
      "$bin"/cosmic show "$work/search-$agent-$run.h5" 2>&1 | grep -vE '^  (/evaluated|population)' | head -4 | tee -a "$summary"
    done
    for run in cuda-host cpu-host; do
      "$py" bench/compare_h5.py "$work/search-$agent-cuda-device.h5" "$work/search-$agent-$run.h5" \
        "search $agent, cuda-device vs $run" 2>&1 | tail -3 | tee -a "$summary"
    done
  done
fi

# Agents next to evaluation at population 10^5 (issue #5): ask + tell on the CPU cores, the
# population evaluated on the CPU and on the GPU (copies included).
if [ "$bench" = 1 ] && fits 45 "agents benchmark"; then
  timeout "$(limit 120)" "$bin"/bench/cosmic_bench --benchmark_filter='Agent|PopulationEval' \
    --benchmark_min_time=0.3 >"$work/bench_agents.txt" 2>&1
  log "agents bench: exit $?"
  grep -E "^BM_" "$work/bench_agents.txt" | tee -a "$summary"
fi
# How the agents' host work scales with the threads (GA's ask and tell, NSGA-II's sort of six
# objectives on the threads since 2026-12-04): 1 and 4 threads, next to all of them above.
if [ "$bench" = 1 ] && fits 40 "agents thread scaling"; then
  for t in 1 4; do
    OMP_NUM_THREADS=$t timeout "$(limit 40)" "$bin"/bench/cosmic_bench \
      --benchmark_filter='BM_Agent_(ga|nsga2_6)/100000' >"$work/bench_agents_t$t.txt" 2>&1
    log "agents bench, $t threads: exit $?"
    grep -E "^BM_" "$work/bench_agents_t$t.txt" | tee -a "$summary"
  done
fi

# Throughput: configurations per second of the sweeps (and of the batch backends).
if [ "$bench" = 1 ] && fits 60 "sweep benchmark"; then
  timeout "$(limit 150)" "$bin"/bench/cosmic_bench --benchmark_filter='Sweep|BatchCpu' \
    --benchmark_out="$work/bench_sweep.json" --benchmark_out_format=json >"$work/bench_sweep.txt" 2>&1
  log "bench: exit $?"
  grep -E "^BM_" "$work/bench_sweep.txt" | tee -a "$summary"
fi

# The command line on the device, CUDA and CPU: a network-only System 1 sweep (6.6e7 points, the
# constraints skip most), and the collective space with an algorithm per collective type (1.3e8
# points once folded, every one through the whole model: the rate of full evaluations; 57.5 s on
# the 2-core development machine).
for psa in network-system1 collective-system1; do
  fits 30 "command-line sweeps of $psa" || continue
  for b in cuda cpu; do
    timeout "$(limit 60)" "$bin"/cosmic sweep "data/psa/cosmic/$psa.yaml" -o "$work/$psa-$b.h5" \
      --backend "$b" --keep pareto >>"$work/sweep_cli.txt" 2>&1
    log "cli sweep $psa ($b): exit $?; $(tail -1 "$work/sweep_cli.txt")"
  done
  "$py" bench/compare_h5.py "$work/$psa-cuda.h5" "$work/$psa-cpu.h5" "$psa, cuda vs cpu" 2>&1 | tee -a "$summary"
done

# Small sweeps with --keep all (rows written by the kernel; rows of points it does not score stay
# at reason -1), one of them with ASTRA-sim collectives (the kernels' Conventions::Any
# instantiation), one a mixture of experts (expert parallelism, all-to-alls): CUDA against CPU,
# every dataset of the files compared.
cat >"$work/astra-base.yaml" <<'EOF'
name: astra-base
model: GPT3-175B
system: {preset: cosmic-system1, network: {convention: astra-sim}}
workload: {mode: training, global_batch: 2048, micro_batch: 1, dp: 8, pp: 4, cp: 8, tp: 4, schedule: 1f1b,
           sharding: zero3, recompute: selective}
EOF
cat >"$work/astra-workload.yaml" <<'EOF'
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
           data/psa/moe/mixtral-h100.yaml "$work/astra-workload.yaml"; do
  name=$(basename "$psa" .yaml)
  fits 15 "keep-all sweeps of $name" || continue
  for b in cuda cpu; do
    timeout "$(limit 60)" "$bin"/cosmic sweep "$psa" -o "$work/all-$name-$b.h5" --backend "$b" --keep all --quiet \
      >>"$work/sweep_cli.txt" 2>&1 || log "keep-all sweep $name ($b): FAILED"
  done
  "$py" bench/compare_h5.py "$work/all-$name-cuda.h5" "$work/all-$name-cpu.h5" "keep-all $name, cuda vs cpu" 2>&1 | tee -a "$summary"
done

# The result-file tests (tests/test_h5.py: sweeps, shards, merges, kills and resumes, searches,
# xarray) with every run on CUDA.
if ! "$py" -c 'import h5py' 2>/dev/null; then
  log "skipped: result-file tests on cuda (no Python with h5py)"
elif fits 150 "result-file tests on cuda"; then
  COSMIC_TEST_BACKEND=cuda timeout "$(limit 300)" "$py" tests/test_h5.py "$bin"/cosmic "$PWD/data" >"$work/test_h5_cuda.txt" 2>&1
  log "tests/test_h5.py on cuda: exit $?; $(grep -E '^(Ran|OK|FAILED)' "$work/test_h5_cuda.txt" | tr '\n' ' ')"
  grep -E "^(FAIL|ERROR):" "$work/test_h5_cuda.txt" | head -10 | tee -a "$summary"
fi

# The whole study (issue #6), figures off: on CUDA and on the CPU with JOBS runs at a time
# (default 8, `cosmic study --jobs`), then CUDA one run at a time if time is left; where the time
# went, from summary.json; every experiment's best point compared with the first study's.
if [ "${STUDY:-1}" = 1 ]; then
  jobs="${JOBS:-8}"
  summaries=()
  for run in "cuda $jobs" "cpu $jobs" "cuda 1"; do
    set -- $run
    fits 90 "study --backend $1 --jobs $2" || continue
    dir="/tmp/cosmic-study-$1-j$2"
    rm -rf "$dir"
    t0=$(date +%s)
    timeout "$(limit 240)" "$bin"/cosmic study data/studies/cosmic.yaml -o "$dir" --backend "$1" --jobs "$2" \
      --no-plots -q >"$work/study_$1_j$2.txt" 2>&1
    rc=$?
    log "study --backend $1 --jobs $2: exit $rc, $(( $(date +%s) - t0 )) s wall"
    [ "$rc" = 0 ] && summaries+=("$dir/summary.json")
  done
  if [ "${#summaries[@]}" -gt 0 ]; then
    "$py" - "${summaries[@]}" <<'EOF' 2>&1 | tee -a "$summary"
import json, sys
runs = [(p, json.load(open(p))) for p in sys.argv[1:]]
for p, d in runs:
    t, s = d["time"], d["time"]["searches"]
    print(f"  {p}: experiments {t['experiments_s']:.1f} s (jobs {t.get('jobs', 1)}); run times summed: sweeps "
          f"{t['sweeps']['wall_s']:.1f}, searches {s['wall_s']:.1f} (evaluation {s['eval_s']:.1f}, agents "
          f"{s['agent_s']:.1f}, waiting for writes {s['write_s']:.1f}); comparisons {t['comparisons_s']:.1f} s")
best = [{k: e["best"] for k, e in d["experiments"].items()} for _, d in runs]
for (p, _), b in zip(runs[1:], best[1:]):
    print(f"  best points of {p}:", "identical to the first study's" if b == best[0] else "DIFFERENT from the first study's")
EOF
  fi
fi

# Last, when time is left: the CUDA sweep benchmarks again with other kernel settings
# (kernels/sweep_kernel.cuh and host/sweep_cuda.cu; both defaults measured 2026-12-04, docs/performance.md: 2-5% and 3.0x
# slower than the default build), one build each, one nvcc define per variant (about 2 minutes each on
# 16 cores). By default: the sweep kernel held to 80 registers (3 blocks of 256 threads per SM,
# as ptxas chose for model revision 9 before a mixture's dense layers; the default build now
# takes 128 again, docs/performance.md), then the plain thread-to-part map against the default
# build's warps lined up on the fastest genes; e.g.
#   CUDA_VARIANTS="-DCOSMIC_SWEEP_MIN_BLOCKS=1 -DCOSMIC_SWEEP_MAX_PER_THREAD=1" STUDY=0 bench/gpu_check.sh
i=0
variants="-DCOSMIC_SWEEP_MIN_BLOCKS=3 -DCOSMIC_SWEEP_LINE_UP_WARPS=0"
[ -n "${PREBUILT:-}" ] && variants=""  # prebuilt: no builds here
for v in ${CUDA_VARIANTS-$variants}; do
  i=$((i + 1))
  dir="build-gpu-v$i"
  fits $(( build_s + 90 )) "variant $v" || continue  # a build as long as the first, then the benchmark
  if cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCOSMIC_CUDA=ON "-DCMAKE_CUDA_FLAGS=$v" >"$work/cmake-v$i.log" 2>&1 &&
     timeout "$(limit 600)" cmake --build "$dir" -j"$(nproc)" --target cosmic_bench >"$work/build-v$i.log" 2>&1; then
    timeout "$(limit 120)" "$dir/bench/cosmic_bench" --benchmark_filter='SweepCuda' >"$work/bench_sweep_v$i.txt" 2>&1
    log "bench with $v: exit $?"
    grep -E "^BM_" "$work/bench_sweep_v$i.txt" | tee -a "$summary"
  else
    log "build with $v FAILED (see build-v$i.log)"
  fi
done
