// Tests of the ASTRA-sim-compatible collective timing (kernels/astra.hpp): a hand-computed
// example, the flow-shop patterns and the sub-group rule. The measured reference rows of
// data/validation/astrasim-collectives-dev.csv are checked through `cosmic validate`
// (tests/test_validate.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/astra.hpp"
#include "kernels/collective.hpp"

namespace {

using namespace cosmic;

// One dimension under the ASTRA-sim convention, congestion-unaware, endpoint delay d = 10 ns.
Network one_dim(Topology topo, int32_t npus, double bw_GBps, double latency_ns) {
  Network net;
  net.ndims = 1;
  net.dim[0].topology = topo;
  net.dim[0].npus = npus;
  net.dim[0].link_bw_GBps = bw_GBps;
  net.dim[0].latency_ns = latency_ns;
  net.endpoint_delay_ns = 10;
  net.congestion_aware = false;
  net.convention = Convention::AstraSim;
  return net;
}

// The doc's worked example, step by step: 1 GiB all-reduce, one 8-NPU Ring dim, 50 GB/s per
// link, 500 ns per hop, S = 4 chunks, local memory M = 1600 GB/s, endpoint delay d = 10 ns.
TEST(AstraSim, WorkedExampleGolden) {
  // By hand: chunk C = floor(D / S) = 2^28 bytes (>= N_total = 8); the ring all-reduce's message
  // m = C / p = 2^25 = 33,554,432 bytes; B = 50 x 2^30 / 10^9 = 53.6870912 bytes a ns (GB = 2^30),
  // so m / B = 625,000 ns; one hop on the ring T = floor(500 + 625,000) = 625,500 ns; the
  // reductions R = 3 floor(m / M) = 3 x floor(33,554,432 / 1,600) = 3 x 20,971 = 62,913 ns; a chunk
  // d + 2(p - 1)(T + d) + (p - 1) R = 10 + 14 x 625,510 + 7 x 62,913 = 9,197,541 ns; one dimension,
  // one slot: the 4 chunks back to back, 36,790,164 ns.
  const double D = 1073741824;  // 1 GiB
  Network net = one_dim(Topology::Ring, 8, 50, 500);
  net.chunks = 4;
  net.active_chunks = 1;
  Span span;
  span.k[0] = 8;
  EXPECT_EQ(astra::collective_ns(net, 1600, span, Coll::AllReduce, D, 8), 36790164.0);
  net.congestion_aware = true;  // one chunk at a time, one hop: no difference
  EXPECT_EQ(astra::collective_ns(net, 1600, span, Coll::AllReduce, D, 8), 36790164.0);
}

// A pipeline message under the ASTRA-sim convention: the message rule in GiB units, whole ns,
// over the hops of the group's stride, plus the endpoint delay at both ends.
TEST(AstraSim, PointToPointMessage) {
  Network net = one_dim(Topology::Switch, 8, 25, 2000);
  Span span;
  span.k[0] = 8;
  // floor(2 x 2000 + 1e8 x 1e9 / (25 x 2^30)) = floor(4000 + 3,725,290.3) = 3,729,290; + 2 x 10.
  EXPECT_EQ(astra::p2p_ns(net, span, 1e8), 3729310.0);
  // Stages 3 NPUs apart on an 8-NPU Ring (50 GB/s, 500 ns): 3 hops the shorter way; a 2^25-byte
  // message serializes in 625,000 ns. Unaware: floor(3 x 500 + 625,000); aware, store and
  // forward: 3 x floor(500 + 625,000).
  net.dim[0].topology = Topology::Ring;
  net.dim[0].link_bw_GBps = 50;
  net.dim[0].latency_ns = 500;
  span.k[0] = 2;
  span.stride[0] = 3;
  EXPECT_EQ(astra::p2p_ns(net, span, 33554432), 626520.0);
  net.congestion_aware = true;
  EXPECT_EQ(astra::p2p_ns(net, span, 33554432), 1876520.0);
  // The model's dispatch takes this path under the ASTRA-sim convention.
  EXPECT_EQ(p2p_time_s(net, 0.5, span, 33554432), 1876520.0 * 1e-9);
}

Network two_dim_ring_switch() {
  Network net;
  net.ndims = 2;
  net.dim[0].topology = Topology::Ring;
  net.dim[0].npus = 8;
  net.dim[0].link_bw_GBps = 200;
  net.dim[0].latency_ns = 100;
  net.dim[1].topology = Topology::Switch;
  net.dim[1].npus = 8;
  net.dim[1].link_bw_GBps = 50;
  net.dim[1].latency_ns = 1000;
  net.chunks = 4;
  net.active_chunks = 1;
  net.endpoint_delay_ns = 10;
  net.multidim = MultiDim::BWAware;
  net.congestion_aware = false;
  net.convention = Convention::AstraSim;
  return net;
}

// A group smaller than the system runs as one ring phase (ring algorithm) on a 1-D ring of its
// ranks, charged in the lowest crossed dim (unaware).
TEST(AstraSim, SubgroupIsOneRingPhase) {
  const double D = 1073741824;
  Network net = two_dim_ring_switch();
  // TP-like group: all of dim 0. Equals a 1-D system of dim 0 alone, apart from N_total in the
  // chunking rule (irrelevant at 1 GiB).
  Span tp;
  tp.k[0] = 8;
  Network one = net;
  one.ndims = 1;
  Span one_span;
  one_span.k[0] = 8;
  EXPECT_EQ(astra::collective_ns(net, 1600, tp, Coll::AllReduce, D, 64),
            astra::collective_ns(one, 1600, one_span, Coll::AllReduce, D, 8));
  // The configured algorithm is ignored for sub-groups (ASTRA-sim forces the ring).
  Network direct = net;
  for (auto& a : direct.dim[0].algo) a = Algo::Direct;
  EXPECT_EQ(astra::collective_ns(direct, 1600, tp, Coll::AllReduce, D, 64),
            astra::collective_ns(net, 1600, tp, Coll::AllReduce, D, 64));
  // ...but with SubgroupRule::WholeDims it is a (1-dim) multi-dim collective with the algorithm.
  EXPECT_LT(astra::collective_ns(direct, 1600, tp, Coll::AllReduce, D, 64, astra::SubgroupRule::WholeDims),
            astra::collective_ns(net, 1600, tp, Coll::AllReduce, D, 64));

  // DP-like group: 2 ranks of dim 0 (stride 4) x 8 of dim 1 = 16 ranks on one ring, all
  // messages charged in dim 0 (the lowest differing dim), 4 hops on its ring.
  Span dp;
  dp.k[0] = 2;
  dp.stride[0] = 4;
  dp.k[1] = 8;
  dp.stride[1] = 1;
  const double C = D / 4, m = std::floor(C / 16);
  const double T = std::floor(4 * 100 + m * 1e9 / (200 * 1073741824.0));
  const double R = 3 * std::floor(m / 1600);
  const double per_chunk = 10 + 2 * 15 * (T + 10) + 15 * R;
  EXPECT_EQ(astra::collective_ns(net, 1600, dp, Coll::AllReduce, D, 64), 4 * per_chunk);
}

// Multi-dim phase lists and the flow shop on the doc's two patterns.
TEST(AstraSim, FlowShopPatterns) {
  const double D = 1073741824;
  Network net = two_dim_ring_switch();
  Span all;
  all.k[0] = 8;
  all.k[1] = 8;
  // baseline: t0 + S t1 (dim 1 the bottleneck) = 39,503,605 ns (CSV).
  net.multidim = MultiDim::Baseline;
  EXPECT_EQ(astra::collective_ns(net, 1600, all, Coll::AllReduce, D, 64), 39503605.0);
  // localBWAware, dim 0 the bottleneck: S (t_RS0 + t_AG0) = 10,517,804 ns (CSV).
  net.multidim = MultiDim::BWAware;
  EXPECT_EQ(astra::collective_ns(net, 1600, all, Coll::AllReduce, D, 64), 10517804.0);
}

// More chunks than simulated: the extrapolation is exact for a single dim with one slot.
TEST(AstraSim, ManyChunksExtrapolate) {
  Network net = one_dim(Topology::Ring, 8, 50, 500);
  Span span;
  span.k[0] = 8;
  net.chunks = 1;
  const double D = 1073741824;
  net.chunks = 128;
  const double C = D / 128, m = C / 8;
  const double T = std::floor(500 + m * 1e9 / (50 * 1073741824.0));
  const double per_chunk = 10 + 14 * (T + 10) + 7 * 3 * std::floor(m / 1600);
  EXPECT_EQ(astra::collective_ns(net, 1600, span, Coll::AllReduce, D, 8), 128 * per_chunk);
  // Uneven split: C = floor(1,000,000 / 3) = 333,333 B, ceil(1,000,000 / 333,333) = 4 chunks,
  // the last carrying the remainder 1,000,000 - 3 x 333,333 = 1 B. Ring all-reduce per chunk
  // d + 14 (T + d) + 7 R, d = 10:
  //   full chunk: m = floor(333,333 / 8) = 41,666 B, m / B = 41,666 / 53.6870912 = 776.09 ns,
  //     T = floor(500 + 776.09) = 1,276, R = 3 floor(41,666 / 1600) = 78:
  //     10 + 14 x 1,286 + 7 x 78 = 18,560 ns;
  //   last chunk: m = floor(1 / 8) = 0, T = 500, R = 0: 10 + 14 x 510 = 7,150 ns.
  // One slot, chunks back to back: 3 x 18,560 + 7,150 = 62,830 ns (3 equal chunks: 55,680).
  net.chunks = 3;
  EXPECT_EQ(astra::collective_ns(net, 1600, span, Coll::AllReduce, 1000000, 8), 62830.0);
  EXPECT_EQ(astra::collective_ns(net, 1600, span, Coll::AllReduce, 0, 8), 0.0);
}

// log2_int: exact for powers of two (the only case with an exact double), and within 2 ulp of
// libm's log2 elsewhere; the double-binary-tree ratio interpolates 3.1x at p = 8 and 6x at p = 64
// linearly in log2 p: at p = 16, 3.1 + 2.9 x (4 - 3) / 3 = 4.0667; never below 1.
TEST(AstraSim, Log2IntAndDbtRatio) {
  for (int e = 0; e < 63; ++e) EXPECT_EQ(astra::log2_int(int64_t(1) << e), double(e));
  for (int64_t p = 1; p <= 100000; ++p)
    ASSERT_NEAR(astra::log2_int(p), std::log2(double(p)), 2 * std::log2(double(p) + 1) * 2.3e-16) << p;
  EXPECT_DOUBLE_EQ(astra::dbt_ratio(8), 3.1);
  EXPECT_DOUBLE_EQ(astra::dbt_ratio(64), 6.0);
  EXPECT_NEAR(astra::dbt_ratio(16), 3.1 + 2.9 / 3, 1e-15);
  EXPECT_NEAR(astra::dbt_ratio(3), 3.1 + 2.9 * (1.5849625007211562 - 3) / 3, 1e-15);
  EXPECT_EQ(astra::dbt_ratio(1), 1.0);  // 3.1 - 2.9 = 0.2, clamped
}

}  // namespace
