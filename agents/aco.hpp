// Ant colony search over categorical genes, after the Ant Colony System (Dorigo & Gambardella
// 1997), with one pheromone table per gene (tau[g][v]) and no heuristic (agents see only the
// genes' cardinalities, never the model):
//   construction  per gene: with probability q0 (greediness) the value of highest pheromone
//                 (ties broken at random), otherwise a value drawn in proportion to pheromone;
//                 one draw per gene from the mixture of the two
//   local update  ACS's tau <- (1 - xi) tau + xi tau0 on what the ants chose, applied once per
//                 generation with xi scaled by the share of ants that chose each value (the
//                 ants of one generation are built in parallel and do not see each other)
//   global update evaporation of every entry, tau <- (1 - rho) tau, plus a deposit of rho on
//                 the best-so-far ant's values (half) and on the values of this generation's
//                 best ants (half, in proportion to their frequency; rank-based deposit)
//   floor         tau >= tau0 / 100 (a MAX-MIN lower bound, Stutzle & Hoos 2000), so no value
//                 becomes unreachable
// tau0 = 1 / cardinality, so each gene's table starts as a probability distribution; the
// updates do not keep its sum at 1 (the local update pulls the chosen values towards tau0,
// the floor lifts others), and the roulette normalises.
#pragma once

#include <vector>

#include "agents/agent.hpp"
#include "agents/common.hpp"
#include "agents/params.hpp"

namespace cosmic::agents {

struct AcoParams {
  int64_t population = 1024;     // aco.population: ants per generation
  double greediness = 0.5;       // aco.greediness: q0, probability of the best-pheromone value
  double evaporation = 0.1;      // aco.evaporation: rho of the global update
  double local = 0.1;            // aco.local: xi of the local update
  double elite_fraction = 0.01;  // aco.elite_fraction: ants of a generation that deposit (>= 1)
  static AcoParams from(const Params& p, Params* effective = nullptr);
};

class Aco : public Agent {
 public:
  Aco(std::vector<int32_t> card, AcoParams p, uint64_t seed);
  std::string name() const override { return "aco"; }
  void save(StateWriter& w) const override;
  void load(StateReader& r) override;
  const std::vector<double>& pheromone() const { return tau_; }  // tau_[offset_[g] + v]
  // The roulette over one gene's weights (card values): the value drawn for a 53-bit draw (the
  // first whose cumulative weight exceeds draw x 2^-53 x the total).
  static DrawCounter roulette_table(const double* w, int32_t card);
  // The construction's probability (unnormalised) of a value of pheromone tau, of a gene whose
  // pheromone sums to `sum`: `ties` values share the highest pheromone, tau among them (else 0).
  static double construction_weight(double tau, double sum, int32_t ties, double q0) {
    return (1 - q0) * (tau / sum) + (ties > 0 ? q0 / ties : 0.0);
  }

 protected:
  void do_ask(Population& pop) override;
  void do_tell(const Population& pop, const Scores& scores) override;

 private:
  std::vector<int32_t> card_;
  std::vector<int32_t> offset_;
  AcoParams p_;
  uint64_t seed_;
  uint64_t gen_ = 0;
  std::vector<double> tau_;
  std::vector<int32_t> best_genome_;
  Scores best_score_;
  bool have_best_ = false;
};

}  // namespace cosmic::agents
