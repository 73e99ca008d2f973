// Collective times, Physical convention, against values worked out by hand from the formulas
// in kernels/collective.hpp (alpha-beta model, shared/reference/analytical-models.md §4). Every expected number
// below is written out from link bandwidth B, hop latency a, endpoint delay d = 10 ns.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/collective.hpp"
#include "kernels/model.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

using test::dim;
using test::full_span;
using test::one_dim;

constexpr double GiB = 1073741824.0;

double coll(const Network& n, Coll c, double bytes) { return physical_collective_s(n, 1.0, full_span(n), c, bytes); }

TEST(PhysicalCollective, RingAllReduceOnRingLargeAndSmall) {
  // Ring topology, 50 GB/s links, 500 ns hops: both directions -> R = 100e9 B/s; step = 510 ns.
  // AR = 2 [(k-1) 510 ns + (k-1)/k S / 100e9].
  struct Case { int k; double bytes; double expect_s; };
  const Case cases[] = {
      {2, GiB, 0.01073843824},   // 2 [0.51 us + 0.5 x 10.73741824 ms]
      {4, GiB, 0.01610918736},   // 2 [1.53 us + 0.75 x 10.73741824 ms]
      {8, GiB, 0.01879762192},   // 2 [3.57 us + 0.875 x 10.73741824 ms]
      {16, GiB, 0.0201479592},   // 2 [7.65 us + 0.9375 x 10.73741824 ms]
      {2, 1024, 1.03024e-6},     // 2 [510 ns + 5.12 ns]
      {4, 1024, 3.07536e-6},     // 2 [1530 ns + 7.68 ns]
      {8, 1024, 7.15792e-6},     // 2 [3570 ns + 8.96 ns]
      {16, 1024, 15.3192e-6},    // 2 [7650 ns + 9.6 ns]
  };
  for (const auto& c : cases) {
    const Network n = one_dim(Topology::Ring, c.k, 50, 500, Algo::Ring);
    EXPECT_NEAR(coll(n, Coll::AllReduce, c.bytes), c.expect_s, 1e-12 + 1e-9 * c.expect_s) << "k=" << c.k;
    // Reduce-scatter and all-gather are half an all-reduce each.
    EXPECT_NEAR(coll(n, Coll::ReduceScatter, c.bytes) + coll(n, Coll::AllGather, c.bytes), c.expect_s,
                1e-12 + 1e-9 * c.expect_s);
  }
}

TEST(PhysicalCollective, DirectOnSwitchAndFullyConnected) {
  // Switch, 100 GB/s, 1000 ns: one port, two hops: 2 us + 10 ns + 7/8 x 8 MiB / 100e9 = 75.41032 us.
  EXPECT_NEAR(coll(one_dim(Topology::Switch, 8, 100, 1000, Algo::Direct), Coll::AllGather, 8388608.0), 75.41032e-6, 1e-12);
  // FullyConnected, 25 GB/s, 700 ns: a link per peer carries S/8: 710 ns + 134217728 / 25e9.
  const Network fc = one_dim(Topology::FullyConnected, 8, 25, 700, Algo::Direct);
  EXPECT_NEAR(coll(fc, Coll::ReduceScatter, GiB), 5.36941912e-3, 1e-12);
  EXPECT_NEAR(coll(fc, Coll::AllReduce, GiB), 10.73883824e-3, 1e-12);
}

TEST(PhysicalCollective, HalvingDoubling) {
  // Switch, 16 NPUs, 100 GB/s, 1700 ns: 4 steps of 2 x 1700 + 10 ns, data S (1/2+1/4+1/8+1/16)
  // = 1006632960 B -> 10.0663296 ms + 13.64 us per phase, twice for all-reduce.
  EXPECT_NEAR(coll(one_dim(Topology::Switch, 16, 100, 1700, Algo::HalvingDoubling), Coll::AllReduce, GiB),
              20.1599392e-3, 1e-11);
  // Ring, 8 NPUs, 50 GB/s, 500 ns: partners 1, 2, 4 hops away; step j moves S/2^(j+1) over
  // `hops` links at B/hops, 10.73741824 ms, but the last: partners half the ring apart send
  // both ways round, 5.36870912 ms; each step + hops x 500 ns + 10 ns.
  EXPECT_NEAR(coll(one_dim(Topology::Ring, 8, 50, 500, Algo::HalvingDoubling), Coll::ReduceScatter, GiB),
              26.8470756e-3, 1e-11);
  // Ring of 4, 50 GB/s, 500 ns: S/2 / B + 510 ns, then S/4 over 2 hops both ways, 1010 ns +
  // S/4 x 2 / 100e9: 16.10612736 ms + 1.52 us, twice the ring algorithm's 3 x 510 ns + 3/4 S /
  // 100e9 (its first step sends half the buffer over one link direction; with every flow of
  // the second step one way round it took 2.7x).
  const Network ring4 = one_dim(Topology::Ring, 4, 50, 500, Algo::HalvingDoubling);
  EXPECT_NEAR(coll(ring4, Coll::ReduceScatter, GiB), 16.10764736e-3, 1e-11);
  EXPECT_NEAR(coll(ring4, Coll::AllReduce, GiB), 2 * 16.10764736e-3, 1e-11);
}

// A group of k not a power of two folds its k - p2 extra ranks in and out (p2 = largest power
// of two <= k). Switch, 100 GB/s, 1000 ns: a step is 2010 ns + m / 100e9.
TEST(PhysicalCollective, HalvingDoublingFoldsExtraRanks) {
  // k = 3, p2 = 2: all-reduce 2 x [fold (2010 ns + S/B) + one step (2010 ns + S/2/B)]
  // = 2 x (4.02 us + 16.10612736 ms).
  const Network k3 = one_dim(Topology::Switch, 3, 100, 1000, Algo::HalvingDoubling);
  EXPECT_NEAR(coll(k3, Coll::AllReduce, GiB), 32.22029472e-3, 1e-11);
  // Reduce-scatter: fold in (S), one step (S/2), the extra rank's block out (S/3):
  // 6.03 us + (1 + 1/2 + 1/3) S/B = 6.03 us + 19.68526677 ms.
  EXPECT_NEAR(coll(k3, Coll::ReduceScatter, GiB), 19.69129677e-3, 1e-11);
  // k = 6, p2 = 4: 2 x [fold + steps of S/2, S/4] = 2 x (6.03 us + 1.75 S/B).
  EXPECT_NEAR(coll(one_dim(Topology::Switch, 6, 100, 1000, Algo::HalvingDoubling), Coll::AllReduce, GiB),
              37.59302384e-3, 1e-11);
}

// FullyConnected: a ring over a group of 2 has one link to its one peer, so R = B (not 2B).
TEST(PhysicalCollective, FullyConnectedPairHasOneLink) {
  // 25 GB/s, 700 ns: all-reduce 2 x [710 ns + S/2 / 25e9] = 2 x (0.71 us + 21.47483648 ms).
  const Network fc = one_dim(Topology::FullyConnected, 2, 25, 700, Algo::Ring);
  EXPECT_NEAR(coll(fc, Coll::AllReduce, GiB), 42.95109296e-3, 1e-11);
  // The same as the direct exchange over that link.
  EXPECT_NEAR(coll(one_dim(Topology::FullyConnected, 2, 25, 700, Algo::Direct), Coll::AllReduce, GiB),
              42.95109296e-3, 1e-11);
}

TEST(PhysicalCollective, DoubleBinaryTreeAndAllToAll) {
  // Switch, 8 NPUs, 100 GB/s, 1000 ns: 2 x 3 levels x (2000 + 10) ns + 2 S / 100e9.
  EXPECT_NEAR(coll(one_dim(Topology::Switch, 8, 100, 1000, Algo::DoubleBinaryTree), Coll::AllReduce, GiB),
              21.48689648e-3, 1e-11);
  // Two ranks: each sends half the buffer up one tree and half down the other, S in all, the
  // ring's 2 x (2010 ns + S/2 / 100e9) = 10.74143824 ms (not 2 S / B).
  EXPECT_NEAR(coll(one_dim(Topology::Switch, 2, 100, 1000, Algo::DoubleBinaryTree), Coll::AllReduce, GiB),
              10.74143824e-3, 1e-11);
  // Ring all-to-all, 4 NPUs, 50 GB/s, 500 ns: 2 steps of 510 ns; S/4 x (1 + 2 + 1) / 100e9.
  EXPECT_NEAR(coll(one_dim(Topology::Ring, 4, 50, 500, Algo::Ring), Coll::AllToAll, 1048576.0), 11.50576e-6, 1e-14);
}

TEST(PhysicalCollective, MultiDimensionalAllReduce) {
  Network n;
  n.ndims = 2;
  n.dim[0] = dim(Topology::Ring, 4, 100, 20, Algo::Ring);
  n.dim[1] = dim(Topology::Switch, 8, 50, 1000, Algo::Ring);
  n.endpoint_delay_ns = 10;
  n.chunks = 1;
  n.multidim = MultiDim::BWAware;
  // RS dim 0 on S: 3 x 30 ns + 3/4 S / 200e9 = 4.02662184 ms; AR dim 1 on S/4:
  // 2 (7 x 2010 ns + 7/8 x 268435456 / 50e9) = 9.42338096 ms; AG dim 0 as RS.
  EXPECT_NEAR(coll(n, Coll::AllReduce, GiB), 17.47662464e-3, 1e-11);
  // Four chunks in a flow shop: one chunk's phases 1.00672296 + 2.37695024 + 1.00672296 ms,
  // plus 3 x the busiest dimension's load per chunk (dim 1: 2.37695024 ms).
  n.chunks = 4;
  EXPECT_NEAR(coll(n, Coll::AllReduce, GiB), 11.52124688e-3, 1e-11);
  // Baseline: a full all-reduce in each dimension: 8.05324368 + 37.60910384 ms.
  n.chunks = 1;
  n.multidim = MultiDim::Baseline;
  EXPECT_NEAR(coll(n, Coll::AllReduce, GiB), 45.66234752e-3, 1e-11);
  // Every phase of an all-reduce runs with each dimension's all-reduce algorithm (the other
  // collectives' algorithms stay ring): direct on dim 0 (Ring of 4, 100 GB/s, 20 ns) makes
  // its reduce-scatter 2 x 20 ns + 10 ns + S/4 x (1 + 2 + 1) / 200e9 = 5.36875912 ms, and the
  // all-gather the same; dim 1's all-reduce stays 9.42338096 ms.
  n.multidim = MultiDim::BWAware;
  n.dim[0].algo[int(Coll::AllReduce)] = Algo::Direct;
  EXPECT_NEAR(coll(n, Coll::AllReduce, GiB), 20.1608992e-3, 1e-11);
  EXPECT_NEAR(coll(n, Coll::ReduceScatter, GiB), 4.02662184e-3 + 4.69762048e-3 + 7 * 2010e-9, 1e-11);
  // Dimension 0 the bottleneck (10 GB/s links): it serves every chunk twice, reduce-scatter and
  // all-gather, 3 x 30 ns + 3/4 x (S/4) / 20e9 = 10.0664196 ms each, while dimension 1's
  // all-reduce of a chunk (2.37695024 ms) runs in between: 4 x 2 x 10.0664196 = 80.5313568 ms
  // (ASTRA-sim's measured S (t_RS0 + t_AG0)), not one chunk's phases plus 3 x the busiest
  // dimension's load (82.90830704 ms).
  n.dim[0] = dim(Topology::Ring, 4, 10, 20, Algo::Ring);
  n.chunks = 4;
  EXPECT_NEAR(coll(n, Coll::AllReduce, GiB), 80.5313568e-3, 1e-11);
}

// A group within one dimension is sent whole whatever network.chunks says: its chunks would run
// one after another, each paying the latency again. Switch of 8, 450 GB/s, 500 ns, an 8 KiB
// all-reduce (a decode step's tensor-parallel one): 2 x [7 x (1000 + 10) ns + 7/8 x 8192 / 450e9]
// = 14.17185778 us with 1 chunk or 64 (it was 64 x 2 x [7070 ns + 7/8 x 128 / 450e9] with 64).
// The same group on a network of two dimensions, the other left out of its span, likewise.
TEST(PhysicalCollective, OneDimensionIsNotSplitIntoChunks) {
  for (const int chunks : {1, 4, 64}) {
    const Network n = one_dim(Topology::Switch, 8, 450, 500, Algo::Ring, chunks);
    EXPECT_NEAR(coll(n, Coll::AllReduce, 8192), 14.17185778e-6, 1e-14) << chunks;
    EXPECT_NEAR(coll(n, Coll::ReduceScatter, 8192), 14.17185778e-6 / 2, 1e-14) << chunks;
    Network two = n;
    two.ndims = 2;
    two.dim[1] = dim(Topology::Switch, 4, 50, 2000, Algo::Ring);
    Span inner;  // 8 ranks in dimension 0, 1 in dimension 1
    inner.k[0] = 8;
    EXPECT_NEAR(physical_collective_s(two, 1.0, inner, Coll::AllReduce, 8192), 14.17185778e-6, 1e-14) << chunks;
  }
}

// Three dimensions (Switches of 2 without latency or endpoint delay; 50, 40, 50 GB/s), 2 chunks
// of an 8 GB localBWAware all-reduce: reduce-scatter and all-gather of a chunk in dimension 0
// 1/2 x 4e9 / 50e9 = 40 ms each, in dimension 1 1/2 x 2e9 / 40e9 = 25 ms each, the all-reduce
// in dimension 2 2 x 1/2 x 1e9 / 50e9 = 20 ms. Per dimension, head + chunks x load + tail:
// 160, 80 + 100 = 180 and 130 + 40 = 170 ms. But the chunk whose reduce-scatter in dimension 0
// ends last (at 80 ms at the earliest) has 25 + 20 + 25 + 40 ms of its own phases ahead: one
// chunk's phases (150 ms) + the longest phase once more, 190 ms.
TEST(PhysicalCollective, ReentrantAllReduceBoundByItsLastChunk) {
  Network n;
  n.ndims = 3;
  n.dim[0] = dim(Topology::Switch, 2, 50, 0, Algo::Ring);
  n.dim[1] = dim(Topology::Switch, 2, 40, 0, Algo::Ring);
  n.dim[2] = dim(Topology::Switch, 2, 50, 0, Algo::Ring);
  n.endpoint_delay_ns = 0;
  n.chunks = 2;
  n.multidim = MultiDim::BWAware;
  EXPECT_NEAR(coll(n, Coll::AllReduce, 8e9), 0.19, 1e-12);
}

// The closed form against a simulation of the flow shop (kernels/astra.hpp flow_shop_ns: one
// chunk at a time per dimension, fresh chunks first) of the phases docs/model.md lists, each
// timed by phase_time_s, over random 2-4 dimensional networks: equal when no dimension is
// visited twice (baseline all-reduce, reduce-scatter, all-gather); for localBWAware's all-reduce,
// which re-enters each dimension for its all-gather, a lower bound, close on average.
TEST(PhysicalCollective, FlowShopAgainstSimulation) {
  std::mt19937_64 rng(7);
  const Topology topos[] = {Topology::Ring, Topology::Switch, Topology::FullyConnected};
  const Algo algos[] = {Algo::Ring, Algo::Direct, Algo::HalvingDoubling};
  const int sizes[] = {2, 3, 4, 6, 8, 16};
  double sum_gap = 0, max_gap = 0;
  int reentrant = 0;
  for (int it = 0; it < 6000; ++it) {
    Network n;
    n.ndims = 2 + it % 3;
    for (int d = 0; d < n.ndims; ++d)
      n.dim[d] = dim(topos[rng() % 3], sizes[rng() % 6], 10.0 * (1 + rng() % 50), double(rng() % 2000), algos[rng() % 3]);
    n.endpoint_delay_ns = 10;
    n.chunks = 1 + int(rng() % 16);
    const double bytes = 1e6 * double(1 + rng() % 1000);
    const Span span = full_span(n);
    const Coll colls[] = {Coll::AllReduce, Coll::AllReduce, Coll::ReduceScatter, Coll::AllGather};
    const Coll c = colls[it % 4];
    n.multidim = it % 4 == 0 ? MultiDim::BWAware : MultiDim::Baseline;
    // The phase list of one chunk, as docs/model.md gives it.
    astra::Plan pl;
    astra::PhaseCost pc[2 * kMaxDims - 1];
    auto phase = [&](int d, Coll kind, double b) {
      pl.dim[pl.n] = int8_t(d);
      pc[pl.n++].t_ns = phase_time_s(n.dim[d], n.dim[d].npus, 1, n.dim[d].algo[int(c)], kind, b, 1.0, 10);
    };
    const int nd = n.ndims;
    double b = bytes / n.chunks;
    if (c == Coll::AllReduce && n.multidim == MultiDim::BWAware) {
      double shard[kMaxDims];
      for (int d = 0; d + 1 < nd; ++d) { shard[d] = b; phase(d, Coll::ReduceScatter, b); b /= n.dim[d].npus; }
      phase(nd - 1, Coll::AllReduce, b);
      for (int d = nd - 2; d >= 0; --d) phase(d, Coll::AllGather, shard[d]);
    } else if (c == Coll::AllReduce) {
      for (int d = 0; d < nd; ++d) phase(d, c, b);
    } else if (c == Coll::ReduceScatter) {
      for (int d = 0; d < nd; ++d) { phase(d, c, b); b /= n.dim[d].npus; }
    } else {
      double in = b;  // the all-gather's input: the chunk over every dimension's ranks
      for (int d = 0; d < nd; ++d) in /= n.dim[d].npus;
      for (int d = nd - 1; d >= 0; --d) { in *= n.dim[d].npus; phase(d, c, in); }
    }
    const double sim = astra::flow_shop_ns(pl, pc, pc, n.chunks, 1, false);
    const double closed = physical_collective_s(n, 1.0, span, c, bytes);
    if (pl.n == nd) {
      ASSERT_NEAR(closed, sim, 1e-9 * sim) << "iteration " << it;
    } else {
      ASSERT_LE(closed, sim * (1 + 1e-12)) << "iteration " << it;
      sum_gap += (sim - closed) / sim;
      max_gap = std::max(max_gap, (sim - closed) / sim);
      ++reentrant;
    }
  }
  EXPECT_GT(reentrant, 1000);
  EXPECT_LT(sum_gap / reentrant, 0.001);  // 0.085% on these draws
  EXPECT_LT(max_gap, 0.12);               // 11.1% (15.7% without the bound by the last chunk)
}

TEST(PhysicalCollective, StridedGroupAndPointToPoint) {
  // Two ranks 4 NPUs apart on a 100 GB/s, 100 ns Ring: a logical hop is 4 links, 4 interleaved
  // groups share them: (400 + 10) ns + 1/2 x 1e9 / (2 x 100e9 / 4), twice.
  Network n = one_dim(Topology::Ring, 8, 100, 100, Algo::Ring);
  Span s;
  s.k[0] = 2;
  s.stride[0] = 4;
  EXPECT_NEAR(physical_collective_s(n, 1.0, s, Coll::AllReduce, 1e9), 0.02000082, 1e-12);
  // Point-to-point over a 25 GB/s Switch with 2000 ns hops: 2 hops + 2 endpoint delays + 1e8 / 25e9.
  Network sw = one_dim(Topology::Switch, 8, 25, 2000, Algo::Ring);
  EXPECT_NEAR(physical_p2p_s(sw, 1.0, full_span(sw), 1e8), 4.00402e-3, 1e-12);
}

TEST(PhysicalCollective, MoreBandwidthNeverSlower) {
  for (auto topo : {Topology::Ring, Topology::Switch, Topology::FullyConnected})
    for (auto algo : {Algo::Ring, Algo::Direct, Algo::HalvingDoubling, Algo::DoubleBinaryTree})
      for (auto c : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::AllToAll}) {
        const double slow = coll(one_dim(topo, 8, 50, 500, algo), c, 1e8);
        const double fast = coll(one_dim(topo, 8, 100, 500, algo), c, 1e8);
        EXPECT_GT(slow, 0);
        EXPECT_LT(fast, slow) << int(topo) << " " << int(algo) << " " << int(c);
      }
}

// System 1's shape: Ring dimensions of 4, 8, 4, 8 NPUs (100 GB/s, 100 ns), and its baseline
// layout TP 4, CP 8, DP 8, PP 4.
Network system1_rings() {
  Network n;
  n.ndims = 4;
  const int npus[4] = {4, 8, 4, 8};
  for (int i = 0; i < 4; ++i) n.dim[i] = dim(Topology::Ring, npus[i], 100, 100);
  return n;
}
Workload system1_layout() {
  Workload w;
  w.tp = 4; w.cp = 8; w.dp = 8; w.pp = 4;
  return w;
}

TEST(Placement, StudySystem1Baseline) {
  // System 1: dims of 4, 8, 4, 8 NPUs; TP 4, CP 8, DP 8, PP 4 placed TP innermost.
  Network n = system1_rings();
  Workload w = system1_layout();
  Span s[kNumGroups];
  ASSERT_EQ(place_groups(n, w, s), Reason::Ok);
  EXPECT_EQ(s[int(Group::TP)].k[0], 4);
  EXPECT_EQ(s[int(Group::CP)].k[1], 8);
  EXPECT_EQ(s[int(Group::DP)].k[2], 4);  // DP spans dim 2 and half of dim 3
  EXPECT_EQ(s[int(Group::DP)].k[3], 2);
  EXPECT_EQ(s[int(Group::DP)].stride[3], 1);
  EXPECT_EQ(s[int(Group::PP)].k[3], 4);  // PP takes the rest of dim 3, 2 NPUs apart
  EXPECT_EQ(s[int(Group::PP)].stride[3], 2);
  // 3 does not divide a dimension of 4 evenly.
  w.tp = 3;
  EXPECT_EQ(place_groups(n, w, s), Reason::PlacementMismatch);
}

// Expert parallelism takes the innermost ep ranks of the DP group; the rest of the DP group
// holds the same experts (System 1's DP: 4 on dim 2, 2 on dim 3).
TEST(Placement, ExpertGroupInsideTheDataParallelGroup) {
  Network n = system1_rings();
  Workload w = system1_layout();
  Span s[kNumGroups];
  ASSERT_EQ(place_groups(n, w, s), Reason::Ok);
  const Span& dp = s[int(Group::DP)];
  Span ep, rest;
  ASSERT_TRUE(split_span(dp, n.ndims, 2, ep, rest));  // half of dim 2
  EXPECT_EQ(ep.k[2], 2);
  EXPECT_EQ(ep.stride[2], 1);
  EXPECT_EQ(ep.k[3], 1);
  EXPECT_EQ(rest.k[2], 2);
  EXPECT_EQ(rest.stride[2], 2);  // every other NPU of dim 2
  EXPECT_EQ(rest.k[3], 2);
  EXPECT_EQ(rest.stride[3], 1);
  ASSERT_TRUE(split_span(dp, n.ndims, 8, ep, rest));  // the whole DP group
  EXPECT_EQ(ep.k[2], 4);
  EXPECT_EQ(ep.k[3], 2);
  EXPECT_EQ(span_size(rest, n.ndims), 1);
  ASSERT_TRUE(split_span(dp, n.ndims, 1, ep, rest));
  EXPECT_EQ(span_size(ep, n.ndims), 1);
  EXPECT_EQ(span_size(rest, n.ndims), 8);
  EXPECT_FALSE(split_span(dp, n.ndims, 3, ep, rest));
  EXPECT_FALSE(split_span(dp, n.ndims, 16, ep, rest));  // more than the DP group
}

// network.placement puts the groups in another order, innermost first: here DP, TP, PP, CP on
// the same 4 x 8 x 4 x 8 network (DP 8, TP 4, PP 4, CP 8).
TEST(Placement, OrderOtherThanTheDefault) {
  Network n = system1_rings();
  const Group order[kNumGroups] = {Group::DP, Group::TP, Group::PP, Group::CP};
  for (int i = 0; i < kNumGroups; ++i) n.order[i] = order[i];
  Workload w = system1_layout();
  Span s[kNumGroups];
  ASSERT_EQ(place_groups(n, w, s), Reason::Ok);
  const Span& dp = s[int(Group::DP)];
  const Span& tp = s[int(Group::TP)];
  const Span& pp = s[int(Group::PP)];
  const Span& cp = s[int(Group::CP)];
  // DP (8) takes all of dim 0 (4) and 2 of dim 1, adjacent NPUs.
  EXPECT_EQ(dp.k[0], 4);
  EXPECT_EQ(dp.stride[0], 1);
  EXPECT_EQ(dp.k[1], 2);
  EXPECT_EQ(dp.stride[1], 1);
  // TP (4) takes the other 4 of dim 1, 2 NPUs apart (DP's 2 lie between).
  EXPECT_EQ(tp.k[0], 1);
  EXPECT_EQ(tp.k[1], 4);
  EXPECT_EQ(tp.stride[1], 2);
  // PP (4) takes dim 2; CP (8) dim 3.
  EXPECT_EQ(pp.k[2], 4);
  EXPECT_EQ(pp.stride[2], 1);
  EXPECT_EQ(cp.k[3], 8);
  EXPECT_EQ(cp.k[0] * cp.k[1] * cp.k[2], 1);
}

}  // namespace
}  // namespace cosmic
