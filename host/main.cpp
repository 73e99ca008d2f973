// The `cosmic` command line: one binary, one subcommand per job.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <sys/prctl.h>
#include <unistd.h>

#include "host/commands.hpp"
#include "host/h5.hpp"
#include "host/provenance.hpp"
#include "kernels/model.hpp"

#ifndef COSMIC_VERSION
#define COSMIC_VERSION "0.0.0"
#endif

namespace {

struct Command {
  const char* name;
  int (*run)(int, const char* const*);
  const char* summary;
};

const Command kCommands[] = {
    {"eval", cosmic::cmd_eval, "evaluate one configuration (time, memory, cost breakdowns)"},
    {"validate", cosmic::cmd_validate, "compare predictions with measured runs or ASTRA-sim collective timings"},
    {"space", cosmic::cmd_space, "describe a design space (PSA file): parameters, raw and feasible sizes"},
    {"sweep", cosmic::cmd_sweep, "evaluate every point of a design space, reductions streamed to HDF5"},
    {"merge", cosmic::cmd_merge, "combine the result files of a sharded sweep"},
    {"search", cosmic::cmd_search, "search a design space with a population agent (rw, ga, aco, bo, nsga2)"},
    {"study", cosmic::cmd_study, "run a study file's experiments and write a report with tables and figures"},
    {"show", cosmic::cmd_show, "summarise a result file of sweep, merge or search: counts, best points decoded"},
};

void usage(std::ostream& os) {
  os << "cosmic " << COSMIC_VERSION << ": full-stack design-space exploration of distributed ML systems\n\n"
     << "usage: cosmic COMMAND [ARGS...]   (cosmic COMMAND --help for each command's options)\n\ncommands:\n";
  for (const auto& c : kCommands) os << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
  os << "  version     print the version\n";
}

}  // namespace

int main(int argc, char** argv) {
  // OpenMP's idle worker threads spin-wait by default, and libgomp reads OMP_WAIT_POLICY only when
  // it loads. Between parallel regions the spinning takes CPU from the serial work (the agents'
  // ask/tell, the result writer's thread): on 2 cores a search ran 1.6x slower with spinning
  // workers (docs/performance.md). Unless the user chose a policy, start again with the passive
  // one; if that fails, go on as we are.
  if (!std::getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "passive", 1) == 0) execv("/proc/self/exe", argv);
  // A run a study started with --jobs (host/study.cpp, spawn) stops with the study: SIGTERM, which
  // leaves its file valid and resumable, when the study ends, even killed outright.
  if (const char* study = std::getenv("COSMIC_STUDY_PID")) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (std::to_string(getppid()) != study) return 143;  // the study ended before this line
  }
  cosmic::h5::quiet();
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(std::cout);
    return 0;
  }
  if (cmd == "version" || cmd == "--version") {
    const std::string arg = argc > 2 ? argv[2] : "";
    if (arg == "-h" || arg == "--help") {
      std::cout << "usage: cosmic version\nPrints the version and the model revision (result files record both).\n";
      return 0;
    }
    if (argc > 2) {
      std::cerr << "cosmic version: takes no arguments, got '" << arg << "'\n";
      return 2;
    }
    std::cout << "cosmic " << COSMIC_VERSION << " (model revision " << cosmic::kModelRevision << ")\n";
    return 0;
  }
  cosmic::set_command_line(argc, argv);
  for (const auto& c : kCommands) {
    if (cmd != c.name) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const std::exception& e) {  // each command reports its own errors; this is the net
      std::cerr << "cosmic " << cmd << ": " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "cosmic: unknown command '" << cmd << "'\n";
  usage(std::cerr);
  return 2;
}
