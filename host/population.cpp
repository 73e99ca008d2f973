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

namespace {
size_t round16(size_t bytes) { return (bytes + 15) / 16 * 16; }
}  // namespace

BreedPacking::BreedPacking(const BreedPlan& p) {
  records = 0;
  rows = round16(p.nparents * 16);
  skip_first = rows + round16(p.nparents * size_t(p.ngenes) * p.gene_bytes);
  card = skip_first + round16(p.nskip_first * sizeof(uint64_t));
  skip_slices = card + round16(size_t(p.ngenes) * sizeof(int32_t));
  bytes = skip_slices + round16(p.nskip_slices * sizeof(uint16_t));
}

void BreedPacking::pack(const BreedPlan& p, char* out) const {
  copy_parallel(p.records, out + records, p.nparents * 16);
  copy_parallel(p.parents, out + rows, p.nparents * size_t(p.ngenes) * p.gene_bytes);
  if (p.nskip_first) std::memcpy(out + skip_first, p.skip_first, p.nskip_first * sizeof(uint64_t));
  std::memcpy(out + card, p.card, size_t(p.ngenes) * sizeof(int32_t));
  if (p.nskip_slices) std::memcpy(out + skip_slices, p.skip_slices, p.nskip_slices * sizeof(uint16_t));
}

BreedPlan breed_plan(const agents::BreedTask& task, const agents::MutationSkips& skips, size_t children) {
  const agents::Breeding& b = task.breeding;
  task.children->resize(children);
  BreedPlan p{};
  b.rows->visit([&](const auto* rows) {
    p.parents = rows;
    p.gene_bytes = sizeof(*rows);
  });
  task.children->visit([&](auto* rows) { p.children = rows; });
  p.records = b.standing ? static_cast<const void*>(b.standing) : static_cast<const void*>(b.crowded);
  p.crowded = b.standing == nullptr;
  p.nparents = b.parents();
  p.card = task.card->data();
  p.ngenes = int32_t(task.card->size());
  p.tournament = int32_t(std::max<int64_t>(1, b.tournament));
  p.crossover_rate = b.crossover_rate;
  p.mutation_rate = b.mutation_rate;
  if (skips.geometric()) {
    const agents::DrawCounter& t = skips.table();
    p.skip_first = t.first().data();
    p.nskip_first = t.first().size();
    p.skip_slices = t.at_slice().data();
    p.nskip_slices = t.at_slice().size();
    p.skip_shift = t.table().shift;
  }
  p.seed = task.seed;
  p.gen = task.gen;
  return p;
}

bool PopulationEvaluator::breed(const agents::BreedTask& task, agents::Population& pop) {
  if (!breeds() || pop.size == 0 || task.breeding.parents() == 0) return false;
  if (pop.ngenes != view_->ngenes || task.card->size() != size_t(pop.ngenes))
    throw std::invalid_argument("population evaluator: genome length mismatch");
  if (pop.size != task.population)
    throw std::invalid_argument("population evaluator: breeding " + std::to_string(task.population) +
                                " children into a population of " + std::to_string(pop.size));
  const agents::MutationSkips skips(task.breeding.mutation_rate, task.card->size());
  breed_on_device(breed_plan(task, skips, pop.size), pop);
  return true;
}

void next_generation(agents::Agent& agent, PopulationEvaluator& eval, agents::Population& pop, bool on_device) {
  agents::BreedTask task;
  if (on_device && agent.breeding(task) && eval.breed(task, pop)) agent.bred(pop);
  else agent.ask(pop);
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
