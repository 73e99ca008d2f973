// CPU sweep backend: OpenMP threads, static split of the batch's live indices. Each thread
// walks its part with sweep_walk_live (kernels/sweep.hpp, as each CUDA thread does: the genome
// stepped in mixed radix, no unrank per point, runs of indices that violate a constraint
// skipped) and keeps partial reductions: reason counts, histograms, its own top-K and Pareto
// front. Partials are merged in thread order and the host merge is exact, so results do not
// depend on the thread count.
#include <omp.h>

#include <algorithm>

#include "host/text.hpp"
#include "host/sweep.hpp"

namespace cosmic {

namespace {

// A thread's partial reductions.
struct Partial {
  BatchOutput out;
  std::vector<SweepPoint> top[kMaxSweepObjectives];  // sorted best first, <= K
  std::vector<SweepPoint> front;                      // local non-dominated points
};

class CpuSweep final : public SweepBackend {
 public:
  explicit CpuSweep(const SweepProblem& p) : p_(p) {}
  std::string name() const override { return "cpu"; }
  std::string device() const override {
    return openmp_threads(omp_get_max_threads());
  }
  uint64_t min_batch() const override { return uint64_t(1) << 14; }
  uint64_t max_batch() const override { return uint64_t(1) << 40; }

  void run(const std::vector<Segment>& segs, const Pruning& prune, BatchOutput& out) override {
    const int nobj = p_.k.nobj;
    out.reset(nobj);
    const std::vector<LiveSegment> live = live_segments(*p_.view, segs);
    uint64_t total = 0;
    for (const Segment& seg : segs) total += seg.count;
    const int nthreads = omp_get_max_threads();
    std::vector<Partial> part(static_cast<size_t>(nthreads));
#pragma omp parallel num_threads(nthreads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      // Static split of the concatenated live indices: thread t takes [lo, hi).
      const uint64_t lo = uint64_t((unsigned __int128)total * unsigned(t) / unsigned(nt));
      const uint64_t hi = uint64_t((unsigned __int128)total * unsigned(t + 1) / unsigned(nt));
      Partial& me = part[size_t(t)];
      me.out.reset(nobj);
      // sweep_walk_live (kernels/sweep.hpp) skips runs that violate a constraint.
      if (lo < hi)
        sweep_walk_live(*p_.view, p_.k, live.data(), int32_t(live.size()), lo, hi,
                        [&](const Config& c, u128 index, uint64_t) { score(c, index, prune, me); });
    }
    // Merge partials in thread order.
    for (Partial& me : part) {
      for (int r = 0; r < kNumReasons; ++r) out.reasons[r] += me.out.reasons[r];
      for (size_t i = 0; i < out.hist.size(); ++i) out.hist[i] += me.out.hist[i];
      for (int j = 0; j < nobj; ++j) out.candidates.insert(out.candidates.end(), me.top[j].begin(), me.top[j].end());
      out.candidates.insert(out.candidates.end(), me.front.begin(), me.front.end());
      if (p_.keep_all) out.rows.insert(out.rows.end(), me.out.rows.begin(), me.out.rows.end());
    }
  }

 private:
  void score(const Config& c, u128 index, const Pruning& prune, Partial& me) const {
    const SweepConst& k = p_.k;
    SweepPoint pt;
    pt.index = index;
    // sweep_walk has checked the constraints. Without --keep all nothing of an out-of-memory
    // point is kept but its reason: its timing is skipped.
    const Result r = score_config(*p_.view, c, k.obj, k.nobj, pt.obj, !p_.keep_all);
    me.out.reasons[int(r.reason)]++;
    if (r.reason == Reason::Ok) {
      for (int j = 0; j < k.nobj; ++j) me.out.hist[size_t(j) * kHistBins + size_t(hist_bin(k, pt.obj[j]))]++;
      for (int j = 0; j < k.nobj; ++j) offer_top(pt, j, prune, me.top[j]);
      if (p_.want_front) offer_front(pt, prune, me.front);
    }
    if (p_.keep_all) {
      SweepRow row;
      row.index = index;
      row.set(r, pt.obj, k.nobj);
      me.out.rows.push_back(row);
    }
  }

  void offer_top(const SweepPoint& pt, int j, const Pruning& prune, std::vector<SweepPoint>& top) const {
    const size_t K = size_t(p_.top_k);
    if (prune.full[j] && !better_in(pt, prune.kth[j], j, p_.k.nobj)) return;
    if (top.size() == K && !better_in(pt, top.back(), j, p_.k.nobj)) return;
    auto at = std::upper_bound(top.begin(), top.end(), pt,
                               [this, j](const SweepPoint& a, const SweepPoint& b) { return better_in(a, b, j, p_.k.nobj); });
    top.insert(at, pt);
    if (top.size() > K) top.pop_back();
  }

  void offer_front(const SweepPoint& pt, const Pruning& prune, std::vector<SweepPoint>& front) const {
    const int n = p_.k.nobj;
    // Only points with obj[0] <= pt.obj[0] can dominate pt; the host front is sorted by obj[0].
    for (const SweepPoint& f : prune.front) {
      if (f.obj[0] > pt.obj[0]) break;
      if (dominates(f, pt, n)) return;
    }
    for (const SweepPoint& f : front)
      if (dominates(f, pt, n)) return;
    front.erase(std::remove_if(front.begin(), front.end(), [&](const SweepPoint& f) { return dominates(pt, f, n); }),
                front.end());
    front.push_back(pt);
  }

  SweepProblem p_;
};

}  // namespace

std::unique_ptr<SweepBackend> make_cpu_sweep_backend(const SweepProblem& p) { return std::make_unique<CpuSweep>(p); }

}  // namespace cosmic
