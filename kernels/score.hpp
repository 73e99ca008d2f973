// Scoring one point of a design space (host and device), the one copy of that logic: the CPU
// sweep (host/sweep_cpu.cpp), the CUDA sweep (kernels/sweep_kernel.cuh) and the population
// evaluators (kernels/population.hpp) all call score_config(), so their model results and
// objective values are the same doubles.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/model.hpp"
#include "kernels/space.hpp"

namespace cosmic {

// Whether scoring a point of space `s` for `objectives` reads the network's price: a cost
// objective or limit (cost, runtime_x_cost, cluster_cost, usd_per_token), or a constraint on
// network_cost.
COSMIC_HD inline bool priced_objective(Objective o) {
  return o == Objective::Cost || o == Objective::RuntimeXCost || o == Objective::ClusterCost || o == Objective::UsdPerToken;
}
COSMIC_HD inline bool reads_network_price(const SpaceView& s, const Objective* objectives, int32_t nobj) {
  for (int32_t j = 0; j < nobj; ++j)
    if (priced_objective(objectives[j])) return true;
  for (int32_t k = 0; k < s.nlimits; ++k)
    if (priced_objective(s.limit_obj[k])) return true;
  for (int32_t i = 0; i < s.prog_start[s.nconstraints]; ++i)
    if (s.prog[i].op == Op::PushNetworkCost) return true;
  return false;
}

// Evaluates a decoded configuration of space `s` (the caller has checked its constraints) and
// writes the value of each of the `nobj` objectives to values[0..nobj), whatever the verdict;
// callers decide what an infeasible point's values mean. A point the model finds feasible but
// that exceeds one of the space's limits is LIMIT_EXCEEDED; one whose network has no price
// (a Switch on an unpriced tier) is SWITCH_NOT_PRICED, also over memory, where the space reads
// the price (reads_network_price). kConv and stop_at_oom: as evaluate() (kernels/model.hpp).
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline Result score_config(const SpaceView& s, const Config& c, const Objective* objectives, int32_t nobj,
                                     double* values, bool stop_at_oom = false) {
  Result r = evaluate<kConv>(c, stop_at_oom);
  const bool unpriced = !(r.network_cost_usd == r.network_cost_usd);  // NaN
  if (unpriced && (r.reason == Reason::Ok || r.reason == Reason::OutOfMemory) && reads_network_price(s, objectives, nobj))
    r.reason = Reason::SwitchNotPriced;
  for (int32_t j = 0; j < nobj; ++j) values[j] = objective_value(objectives[j], c, r);
  if (r.reason == Reason::Ok && s.nlimits > 0 && limit_excess(s, c, r) > 0) r.reason = Reason::LimitExceeded;
  return r;
}

// Checks every constraint of a decoded configuration, then scores it. Returns false, with
// check_constraints' violation and without running the model, when a constraint fails.
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline bool score_point(const SpaceView& s, const Config& c, const Objective* objectives, int32_t nobj,
                                  double& violation, Result& r, double* values) {
  if (!check_constraints(s, c, violation)) return false;
  r = score_config<kConv>(s, c, objectives, nobj, values);
  return true;
}

}  // namespace cosmic
