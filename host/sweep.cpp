// Device-independent sweep core: constants for the kernels (which genes each constraint
// reads), planning of live segments, and the exact host-side merge of reductions.
#include "host/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cosmic {

void BatchOutput::reset(int nobj) {
  for (auto& r : reasons) r = 0;
  hist.assign(size_t(nobj) * kHistBins, 0);
  candidates.clear();
  rows.clear();
}

std::vector<LiveSegment> live_segments(const SpaceView& s, const std::vector<Segment>& segs) {
  std::vector<LiveSegment> live(segs.size());
  uint64_t start = 0;
  for (size_t i = 0; i < segs.size(); ++i) {
    live[i].begin = segs[i].begin;
    live[i].start = start;
    unrank(s, segs[i].begin, live[i].genome);
    start += segs[i].count;
  }
  return live;
}

SweepConst make_sweep_const(const SpaceView& s, const std::vector<Objective>& objectives) {
  if (objectives.empty() || objectives.size() > size_t(kMaxSweepObjectives))
    throw std::runtime_error("a sweep needs 1 to " + std::to_string(kMaxSweepObjectives) + " objectives");
  SweepConst k;
  k.nobj = int32_t(objectives.size());
  for (size_t j = 0; j < objectives.size(); ++j) k.obj[j] = objectives[j];
  // The lowest gene each constraint reads, by the same rules as feasible counting.
  for (int32_t c = 0; c < s.nconstraints; ++c) {
    const std::vector<int32_t> genes = psa::constraint_genes(s, c);
    k.low_gene[c] = genes.empty() ? s.ngenes : genes.front();
  }
  k.plain_genes = psa::plain_genes(s);
  for (int i = 0; i < kHistEdges; ++i) k.hist_edge[i] = std::pow(10.0, double(i - 120) / 10.0);
  return k;
}

int32_t coarse_gene_for(const SpaceView& s, u128 min_stride) {
  u128 stride = 1;
  for (int32_t g = 0; g < s.ngenes; ++g) {
    if (stride >= min_stride) return g;
    stride *= u128(s.gene[g].card);
  }
  return s.ngenes;
}

uint64_t sweep_phase_cycle(const SpaceView& s) {
  uint64_t cycle = 1;
  for (int32_t g = 0; g < s.ngenes && int(s.gene[g].param) < int(Param::Policy); ++g) {
    cycle *= uint64_t(s.gene[g].card);
    if (cycle > (uint64_t(1) << 20)) return 1;
  }
  return cycle;
}

std::vector<Segment> plan_segments(const SpaceView& s, const SweepConst& k, int32_t coarse_gene, u128& cursor,
                                   u128 end, uint64_t live_target) {
  std::vector<Segment> segs;
  std::vector<u128> stride(size_t(s.ngenes) + 1, 1);
  for (int32_t g = 0; g < s.ngenes; ++g) stride[g + 1] = stride[g] * u128(s.gene[g].card);
  // Constraints the planner checks: those reading only genes >= coarse_gene. Their outcome is
  // fixed while genes >= unit_gene (the lowest they read) stay the same.
  bool coarse = false;
  int32_t unit_gene = s.ngenes;
  for (int32_t c = 0; c < s.nconstraints; ++c)
    if (k.low_gene[c] >= coarse_gene) {
      coarse = true;
      unit_gene = std::min(unit_gene, k.low_gene[c]);
    }
  uint64_t live = 0;
  int32_t genome[kMaxGenes];
  while (cursor < end && live < live_target) {
    u128 unit_end = end;
    if (coarse) {
      unrank(s, cursor, genome);  // genes below coarse_gene do not matter to the checks here
      const Config c = decode(s, genome);
      int32_t m = -1;
      for (int32_t i = 0; i < s.nconstraints; ++i)
        if (k.low_gene[i] >= coarse_gene && k.low_gene[i] > m && !constraint_holds(s, c, i)) m = k.low_gene[i];
      if (m >= 0) {
        const u128 next = (cursor / stride[size_t(m)] + 1) * stride[size_t(m)];
        cursor = next < end ? next : end;
        continue;
      }
      const u128 g = stride[size_t(unit_gene)];
      unit_end = (cursor / g + 1) * g;
      if (unit_end > end) unit_end = end;
    }
    u128 n = unit_end - cursor;
    if (n > u128(live_target - live)) n = u128(live_target - live);
    if (!segs.empty() && segs.back().begin + segs.back().count == cursor)
      segs.back().count += uint64_t(n);
    else
      segs.push_back(Segment{cursor, uint64_t(n)});
    live += uint64_t(n);
    cursor += n;
  }
  return segs;
}

void SweepState::init(int32_t nobj_, int32_t top_k_, bool want_front_) {
  nobj = nobj_;
  top_k = top_k_;
  want_front = want_front_ && nobj_ >= 2;
  swept = 0;
  for (auto& r : reasons) r = 0;
  hist.assign(size_t(nobj) * kHistBins, 0);
  for (auto& t : top) t.clear();
  pareto.clear();
  pareto_truncated = false;
}

uint64_t SweepState::evaluated() const {
  uint64_t n = 0;
  for (uint64_t r : reasons) n += r;
  return n;
}

void SweepState::add_points(const std::vector<SweepPoint>& pts) {
  for (int j = 0; j < nobj; ++j) {
    std::vector<SweepPoint>& t = top[j];  // sorted: t.back() is the worst kept
    const bool full = t.size() >= size_t(top_k);
    const SweepPoint worst = full ? t.back() : SweepPoint{};
    for (const SweepPoint& p : pts)
      if (!full || better_in(p, worst, j, nobj)) t.push_back(p);
    std::sort(t.begin(), t.end(), [this, j](const SweepPoint& a, const SweepPoint& b) { return better_in(a, b, j, nobj); });
    t.erase(std::unique(t.begin(), t.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.index == b.index; }),
            t.end());
    if (t.size() > size_t(top_k)) t.resize(size_t(top_k));
  }
  if (!want_front) return;
  // Insert candidates best-first by obj[0], so few of them evict earlier ones.
  std::vector<SweepPoint> cand = pts;
  std::sort(cand.begin(), cand.end(), [this](const SweepPoint& a, const SweepPoint& b) { return better_in(a, b, 0, nobj); });
  for (const SweepPoint& p : cand) {
    bool dominated = false;
    for (const SweepPoint& f : pareto) {
      if (f.obj[0] > p.obj[0]) break;
      if (f.index == p.index || dominates(f, p, nobj)) {
        dominated = true;
        break;
      }
    }
    if (dominated) continue;
    pareto.erase(std::remove_if(pareto.begin(), pareto.end(), [&](const SweepPoint& f) { return dominates(p, f, nobj); }),
                 pareto.end());
    pareto.insert(std::upper_bound(pareto.begin(), pareto.end(), p,
                                   [this](const SweepPoint& a, const SweepPoint& b) { return better_in(a, b, 0, nobj); }),
                  p);
  }
  if (pareto.size() > kMaxParetoPoints) {
    pareto.resize(kMaxParetoPoints);
    pareto_truncated = true;
  }
}

void SweepState::add(const BatchOutput& b, u128 swept_) {
  swept += swept_;
  for (int r = 0; r < kNumReasons; ++r) reasons[r] += b.reasons[r];
  for (size_t i = 0; i < hist.size() && i < b.hist.size(); ++i) hist[i] += b.hist[i];
  add_points(b.candidates);
}

void SweepState::merge(const SweepState& o) {
  swept += o.swept;
  for (int r = 0; r < kNumReasons; ++r) reasons[r] += o.reasons[r];
  for (size_t i = 0; i < hist.size() && i < o.hist.size(); ++i) hist[i] += o.hist[i];
  std::vector<SweepPoint> pts = o.pareto;
  for (int j = 0; j < o.nobj; ++j) pts.insert(pts.end(), o.top[j].begin(), o.top[j].end());
  add_points(pts);
  pareto_truncated = pareto_truncated || o.pareto_truncated;
}

Pruning SweepState::pruning() const {
  Pruning p;
  for (int j = 0; j < nobj; ++j) {
    p.full[j] = top[j].size() >= size_t(top_k);
    if (p.full[j]) p.kth[j] = top[j].back();
  }
  p.want_front = want_front;
  if (want_front) p.front = pareto;
  return p;
}

SweepState sweep_range(const SpaceView& s, const std::vector<Objective>& objectives, SweepBackend& backend,
                       u128 begin, u128 end, int32_t top_k, bool want_front) {
  const SweepConst k = make_sweep_const(s, objectives);
  SweepState st;
  st.init(k.nobj, top_k, want_front);
  const int32_t coarse = coarse_gene_for(s, 4096);
  u128 cursor = begin;
  uint64_t target = backend.min_batch();
  BatchOutput out;
  while (cursor < end) {
    const u128 from = cursor;
    const std::vector<Segment> segs = plan_segments(s, k, coarse, cursor, end, target);
    backend.run(segs, st.pruning(), out);
    st.add(out, cursor - from);
    target = std::min(backend.max_batch(), target * 2);
  }
  return st;
}

}  // namespace cosmic
