// Study files: a list of experiments (a design space, an objective, a method) and the
// comparisons to report between their best points. `cosmic study` (host/study.cpp) runs them.
// Schema: docs/cosmic-study.md ("Study files"). Unknown keys are errors; every error names the
// file, line, column and key, as in configuration and PSA files.
//
//   name: main
//   experiments:
//     - id: "{sys}-bw-workload"              # {var} is replaced by each value of `for`
//       for: {sys: [system1, system2]}        # one experiment per combination (optional)
//       psa: psa/cosmic/workload-{sys}.yaml   # relative to the study file, cwd or data dir
//       objective: runtime_x_bw               # replaces the PSA's objectives (one or a list)
//       method: sweep                         # or an agent: rw, ga, aco, bo, nsga2
//       budget: 100000                        # agents: evaluations per seed
//       seeds: [1, 2]                         # agents (default [0])
//       params: {population: 4096}            # agent hyperparameters
//       top: 1000                             # sweeps: points kept per objective
//       set: [base.workload.global_batch=4096]  # edits, as `cosmic space --set`
//       budget_of: {experiment: "{sys}-bw-full", limit: bandwidth}  # or cost: the network may
//                                             # use no more than that experiment's best point
//   comparisons:
//     - kind: gain                            # gain, gap, near_optimal, convergence, pareto
//       title: "Full stack vs single stacks, {sys}"
//       for: {sys: [system1, system2]}
//       target: "{sys}-bw-full"
//       baselines: ["{sys}-bw-workload"]
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cosmic::psa {

struct StudyExperiment {
  std::string id, label;
  std::string psa;                        // the PSA file, resolved to an existing path
  std::vector<std::string> objectives;    // empty: the PSA file's own
  std::string method = "sweep";           // sweep, rw, ga, aco, bo, nsga2
  uint64_t budget = 0;                    // agents: evaluations per seed
  std::vector<uint64_t> seeds;            // agents
  std::vector<std::pair<std::string, std::string>> params;  // agent hyperparameters, key -> value
  std::vector<std::string> params_where;  // file:line:col of each, for messages
  int32_t top = 1000;                     // sweeps: top-K per objective
  std::vector<std::string> sets;          // "key=value", applied to the PSA file (base.* to its base)
  std::string budget_of;                  // experiment id whose best point bounds the network
  std::string limit;                      // bandwidth or cost (with budget_of)
  std::vector<std::pair<std::string, std::string>> vars;  // the `for` values that made it
  std::string where;                      // file:line:col, for messages
};

struct StudyComparison {
  std::string kind;                       // gain, gap, near_optimal, convergence, pareto
  std::string title;
  int32_t entry = 0;                      // index of the comparisons: entry it came from
  std::vector<std::pair<std::string, std::string>> vars;
  std::string target;                     // gain: the full-stack experiment; gap: the exact optimum (a sweep); pareto: the front
  std::vector<std::string> others;        // gain: baselines; gap: agents; near_optimal, convergence: experiments; pareto: marks
  double within = 0.01;                   // near_optimal: relative distance from the best
  std::string figure;                     // plots: bars, batch, convergence, pareto, or empty
  std::string x, series;                  // figure batch: the variables on the x axis and per line
  std::string where;
};

struct Study {
  std::string file, name, description;
  std::vector<StudyExperiment> experiments;
  std::vector<StudyComparison> comparisons;
  int32_t entries = 0;                    // number of comparisons: entries in the file
  const StudyExperiment* find(const std::string& id) const;
};

// True when two experiments search the same design space (the same PSA file, `set` edits and
// budget; their objectives may differ).
bool same_space(const StudyExperiment& a, const StudyExperiment& b);

// The seeds of an experiment's runs: a sweep has one run (seed 0).
std::vector<uint64_t> run_seeds(const StudyExperiment& e);

// The HDF5 file one run of an experiment writes in the study's folder: ID.h5 for a sweep,
// ID-sSEED.h5 for each seed of an agent.
std::string result_file(const StudyExperiment& e, uint64_t seed);

// Loads and checks a study file (psa::ConfigError on errors). Experiment ids are unique; a
// budget_of or comparison refers to an experiment defined earlier in the file.
Study load_study(const std::string& path);

}  // namespace cosmic::psa
