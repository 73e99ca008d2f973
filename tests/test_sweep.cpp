// Exhaustive sweeps: the reductions of the CPU and CUDA backends against brute-force scalar
// evaluate() calls, independence from thread count and batch split, constraint skipping, and
// agreement with psa::feasible_count. The CUDA cases skip (with the reason) without a GPU.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "host/backend.hpp"
#include "host/sweep.hpp"
#include "space_fixtures.hpp"

namespace cosmic {
namespace {

// The documented order of /top/<objective j> (results-format.md), written out: by the objective,
// then the other objectives in order, then the index.
auto in_order(int j, int nobj) {
  const auto key = [j, nobj](const SweepPoint& p) {
    std::vector<double> k{p.obj[j]};
    for (int o = 0; o < nobj; ++o)
      if (o != j) k.push_back(p.obj[o]);
    return k;
  };
  return [key](const SweepPoint& a, const SweepPoint& b) { return key(a) != key(b) ? key(a) < key(b) : a.index < b.index; };
}

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
    Result r = evaluate(c);
    for (int32_t l = 0; l < s.nlimits && r.reason == Reason::Ok; ++l)  // a limit: an objective's upper bound
      if (objective_value(s.limit_obj[l], c, r) > s.limit_max[l]) r.reason = Reason::LimitExceeded;
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
    std::sort(v.begin(), v.end(), in_order(j, k.nobj));
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
  std::sort(st.pareto.begin(), st.pareto.end(), in_order(0, k.nobj));
  return st;
}

// The same points in the same order (indices exact), objective values equal within `rel`
// relative (0: bit for bit).
void expect_same_points(const std::vector<SweepPoint>& a, const std::vector<SweepPoint>& b, int nobj, double rel,
                        const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i].index == b[i].index) << what << " " << i;
    for (int j = 0; j < nobj; ++j) {
      if (rel == 0)
        EXPECT_EQ(a[i].obj[j], b[i].obj[j]) << what << " " << i;
      else
        EXPECT_NEAR(a[i].obj[j], b[i].obj[j], rel * std::abs(b[i].obj[j])) << what << " " << i;
    }
  }
}

void expect_same_state(const SweepState& a, const SweepState& b, double rel = 0) {
  EXPECT_TRUE(a.swept == b.swept);
  for (int r = 0; r < kNumReasons; ++r) EXPECT_EQ(a.reasons[r], b.reasons[r]) << "reason " << r;
  EXPECT_EQ(a.hist, b.hist);
  for (int j = 0; j < a.nobj; ++j) expect_same_points(a.top[j], b.top[j], a.nobj, rel, "top");
  expect_same_points(a.pareto, b.pareto, a.nobj, rel, "pareto");
}

// The walk decodes each point over the last one, setting only what changed where it can
// (reapply_genome): its configuration must be a fresh decode's, byte for byte.
void expect_fresh_decode(const SpaceView& s, const Config& c, u128 index) {
  int32_t genome[kMaxGenes];
  unrank(s, index, genome);
  const Config fresh = decode(s, genome);
  ASSERT_EQ(std::memcmp(&c, &fresh, sizeof(Config)), 0) << psa::to_string_u128(index);
}

// f(index, configuration, result) for every point of the space that meets the constraints,
// decoded and evaluated one by one, in index order.
template <class F>
void for_each_checked(const psa::DesignSpace& ds, F f) {
  int32_t g[kMaxGenes];
  for (u128 i = 0, n = space_size(*ds.view); i < n; ++i) {
    unrank(*ds.view, i, g);
    const Config c = decode(*ds.view, g);
    double violation = 0;
    if (!check_constraints(*ds.view, c, violation)) continue;
    f(i, c, evaluate(c));
  }
}

// f(configuration, result) for those of them that the model runs (Reason::Ok).
template <class F>
void for_each_runnable(const psa::DesignSpace& ds, F f) {
  for_each_checked(ds, [&](u128, const Config& c, const Result& r) {
    if (r.reason == Reason::Ok) f(c, r);
  });
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
  // The edge table against the documented one (kernels/sweep.hpp): 10 bins per decade over
  // [1e-12, 1e18], edge[i] = 10^(i/10 - 12); 1e-12 .. 1e18 is 30 decades, 301 edges.
  ASSERT_EQ(kHistEdges, 301);
  EXPECT_DOUBLE_EQ(k.hist_edge[0], 1e-12);
  EXPECT_DOUBLE_EQ(k.hist_edge[kHistEdges - 1], 1e18);
  EXPECT_EQ(k.hist_edge[120], 1.0);   // 10^(120/10 - 12) = 10^0, exact
  EXPECT_EQ(k.hist_edge[130], 10.0);  // 10^1, exact
  for (int i = 0; i < kHistEdges; ++i) {
    const double want = std::pow(10.0, i / 10.0 - 12.0);
    EXPECT_NEAR(k.hist_edge[i], want, 1e-14 * want) << i;
  }
  // Bin b holds [edge[b-1], edge[b]), so v > 0 goes to bin floor(10 (log10 v + 12)) + 1:
  EXPECT_EQ(hist_bin(k, 2.5), 124);      // 10^0.3 = 1.995 <= 2.5 < 10^0.4 = 2.512: edge[123] <= v < edge[124]
  EXPECT_EQ(hist_bin(k, 1.0), 121);      // edge[120] = 1 opens bin 121
  EXPECT_EQ(hist_bin(k, 0.99), 120);     // 10^-0.1 = 0.794 <= 0.99 < 1 = edge[120]
  EXPECT_EQ(hist_bin(k, 1234.5), 151);   // 10^3 <= 1234.5 < 10^3.1 = 1258.9: edge[150] <= v < edge[151]
  EXPECT_EQ(hist_bin(k, 1.5e-12), 2);    // 10^-11.9 = 1.259e-12 <= 1.5e-12 < 10^-11.8 = 1.585e-12: edge[1], edge[2]
  EXPECT_EQ(hist_bin(k, 5e-13), 0);      // below edge[0] = 1e-12: underflow
  EXPECT_EQ(hist_bin(k, 9.9e17), 300);   // 10^17.9 = 7.94e17 <= 9.9e17 < 1e18 = edge[300]: the last finite bin
  EXPECT_EQ(hist_bin(k, 1e18), 301);     // edge[300] and above: overflow, bin kHistBins - 1
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

// small_system1 (latency, cost) under two limits: latency at most 1.2 x the fastest point's (the
// fastest holds), memory (not an objective) at most 20 GB.
psa::DesignSpace limited_small_system1() {
  psa::DesignSpace ds = test::small_system1();
  const SweepState free = brute_force(ds, 0, space_size(*ds.view), 1);
  ds.view->nlimits = 2;
  ds.view->limit_obj[0] = Objective::Latency;
  ds.view->limit_max[0] = 1.2 * free.top[0][0].obj[0];
  ds.view->limit_obj[1] = Objective::Memory;
  ds.view->limit_max[1] = 2.0e10;
  return ds;
}

// Under limits, the points over one are LIMIT_EXCEEDED, neither in the lists nor in the
// histograms; a limit on the first objective holds exactly at it.
TEST(Sweep, LimitsTakePointsOutOfTheResults) {
  const psa::DesignSpace free_ds = test::small_system1();
  const u128 n = space_size(*free_ds.view);
  const SweepState free = brute_force(free_ds, 0, n, 8);
  const psa::DesignSpace ds = limited_small_system1();
  const SweepState want = brute_force(ds, 0, n, 8);
  ASSERT_GT(want.reasons[int(Reason::LimitExceeded)], 0u);
  EXPECT_EQ(want.feasible() + want.reasons[int(Reason::LimitExceeded)], free.feasible());
  ASSERT_GT(want.feasible(), 8u);
  EXPECT_EQ(want.top[0][0].index, free.top[0][0].index);  // the fastest is under 20 GB
  expect_same_state(cpu_sweep(ds, 0, n, 8), want);
  psa::DesignSpace at_limit = test::small_system1();
  at_limit.view->nlimits = 1;
  at_limit.view->limit_max[0] = free.top[0][0].obj[0];  // latency: the fastest points hold, no other
  const SweepState fastest = cpu_sweep(at_limit, 0, n, 8);
  ASSERT_GT(fastest.feasible(), 0u);
  EXPECT_EQ(fastest.top[0][0].index, free.top[0][0].index);
  for (const SweepPoint& p : fastest.top[0]) EXPECT_EQ(p.obj[0], free.top[0][0].obj[0]);
}

// The fewest NPUs whose iteration takes at most 1.5 x the fastest's: objective npus (4 x 8 x 4 x N
// on System 1, N the last dimension's size, a gene) under a latency limit. By hand: the NPU
// counts; from a brute force over the space: the smallest count of a feasible point within the
// limit, which the sweep's top list must give first.
TEST(Sweep, FewestNpusUnderALatencyLimit) {
  const std::string psa_path = ::testing::TempDir() + "npus.yaml";
  std::ofstream(psa_path) << "base: " << COSMIC_DATA_DIR << "/configs/cosmic-system1-baseline.yaml\n"
                          << "parameters:\n  workload: {dp: [1, 2, 4, 8, 16, 32], pp: [1, 2, 4]}\n"
                          << "  network: {npus.3: [1, 2, 4, 8]}\nderived: {tp: auto}\nobjectives: [npus, latency]\n";
  psa::DesignSpace ds = psa::load_psa(psa_path);
  ASSERT_EQ(ds.objectives[0], Objective::Npus);
  int32_t g[kMaxGenes] = {};
  g[2] = 3;  // npus.3 = 8: System 1's 1,024
  Result none;
  EXPECT_EQ(objective_value(Objective::Npus, decode(*ds.view, g), none), 1024.0);
  g[2] = 0;  // 4 x 8 x 4 x 1
  EXPECT_EQ(objective_value(Objective::Npus, decode(*ds.view, g), none), 128.0);
  const u128 n = space_size(*ds.view);
  const SweepState free = brute_force(ds, 0, n, 1);
  ASSERT_GT(free.feasible(), 0u);
  const double fastest = free.top[1][0].obj[1];
  ds.view->nlimits = 1;
  ds.view->limit_obj[0] = Objective::Latency;
  ds.view->limit_max[0] = 1.5 * fastest;
  double fewest = INFINITY, fewest_free = INFINITY;
  for_each_runnable(ds, [&](const Config& c, const Result& r) {
    fewest_free = std::min(fewest_free, double(total_npus(c.net)));
    if (r.time_s <= 1.5 * fastest) fewest = std::min(fewest, double(total_npus(c.net)));
  });
  const SweepState got = cpu_sweep(ds, 0, n, 4);
  ASSERT_GT(got.feasible(), 0u);
  EXPECT_EQ(got.top[0][0].obj[0], fewest);
  EXPECT_GT(fewest, fewest_free);  // the limit binds
}

// A cluster's cost (network plus NPUs at the base's price) and its NPU-seconds per token, in a
// space over the number of nodes: by hand at System 1's size, and the sweep's best of each equal
// to the formulas' minimum over every point the model can run. Without a price the space is
// refused, naming the file, line and key.
TEST(Sweep, ClusterCostAndNpuSecondsPerToken) {
  const std::string psa_path = ::testing::TempDir() + "cluster.yaml";
  std::ofstream(psa_path) << "base: " << COSMIC_DATA_DIR << "/configs/cosmic-system1-baseline.yaml\n"
                          << "parameters:\n  workload: {dp: [1, 2, 4, 8, 16, 32], pp: [1, 2, 4]}\n"
                          << "  network: {npus.3: [1, 2, 4, 8]}\nderived: {tp: auto}\n"
                          << "objectives: [cluster_cost, npu_s_per_token]\n";
  try {
    psa::load_psa(psa_path);
    FAIL() << "expected an error";
  } catch (const psa::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(psa_path + ":6:14: key 'objectives.0'", 0), 0u) << m;
    EXPECT_NE(m.find("missing: system.compute.price_usd of the base configuration (--set base.system.compute.price_usd=...)"),
              std::string::npos)
        << m;
  }
  try {  // a limit on it too
    psa::load_psa(psa_path, {"objectives=[latency]", "limits={cluster_cost: 5.0e7}"});
    FAIL() << "expected an error";
  } catch (const psa::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'limits.cluster_cost'"), std::string::npos) << e.what();
  }
  psa::DesignSpace ds = psa::load_psa(psa_path, {"base.system.compute.price_usd=25000"});
  int32_t g[kMaxGenes] = {};
  g[0] = 3, g[1] = 2, g[2] = 3;  // dp 8, pp 4, npus.3 = 8: the baseline (tp 4 x cp 8 derived: tp 4)
  const Config base = decode(*ds.view, g);
  const Result r = evaluate(base);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_EQ(objective_value(Objective::ClusterCost, base, r), 8775680.0 + 1024 * 25000.0);  // docs/model.md's network cost
  EXPECT_DOUBLE_EQ(objective_value(Objective::NpuSPerToken, base, r),
                   1024.0 / (2048.0 * 2048 / r.time_s));  // global batch 2048 of GPT3-175B's 2,048-token sequences
  const u128 n = space_size(*ds.view);
  double cheapest = INFINITY, leanest = INFINITY;
  for_each_runnable(ds, [&](const Config& c, const Result& e) {
    const double npus = double(c.net.dim[0].npus) * c.net.dim[1].npus * c.net.dim[2].npus * c.net.dim[3].npus;
    cheapest = std::min(cheapest, e.network_cost_usd + npus * 25000);
    leanest = std::min(leanest, npus / e.tokens_per_s);
  });
  const SweepState got = cpu_sweep(ds, 0, n, 4);
  ASSERT_GT(got.feasible(), 0u);
  EXPECT_EQ(got.top[0][0].obj[0], cheapest);
  EXPECT_EQ(got.top[1][0].obj[1], leanest);
}

// Energy and dollars per token (kernels/cost.hpp), by hand: 1,024 NPUs at 1,000 W in a facility
// of PUE 1.2 draw 1,228.8 kW; at 8,192 tokens/s that is 150 J a token. The cluster's $34,375,680
// over 4 years (126,230,400 s) is $0.272325 a second, $33.2428 per million tokens at that rate;
// 150 J at $0.10 a kWh (3.6 MJ) is $4.16667 per million: $37.4095 in all. A sweep over the
// space's layouts finds the least of each, as a brute force over the points computes them from
// the model's time; without the figures they need the space is refused, saying which is missing.
TEST(Sweep, EnergyAndDollarsPerToken) {
  Config c = psa::load_config(std::string(COSMIC_DATA_DIR) + "/configs/cosmic-system1-baseline.yaml").config;
  c.compute.power_W = 1000, c.op.pue = 1.2, c.op.usd_per_kWh = 0.1, c.op.lifetime_years = 4;
  EXPECT_DOUBLE_EQ(energy_per_token_J(c, 8192), 150.0);
  EXPECT_NEAR(usd_per_token(c, 34375680, 8192) * 1e6, 37.4095, 1e-4);
  EXPECT_NEAR(usd_per_token(c, 34375680, 8192) * 1e6 - 150 * 0.1 / 3.6, 33.2428, 1e-4);
  EXPECT_EQ(energy_per_token_J(c, 0), 0.0);  // a layout the model did not time

  const std::string psa_path = ::testing::TempDir() + "energy.yaml";
  std::ofstream(psa_path) << "base: " << COSMIC_DATA_DIR << "/configs/cosmic-system1-baseline.yaml\n"
                          << "parameters:\n  workload: {dp: [1, 2, 4, 8, 16, 32], pp: [1, 2, 4]}\n"
                          << "  network: {npus.3: [1, 2, 4, 8]}\nderived: {tp: auto}\n"
                          << "objectives: [energy_per_token, usd_per_token]\n";
  const auto error = [](const std::string& path, const std::vector<std::string>& sets) -> std::string {
    try {
      psa::load_psa(path, sets);
    } catch (const psa::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  const std::string no_power = error(psa_path, {});
  EXPECT_EQ(no_power.rfind(psa_path + ":6:14: key 'objectives.0'", 0), 0u) << no_power;
  EXPECT_NE(no_power.find("energy_per_token needs the NPUs' power draw (watts an NPU); missing: system.compute.power_W of the "
                          "base configuration"),
            std::string::npos)
      << no_power;
  // Every missing figure at once.
  const std::string none = error(psa_path, {"objectives=[usd_per_token]"});
  for (const char* key : {"compute.price_usd", "compute.power_W", "operation.usd_per_kWh", "operation.lifetime_years"})
    EXPECT_NE(none.find(std::string("system.") + key + " of the base configuration"), std::string::npos) << key << ": " << none;
  const std::vector<std::string> figures = {"base.system.compute.power_W=1000", "base.system.compute.price_usd=25000",
                                            "base.system.operation.pue=1.2", "base.system.operation.lifetime_years=4"};
  const std::string no_kwh = error(psa_path, figures);
  EXPECT_EQ(no_kwh.rfind(psa_path + ":6:32: key 'objectives.1'", 0), 0u) << no_kwh;
  EXPECT_NE(no_kwh.find("missing: system.operation.usd_per_kWh of the base configuration (--set "
                        "base.system.operation.usd_per_kWh=...), got"),
            std::string::npos)
      << no_kwh;
  std::vector<std::string> all = figures;
  all.push_back("base.system.operation.usd_per_kWh=0.1");
  // A limit in dollars per million tokens is refused as the wrong units; per token it is taken.
  std::vector<std::string> per_million = all;
  per_million.push_back("limits={usd_per_token: 0.3}");
  EXPECT_NE(error(psa_path, per_million).find("key 'limits.usd_per_token': expected an upper bound in dollars per token"),
            std::string::npos)
      << error(psa_path, per_million);
  std::vector<std::string> per_token = all;
  per_token.push_back("limits={usd_per_token: 3.0e-7}");
  EXPECT_EQ(error(psa_path, per_token), "");
  const psa::DesignSpace ds = psa::load_psa(psa_path, all);
  double least_j = INFINITY, least_usd = INFINITY;
  for_each_runnable(ds, [&](const Config& p, const Result& e) {
    const double npus = double(p.net.dim[0].npus) * p.net.dim[1].npus * p.net.dim[2].npus * p.net.dim[3].npus;
    const double lifetime_s = 4 * 365.25 * 86400;
    least_j = std::min(least_j, npus * 1000 * 1.2 / e.tokens_per_s);
    least_usd = std::min(least_usd, ((e.network_cost_usd + npus * 25000) / lifetime_s + npus * 1000 * 1.2 * 0.1 / 3.6e6) /
                                        e.tokens_per_s);
  });
  const SweepState got = cpu_sweep(ds, 0, space_size(*ds.view), 4);
  ASSERT_GT(got.feasible(), 0u);
  EXPECT_DOUBLE_EQ(got.top[0][0].obj[0], least_j);
  EXPECT_DOUBLE_EQ(got.top[1][0].obj[1], least_usd);
}

// derived.dp: auto: DP follows the network's size and the other degrees (a space over the
// number of nodes that needs no list of DP values). Every point's DP is NPUs / (tp x cp x pp),
// 0 where that is not whole (PRODUCT_MISMATCH); the walk, which sets low genes alone, derives it
// again whenever tp, pp or the NPUs change (its decodings equal fresh ones); the sweep equals
// the brute force.
TEST(Sweep, DerivedDpFollowsTheNetworkAndTheOtherDegrees) {
  const std::string psa_path = ::testing::TempDir() + "derived_dp.yaml";
  std::ofstream(psa_path) << "base: " << COSMIC_DATA_DIR << "/configs/cosmic-system1-baseline.yaml\n"
                          << "parameters:\n  workload: {tp: [1, 2, 4, 8], pp: [1, 2, 3, 4]}\n"
                          << "  network: {npus.3: [1, 2, 3, 4, 8]}\nderived: {dp: auto}\nobjectives: [npus, latency]\n";
  const psa::DesignSpace ds = psa::load_psa(psa_path);
  const SpaceView& s = *ds.view;
  ASSERT_EQ(s.derived_degree, int(Param::DP));
  const u128 n = space_size(s);
  int32_t g[kMaxGenes];
  int whole = 0, not_whole = 0;
  for (u128 i = 0; i < n; ++i) {
    unrank(s, i, g);
    const Config c = decode(s, g);
    const int64_t npus = 4 * 8 * 4 * int64_t(s.values[s.gene[2].offset + g[2]]);
    const int64_t others = int64_t(c.work.tp) * c.work.cp * c.work.pp;  // cp 8 from the base
    EXPECT_EQ(c.work.dp, npus % others == 0 ? npus / others : 0) << "point " << uint64_t(i);
    (c.work.dp > 0 ? whole : not_whole)++;
    if (c.work.dp == 0) EXPECT_EQ(evaluate(c).reason, Reason::ProductMismatch);
  }
  EXPECT_GT(whole, 0);
  EXPECT_GT(not_whole, 0);  // pp 3 and 3 nodes
  const SweepConst k = make_sweep_const(s, ds.objectives);
  const std::vector<LiveSegment> live = live_segments(s, {Segment{0, uint64_t(n)}});
  size_t visited = 0;
  sweep_walk_live(s, k, live.data(), int32_t(live.size()), 0, uint64_t(n), [&](const Config& c, u128 index, uint64_t) {
    expect_fresh_decode(s, c, index);
    ++visited;
  });
  EXPECT_EQ(visited, size_t(n));
  expect_same_state(cpu_sweep(ds, 0, n, 4), brute_force(ds, 0, n, 4));
  // One degree derived at most, and not one a gene sets.
  const auto error_of = [&](const std::vector<std::string>& sets) {
    try {
      psa::load_psa(psa_path, sets);
    } catch (const psa::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // (the file's derived.dp named, with the --set that made it wrong and what to add)
  EXPECT_NE(error_of({"derived.tp=auto"}).find("key 'derived.dp': expected none: tp is derived already (one degree at most), "
                                               "got 'auto' (derived.tp is from --set: add --set derived.dp=none)"),
            std::string::npos)
      << error_of({"derived.tp=auto"});
  EXPECT_NE(error_of({"parameters.workload.dp=[1, 2]"}).find("a parameter that is not derived (derived.dp is auto)"),
            std::string::npos)
      << error_of({"parameters.workload.dp=[1, 2]"});
}

// The network cost depends on the network genes alone, so the cheapest points tie on it by the
// thousand: the cost list shows the fastest of them first (then index), not the first in index.
TEST(Sweep, TopListsBreakTiesByTheOtherObjectives) {
  const psa::DesignSpace ds = test::small_system1({Objective::Cost, Objective::Latency});
  const u128 n = space_size(*ds.view);
  const SweepState got = cpu_sweep(ds, 0, n, 8);
  const std::vector<SweepPoint>& by_cost = got.top[0];
  ASSERT_EQ(by_cost.size(), 8u);
  int latency_differs = 0;
  for (size_t i = 1; i < by_cost.size(); ++i) {
    ASSERT_EQ(by_cost[i].obj[0], by_cost[0].obj[0]) << "the 8 cheapest share one network cost";
    EXPECT_LE(by_cost[i - 1].obj[1], by_cost[i].obj[1]) << i;
    if (by_cost[i - 1].obj[1] == by_cost[i].obj[1]) EXPECT_LT(by_cost[i - 1].index, by_cost[i].index) << i;
    latency_differs += by_cost[i - 1].obj[1] != by_cost[i].obj[1];
  }
  EXPECT_GT(latency_differs, 0);  // else the order by latency would be the order by index
  expect_same_state(got, brute_force(ds, 0, n, 8));
}

// Per-NPU bandwidth on a FullyConnected dimension: the study divides it by 7 links whatever the
// size; `links_per_npu: physical` by npus - 1, so the dimension's NPU gene sets the per-link
// bandwidth too, and the sweep's walk, which sets low genes alone, must not take it for one it
// may set alone (the test fails if it does: its points keep the previous NPU count's links).
TEST(Sweep, PhysicalLinkCountsFollowTheNpusGene) {
  for (LinkCount links : {LinkCount::Study, LinkCount::Physical}) {
    SCOPED_TRACE(links == LinkCount::Study ? "study" : "physical");
    Config base = test::system1_base();  // dims Ring 4, FullyConnected 8, Ring 4, Switch 8
    base.net.links_per_npu = links;
    test::ViewBuilder b(base);
    b.gene("network.npus.1", Param::Npus, 1, {4, 8, 16})
        .gene("network.topology.1", Param::Topology, 1, {0, 1, 2})
        .gene("network.npu_bandwidth_GBps.1", Param::NpuBw, 1, {70, 140, 300})
        .gene("workload.dp", Param::DP, -1, {1, 2, 4, 8, 16});
    b.view().derived_degree = int8_t(Param::TP);
    const psa::DesignSpace ds = b.build("physical links", {Objective::Latency, Objective::RuntimeXBw});
    // By hand: 16 NPUs, FullyConnected, 300 GB/s per NPU: 15 links of 20 GB/s (physical) or
    // 7 of 42.857142857142854 (study); a Ring of 4 at 140: 2 links of 70 either way. The
    // per-NPU value and the study's bw (sum over dims: 187.5 x 2 + 300 + 75 x 2 + 100) read back.
    const int32_t fc16[] = {2, 2, 2, 0}, ring4[] = {0, 0, 1, 0};
    const Config c = decode(*ds.view, fc16);
    EXPECT_EQ(c.net.dim[1].npus, 16);
    EXPECT_DOUBLE_EQ(c.net.dim[1].link_bw_GBps, links == LinkCount::Physical ? 20.0 : 300.0 / 7);
    EXPECT_DOUBLE_EQ(get_param(c, Param::NpuBw, 1), 300.0);
    EXPECT_DOUBLE_EQ(npu_bandwidth_total(c), 187.5 * 2 + 300 + 75 * 2 + 100);
    EXPECT_DOUBLE_EQ(decode(*ds.view, ring4).net.dim[1].link_bw_GBps, 70.0);
    const u128 n = space_size(*ds.view);
    expect_same_state(cpu_sweep(ds, 0, n, 5), brute_force(ds, 0, n, 5));
  }
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
  for_each_checked(ds, [&](u128 i, const Config& c, const Result& r) {
    if (r.reason != Reason::Ok) return;
    SweepPoint p;
    p.index = i;
    for (int j = 0; j < 3; ++j) p.obj[j] = objective_value(ds.objectives[size_t(j)], c, r);
    all.push_back(p);
  });
  std::vector<SweepPoint> front;
  for (const SweepPoint& p : all) {
    bool dominated = false;
    for (const SweepPoint& q : all) dominated = dominated || (q.index != p.index && dominates(q, p, 3));
    if (!dominated) front.push_back(p);
  }
  std::sort(front.begin(), front.end(), in_order(0, 3));
  ASSERT_GE(front.size(), 2u);
  want.pareto = front;  // brute_force() finds fronts of two objectives only
  expect_same_state(one, want);
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
  // The sweep settles these before the timing (evaluate's stop_at_oom), brute force after it.
  EXPECT_GT(want.reasons[int(Reason::OutOfMemory)], 10000u);
  expect_same_state(cpu_sweep(ds, begin, end, 4), want);
}

// The rows a backend keeps for --keep all over [begin, end), in the order it gives them.
std::vector<SweepRow> kept_rows(const psa::DesignSpace& ds, SweepBackend& backend, u128 begin, u128 end) {
  const SweepConst k = make_sweep_const(*ds.view, ds.objectives);
  SweepState st;
  st.init(k.nobj, 4, true);
  std::vector<SweepRow> rows;
  BatchOutput out;
  for (u128 cursor = begin; cursor < end;) {
    const u128 from = cursor;
    backend.run(plan_segments(*ds.view, k, coarse_gene_for(*ds.view, 4096), cursor, end, backend.min_batch()),
                st.pruning(), out);
    st.add(out, cursor - from);
    rows.insert(rows.end(), out.rows.begin(), out.rows.end());
  }
  return rows;
}

// Two rows alike, field by field (the padding is not compared): bit for bit.
void expect_same_row(const SweepRow& a, const SweepRow& b, int nobj) {
  EXPECT_TRUE(a.index == b.index) << psa::to_string_u128(a.index) << " vs " << psa::to_string_u128(b.index);
  EXPECT_EQ(a.reason, b.reason) << psa::to_string_u128(a.index);
  for (int j = 0; j < nobj; ++j) EXPECT_EQ(a.obj[j], b.obj[j]) << psa::to_string_u128(a.index) << " objective " << j;
  const Result x = a.metrics(), y = b.metrics();
  EXPECT_EQ(x.time_s, y.time_s);
  EXPECT_EQ(x.memory_bytes, y.memory_bytes);
  EXPECT_EQ(x.network_cost_usd, y.network_cost_usd);
  EXPECT_EQ(x.tokens_per_s, y.tokens_per_s);
  EXPECT_EQ(x.mfu, y.mfu);
  EXPECT_EQ(x.first_token_s, y.first_token_s);
}

// --keep all's rows are every point that meets the constraints, in index order, with its reason,
// its objectives (+inf where infeasible) and what the model computed, as evaluate() gives them.
TEST(Sweep, KeptRowsAreEveryPointMeetingTheConstraints) {
  const psa::DesignSpace ds = test::small_system1({Objective::RuntimeXBw, Objective::Memory});
  SweepProblem p;
  p.view = ds.view.get();
  p.k = make_sweep_const(*ds.view, ds.objectives);
  p.top_k = 4;
  p.want_front = true;
  p.keep_all = true;
  const u128 n = space_size(*ds.view);
  const std::vector<SweepRow> rows = kept_rows(ds, *make_cpu_sweep_backend(p), 0, n);
  std::vector<SweepRow> want;
  size_t infeasible = 0;
  for_each_checked(ds, [&](u128 i, const Config& c, const Result& r) {
    SweepRow row;
    row.index = i;
    row.reason = int32_t(r.reason);
    for (int j = 0; j < 2; ++j)
      row.obj[j] = r.reason == Reason::Ok ? objective_value(ds.objectives[size_t(j)], c, r) : INFINITY;
    row.time_s = r.time_s, row.memory_bytes = r.memory_bytes, row.network_cost_usd = r.network_cost_usd;
    row.tokens_per_s = r.tokens_per_s, row.mfu = r.mfu, row.first_token_s = r.first_token_s;
    infeasible += r.reason != Reason::Ok;
    want.push_back(row);
  });
  EXPECT_GT(infeasible, 0u);
  EXPECT_LT(infeasible, want.size());
  ASSERT_EQ(rows.size(), want.size());
  for (size_t i = 0; i < rows.size(); ++i) expect_same_row(rows[i], want[i], 2);
}

TEST(Sweep, EvaluatedCountEqualsFeasibleCountOfTheSpace) {
  const psa::DesignSpace ds = test::small_system1();
  const SweepState st = cpu_sweep(ds, 0, space_size(*ds.view), 3);
  EXPECT_TRUE(u128(st.evaluated()) == psa::feasible_count(ds))
      << st.evaluated() << " vs " << psa::to_string_u128(psa::feasible_count(ds));
}

// CPU and CUDA sweeps agree: the same counts and histograms, and the same points in the top-K
// lists and on the front. Spaces: the small one, a slice of the full-stack one on the physical
// convention and on the ASTRA-sim one (the kernel's general Conventions::Any form), and Mixtral's
// in training and in generate mode (a decode step's few tokens reach some experts only:
// experts_reached's power, which both must take the same way), and with DeepSeekMoE 16B's dense
// first layer (and dense layers between its expert layers in generate mode) in its place; and
// the cluster's cost, energy and dollars per token as objectives.
TEST(Sweep, CudaMatchesCpu) {
  const CudaDevice dev = cuda_device();
  if (!dev.available) GTEST_SKIP() << "CUDA sweep not tested: " << dev.why;
  const std::string moe = std::string(COSMIC_DATA_DIR) + "/psa/moe/mixtral-h100.yaml";
  const std::string derived = ::testing::TempDir() + "cuda_derived_dp.yaml";  // DP derived, the cluster's cost
  std::ofstream(derived) << "base: " << COSMIC_DATA_DIR << "/configs/cosmic-system1-baseline.yaml\n"
                         << "parameters:\n  workload: {tp: [1, 2, 4, 8], pp: [1, 2, 3, 4]}\n"
                         << "  network: {npus.3: [1, 2, 3, 4, 8]}\nderived: {dp: auto}\n"
                         << "objectives: [cluster_cost, npu_s_per_token]\n";
  const std::vector<std::string> generate = {"base.workload.mode=generate", "base.workload.output_tokens=64",
                                             "base.workload.prompt_tokens=512"};
  std::vector<std::string> dense_layers = generate;
  dense_layers.insert(dense_layers.end(), {"base.model=DeepSeekMoE-16B", "base.model.moe_layer_step=2"});
  for (int which = 0; which < 11; ++which) {
    const psa::DesignSpace ds =
        which == 10  ? psa::load_psa(derived, {"base.system.compute.price_usd=25000", "base.system.compute.power_W=1000",
                                               "base.system.operation.pue=1.3", "base.system.operation.usd_per_kWh=0.12",
                                               "base.system.operation.lifetime_years=5", "objectives=[energy_per_token, usd_per_token]"})
        : which == 9 ? psa::load_psa(moe, dense_layers)
        : which == 8 ? psa::load_psa(moe, {"base.model=DeepSeekMoE-16B"})
        : which == 7 ? psa::load_psa(std::string(COSMIC_DATA_DIR) + "/psa/compute/mixtral-npu-types.yaml")  // NPU types
        : which == 0 ? test::small_system1()
        : which == 5 ? limited_small_system1()
        : which == 6 ? psa::load_psa(derived, {"base.system.compute.price_usd=25000"})
        : which == 1 ? test::system1_fullstack()
        : which == 2 ? test::with_astra_sim(test::system1_fullstack())
        : which == 3 ? psa::load_psa(moe)
                     : psa::load_psa(moe, generate);
    SCOPED_TRACE(ds.name);
    u128 begin = 0, end = space_size(*ds.view);
    if (which == 1 || which == 2) {
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
    // Both evaluate in double without FMA contraction (CMakeLists.txt: --fmad=false on the GPU,
    // -ffp-contract=off on the host) and the model calls no libm function that rounds (its one
    // logarithm is astra::log2_int, + - * / only): everything equal, bit for bit.
    expect_same_state(b, a, 0);
    if (which == 1 || which == 2) continue;  // 4 x 10^7 rows: --keep all on the smaller spaces
    // --keep all: the same rows (the device's row buffer, filled and compacted per batch).
    p.keep_all = true;
    const std::vector<SweepRow> rows_cpu = kept_rows(ds, *make_cpu_sweep_backend(p), begin, end);
    const std::vector<SweepRow> rows_gpu = kept_rows(ds, *make_cuda_sweep_backend(p), begin, end);
    EXPECT_EQ(rows_cpu.size(), a.evaluated());  // a row for every point scored
    ASSERT_EQ(rows_gpu.size(), rows_cpu.size());
    for (size_t i = 0; i < rows_cpu.size(); ++i) expect_same_row(rows_gpu[i], rows_cpu[i], p.k.nobj);
  }
}

// Every shipped PSA file (data/psa/**/*.yaml), sorted.
std::vector<std::string> shipped_psa_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(COSMIC_DATA_DIR) + "/psa"))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Writes a PSA file to the test folder, based on data/configs/`base`; returns its path.
std::string temp_psa(const std::string& name, const std::string& base, const std::string& body) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << "base: " << COSMIC_DATA_DIR << "/configs/" << base << "\n" << body;
  return path;
}

// A space whose constraints use every rule of the read sets: derived TP (dp, cp, npus genes),
// algorithms that follow the topology, per-NPU bandwidth (topology genes change the per-link
// bandwidth and the per-NPU reading), network_cost and npu_bandwidth_total. 20,412 points.
psa::DesignSpace every_rule_space() {
  const std::string path = temp_psa("every-rule.yaml", "cosmic-system1-baseline.yaml",
      "parameters:\n"
      "  workload:\n    dp: {pow2: {min: 1, max: 64}}\n    cp: [1, 2, 4]\n"
      "  network:\n    topology: {values: [Ring, Switch, FullyConnected], per_dim: true}\n"
      "    npus.3: [4, 8, 16]\n    npu_bandwidth_GBps.0: {range: {min: 50, max: 350, step: 100}}\n"
      "derived: {tp: auto, algorithm: follows_topology}\n"
      "constraints:\n"
      "  - \"workload.tp >= 4\"\n"
      "  - \"collective.all_reduce_algorithm.1 != direct\"\n"
      "  - \"collective.algorithm.2 != ring\"\n"
      "  - \"network.bandwidth_GBps.0 <= 100\"\n"
      "  - \"network.npu_bandwidth_GBps.0 >= 100\"\n"
      "  - \"network_cost <= 3000000\"\n"
      "  - \"npu_bandwidth_total <= 1400\"\n"
      "objectives: latency\n");
  return psa::load_psa(path);
}

// Algorithms that follow a topology gene that nothing else writes (no per-NPU bandwidth): the
// walk once set such a gene alone and kept the previous point's algorithms (a fuzz test found
// it: a third of the points passed `algorithm.0 == ring`, and Switch points were timed with the
// ring). 12,000 points, 4,000 pass.
psa::DesignSpace topology_only_space() {
  const std::string path = temp_psa("topology-only.yaml", "cosmic-system1-baseline.yaml",
      "parameters:\n  network:\n    topology.0: [Ring, Switch, FullyConnected]\n"
      "    latency_ns.1: {range: {min: 1, max: 100}}\n    latency_ns.2: {range: {min: 1, max: 40}}\n"
      "derived: {algorithm: follows_topology}\n"
      "constraints: [\"collective.algorithm.0 == ring\"]\n"
      "objectives: latency\n");
  return psa::load_psa(path);
}

// Physical link counts: a FullyConnected dimension's per-NPU bandwidth is per-link x (npus - 1),
// so constraints on it read the NPU genes, with per-link bandwidth given per link (the base's,
// a bandwidth gene) or per NPU.
psa::DesignSpace physical_links_space() {
  const std::string base = ::testing::TempDir() + "physical-links-base.yaml";
  std::ofstream(base) << "model: GPT3-13B\nsystem:\n  preset: cosmic-system1\n  network:\n    links_per_npu: physical\n"
                         "    dims:\n      - {topology: FullyConnected, npus: 8, bandwidth_GBps: 100, latency_ns: 20}\n"
                         "      - {topology: Switch, npus: 8, bandwidth_GBps: 100, latency_ns: 700}\n"
                         "      - {topology: Ring, npus: 4, bandwidth_GBps: 50, latency_ns: 700}\n"
                         "workload: {global_batch: 64, dp: 8, tp: 32}\n";
  const std::string path = ::testing::TempDir() + "physical-links.yaml";
  std::ofstream(path) << "base: " << base << "\nparameters:\n  workload: {dp: [1, 2, 4, 8]}\n"
                         "  network:\n    npus.0: [4, 8, 16]\n    npus.2: [2, 4]\n    topology.2: [Ring, FullyConnected]\n"
                         "    bandwidth_GBps.1: [50, 100]\n    npu_bandwidth_GBps.2: [100, 300]\n"
                         "constraints:\n  - \"npu_bandwidth_GBps.0 <= 800\"\n  - \"npu_bandwidth_total <= 2000\"\n"
                         "  - \"network.npu_bandwidth_GBps.2 >= 150 or npus.2 == 2\"\nobjectives: latency\n";
  return psa::load_psa(path);
}

// The spaces the read-set tests run on: every shipped PSA file, then every_rule_space(),
// topology_only_space() and physical_links_space().
std::vector<psa::DesignSpace> read_set_spaces() {
  std::vector<psa::DesignSpace> out;
  for (const std::string& file : shipped_psa_files()) out.push_back(psa::load_psa(file));
  out.push_back(every_rule_space());
  out.push_back(topology_only_space());
  out.push_back(physical_links_space());
  for (psa::DesignSpace& ds : out) ds.objectives = {Objective::Latency};
  return out;
}

// The read sets (psa::constraint_genes) against what decode() actually does: changing a gene a
// constraint does not list must leave that constraint's verdict and violation unchanged, on
// random points. Sweep skipping (low_gene) and feasible counting both rely on this; it fails
// when a rule of the read sets misses a dependency.
TEST(Sweep, ReadSetsCoverEveryGeneThatChangesAConstraint) {
  const std::vector<psa::DesignSpace> spaces = read_set_spaces();
  ASSERT_GE(spaces.size(), 20u);
  std::mt19937_64 rng(11);
  for (const psa::DesignSpace& ds : spaces) {
    const SpaceView& s = *ds.view;
    const SweepConst k = make_sweep_const(s, ds.objectives);
    std::vector<std::vector<bool>> reads(size_t(s.nconstraints), std::vector<bool>(size_t(s.ngenes), false));
    for (int32_t c = 0; c < s.nconstraints; ++c) {
      const std::vector<int32_t> genes = psa::constraint_genes(s, c);
      EXPECT_EQ(k.low_gene[c], genes.empty() ? s.ngenes : genes.front()) << ds.file << " constraint " << c;
      for (int32_t g : genes) reads[size_t(c)][size_t(g)] = true;
    }
    int32_t genome[kMaxGenes], other[kMaxGenes];
    for (int t = 0; t < 64; ++t) {
      for (int32_t g = 0; g < s.ngenes; ++g) genome[g] = int32_t(rng() % uint64_t(s.gene[g].card));
      const Config c0 = decode(s, genome);
      for (int32_t g = 0; g < s.ngenes; ++g) {
        const int32_t card = s.gene[g].card, step = card > 8 ? card / 8 : 1;  // up to ~8 values of g
        for (int32_t v = 0; v < card; v += step) {
          std::copy(genome, genome + s.ngenes, other);
          other[g] = v;
          const Config c1 = decode(s, other);
          for (int32_t c = 0; c < s.nconstraints; ++c) {
            if (reads[size_t(c)][size_t(g)]) continue;
            double v0 = 0, v1 = 0;
            const bool h0 = constraint_holds(s, c0, c, v0), h1 = constraint_holds(s, c1, c, v1);
            ASSERT_TRUE(h0 == h1 && v0 == v1) << ds.file << ": gene " << ds.genes[size_t(g)].name
                                              << " changes constraint '" << ds.constraint_text[size_t(c)]
                                              << "' but is not in its read set";
          }
        }
      }
    }
  }
}

// Skipping sweeps against brute force on slices of the same spaces (the whole of the small
// ones): the same points pass the constraints and get the same model verdicts, and on a whole
// space as many points pass as psa::feasible_count counts.
// Large spaces get three slices: from index 0, at a random place, and around a random index
// whose point meets the constraints; each space must have some points pass in them, so that the
// comparison is not of two empty sweeps.
TEST(Sweep, SkippingMatchesBruteForceOnEveryShippedSpace) {
  std::mt19937_64 rng(5);
  const auto random_index = [&](u128 below) { return ((u128(rng()) << 64) | rng()) % below; };
  for (const psa::DesignSpace& ds : read_set_spaces()) {
    const SpaceView& s = *ds.view;
    const u128 n = space_size(s);
    const u128 len = n < 25000 ? n : 6000;
    u128 live = 0;  // an index whose point meets the constraints
    for (int tries = 0; tries < 100000; ++tries) {
      live = random_index(n);
      int32_t genome[kMaxGenes];
      unrank(s, live, genome);
      double violation = 0;
      if (check_constraints(s, decode(s, genome), violation)) break;
    }
    uint64_t passed = 0;
    for (int rep = 0; rep < (len == n ? 1 : 3); ++rep) {
      const u128 begin = rep == 0   ? 0
                         : rep == 1 ? random_index(n - len + 1)
                                    : std::min(live - std::min(live, len / 2), n - len);
      SCOPED_TRACE(ds.file + " from " + psa::to_string_u128(begin));
      const SweepState got = cpu_sweep(ds, begin, begin + len, 4);
      expect_same_state(got, brute_force(ds, begin, begin + len, 4));
      passed += got.evaluated();
      // A whole space: the sweep's count of points passing the constraints is the exact count.
      if (len == n) EXPECT_TRUE(u128(got.evaluated()) == psa::feasible_count(ds)) << got.evaluated();
    }
    EXPECT_GT(passed, 0u) << ds.file;
  }
}

// psa::point_config (cosmic show --config): the configuration file of a point reads back as the
// point decode() gives, on random points of every shipped space and of one with compute genes,
// a scalar peak, per-NPU bandwidth over physical links and algorithms of their own: every
// parameter the space can set, and every result, bit for bit. A point the model finds invalid
// may fail to load (a derived TP of 0, say), nothing else.
TEST(Sweep, PointConfigReadsBackAsTheDecodedPoint) {
  std::vector<std::string> files = shipped_psa_files();
  const std::string base = ::testing::TempDir() + "point_base.yaml";
  std::ofstream(base) << "model: GPT-22B\nsystem:\n  preset: dgx-a100\n  nodes: 4\n  compute: {peak_tflops: 312, "
                         "memory_bw_GBps: 2039, memory_GiB: 80}\n  network: {links_per_npu: physical}\n"
                         "workload: {tp: 8, dp: 4, global_batch: 64}\n";
  files.push_back(::testing::TempDir() + "point_compute.yaml");
  std::ofstream(files.back()) << "base: " << base << "\nparameters:\n  workload: {dp: [1, 2, 4], schedule: [1f1b, "
                                 "interleaved], vpp: [1, 2], recompute: [none, full], recompute_layers: [0, 1]}\n  compute: {peak_tflops: [300, "
                                 "400.5], memory_bw_GBps: [2000, 3000], memory_GB: [40, 80.25]}\n  network:\n"
                                 "    topology.0: [Switch, FullyConnected]\n    npu_bandwidth_GBps.0: [100, 299.9]\n"
                                 "    latency_ns.1: [1000, 2500.5]\n  collective: {algorithm.1: [ring, direct], chunks: [1, 4]}\n"
                                 "derived: {tp: auto}\n"
                                 "objectives: [latency]\n";
  // A base that names its 16-bit peak twice (equal, as the reader requires).
  const std::string both = ::testing::TempDir() + "point_base_both.yaml";
  std::ofstream(both) << "model: GPT-22B\nsystem:\n  preset: dgx-h100\n  nodes: 4\n  compute: {peak_tflops: {fp16: 989, "
                         "bf16: 989, fp8: 1979}, memory_bw_GBps: 3350, memory_GiB: 80}\n"
                         "workload: {tp: 8, dp: 4, global_batch: 64}\n";
  files.push_back(::testing::TempDir() + "point_peaks.yaml");
  std::ofstream(files.back()) << "base: " << both << "\nparameters:\n  workload: {dp: [1, 2, 4]}\n"
                                 "  compute: {peak_tflops: [900, 1000.5]}\nderived: {tp: auto}\nobjectives: [latency]\n";
  std::mt19937_64 rng(17);
  int loaded = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const psa::DesignSpace ds = psa::load_psa(file);
    const SpaceView& s = *ds.view;
    for (int rep = 0; rep < 40; ++rep) {
      const u128 index = ((u128(rng()) << 64) | rng()) % space_size(s);
      int32_t genome[kMaxGenes];
      unrank(s, index, genome);
      const Config want = decode(s, genome);
      const Result rw = evaluate(want);
      const std::string path = ::testing::TempDir() + "point.yaml";
      std::ofstream(path) << psa::point_config(ds, genome, "a point");
      Config got;
      try {
        got = psa::load_config(path).config;
      } catch (const psa::ConfigError& e) {
        EXPECT_NE(rw.reason, Reason::Ok) << e.what();
        continue;
      }
      ++loaded;
      for (int p : {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 32, 33, 34, 36, 37, 38, 39, 96, 97, 98})
        EXPECT_EQ(get_param(got, Param(p), -1), get_param(want, Param(p), -1)) << "param " << p;
      // vpp is read only when interleaved (the model's rule): written as 1 otherwise.
      EXPECT_EQ(got.work.vpp, want.work.schedule == Schedule::Interleaved ? want.work.vpp : 1);
      // recompute_layers likewise with full recompute only: written as 0 (every layer) otherwise.
      EXPECT_EQ(got.work.recompute_layers, want.work.recompute == Recompute::Full ? want.work.recompute_layers : 0);
      for (int32_t d = 0; d < want.net.ndims; ++d)
        for (int p : {64, 65, 66, 67, 68, 35, 36, 37, 38, 39})
          EXPECT_EQ(get_param(got, Param(p), d), get_param(want, Param(p), d)) << "param " << p << " dim " << d;
      EXPECT_EQ(got.net.ndims, want.net.ndims);
      const Result rg = evaluate(got);
      EXPECT_EQ(rg.reason, rw.reason);
      for (double Result::*f : {&Result::time_s, &Result::forward_s, &Result::backward_s, &Result::recompute_s,
                                &Result::tp_comm_s, &Result::cp_comm_s, &Result::dp_comm_s, &Result::pp_comm_s,
                                &Result::ep_comm_s, &Result::bubble_s, &Result::memory_bytes, &Result::network_cost_usd,
                                &Result::tokens_per_s})
        EXPECT_TRUE(rg.*f == rw.*f || (std::isnan(rg.*f) && std::isnan(rw.*f))) << rg.*f << " " << rw.*f;  // NaN: unpriced
    }
  }
  EXPECT_GT(loaded, int(files.size()) * 10);
}

// Constraints joined by or / and: the sweep's skips (a violated constraint stays violated until
// a gene it reads changes) hold for them too; its reductions equal brute force.
TEST(Sweep, OrAndConstraintsSweepAsBruteForce) {
  const psa::DesignSpace ds = psa::load_psa(temp_psa("or_sweep.yaml", "cosmic-system1-baseline.yaml",
      "parameters:\n  workload: {dp: {pow2: {min: 1, max: 64}}, cp: [1, 2, 4]}\n"
      "  network:\n    npus: {values: [4, 8, 16], per_dim: true}\n    topology.1: [Ring, Switch, FullyConnected]\n"
      "derived: {tp: auto}\n"
      "constraints:\n  - \"product(network.npus) == 1024 or product(network.npus) == 512 and workload.cp == 1\"\n"
      "  - \"network.npus.1 == 8 or network.topology.1 != FullyConnected\"\n"
      "objectives: [latency, memory]\n"));
  const u128 n = space_size(*ds.view);
  const SweepState want = brute_force(ds, 0, n, 6);
  EXPECT_GT(want.evaluated(), 0u);
  expect_same_state(cpu_sweep(ds, 0, n, 6), want);
  EXPECT_TRUE(u128(want.evaluated()) == psa::feasible_count(ds));
}

// How many leading genes the walk may set alone (psa::plain_genes): up to the first per-NPU
// bandwidth, algorithm that follows the topology, or gene whose field another gene or a derived
// parameter sets. Where a space has no topology gene on a dimension, the walk's decoding of
// those views must still equal a fresh one, byte for byte.
TEST(Sweep, PlainGenesStopAtTheFirstGeneADerivedParameterReads) {
  // 4 workload genes, 19 collective ones (policy, chunks, multi-dim, then from gene 7 one
  // algorithm per collective and dimension), then the topologies.
  const psa::DesignSpace full = psa::load_psa(std::string(COSMIC_DATA_DIR) + "/psa/cosmic/fullstack-system1.yaml");
  EXPECT_EQ(psa::plain_genes(*full.view), 23);
  EXPECT_EQ(full.view->gene[23].param, Param::Topology);
  SpaceView v = *full.view;
  v.algo_follows_topology = true;  // the algorithm genes (from gene 7) now read the topology
  EXPECT_EQ(v.gene[7].param, Param::AlgoAllReduce);
  EXPECT_EQ(psa::plain_genes(v), 7);
  v = *full.view;
  v.gene[9] = v.gene[7];  // two genes set the same algorithm
  EXPECT_EQ(psa::plain_genes(v), 7);
  v = *full.view;
  v.gene[1].dim = 0;  // two genes set pp, whatever dimension they name (pp has none)
  v.gene[2].param = Param::PP;
  v.gene[2].dim = 2;
  EXPECT_EQ(psa::plain_genes(v), 1);

  auto walk_equals_decode = [&](const SpaceView& w) {
    const SweepConst k = make_sweep_const(w, full.objectives);
    const std::vector<LiveSegment> live = live_segments(w, {Segment{12345, 20000}});
    size_t visited = 0;
    sweep_walk_live(w, k, live.data(), 1, 0, 20000, [&](const Config& c, u128 index, uint64_t) {
      expect_fresh_decode(w, c, index);
      ++visited;
    });
    EXPECT_GT(visited, 0u);
  };
  // No topology gene on dimension 0, and gene 0 gives its per-NPU bandwidth: gene 0 is not
  // plain (set again alone, it would not be divided by the links).
  auto without_topology_0 = [&] {
    SpaceView w = *full.view;
    w.gene[23].param = Param::Latency;  // was network.topology.0
    w.gene[31].param = Param::Latency;  // was network.npu_bandwidth_GBps.0
    w.gene[31].dim = 1;
    w.gene[0].param = Param::NpuBw;
    w.gene[0].dim = 0;
    w.nconstraints = 0;  // so that the walk visits points
    return w;
  };
  v = without_topology_0();
  EXPECT_EQ(full.view->gene[31].param, Param::NpuBw);
  EXPECT_EQ(full.view->gene[31].dim, 0);
  EXPECT_EQ(psa::plain_genes(v), 0);
  walk_equals_decode(v);
  // No topology gene on dimension 0, algorithms following the topology: the algorithm genes are
  // not plain (decode sets them from dimension 0's base topology).
  v = *full.view;
  v.gene[23].param = Param::Latency;
  v.algo_follows_topology = true;
  v.nconstraints = 0;
  EXPECT_EQ(psa::plain_genes(v), 7);
  walk_equals_decode(v);
}

// The GPU's thread-to-part map (sweep_part_of_thread): a permutation of whole groups of 32 x K
// threads, whose warps take the same place of 32 consecutive cycles of K parts.
TEST(Sweep, WarpsLineUpOnTheCycleOfTheFastestGenes) {
  for (uint64_t K : {1, 3, 300}) {
    const uint64_t T = 32 * K * 5;
    std::vector<int> seen(T, 0);
    for (uint64_t t = 0; t < T; ++t) {
      const uint64_t p = sweep_part_of_thread(t, K);
      ASSERT_LT(p, T) << K;
      ++seen[p];
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; })) << K;
  }
  // Warp 301 with K = 300: the second group of 32 cycles, place 1; lane l in cycle 32 + l.
  for (uint64_t l = 0; l < 32; ++l) EXPECT_EQ(sweep_part_of_thread(301 * 32 + l, 300), (32 + l) * 300 + 1);
  // The cycle: dp 10 x pp 3 x cp 10 x sharding 2 values lead the full-stack space; the
  // network-only space starts with a topology.
  const std::string dir = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/";
  EXPECT_EQ(sweep_phase_cycle(*psa::load_psa(dir + "fullstack-system1.yaml").view), 600u);
  EXPECT_EQ(sweep_phase_cycle(*psa::load_psa(dir + "network-system1.yaml").view), 1u);
}

// The CUDA sweep kernel gives each thread a few consecutive live indices of a batch (kernels/
// sweep_cuda.cu: kMaxPerThread), walked with the CPU's sweep_walk_live. Walking a batch of three
// separate segments in parts of 1, 2, 3, 7 and 64 indices must visit exactly the indices that
// pass the constraints, each once, at its live offset, with its own configuration: checked here
// on the CPU, where the split runs the same code.
TEST(Sweep, WalkInSmallPartsVisitsEachPassingPointOnce) {
  std::mt19937_64 rng(17);
  size_t spaces = 0, passing = 0, skipped = 0;
  for (const psa::DesignSpace& ds : read_set_spaces()) {
    const SpaceView& s = *ds.view;
    const SweepConst k = make_sweep_const(s, ds.objectives);
    const u128 n = space_size(s);
    if (n < 3000) continue;
    std::vector<Segment> segs;
    for (uint64_t len : {700, 300, 900}) {
      const u128 begin = ((u128(rng()) << 64) | rng()) % (n - len + 1);
      segs.push_back(Segment{begin, len});
    }
    const std::vector<LiveSegment> live = live_segments(s, segs);
    const uint64_t total = live.back().start + segs.back().count;
    SCOPED_TRACE(ds.file);
    // The points that pass, by live offset, the slow way.
    std::vector<u128> want;
    std::vector<uint64_t> want_at;
    int32_t genome[kMaxGenes];
    for (size_t i = 0; i < segs.size(); ++i)
      for (uint64_t d = 0; d < segs[i].count; ++d) {
        unrank(s, segs[i].begin + d, genome);
        double violation = 0;
        if (!check_constraints(s, decode(s, genome), violation)) continue;
        want.push_back(segs[i].begin + d);
        want_at.push_back(live[i].start + d);
      }
    ++spaces;
    passing += want.size();
    skipped += total - want.size();
    for (uint64_t part : {1, 2, 3, 7, 64}) {
      std::vector<u128> got;
      std::vector<uint64_t> got_at;
      for (uint64_t lo = 0; lo < total; lo += part)
        sweep_walk_live(s, k, live.data(), int32_t(live.size()), lo, std::min(total, lo + part),
                        [&](const Config& c, u128 index, uint64_t at) {
                          got.push_back(index);
                          got_at.push_back(at);
                          expect_fresh_decode(s, c, index);
                        });
      EXPECT_TRUE(got == want) << "part " << part << ": " << got.size() << " visited, " << want.size() << " pass";
      EXPECT_EQ(got_at, want_at) << "part " << part;
    }
  }
  // The test means something only if both kinds of points were there.
  EXPECT_GE(spaces, 15u);
  EXPECT_GT(passing, 1000u);
  EXPECT_GT(skipped, 1000u);
  std::printf("%zu spaces, %zu points pass, %zu violate\n", spaces, passing, skipped);
}

// A space with genes no result depends on: the scheduling policy and the all-to-all algorithm
// per dimension (32 copies of each result), beside genes that count. 1,792 points.
psa::DesignSpace space_with_idle_genes(const std::vector<std::string>& sets = {}) {
  const std::string path = temp_psa("idle-genes.yaml", "cosmic-system1-baseline.yaml",
      "parameters:\n"
      "  workload:\n    dp: {pow2: {min: 1, max: 64}}\n    cp: [1, 2]\n"
      "  collective:\n    policy: [LIFO, FIFO]\n    chunks: [2, 4]\n"
      "    all_to_all_algorithm: {values: [ring, direct], per_dim: true}\n"
      "    all_reduce_algorithm.0: [ring, direct]\n"
      "derived: {tp: auto}\n"
      "constraints: [\"workload.dp * workload.cp <= 64\"]\n"
      "objectives: [latency, memory]\n");
  return psa::load_psa(path, sets);
}

// Folding rests on psa::gene_has_no_effect: on random points of every shipped space and of
// inference and Ulysses variants, every value of such a gene gives the same metrics, bit for
// bit, and the same constraint verdicts where the gene is folded. A rule that named a gene the
// model reads would fail here (so would a model change that starts reading one).
TEST(Sweep, GenesWithNoEffectChangeNoResult) {
  std::vector<psa::DesignSpace> spaces;
  for (const std::string& file : shipped_psa_files()) spaces.push_back(psa::load_psa(file));
  spaces.push_back(space_with_idle_genes());
  spaces.push_back(space_with_idle_genes({"base.workload.cp_style=alltoall"}));  // the all-to-all counts
  // A mixture of experts whose experts are not split: its all-to-all algorithms are idle.
  const std::string moe = temp_psa("idle-moe.yaml", "mixtral-8x7b-h100.yaml",
      "parameters:\n  workload:\n    dp: {pow2: {min: 1, max: 64}}\n    pp: [1, 2, 4]\n    sharding: [none, zero3]\n"
      "  collective:\n    all_to_all_algorithm: {values: [ring, direct], per_dim: true}\n"
      "derived: {tp: auto}\nobjectives: [latency, memory]\n");
  spaces.push_back(psa::load_psa(moe, {"base.workload.ep=1"}));
  // Inference: the training-only schedule, vpp, sharding and recompute are idle too.
  const std::string path = temp_psa("idle-inference.yaml", "cosmic-system1-baseline.yaml",
      "parameters:\n"
      "  workload:\n    dp: {pow2: {min: 4, max: 64}}\n    pp: [1, 2, 4]\n    cp: [1, 2]\n    vpp: [1, 2]\n"
      "    schedule: [1f1b, gpipe]\n    sharding: [none, zero3]\n    recompute: [none, full]\n"
      "  collective:\n    policy: [LIFO, FIFO]\n"
      "derived: {tp: auto}\n"
      "objectives: latency\n");
  for (const char* mode : {"prefill", "decode", "generate"})
    spaces.push_back(psa::load_psa(path, {std::string("base.workload.mode=") + mode, "base.workload.kv_len=2048",
                                          "base.workload.output_tokens=64", "base.workload.schedule=interleaved",
                                          "base.workload.cp=1", "base.workload.global_batch=64"}));
  std::mt19937_64 rng(11);
  size_t idle_spaces = 0, ok_all = 0;
  for (const psa::DesignSpace& ds : spaces) {
    const SpaceView& s = *ds.view;
    std::vector<int32_t> idle;
    for (int32_t g = 0; g < s.ngenes; ++g)
      if (s.gene[g].card > 1 && psa::gene_has_no_effect(ds, size_t(g))) idle.push_back(g);
    if (idle.empty()) continue;
    ++idle_spaces;
    const std::vector<int32_t> folded = psa::foldable_genes(ds);
    size_t ok = 0;
    for (int point = 0, tries = 0; point < 300 && tries < 300000; ++tries) {
      int32_t genome[kMaxGenes];
      for (int32_t g = 0; g < s.ngenes; ++g) genome[g] = int32_t(rng() % uint64_t(s.gene[g].card));
      const Config c = decode(s, genome);
      double violation = 0;
      if (!check_constraints(s, c, violation)) continue;
      ++point;
      const Result r = evaluate(c);
      ok += r.reason == Reason::Ok;
      for (int32_t g : idle) {
        const int32_t was = genome[g];
        for (int32_t v = 0; v < s.gene[g].card; ++v) {
          genome[g] = v;
          const Config c2 = decode(s, genome);
          const Result r2 = evaluate(c2);
          SCOPED_TRACE(ds.file + ": " + ds.genes[size_t(g)].name + " = " + ds.genes[size_t(g)].labels[size_t(v)]);
          ASSERT_EQ(r.reason, r2.reason);
          for (double Result::*f : {&Result::time_s, &Result::forward_s, &Result::backward_s, &Result::recompute_s,
                                    &Result::optimizer_s, &Result::tp_comm_s, &Result::cp_comm_s, &Result::dp_comm_s,
                                    &Result::pp_comm_s, &Result::bubble_s, &Result::weights_bytes, &Result::grads_bytes,
                                    &Result::optimizer_bytes, &Result::activation_bytes, &Result::kv_cache_bytes,
                                    &Result::memory_bytes, &Result::network_cost_usd, &Result::model_flops,
                                    &Result::tokens_per_s, &Result::mfu})
            ASSERT_EQ(std::memcmp(&(r.*f), &(r2.*f), sizeof(double)), 0);
          if (std::count(folded.begin(), folded.end(), g)) {
            for (int32_t k = 0; k < s.nconstraints; ++k) EXPECT_EQ(constraint_holds(s, c, k), constraint_holds(s, c2, k));
          }
        }
        genome[g] = was;
      }
    }
    EXPECT_GE(ok, 10u) << ds.file << ": too few feasible points to compare";
    ok_all += ok;
  }
  EXPECT_GE(idle_spaces, 18u);
  EXPECT_GE(ok_all, 2000u);
}

// A folded sweep (the idle genes at their first value) against brute force over the whole
// space: each count and histogram bin times the copies is the whole space's, and the top-K lists
// and the front are the whole space's points with the idle genes at their first value.
TEST(Sweep, FoldedSweepStandsForTheWholeSpace) {
  const psa::DesignSpace full = space_with_idle_genes();
  const std::vector<int32_t> idle = psa::foldable_genes(full);
  std::vector<std::string> names;
  for (int32_t g : idle) names.push_back(full.genes[size_t(g)].name);
  ASSERT_EQ(names, (std::vector<std::string>{"collective.policy", "collective.all_to_all_algorithm.0",
                                              "collective.all_to_all_algorithm.1", "collective.all_to_all_algorithm.2",
                                              "collective.all_to_all_algorithm.3"}));
  const uint64_t copies = psa::fold_copies(full, idle);
  ASSERT_EQ(copies, 32u);
  const psa::DesignSpace folded = psa::fold_genes(full, names);
  EXPECT_TRUE(space_size(*folded.view) * copies == space_size(*full.view));
  EXPECT_EQ(folded.genes[size_t(idle[0])].labels, std::vector<std::string>{"LIFO"});
  EXPECT_THROW(psa::fold_genes(full, {"collective.chunks"}), std::runtime_error);

  const int32_t top_k = 12;
  const SweepState whole = brute_force(full, 0, space_size(*full.view), int32_t(top_k * copies));
  const SweepState got = cpu_sweep(folded, 0, space_size(*folded.view), top_k);
  EXPECT_TRUE(got.swept * copies == whole.swept);
  for (int r = 0; r < kNumReasons; ++r) EXPECT_EQ(got.reasons[r] * copies, whole.reasons[r]) << "reason " << r;
  EXPECT_GT(got.feasible(), 0u);
  ASSERT_EQ(got.hist.size(), whole.hist.size());
  for (size_t b = 0; b < got.hist.size(); ++b) EXPECT_EQ(got.hist[b] * copies, whole.hist[b]) << "bin " << b;
  // The whole space's points with the idle genes at 0, in its order, as points of the folded space.
  const auto twins_first = [&](const std::vector<SweepPoint>& pts, size_t n) {
    std::vector<SweepPoint> out;
    for (SweepPoint p : pts) {
      int32_t genome[kMaxGenes];
      unrank(*full.view, p.index, genome);
      bool first = true;
      for (int32_t g : idle) first = first && genome[g] == 0;
      if (!first || out.size() == n) continue;
      p.index = rank(*folded.view, genome);
      out.push_back(p);
    }
    return out;
  };
  for (int j = 0; j < got.nobj; ++j) expect_same_points(got.top[j], twins_first(whole.top[j], top_k), got.nobj, 0, "top");
  EXPECT_GT(got.pareto.size(), 1u);
  expect_same_points(got.pareto, twins_first(whole.pareto, SIZE_MAX), got.nobj, 0, "pareto");
}

}  // namespace
}  // namespace cosmic
