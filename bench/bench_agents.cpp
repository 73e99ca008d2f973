// The agents' own work per generation (ask + tell, no evaluation) at population 10^5 on the
// COSMIC System 1 full-stack space, next to the CPU evaluation of such a population.
//
//   build/bench/cosmic_bench --benchmark_filter='Agent|PopulationEval'
//
// BM_AgentCudaBreeding_*: GA and NSGA-II with their breeding on the GPU (skipped without one).
//
// Each agent first runs 3 evaluated generations, so it is measured in its steady state
// (parents with realistic scores), not on the random first generation. Results: docs/agents.md.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "agents/factory.hpp"
#include "host/population.hpp"
#include "psa/space.hpp"

namespace {

constexpr size_t kPop = 100000;

// The System 1 full-stack space with its objective (runtime x bandwidth), or two (and runtime x
// cost), or three (latency, network cost, memory), or six (`objectives: all`, what `pareto: true`
// searches: latency, throughput, memory, cost, runtime x bandwidth, runtime x cost).
cosmic::psa::DesignSpace fullstack(int objectives = 1) {
  auto ds = cosmic::psa::load_psa(std::string(COSMIC_DATA_DIR) + "/psa/cosmic/fullstack-system1.yaml");
  using cosmic::Objective;
  if (objectives == 2) ds.objectives = {Objective::RuntimeXBw, Objective::RuntimeXCost};
  if (objectives == 3) ds.objectives = {Objective::Latency, Objective::Cost, Objective::Memory};
  if (objectives == 6)
    ds.objectives = {Objective::Latency, Objective::Throughput, Objective::Memory, Objective::Cost, Objective::RuntimeXBw,
                     Objective::RuntimeXCost};
  return ds;
}

std::vector<int32_t> cards(const cosmic::SpaceView& v) {
  std::vector<int32_t> c;
  for (int32_t g = 0; g < v.ngenes; ++g) c.push_back(v.gene[g].card);
  return c;
}

// state.range(0): the population (10^5, and 4,096 as in the study's searches, where fixed costs
// per generation weigh more). With `cuda`, GA and NSGA-II breed on the GPU
// (PopulationEvaluator::breed(): the parents go up, one thread a child, the genes and rows come
// back; skipped without a device), tell() runs on the CPU as ever, and the GPU evaluates the genes
// it bred (none copied up): ask_ms is then the breeding with its copies, eval_ms the evaluation.
void run_agent(benchmark::State& state, const std::string& name, int objectives, bool cuda = false) {
  const size_t population = size_t(state.range(0));
  const auto ds = fullstack(objectives);
  std::unique_ptr<cosmic::PopulationEvaluator> eval;
  try {
    eval = cosmic::make_population_evaluator(cuda ? "cuda" : "cpu", *ds.view, ds.objectives);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto made = cosmic::agents::make_agent(name, cards(*ds.view), int32_t(ds.objectives.size()),
                                         {{name + ".population", std::to_string(population)}}, 1);
  cosmic::agents::Population pop;
  pop.resize(ds.view->ngenes, population);
  cosmic::agents::Scores s;
  const auto ask = [&] { cosmic::next_generation(*made.agent, *eval, pop, /*on_device=*/cuda); };
  for (int k = 0; k < 3; ++k) {
    ask();
    eval->evaluate(pop, s, nullptr);
    made.agent->tell(pop, s);
  }
  double ask_s = 0, tell_s = 0, eval_s = 0;
  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  for (auto _ : state) {
    const auto t0 = clock::now();
    ask();
    const auto t1 = clock::now();
    state.PauseTiming();
    eval->evaluate(pop, s, nullptr);
    const auto t2 = clock::now();
    state.ResumeTiming();
    const auto t3 = clock::now();
    made.agent->tell(pop, s);
    ask_s += seconds(t0, t1);
    eval_s += seconds(t1, t2);
    tell_s += seconds(t3, clock::now());
  }
  const double gens = double(state.iterations());
  state.counters["genomes_per_s"] = benchmark::Counter(gens * double(population), benchmark::Counter::kIsRate);
  state.counters["ask_ms"] = 1e3 * ask_s / gens;  // wall per generation
  state.counters["tell_ms"] = 1e3 * tell_s / gens;
  if (cuda) state.counters["eval_ms"] = 1e3 * eval_s / gens;
}

// A fixed number of generations per size (200 at 4,096, 20 at 10^5, after the 3 above), so that
// every run and repetition measures the same generations: the population converges as it goes
// and the agents' work changes with it (NSGA-II's runs of equal objectives grow, for one).
const bool kAgentBenchmarks = [] {
  // NSGA-II with two objectives (BM_Agent_nsga2), three (BM_Agent_nsga2_3) and six (_6).
  for (auto [agent, objectives] :
       {std::pair<const char*, int>{"rw", 1}, {"ga", 1}, {"aco", 1}, {"nsga2", 2}, {"nsga2", 3}, {"nsga2", 6}})
    for (auto [population, generations] : {std::pair<int64_t, int64_t>{4096, 200}, {int64_t(kPop), 20}})
      benchmark::RegisterBenchmark((std::string("BM_Agent_") + agent + (objectives > 2 ? "_" + std::to_string(objectives) : "")).c_str(),
                                   [agent = std::string(agent), objectives = objectives](benchmark::State& st) {
                                     run_agent(st, agent, objectives);
                                   })
          ->Arg(population)
          ->Iterations(generations)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  for (auto [agent, objectives] : {std::pair<const char*, int>{"ga", 1}, {"nsga2", 2}})
    for (auto [population, generations] : {std::pair<int64_t, int64_t>{4096, 200}, {int64_t(kPop), 20}})
      benchmark::RegisterBenchmark((std::string("BM_AgentCudaBreeding_") + agent).c_str(),
                                   [agent = std::string(agent), objectives = objectives](benchmark::State& st) {
                                     run_agent(st, agent, objectives, /*cuda=*/true);
                                   })
          ->Arg(population)
          ->Iterations(generations)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  return true;
}();

// Evaluation of 10^5 genomes on all CPU cores or on the GPU: a uniform random population
// (mostly stopped by the PSA constraints) and GA populations after 10 and 40 generations (more
// of them pass the constraints and run the full model). The CUDA cases skip without a device; they include copying the genomes
// in and the scores out.
void run_eval(benchmark::State& state, const std::string& backend, int ga_generations) {
  const auto ds = fullstack();
  std::unique_ptr<cosmic::PopulationEvaluator> eval;
  try {
    eval = cosmic::make_population_evaluator(backend, *ds.view, ds.objectives);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto made = cosmic::agents::make_agent("ga", cards(*ds.view), 1, {{"ga.population", std::to_string(kPop)}}, 1);
  cosmic::agents::Population pop;
  pop.resize(ds.view->ngenes, kPop);
  cosmic::agents::Scores s;
  made.agent->ask(pop);
  for (int k = 0; k < ga_generations; ++k) {
    eval->evaluate(pop, s, nullptr);
    made.agent->tell(pop, s);
    made.agent->ask(pop);
  }
  for (auto _ : state) eval->evaluate(pop, s, nullptr);
  size_t feasible = 0;
  for (size_t i = 0; i < s.size; ++i) feasible += s.feasible(i) ? 1 : 0;
  state.counters["feasible_share"] = double(feasible) / double(kPop);
  state.counters["genomes_per_s"] = benchmark::Counter(double(state.iterations() * kPop), benchmark::Counter::kIsRate);
}
void BM_PopulationEvalCpuRandom(benchmark::State& state) { run_eval(state, "cpu", 0); }
void BM_PopulationEvalCpuGa10(benchmark::State& state) { run_eval(state, "cpu", 10); }
void BM_PopulationEvalCpuGa40(benchmark::State& state) { run_eval(state, "cpu", 40); }
void BM_PopulationEvalCudaRandom(benchmark::State& state) { run_eval(state, "cuda", 0); }
void BM_PopulationEvalCudaGa10(benchmark::State& state) { run_eval(state, "cuda", 10); }
void BM_PopulationEvalCudaGa40(benchmark::State& state) { run_eval(state, "cuda", 40); }
BENCHMARK(BM_PopulationEvalCpuRandom)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PopulationEvalCpuGa10)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PopulationEvalCpuGa40)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PopulationEvalCudaRandom)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PopulationEvalCudaGa10)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PopulationEvalCudaGa40)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
