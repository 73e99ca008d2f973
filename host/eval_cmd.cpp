// `cosmic eval CONFIG.yaml [--set key=value ...] [--json]`: one configuration, with breakdowns.
#include <iostream>

#include "host/cli.hpp"

#include "host/commands.hpp"
#include "host/report.hpp"
#include "kernels/model.hpp"
#include "psa/config.hpp"

namespace cosmic {

int cmd_eval(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic eval",
                        "Evaluate one configuration (model + system + workload) with the analytical model.\n"
                        "Prints iteration (or request) time with its breakdown, memory per NPU, network cost,\n"
                        "throughput and MFU. An infeasible configuration is reported with a reason code\n"
                        "(exit status 0: infeasibility is a result, not an error).");
  opts.positional_help("CONFIG.yaml");
  opts.add_options()
      ("config", "configuration file", cxxopts::value<std::string>())
      ("s,set", "override a key, e.g. --set workload.dp=16 --set system.network.dims.0.bandwidth_GBps=100",
       cxxopts::value<std::vector<std::string>>())
      ("json", "print JSON instead of text")
      ("h,help", "show this help");
  opts.parse_positional({"config"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"config", "CONFIG.yaml"}}, args, status)) return status;
  const std::vector<std::string> sets = list_option(args, "set");
  try {
    const psa::LoadedConfig lc = psa::load_config(args["config"].as<std::string>(), sets);
    const EvalReport rep = report_of(lc.model_name, lc.system_name, lc.config);
    if (args.count("json"))
      std::cout << to_json(rep).dump(2) << "\n";
    else
      std::cout << to_text(rep);
  } catch (const psa::ConfigError& e) {
    std::cerr << "cosmic eval: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace cosmic
