// Genetic algorithm over categorical genomes, generational with elitism (Goldberg 1989; the
// COSMIC study's GA, shared/reference/cosmic-study.md §5, at populations of 32-64; here up to millions):
//   selection   k-way tournament under the feasibility rules (Deb 2000)
//   crossover   uniform (each gene from either parent)
//   mutation    per gene, to one of the gene's other values (respects its cardinality)
//   elitism     the best `elite` parents replace the worst children when better
#pragma once

#include <vector>

#include "agents/agent.hpp"
#include "agents/common.hpp"
#include "agents/params.hpp"
#include "agents/rng.hpp"

namespace cosmic::agents {

struct GaParams {
  int64_t population = 4096;     // ga.population: individuals per generation
  int64_t tournament = 2;        // ga.tournament: contestants per selection
  double crossover_rate = 0.9;   // ga.crossover_rate: probability that a child mixes two parents
  double mutation_rate = -1;     // ga.mutation_rate: per-gene probability; auto (-1) = 1 / genes
  double elite_fraction = 0.01;  // ga.elite_fraction: parents kept (at least 1 when > 0)
  static GaParams from(const Params& p, Params* effective = nullptr);
};

class Ga : public Agent {
 public:
  Ga(std::vector<int32_t> card, GaParams p, uint64_t seed);
  std::string name() const override { return "ga"; }
  void save(StateWriter& w) const override;
  void load(StateReader& r) override;
  bool breeding(BreedTask& task) override;

 protected:
  void do_ask(Population& pop) override;
  void do_tell(const Population& pop, const Scores& scores) override;

 private:
  Breeding parents() const;
  std::vector<int32_t> card_;
  GaParams p_;
  double mutation_rate_;
  size_t elites_;
  uint64_t seed_;
  ParentRows rows_;      // the parents
  ParentRows children_;  // the children of the last ask(), the next parents
  uint64_t gen_ = 0;
  Scores parent_scores_;
  std::vector<Standing> standing_;  // parent_scores_ packed for tournaments
};

}  // namespace cosmic::agents
