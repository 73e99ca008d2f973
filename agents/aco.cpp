#include "agents/aco.hpp"

#include <algorithm>
#include <cmath>

#include "agents/common.hpp"

namespace cosmic::agents {

AcoParams AcoParams::from(const Params& p, Params* effective) {
  ParamReader r(p, "aco", effective);
  AcoParams o;
  o.population = r.integer("population", o.population, 1, 100000000);
  o.greediness = r.real("greediness", o.greediness, 0, 1);
  o.evaporation = r.real("evaporation", o.evaporation, 0, 1);
  o.local = r.real("local", o.local, 0, 1);
  o.elite_fraction = r.real("elite_fraction", o.elite_fraction, 0, 1);
  r.finish();
  return o;
}

DrawCounter Aco::roulette_table(const double* tau, int32_t card) {
  std::vector<double> cum(static_cast<size_t>(card));
  double s = 0;
  for (int32_t v = 0; v < card; ++v) cum[size_t(v)] = s += tau[v];
  // Value v is drawn when x = u * total reaches cum[v - 1] (u = draw * 2^-53, as Rng::uniform()).
  std::vector<uint64_t> first(size_t(card - 1));
  for (int32_t v = 0; v + 1 < card; ++v)
    first[size_t(v)] = DrawCounter::first_draw(
        [&](uint64_t x) { return cum[size_t(v)] <= double(x) * 0x1.0p-53 * s; },
        cum[size_t(v)] / s * double(DrawCounter::kDraws));
  return DrawCounter(std::move(first), 8);
}

Aco::Aco(std::vector<int32_t> card, AcoParams p, uint64_t seed) : card_(std::move(card)), p_(p), seed_(seed) {
  int32_t off = 0;
  for (int32_t c : card_) {
    offset_.push_back(off);
    for (int32_t v = 0; v < c; ++v) tau_.push_back(1.0 / c);
    off += c;
  }
  best_score_.resize(1, 1);
}

void Aco::ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "aco");
  const int32_t ng = int32_t(card_.size());
  // Per gene: the roulette and the value of highest pheromone, or, where several share it, where
  // their list starts in `tied` and how long it is.
  //
  // The roulette draws x = u * (sum of the pheromone) and takes the first value whose cumulative
  // pheromone exceeds x: the number of cumulative sums at or below x. That is monotone in the
  // draw, so it is read from a DrawCounter (agents/common.hpp) of the smallest draw reaching each
  // sum, found once per generation with the same arithmetic: the same values as comparing the
  // sums one by one (tested), without a pass over the gene's values per ant.
  struct Gene {
    const DrawCounter* roulette;
    int32_t greedy;  // -1: tied
    int32_t tied_at, tied_n;
  };
  std::vector<DrawCounter> roulettes(static_cast<size_t>(ng));
  std::vector<int32_t> tied;
  auto genes = std::vector<Gene>(size_t(ng));
  for (int32_t g = 0; g < ng; ++g) {
    const double* t = &tau_[size_t(offset_[g])];
    roulettes[size_t(g)] = roulette_table(t, card_[g]);
    const double mx = *std::max_element(t, t + card_[g]);
    Gene& e = genes[size_t(g)];
    e = {&roulettes[size_t(g)], -1, int32_t(tied.size()), 0};
    for (int32_t v = 0; v < card_[g]; ++v)
      if (t[v] == mx) tied.push_back(v);
    e.tied_n = int32_t(tied.size()) - e.tied_at;
    if (e.tied_n == 1) e.greedy = tied.back();
  }
  // The coin, uniform() < q0, compared on the integer draw: (x >> 11) * 2^-53 < q0 exactly when
  // (x >> 11) < ceil(q0 * 2^53) (both sides scaled by a power of two, exact in doubles).
  const uint64_t q0 = uint64_t(std::ceil(p_.greediness * 0x1.0p53));
  fill_blocks(pop, [&](size_t lo, size_t m, int32_t* block) {
    for (size_t k = 0; k < m; ++k) {
      Rng r(stream_seed(seed_, gen_, lo + k));
      int32_t* ant = block + k * size_t(ng);
      for (int32_t g = 0; g < ng; ++g) {
        const Gene& e = genes[size_t(g)];
        const bool greedy = (r.next() >> 11) < q0;
        if (e.greedy >= 0) {
          // The coin goes either way at random, so rather than branch on it the roulette is
          // drawn on a copy of the stream, which the ant keeps only if it takes the roulette.
          Rng ahead = r;
          const int32_t v = e.roulette->count(ahead.next() >> 11);
          ant[g] = v ^ ((v ^ e.greedy) & -int32_t(greedy));  // not a ?:, which g++ makes a branch
          r.take_if(!greedy, ahead);
        } else {  // a tie (the first generation): the same draws, written out
          ant[g] = greedy ? tied[size_t(e.tied_at) + size_t(r.below(uint64_t(e.tied_n)))] : e.roulette->count(r.next() >> 11);
        }
      }
    }
  });
}

void Aco::tell(const Population& pop, const Scores& scores) {
  ++gen_;
  const int32_t ng = int32_t(card_.size());
  const size_t n = pop.size;
  const size_t k = std::max<size_t>(1, size_t(std::ceil(p_.elite_fraction * double(n))));
  const std::vector<size_t> elite = best_indices(scores, k);
  if (!have_best_ || better(scores, elite[0], best_score_, 0)) {
    best_genome_.resize(size_t(ng));
    for (int32_t g = 0; g < ng; ++g) best_genome_[size_t(g)] = pop.at(elite[0], g);
    best_score_.resize(scores.nobj, 1);
    copy_scores(scores, elite[0], best_score_, 0);
    have_best_ = true;
  }
  // Counts of each value among all ants (local update) and among the elite ants (deposit).
  std::vector<double> counts(2 * tau_.size(), 0.0);
  double* chosen = counts.data();
  double* deposit = chosen + tau_.size();
  for (int32_t g = 0; g < ng; ++g) {
    const int32_t* col = &pop.genes[size_t(g) * n];
    double* ch = &chosen[size_t(offset_[g])];
    // Four interleaved integer counts: ants of a converged colony mostly choose the same value,
    // and one counter would make every increment wait for the previous one.
    std::vector<uint32_t> four(4 * size_t(card_[g]), 0);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (size_t l = 0; l < 4; ++l) ++four[l * size_t(card_[g]) + size_t(col[i + l])];
    for (; i < n; ++i) ++four[size_t(col[i])];
    for (int32_t v = 0; v < card_[g]; ++v)
      for (size_t l = 0; l < 4; ++l) ch[v] += double(four[l * size_t(card_[g]) + size_t(v)]);
    for (size_t e : elite) deposit[size_t(offset_[g] + col[e])] += 0.5 / double(elite.size());
    deposit[size_t(offset_[g] + best_genome_[size_t(g)])] += 0.5;
  }
  for (int32_t g = 0; g < ng; ++g) {
    const double tau0 = 1.0 / card_[g];
    for (int32_t v = 0; v < card_[g]; ++v) {
      const size_t j = size_t(offset_[g] + v);
      double t = tau_[j];
      const double xi = p_.local * chosen[j] / double(n);
      t = (1 - xi) * t + xi * tau0;                                     // local update
      t = (1 - p_.evaporation) * t + p_.evaporation * deposit[j];       // global update
      tau_[j] = std::max(t, tau0 / 100);                                // floor
    }
  }
}

}  // namespace cosmic::agents
