// Collective communication time: the Physical convention (cosmic's own model of real
// collectives) and a dispatch to the ASTRA-sim-compatible convention (kernels/astra.hpp).
//
// Physical convention, one dimension (alpha-beta model; shared/reference/analytical-models.md §4, with the
// topology-specific link usage spelled out below). A collective over a group with k ranks in a
// dimension, `stride` NPUs apart, link bandwidth B (bytes/s, per direction, times net_eff),
// per-hop latency a and endpoint delay d per message:
//   Ring topology:  a logical hop spans `stride` physical hops; the ring algorithm sends both
//                   ways round, and `stride` interleaved groups share each link: R = 2B/stride.
//   Switch:         one full-duplex port per NPU, two hops (NPU-switch-NPU) per message: R = B.
//   FullyConnected: a dedicated link to each peer; the ring algorithm uses two of them: R = 2B
//                   (R = B for a group of 2: its one peer is both neighbours, over one link).
// Semantics of `bytes`: the buffer each NPU holds for all-reduce, reduce-scatter, all-to-all
// (input) and the assembled output of all-gather, so that reduce-scatter + all-gather of the
// same `bytes` equals one all-reduce (halving-doubling on a group that is not a power of two
// aside: its reduce-scatter and all-gather each also move the extra rank's 1/k block).
// Multi-dimensional groups: chunks of bytes/chunks flow through a list of per-dimension phases
// (baseline: a full all-reduce in each dimension; bandwidth-aware (Themis, ASTRA-sim
// localBWAware): reduce-scatter inward-out on shrinking shards, all-reduce in the last, then
// all-gathers back). With one chunk in flight per dimension this is a flow shop. Its time is
// taken as the largest, over the dimensions, of the bound each dimension sets:
//   T = max over dims i of (head_i + chunks x load_i + tail_i),
// load_i = the dimension's phase times for one chunk (both visits of a dimension that
// localBWAware re-enters for its all-gather), head_i = the phases of the first chunk before its
// first visit to i, tail_i = those of the last chunk after its last visit. Without re-entry
// (baseline, reduce-scatter, all-gather, all-to-all) this is the textbook (sum of one chunk's
// phases) + (chunks - 1) x (largest load), ASTRA-sim's measured "t0 + S t1"; with re-entry it
// gives ASTRA-sim's measured S (t_RS0 + t_AG0) when dimension 0 is the bottleneck (shared/reference/
// astrasim-semantics.md, Chunking), where the textbook form adds one more chunk's inner phases.
// For localBWAware's all-reduce, dimension j < last serves a chunk's reduce-scatter and, at the
// same size, its all-gather: head_j + tail_j are the reduce-scatters and all-gathers of the
// dimensions below j, so one pass over the dimensions gives T without per-phase arrays (they
// cost the CUDA sweep kernel about 900 bytes of stack). The chunk whose
// reduce-scatter in j ends last has every chunk's reduce-scatter in j behind it and its own inner
// phases and all-gathers ahead (the chunk whose all-gather in j starts first is its mirror
// image), which bounds T by one chunk's phases + (chunks - 1) x its longest phase too: T is the
// larger of the two bounds (model revision 13; the first alone was up to 16% below the flow
// shop where dimension 0 dominates and chunks are few). It is a lower bound of the simulated
// flow shop (kernels/astra.hpp flow_shop_ns, fresh chunks first): tests/test_collective.cpp
// compares the two over random networks (equal without re-entry; below it with re-entry).
// Scheduling policy (LIFO/FIFO) does not enter: ASTRA-sim measured no difference on
// transformer traces (shared/reference/astrasim-semantics.md), and our model issues one collective at a time.
#pragma once

#include <cmath>

#include "kernels/astra.hpp"
#include "kernels/hd.hpp"
#include "kernels/types.hpp"

namespace cosmic {

// Sum over peers j = 1..k-1 of the ring distance min(j, k - j): floor(k^2 / 4).
// (Integer arithmetic and ternaries instead of floor / fmax: they inline on every target and
// keep the hot path free of libm calls.)
COSMIC_HD inline double ring_distance_sum(int32_t k) { return double(int64_t(k) * k / 4); }
COSMIC_HD inline double half_floor(int32_t k) { return double(k / 2); }

COSMIC_HD inline int32_t ceil_log2(int32_t k) {
  int32_t steps = 0;
  while ((int32_t(1) << steps) < k) ++steps;
  return steps;
}

// One phase of a collective inside one dimension, Physical convention. Seconds.
COSMIC_HD inline double phase_time_s(const NetDim& dim, int32_t k, int32_t stride, Algo algo, Coll c,
                                     double bytes, double net_eff, double endpoint_delay_ns) {
  if (k <= 1 || bytes <= 0) return 0.0;
  const double B = dim.link_bw_GBps * 1e9 * net_eff;  // bytes/s per link direction
  const double a = dim.latency_ns * 1e-9;
  const double d = endpoint_delay_ns * 1e-9;
  const double kd = double(k);
  const double st = double(stride);
  const Topology topo = dim.topology;

  // Latency of one logical neighbour step, bandwidth of the logical (bidirectional) ring.
  const double step_lat = topo == Topology::Ring ? st * a : (topo == Topology::Switch ? 2 * a : a);
  const double fc_bw = k > 2 ? 2 * B : B;  // FullyConnected: links to the two ring neighbours
  const double ring_bw = topo == Topology::Ring ? 2 * B / st : (topo == Topology::Switch ? B : fc_bw);

  // Direct exchange with every peer at once: each NPU sends bytes/k to each of k-1 peers.
  // Ring topology: pieces travel the shorter way, so links carry (bytes/k) * sum of distances
  // over 2 outgoing directions; Switch: all pieces leave through one port; FullyConnected: one
  // piece per dedicated link.
  auto direct_once = [&]() -> double {
    if (topo == Topology::Ring)
      return half_floor(k) * step_lat + d + bytes / kd * ring_distance_sum(k) * st / (2 * B);
    if (topo == Topology::Switch) return 2 * a + d + (kd - 1) / kd * bytes / B;
    return a + d + bytes / kd / B;
  };
  // Ring algorithm: k-1 neighbour steps of bytes/k each (reduce-scatter or all-gather).
  auto ring_once = [&]() -> double { return (kd - 1) * (step_lat + d) + (kd - 1) / kd * bytes / ring_bw; };
  // Ring all-to-all: each piece goes the shorter way round, floor(k/2) forwarding steps.
  auto ring_all_to_all = [&]() -> double {
    return half_floor(k) * (step_lat + d) + bytes / kd * ring_distance_sum(k) / ring_bw;
  };
  // Recursive halving (or doubling) over p2, the largest power of two <= k: log2 p2 steps; step
  // j moves bytes/2^(j+1) to the partner 2^j ranks away. On a Ring topology that partner is
  // min(2^j, k-2^j) logical hops away and up to that many flows share a link direction.
  // A k that is not a power of two first folds its k - p2 extra ranks into neighbours and
  // unfolds them after (Thakur, Rabenseifner & Gropp 2005, the simple fold): all-reduce, the
  // whole buffer in and the result out; reduce-scatter, the buffer in and the extra rank's 1/k
  // block out; all-gather, the reverse.
  // Partners half the ring apart (the last step where k is a power of two) split their flows
  // over both ways round, which halves the flows on a link direction (model revision 13; they
  // all went one way: halving-doubling on a Ring of 4 took 2.7x the ring algorithm's time).
  // Without a power of two, the p2 ranks left after the fold are taken as consecutive.
  auto hd_step = [&](double dist, double m) -> double {
    if (topo == Topology::Ring) {
      const double near = dist < kd - dist ? dist : kd - dist;
      const double hops = (near > 1.0 ? near : 1.0) * st;
      return hops * a + d + m * hops / (2 * dist == kd ? 2 * B : B);
    }
    return (topo == Topology::Switch ? 2 * a : a) + d + m / B;
  };
  auto halving_once = [&](int32_t p2) -> double {
    double t = 0;
    for (int32_t j = 0; (int32_t(1) << j) < p2; ++j)
      t += hd_step(double(int64_t(1) << j), bytes / double(int64_t(1) << (j + 1)));
    return t;
  };

  switch (algo) {
    case Algo::Ring:
      if (c == Coll::AllReduce) return 2 * ring_once();
      if (c == Coll::AllToAll) return ring_all_to_all();
      return ring_once();
    case Algo::Direct:
      return c == Coll::AllReduce ? 2 * direct_once() : direct_once();
    case Algo::HalvingDoubling: {
      if (c == Coll::AllToAll) return direct_once();  // no halving form of all-to-all: sent directly
      const int32_t p2 = int32_t(1) << (ceil_log2(k + 1) - 1);  // the largest power of two <= k
      const double fold_in = p2 < k ? hd_step(1, bytes) : 0.0;
      if (c == Coll::AllReduce) return 2 * (fold_in + halving_once(p2));
      return fold_in + halving_once(p2) + (p2 < k ? hd_step(1, bytes / kd) : 0.0);
    }
    case Algo::DoubleBinaryTree: {
      // NCCL-style double binary tree, all-reduce only (other collectives use the ring, as NCCL
      // does): reduce up and broadcast down two trees that each carry half the data, pipelined.
      // Latency 2 ceil(log2 k) steps; each NPU injects about 2 x bytes over its port(s)
      // (shared/reference/analytical-models.md §4: "bandwidth term about 2 S / BW").
      // Two ranks: each tree is a root and a leaf, and each rank sends half the buffer up one
      // tree and half down the other, the ring's all-reduce (model revision 13; the large-k
      // 2 x bytes charged them twice that).
      if (c != Coll::AllReduce) return c == Coll::AllToAll ? ring_all_to_all() : ring_once();
      if (k == 2) return 2 * ring_once();
      const double depth = double(ceil_log2(k));
      const double hop_lat = topo == Topology::Ring ? step_lat * ring_distance_sum(k) / (kd - 1) : step_lat;
      const double inject = topo == Topology::Ring ? 2 * B / (st * ring_distance_sum(k) / (kd - 1))
                                                   : (topo == Topology::Switch ? B : fc_bw);
      return 2 * depth * (hop_lat + d) + 2 * bytes / inject;
    }
  }
  return 0.0;
}

// Number of NPUs in a group's span.
COSMIC_HD inline int64_t span_size(const Span& span, int32_t ndims) {
  int64_t n = 1;
  for (int32_t i = 0; i < ndims; ++i) n *= span.k[i];
  return n;
}

// The node: the network's innermost dimension of more than one NPU (dimension 0 but where a
// dimension of one NPU pads the network, which has no links to fan tokens out over).
COSMIC_HD inline int32_t node_dim(const Network& net) {
  for (int32_t i = 0; i < net.ndims; ++i)
    if (net.dim[i].npus > 1) return i;
  return 0;
}

// Time of collective c over `span`, Physical convention (see the header comment). Seconds.
// `outer_scale` scales what an all-to-all sends through every dimension outside the node
// (node_dim; a dispatch that sends each token once to a node, model.hpp layer_comm); 1: all of it.
COSMIC_HD inline double physical_collective_s(const Network& net, double net_eff, const Span& span, Coll c,
                                              double bytes, double outer_scale = 1.0) {
  int32_t dims[kMaxDims];
  int32_t nd = 0;
  for (int32_t i = 0; i < net.ndims; ++i)
    if (span.k[i] > 1) dims[nd++] = i;
  if (nd == 0 || bytes <= 0) return 0.0;
  // Chunks pipeline the dimensions against each other. A group within one dimension has none to
  // pipeline against: split, its chunks would run one after another, each paying the phase's
  // latency again for the same bandwidth term (chunks x the latency of a decode step's tensor-
  // parallel all-reduce), where a library pipelines the algorithm's own steps, which the phase's
  // formula already counts. So it is sent whole (model revision 13; ASTRA-sim's analytical
  // backend, and the astra-sim convention, split it).
  const int32_t chunks = nd > 1 && net.chunks > 0 ? net.chunks : 1;
  const double chunk = bytes / chunks;

  // Every phase of collective c runs with the dimension's algorithm for c (an all-reduce's
  // reduce-scatter and all-gather phases with its all-reduce algorithm), as ASTRA-sim does: the
  // per-dimension algorithm is chosen per collective.
  auto phase = [&](int32_t j, Coll pc, double b) {
    const int32_t i = dims[j];
    return phase_time_s(net.dim[i], span.k[i], span.stride[i], net.dim[i].algo[int(c)], pc, b, net_eff,
                        net.endpoint_delay_ns);
  };

  if (c == Coll::AllReduce && net.multidim != MultiDim::Baseline) {
    // Re-entrant: max over dimensions of head + chunks x load + tail, and one chunk's phases +
    // (chunks - 1) x the longest phase (header comment).
    double T = 0, around = 0;  // around: the reduce-scatters and all-gathers below dimension j
    double longest = 0;
    double b = chunk;
    for (int32_t j = 0; j + 1 < nd; ++j) {
      const double rs = phase(j, Coll::ReduceScatter, b), ag = phase(j, Coll::AllGather, b);
      T = astra::max2(T, around + chunks * (rs + ag));
      longest = astra::max2(longest, astra::max2(rs, ag));
      around += rs + ag;
      b /= span.k[dims[j]];
    }
    const double last = phase(nd - 1, Coll::AllReduce, b);
    T = astra::max2(T, around + chunks * last);
    return astra::max2(T, around + last + (chunks - 1) * astra::max2(longest, last));
  }
  // One phase per dimension: the sum of one chunk's phases + (chunks - 1) x the largest.
  double sum = 0, worst = 0;
  auto add = [&](double t) {
    sum += t;
    worst = astra::max2(worst, t);
  };
  if (c == Coll::AllToAll || c == Coll::AllReduce) {
    const int32_t node = node_dim(net);
    for (int32_t j = 0; j < nd; ++j)  // full chunk in every dimension
      add(phase(j, c, dims[j] > node && c == Coll::AllToAll ? chunk * outer_scale : chunk));
  } else if (c == Coll::ReduceScatter) {
    double b = chunk;
    for (int32_t j = 0; j < nd; ++j) { add(phase(j, c, b)); b /= span.k[dims[j]]; }
  } else {  // AllGather: outermost first, growing back to the full output
    double b = chunk;
    for (int32_t j = 0; j + 1 < nd; ++j) b /= span.k[dims[j]];
    for (int32_t j = nd - 1; j >= 0; --j) { add(phase(j, c, b)); if (j > 0) b *= span.k[dims[j - 1]]; }
  }
  return sum + (chunks - 1) * worst;
}

// Which collective conventions an instantiation of the model can run (a template parameter of
// collective_time_s, evaluate and the scoring functions above them):
//   Any       dispatch on Network::convention at run time (the default; host code uses it);
//   Physical  the Physical convention only. The ASTRA-sim flow shop (kernels/astra.hpp, about
//             2 KB of local arrays per call) is not compiled in, which is what the CUDA kernels
//             gain. Assumption the caller must guarantee: every configuration it scores has
//             convention == Physical (the CUDA hosts check the batch or the space's base
//             configuration before they pick this instantiation; no PSA gene sets the
//             convention). Its results are then the same doubles as Any's.
enum class Conventions : int8_t { Any = 0, Physical = 1 };

// Time of collective c of `bytes` over `span` under the network's convention. Seconds.
// `outer_scale`: physical_collective_s's (the ASTRA-sim convention has no such dispatch: ignored).
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline double collective_time_s(const Network& net, const Compute& compute, const Calibration& cal,
                                          const Span& span, Coll c, double bytes, int64_t system_npus,
                                          double outer_scale = 1.0) {
  if constexpr (kConv == Conventions::Any) {
    if (net.convention == Convention::AstraSim) {
      // ASTRA-sim's all-gather size is the per-rank input; ours is the assembled output.
      const double d = c == Coll::AllGather ? bytes / double(span_size(span, net.ndims)) : bytes;
      return astra::collective_ns(net, compute.mem_bw_GBps, span, c, d, system_npus) * 1e-9;
    }
  }
  return physical_collective_s(net, cal.net_eff, span, c, bytes, outer_scale);
}

// One point-to-point message between neighbouring members of a group (pipeline stages),
// Physical convention: it crosses the innermost dimension the group spans. All stage pairs send
// at once, so on a Ring `stride` flows share each link. Seconds.
COSMIC_HD inline double physical_p2p_s(const Network& net, double net_eff, const Span& span, double bytes) {
  for (int32_t i = 0; i < net.ndims; ++i) {
    if (span.k[i] <= 1) continue;
    const NetDim& dim = net.dim[i];
    const double B = dim.link_bw_GBps * 1e9 * net_eff;
    const double st = double(span.stride[i]);
    const double lat = dim.latency_ns * 1e-9 * (dim.topology == Topology::Ring ? st : (dim.topology == Topology::Switch ? 2 : 1));
    const double bw = dim.topology == Topology::Ring ? B / st : B;
    return lat + 2 * net.endpoint_delay_ns * 1e-9 + bytes / bw;
  }
  return 0.0;
}

// The same message under the network's convention (the ASTRA-sim one: kernels/astra.hpp p2p_ns).
// Seconds.
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline double p2p_time_s(const Network& net, double net_eff, const Span& span, double bytes) {
  if constexpr (kConv == Conventions::Any) {
    if (net.convention == Convention::AstraSim) return astra::p2p_ns(net, span, bytes) * 1e-9;
  }
  return physical_p2p_s(net, net_eff, span, bytes);
}

}  // namespace cosmic
