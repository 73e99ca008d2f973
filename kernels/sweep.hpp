// Per-point code of exhaustive sweeps, shared by the CPU backend (host/sweep_cpu.cpp) and the
// CUDA kernel (kernels/sweep_kernel.cuh): mixed-radix stepping of a genome, one constraint at a
// time (to know how far a violation lets the sweep skip), the walk over a part of a batch that
// skips such runs (sweep_walk_live), the objective histogram's bins, and the orders used by
// top-K and the Pareto front. Scoring a point is kernels/score.hpp's score_config(). Host and
// device, no allocation.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/model.hpp"
#include "kernels/score.hpp"
#include "kernels/space.hpp"

namespace cosmic {

// Objectives reduced per sweep: a bound of its own, below kNumObjectives, since the candidate
// records and the GPU blocks' histograms are sized by it.
constexpr int kMaxSweepObjectives = 11;

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
  int32_t plain_genes = 0;  // psa::plain_genes(space): how far the walk may decode only what changed
  double hist_edge[kHistEdges] = {};
};

// The scoring of one feasible point that reductions keep: its index and objective values.
struct SweepPoint {
  u128 index = 0;
  double obj[kMaxSweepObjectives] = {};
};

// Ordering of top-K lists by objective j of nobj: lower value first; ties broken by the other
// objectives in their order (the cheapest networks listed fastest first, not in index order),
// then by the lower index, so the order is total and a list unique.
COSMIC_HD inline bool better_in(const SweepPoint& a, const SweepPoint& b, int j, int nobj) {
  if (a.obj[j] != b.obj[j]) return a.obj[j] < b.obj[j];
  for (int o = 0; o < nobj; ++o)
    if (o != j && a.obj[o] != b.obj[o]) return a.obj[o] < b.obj[o];
  return a.index < b.index;
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

// Checks the constraints that may have changed; returns -1 when all hold, otherwise the
// highest low_gene of the violated ones (the skip that is safe: every index up to the next
// change of that gene violates the same constraint). `changed` is the highest gene that
// changed since the last check: constraints with low_gene > changed read only unchanged genes
// and are skipped (they held at the last check: a violated one with a higher low gene would
// have caused a longer skip). Pass s.ngenes to check every constraint.
COSMIC_HD inline int32_t violated_low_gene(const SpaceView& s, const SweepConst& k, const Config& c, int32_t changed) {
  int32_t m = -1;
  for (int32_t i = 0; i < s.nconstraints; ++i)
    if (k.low_gene[i] <= changed && k.low_gene[i] > m && !constraint_holds(s, c, i)) m = k.low_gene[i];
  return m;
}
COSMIC_HD inline int32_t violated_low_gene(const SpaceView& s, const SweepConst& k, const Config& c) {
  return violated_low_gene(s, k, c, s.ngenes);
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
// current one whose gene m differs. Returns the highest gene that changed, s.ngenes past the
// last index.
COSMIC_HD inline int32_t genome_next_change(const SpaceView& s, int32_t* genome, int32_t m) {
  for (int32_t g = 0; g < m; ++g) genome[g] = 0;
  for (int32_t g = m; g < s.ngenes; ++g) {
    if (++genome[g] < s.gene[g].card) return g;
    genome[g] = 0;
  }
  return s.ngenes;
}

// Indices from the genome's index to the next one whose gene m differs (at least 1):
// prod_{g<m} card_g minus the rank of genes below m. Exact (128-bit integers).
COSMIC_HD inline u128 indices_to_next_change(const SpaceView& s, const int32_t* genome, int32_t m) {
  u128 stride = 1, low = 0;
  for (int32_t g = 0; g < m; ++g) {
    low += u128(genome[g]) * stride;
    stride *= u128(s.gene[g].card);
  }
  return stride - low;
}

// Walks `count` consecutive indices from `index` (its genome in `genome`, which is advanced) and
// calls visit(config, index, offset) for every point that meets all constraints, offset being
// its distance from the first index. A violated constraint skips the run of indices that
// violate it too, without decoding them (violated_low_gene). The one copy of the sweep's walk:
// the CPU backend (host/sweep_cpu.cpp, one part per thread) and the CUDA kernel
// (kernels/sweep_kernel.cuh, one part per GPU thread) both call it, so they visit the same points.
template <class Visit>
COSMIC_HD inline void sweep_walk(const SpaceView& s, const SweepConst& k, int32_t* genome, u128 index, uint64_t count,
                                 Visit&& visit) {
  int32_t changed = s.ngenes;  // first point: check every constraint
  uint64_t offset = 0;
  Config c = s.base;  // decode(s, genome) of each point, written over the last one
  while (offset < count) {
    reapply_genome(s, genome, c, changed, k.plain_genes);
    const int32_t m = violated_low_gene(s, k, c, changed);
    if (m >= 0) {
      // Every index before the next change of gene m violates the same constraint.
      const u128 skip = indices_to_next_change(s, genome, m);
      if (skip >= u128(count - offset)) return;
      offset += uint64_t(skip);
      changed = genome_next_change(s, genome, m);
      continue;
    }
    visit(c, index + offset, offset);
    ++offset;
    changed = genome_next_change(s, genome, 0);
  }
}

// The part of a launch that GPU thread t walks. Parts are runs of per_thread live offsets,
// numbered from 0; with windows = 1, thread t takes part t. With windows = K > 1, the 32 lanes of
// warp w take part ((w / K) x 32 + l) x K + w mod K (lane l): the same place in 32 consecutive
// cycles of K parts. When a cycle is one run of the space's fastest genes (the leading workload
// genes, sweep_phase_cycle()), the lanes hold the same values of those genes at every step. They
// then fail the constraints, or the model's cheap checks, together, instead of waiting for the
// one lane that runs the whole model. For any T that is a multiple of 32 x K, it is a permutation
// of 0 .. T-1.
COSMIC_HD inline uint64_t sweep_part_of_thread(uint64_t t, uint64_t windows) {
  if (windows <= 1) return t;
  const uint64_t w = t / 32, l = t % 32;
  return ((w / windows) * 32 + l) * windows + w % windows;
}

// One point that passed the constraints, for --keep all.
struct SweepRow {
  u128 index = 0;
  int32_t reason = 0;  // Reason code
  double obj[kMaxSweepObjectives] = {};
  double time_s = 0, memory_bytes = 0, network_cost_usd = 0, tokens_per_s = 0, mfu = 0, first_token_s = 0;

  // The row of a scored point (CPU and CUDA backends), and the metrics back as a Result. An
  // infeasible point's objectives are +inf, as a search's (its metrics are what the model got to).
  COSMIC_HD void set(const Result& r, const double* objectives, int nobj) {
    reason = int32_t(r.reason);
    for (int j = 0; j < nobj; ++j) obj[j] = r.reason == Reason::Ok ? objectives[j] : INFINITY;
    time_s = r.time_s;
    memory_bytes = r.memory_bytes;
    network_cost_usd = r.network_cost_usd;
    tokens_per_s = r.tokens_per_s;
    mfu = r.mfu;
    first_token_s = r.first_token_s;
  }
  Result metrics() const {
    Result r;
    r.reason = Reason(reason);
    r.time_s = time_s;
    r.memory_bytes = memory_bytes;
    r.network_cost_usd = network_cost_usd;
    r.tokens_per_s = tokens_per_s;
    r.mfu = mfu;
    r.first_token_s = first_token_s;
    return r;
  }
};

// A run of consecutive live indices of a batch, with what a thread needs to start anywhere in
// it without a 128-bit division: the genome of its first index. Trivially copyable (the CUDA
// backend copies arrays of them to the device as they are).
struct LiveSegment {
  u128 begin = 0;                  // first index
  uint64_t start = 0;              // live offset of `begin` in the batch (sum of earlier counts)
  int32_t genome[kMaxGenes] = {};  // unrank(begin)
};

// Walks live offsets [lo, hi) of a batch, across segment boundaries, with sweep_walk;
// visit(config, index, offset) gets each point's live offset in the batch. segs: the batch's
// segments in order (nsegs >= 1), hi at most the batch's live count. Each CPU thread and each
// GPU thread walks its own [lo, hi) with this function.
template <class Visit>
COSMIC_HD inline void sweep_walk_live(const SpaceView& s, const SweepConst& k, const LiveSegment* segs, int32_t nsegs,
                                      uint64_t lo, uint64_t hi, Visit&& visit) {
  int32_t si = 0, up = nsegs - 1;  // the last segment with start <= lo
  while (si < up) {
    const int32_t mid = (si + up + 1) / 2;
    if (segs[mid].start <= lo) si = mid;
    else up = mid - 1;
  }
  int32_t genome[kMaxGenes];
  for (; lo < hi; ++si) {
    const LiveSegment& seg = segs[si];
    const uint64_t end = si + 1 < nsegs && segs[si + 1].start < hi ? segs[si + 1].start : hi;
    for (int32_t g = 0; g < s.ngenes; ++g) genome[g] = seg.genome[g];
    genome_add(s, genome, lo - seg.start);
    const uint64_t first = lo;
    sweep_walk(s, k, genome, seg.begin + (lo - seg.start), end - lo,
               [&](const Config& c, u128 index, uint64_t offset) { visit(c, index, first + offset); });
    lo = end;
  }
}

}  // namespace cosmic
