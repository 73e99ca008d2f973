// Exhaustive sweeps: the reductions of the CPU and CUDA backends against brute-force scalar
// evaluate() calls, independence from thread count and batch split, constraint skipping, and
// agreement with psa::feasible_count. The CUDA cases skip (with the reason) without a GPU.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "host/backend.hpp"
#include "host/sweep.hpp"
#include "space_fixtures.hpp"

namespace cosmic {
namespace {

// Reductions computed the slow way: every index, scalar decode / check / evaluate.
SweepState brute_force(const psa::DesignSpace& ds, u128 begin, u128 end, int32_t top_k) {
  const SpaceView& s = *ds.view;
  const SweepConst k = make_sweep_const(s, ds.objectives);
  SweepState st;
  st.init(k.nobj, top_k, true);
  std::vector<SweepPoint> feasible;
  int32_t genome[kMaxGenes];
  for (u128 i = begin; i < end; ++i) {
    unrank(s, i, genome);
    const Config c = decode(s, genome);
    double violation = 0;
    if (!check_constraints(s, c, violation)) continue;
    const Result r = evaluate(c);
    st.reasons[int(r.reason)]++;
    if (r.reason != Reason::Ok) continue;
    SweepPoint p;
    p.index = i;
    for (int j = 0; j < k.nobj; ++j) {
      p.obj[j] = objective_value(k.obj[j], c, r);
      st.hist[size_t(j) * kHistBins + size_t(hist_bin(k, p.obj[j]))]++;
    }
    feasible.push_back(p);
  }
  st.swept = end - begin;
  for (int j = 0; j < k.nobj; ++j) {
    std::vector<SweepPoint> v = feasible;
    std::sort(v.begin(), v.end(), [j](const SweepPoint& a, const SweepPoint& b) { return better_in(a, b, j); });
    v.resize(std::min(v.size(), size_t(top_k)));
    st.top[j] = v;
  }
  // Front of two objectives by a sort: in (obj0, obj1, index) order a point is on the front
  // when its obj1 is below every earlier one's.
  if (k.nobj == 2) {
    std::sort(feasible.begin(), feasible.end(), [](const SweepPoint& a, const SweepPoint& b) {
      return a.obj[0] != b.obj[0] ? a.obj[0] < b.obj[0] : (a.obj[1] != b.obj[1] ? a.obj[1] < b.obj[1] : a.index < b.index);
    });
    double best1 = INFINITY;
    for (const SweepPoint& p : feasible)
      if (p.obj[1] < best1) {
        st.pareto.push_back(p);
        best1 = p.obj[1];
      }
  }
  std::sort(st.pareto.begin(), st.pareto.end(), [](const SweepPoint& a, const SweepPoint& b) { return better_in(a, b, 0); });
  return st;
}

void expect_same_points(const std::vector<SweepPoint>& a, const std::vector<SweepPoint>& b, int nobj, double rel,
                        const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    for (int j = 0; j < nobj; ++j) EXPECT_NEAR(a[i].obj[j], b[i].obj[j], rel * std::abs(b[i].obj[j])) << what << " " << i;
    if (rel == 0) EXPECT_TRUE(a[i].index == b[i].index) << what << " " << i;
  }
}

void expect_same_state(const SweepState& a, const SweepState& b, double rel = 0) {
  EXPECT_TRUE(a.swept == b.swept);
  for (int r = 0; r < kNumReasons; ++r) EXPECT_EQ(a.reasons[r], b.reasons[r]) << "reason " << r;
  EXPECT_EQ(a.hist, b.hist);
  for (int j = 0; j < a.nobj; ++j) expect_same_points(a.top[j], b.top[j], a.nobj, rel, "top");
  expect_same_points(a.pareto, b.pareto, a.nobj, rel, "pareto");
}

SweepState cpu_sweep(const psa::DesignSpace& ds, u128 begin, u128 end, int32_t top_k) {
  SweepProblem p;
  p.view = ds.view.get();
  p.k = make_sweep_const(*ds.view, ds.objectives);
  p.top_k = top_k;
  p.want_front = true;
  auto backend = make_cpu_sweep_backend(p);
  return sweep_range(*ds.view, ds.objectives, *backend, begin, end, top_k, true);
}

TEST(Sweep, ConstraintSkipsFollowTheGenesEachConstraintReads) {
  const psa::DesignSpace ds = test::system1_fullstack();
  const SweepConst k = make_sweep_const(*ds.view, ds.objectives);
  EXPECT_EQ(k.low_gene[0], 15);  // NPUs product: the first network.npus gene
  EXPECT_EQ(k.low_gene[1], 0);   // DP x CP x PP <= NPUs: workload.dp
  EXPECT_EQ(k.low_gene[2], 11);  // topology of dimension 0
  // Per-constraint checks agree with check_constraints() on random genomes.
  std::mt19937_64 rng(3);
  const u128 n = space_size(*ds.view);
  int32_t genome[kMaxGenes];
  for (int t = 0; t < 20000; ++t) {
    const u128 i = ((u128(rng()) << 64) | rng()) % n;
    unrank(*ds.view, i, genome);
    const Config c = decode(*ds.view, genome);
    double v = 0;
    EXPECT_EQ(check_constraints(*ds.view, c, v), violated_low_gene(*ds.view, k, c) < 0);
  }
}

TEST(Sweep, HistogramBinsAreLogSpacedAndExact) {
  const psa::DesignSpace ds = test::small_system1();
  const SweepConst k = make_sweep_const(*ds.view, ds.objectives);
  EXPECT_EQ(hist_bin(k, 0.0), 0);
  EXPECT_EQ(hist_bin(k, -1.0), 0);
  EXPECT_EQ(hist_bin(k, 1e30), kHistBins - 1);
  for (int i = 0; i < kHistEdges; ++i) {
    EXPECT_EQ(hist_bin(k, k.hist_edge[i]), i + 1) << i;
    EXPECT_EQ(hist_bin(k, std::nextafter(k.hist_edge[i], 0.0)), i) << i;
  }
}

TEST(Sweep, CpuTopAndFrontEqualBruteForceOn80kPoints) {
  const psa::DesignSpace ds = test::small_system1({Objective::Latency, Objective::Memory});
  const u128 n = space_size(*ds.view);
  ASSERT_TRUE(n == 80640);
  const SweepState want = brute_force(ds, 0, n, 8);  // latency vs memory
  ASSERT_GT(want.feasible(), 0u);
  ASSERT_GE(want.pareto.size(), 2u);
  expect_same_state(cpu_sweep(ds, 0, n, 8), want);
}

TEST(Sweep, ResultsDoNotDependOnThreadsOrSplits) {
  const psa::DesignSpace ds = test::small_system1({Objective::RuntimeXBw, Objective::Memory, Objective::Latency});
  const u128 n = space_size(*ds.view);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const SweepState one = cpu_sweep(ds, 0, n, 5);
  omp_set_num_threads(3);
  const SweepState three = cpu_sweep(ds, 0, n, 5);
  omp_set_num_threads(saved);
  expect_same_state(three, one);
  // Two shards merged give the whole.
  SweepState a = cpu_sweep(ds, 0, 30001, 5);
  a.merge(cpu_sweep(ds, 30001, n, 5));
  expect_same_state(a, one);
  // The 3-objective front against a naive O(n^2) one.
  SweepState want = brute_force(ds, 0, n, 5);
  std::vector<SweepPoint> all;
  for (u128 i = 0; i < n; ++i) {
    int32_t genome[kMaxGenes];
    unrank(*ds.view, i, genome);
    const Config c = decode(*ds.view, genome);
    double v = 0;
    if (!check_constraints(*ds.view, c, v)) continue;
    const Result r = evaluate(c);
    if (r.reason != Reason::Ok) continue;
    SweepPoint p;
    p.index = i;
    for (int j = 0; j < 3; ++j) p.obj[j] = objective_value(ds.objectives[size_t(j)], c, r);
    all.push_back(p);
  }
  std::vector<SweepPoint> front;
  for (const SweepPoint& p : all) {
    bool dominated = false;
    for (const SweepPoint& q : all) dominated = dominated || (q.index != p.index && dominates(q, p, 3));
    if (!dominated) front.push_back(p);
  }
  std::sort(front.begin(), front.end(), [](const SweepPoint& a, const SweepPoint& b) { return better_in(a, b, 0); });
  expect_same_points(one.pareto, front, 3, 0, "pareto, 3 objectives");
}

TEST(Sweep, SkippingMatchesBruteForceOnAFullStackSlice) {
  const psa::DesignSpace ds = test::system1_fullstack();
  // A slice that starts mid-run and crosses live and dead regions of the top genes.
  int32_t g[kMaxGenes] = {};
  g[15] = 0, g[16] = 1, g[17] = 0, g[18] = 1;  // NPUs 4 x 8 x 4 x 8 = 1024; the run before is dead
  const u128 begin = rank(*ds.view, g) - 1234567;
  const u128 end = begin + 3000000;
  const SweepState want = brute_force(ds, begin, end, 4);
  EXPECT_GT(want.evaluated(), 0u);
  expect_same_state(cpu_sweep(ds, begin, end, 4), want);
}

TEST(Sweep, EvaluatedCountEqualsFeasibleCountOfTheSpace) {
  const psa::DesignSpace ds = test::small_system1();
  const SweepState st = cpu_sweep(ds, 0, space_size(*ds.view), 3);
  EXPECT_TRUE(u128(st.evaluated()) == psa::feasible_count(ds))
      << st.evaluated() << " vs " << psa::to_string_u128(psa::feasible_count(ds));
}

TEST(Sweep, CudaMatchesCpu) {
  const CudaDevice dev = cuda_device();
  if (!dev.available) GTEST_SKIP() << "CUDA sweep not tested: " << dev.why;
  for (int which = 0; which < 2; ++which) {
    const psa::DesignSpace ds = which == 0 ? test::small_system1() : test::system1_fullstack();
    u128 begin = 0, end = space_size(*ds.view);
    if (which == 1) {
      int32_t g[kMaxGenes] = {};
      g[15] = 0, g[16] = 1, g[17] = 0, g[18] = 1;  // NPUs 4 x 8 x 4 x 8 = 1024; the run before is dead
      begin = rank(*ds.view, g) - 20000000;
      end = begin + 40000000;
    }
    SweepProblem p;
    p.view = ds.view.get();
    p.k = make_sweep_const(*ds.view, ds.objectives);
    p.top_k = 16;
    p.want_front = true;
    auto cpu = make_cpu_sweep_backend(p);
    auto gpu = make_cuda_sweep_backend(p);
    const SweepState a = sweep_range(*ds.view, ds.objectives, *cpu, begin, end, 16, true);
    const SweepState b = sweep_range(*ds.view, ds.objectives, *gpu, begin, end, 16, true);
    EXPECT_GT(a.feasible(), 0u);
    // Both evaluate in double; FMA contraction on the GPU may change the last bits.
    expect_same_state(b, a, 1e-9);
  }
}

}  // namespace
}  // namespace cosmic
