// `cosmic search PSA --agent rw|ga|aco|bo|nsga2 --budget N -o OUT.h5 ...`: a search agent over
// whole populations fed by the batch evaluator (host/search.cpp), streamed to HDF5.
#include <iostream>
#include <stdexcept>

#include "host/cli.hpp"

#include "agents/factory.hpp"
#include "host/commands.hpp"
#include "host/h5.hpp"
#include "host/provenance.hpp"
#include "host/search.hpp"
#include "host/text.hpp"
#include "psa/config.hpp"

namespace cosmic {

namespace {

// --set edits given with --resume against those the file recorded: the same when they read
// the same once trimmed and put in the order they apply, or when they make the same space of
// `psa_file` (the same edited PSA tree and base configuration: edits of different keys the file
// has, in another order, an edit given twice, `[a, b]` for `[a,b]`; keys an edit adds keep its
// order, which orders the genes, and a number must be written as before, `2` is not `2.0`). `psa_file`: the one named, else the file's own where it still holds the
// recorded text ("" for none).
bool same_edits(const std::vector<std::string>& given, const std::vector<std::string>& recorded,
                const std::string& psa_file) {
  if (psa::application_order(given) == psa::application_order(recorded)) return true;
  if (psa_file.empty()) return false;
  try {
    const psa::DesignSpace a = psa::load_psa(psa_file, given), b = psa::load_psa(psa_file, recorded);
    return a.edited_text == b.edited_text && a.base_text == b.base_text;
  } catch (const std::exception&) {
    return false;  // edits that fail are not the file's, which load
  }
}

// With --resume the file's settings apply. An option given with it that says the same is
// fine (the command that started the search, --resume added); one that says otherwise is refused
// rather than ignored: returns what differs, "" when nothing does or OUT is no search file (the
// run then says what is wrong with it).
std::string resume_clash(const std::string& out, const cxxopts::ParseResult& args) {
  std::string agent, keep, psa_file;
  std::vector<std::string> sets;
  agents::Params params;  // "agent.key" -> value, as recorded
  uint64_t seed = 0, population = 0, asked = 0;  // asked: a population the budget cut to `population`
  try {  // (the space was loaded first, which checked the file: load_run_psa, resumed_space)
    h5::Handle f = h5::open_file(out, false);
    if (h5::result_kind(f.id()) != "search") return "";
    agent = h5::attr_string(f.id(), "agent");
    seed = h5::attr_uint(f.id(), "seed");
    keep = h5::has_attr(f.id(), "keep") ? h5::attr_string(f.id(), "keep") : "all";
    population = h5::attr_uint(f.id(), "population");
    if (h5::has_attr(f.id(), "population_asked")) asked = h5::attr_uint(f.id(), "population_asked");
    params = agents::params_from_text(h5::attr_string(f.id(), "params"));
    sets = read_provenance(f.id()).psa_sets;
    if (args.count("psa")) psa_file = args["psa"].as<std::string>();
    else if (h5::has_attr(f.id(), "psa_file") && psa::read_text(h5::attr_string(f.id(), "psa_file")) == h5::attr_string(f.id(), "psa"))
      psa_file = h5::attr_string(f.id(), "psa_file");
  } catch (const std::exception&) {
    return "";
  }
  const std::string was = out + " is a search of ";
  if (args.count("agent") && args["agent"].as<std::string>() != agent) return "--agent: " + was + "agent " + agent;
  if (args.count("seed") && args["seed"].as<uint64_t>() != seed) return "--seed: " + was + "seed " + std::to_string(seed);
  if (args.count("keep") && args["keep"].as<std::string>() != keep) return "--keep: " + was + "--keep " + keep;
  uint64_t given_population = 0;  // (read as the run reads it; checked there)
  if (args.count("population") && parse_count(args["population"].as<std::string>(), given_population) &&
      given_population != population && given_population != asked)
    return "--population: " + was + "population " + std::to_string(population);
  if (args.count("param")) {  // compared as the agent takes them (defaults filled in, numbers read)
    agents::Params given = params, typed;
    agents::Params was_taken, given_taken;
    try {
      for (const auto& kv : list_option(args, "param")) agents::add_param(typed, agent, kv);
      for (const auto& [key, value] : typed) given[key] = value;
      agents::check_params(agent, params, &was_taken);
      agents::check_params(agent, given, &given_taken);
    } catch (const agents::ParamError& e) {
      return e.what();
    }
    for (const auto& [key, value] : given_taken) {
      const bool asked_population = key == agent + ".population" && asked && value == std::to_string(asked);  // as --population
      if (was_taken[key] != value && !asked_population) return "--param: " + out + "'s search ran with " + key + "=" + was_taken[key];
    }
  }
  if (args.count("set") && !same_edits(list_option(args, "set"), sets, psa_file))
    return "--set: " + out + " was written with " + (sets.empty() ? "no --set edits" : "other --set edits (cosmic show --psa lists them)");
  return "";
}

}  // namespace

int cmd_search(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic search",
                        "Search a design space (PSA file) with a population agent: each generation is one batch\n"
                        "evaluation; genomes, scores, the best-so-far curve, the best configuration and (several\n"
                        "objectives) the Pareto front go to an HDF5 file (docs/results-format.md). Agents and\n"
                        "hyperparameters: docs/agents.md. Interrupted (SIGINT, SIGTERM, --time-limit) it leaves a\n"
                        "valid file; --resume continues it with the same result as an uninterrupted run.");
  opts.positional_help("PSA.yaml (with --resume it may be left out: the file's own)");
  add_psa_set_option(opts);
  opts.add_options()
      ("psa", "design-space file", cxxopts::value<std::string>())
      ("agent", std::string("rw, ga, aco, bo or nsga2"), cxxopts::value<std::string>()->default_value("ga"))
      ("budget", "evaluations in all, e.g. 2000000 or 2e6 (with --resume: a larger budget to continue to)",
       cxxopts::value<std::string>())
      ("population", "genomes per generation, e.g. 100000 or 1e5 (sets <agent>.population)", cxxopts::value<std::string>())
      ("param", "hyperparameter key=value (e.g. mutation_rate=0.05 or ga.mutation_rate=0.05); repeatable; "
                "overrides the PSA file's agent: section", cxxopts::value<std::vector<std::string>>())
      ("seed", "random seed", cxxopts::value<uint64_t>()->default_value("0"))
      ("o,out", "result file (HDF5)", cxxopts::value<std::string>())
      ("backend", "auto, cpu or cuda", cxxopts::value<std::string>()->default_value("auto"))
      ("breed", "where GA and NSGA-II breed their children with --backend cuda: host (the CPU threads) or device "
                "(the GPU, where they are then scored; the same children)", cxxopts::value<std::string>()->default_value("host"))
      ("keep", "evaluated points written to /evaluated: all, feasible or none (then only the per-generation "
               "curves, the best point and the Pareto front)", cxxopts::value<std::string>()->default_value("all"))
      ("target", "stop once the search's best value of the first objective is at or below this (its units); the file "
                 "stays resumable (--resume without --target goes on)", cxxopts::value<double>())
      ("stall", "stop once the search has gone this many generations without a better best (a lower violation while "
                "nothing is feasible counts; its whole history, "
                "resumed sessions too); the file stays resumable", cxxopts::value<uint64_t>()->default_value("0"))
      ("checkpoint", "seconds between checkpoints of the search's state, which --resume starts from (0: after every "
                     "generation)", cxxopts::value<double>()->default_value("10"))
      ("time-limit", "stop after this many seconds (this session, after at least one new generation), file resumable from its checkpoint", cxxopts::value<double>()->default_value("0"))
      ("resume", "continue the search in OUT (its recorded agent, hyperparameters, seed, --keep and, unless --budget "
                 "raises it, budget apply); a complete search continues to a larger --budget")
      ("q,quiet", "no progress output or notes (a warning that the search is not the one asked for still prints)")
      ("h,help", "show this help");
  opts.parse_positional({"psa"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"out", "-o OUT.h5"}}, args, status, {{"psa", "PSA.yaml"}, {"budget", "--budget N"}}))
    return status;
  SearchOptions o;
  o.agent = args["agent"].as<std::string>();
  o.seed = args["seed"].as<uint64_t>();
  o.out = args["out"].as<std::string>();
  o.backend = args["backend"].as<std::string>();
  o.time_limit_s = args["time-limit"].as<double>();
  o.checkpoint_s = args["checkpoint"].as<double>();
  o.target_set = args.count("target") > 0;
  if (o.target_set) o.target = args["target"].as<double>();
  o.stall = args["stall"].as<uint64_t>();
  o.resume = args.count("resume") > 0;
  o.quiet = args.count("quiet") > 0;
  o.keep = args["keep"].as<std::string>();
  o.breed = args["breed"].as<std::string>();
  if (args.count("budget") && !parse_count(args["budget"].as<std::string>(), o.budget))
    return usage_error(opts, "--budget expects a positive number of evaluations (digits, or 2e6), got '" +
                                 args["budget"].as<std::string>() + "'");
  uint64_t population = 0;
  if (args.count("population") && !parse_count(args["population"].as<std::string>(), population))
    return usage_error(opts, "--population expects a number of genomes (digits, or 1e5), got '" +
                                 args["population"].as<std::string>() + "'");
  if (!known_backend(o.backend)) return usage_error(opts, "--backend expects auto, cpu or cuda");
  if ((!o.resume || args.count("budget")) && o.budget == 0)
    return usage_error(opts, "--budget expects a positive number of evaluations");
  if (o.time_limit_s < 0) return usage_error(opts, "--time-limit expects seconds >= 0");
  if (!(o.checkpoint_s >= 0)) return usage_error(opts, "--checkpoint expects seconds >= 0");
  if (o.keep != "all" && o.keep != "feasible" && o.keep != "none")
    return usage_error(opts, "--keep expects all, feasible or none");
  if (o.breed != "host" && o.breed != "device") return usage_error(opts, "--breed expects host or device");
  try {
    // A resumed search loads its PSA with the edits the file recorded; without a PSA file, the
    // space the file recorded (its PSA text and base configuration).
    const psa::DesignSpace ds = args.count("psa")
                                    ? load_run_psa(args["psa"].as<std::string>(), list_option(args, "set"), o.out, o.resume)
                                    : resumed_space(o.out, "search");
    if (ds.view->ngenes == 0) {
      std::cerr << "cosmic search: " << ds.file << " searches no parameter: nothing to search (cosmic eval scores its base)\n";
      return 1;
    }
    if (o.resume) {
      const std::string clash = resume_clash(o.out, args);
      if (!clash.empty()) return usage_error(opts, clash + "; --resume continues the search as it was started (leave the option out)");
    }
    if (!o.resume) {
      agents::Params given;  // on the command line: they win over the PSA file's
      for (const auto& kv : list_option(args, "param")) agents::add_param(given, o.agent, kv);
      if (args.count("population")) {
        if (given.count(o.agent + ".population"))
          return usage_error(opts, "--population and --param population both set the population: give one");
        given[o.agent + ".population"] = std::to_string(population);
      }
      o.params = psa_agent_params(ds, o.agent, given);
      if (!o.quiet)
        for (const std::string& n : psa::space_notes(ds)) std::cerr << "cosmic search: note: " << n << "\n";
    }
    return run_search(ds, o, nullptr);
  } catch (const agents::ParamError& e) {
    std::cerr << "cosmic search: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cosmic search: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cosmic
