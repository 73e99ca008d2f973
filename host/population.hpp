// Population evaluators: genomes (structure of arrays, agents/agent.hpp) -> Scores (objectives,
// violation, reason) and the model's headline metrics, on all CPU cores (OpenMP, static
// schedule: each individual's outputs are written by one iteration, so results do not depend on
// the thread count) or on a CUDA device (host/population_cuda.cu, one thread per individual).
// Per-individual code and the violation tiers: kernels/population.hpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agents/agent.hpp"
#include "agents/breed.hpp"
#include "kernels/population.hpp"
#include "kernels/space.hpp"

namespace cosmic::agents {
class MutationSkips;  // agents/common.hpp
}

namespace cosmic {

// Model metrics per individual (0 where the model was not run).
struct PopulationMetrics {
  std::vector<double> col;  // col[m * size + i], m in time_s, memory_bytes, network_cost_usd, tokens_per_s, mfu,
                            // first_token_s
  size_t size = 0;
  void resize(size_t n) {
    size = n;
    col.assign(size_t(kPopMetrics) * n, 0.0);
  }
  const double* metric(int m) const { return &col[size_t(m) * size]; }
};
extern const char* const kPopMetricNames[kPopMetrics];

// An agents::BreedTask flattened for a device (host/population.cpp; host/population_cuda.cu
// includes no OpenMP header, so it reads plain pointers): what it copies there, and where the
// children's rows go.
struct BreedPlan {
  const void* parents;   // nparents rows of ngenes genes, gene_bytes each (1 or 4)
  const void* records;   // nparents 16-byte records: agents::Standing or, with crowded, agents::Crowded
  void* children;        // the children's rows, as the parents'
  size_t nparents, gene_bytes;
  bool crowded;
  const int32_t* card;   // ngenes
  int32_t ngenes, tournament;
  double crossover_rate, mutation_rate;
  const uint64_t* skip_first;  // the mutation skips' tables (agents::MutationSkips), where
  const uint16_t* skip_slices;  // 0 < mutation_rate < 1; nskip_first and nskip_slices long
  size_t nskip_first, nskip_slices;
  int skip_shift;
  uint64_t seed, gen;
};

// What a plan's device reads, packed into one buffer for one copy: the records, the parents'
// rows, the skips' thresholds, the cardinalities and the skips' slices, each at an offset that
// is a multiple of 16 bytes.
struct BreedPacking {
  size_t records = 0, rows = 0, skip_first = 0, card = 0, skip_slices = 0, bytes = 0;  // offsets; the size
  explicit BreedPacking(const BreedPlan& p);
  void pack(const BreedPlan& p, char* out) const;  // (on the OpenMP threads)
  // breed_child()'s view of the packed buffer at `base` (on the host, or the device's copy).
  template <class Gene, class Record>
  agents::BreedView<Gene, Record> view(const BreedPlan& p, const char* base) const {
    agents::SkipView skips{p.mutation_rate, {}};
    skips.table = {reinterpret_cast<const uint64_t*>(base + skip_first),
                   reinterpret_cast<const uint16_t*>(base + skip_slices), p.skip_shift};
    return {reinterpret_cast<const Gene*>(base + rows), reinterpret_cast<const Record*>(base + records),
            uint64_t(p.nparents), reinterpret_cast<const int32_t*>(base + card), p.ngenes, p.tournament,
            p.crossover_rate, skips, p.seed, p.gen};
  }
};

// The plan of a task (with parents) for `children` children; `skips` made for its mutation
// rate and its genes, alive while the plan is used. Sizes the task's children rows.
BreedPlan breed_plan(const agents::BreedTask& task, const agents::MutationSkips& skips, size_t children);

class PopulationEvaluator {
 public:
  PopulationEvaluator(const SpaceView& s, const std::vector<Objective>& objectives);
  virtual ~PopulationEvaluator() = default;
  virtual std::string name() const = 0;    // cpu, cuda
  virtual std::string device() const = 0;  // "2 OpenMP threads", the GPU's name
  // Resizes `scores` (and `metrics` when given) to the population and scores it.
  void evaluate(const agents::Population& pop, agents::Scores& scores, PopulationMetrics* metrics);
  // Breeds an agent's generation on the evaluator's device (agents::BreedTask, Agent::breeding()):
  // the children agents::breed() would make, into `pop` (sized for them) and the task's
  // children rows; the agent then takes them with Agent::bred() in place of ask(). The genes stay
  // on the device, and the next evaluate() of `pop` itself (not of a copy, and with nothing
  // written to it in between) scores them there without copying them again. False where the
  // evaluator breeds nothing (the CPU's: the agent's ask() does it on the same threads).
  bool breed(const agents::BreedTask& task, agents::Population& pop);

 protected:
  // The backend's part: a non-empty population of the space's genome length, into outputs
  // already sized for it.
  virtual void score(const agents::Population& pop, agents::Scores& scores, PopulationMetrics& metrics) = 0;
  // A device's part of breed(), where it has one: the task flattened (BreedPlan), a non-empty
  // population of the space's genome length.
  virtual bool breeds() const { return false; }
  virtual void breed_on_device(const BreedPlan& /*plan*/, agents::Population& /*pop*/) {}
  std::unique_ptr<SpaceView> view_;
  PopObjectives obj_;
};

// The agent's next generation into `pop`: with `on_device`, bred on the evaluator's device where
// the agent breeds from parents and the evaluator can (the same children either way), else asked
// of the agent.
void next_generation(agents::Agent& agent, PopulationEvaluator& eval, agents::Population& pop, bool on_device);

PopObjectives pop_objectives(const std::vector<Objective>& objectives);  // throws beyond kNumObjectives

// Host work of the CUDA evaluator (host/population_cuda.cu), on the OpenMP threads: the genes
// narrowed to uint16_t, in the population's gene-major order, or widened back, and a copy of
// `bytes` bytes.
void narrow_genes(const agents::Population& pop, uint16_t* out);
void widen_genes(const uint16_t* in, agents::Population& pop);  // back, into the population's genes
void copy_parallel(const void* from, void* to, size_t bytes);

std::unique_ptr<PopulationEvaluator> make_cpu_population_evaluator(const SpaceView& s,
                                                                   const std::vector<Objective>& objectives);
// Throws std::runtime_error (with the reason) without a usable device or CUDA build.
std::unique_ptr<PopulationEvaluator> make_cuda_population_evaluator(const SpaceView& s,
                                                                    const std::vector<Objective>& objectives);
// backend: cpu, cuda, or auto (cuda when a device is usable, else cpu).
std::unique_ptr<PopulationEvaluator> make_population_evaluator(const std::string& backend, const SpaceView& s,
                                                               const std::vector<Objective>& objectives);

}  // namespace cosmic
