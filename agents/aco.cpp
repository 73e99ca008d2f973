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

DrawCounter Aco::roulette_table(const double* w, int32_t card) {
  std::vector<double> cum(static_cast<size_t>(card));
  double s = 0;
  for (int32_t v = 0; v < card; ++v) cum[size_t(v)] = s += w[v];
  // Value v + 1 is drawn from where x = u * total reaches cum[v] (u = draw * 2^-53, as Rng::uniform()).
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

void Aco::do_ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "aco");
  const size_t ng = card_.size();
  // ACS's pseudo-random proportional rule is a choice between two distributions, so it is one
  // distribution: value v with probability q0 [tau_v is the highest] / (values sharing it) +
  // (1 - q0) tau_v / sum(tau). Each gene of an ant is one draw from it, read from a DrawCounter
  // (agents/common.hpp) of the smallest draw reaching each cumulative weight, built once per gene
  // and generation (roulette_table).
  std::vector<DrawCounter> roulettes(ng);
  std::vector<double> w;
  for (size_t g = 0; g < ng; ++g) {
    const double* t = &tau_[size_t(offset_[g])];
    const int32_t c = card_[g];
    const double mx = *std::max_element(t, t + c);
    double sum = 0;
    int32_t ties = 0;
    for (int32_t v = 0; v < c; ++v) sum += t[v], ties += t[v] == mx;
    w.resize(size_t(c));
    for (int32_t v = 0; v < c; ++v) w[size_t(v)] = construction_weight(t[v], sum, t[v] == mx ? ties : 0, p_.greediness);
    roulettes[g] = roulette_table(w.data(), c);
  }
  const auto build = [&](auto gene_type) {
    using Gene = decltype(gene_type);
    fill_blocks<Gene>(pop, [&](size_t lo, size_t m, Gene* block) {
      for (size_t k = 0; k < m; ++k) {
        Rng r(stream_seed(seed_, gen_, lo + k));
        Gene* ant = block + k * ng;
        for (size_t g = 0; g < ng; ++g) ant[g] = Gene(roulettes[g].count(r.next() >> 11));
      }
    });
  };
  ParentRows::fits_in_bytes(card_) ? build(uint8_t()) : build(int32_t());
}

void Aco::do_tell(const Population& pop, const Scores& scores) {
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

void Aco::save(StateWriter& w) const {
  w.put(gen_);
  w.put(tau_);
  w.put(uint8_t(have_best_));
  w.put(best_genome_);
  best_score_.save(w);
}

void Aco::load(StateReader& r) {
  const size_t values = tau_.size();
  r.get(gen_);
  r.get(tau_);
  have_best_ = r.get<uint8_t>() != 0;
  r.get(best_genome_);
  best_score_.load(r);
  if (tau_.size() != values || (have_best_ && best_genome_.size() != card_.size()))
    throw std::runtime_error("agent state: aco pheromone of the wrong shape");
}

}  // namespace cosmic::agents
