// `cosmic study STUDY.yaml -o DIR`: runs a study's experiments (sweeps and agent searches, each to
// HDF5 in DIR) and writes DIR/report.md, DIR/summary.json and the figures (host/study.cpp).
#include <iostream>

#include "host/cli.hpp"

#include "agents/params.hpp"
#include "host/commands.hpp"
#include "host/study.hpp"
#include "psa/config.hpp"

namespace cosmic {

int cmd_study(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic study",
                        "Run a study file's experiments (sweeps and agent searches over design spaces), each into\n"
                        "an HDF5 file in DIR, then compare their best points: DIR/report.md (tables),\n"
                        "DIR/summary.json (the same numbers) and DIR/figures/*.png (scripts/study_plots.py,\n"
                        "when python3 with matplotlib and h5py is found). Schema: docs/cosmic-study.md.");
  opts.positional_help("STUDY.yaml");
  opts.add_options()
      ("study", "study file", cxxopts::value<std::string>())
      ("o,out", "output folder", cxxopts::value<std::string>())
      ("backend", "auto, cpu or cuda", cxxopts::value<std::string>()->default_value("auto"))
      ("j,jobs", "runs at a time, each a child process with its share of the CPU threads (on a many-core "
                 "machine with --backend cpu; with cuda the processes share the GPU and slow each other)",
       cxxopts::value<int>()->default_value("1"))
      ("reuse", "skip runs whose complete HDF5 file (same PSA text, settings, model revision and base configuration) is already in DIR")
      ("no-plots", "do not run the figure script")
      ("q,quiet", "one line per experiment, no progress of each run")
      ("h,help", "show this help");
  opts.parse_positional({"study"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"study", "STUDY.yaml"}, {"out", "-o DIR"}}, args, status)) return status;
  StudyOptions o;
  o.out_dir = args["out"].as<std::string>();
  o.backend = args["backend"].as<std::string>();
  o.quiet = args.count("quiet") > 0;
  o.reuse = args.count("reuse") > 0;
  o.plots = args.count("no-plots") == 0;
  o.jobs = args["jobs"].as<int>();
  if (!known_backend(o.backend)) return usage_error(opts, "--backend expects auto, cpu or cuda");
  if (o.jobs < 1) return usage_error(opts, "--jobs expects a number of runs >= 1");
  if (o.out_dir.empty()) return usage_error(opts, "-o expects a folder for the study's results, got ''");
  try {
    return run_study(args["study"].as<std::string>(), o);
  } catch (const agents::ParamError& e) {
    std::cerr << "cosmic study: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cosmic study: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cosmic
