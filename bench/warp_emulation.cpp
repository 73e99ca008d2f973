// Estimates, on the CPU, how GPU warps walk a sweep: for a slice of a space where the top-gene
// constraints hold (test::live_region_start, the live slice of bench_sweep.cpp), each of
// a warp's 32 lanes walks its part with the kernel's own code (sweep_walk_live), and each step
// is classed as a constraint rejection, a cheap model verdict (out of memory or a layout check,
// evaluate's stop_at_oom) or a whole model evaluation. A warp step costs its most expensive
// lane's step (lanes wait for each other), with costs 0.25, 0.4 and 1 (the CPU's ratios,
// roughly). Printed per 10^6 indices, for the plain thread-to-part map and for warps lined up on
// the cycle of the fastest genes (sweep_part_of_thread), next to the cost without waiting (the
// lanes' total / 32). A model of divergence only: it does not see branches inside the model,
// memory, or occupancy. Results: docs/performance.md.
//
//   build/bench/cosmic_warp_emulation data/psa/cosmic/fullstack-system1.yaml
#include <algorithm>
#include <cstdio>
#include <vector>

#include "host/sweep.hpp"
#include "psa/space.hpp"
#include "../tests/space_fixtures.hpp"

using namespace cosmic;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PSA\n", argv[0]);
    return 2;
  }
  const psa::DesignSpace ds = psa::load_psa(argv[1]);
  const SpaceView& s = *ds.view;
  const SweepConst k = make_sweep_const(s, ds.objectives);
  const uint64_t len = uint64_t(1) << 21, per_thread = 2;
  const std::vector<LiveSegment> live = live_segments(s, {Segment{test::live_region_start(s), len}});
  const double cost[3] = {0.25, 0.4, 1.0};  // rejected, cheap verdict, whole model
  auto run = [&](uint64_t windows, const char* name) {
    double warps = 0, lanes = 0;
    const uint64_t parts = len / per_thread, group = 32 * windows;
    for (uint64_t w = 0; w < (parts + group - 1) / group * group / 32; ++w) {
      std::vector<std::vector<int>> steps(32);
      for (uint64_t l = 0; l < 32; ++l) {
        const uint64_t p = sweep_part_of_thread(w * 32 + l, windows);
        if (p >= parts) continue;
        uint64_t next = p * per_thread;
        const uint64_t hi = next + per_thread;
        sweep_walk_live(s, k, live.data(), 1, next, hi, [&](const Config& c, u128, uint64_t at) {
          for (; next < at; ++next) steps[l].push_back(0);
          next = at + 1;
          steps[l].push_back(evaluate(c, true).reason == Reason::Ok ? 2 : 1);
        });
        for (; next < hi; ++next) steps[l].push_back(0);
      }
      size_t n = 0;
      for (const auto& v : steps) n = std::max(n, v.size());
      for (size_t j = 0; j < n; ++j) {
        double most = 0;
        for (const auto& v : steps)
          if (j < v.size()) most = std::max(most, cost[v[j]]);
        warps += most;
      }
      for (const auto& v : steps)
        for (int t : v) lanes += cost[t];
    }
    const double per = double(len) / 1e6;
    std::printf("  %-30s warp cost %8.0f per 10^6 indices, without waiting %8.0f (x%.2f)\n", name, warps / per,
                lanes / 32 / per, warps / (lanes / 32));
  };
  const uint64_t cycle = sweep_phase_cycle(s);
  std::printf("%s: cycle of the fastest genes %llu\n", argv[1], (unsigned long long)cycle);
  run(1, "plain");
  if (cycle > 1 && cycle % per_thread == 0) run(cycle / per_thread, "lined up on the cycle");
}
