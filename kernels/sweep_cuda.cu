// CUDA sweep backend: one thread per live index of a batch. The SpaceView (value tables,
// constraint programs) and the sweep constants live in __constant__ memory; a thread finds its
// segment, steps the segment's start genome by its offset (no 128-bit division), decodes and
// scores the point with the CPU's code (score_point / score_config, kernels/score.hpp).
// Reductions stay on the device: reason counts and objective histograms per block with
// cub::BlockHistogram, then one atomicAdd per non-empty bin; top-K and Pareto candidates are
// the points that beat what the host already kept (K-th best per objective, current front),
// appended to a bounded buffer that the host merges exactly.
#include <cuda_runtime.h>

#include <cub/block/block_histogram.cuh>

#include <stdexcept>
#include <string>

#include "host/backend.hpp"
#include "host/sweep.hpp"

namespace cosmic {

namespace {

constexpr int kBlock = 256;
constexpr uint64_t kMaxLive = uint64_t(1) << 31;  // per launch: offsets fit in 32 bits
constexpr uint32_t kCandCap = 1u << 20;
constexpr uint64_t kRowsCap = uint64_t(1) << 21;  // --keep all: rows per launch

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

struct DevSegment {
  u128 begin;
  uint64_t start;  // offset of the segment's first index in the launch
  int32_t genome[kMaxGenes];
};

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
  SweepRow* rows;               // null unless --keep all; one per live index
};

__device__ bool is_candidate(const SweepPoint& pt, const DevPrune& pr) {
  for (int j = 0; j < c_k.nobj; ++j)
    if (!pr.full[j] || better_in(pt, pr.kth[j], j)) return true;
  if (!pr.want_front) return false;
  for (int32_t i = 0; i < pr.front_n; ++i) {
    const SweepPoint& f = pr.front[i];
    if (f.obj[0] > pt.obj[0]) break;  // front sorted by obj[0]: no later point dominates
    if (dominates(f, pt, c_k.nobj)) return false;
  }
  return true;
}

// kConv = Physical leaves the ASTRA-sim flow shop out of the kernel (kernels/collective.hpp).
// No gene sets the collective convention, so every point has the base configuration's.
template <Conventions kConv>
__global__ void COSMIC_SWEEP_BOUNDS sweep_kernel(const DevSegment* segs, int32_t nsegs, uint64_t total,
                                                 __grid_constant__ const DevPrune pr,
                                                 __grid_constant__ const DevOut out) {
  using ReasonHist = cub::BlockHistogram<int, kBlock, 1, kNumReasons + 1>;
  using ObjHist = cub::BlockHistogram<int, kBlock, 1, kHistBins + 1>;
  __shared__ union {
    typename ReasonHist::TempStorage reason;
    typename ObjHist::TempStorage obj;
  } temp;
  __shared__ unsigned int reason_bins[kNumReasons + 1];
  __shared__ unsigned int obj_bins[kHistBins + 1];

  const uint64_t i = uint64_t(blockIdx.x) * kBlock + threadIdx.x;
  int reason_sample[1] = {kNumReasons};  // the extra bin: not evaluated
  int bins[kMaxSweepObjectives];
  for (int j = 0; j < kMaxSweepObjectives; ++j) bins[j] = kHistBins;  // the extra bin: not evaluated
  if (i < total) {
    int32_t lo = 0, hi = nsegs - 1;  // last segment with start <= i
    while (lo < hi) {
      const int32_t mid = (lo + hi + 1) / 2;
      if (segs[mid].start <= i) lo = mid;
      else hi = mid - 1;
    }
    const DevSegment& seg = segs[lo];
    int32_t genome[kMaxGenes];
    for (int32_t g = 0; g < c_view.ngenes; ++g) genome[g] = seg.genome[g];
    uint32_t step = uint32_t(i - seg.start);
    const u128 index = seg.begin + step;
    for (int32_t g = 0; g < c_view.ngenes && step; ++g) {
      const uint32_t card = uint32_t(c_view.gene[g].card);
      const uint32_t v = uint32_t(genome[g]) + step % card;
      step = step / card + v / card;
      genome[g] = int32_t(v % card);
    }
    Config c = c_view.base;  // decode(c_view, genome), written in place (kernels/space.hpp)
    apply_genome(c_view, genome, c);
    double violation = 0;
    SweepRow row;
    row.index = index;
    row.reason = -1;
    Result r;
    SweepPoint pt;
    pt.index = index;
    if (score_point<kConv>(c_view, c, c_k.obj, c_k.nobj, violation, r, pt.obj)) {
      reason_sample[0] = int(r.reason);
      if (r.reason == Reason::Ok) {
        for (int j = 0; j < c_k.nobj; ++j) bins[j] = hist_bin(c_k, pt.obj[j]);
        if (is_candidate(pt, pr)) {
          const unsigned int at = atomicAdd(out.ncand, 1u);
          if (at < kCandCap) out.cand[at] = pt;
        }
      }
      if (out.rows) {
        row.set(r, pt.obj, c_k.nobj);
      }
    }
    if (out.rows) out.rows[i] = row;
  }
  // Block-level histograms (CUB), then one global atomic per non-empty bin.
  ReasonHist(temp.reason).Histogram(reason_sample, reason_bins);
  __syncthreads();
  for (int b = threadIdx.x; b < kNumReasons; b += kBlock)
    if (reason_bins[b]) atomicAdd(&out.reasons[b], (unsigned long long)reason_bins[b]);
  for (int j = 0; j < c_k.nobj; ++j) {
    __syncthreads();
    int sample[1] = {bins[j]};
    ObjHist(temp.obj).Histogram(sample, obj_bins);
    __syncthreads();
    for (int b = threadIdx.x; b < kHistBins; b += kBlock)
      if (obj_bins[b]) atomicAdd(&out.hist[j * kHistBins + b], (unsigned long long)obj_bins[b]);
  }
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
  explicit CudaSweep(const SweepProblem& p) : p_(p) {
    const CudaDevice dev = cuda_device();
    if (!dev.available) throw std::runtime_error(dev.why);
    device_ = dev.name;
    check(cudaMemcpyToSymbol(c_view, p.view, sizeof(SpaceView)), "copy SpaceView to constant memory");
    check(cudaMemcpyToSymbol(c_k, &p.k, sizeof(SweepConst)), "copy sweep constants");
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
    std::vector<DevSegment> hs(segs.size());
    uint64_t start = 0;
    for (size_t i = 0; i < segs.size(); ++i) {
      hs[i].begin = segs[i].begin;
      hs[i].start = start;
      unrank(*p_.view, segs[i].begin, hs[i].genome);
      start += segs[i].count;
    }
    if (hs.size() > segs_cap_) {
      cudaFree(d_segs_);
      segs_cap_ = hs.size() * 2;
      d_segs_ = device_alloc<DevSegment>(segs_cap_, "cudaMalloc(segments)");
    }
    check(cudaMemcpy(d_segs_, hs.data(), hs.size() * sizeof(DevSegment), cudaMemcpyHostToDevice), "copy segments");
    check(cudaMemset(d_reasons_, 0, kNumReasons * sizeof(unsigned long long)), "memset");
    check(cudaMemset(d_hist_, 0, size_t(kMaxSweepObjectives) * kHistBins * sizeof(unsigned long long)), "memset");
    check(cudaMemset(d_ncand_, 0, sizeof(unsigned int)), "memset");
    const DevOut o{d_reasons_, d_hist_, d_cand_, d_ncand_, p_.keep_all ? d_rows_ : nullptr};
    const unsigned grid = unsigned((total + kBlock - 1) / kBlock);
    if (p_.view->base.net.convention == Convention::Physical)
      sweep_kernel<Conventions::Physical><<<grid, kBlock>>>(d_segs_, int32_t(hs.size()), total, pr, o);
    else
      sweep_kernel<Conventions::Any><<<grid, kBlock>>>(d_segs_, int32_t(hs.size()), total, pr, o);
    check(cudaGetLastError(), "sweep_kernel launch");
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
  std::string device_;
  unsigned long long* d_reasons_ = nullptr;
  unsigned long long* d_hist_ = nullptr;
  SweepPoint* d_cand_ = nullptr;
  unsigned int* d_ncand_ = nullptr;
  SweepRow* d_rows_ = nullptr;
  DevSegment* d_segs_ = nullptr;
  size_t segs_cap_ = 0;
  SweepPoint* d_front_ = nullptr;
  size_t front_cap_ = 0;
};

}  // namespace

std::unique_ptr<SweepBackend> make_cuda_sweep_backend(const SweepProblem& p) { return std::make_unique<CudaSweep>(p); }

}  // namespace cosmic
