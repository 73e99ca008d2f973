// Helpers shared by the agents: per-individual random streams, uniform genomes, the variation
// operators of GA and NSGA-II, and the total order of the feasibility rules.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "agents/agent.hpp"
#include "agents/rng.hpp"

namespace cosmic::agents {

// A stream per (seed, generation, individual): individuals can be drawn in parallel and the
// genomes do not depend on the thread count. splitmix64-style mixing of the three words.
inline uint64_t stream_seed(uint64_t seed, uint64_t gen, uint64_t i) {
  uint64_t z = seed ^ (gen * 0x9e3779b97f4a7c15ULL) ^ (i * 0xd1b54a32d192ed03ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline void random_genome(Population& pop, size_t i, const std::vector<int32_t>& card, Rng& r) {
  for (int32_t g = 0; g < pop.ngenes; ++g) pop.at(i, g) = int32_t(r.below(uint64_t(card[g])));
}

// Feasibility rules (agent.hpp better()) on objective 0 made a strict total order: ties go to
// the lower index, so sorts and selections are deterministic.
inline bool ranks_before(const Scores& s, size_t a, size_t b) {
  if (better(s, a, s, b)) return true;
  if (better(s, b, s, a)) return false;
  return a < b;
}

// Indices 0..n-1, best first under ranks_before (only the first k need be sorted).
inline std::vector<size_t> best_indices(const Scores& s, size_t k) {
  std::vector<size_t> idx(s.size);
  std::iota(idx.begin(), idx.end(), size_t(0));
  k = std::min(k, idx.size());
  auto cmp = [&](size_t a, size_t b) { return ranks_before(s, a, b); };
  std::partial_sort(idx.begin(), idx.begin() + ptrdiff_t(k), idx.end(), cmp);
  idx.resize(k);
  return idx;
}

// Per-gene categorical mutation: with probability `rate` a gene takes one of its other
// card - 1 values, uniformly (so it always changes, and stays within its cardinality). The genes
// to mutate are found by geometric skips (one draw per mutated gene, not one per gene).
inline void mutate(Population& pop, size_t i, const std::vector<int32_t>& card, double rate, Rng& r) {
  if (!(rate > 0)) return;
  const double log_keep = rate < 1 ? std::log1p(-rate) : 0;
  for (int32_t g = 0;; ++g) {
    if (rate < 1) g += int32_t(std::min(1e9, std::floor(std::log(1 - r.uniform()) / log_keep)));
    if (g >= pop.ngenes) return;
    if (card[g] < 2) continue;
    pop.at(i, g) = int32_t((uint64_t(pop.at(i, g)) + 1 + r.below(uint64_t(card[g] - 1))) % uint64_t(card[g]));
  }
}

// Uniform crossover (Syswerda 1989): with probability `rate` each gene comes from parent a or b
// with equal chance (one random bit per gene); otherwise the child copies a. Parents are rows
// of `ngenes` genes (individual-major copies, for locality).
inline void crossover(const int32_t* a, const int32_t* b, Population& child, size_t i, double rate, Rng& r) {
  const bool mix = r.uniform() < rate;
  uint64_t bits = 0;
  for (int32_t g = 0; g < child.ngenes; ++g) {
    if (mix && (g & 63) == 0) bits = r.next();
    const bool from_b = mix && ((bits >> (g & 63)) & 1);
    child.at(i, g) = from_b ? b[g] : a[g];
  }
}

// One generation of children: random genomes before any parents exist, afterwards two parents
// chosen by `pick(rng)` (a tournament), uniform crossover and per-gene mutation. Child i draws
// from its own stream (seed, generation, i), so the result does not depend on the thread count.
// `rows` holds the parents individual-major (to_rows).
template <class Pick>
void breed(Population& pop, const std::vector<int32_t>& card, uint64_t seed, uint64_t gen, bool have_parents,
           const std::vector<int32_t>& rows, double crossover_rate, double mutation_rate, Pick pick) {
  const int64_t n = int64_t(pop.size);
  const size_t ng = card.size();
#pragma omp parallel for schedule(static) if (n >= 4096)
  for (int64_t i = 0; i < n; ++i) {
    Rng r(stream_seed(seed, gen, uint64_t(i)));
    if (!have_parents) {
      random_genome(pop, size_t(i), card, r);
      continue;
    }
    const size_t a = pick(r), b = pick(r);
    crossover(&rows[a * ng], &rows[b * ng], pop, size_t(i), crossover_rate, r);
    mutate(pop, size_t(i), card, mutation_rate, r);
  }
}

// Individual-major copy of a population: row i holds individual i's genes.
inline void to_rows(const Population& pop, std::vector<int32_t>& rows) {
  const size_t n = pop.size, ng = size_t(pop.ngenes);
  rows.resize(n * ng);
  for (size_t g = 0; g < ng; ++g) {
    const int32_t* col = &pop.genes[g * n];
    for (size_t i = 0; i < n; ++i) rows[i * ng + g] = col[i];
  }
}

inline void copy_scores(const Scores& from, size_t i, Scores& to, size_t j) {
  for (int32_t o = 0; o < from.nobj; ++o) to.obj[size_t(o) * to.size + j] = from.at(i, o);
  to.violation[j] = from.violation[i];
  to.reason[j] = from.reason[i];
}

inline void check_sizes(const Population& pop, size_t population, int32_t ngenes, const char* who) {
  if (pop.size != population || pop.ngenes != ngenes)
    throw std::invalid_argument(std::string(who) + ": population of the wrong shape");
}

}  // namespace cosmic::agents
