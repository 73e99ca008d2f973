// `cosmic sweep PSA -o OUT.h5 ...` and `cosmic merge OUT.h5 IN.h5...`: exhaustive sweeps with
// reductions streamed to HDF5 (host/sweep_run.cpp), and the merge of shard files.
#include <cstdlib>
#include <iostream>
#include <tuple>
#include <utility>

#include "host/cli.hpp"

#include "host/commands.hpp"
#include "host/provenance.hpp"
#include "host/sweep.hpp"
#include "psa/config.hpp"

namespace cosmic {

namespace {

// "I/N" from the launcher that started this process (Slurm's srun, Open MPI's or an MPICH-style
// mpirun), and the variables it came from; "" when none gives both: each rank sweeps its shard
// without linking MPI.
std::pair<std::string, std::string> launcher_shard() {
  const std::pair<const char*, const char*> vars[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const auto& [rank, size] : vars)
    if (std::getenv(rank) && std::getenv(size))
      return {std::string(std::getenv(rank)) + "/" + std::getenv(size), std::string(rank) + " and " + size};
  return {"", ""};
}

}  // namespace

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
      ("shard", "I/N: sweep slice I (0-based) of N equal slices of the index range; auto: I and N of the "
                "launcher (srun, mpirun: SLURM_PROCID/SLURM_NTASKS, OMPI_COMM_WORLD_RANK/_SIZE or PMI_RANK/PMI_SIZE); "
                "{shard} in -o becomes I-of-N",
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
  // `-o run-{shard}.h5`: the shard names the file (with --resume too, which takes the rest of
  // its settings from it).
  const size_t named = o.out.find("{shard}");
  if (o.resume) warn_ignored_with_resume(opts, args, {"top", "keep", "seed", "no-fold", "set"});
  if (o.resume && named == std::string::npos) warn_ignored_with_resume(opts, args, {"shard"});
  o.batch_s = args["batch-seconds"].as<double>();
  std::string shard = args["shard"].as<std::string>(), from;
  const bool launched = shard == "auto";
  if (launched && o.resume && named == std::string::npos) shard = "0/1";  // ignored: the file's shard applies
  if (shard == "auto") {
    std::tie(shard, from) = launcher_shard();
    if (shard.empty())
      return usage_error(opts, "--shard auto: no launcher's rank and size in the environment (SLURM_PROCID and SLURM_NTASKS, "
                               "OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE, or PMI_RANK and PMI_SIZE)");
  }
  const size_t slash = shard.find('/');
  auto digits = [](const std::string& t) { return !t.empty() && t.size() < 19 && t.find_first_not_of("0123456789") == std::string::npos; };
  if (slash == std::string::npos || !digits(shard.substr(0, slash)) || !digits(shard.substr(slash + 1)) ||
      (o.shard_i = std::stoull(shard.substr(0, slash))) >= (o.shard_n = std::stoull(shard.substr(slash + 1))))
    return usage_error(opts, "--shard expects I/N with 0 <= I < N < 10^18, or auto, got '" + shard + "'" +
                             (from.empty() ? "" : " (auto: from " + from + ")"));
  for (size_t at = named; at != std::string::npos; at = o.out.find("{shard}", at))
    o.out.replace(at, 7, std::to_string(o.shard_i) + "-of-" + std::to_string(o.shard_n));
  if (named == std::string::npos && launched && o.shard_n > 1 && !o.resume)
    return usage_error(opts, "--shard auto runs " + std::to_string(o.shard_n) + " shards into one -o: name each shard's "
                             "file with {shard} in it (-o sweep-{shard}.h5; cosmic merge OUT.h5 sweep-*-of-" +
                             std::to_string(o.shard_n) + ".h5 joins them)");
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
