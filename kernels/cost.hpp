// Network dollar cost with LIBRA unit costs (shared/reference/cosmic-study.md §4), or the
// configuration's own (Network::price, network.prices).
//
// Unit prices are dollars per GB/s of per-link bandwidth, by tier. The dimensions that have links
// (more than one NPU) map to tiers from the outside in: the outermost is the pod tier (the only
// one with a NIC price by default), the next the node tier, then package, then chiplet: 1 such
// dim = [node]; 2 = [node, pod]; 3 = [package, node, pod]; 4 = [chiplet, package, node, pod].
// With more than 4 the extra inner ones are priced as chiplet tiers (our extension; the study has
// 4). A dimension of one NPU has no links, costs nothing and takes no tier (our reading; the
// study's spaces have none): a network padded with one (npus 1 in a PSA that compares shapes)
// costs what the network without it costs (model revision 7; before, it moved the others a tier
// in, and a pod's NICs went unpriced).
// Cost of one block of a dimension with n NPUs and per-link bandwidth b:
//   Ring 2 n link b;  FullyConnected n (n-1) link b;  Switch 2 n link b + n switch b + n nic b.
// Total = sum over dims of (NPUs / n_d) x block cost. The chiplet tier has no switch price: a
// Switch there makes the cost undefined (evaluate() reports NaN; a design space that reads the
// cost rejects the point, Reason::SwitchNotPriced, as the study's constraint does).
// The total is rounded to whole cents (model revision 6): a per-link bandwidth given per NPU
// (900 / 7 GB/s on a FullyConnected dimension) priced back costs $28,800.000000000004 for
// $28,800, and a Pareto front kept the slower of two points of equal cost for it.
#pragma once

#include <cmath>

#include "kernels/hd.hpp"
#include "kernels/types.hpp"

namespace cosmic {

// Tier of the k-th (from the innermost) of `used` dimensions with links: 0 chiplet, 1 package,
// 2 node, 3 pod.
COSMIC_HD inline int tier_of_dim(int32_t k, int32_t used) {
  if (used == 1) return 2;
  const int tier = 3 - (used - 1 - k);  // the outermost is the pod
  return tier < 0 ? 0 : tier;
}

// Tier of each dimension (tier[d]; -1 for a dimension of one NPU, which has none).
COSMIC_HD inline void dim_tiers(const Network& net, int* tier) {
  int32_t used = 0;
  for (int32_t i = 0; i < net.ndims; ++i) used += net.dim[i].npus > 1;
  for (int32_t i = 0, k = 0; i < net.ndims; ++i) tier[i] = net.dim[i].npus > 1 ? tier_of_dim(k++, used) : -1;
}

// Cost in dollars of dimension i (of tier `tier`, dim_tiers), unrounded; sets `ok` false when a
// Switch sits on a tier without a switch price.
COSMIC_HD inline double dim_cost_usd(const Network& net, int32_t i, int tier, bool& ok) {
  const NetDim& dim = net.dim[i];
  if (tier < 0) return 0;  // one NPU: no links, no switch
  const TierPrice& p = net.price[tier];
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
  return double(total_npus(net) / dim.npus) * block;
}

// Total network cost in dollars, to the cent; sets `ok` false when a Switch sits on an unpriced tier.
COSMIC_HD inline double network_cost_usd(const Network& net, bool& ok) {
  int tier[kMaxDims];
  dim_tiers(net, tier);
  double usd = 0;
  ok = true;
  for (int32_t i = 0; i < net.ndims; ++i) usd += dim_cost_usd(net, i, tier[i], ok);
  return round(usd * 100) / 100;
}

// What the cluster costs to buy: its network (network_cost_usd) and its NPUs at the
// configuration's price each (compute.price_usd; no default: prices vary too much to ship one).
COSMIC_HD inline double cluster_cost_usd(const Config& c, double network_usd) {
  return network_usd + double(total_npus(c.net)) * c.compute.price_usd;
}

// Energy per token in joules: every NPU draws compute.power_W for the whole run (idle waits in
// collectives and the pipeline bubble included: a GPU draws well above idle while it waits, and
// the figure a user gives is the draw under load), and the facility's cooling and power delivery
// (PUE - 1) times that: NPUs x power_W x PUE / tokens_per_s. 0 where the layout was not timed.
COSMIC_HD inline double energy_per_token_J(const Config& c, double tokens_per_s) {
  return tokens_per_s > 0 ? double(total_npus(c.net)) * c.compute.power_W * c.op.pue / tokens_per_s : 0.0;
}

// The electricity of a token: energy_per_token_J at op.usd_per_kWh (3.6e6 J a kWh).
COSMIC_HD inline double electricity_usd_per_token(const Config& c, double tokens_per_s) {
  return energy_per_token_J(c, tokens_per_s) * c.op.usd_per_kWh / 3.6e6;
}

// What a token costs, all in: the cluster's price (network and NPUs, cluster_cost_usd) written
// off in equal parts over op.lifetime_years of running this job without a pause, plus its
// electricity. Not in it: interest, staff, space, maintenance, idle time between jobs. A year is
// 365.25 days.
COSMIC_HD inline double usd_per_token(const Config& c, double cluster_usd, double tokens_per_s) {
  if (!(tokens_per_s > 0)) return 0.0;
  const double lifetime_s = c.op.lifetime_years * 365.25 * 86400.0;
  return cluster_usd / lifetime_s / tokens_per_s + electricity_usd_per_token(c, tokens_per_s);
}

}  // namespace cosmic
