#include "agents/ga.hpp"

#include <cmath>

#include "agents/common.hpp"

namespace cosmic::agents {

GaParams GaParams::from(const Params& p) {
  ParamReader r(p, "ga");
  GaParams o;
  o.population = r.integer("population", o.population, 2, 100000000);
  o.tournament = r.integer("tournament", o.tournament, 1, 64);
  o.crossover_rate = r.real("crossover_rate", o.crossover_rate, 0, 1);
  o.mutation_rate = r.real_or_auto("mutation_rate", -1, 0, 1);
  o.elite_fraction = r.real("elite_fraction", o.elite_fraction, 0, 0.5);
  r.finish();
  return o;
}

Ga::Ga(std::vector<int32_t> card, GaParams p, uint64_t seed) : card_(std::move(card)), p_(p), seed_(seed) {
  mutation_rate_ = p_.mutation_rate < 0 ? 1.0 / double(std::max<size_t>(1, card_.size())) : p_.mutation_rate;
  elites_ = p_.elite_fraction > 0 ? size_t(std::ceil(p_.elite_fraction * double(p_.population))) : 0;
}

size_t Ga::tournament(Rng& r) const {
  size_t best = size_t(r.below(parents_.size));
  for (int64_t k = 1; k < p_.tournament; ++k) {
    const size_t c = size_t(r.below(parents_.size));
    if (ranks_before(parent_scores_, c, best)) best = c;
  }
  return best;
}

void Ga::ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "ga");
  breed(pop, card_, seed_, gen_, have_parents_, rows_, p_.crossover_rate, mutation_rate_,
        [&](Rng& r) { return tournament(r); });
}

void Ga::tell(const Population& pop, const Scores& scores) {
  ++gen_;
  if (have_parents_ && elites_ > 0) {
    // Elitism: the best parents replace the worst children when they rank before them.
    const std::vector<size_t> elite = best_indices(parent_scores_, elites_);
    Population keep;
    keep.resize(pop.ngenes, elite.size());
    Scores keep_s;
    keep_s.resize(scores.nobj, elite.size());
    for (size_t j = 0; j < elite.size(); ++j) {
      for (int32_t g = 0; g < pop.ngenes; ++g) keep.at(j, g) = parents_.at(elite[j], g);
      copy_scores(parent_scores_, elite[j], keep_s, j);
    }
    parents_ = pop;
    parent_scores_ = scores;
    // The children in reverse order, worst first (only the first `elite.size()` sorted).
    std::vector<size_t> worst_first(scores.size);
    std::iota(worst_first.begin(), worst_first.end(), size_t(0));
    const size_t k = std::min(elite.size(), worst_first.size());
    std::partial_sort(worst_first.begin(), worst_first.begin() + ptrdiff_t(k), worst_first.end(),
                      [&](size_t a, size_t b) { return ranks_before(scores, b, a); });
    for (size_t j = 0; j < k; ++j) {
      const size_t worst = worst_first[j];
      if (!better(keep_s, j, scores, worst)) break;
      for (int32_t g = 0; g < pop.ngenes; ++g) parents_.at(worst, g) = keep.at(j, g);
      copy_scores(keep_s, j, parent_scores_, worst);
    }
  } else {
    parents_ = pop;
    parent_scores_ = scores;
  }
  to_rows(parents_, rows_);
  have_parents_ = true;
}

}  // namespace cosmic::agents
