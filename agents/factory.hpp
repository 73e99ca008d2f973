// Makes an agent by name from the genes' cardinalities, the number of objectives, the
// hyperparameters and a seed. Throws ParamError with a clear message for an unknown agent or a
// bad hyperparameter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agents/agent.hpp"
#include "agents/params.hpp"

namespace cosmic::agents {

struct MadeAgent {
  std::unique_ptr<Agent> agent;
  size_t population = 0;  // genomes asked per generation
};

// name: rw, ga, aco, bo or nsga2. Single-objective agents optimise objective 0 of a
// multi-objective space; nsga2 needs nobj >= 1 (2+ for a front).
MadeAgent make_agent(const std::string& name, const std::vector<int32_t>& card, int32_t nobj, const Params& params,
                     uint64_t seed);

// Checks an agent's name and its hyperparameters in `params` (keys of other agents are ignored)
// without making it: throws ParamError as make_agent would. Returns the population; with
// `effective`, fills it with every hyperparameter of the agent and the value it takes (defaults
// included).
int64_t check_params(const std::string& name, const Params& params, Params* effective = nullptr);

constexpr const char* kAgentNames = "rw, ga, aco, bo, nsga2";

}  // namespace cosmic::agents
