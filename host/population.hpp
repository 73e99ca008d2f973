// Population evaluators: genomes (structure of arrays, agents/agent.hpp) -> Scores (objectives,
// violation, reason) and the model's headline metrics, on all CPU cores (OpenMP, static
// schedule: each individual's outputs are written by one iteration, so results do not depend on
// the thread count) or on a CUDA device (kernels/population_cuda.cu, one thread per individual).
// Per-individual code and the violation tiers: kernels/population.hpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agents/agent.hpp"
#include "kernels/population.hpp"
#include "kernels/space.hpp"

namespace cosmic {

// Model metrics per individual (0 where the model was not run).
struct PopulationMetrics {
  std::vector<double> col;  // col[m * size + i], m in time_s, memory_bytes, network_cost_usd, tokens_per_s, mfu
  size_t size = 0;
  void resize(size_t n) {
    size = n;
    col.assign(size_t(kPopMetrics) * n, 0.0);
  }
  const double* metric(int m) const { return &col[size_t(m) * size]; }
};
extern const char* const kPopMetricNames[kPopMetrics];

class PopulationEvaluator {
 public:
  PopulationEvaluator(const SpaceView& s, const std::vector<Objective>& objectives);
  virtual ~PopulationEvaluator() = default;
  virtual std::string name() const = 0;    // cpu, cuda
  virtual std::string device() const = 0;  // "2 OpenMP threads", the GPU's name
  // Resizes `scores` (and `metrics` when given) to the population and scores it.
  void evaluate(const agents::Population& pop, agents::Scores& scores, PopulationMetrics* metrics);

 protected:
  // The backend's part: a non-empty population of the space's genome length, into outputs
  // already sized for it.
  virtual void score(const agents::Population& pop, agents::Scores& scores, PopulationMetrics& metrics) = 0;
  std::unique_ptr<SpaceView> view_;
  PopObjectives obj_;
};

PopObjectives pop_objectives(const std::vector<Objective>& objectives);  // throws beyond kNumObjectives

// Host work of the CUDA evaluator (kernels/population_cuda.cu), on the OpenMP threads: the genes
// narrowed to uint16_t, in the population's gene-major order, and a copy of `bytes` bytes.
void narrow_genes(const agents::Population& pop, uint16_t* out);
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
