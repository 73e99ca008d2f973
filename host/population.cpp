#include "host/population.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "host/backend.hpp"

namespace cosmic {

const char* const kPopMetricNames[kPopMetrics] = {"time_s", "memory_bytes", "network_cost_usd", "tokens_per_s", "mfu"};

PopObjectives pop_objectives(const std::vector<Objective>& objectives) {
  if (objectives.empty() || objectives.size() > size_t(kNumObjectives))
    throw std::invalid_argument("population evaluator: 1 to 6 objectives");
  PopObjectives o;
  o.n = int32_t(objectives.size());
  for (size_t j = 0; j < objectives.size(); ++j) o.obj[j] = objectives[j];
  return o;
}

void narrow_genes(const agents::Population& pop, uint16_t* out) {
  const int32_t* in = pop.genes.data();
  const int64_t n = int64_t(size_t(pop.ngenes) * pop.size);
#pragma omp parallel for schedule(static) if (n >= 65536)
  for (int64_t k = 0; k < n; ++k) out[k] = uint16_t(in[k]);
}

void copy_parallel(const void* from, void* to, size_t bytes) {
  constexpr size_t kPart = size_t(1) << 18;
  const int64_t parts = int64_t((bytes + kPart - 1) / kPart);
#pragma omp parallel for schedule(static) if (parts > 1)
  for (int64_t k = 0; k < parts; ++k) {
    const size_t at = size_t(k) * kPart;
    std::memcpy(static_cast<char*>(to) + at, static_cast<const char*>(from) + at, std::min(kPart, bytes - at));
  }
}

PopulationEvaluator::PopulationEvaluator(const SpaceView& s, const std::vector<Objective>& objectives)
    : view_(std::make_unique<SpaceView>(s)), obj_(pop_objectives(objectives)) {}

void PopulationEvaluator::evaluate(const agents::Population& pop, agents::Scores& scores, PopulationMetrics* metrics) {
  if (pop.ngenes != view_->ngenes) throw std::invalid_argument("population evaluator: genome length mismatch");
  scores.resize(obj_.n, pop.size);
  PopulationMetrics local;
  PopulationMetrics& m = metrics ? *metrics : local;
  m.resize(pop.size);
  if (pop.size > 0) score(pop, scores, m);
}

namespace {

class CpuPopulationEvaluator : public PopulationEvaluator {
 public:
  using PopulationEvaluator::PopulationEvaluator;
  std::string name() const override { return "cpu"; }
  std::string device() const override { return std::to_string(omp_get_max_threads()) + " OpenMP threads"; }

 private:
  void score(const agents::Population& pop, agents::Scores& scores, PopulationMetrics& m) override {
    const size_t n = pop.size;
    const SpaceView& s = *view_;
    const int64_t nn = int64_t(n);
#pragma omp parallel for schedule(static) if (nn >= 1024)
    for (int64_t i = 0; i < nn; ++i)
      score_individual(s, obj_, pop.genes.data(), n, size_t(i), scores.obj.data(), scores.violation.data(),
                       scores.reason.data(), m.col.data());
  }
};

}  // namespace

std::unique_ptr<PopulationEvaluator> make_cpu_population_evaluator(const SpaceView& s,
                                                                   const std::vector<Objective>& objectives) {
  return std::make_unique<CpuPopulationEvaluator>(s, objectives);
}

std::unique_ptr<PopulationEvaluator> make_population_evaluator(const std::string& backend, const SpaceView& s,
                                                               const std::vector<Objective>& objectives) {
  if (backend == "cpu") return make_cpu_population_evaluator(s, objectives);
  if (backend == "cuda") return make_cuda_population_evaluator(s, objectives);
  if (backend == "auto")
    return cuda_device().available ? make_cuda_population_evaluator(s, objectives)
                                   : make_cpu_population_evaluator(s, objectives);
  throw std::invalid_argument("--backend expects auto, cpu or cuda, got '" + backend + "'");
}

}  // namespace cosmic
