// Search of a design space by an agent (agents/) fed by a population evaluator
// (host/population.hpp): ask -> evaluate -> tell -> record, one generation per evaluator call,
// streamed to HDF5 (layout: docs/results-format.md, "Search files").
// Stops at the evaluation budget, at a wall-time limit or on SIGINT / SIGTERM (the generation
// in flight is finished and written; the file is marked incomplete). --resume loads the agent
// and the search's state from the latest checkpoint the file holds (or, without one, starts a
// fresh agent with the same seed), replays the generations stored after it, evaluating them
// again and checking them against /generations, then continues: the result equals that of an
// uninterrupted run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

#include "agents/params.hpp"
#include "psa/space.hpp"

namespace cosmic {

struct SearchOptions {
  std::string agent = "ga";       // rw, ga, aco, bo, nsga2
  agents::Params params;          // "<agent>.<key>" -> value (PSA `agent:` section, then --param)
  uint64_t seed = 0;
  uint64_t budget = 0;            // evaluations (> 0)
  std::string out;                // HDF5 file
  std::string backend = "auto";   // auto, cpu, cuda
  std::string keep = "all";       // /evaluated holds all evaluated points, the feasible ones, or none
  std::string breed = "host";     // host, device: where GA and NSGA-II breed with the CUDA evaluator
  bool resume = false;
  bool quiet = false;
  double time_limit_s = 0;        // 0 = none; per session
  bool target_set = false;        // stop once the search's best is at or below `target` (file resumable)
  double target = 0;
  uint64_t stall = 0;             // stop once the search has gone this many generations without a better best; 0 = never
  double progress_every_s = 2;
  double flush_s = 1;             // longest wait for a write while no 16,384-row chunk fills
  double checkpoint_s = 10;       // seconds between checkpoints of the agent's state (0: every generation; < 0: none)
  uint64_t stop_after_generations = 0;  // tests: behave as if interrupted after this many (0 = off)
};

struct SearchSummary {
  uint64_t generations = 0, evaluations = 0, feasible = 0;
  double best_objective = 0;                 // objective 0 of the best point (+inf: none feasible)
  std::vector<int32_t> best_genome;
  std::vector<double> best_curve;            // best-so-far after each generation
  std::vector<uint64_t> evaluations_curve;   // cumulative evaluations after each generation
  std::string stopped;                       // budget, time_limit, target, stall, signal
  // Seconds over all sessions, as in the file's attributes (docs/results-format.md): wall time;
  // the loop's time in the evaluator, in the agent (ask + tell) and writing results; the
  // background writer's busy time (overlapping the others).
  double wall_s = 0, eval_s = 0, agent_s = 0, write_s = 0, writer_s = 0;
  uint64_t write_batches = 0;  // batches of rows the background writer wrote, this session
  uint64_t checkpoint_generations = 0;  // a resume: the generations its checkpoint gave (not run again)
};

// The generations a search file's /generations lists: those every one of its columns holds (they
// are appended one after another, so that a kill can leave some shorter or missing). The
// `generation` column of format 2 counts only in files of that format.
size_t listed_generations(hid_t file);
// Returns the exit status: 0 done (budget, time limit, target or stall), 128 + signal when
// interrupted (also for stop_after_generations, as 130). Throws std::exception with a message on errors
// (bad hyperparameters: agents::ParamError).
int run_search(const psa::DesignSpace& space, const SearchOptions& opts, SearchSummary* summary = nullptr);

// The hyperparameters of `agent` in the PSA file's optional `agent:` mapping, e.g.
//   agent:
//     ga: {population: 8192, mutation_rate: 0.05}
//     aco: {greediness: 0.7}
// as "<agent>.<key>" -> value, with `given` (the command line's, same form) over them. Every agent
// the mapping names is checked (its name and values; the searched one with `given` applied): an
// error in the file is a psa::ConfigError naming its file, line and key, one in `given` the
// agents::ParamError.
agents::Params psa_agent_params(const psa::DesignSpace& ds, const std::string& agent, const agents::Params& given = {});

// The hyperparameters a new search runs with (and records): a population larger than the budget
// would be bred and held whole for the one, partial, generation the budget allows (10^8 genomes
// for 10 evaluations), so it is cut to the budget (the GA and NSGA-II keep at least 2).
agents::Params budget_params(const std::string& agent, agents::Params params, uint64_t budget);

}  // namespace cosmic
