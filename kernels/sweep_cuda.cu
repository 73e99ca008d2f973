// CUDA sweep backend: each thread walks a run of consecutive live indices of a batch (up to
// kMaxPerThread of them; the lanes of a warp take runs at the same place of consecutive cycles
// of the fastest genes, sweep_part_of_thread) with the CPU's walk, sweep_walk (kernels/sweep.hpp):
// the genome is stepped in mixed radix, a violated constraint skips the run of indices that
// violate it too, and each point that meets the constraints is scored with the CPU's code
// (score_config, kernels/score.hpp). The SpaceView (value tables, constraint programs) and the sweep constants
// live in __constant__ memory. Reductions stay on the device: reason counts and objective
// histograms per block in shared memory, then one atomicAdd per non-empty bin; top-K and Pareto
// candidates are the points that beat what the host already kept (K-th best per objective,
// current front), appended to a bounded buffer that the host merges exactly.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "host/backend.hpp"
#include "host/sweep.hpp"

namespace cosmic {

namespace {

constexpr int kBlock = 256;
constexpr uint64_t kMaxLive = uint64_t(1) << 31;  // live indices per launch
constexpr uint32_t kCandCap = 1u << 20;
constexpr uint64_t kRowsCap = uint64_t(1) << 21;  // --keep all: rows per launch
// Live indices per thread: at most kMaxPerThread, and fewer when a launch would otherwise have
// fewer than kMinThreads threads. A thread skips the runs that violate a constraint inside its
// part, but a warp lasts as long as its busiest thread: where the points that pass the
// constraints come in clusters, long parts put whole clusters on one thread. Assumption behind
// 2, from a CPU emulation of warp steps on four shipped spaces (docs/performance.md), not from a
// GPU measurement: counting a decode-and-check step as a quarter of a model evaluation, 2 cost
// 0-15% less than 1 on each space, 8 to 32 up to 2.2x more (network-system1). 2^20 threads are
// several times what an H200 keeps resident (132 SMs x at most 2,048). Results do not depend
// on either constant (the reductions are sums and exact merges).
#ifndef COSMIC_SWEEP_MAX_PER_THREAD
#define COSMIC_SWEEP_MAX_PER_THREAD 2
#endif
constexpr uint64_t kMaxPerThread = COSMIC_SWEEP_MAX_PER_THREAD;
constexpr uint64_t kMinThreads = uint64_t(1) << 20;

// Whether warps are lined up on the cycle of the space's fastest genes (sweep_part_of_thread).
// On by default from a CPU emulation of warp steps (docs/performance.md), not yet from a GPU
// measurement; -DCOSMIC_SWEEP_LINE_UP_WARPS=0 gives the plain thread-to-part map, to compare.
#ifndef COSMIC_SWEEP_LINE_UP_WARPS
#define COSMIC_SWEEP_LINE_UP_WARPS 1
#endif

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

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

template <class T>
T* device_alloc(size_t n, const char* what) {
  T* p = nullptr;
  check(cudaMalloc(&p, n * sizeof(T) + 1), what);
  return p;
}

class CudaSweep final : public SweepBackend {
 public:
  explicit CudaSweep(const SweepProblem& p) : p_(p), phase_cycle_(sweep_phase_cycle(*p.view)) {
    const CudaDevice dev = cuda_device();
    if (!dev.available) throw std::runtime_error(dev.why);
    device_ = dev.name;
    d_reasons_ = device_alloc<unsigned long long>(kNumReasons, "cudaMalloc(reasons)");
    d_hist_ = device_alloc<unsigned long long>(size_t(kMaxSweepObjectives) * kHistBins, "cudaMalloc(hist)");
    d_cand_ = device_alloc<SweepPoint>(kCandCap, "cudaMalloc(candidates)");
    d_ncand_ = device_alloc<unsigned int>(1, "cudaMalloc(count)");
    if (p.keep_all) d_rows_ = device_alloc<SweepRow>(kRowsCap, "cudaMalloc(rows)");
  }
  ~CudaSweep() override {
    cudaFree(d_reasons_);
    cudaFree(d_hist_);
    cudaFree(d_cand_);
    cudaFree(d_ncand_);
    cudaFree(d_rows_);
    cudaFree(d_segs_);
    cudaFree(d_front_);
  }
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }
  uint64_t min_batch() const override { return uint64_t(1) << 16; }
  uint64_t max_batch() const override { return p_.keep_all ? kRowsCap : kMaxLive; }

  void run(const std::vector<Segment>& segs, const Pruning& prune, BatchOutput& out) override {
    out.reset(p_.k.nobj);
    // Constant memory is per process, not per sweep: it is loaded for each batch (about 23 KB), so
    // that two sweeps in one process cannot score with each other's space.
    check(cudaMemcpyToSymbol(c_view, p_.view, sizeof(SpaceView)), "copy SpaceView to constant memory");
    check(cudaMemcpyToSymbol(c_k, &p_.k, sizeof(SweepConst)), "copy sweep constants");
    // The front is uploaded once per batch.
    const size_t nf = prune.want_front ? prune.front.size() : 0;
    if (nf > front_cap_) {
      cudaFree(d_front_);
      front_cap_ = nf * 2;
      d_front_ = device_alloc<SweepPoint>(front_cap_, "cudaMalloc(front)");
    }
    if (nf) check(cudaMemcpy(d_front_, prune.front.data(), nf * sizeof(SweepPoint), cudaMemcpyHostToDevice), "copy front");
    DevPrune pr{};
    for (int j = 0; j < kMaxSweepObjectives; ++j) {
      pr.full[j] = prune.full[j] ? 1 : 0;
      pr.kth[j] = prune.kth[j];
    }
    pr.front = d_front_;
    pr.front_n = int32_t(nf);
    pr.want_front = prune.want_front ? 1 : 0;
    part(segs, pr, out);
  }

 private:
  // One launch over `segs`; when the candidate buffer overflows, the launch is discarded and
  // its two halves are run instead.
  void part(const std::vector<Segment>& segs, const DevPrune& pr, BatchOutput& out) {
    uint64_t total = 0;
    for (const Segment& s : segs) total += s.count;
    if (total == 0) return;
    if (total > max_batch()) throw std::runtime_error("CUDA sweep: batch larger than max_batch()");
    const std::vector<LiveSegment> hs = live_segments(*p_.view, segs);
    if (hs.size() > segs_cap_) {
      cudaFree(d_segs_);
      segs_cap_ = hs.size() * 2;
      d_segs_ = device_alloc<LiveSegment>(segs_cap_, "cudaMalloc(segments)");
    }
    check(cudaMemcpy(d_segs_, hs.data(), hs.size() * sizeof(LiveSegment), cudaMemcpyHostToDevice), "copy segments");
    check(cudaMemset(d_reasons_, 0, kNumReasons * sizeof(unsigned long long)), "memset");
    check(cudaMemset(d_hist_, 0, size_t(kMaxSweepObjectives) * kHistBins * sizeof(unsigned long long)), "memset");
    check(cudaMemset(d_ncand_, 0, sizeof(unsigned int)), "memset");
    // Rows of points the kernel does not score (constraints violated) keep reason -1 (all bits set).
    if (p_.keep_all) check(cudaMemset(d_rows_, 0xFF, total * sizeof(SweepRow)), "memset rows");
    const DevOut o{d_reasons_, d_hist_, d_cand_, d_ncand_, p_.keep_all ? d_rows_ : nullptr};
    uint64_t per_thread = (total + kMinThreads - 1) / kMinThreads;
    per_thread = per_thread < 1 ? 1 : (per_thread > kMaxPerThread ? kMaxPerThread : per_thread);
    const uint64_t parts = (total + per_thread - 1) / per_thread;
    // Warps lined up on the cycle of the fastest genes (sweep_part_of_thread) when the launch has
    // at least 64 groups of 32 cycles: the threads are then rounded up to whole groups (the
    // extra ones find no part) by under 2%.
    uint64_t windows = COSMIC_SWEEP_LINE_UP_WARPS && phase_cycle_ % per_thread == 0 ? phase_cycle_ / per_thread : 1;
    if (windows > 1 && parts < 64 * 32 * windows) windows = 1;
    const uint64_t group = 32 * windows, threads = (parts + group - 1) / group * group;
    const unsigned grid = unsigned((threads + kBlock - 1) / kBlock);
    const int32_t nsegs = int32_t(hs.size());
    if (p_.view->base.net.convention == Convention::Physical)
      sweep_kernel<Conventions::Physical>
          <<<grid, kBlock>>>(d_segs_, nsegs, total, uint32_t(per_thread), windows, pr, o);
    else
      sweep_kernel<Conventions::Any><<<grid, kBlock>>>(d_segs_, nsegs, total, uint32_t(per_thread), windows, pr, o);
    check(cudaGetLastError(), "sweep_kernel launch");
    check(cudaDeviceSynchronize(), "sweep_kernel");  // a fault is named here, not by the next copy
    unsigned int ncand = 0;
    check(cudaMemcpy(&ncand, d_ncand_, sizeof ncand, cudaMemcpyDeviceToHost), "copy candidate count");
    if (ncand > kCandCap) {
      // Split by live count and redo both halves.
      std::vector<Segment> a, b;
      uint64_t half = total / 2;
      for (const Segment& s : segs) {
        if (half >= s.count) {
          a.push_back(s);
          half -= s.count;
        } else if (half > 0) {
          a.push_back(Segment{s.begin, half});
          b.push_back(Segment{s.begin + half, s.count - half});
          half = 0;
        } else {
          b.push_back(s);
        }
      }
      part(a, pr, out);
      part(b, pr, out);
      return;
    }
    unsigned long long reasons[kNumReasons];
    check(cudaMemcpy(reasons, d_reasons_, sizeof reasons, cudaMemcpyDeviceToHost), "copy reasons");
    for (int r = 0; r < kNumReasons; ++r) out.reasons[r] += reasons[r];
    std::vector<unsigned long long> hist(out.hist.size());
    check(cudaMemcpy(hist.data(), d_hist_, hist.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "copy histogram");
    for (size_t i = 0; i < hist.size(); ++i) out.hist[i] += hist[i];
    const size_t n0 = out.candidates.size();
    out.candidates.resize(n0 + ncand);
    if (ncand)
      check(cudaMemcpy(out.candidates.data() + n0, d_cand_, ncand * sizeof(SweepPoint), cudaMemcpyDeviceToHost),
            "copy candidates");
    if (p_.keep_all) {
      std::vector<SweepRow> rows(total);
      check(cudaMemcpy(rows.data(), d_rows_, total * sizeof(SweepRow), cudaMemcpyDeviceToHost), "copy rows");
      for (const SweepRow& r : rows)
        if (r.reason >= 0) out.rows.push_back(r);
    }
  }

  SweepProblem p_;
  uint64_t phase_cycle_;  // sweep_phase_cycle(): lines up warps (sweep_part_of_thread)
  std::string device_;
  unsigned long long* d_reasons_ = nullptr;
  unsigned long long* d_hist_ = nullptr;
  SweepPoint* d_cand_ = nullptr;
  unsigned int* d_ncand_ = nullptr;
  SweepRow* d_rows_ = nullptr;
  LiveSegment* d_segs_ = nullptr;
  size_t segs_cap_ = 0;
  SweepPoint* d_front_ = nullptr;
  size_t front_cap_ = 0;
};

}  // namespace

std::unique_ptr<SweepBackend> make_cuda_sweep_backend(const SweepProblem& p) { return std::make_unique<CudaSweep>(p); }

}  // namespace cosmic
