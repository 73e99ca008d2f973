// Breeding one child of GA or NSGA-II, host and device (COSMIC_HD): two tournaments among the
// parents, uniform crossover and per-gene mutation, all drawn from the child's own stream
// (seed, generation, index). agents/common.hpp's breed() makes a generation on the CPU threads,
// a block of children at a time, with these operators; the CUDA population evaluator
// (kernels/population_kernel.cuh) makes one child per thread with breed_child(). Both give the same
// children, bit for bit (tests: Breeding.* on the CPU, PopulationEvaluator.CudaBreedsAsTheHost on
// a device).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "agents/rng.hpp"
#include "kernels/hd.hpp"

namespace cosmic::agents {

// GA's tournaments: an individual's place under the feasibility rules (agent.hpp better()) on
// objective 0, packed so that a comparison reads one 16-byte record.
struct Standing {
  double value;        // objective 0 when feasible, else the violation
  int32_t infeasible;  // 0 or 1
};

// better() on standings.
COSMIC_HD inline bool better(const Standing& a, const Standing& b) {
  return a.infeasible != b.infeasible ? a.infeasible < b.infeasible : a.value < b.value;
}

// The feasibility rules made a strict total order: ties go to the lower index, so sorts,
// selections and tournaments are deterministic.
COSMIC_HD inline bool stands_before(const Standing* f, size_t a, size_t b) {
  if (better(f[a], f[b])) return true;
  if (better(f[b], f[a])) return false;
  return a < b;
}

// NSGA-II's tournaments (Deb et al. 2002): the lower non-domination rank wins, then the larger
// crowding distance, then the lower index.
struct Crowded {
  int32_t rank;     // non-domination rank under the feasibility rules (0 = first front)
  double distance;  // crowding distance within the front
};

COSMIC_HD inline bool stands_before(const Crowded* c, size_t a, size_t b) {
  if (c[a].rank != c[b].rank) return c[a].rank < c[b].rank;
  if (c[a].distance != c[b].distance) return c[a].distance > c[b].distance;
  return a < b;
}

// Eight bytes of all ones or zeros from eight bits: byte j is 0xff when bit j is set. Bit j is
// copied into every byte, kept only in byte j, turned into byte j's high bit where the byte is
// not zero, and that bit widened to the whole byte (no step carries across bytes).
COSMIC_HD inline uint64_t byte_masks(uint64_t bits8) {
  const uint64_t kept = (bits8 * 0x0101010101010101ULL) & 0x8040201008040201ULL;
  const uint64_t high = ((kept + 0x7f7f7f7f7f7f7f7fULL) | kept) & 0x8080808080808080ULL;
  return (high >> 7) * 0xff;
}

// A DrawCounter's tables (agents/common.hpp), as the counting reads them: for a 53-bit draw,
// how many of the ascending thresholds `first` (ending with ~0) are at or below it, starting
// from the count at the start of its slice.
struct DrawTable {
  const uint64_t* first = nullptr;
  const uint16_t* at_slice = nullptr;
  int shift = 53;
  COSMIC_HD int32_t count(uint64_t bits53) const {
    int32_t k = at_slice[bits53 >> shift];
    while (first[k] <= bits53) ++k;
    return k;
  }
};

// The per-gene mutation rate and its skips (MutationSkips, agents/common.hpp).
struct SkipView {
  double rate = 0;
  DrawTable table;  // read only when 0 < rate < 1
  COSMIC_HD bool any() const { return rate > 0; }
  COSMIC_HD bool geometric() const { return rate > 0 && rate < 1; }
  COSMIC_HD int32_t skip(uint64_t bits53) const { return table.count(bits53); }
};

// Uniform crossover (Syswerda 1989): with probability `rate` each gene comes from parent a or b
// with equal chance (one random bit per gene, 64 genes a draw); otherwise the child copies a.
// The choice is made without a branch (a random bit per gene would mispredict half the time),
// eight one-byte genes at a time.
template <class Gene>
COSMIC_HD void crossover(const Gene* a, const Gene* b, Gene* child, size_t ng, double rate, Rng& r) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte j of a word is gene j");
  if (!(r.uniform() < rate)) {
    for (size_t g = 0; g < ng; ++g) child[g] = a[g];
    return;
  }
  for (size_t g0 = 0; g0 < ng; g0 += 64) {
    const uint64_t bits = r.next();
    const size_t end = ng < g0 + 64 ? ng : g0 + 64;
    size_t g = g0;
    if constexpr (sizeof(Gene) == 1)
      for (; g + 8 <= end; g += 8) {
        uint64_t x, y;
        memcpy(&x, a + g, 8);
        memcpy(&y, b + g, 8);
        x ^= (x ^ y) & byte_masks((bits >> (g - g0)) & 0xff);
        memcpy(child + g, &x, 8);
      }
    for (; g < end; ++g) {
      const int32_t take_b = -int32_t((bits >> (g - g0)) & 1);  // all ones or zero
      const int32_t x = a[g], y = b[g];
      child[g] = Gene(x ^ ((x ^ y) & take_b));
    }
  }
}

// Per-gene categorical mutation: with probability `rate` a gene takes one of its other
// card - 1 values, uniformly (so it always changes, and stays within its cardinality). The
// genes to mutate are found by geometric skips, one draw per mutated gene (MutationSkips).
template <class Gene>
COSMIC_HD void mutate(Gene* row, const int32_t* card, int32_t ng, const SkipView& skips, Rng& r) {
  if (!skips.any()) return;
  for (int32_t g = 0;; ++g) {
    if (skips.geometric()) g += skips.skip(r.next() >> 11);
    if (g >= ng) return;
    if (card[g] < 2) continue;
    const int64_t v = int64_t(row[g]) + 1 + int64_t(r.below(uint64_t(card[g] - 1)));  // < 2 card
    row[g] = Gene(v < card[g] ? v : v - card[g]);
  }
}

// What breeding a child reads: the parents' genomes individual-major (row p: parent p's genes)
// and their tournament records.
template <class Gene, class Record>
struct BreedView {
  const Gene* parents;
  const Record* records;
  uint64_t nparents;  // >= 1
  const int32_t* card;
  int32_t ngenes;
  int32_t tournament;  // contestants per tournament, >= 1
  double crossover_rate;
  SkipView skips;
  uint64_t seed, gen;
};

// The winner of a tournament: `t` contestants drawn uniformly, the one no later contestant
// beats under stands_before().
template <class Record>
COSMIC_HD uint64_t tournament(const Record* records, uint64_t nparents, int32_t t, Rng& r) {
  uint64_t best = r.below(nparents);
  for (int32_t j = 1; j < t; ++j) {
    const uint64_t c = r.below(nparents);
    if (stands_before(records, c, best)) best = c;
  }
  return best;
}

// Child i of the generation: parents a and b by tournaments, crossed, then mutated.
template <class Gene, class Record>
COSMIC_HD void breed_child(const BreedView<Gene, Record>& v, uint64_t i, Gene* child) {
  Rng r(stream_seed(v.seed, v.gen, i));
  const uint64_t a = tournament(v.records, v.nparents, v.tournament, r);
  const uint64_t b = tournament(v.records, v.nparents, v.tournament, r);
  const size_t ng = size_t(v.ngenes);
  crossover(v.parents + a * ng, v.parents + b * ng, child, ng, v.crossover_rate, r);
  mutate(child, v.card, v.ngenes, v.skips, r);
}

}  // namespace cosmic::agents
