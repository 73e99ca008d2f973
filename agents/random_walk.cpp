#include "agents/random_walk.hpp"

#include "agents/common.hpp"

namespace cosmic::agents {

RandomWalkParams RandomWalkParams::from(const Params& p, Params* effective) {
  ParamReader r(p, "rw", effective);
  RandomWalkParams o;
  o.population = r.integer("population", o.population, 1, 100000000);
  r.finish();
  return o;
}

RandomWalk::RandomWalk(std::vector<int32_t> card, RandomWalkParams p, uint64_t seed)
    : card_(std::move(card)), p_(p), seed_(seed) {}

void RandomWalk::do_ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "rw");
  random_population(pop, card_, seed_, gen_);
}

}  // namespace cosmic::agents
