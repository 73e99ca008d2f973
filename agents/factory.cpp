#include "agents/factory.hpp"

#include "agents/aco.hpp"
#include "agents/bo.hpp"
#include "agents/ga.hpp"
#include "agents/nsga2.hpp"
#include "agents/random_walk.hpp"

namespace cosmic::agents {

MadeAgent make_agent(const std::string& name, const std::vector<int32_t>& card, int32_t nobj, const Params& params,
                     uint64_t seed) {
  if (card.empty()) throw ParamError("agent " + name + ": the space has no genes");
  for (int32_t c : card)
    if (c < 1) throw ParamError("agent " + name + ": a gene has no values");
  // Keys of other agents are ignored (a PSA file may configure several).
  MadeAgent m;
  if (name == "rw") {
    const auto p = RandomWalkParams::from(params);
    m.agent = std::make_unique<RandomWalk>(card, p, seed);
    m.population = size_t(p.population);
  } else if (name == "ga") {
    const auto p = GaParams::from(params);
    m.agent = std::make_unique<Ga>(card, p, seed);
    m.population = size_t(p.population);
  } else if (name == "aco") {
    const auto p = AcoParams::from(params);
    m.agent = std::make_unique<Aco>(card, p, seed);
    m.population = size_t(p.population);
  } else if (name == "bo") {
    const auto p = BoParams::from(params);
    m.agent = std::make_unique<Bo>(card, p, seed);
    m.population = size_t(p.population);
  } else if (name == "nsga2") {
    if (nobj < 1) throw ParamError("agent nsga2: needs at least one objective");
    const auto p = Nsga2Params::from(params);
    m.agent = std::make_unique<Nsga2>(card, nobj, p, seed);
    m.population = size_t(p.population);
  } else {
    throw ParamError("unknown agent '" + name + "' (expected one of: " + kAgentNames + ")");
  }
  return m;
}

int64_t check_params(const std::string& name, const Params& params, Params* effective) {
  if (name == "rw") return RandomWalkParams::from(params, effective).population;
  if (name == "ga") return GaParams::from(params, effective).population;
  if (name == "aco") return AcoParams::from(params, effective).population;
  if (name == "bo") return BoParams::from(params, effective).population;
  if (name == "nsga2") return Nsga2Params::from(params, effective).population;
  throw ParamError("unknown agent '" + name + "' (expected one of: " + kAgentNames + ")");
}

}  // namespace cosmic::agents
