// The CUDA sweep's kernel (host/sweep_cuda.cu owns its buffers, splits batches and launches
// it): each thread walks a run of consecutive live indices with the CPU's walk, sweep_walk_live
// (kernels/sweep.hpp), and scores each point that meets the constraints with the CPU's code
// (score_config, kernels/score.hpp). The SpaceView and the sweep constants live in __constant__
// memory. Reductions stay on the device: reason counts and objective histograms per block in
// shared memory, then one atomicAdd per non-empty bin; top-K and Pareto candidates are the points
// that beat what the host already kept, appended to a bounded buffer (kCandCap) that the host
// merges exactly. For nvcc only; included by host/sweep_cuda.cu alone (the __constant__ symbols
// are that file's).
#pragma once

#include "kernels/sweep.hpp"

namespace cosmic {

namespace {

constexpr int kBlock = 256;
constexpr uint32_t kCandCap = 1u << 20;  // candidates a launch may append

// Blocks per SM the sweep kernel is compiled for (the second argument of __launch_bounds__).
// Unset, ptxas picks the register budget itself (with CUDA 13.0: 80 registers and some spills
// for the Physical instantiation); 1 lets it use up to 255 registers (no spills, fewer resident
// warps), 2 up to 128. Which is fastest on an H200 has not been measured (docs/performance.md).
#ifdef COSMIC_SWEEP_MIN_BLOCKS
#define COSMIC_SWEEP_BOUNDS __launch_bounds__(kBlock, COSMIC_SWEEP_MIN_BLOCKS)
#else
#define COSMIC_SWEEP_BOUNDS __launch_bounds__(kBlock)
#endif

__constant__ SpaceView c_view;
__constant__ SweepConst c_k;

struct DevPrune {
  int32_t full[kMaxSweepObjectives];
  SweepPoint kth[kMaxSweepObjectives];
  const SweepPoint* front;
  int32_t front_n;
  int32_t want_front;
};

struct DevOut {
  unsigned long long* reasons;  // kNumReasons
  unsigned long long* hist;     // nobj x kHistBins
  SweepPoint* cand;
  unsigned int* ncand;
  SweepRow* rows;               // null unless --keep all; one per live index (reason -1: not scored)
};

// A block's reason counts and objective histograms (nobj x kHistBins, as DevOut::hist).
struct BlockCounts {
  unsigned int reasons[kNumReasons];
  unsigned int hist[kMaxSweepObjectives * kHistBins];
};

__device__ bool is_candidate(const SweepPoint& pt, const DevPrune& pr) {
  for (int j = 0; j < c_k.nobj; ++j)
    if (!pr.full[j] || better_in(pt, pr.kth[j], j, c_k.nobj)) return true;
  if (!pr.want_front) return false;
  for (int32_t i = 0; i < pr.front_n; ++i) {
    const SweepPoint& f = pr.front[i];
    if (f.obj[0] > pt.obj[0]) break;  // front sorted by obj[0]: no later point dominates
    if (dominates(f, pt, c_k.nobj)) return false;
  }
  return true;
}

// Scores a point that meets the constraints (live offset `at` in the launch) into the block's
// counts, the candidate buffer and, with --keep all, its row.
template <Conventions kConv>
__device__ void score(const Config& c, u128 index, uint64_t at, const DevPrune& pr, const DevOut& out,
                      BlockCounts& counts) {
  SweepPoint pt;
  pt.index = index;
  // Without rows nothing of an out-of-memory point is kept but its reason: its timing is skipped.
  const Result r = score_config<kConv>(c_view, c, c_k.obj, c_k.nobj, pt.obj, out.rows == nullptr);
  atomicAdd(&counts.reasons[int(r.reason)], 1u);
  if (r.reason == Reason::Ok) {
    for (int j = 0; j < c_k.nobj; ++j) atomicAdd(&counts.hist[j * kHistBins + hist_bin(c_k, pt.obj[j])], 1u);
    if (is_candidate(pt, pr)) {
      const unsigned int slot = atomicAdd(out.ncand, 1u);
      if (slot < kCandCap) out.cand[slot] = pt;
    }
  }
  if (out.rows) {
    SweepRow row;
    row.index = index;
    row.set(r, pt.obj, c_k.nobj);
    out.rows[at] = row;
  }
}

// Thread t walks live offsets [p x per_thread, (p + 1) x per_thread) of the launch, part
// p = sweep_part_of_thread(t, windows), with sweep_walk_live, as a CPU thread walks its part.
// kConv = Physical leaves the ASTRA-sim flow shop out of the kernel (kernels/collective.hpp); no
// gene sets the collective convention, so every point has the base configuration's.
template <Conventions kConv>
__global__ void COSMIC_SWEEP_BOUNDS sweep_kernel(const LiveSegment* segs, int32_t nsegs, uint64_t total,
                                                 uint32_t per_thread, uint64_t windows,
                                                 __grid_constant__ const DevPrune pr,
                                                 __grid_constant__ const DevOut out) {
  __shared__ BlockCounts counts;
  const int nbins = c_k.nobj * kHistBins;
  for (int b = threadIdx.x; b < kNumReasons; b += kBlock) counts.reasons[b] = 0;
  for (int b = threadIdx.x; b < nbins; b += kBlock) counts.hist[b] = 0;
  __syncthreads();

  const uint64_t lo = sweep_part_of_thread(uint64_t(blockIdx.x) * kBlock + threadIdx.x, windows) * per_thread;
  if (lo < total) {
    const uint64_t hi = total - lo < per_thread ? total : lo + per_thread;
    sweep_walk_live(c_view, c_k, segs, nsegs, lo, hi, [&](const Config& c, u128 index, uint64_t at) {
      score<kConv>(c, index, at, pr, out, counts);
    });
  }

  // One global atomic per non-empty bin of the block.
  __syncthreads();
  for (int b = threadIdx.x; b < kNumReasons; b += kBlock)
    if (counts.reasons[b]) atomicAdd(&out.reasons[b], (unsigned long long)counts.reasons[b]);
  for (int b = threadIdx.x; b < nbins; b += kBlock)
    if (counts.hist[b]) atomicAdd(&out.hist[b], (unsigned long long)counts.hist[b]);
}

}  // namespace

}  // namespace cosmic
