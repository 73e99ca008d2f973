// Scoring one individual of a population (host and device): decode the genome onto the base
// configuration (kernels/space.hpp), then check the PSA constraints, evaluate the model and
// compute the objectives with the sweeps' code (score_point, kernels/score.hpp). Used by
// host/population.cpp (OpenMP) and kernels/population_kernel.cuh (one thread per individual).
//
// Infeasible individuals get a violation > 0 that ranks them under the feasibility rules
// (Deb 2000, agents/agent.hpp), in three tiers that never overlap:
//   over bounds: OUT_OF_MEMORY x / (1 + x), x = (memory - capacity) / capacity     in (0, 1)
//     or LIMIT_EXCEEDED          + limit_excess() (kernels/space.hpp), the relative
//                                excess over the space's limits (both, when both)
//   any other model reason     1 + reason / 100                                   in [1.01, 1.11]
//   a PSA constraint violated  2 + v / (1 + v), v = check_constraints' violation  in (2, 3)
//     (reason -1; the model is not run)
// so "close to fitting in memory (or within the limits)" beats "cannot be laid out", which beats
// "outside the space's constraints", and within a tier a smaller excess ranks first. Objectives
// of infeasible individuals are +infinity.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/model.hpp"
#include "kernels/score.hpp"
#include "kernels/space.hpp"

namespace cosmic {

constexpr int kPopMetrics = 6;  // time_s, memory_bytes, network_cost_usd, tokens_per_s, mfu, first_token_s

struct PopObjectives {
  int32_t n = 0;
  Objective obj[kNumObjectives] = {};
};

// Genes are gene-major: gene g of individual i at genes[g * n + i] (int32_t as the agents keep
// them, or uint16_t as the CUDA evaluator uploads them: kMaxValues bounds every gene's values);
// outputs likewise (obj[j * n + i], metrics[m * n + i]). kConv: as evaluate() (kernels/model.hpp).
//
// score_genome() takes individual i's genome as a row; score_individual() reads it from the
// gene-major population first.
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline void score_genome(const SpaceView& s, const PopObjectives& o, const int32_t* genome, size_t n,
                                   size_t i, double* obj, double* violation, int32_t* reason, double* metrics) {
  Config c = s.base;  // decode(s, genome), written in place (kernels/space.hpp)
  apply_genome(s, genome, c);
  double v = 0;
  for (int m = 0; m < kPopMetrics; ++m) metrics[size_t(m) * n + i] = 0;
  for (int32_t j = 0; j < o.n; ++j) obj[size_t(j) * n + i] = INFINITY;
  Result r;
  double values[kNumObjectives];
  if (!score_point<kConv>(s, c, o.obj, o.n, v, r, values)) {
    reason[i] = -1;
    violation[i] = 2 + v / (1 + v);
    return;
  }
  reason[i] = int32_t(r.reason);
  metrics[0 * n + i] = r.time_s;
  metrics[1 * n + i] = r.memory_bytes;
  metrics[2 * n + i] = r.network_cost_usd;
  metrics[3 * n + i] = r.tokens_per_s;
  metrics[4 * n + i] = r.mfu;
  metrics[5 * n + i] = r.first_token_s;
  if (r.reason == Reason::Ok) {
    violation[i] = 0;
    for (int32_t j = 0; j < o.n; ++j) obj[size_t(j) * n + i] = values[j];
  } else if (r.reason == Reason::OutOfMemory || r.reason == Reason::LimitExceeded) {
    const double cap = c.compute.mem_capacity_bytes;
    double x = r.reason == Reason::LimitExceeded ? 0.0 : cap > 0 ? (r.memory_bytes - cap) / cap : 1.0;
    if (s.nlimits > 0) x += limit_excess(s, c, r);
    violation[i] = x > 0 ? x / (1 + x) : 1e-12;
  } else {
    violation[i] = 1 + double(int32_t(r.reason)) / 100;
  }
}

template <Conventions kConv = Conventions::Any, class Gene>
COSMIC_HD inline void score_individual(const SpaceView& s, const PopObjectives& o, const Gene* genes, size_t n,
                                       size_t i, double* obj, double* violation, int32_t* reason, double* metrics) {
  int32_t genome[kMaxGenes];
  for (int32_t g = 0; g < s.ngenes; ++g) genome[g] = int32_t(genes[size_t(g) * n + i]);
  score_genome<kConv>(s, o, genome, n, i, obj, violation, reason, metrics);
}

}  // namespace cosmic
