// Random walk as the COSMIC study runs it: independent uniform samples of the raw space (every
// gene uniform over its values), a baseline for the other agents.
#pragma once

#include <vector>

#include "agents/agent.hpp"
#include "agents/params.hpp"

namespace cosmic::agents {

struct RandomWalkParams {
  int64_t population = 4096;  // rw.population: samples per generation (one evaluator call)
  static RandomWalkParams from(const Params& p, Params* effective = nullptr);
};

class RandomWalk : public Agent {
 public:
  RandomWalk(std::vector<int32_t> card, RandomWalkParams p, uint64_t seed);
  std::string name() const override { return "rw"; }
  void save(StateWriter& w) const override { w.put(gen_); }
  void load(StateReader& r) override { r.get(gen_); }

 protected:
  void do_ask(Population& pop) override;
  void do_tell(const Population&, const Scores&) override { ++gen_; }

 private:
  std::vector<int32_t> card_;
  RandomWalkParams p_;
  uint64_t seed_;
  uint64_t gen_ = 0;
};

}  // namespace cosmic::agents
