// Nanoseconds per model evaluation on one CPU core (GPT3-175B on the study's System 1 and on a
// DGX-H100 cluster, Mixtral with and without dense layers), and configurations per second of the
// batch backends.
//
//   build/bench/cosmic_bench --benchmark_filter=Evaluate
//
// Results and the machine they were measured on: docs/performance.md.
#include <benchmark/benchmark.h>

#include <vector>

#include "host/backend.hpp"
#include "kernels/model.hpp"
#include "psa/config.hpp"

namespace {

cosmic::Config load(const char* rel) {
  return cosmic::psa::load_config(std::string(COSMIC_DATA_DIR) + "/" + rel).config;
}

// One scalar evaluation; DoNotOptimize(c) makes the compiler assume the configuration changed,
// so the work cannot be hoisted out of the loop.
void run_scalar(benchmark::State& state, cosmic::Config c) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(c);
    cosmic::Result r = cosmic::evaluate(c);
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_EvaluateGPT3_175B_System1(benchmark::State& state) {
  run_scalar(state, load("configs/cosmic-system1-baseline.yaml"));
}
BENCHMARK(BM_EvaluateGPT3_175B_System1);

void BM_EvaluateGPT3_175B_System1_AstraSim(benchmark::State& state) {
  cosmic::Config c = load("configs/cosmic-system1-baseline.yaml");
  c.net.convention = cosmic::Convention::AstraSim;
  run_scalar(state, c);
}
BENCHMARK(BM_EvaluateGPT3_175B_System1_AstraSim);

// Mixtures of experts: Mixtral on 64 H100s, and with every other layer dense (Llama 4's
// layout; the dense layers' time is a second layer model per pass).
void BM_EvaluateMixtral_H100(benchmark::State& state) { run_scalar(state, load("configs/mixtral-8x7b-h100.yaml")); }
BENCHMARK(BM_EvaluateMixtral_H100);

void BM_EvaluateMixtralDenseLayers_H100(benchmark::State& state) {
  cosmic::Config c = load("configs/mixtral-8x7b-h100.yaml");
  c.model.moe_layer_step = 2;
  c.model.dense_ffn = 2 * c.model.ffn;
  run_scalar(state, c);
}
BENCHMARK(BM_EvaluateMixtralDenseLayers_H100);

// Batch of configurations on all CPU cores (OpenMP).
void BM_EvaluateBatchCpu(benchmark::State& state) {
  const cosmic::Config base = load("configs/cosmic-system1-baseline.yaml");
  std::vector<cosmic::Config> in(size_t(state.range(0)), base);
  for (size_t i = 0; i < in.size(); ++i) in[i].net.dim[3].link_bw_GBps = 50.0 + double(i % 10) * 50.0;
  std::vector<cosmic::Result> out(in.size());
  for (auto _ : state) {
    cosmic::evaluate_batch_cpu(in.data(), out.data(), in.size());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["configs_per_s"] =
      benchmark::Counter(double(state.iterations()) * double(in.size()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EvaluateBatchCpu)->Arg(1 << 16)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
