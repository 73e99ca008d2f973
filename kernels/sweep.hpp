// Per-point code of exhaustive sweeps, shared by the CPU backend (host/sweep_cpu.cpp) and the
// CUDA kernel (kernels/sweep_cuda.cu): mixed-radix stepping of a genome, one constraint at a
// time (to know how far a violation lets the sweep skip), the objective histogram's bins, and
// the orders used by top-K and the Pareto front. Scoring a point is kernels/score.hpp's
// score_config(). Host and device, no allocation.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/model.hpp"
#include "kernels/score.hpp"
#include "kernels/space.hpp"

namespace cosmic {

constexpr int kMaxSweepObjectives = kNumObjectives;  // objectives reduced per sweep: up to all six

// Objective histogram: log-spaced, 10 bins per decade over [1e-12, 1e18), one underflow bin
// (below 1e-12, zero, negative or NaN) and one overflow bin (1e18 and above). The range covers
// every objective cosmic defines (seconds, bytes, dollars and their products) without a first
// pass, and histograms of different batches, shards or backends add up exactly.
// Bin b (1..300) holds [edge[b-1], edge[b]) with edge[i] = 10^(i/10 - 12).
constexpr int kHistEdges = 301;
constexpr int kHistBins = kHistEdges + 1;

struct SweepConst {
  int32_t nobj = 0;
  Objective obj[kMaxSweepObjectives] = {};
  // Lowest gene each constraint reads (directly or through derived parameters); ngenes when
  // it reads none. A violated constraint k holds for every index that shares genes
  // >= low_gene[k], so the sweep may skip to the next index where gene low_gene[k] changes.
  int32_t low_gene[kMaxConstraints] = {};
  double hist_edge[kHistEdges] = {};
};

// The scoring of one feasible point that reductions keep: its index and objective values.
struct SweepPoint {
  u128 index = 0;
  double obj[kMaxSweepObjectives] = {};
};

// Ordering of top-K lists: lower value first, ties broken by the lower index.
COSMIC_HD inline bool better_in(const SweepPoint& a, const SweepPoint& b, int j) {
  return a.obj[j] < b.obj[j] || (a.obj[j] == b.obj[j] && a.index < b.index);
}

// Pareto dominance (all objectives minimised): a dominates b when it is no worse in every
// objective and better in one; of points with equal objective vectors the lowest index
// dominates the others, so the front holds one representative per vector and is unique.
COSMIC_HD inline bool dominates(const SweepPoint& a, const SweepPoint& b, int nobj) {
  bool strictly = false;
  for (int j = 0; j < nobj; ++j) {
    if (a.obj[j] > b.obj[j]) return false;
    if (a.obj[j] < b.obj[j]) strictly = true;
  }
  return strictly || a.index < b.index;
}

COSMIC_HD inline int hist_bin(const SweepConst& k, double v) {
  if (!(v >= k.hist_edge[0])) return 0;  // underflow, non-positive, NaN
  // A guess from log10, then exact comparisons against the shared edge table, so host and
  // device put a value into the same bin even where their log10 differ in the last bit.
  double g = (log10(v) + 12.0) * 10.0 + 1.0;
  int b = g < 1.0 ? 1 : (g > double(kHistBins - 1) ? kHistBins - 1 : int(g));
  while (b > 1 && v < k.hist_edge[b - 1]) --b;
  while (b < kHistBins - 1 && v >= k.hist_edge[b]) ++b;
  return b;
}

// Whether constraint k holds (kernels/space.hpp), without the violation measure.
COSMIC_HD inline bool constraint_holds(const SpaceView& s, const Config& c, int32_t k) {
  double unused = 0;
  return constraint_holds(s, c, k, unused);
}

// Checks the constraints; returns -1 when all hold, otherwise the highest low_gene of the
// violated ones (the skip that is safe: every index up to the next change of that gene
// violates the same constraint).
COSMIC_HD inline int32_t violated_low_gene(const SpaceView& s, const SweepConst& k, const Config& c) {
  int32_t m = -1;
  for (int32_t i = 0; i < s.nconstraints; ++i)
    if (k.low_gene[i] > m && !constraint_holds(s, c, i)) m = k.low_gene[i];
  return m;
}

// Adds `step` to a genome in mixed radix (gene 0 least significant). Returns false on
// overflow past the last index.
COSMIC_HD inline bool genome_add(const SpaceView& s, int32_t* genome, uint64_t step) {
  for (int32_t g = 0; g < s.ngenes && step; ++g) {
    const uint64_t card = uint64_t(s.gene[g].card);
    const uint64_t v = uint64_t(genome[g]) + step % card;
    step /= card;
    genome[g] = int32_t(v % card);
    step += v / card;
  }
  return step == 0;
}

// Sets genes below m to zero and adds one to gene m (with carry): the first index after the
// current one whose gene m differs. Returns false past the last index.
COSMIC_HD inline bool genome_skip_to_next(const SpaceView& s, int32_t* genome, int32_t m) {
  for (int32_t g = 0; g < m; ++g) genome[g] = 0;
  for (int32_t g = m; g < s.ngenes; ++g) {
    if (++genome[g] < s.gene[g].card) return true;
    genome[g] = 0;
  }
  return false;
}

}  // namespace cosmic
