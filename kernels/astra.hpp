// ASTRA-sim-2.x-compatible collective timing (the AstraSim convention), header-only, host and
// device.
//
// Source of every rule below: shared/reference/astrasim-semantics.md ("the doc"), whose
// rules were read from ASTRA-sim 2.x's analytical backend; section names of the doc are quoted
// in the comments ([Units], [Network], [Chunking], [Per-phase]). Where the doc is silent, the
// comment says "assumption" and what the choice was checked against
// (data/validation/astrasim-collectives-dev.csv, "the CSV").
//
// Cost: O(phases^2 x chunks) with chunks capped at kMaxSimChunks (see flow_shop_ns), plus
// O(log p) per halving-doubling phase. No heap, no containers, no exceptions; fixed arrays only.
//
// How a parallel group maps onto `Span` (what the caller must do):
//   span.k[d] = ranks of the group along dim d (1 = not crossed), span.stride[d] = NPUs between
//   consecutive group members along d. The group is "the whole system" when k[d] == npus[d] for
//   every dim. Only then does ASTRA-sim use the configured per-dim algorithms and the multi-dim
//   phase lists (baseline / localBWAware). A smaller group (a TP or DP group of a trace) is run
//   by ASTRA-sim 2.x as ONE phase of the RING algorithm on a 1-D ring of the group's NPUs,
//   whatever algorithm is configured (the doc's [Chunking] last bullet; ASTRA-sim 2.x
//   CommunicatorGroup::get_collective_plan builds a RingTopology with CollectiveImplType::Ring
//   for groups smaller than total_nodes). SubgroupRule::WholeDims is an opt-in alternative that
//   treats a group covering whole dims as a multi-dim collective over the crossed dims only.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/types.hpp"

namespace cosmic {
namespace astra {

// Chunks simulated exactly by the flow shop; more are extrapolated at the steady-state period.
// (Overridable for accuracy checks; the per-thread stack grows with it.)
#ifndef COSMIC_ASTRA_MAX_SIM_CHUNKS
#define COSMIC_ASTRA_MAX_SIM_CHUNKS 64
#endif
constexpr int kMaxSimChunks = COSMIC_ASTRA_MAX_SIM_CHUNKS;
// Phases of one chunk: localBWAware all-reduce over n dims has 2n - 1.
constexpr int kMaxPhases = 2 * kMaxDims - 1;
// Slots per dimension simulated (active-chunks-per-dimension beyond this behave as this many).
constexpr int kMaxSlots = 8;
// [Units] network GB = 2^30 bytes.
constexpr double kBytesPerNetGB = 1073741824.0;

enum class SubgroupRule : int8_t {
  AstraRing = 0,  // ASTRA-sim 2.x: any group smaller than the system is a 1-D ring, ring algorithm
  WholeDims = 1,  // opt-in: a group that covers whole dims runs the multi-dim phase list on them
};

// ---------------------------------------------------------------------------------------------
// Message and reduction costs.

// [Units] serialization time m / B with B = bw x 2^30 / 1e9 bytes per ns. Written as
// m x 1e9 / (bw x 2^30) so that an exactly integral quotient (the usual case for power-of-two
// sizes) is computed exactly and the floor below does not drop a nanosecond.
COSMIC_HD inline double ser_ns(double msg_bytes, double link_bw_GBps) {
  return msg_bytes * 1e9 / (link_bw_GBps * kBytesPerNetGB);
}

// [Network] hops of one message: Ring = shorter way round, Switch = 2, FullyConnected = 1.
// `offset` is the coordinate difference along the dim (only used for Ring).
COSMIC_HD inline int64_t hops(Topology topo, int64_t p, int64_t offset) {
  if (topo == Topology::Switch) return 2;
  if (topo == Topology::FullyConnected) return 1;
  int64_t o = p > 0 ? offset % p : offset;
  if (o < 0) o += p;
  const int64_t other = p - o;
  return o < other ? o : other;
}

// [Network] one message of m bytes over h hops of a dim.
//   unaware: floor(h L + m/B) (messages never share bandwidth);
//   aware:   store-and-forward, h x floor(L + m/B) (a Switch message is 2 floor(L + m/B)).
COSMIC_HD inline double msg_ns(double msg_bytes, int64_t h, double latency_ns, double link_bw_GBps,
                               bool aware) {
  const double s_ns = ser_ns(msg_bytes, link_bw_GBps);
  if (aware) return double(h) * std::floor(latency_ns + s_ns);
  return std::floor(double(h) * latency_ns + s_ns);
}

// [Per-phase] local reduction R(m) = 3 floor(m / M), M = local memory bandwidth in bytes/ns
// (decimal GB/s == bytes/ns). Assumption: M <= 0 means "no reduction cost".
COSMIC_HD inline double reduce_ns(double msg_bytes, double mem_Bpns) {
  if (!(mem_Bpns > 0)) return 0.0;
  return 3.0 * std::floor(msg_bytes / mem_Bpns);
}

// ---------------------------------------------------------------------------------------------
// One phase of one chunk.

struct PhaseCost {
  double t_ns = 0;     // time of the phase for one chunk alone
  double ser_ns = 0;   // serialization of its first message (aware: start stagger on shared links)
  double busy_ns = 0;  // serialization time the busiest link of the dim carries for this chunk
};

// Ring algorithm, p ranks, message m, per-message time T_ns ([Per-phase] table, "ring" rows):
//   all-reduce     d + 2(p-1)(T + d) + (p-1) R(m)
//   reduce-scatter d + (p-1)(T + d) + (p-1) R(m)
//   all-gather     d + (p-1)(T + d)               (m is the shard)
//   all-to-all     d + p(p-1)/2 (T + d)
// Link load: every ring step puts one message on each link (also each NPU-switch port).
COSMIC_HD inline PhaseCost ring_phase(Coll kind, int64_t p, double m_bytes, double T_ns, double s_ns,
                                      double d_ns, double mem_Bpns) {
  PhaseCost pc;
  const double pm1 = double(p - 1);
  double steps = 0;
  switch (kind) {
    case Coll::AllReduce:
      steps = 2 * pm1;
      pc.t_ns = d_ns + steps * (T_ns + d_ns) + pm1 * reduce_ns(m_bytes, mem_Bpns);
      break;
    case Coll::ReduceScatter:
      steps = pm1;
      pc.t_ns = d_ns + steps * (T_ns + d_ns) + pm1 * reduce_ns(m_bytes, mem_Bpns);
      break;
    case Coll::AllGather:
      steps = pm1;
      pc.t_ns = d_ns + steps * (T_ns + d_ns);
      break;
    case Coll::AllToAll:
    default:
      steps = double(p) * pm1 / 2;
      pc.t_ns = d_ns + steps * (T_ns + d_ns);
      break;
  }
  pc.ser_ns = s_ns;
  pc.busy_ns = steps * s_ns;
  return pc;
}

// Direct algorithm ([Per-phase] "direct" rows): every peer at once.
//   all-to-all 2d + T;  reduce-scatter 2d + T + R(m);  all-gather 2d + T (m = shard);
//   all-reduce 3d + 2T + R(m) (the doc's "about"; exact to the ns for all-reduce on Switch and
//   FullyConnected).
// T, unaware: the farthest peer, floor(h_max L + m/B) (h_max = floor(p/2) on a Ring). Within
// tolerance of the CSV, not exact: its Ring all-reduce rows are 0.02-0.08% below this, and its
// S = 1 all-gather, reduce-scatter and all-to-all rows on Ring and Switch 0.015-0.24% above it
// (ASTRA-sim adds a few latencies the doc does not explain; docs/astrasim-mode.md).
// T, aware (assumption, fitted to the CSV's aware direct rows, not stated in the doc): peers
// share links, so the phase lasts as long as its busiest link needs:
//   FullyConnected: one dedicated link per peer: floor(L + m/B) (exact in the CSV);
//   Switch: the p-1 messages leave through one port, the last one is stored and forwarded once
//           more: floor(2L + p m/B) (exact in the CSV);
//   Ring: with q = floor(p/2) and shortest-way routing (ties one way), the busiest direction of a
//         link carries q(q+1)/2 messages: floor(q L + q(q+1)/2 m/B) (0.02% above the CSV).
COSMIC_HD inline PhaseCost direct_phase(Coll kind, const NetDim& nd, int64_t p, double data_bytes,
                                        bool aware, double d_ns, double mem_Bpns) {
  const double m = kind == Coll::AllGather ? data_bytes : std::floor(data_bytes / double(p));
  const double s_ns = ser_ns(m, nd.link_bw_GBps);
  const double L = nd.latency_ns;
  double T = 0, load = 1;
  if (nd.topology == Topology::Ring) {
    const double q = double(p / 2);
    load = q * (q + 1) / 2;
    T = aware ? std::floor(q * L + load * s_ns) : std::floor(q * L + s_ns);
  } else if (nd.topology == Topology::Switch) {
    load = double(p - 1);
    T = aware ? std::floor(2 * L + double(p) * s_ns) : std::floor(2 * L + s_ns);
  } else {
    T = std::floor(L + s_ns);
  }
  PhaseCost pc;
  pc.ser_ns = s_ns;
  pc.busy_ns = load * s_ns;
  switch (kind) {
    case Coll::AllReduce:
      pc.t_ns = 3 * d_ns + 2 * T + reduce_ns(m, mem_Bpns);
      pc.busy_ns *= 2;
      break;
    case Coll::ReduceScatter:
      pc.t_ns = 2 * d_ns + T + reduce_ns(m, mem_Bpns);
      break;
    default:  // all-gather, all-to-all
      pc.t_ns = 2 * d_ns + T;
      break;
  }
  return pc;
}

// max without libm's NaN handling (fmax is a library call on the host): inputs are never NaN.
COSMIC_HD inline double max2(double a, double b) { return a > b ? a : b; }

COSMIC_HD inline bool is_pow2(int64_t p) { return p >= 1 && (p & (p - 1)) == 0; }

// Halving-doubling, p = 2^k ([Per-phase] "halvingDoubling" row):
//   all-reduce (2k+1) d + 2 sum_{j<k} T(C/2^(j+1), hops(2^j)) + sum_{i=2..k} R(C/2^i),
//   hops(2^j) on a Ring = min(2^j, p - 2^j). Exact to the ns on all six CSV rows (aware = per-hop
//   store-and-forward via msg_ns, no extra contention).
// Assumptions (no CSV rows): reduce-scatter = the halving half, (k+1) d + sum_j T + the same R
// terms; all-gather = the doubling half on the shard s, (k+1) d + sum_j T(p s / 2^(j+1), hops(2^j)).
// Link load for the aware link bound: a step at ring distance h loads a link with h messages.
COSMIC_HD inline PhaseCost hd_phase(Coll kind, const NetDim& nd, int64_t p, double data_bytes,
                                    bool aware, double d_ns, double mem_Bpns) {
  int k = 0;
  while ((int64_t(1) << k) < p) ++k;
  const double full = kind == Coll::AllGather ? data_bytes * double(p) : data_bytes;
  double sumT = 0, sumR = 0, busy = 0, first_ser = 0;
  for (int j = 0; j < k; ++j) {
    const double m = std::floor(full / double(int64_t(1) << (j + 1)));
    const int64_t h = hops(nd.topology, p, int64_t(1) << j);
    const double s_ns = ser_ns(m, nd.link_bw_GBps);
    if (j == 0) first_ser = s_ns;
    sumT += msg_ns(m, h, nd.latency_ns, nd.link_bw_GBps, aware);
    busy += (nd.topology == Topology::Ring ? double(h) : 1.0) * s_ns;
  }
  for (int i = 2; i <= k; ++i) sumR += reduce_ns(std::floor(full / double(int64_t(1) << i)), mem_Bpns);
  PhaseCost pc;
  pc.ser_ns = first_ser;
  if (kind == Coll::AllReduce) {
    pc.t_ns = double(2 * k + 1) * d_ns + 2 * sumT + sumR;
    pc.busy_ns = 2 * busy;
  } else if (kind == Coll::ReduceScatter) {
    pc.t_ns = double(k + 1) * d_ns + sumT + sumR;
    pc.busy_ns = busy;
  } else {  // all-gather
    pc.t_ns = double(k + 1) * d_ns + sumT;
    pc.busy_ns = busy;
  }
  return pc;
}

// log2 of an integer p >= 1 with + - * / alone, so that host and device compute the same double
// (libm's log2 may differ in the last bit between glibc and CUDA, and the floor() in dim_phase
// would carry that into whole nanoseconds). p = 2^e m with m in [1, 2), and
// log2 m = 2 atanh(s) / ln 2, s = (m - 1) / (m + 1) <= 1/3: 30 terms of s^k / k (k odd) leave a
// remainder below 1e-29. Within a few ulp of std::log2; exact for powers of two (s = 0).
COSMIC_HD inline double log2_int(int64_t p) {
  int e = 0;
  double m = double(p);
  while (m >= 2.0) {  // halving is exact
    m *= 0.5;
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double term = s, sum = 0.0;
  for (int k = 1; k < 60; k += 2) {
    sum += term / double(k);
    term *= s2;
  }
  return double(e) + 2.0 * sum / 0.6931471805599453;  // ln 2
}

// Double binary tree: NOT modelled. The doc gives only measured ratios to the ring all-reduce
// (3.1x at p = 8, 6x at p = 64); we return the ring time times that ratio, interpolated in
// log2 p (clamped to >= 1). modelled() reports false for it; the CSV rows are listed as
// unmodelled by the test.
COSMIC_HD inline double dbt_ratio(int64_t p) {
  const double r = 3.1 + (6.0 - 3.1) * (log2_int(p) - 3.0) / 3.0;
  return r < 1.0 ? 1.0 : r;
}

// Cost of one phase of a system-wide multi-dim collective on dim `nd` (p = nd.npus).
// Assumptions: ASTRA-sim has halving-doubling and double-binary-tree only for all-reduce-style
// phases; all-to-all with them, halving-doubling with p not a power of two, and double binary
// tree in reduce-scatter / all-gather phases fall back to the ring algorithm.
COSMIC_HD inline PhaseCost dim_phase(Coll kind, Algo algo, const NetDim& nd, double data_bytes,
                                     bool aware, double d_ns, double mem_Bpns) {
  const int64_t p = nd.npus;
  if (algo == Algo::Direct) return direct_phase(kind, nd, p, data_bytes, aware, d_ns, mem_Bpns);
  if (algo == Algo::HalvingDoubling && kind != Coll::AllToAll && is_pow2(p))
    return hd_phase(kind, nd, p, data_bytes, aware, d_ns, mem_Bpns);
  // Ring algorithm on the dim's own ring: neighbours are adjacent (offset 1).
  const double m = kind == Coll::AllGather ? data_bytes : std::floor(data_bytes / double(p));
  const double T = msg_ns(m, hops(nd.topology, p, 1), nd.latency_ns, nd.link_bw_GBps, aware);
  PhaseCost pc = ring_phase(kind, p, m, T, ser_ns(m, nd.link_bw_GBps), d_ns, mem_Bpns);
  if (algo == Algo::DoubleBinaryTree && kind == Coll::AllReduce) pc.t_ns = std::floor(pc.t_ns * dbt_ratio(p));
  return pc;
}

// ---------------------------------------------------------------------------------------------
// The phase list of one chunk.

enum class SizeStep : int8_t { Keep = 0, Divide = 1, Multiply = 2 };  // data size after the phase

struct Plan {
  int n = 0;
  bool subgroup = false;          // one phase, 1-D ring of the group's ranks
  Coll coll = Coll::AllReduce;    // the collective; selects each dim's algorithm (algo[coll])
  int8_t dim[kMaxPhases] = {};    // dim (= server of the flow shop) of each phase
  Coll kind[kMaxPhases] = {};
  SizeStep step[kMaxPhases] = {};
  // Subgroup ring: group size, lowest crossed dim, hops of its worst message in each crossed dim.
  int64_t group_p = 1;
  int lowest = 0;
  int64_t sub_hops[kMaxDims] = {};
};

// [Chunking] phase lists (dims of size 1 / not crossed skipped), over the dims in `dims`:
//   all-reduce baseline:   all-reduce on the full chunk in each dim, low to high;
//   all-reduce localBWAware: reduce-scatter dims 0..n-2 (shrinking), all-reduce in the last dim,
//                          all-gather dims n-2..0 (growing);
//   reduce-scatter: dims 0..n-1 shrinking;  all-gather: dims n-1..0 growing;
//   all-to-all: every dim on the full chunk (low to high; assumption, order does not matter for
//   a single collective without re-entry).
COSMIC_HD inline void multidim_plan(Plan& pl, const int* dims, int nd, Coll c, MultiDim md) {
  pl.n = 0;
  auto add = [&pl](int d, Coll k, SizeStep s) {
    pl.dim[pl.n] = int8_t(d);
    pl.kind[pl.n] = k;
    pl.step[pl.n] = s;
    ++pl.n;
  };
  if (c == Coll::AllReduce && md == MultiDim::BWAware) {
    for (int i = 0; i + 1 < nd; ++i) add(dims[i], Coll::ReduceScatter, SizeStep::Divide);
    add(dims[nd - 1], Coll::AllReduce, SizeStep::Keep);
    for (int i = nd - 2; i >= 0; --i) add(dims[i], Coll::AllGather, SizeStep::Multiply);
  } else if (c == Coll::ReduceScatter) {
    for (int i = 0; i < nd; ++i) add(dims[i], Coll::ReduceScatter, SizeStep::Divide);
  } else if (c == Coll::AllGather) {
    for (int i = nd - 1; i >= 0; --i) add(dims[i], Coll::AllGather, SizeStep::Multiply);
  } else {  // baseline all-reduce, all-to-all
    for (int i = 0; i < nd; ++i) add(dims[i], c, SizeStep::Keep);
  }
}

// Builds the plan from the span. Returns false if the group has a single rank (nothing to do).
COSMIC_HD inline bool make_plan(Plan& pl, const Network& net, const Span& span, Coll c,
                                SubgroupRule rule) {
  int crossed[kMaxDims];
  int nc = 0;
  bool whole_system = true, whole_dims = true;
  int64_t group = 1;
  for (int d = 0; d < net.ndims; ++d) {
    const int32_t k = span.k[d];
    if (k != net.dim[d].npus) whole_system = false;
    if (k > 1) {
      crossed[nc++] = d;
      group *= k;
      if (k != net.dim[d].npus) whole_dims = false;
    }
  }
  if (nc == 0 || group <= 1) return false;
  pl.coll = c;
  pl.subgroup = !(whole_system || (rule == SubgroupRule::WholeDims && whole_dims));
  if (!pl.subgroup) {
    multidim_plan(pl, crossed, nc, c, net.multidim);
    return true;
  }
  // [Chunking] last bullet: a group smaller than the system runs as one phase on a 1-D ring of
  // its ranks (ring algorithm). Ring order: group rank r = x_a + k_a x_b + ... over the crossed
  // dims, lowest fastest. Consecutive ranks and the closing pair (last -> first) always differ
  // in the lowest crossed dim `a` ([Network]: "charged only in the lowest differing dim"), so
  // unaware messages use dim a's bandwidth, latency and topology. Worst message in dim e: the
  // larger of a one-step move (stride_e) and the wrap-around move ((k_e - 1) stride_e).
  pl.n = 1;
  pl.dim[0] = int8_t(crossed[0]);
  pl.kind[0] = c;
  pl.step[0] = SizeStep::Keep;
  pl.group_p = group;
  pl.lowest = crossed[0];
  for (int d = 0; d < kMaxDims; ++d) pl.sub_hops[d] = 0;
  for (int i = 0; i < nc; ++i) {
    const int e = crossed[i];
    const NetDim& nd = net.dim[e];
    const int64_t s = span.stride[e] > 0 ? span.stride[e] : 1;
    const int64_t h1 = hops(nd.topology, nd.npus, s);
    const int64_t h2 = hops(nd.topology, nd.npus, (int64_t(span.k[e]) - 1) * s);
    pl.sub_hops[e] = h1 > h2 ? h1 : h2;
  }
  return true;
}

// Phase costs of one chunk of x_bytes.
COSMIC_HD inline void plan_costs(const Plan& pl, const Network& net, double x_bytes, bool aware,
                                 double mem_Bpns, PhaseCost* out) {
  const double d_ns = net.endpoint_delay_ns;
  if (pl.subgroup) {
    const NetDim& na = net.dim[pl.lowest];
    const int64_t p = pl.group_p;
    const Coll c = pl.kind[0];
    const double m = c == Coll::AllGather ? x_bytes : std::floor(x_bytes / double(p));
    double T = msg_ns(m, pl.sub_hops[pl.lowest], na.latency_ns, na.link_bw_GBps, aware);
    if (aware) {
      // [Network] aware: multi-dim routes go dimension by dimension, so the closing message
      // (which differs in every crossed dim) pays each crossed dim. Assumption: the ring steps
      // at the pace of that slowest message.
      T = 0;
      for (int e = 0; e < net.ndims; ++e)
        if (pl.sub_hops[e] > 0)
          T += msg_ns(m, pl.sub_hops[e], net.dim[e].latency_ns, net.dim[e].link_bw_GBps, true);
    }
    out[0] = ring_phase(c, p, m, T, ser_ns(m, na.link_bw_GBps), d_ns, mem_Bpns);
    return;
  }
  double s = x_bytes;
  for (int j = 0; j < pl.n; ++j) {
    const NetDim& nd = net.dim[pl.dim[j]];
    // The phases of a localBWAware all-reduce use the dim's all-reduce algorithm (ASTRA-sim
    // takes the per-dim implementation list of the collective, not of the phase type).
    out[j] = dim_phase(pl.kind[j], nd.algo[int(pl.coll)], nd, s, aware, d_ns, mem_Bpns);
    if (pl.step[j] == SizeStep::Divide) s = std::floor(s / double(nd.npus));
    if (pl.step[j] == SizeStep::Multiply) s = s * double(nd.npus);
  }
}

// ---------------------------------------------------------------------------------------------
// [Chunking] flow shop: each dim is a server with `slots` (active-chunks-per-dimension) places;
// chunks walk their phase lists; a dim serves waiting chunks in order of arrival in its queue
// (all chunks arrive at dim 0 at t = 0, so fresh chunks precede chunks re-entering dim 0 for
// localBWAware all-gathers; checked against the CSV's 2-D localBWAware rows, where the order
// decides the aware result). Non-preemptive; ties by chunk, then phase.
// Aware mode (assumption fitted to the CSV's active-chunks = 2 rows, exact on all six): chunks
// sharing a dim's links cannot inject their first messages together, so consecutive starts on a
// dim are at least one first-message serialization apart.
// Simulates n <= kMaxSimChunks chunks; chunk n-1 uses `last` costs.
COSMIC_HD inline double flow_shop_ns(const Plan& pl, const PhaseCost* full, const PhaseCost* last,
                                     int n, int slots, bool aware) {
  // chunk_fin[k]: finish of chunk k's latest scheduled phase. Phases of a chunk are scheduled in
  // order, so when phase j is a candidate for chunk k this is the finish of its phase j-1.
  double chunk_fin[kMaxSimChunks];
  int head[kMaxPhases];
  for (int k = 0; k < n; ++k) chunk_fin[k] = 0;
  double slot_free[kMaxDims][kMaxSlots];
  double last_start[kMaxDims];
  for (int j = 0; j < pl.n; ++j) head[j] = 0;
  for (int d = 0; d < kMaxDims; ++d) {
    last_start[d] = -1e300;
    for (int s = 0; s < slots; ++s) slot_free[d][s] = 0;
  }
  double makespan = 0;
  for (int step = 0; step < pl.n * n; ++step) {
    int bj = -1, bslot = 0;
    double bstart = 0, bentry = 0;
    for (int j = 0; j < pl.n; ++j) {
      const int k = head[j];
      if (k >= n) continue;
      if (j > 0 && head[j - 1] <= k) continue;  // chunk k has not been scheduled in phase j-1
      const double entry = j == 0 ? 0.0 : chunk_fin[k];
      const int d = pl.dim[j];
      int sl = 0;
      for (int s = 1; s < slots; ++s)
        if (slot_free[d][s] < slot_free[d][sl]) sl = s;
      double start = max2(entry, slot_free[d][sl]);
      if (aware) start = max2(start, last_start[d] + (k == n - 1 ? last[j] : full[j]).ser_ns);
      const bool better = bj < 0 || start < bstart ||
                          (start == bstart && (entry < bentry || (entry == bentry && k < head[bj])));
      if (better) {
        bj = j;
        bslot = sl;
        bstart = start;
        bentry = entry;
      }
    }
    if (bj < 0) break;  // cannot happen for a consistent plan
    const int k = head[bj];
    const int d = pl.dim[bj];
    const double f = bstart + (k == n - 1 ? last[bj] : full[bj]).t_ns;
    chunk_fin[k] = f;
    slot_free[d][bslot] = f;
    last_start[d] = bstart;
    ++head[bj];
    makespan = max2(makespan, f);
  }
  return makespan;
}

// ---------------------------------------------------------------------------------------------
// The public entry points.

// A point-to-point message (pipeline stages) between neighbouring members of a group: one
// message of the [Network] rule (GB = 2^30 bytes, whole ns, no net_eff) in the innermost dim the
// group spans, over the hops of the group's stride there (Ring: the shorter way), plus the
// endpoint delay at both ends (assumption: the reference times collectives, not send / recv;
// the Physical convention's p2p pays 2 d too). Nanoseconds.
COSMIC_HD inline double p2p_ns(const Network& net, const Span& span, double bytes) {
  for (int d = 0; d < net.ndims; ++d) {
    if (span.k[d] <= 1) continue;
    const NetDim& nd = net.dim[d];
    const int64_t h = hops(nd.topology, nd.npus, span.stride[d]);
    return msg_ns(std::floor(bytes), h, nd.latency_ns, nd.link_bw_GBps, net.congestion_aware) +
           2 * net.endpoint_delay_ns;
  }
  return 0.0;
}

// True when every phase uses an algorithm modelled from the doc (not double binary tree, not
// halving-doubling on a non-power-of-two dim, which fall back to approximations).
COSMIC_HD inline bool modelled(const Network& net, const Span& span, Coll c,
                               SubgroupRule rule = SubgroupRule::AstraRing) {
  Plan pl;
  if (!make_plan(pl, net, span, c, rule) || pl.subgroup) return true;
  for (int j = 0; j < pl.n; ++j) {
    const NetDim& nd = net.dim[pl.dim[j]];
    const Algo a = nd.algo[int(pl.coll)];
    if (a == Algo::DoubleBinaryTree && pl.kind[j] == Coll::AllReduce) return false;
    if (a == Algo::HalvingDoubling && pl.kind[j] != Coll::AllToAll && !is_pow2(nd.npus)) return false;
  }
  return true;
}

// Time in ns of one collective c of `bytes` (all-gather: per-rank input; else the buffer each
// rank holds) over the group `span` of a system of `system_npus` NPUs, ASTRA-sim 2.x analytical
// backend semantics. local_mem_bw_GBps: decimal GB/s (= bytes/ns), the doc's M.
// Integer-valued wherever ASTRA-sim floors (all CSV cases); chunk counts above kMaxSimChunks
// are extrapolated (rounded to the ns).
// Out of line on the device (kernels/hd.hpp): the model calls it from up to nine places, and
// each inlined copy carried its own plan, phase-cost and flow-shop arrays (about 2 KB).
COSMIC_HD COSMIC_DEVICE_NOINLINE inline double collective_ns(const Network& net, double local_mem_bw_GBps,
                                                             const Span& span, Coll c, double bytes,
                                                             int64_t system_npus,
                                                             SubgroupRule rule = SubgroupRule::AstraRing) {
  if (!(bytes > 0)) return 0.0;
  Plan pl;
  if (!make_plan(pl, net, span, c, rule)) return 0.0;
  const bool aware = net.congestion_aware;
  const double mem_Bpns = local_mem_bw_GBps;  // decimal GB/s == bytes/ns

  // [Chunking] C = floor(D/S); if not all-gather and C < N_total then C = N_total; chunks =
  // ceil(D/C). Assumption (as ASTRA-sim's split loop): the last chunk carries the remainder.
  const double D = std::floor(bytes);
  if (D < 1) return 0.0;  // nothing to send (a sub-byte payload floors to zero bytes)
  const double S = net.chunks > 0 ? double(net.chunks) : 1.0;
  double C = std::floor(D / S);
  if (c != Coll::AllGather && C < double(system_npus)) C = double(system_npus);
  if (C < 1) C = 1;
  if (C > D) C = D;
  const double nchunks = std::ceil(D / C);
  const double last_bytes = D - (nchunks - 1) * C;

  PhaseCost full[kMaxPhases], last[kMaxPhases];
  plan_costs(pl, net, C, aware, mem_Bpns, full);
  plan_costs(pl, net, last_bytes, aware, mem_Bpns, last);

  int slots = net.active_chunks < 1 ? 1 : net.active_chunks;
  if (slots > kMaxSlots) slots = kMaxSlots;

  double t_ns;
  if (nchunks <= double(kMaxSimChunks)) {
    t_ns = flow_shop_ns(pl, full, last, int(nchunks), slots, aware);
  } else {
    // Assumption: beyond kMaxSimChunks the schedule is periodic; extend the last half's period
    // over the remaining chunks, counting the (smaller) last chunk by its share of C.
    const int half = kMaxSimChunks / 2;
    const double t_cap = flow_shop_ns(pl, full, full, kMaxSimChunks, slots, aware);
    const double t_half = flow_shop_ns(pl, full, full, half, slots, aware);
    const double n_eff = nchunks - 1 + last_bytes / C;
    t_ns = std::floor(t_cap + (n_eff - double(kMaxSimChunks)) * (t_cap - t_half) / double(half) + 0.5);
  }

  if (aware) {
    // Aware link bound (assumption fitted to the CSV's Ring / FullyConnected active-chunks = 2
    // rows, exact on all four): chunks in flight together share each link, so a dim takes at
    // least the serialization its busiest link carries for all chunks, plus one latency and the
    // two endpoint delays of the last message. Never binding with one slot per dim.
    for (int d = 0; d < net.ndims; ++d) {
      double busy = 0;
      bool used = false;
      for (int j = 0; j < pl.n; ++j)
        if (pl.dim[j] == d) {
          busy += (nchunks - 1) * full[j].busy_ns + last[j].busy_ns;
          used = true;
        }
      if (used)
        t_ns = max2(t_ns, std::floor(busy + net.dim[d].latency_ns + 2 * net.endpoint_delay_ns));
    }
  }
  return t_ns;
}

}  // namespace astra
}  // namespace cosmic
