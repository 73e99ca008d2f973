#include "host/population.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "agents/common.hpp"
#include "host/backend.hpp"
#include "host/text.hpp"

namespace cosmic {

const char* const kPopMetricNames[kPopMetrics] = {"time_s",       "memory_bytes", "network_cost_usd",
                                                  "tokens_per_s", "mfu",          "first_token_s"};

PopObjectives pop_objectives(const std::vector<Objective>& objectives) {
  if (objectives.empty() || objectives.size() > size_t(kNumObjectives))
    throw std::invalid_argument("population evaluator: 1 to " + std::to_string(kNumObjectives) + " objectives");
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

void widen_genes(const uint16_t* in, agents::Population& pop) {
  int32_t* out = pop.genes.data();
  const int64_t n = int64_t(size_t(pop.ngenes) * pop.size);
#pragma omp parallel for schedule(static) if (n >= 65536)
  for (int64_t k = 0; k < n; ++k) out[k] = int32_t(in[k]);
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

bool PopulationEvaluator::breed(const agents::BreedTask& task, agents::Population& pop) {
  const agents::Breeding& b = task.breeding;
  if (!breeds() || pop.size == 0 || b.parents() == 0) return false;
  const std::vector<int32_t>& card = *task.card;
  if (pop.ngenes != view_->ngenes || card.size() != size_t(pop.ngenes))
    throw std::invalid_argument("population evaluator: genome length mismatch");
  if (pop.size != task.population)
    throw std::invalid_argument("population evaluator: breeding " + std::to_string(task.population) +
                                " children into a population of " + std::to_string(pop.size));
  const agents::MutationSkips skips(b.mutation_rate, card.size());
  task.children->resize(pop.size);
  BreedPlan p{};
  b.rows->visit([&](const auto* rows) {
    p.parents = rows;
    p.gene_bytes = sizeof(*rows);
  });
  task.children->visit([&](auto* rows) { p.children = rows; });
  p.records = b.standing ? static_cast<const void*>(b.standing) : static_cast<const void*>(b.crowded);
  p.crowded = b.standing == nullptr;
  p.nparents = b.parents();
  p.card = card.data();
  p.ngenes = pop.ngenes;
  p.tournament = int32_t(std::max<int64_t>(1, b.tournament));
  p.crossover_rate = b.crossover_rate;
  p.mutation_rate = b.mutation_rate;
  if (skips.geometric()) {
    p.skip_first = skips.table().first().data();
    p.nskip_first = skips.table().first().size();
    p.skip_slices = skips.table().at_slice().data();
    p.nskip_slices = skips.table().at_slice().size();
    p.skip_shift = skips.table().table().shift;
  }
  p.seed = task.seed;
  p.gen = task.gen;
  breed_on_device(p, pop);
  return true;
}

namespace {

class CpuPopulationEvaluator : public PopulationEvaluator {
 public:
  using PopulationEvaluator::PopulationEvaluator;
  std::string name() const override { return "cpu"; }
  std::string device() const override { return openmp_threads(omp_get_max_threads()); }

 private:
  void score(const agents::Population& pop, agents::Scores& scores, PopulationMetrics& m) override {
    const size_t n = pop.size, ng = size_t(pop.ngenes);
    const SpaceView& s = *view_;
    // Tiles of 64 individuals: their genomes are read gene by gene (64 consecutive values of a
    // gene column) into rows, then scored. Reading each genome across the 36-odd columns at once
    // (score_individual) is one load per column and individual from as many streams, more than
    // the hardware prefetcher follows: it was a fifth of the evaluation's time.
    constexpr size_t kTile = 64;
    const int64_t tiles = int64_t((n + kTile - 1) / kTile);
#pragma omp parallel for schedule(static) if (n >= 1024)
    for (int64_t t = 0; t < tiles; ++t) {
      const size_t lo = size_t(t) * kTile, count = std::min(kTile, n - lo);
      int32_t rows[kTile][kMaxGenes];
      for (size_t g = 0; g < ng; ++g) {
        const int32_t* col = &pop.genes[g * n + lo];
        for (size_t k = 0; k < count; ++k) rows[k][g] = col[k];
      }
      for (size_t k = 0; k < count; ++k)
        score_genome(s, obj_, rows[k], n, lo + k, scores.obj.data(), scores.violation.data(), scores.reason.data(),
                     m.col.data());
    }
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
