// CUDA sweep backend: owns the device's buffers, splits a batch's live indices into threads'
// parts (up to kMaxPerThread each; the lanes of a warp take runs at the same place of
// consecutive cycles of the fastest genes, sweep_part_of_thread), launches the kernel
// (kernels/sweep_kernel.cuh: the CPU's walk and scoring, per-block counts, candidates) and
// merges what it returns: reason counts, histograms, the candidates for top-K and the front
// (exactly, on the host), and with --keep all the rows.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "host/backend.hpp"
#include "host/cuda_buffer.hpp"
#include "host/sweep.hpp"
#include "kernels/sweep_kernel.cuh"

namespace cosmic {

namespace {

constexpr uint64_t kMaxLive = uint64_t(1) << 31;  // live indices per launch
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

class CudaSweep final : public SweepBackend {
 public:
  explicit CudaSweep(const SweepProblem& p) : p_(p), phase_cycle_(sweep_phase_cycle(*p.view)) {
    const CudaDevice dev = cuda_device();
    if (!dev.available) throw std::runtime_error(dev.why);
    device_ = dev.name;
    reasons_ = {kNumReasons, "cudaMalloc(reasons)"};
    hist_ = {size_t(kMaxSweepObjectives) * kHistBins, "cudaMalloc(hist)"};
    cand_ = {kCandCap, "cudaMalloc(candidates)"};
    ncand_ = {1, "cudaMalloc(count)"};
    if (p.keep_all) rows_ = {kRowsCap, "cudaMalloc(rows)"};
  }
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }
  uint64_t min_batch() const override { return uint64_t(1) << 16; }
  uint64_t max_batch() const override { return p_.keep_all ? kRowsCap : kMaxLive; }

  void run(const std::vector<Segment>& segs, const Pruning& prune, BatchOutput& out) override {
    out.reset(p_.k.nobj);
    // Constant memory is per process, not per sweep: it is loaded for each batch (about 23 KB), so
    // that two sweeps in one process cannot score with each other's space.
    cuda_check(cudaMemcpyToSymbol(c_view, p_.view, sizeof(SpaceView)), "copy SpaceView to constant memory");
    cuda_check(cudaMemcpyToSymbol(c_k, &p_.k, sizeof(SweepConst)), "copy sweep constants");
    // The front is uploaded once per batch.
    const size_t nf = prune.want_front ? prune.front.size() : 0;
    front_.reserve(nf, nf * 2, "cudaMalloc(front)");
    if (nf) cuda_check(cudaMemcpy(front_.get(), prune.front.data(), nf * sizeof(SweepPoint), cudaMemcpyHostToDevice), "copy front");
    DevPrune pr{};
    for (int j = 0; j < kMaxSweepObjectives; ++j) {
      pr.full[j] = prune.full[j] ? 1 : 0;
      pr.kth[j] = prune.kth[j];
    }
    pr.front = front_.get();
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
    segs_.reserve(hs.size(), hs.size() * 2, "cudaMalloc(segments)");
    cuda_check(cudaMemcpy(segs_.get(), hs.data(), hs.size() * sizeof(LiveSegment), cudaMemcpyHostToDevice), "copy segments");
    cuda_check(cudaMemset(reasons_.get(), 0, kNumReasons * sizeof(unsigned long long)), "memset");
    cuda_check(cudaMemset(hist_.get(), 0, size_t(kMaxSweepObjectives) * kHistBins * sizeof(unsigned long long)), "memset");
    cuda_check(cudaMemset(ncand_.get(), 0, sizeof(unsigned int)), "memset");
    // Rows of points the kernel does not score (constraints violated) keep reason -1 (all bits set).
    if (p_.keep_all) cuda_check(cudaMemset(rows_.get(), 0xFF, total * sizeof(SweepRow)), "memset rows");
    const DevOut o{reasons_.get(), hist_.get(), cand_.get(), ncand_.get(), p_.keep_all ? rows_.get() : nullptr};
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
          <<<grid, kBlock>>>(segs_.get(), nsegs, total, uint32_t(per_thread), windows, pr, o);
    else
      sweep_kernel<Conventions::Any><<<grid, kBlock>>>(segs_.get(), nsegs, total, uint32_t(per_thread), windows, pr, o);
    cuda_check(cudaGetLastError(), "sweep_kernel launch");
    cuda_check(cudaDeviceSynchronize(), "sweep_kernel");  // a fault is named here, not by the next copy
    unsigned int ncand = 0;
    cuda_check(cudaMemcpy(&ncand, ncand_.get(), sizeof ncand, cudaMemcpyDeviceToHost), "copy candidate count");
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
    cuda_check(cudaMemcpy(reasons, reasons_.get(), sizeof reasons, cudaMemcpyDeviceToHost), "copy reasons");
    for (int r = 0; r < kNumReasons; ++r) out.reasons[r] += reasons[r];
    std::vector<unsigned long long> hist(out.hist.size());
    cuda_check(cudaMemcpy(hist.data(), hist_.get(), hist.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "copy histogram");
    for (size_t i = 0; i < hist.size(); ++i) out.hist[i] += hist[i];
    const size_t n0 = out.candidates.size();
    out.candidates.resize(n0 + ncand);
    if (ncand)
      cuda_check(cudaMemcpy(out.candidates.data() + n0, cand_.get(), ncand * sizeof(SweepPoint), cudaMemcpyDeviceToHost),
            "copy candidates");
    if (p_.keep_all) {
      std::vector<SweepRow> rows(total);
      cuda_check(cudaMemcpy(rows.data(), rows_.get(), total * sizeof(SweepRow), cudaMemcpyDeviceToHost), "copy rows");
      for (const SweepRow& r : rows)
        if (r.reason >= 0) out.rows.push_back(r);
    }
  }

  SweepProblem p_;
  uint64_t phase_cycle_;  // sweep_phase_cycle(): lines up warps (sweep_part_of_thread)
  std::string device_;
  CudaBuffer<unsigned long long> reasons_, hist_;
  CudaBuffer<SweepPoint> cand_;
  CudaBuffer<unsigned int> ncand_;
  CudaBuffer<SweepRow> rows_;     // --keep all
  CudaBuffer<LiveSegment> segs_;  // a launch's segments, grown as needed
  CudaBuffer<SweepPoint> front_;  // the front the host kept, for the kernel's pruning
};

}  // namespace

std::unique_ptr<SweepBackend> make_cuda_sweep_backend(const SweepProblem& p) { return std::make_unique<CudaSweep>(p); }

}  // namespace cosmic
