// Network dollar cost with LIBRA unit costs (shared/reference/cosmic-study.md §4).
//
// Unit prices are dollars per GB/s of per-link bandwidth, by tier. Dimensions map to tiers from
// the outside in: the outermost dimension is the pod tier (the only one with a NIC price), the
// next the node tier, then package, then chiplet: 1 dim = [node]; 2 = [node, pod];
// 3 = [package, node, pod]; 4 = [chiplet, package, node, pod]. With more than 4 dimensions the
// extra inner ones are priced as chiplet tiers (our extension; the study has 4).
// Cost of one block of a dimension with n NPUs and per-link bandwidth b:
//   Ring 2 n link b;  FullyConnected n (n-1) link b;  Switch 2 n link b + n switch b (+ n nic b).
// Total = sum over dims of (NPUs / n_d) x block cost; a dimension of one NPU costs nothing (our
// reading: it has no links; the study's spaces have none). The chiplet tier has no switch price: a
// Switch there makes the cost undefined (Reason::SwitchNotPriced), as in the study's constraint.
// The total is rounded to whole cents (model revision 6): a per-link bandwidth given per NPU
// (900 / 7 GB/s on a FullyConnected dimension) priced back costs $28,800.000000000004 for
// $28,800, and a Pareto front kept the slower of two points of equal cost for it.
#pragma once

#include <cmath>

#include "kernels/hd.hpp"
#include "kernels/types.hpp"

namespace cosmic {

struct TierPrice {
  double link_usd_per_GBps;
  double switch_usd_per_GBps;  // < 0: no switch price on this tier
  double nic_usd_per_GBps;
};

// Tier of dimension i in an ndims-dimensional network: 0 chiplet, 1 package, 2 node, 3 pod.
COSMIC_HD inline int tier_of_dim(int32_t i, int32_t ndims) {
  if (ndims == 1) return 2;
  const int from_outside = ndims - 1 - i;  // 0 = outermost
  const int tier = 3 - from_outside;
  return tier < 0 ? 0 : tier;
}

COSMIC_HD inline TierPrice libra_price(int tier) {
  switch (tier) {
    case 0: return {2.0, -1.0, 0.0};   // chiplet
    case 1: return {4.0, 13.0, 0.0};   // package
    case 2: return {4.0, 13.0, 0.0};   // node
    default: return {7.8, 18.0, 31.6};  // pod
  }
}

// Total network cost in dollars; sets `ok` false when a Switch sits on an unpriced tier.
COSMIC_HD inline double network_cost_usd(const Network& net, bool& ok) {
  const int64_t total = total_npus(net);
  double usd = 0;
  ok = true;
  for (int32_t i = 0; i < net.ndims; ++i) {
    const NetDim& dim = net.dim[i];
    if (dim.npus == 1) continue;  // one NPU: no links, no switch (our reading; the study has none)
    const TierPrice p = libra_price(tier_of_dim(i, net.ndims));
    const double n = double(dim.npus), b = dim.link_bw_GBps;
    double block = 0;
    switch (dim.topology) {
      case Topology::Ring: block = 2 * n * p.link_usd_per_GBps * b; break;
      case Topology::FullyConnected: block = n * (n - 1) * p.link_usd_per_GBps * b; break;
      case Topology::Switch:
        if (p.switch_usd_per_GBps < 0) ok = false;
        block = 2 * n * p.link_usd_per_GBps * b + n * (p.switch_usd_per_GBps > 0 ? p.switch_usd_per_GBps : 0) * b +
                n * p.nic_usd_per_GBps * b;
        break;
    }
    usd += double(total / dim.npus) * block;
  }
  return round(usd * 100) / 100;
}

}  // namespace cosmic
