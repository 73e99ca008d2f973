// Scoring one point of a design space (host and device), the one copy of that logic: the CPU
// sweep (host/sweep_cpu.cpp), the CUDA sweep (kernels/sweep_cuda.cu) and the population
// evaluators (kernels/population.hpp) all call score_config(), so their model results and
// objective values are the same doubles.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/model.hpp"
#include "kernels/space.hpp"

namespace cosmic {

// Evaluates a decoded configuration of space `s` (the caller has checked its constraints) and
// writes the value of each of the `nobj` objectives to values[0..nobj), whatever the verdict;
// callers decide what an infeasible point's values mean. A point the model finds feasible but
// that exceeds one of the space's limits is LIMIT_EXCEEDED. kConv and stop_at_oom: as evaluate()
// (kernels/model.hpp).
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline Result score_config(const SpaceView& s, const Config& c, const Objective* objectives, int32_t nobj,
                                     double* values, bool stop_at_oom = false) {
  Result r = evaluate<kConv>(c, stop_at_oom);
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
