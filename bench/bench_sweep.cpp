// Configurations per second of exhaustive sweeps (host/sweep.hpp) on the COSMIC study's
// System 1 full-stack space: data/psa/cosmic/fullstack-system1.yaml when present, else the
// same space built in code (tests/space_fixtures.hpp).
//
//   build/bench/cosmic_bench --benchmark_filter=Sweep
//
// A full sweep's rate is the space size over the time spent; most of the space violates a
// constraint on the most significant genes (NPUs per dimension, topology of dimension 0) and is
// skipped in O(1) per run, so the rate is measured on 64 slices of 2^22 indices at random
// places (fixed seed): the dead ones cost little, as they do in a full sweep. `Live` measures
// a slice inside a region where those constraints hold (the slowest case).
// Results: docs/performance.md.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "host/backend.hpp"
#include "host/sweep.hpp"
#include "../tests/space_fixtures.hpp"

namespace {

using namespace cosmic;

const psa::DesignSpace& space() {
  static const psa::DesignSpace ds = [] {
    const std::string f = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/fullstack-system1.yaml";
    return std::filesystem::exists(f) ? psa::load_psa(f) : test::system1_fullstack();
  }();
  return ds;
}

std::vector<std::pair<u128, u128>> random_slices(const SpaceView& s, int n, uint64_t len) {
  std::mt19937_64 rng(2026);
  const u128 size = space_size(s);
  std::vector<std::pair<u128, u128>> out;
  for (int i = 0; i < n; ++i) {
    const u128 b = ((u128(rng()) << 64) | rng()) % (size - len);
    out.emplace_back(b, b + len);
  }
  return out;
}

// A slice where the top-gene constraints hold (test::live_region_start).
std::pair<u128, u128> live_slice(const psa::DesignSpace& ds, uint64_t len) {
  const u128 b = test::live_region_start(*ds.view);
  return {b, b + len};
}

void run(benchmark::State& state, const std::string& backend_name, const std::vector<std::pair<u128, u128>>& slices) {
  const psa::DesignSpace& ds = space();
  SweepProblem p;
  p.view = ds.view.get();
  p.k = make_sweep_const(*ds.view, ds.objectives);
  p.top_k = 10;
  p.want_front = ds.objectives.size() >= 2;
  std::unique_ptr<SweepBackend> b;
  if (backend_name == "cuda") {
    const CudaDevice dev = cuda_device();
    if (!dev.available) {
      state.SkipWithError(("no CUDA device: " + dev.why).c_str());
      return;
    }
    b = make_cuda_sweep_backend(p);
  } else {
    b = make_cpu_sweep_backend(p);
  }
  double swept = 0, evaluated = 0;
  for (auto _ : state) {
    for (const auto& [lo, hi] : slices) {
      const SweepState st = sweep_range(*ds.view, ds.objectives, *b, lo, hi, 10, p.want_front);
      swept += double(st.swept);
      evaluated += double(st.evaluated());
      benchmark::DoNotOptimize(st.top[0].data());
    }
  }
  state.counters["configs_per_s"] = benchmark::Counter(swept, benchmark::Counter::kIsRate);
  state.counters["evaluated_per_s"] = benchmark::Counter(evaluated, benchmark::Counter::kIsRate);
  state.SetLabel(ds.name + " on " + b->device());
}

void BM_SweepCpu_System1FullStack(benchmark::State& state) {
  run(state, "cpu", random_slices(*space().view, 64, uint64_t(1) << 22));
}
BENCHMARK(BM_SweepCpu_System1FullStack)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SweepCpu_System1FullStack_Live(benchmark::State& state) {
  run(state, "cpu", {live_slice(space(), uint64_t(1) << 24)});
}
BENCHMARK(BM_SweepCpu_System1FullStack_Live)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SweepCuda_System1FullStack(benchmark::State& state) {
  run(state, "cuda", random_slices(*space().view, 64, uint64_t(1) << 30));
}
BENCHMARK(BM_SweepCuda_System1FullStack)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_SweepCuda_System1FullStack_Live(benchmark::State& state) {
  run(state, "cuda", {live_slice(space(), uint64_t(1) << 32)});
}
BENCHMARK(BM_SweepCuda_System1FullStack_Live)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
