// Bayesian optimisation with a tree-structured Parzen estimator (Bergstra et al. 2011), the
// surrogate that fits categorical genes: for small budgets (a few thousand evaluations, as the
// COSMIC study's BO), not for massive populations (its work grows with the history).
//   - the first `startup` evaluations are uniform samples;
//   - then the history is split by the feasibility rules into the best gamma fraction ("good",
//     at least one) and the rest ("bad"); per gene, l(v) and g(v) are the value frequencies in
//     each set, smoothed by `prior_weight` pseudo-counts spread evenly over the values;
//   - each new point is the best of `candidates` draws from l by the expected-improvement proxy
//     sum over genes of log l(v) - log g(v); draws already evaluated (or asked in this batch)
//     are skipped, and a uniform sample is taken when every draw was a repeat.
// `population` points are asked per generation (a batch; one evaluator call).
#pragma once

#include <unordered_set>
#include <vector>

#include "agents/agent.hpp"
#include "agents/params.hpp"

namespace cosmic::agents {

struct BoParams {
  int64_t population = 16;    // bo.population: points per generation (batch)
  int64_t startup = 64;       // bo.startup: uniform samples before the surrogate is used
  double gamma = 0.15;        // bo.gamma: fraction of the history that is "good"
  int64_t candidates = 24;    // bo.candidates: draws from l per point asked
  double prior_weight = 1.0;  // bo.prior_weight: pseudo-counts per gene, spread over its values
  static BoParams from(const Params& p, Params* effective = nullptr);
};

class Bo : public Agent {
 public:
  Bo(std::vector<int32_t> card, BoParams p, uint64_t seed);
  std::string name() const override { return "bo"; }
  void save(StateWriter& w) const override;
  void load(StateReader& r) override;

 protected:
  void do_ask(Population& pop) override;
  void do_tell(const Population& pop, const Scores& scores) override;

 private:
  uint64_t hash(const int32_t* genome) const;
  std::vector<int32_t> card_;
  std::vector<int32_t> offset_;
  BoParams p_;
  uint64_t seed_;
  uint64_t gen_ = 0;
  // History, one row per evaluated point.
  std::vector<int32_t> genomes_;  // row-major: point i's genes at [i * ngenes]
  Scores hist_;                   // objective 0 and feasibility of each point
  std::unordered_set<uint64_t> seen_;
};

}  // namespace cosmic::agents
