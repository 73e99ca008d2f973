#include "agents/ga.hpp"

#include <cmath>

#include "agents/common.hpp"

namespace cosmic::agents {

GaParams GaParams::from(const Params& p, Params* effective) {
  ParamReader r(p, "ga", effective);
  GaParams o;
  o.population = r.integer("population", o.population, 2, 100000000);
  o.tournament = r.integer("tournament", o.tournament, 1, 64);
  o.crossover_rate = r.real("crossover_rate", o.crossover_rate, 0, 1);
  o.mutation_rate = r.real_or_auto("mutation_rate", -1, 0, 1);
  o.elite_fraction = r.real("elite_fraction", o.elite_fraction, 0, 0.5);
  r.finish();
  return o;
}

Ga::Ga(std::vector<int32_t> card, GaParams p, uint64_t seed)
    : card_(std::move(card)), p_(p), seed_(seed), rows_(card_), children_(card_) {
  mutation_rate_ = mutation_rate_for(p_.mutation_rate, card_.size());
  elites_ = p_.elite_fraction > 0 ? size_t(std::ceil(p_.elite_fraction * double(p_.population))) : 0;
}

Breeding Ga::parents() const { return Breeding(rows_, standing_, p_.tournament, p_.crossover_rate, mutation_rate_); }

void Ga::do_ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "ga");
  breed(pop, card_, seed_, gen_, parents(), &children_);
}

bool Ga::breeding(BreedTask& task) {
  return breed_task(task, parents(), size_t(p_.population), card_, seed_, gen_, children_);
}

void Ga::do_tell(const Population& pop, const Scores& scores) {
  if (rows_.size() > 0 && scores.nobj != parent_scores_.nobj)  // elitism copies the parents' scores
    throw std::invalid_argument("ga: scores of " + std::to_string(scores.nobj) + " objectives after " +
                                std::to_string(parent_scores_.nobj));
  ++gen_;
  const size_t ng = size_t(pop.ngenes);
  // Elitism: the best parents replace the worst children when they rank before them.
  std::vector<size_t> elite;
  if (elites_ > 0) elite = first_k(standing_, elites_);
  std::vector<int32_t> keep(elite.size() * ng);
  std::vector<Standing> keep_st(elite.size());
  Scores keep_s;
  keep_s.resize(scores.nobj, elite.size());
  for (size_t j = 0; j < elite.size(); ++j) {
    rows_.get(elite[j], &keep[j * ng]);
    keep_st[j] = standing_[elite[j]];
    copy_scores(parent_scores_, elite[j], keep_s, j);
  }
  rows_.swap(children_);
  parent_scores_ = scores;
  standings(parent_scores_, standing_);
  if (!elite.empty()) {
    const std::vector<size_t> worst_first = first_k(standing_, elite.size(), /*last=*/true);
    for (size_t j = 0; j < worst_first.size(); ++j) {
      const size_t worst = worst_first[j];
      if (!better(keep_st[j], standing_[worst])) break;
      rows_.set(worst, &keep[j * ng]);
      copy_scores(keep_s, j, parent_scores_, worst);
      standing_[worst] = keep_st[j];
    }
  }
}

// The parents and their scores (their standings follow from the scores).
void Ga::save(StateWriter& w) const {
  w.put(gen_);
  rows_.save(w);
  parent_scores_.save(w);
}

void Ga::load(StateReader& r) {
  r.get(gen_);
  rows_.load(r);
  parent_scores_.load(r);
  if (parent_scores_.size != rows_.size()) throw std::runtime_error("agent state: ga parents and scores differ in number");
  standings(parent_scores_, standing_);
}

}  // namespace cosmic::agents
