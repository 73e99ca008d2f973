#include "agents/random_walk.hpp"

#include "agents/common.hpp"

namespace cosmic::agents {

RandomWalkParams RandomWalkParams::from(const Params& p) {
  ParamReader r(p, "rw");
  RandomWalkParams o;
  o.population = r.integer("population", o.population, 1, 100000000);
  r.finish();
  return o;
}

RandomWalk::RandomWalk(std::vector<int32_t> card, RandomWalkParams p, uint64_t seed)
    : card_(std::move(card)), p_(p), seed_(seed) {}

void RandomWalk::ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "rw");
  const int64_t n = int64_t(pop.size);
#pragma omp parallel for schedule(static) if (n >= 4096)
  for (int64_t i = 0; i < n; ++i) {
    Rng r(stream_seed(seed_, gen_, uint64_t(i)));
    random_genome(pop, size_t(i), card_, r);
  }
}

}  // namespace cosmic::agents
