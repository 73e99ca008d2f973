// `cosmic sweep PSA -o OUT.h5 ...` and `cosmic merge OUT.h5 IN.h5...`: exhaustive sweeps with
// reductions streamed to HDF5 (host/sweep_run.cpp), and the merge of shard files.
#include <iostream>

#include "host/cli.hpp"

#include "host/commands.hpp"
#include "host/provenance.hpp"
#include "host/sweep.hpp"
#include "psa/config.hpp"

namespace cosmic {

int cmd_sweep(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic sweep",
                        "Evaluate every point of a design space (PSA file) and keep the reductions: feasible\n"
                        "counts per reason, top-K per objective, the Pareto front of the objectives and a histogram\n"
                        "of each objective, streamed to an HDF5 file (layout: docs/results-format.md).\n"
                        "Interrupted (SIGINT, SIGTERM) it leaves a valid file marked incomplete; --resume continues.");
  opts.positional_help("PSA.yaml");
  add_psa_set_option(opts);
  opts.add_options()
      ("psa", "design-space file", cxxopts::value<std::string>())
      ("o,out", "result file (HDF5)", cxxopts::value<std::string>())
      ("backend", "auto, cpu or cuda", cxxopts::value<std::string>()->default_value("auto"))
      ("top", "points kept per objective (top-K)", cxxopts::value<int>()->default_value("10"))
      ("keep", "top (top-K, histograms, counts), pareto (also the Pareto front) or all (also every point "
               "that passes the constraints; spaces up to ~1e8)", cxxopts::value<std::string>()->default_value("pareto"))
      ("shard", "I/N: sweep slice I (0-based) of N equal slices of the index range",
       cxxopts::value<std::string>()->default_value("0/1"))
      ("seed", "recorded in the file (an exhaustive sweep uses no randomness)",
       cxxopts::value<uint64_t>()->default_value("0"))
      ("no-fold", "sweep every value of the genes no result depends on too (by default those no constraint reads "
                  "are swept at their first value only: `cosmic space` lists them)")
      ("resume", "continue an interrupted sweep in OUT (its recorded settings apply; without PSA.yaml, the space "
                 "OUT recorded)")
      ("batch-seconds", "target seconds per batch (and per file flush)", cxxopts::value<double>()->default_value("0.5"))
      ("q,quiet", "no progress output or notes")
      ("h,help", "show this help");
  opts.parse_positional({"psa"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"out", "-o OUT.h5"}}, args, status, {{"psa", "PSA.yaml"}})) return status;
  SweepOptions o;
  o.out = args["out"].as<std::string>();
  o.backend = args["backend"].as<std::string>();
  o.top_k = args["top"].as<int>();
  o.keep = args["keep"].as<std::string>();
  o.seed = args["seed"].as<uint64_t>();
  o.resume = args.count("resume") > 0;
  o.fold = args.count("no-fold") == 0;
  o.quiet = args.count("quiet") > 0;
  if (o.resume) warn_ignored_with_resume(opts, args, {"top", "keep", "shard", "seed", "no-fold", "set"});
  o.batch_s = args["batch-seconds"].as<double>();
  const std::string shard = args["shard"].as<std::string>();
  const size_t slash = shard.find('/');
  auto digits = [](const std::string& t) { return !t.empty() && t.size() < 19 && t.find_first_not_of("0123456789") == std::string::npos; };
  if (slash == std::string::npos || !digits(shard.substr(0, slash)) || !digits(shard.substr(slash + 1)) ||
      (o.shard_i = std::stoull(shard.substr(0, slash))) >= (o.shard_n = std::stoull(shard.substr(slash + 1))))
    return usage_error(opts, "--shard expects I/N with 0 <= I < N, got '" + shard + "'");
  if (!known_backend(o.backend)) return usage_error(opts, "--backend expects auto, cpu or cuda");
  if (!(o.batch_s > 0 && o.batch_s <= 3600)) return usage_error(opts, "--batch-seconds expects seconds above 0, at most 3600");
  if (o.keep != "top" && o.keep != "pareto" && o.keep != "all")
    return usage_error(opts, "--keep expects top, pareto or all");
  if (o.top_k < 1 || o.top_k > kMaxTopK)
    return usage_error(opts, "--top expects 1 to " + std::to_string(kMaxTopK) + " (--keep all keeps every point)");
  try {
    // A resumed sweep loads its PSA with the edits the file recorded; without a PSA file, the
    // space the file recorded.
    const psa::DesignSpace ds = args.count("psa")
                                    ? load_run_psa(args["psa"].as<std::string>(), list_option(args, "set"), o.out, o.resume)
                                    : resumed_space(o.out, "sweep");
    if (ds.objectives.size() > size_t(kMaxSweepObjectives)) {
      std::cerr << "cosmic sweep: " << ds.objectives_at << ": key 'objectives' lists " << ds.objectives.size() << "; a sweep reduces at most "
                << kMaxSweepObjectives << " (cosmic search takes them all)\n";
      return 1;
    }
    if (ds.view->ngenes == 0) {
      std::cerr << "cosmic sweep: " << ds.file << " searches no parameter: nothing to sweep (cosmic eval scores its base)\n";
      return 1;
    }
    if (!o.quiet && !o.resume)
      for (const std::string& n : psa::space_notes(ds)) std::cerr << "cosmic sweep: note: " << n << "\n";
    // --keep all (a fresh sweep; a resumed one keeps its file's settings), of the space the sweep
    // visits: the PSA's with the genes no result depends on folded.
    const uint64_t copies = o.fold ? psa::fold_copies(ds, psa::foldable_genes(ds)) : 1;
    const u128 size = space_size(*ds.view) / copies;
    if (o.keep == "all" && !o.resume && size > u128(UINT64_MAX))
      return usage_error(opts, "--keep all needs a space below 2^64 points");
    // /all lists every point that meets the constraints: past 2^32 rows a file is tens of GB and
    // the run days long (the spaces it is meant for hold up to about 1e8).
    const u128 kMaxAllRows = u128(1) << 32;
    if (o.keep == "all" && !o.resume && size / o.shard_n > kMaxAllRows) {
      u128 rows = 0;
      try {
        rows = psa::feasible_count(ds) / copies / o.shard_n;
      } catch (const psa::ConfigError&) {  // constraints too entangled to count: let it run
      }
      if (rows > kMaxAllRows)
        return usage_error(opts, "--keep all would write a row for each of about " +
                                     psa::with_commas(psa::to_string_u128(rows)) +
                                     " points (those meeting the constraints) to one file, more than 2^32: split the "
                                     "sweep with --shard, or keep top or pareto");
    }
    return run_sweep(ds, o);
  } catch (const psa::ConfigError& e) {
    std::cerr << "cosmic sweep: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "cosmic sweep: " << e.what() << "\n";
    return 1;
  }
}

int cmd_merge(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic merge",
                        "Combine the result files of a sharded sweep (cosmic sweep --shard I/N) into one: counts\n"
                        "and histograms add up, top-K and the Pareto front are recomputed exactly.");
  opts.positional_help("OUT.h5 IN.h5...");
  opts.add_options()
      ("files", "output then inputs", cxxopts::value<std::vector<std::string>>())
      ("q,quiet", "no summary line")
      ("h,help", "show this help");
  opts.parse_positional({"files"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {}, args, status)) return status;
  const std::vector<std::string> files = list_option(args, "files");
  if (files.size() < 2) {
    std::cerr << "cosmic merge: need OUT.h5 and at least one input\n" << opts.help();
    return 2;
  }
  try {
    return merge_sweeps(files[0], std::vector<std::string>(files.begin() + 1, files.end()), args.count("quiet") > 0);
  } catch (const std::exception& e) {
    std::cerr << "cosmic merge: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cosmic
