// `cosmic eval CONFIG.yaml [--set key=value ...] [--vs 'key=value;...' ...] [--json]`: one
// configuration with breakdowns, or it and variants of it side by side.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "host/cli.hpp"

#include "host/commands.hpp"
#include "host/report.hpp"
#include "host/text.hpp"
#include "kernels/model.hpp"
#include "psa/config.hpp"
#include "psa/names.hpp"

namespace cosmic {

namespace {

// The evaluation of a loaded configuration, with a note where the model's file gives its
// parameter count (params_billion, active_params_billion) more than 10% from what its shape
// counts: a slip in a model file of one's own (ffn, the MLP's matrices, tied embeddings) that
// the time and memory would carry without a word. The shipped presets agree within 3%.
EvalReport checked_report(const psa::LoadedConfig& lc) {
  EvalReport rep = report_of(lc.model_name, lc.system_name, lc.config);
  const YAML::Node model = lc.resolved["model"];
  for (const auto& [key, counted] : {std::pair<const char*, double>{"params_billion", model_params(lc.config.model)},
                                     {"active_params_billion", active_params(lc.config.model)}}) {
    if (!model.IsMap() || !model[key] || !model[key].IsScalar()) continue;
    const double stated = model[key].as<double>() * 1e9;
    if (stated > 0 && std::fabs(counted / stated - 1) > 0.1)
      rep.notes.push_back(std::string("the model's ") + key + " is " + model[key].Scalar() + ", its shape counts " +
                          param_count(counted) + " (more than 10% apart: check ffn, mlp, experts and tied_embeddings)");
  }
  // A price for a tier that none of the network's dimensions takes (kernels/cost.hpp tier_of_dim)
  // is not paid anywhere.
  const YAML::Node prices = lc.resolved["system"]["network"]["prices"];
  if (prices && prices.IsMap()) {
    const auto taken = [&](const std::string& tier) {
      return std::find(rep.dim_tier.begin(), rep.dim_tier.end(), tier) != rep.dim_tier.end();
    };
    std::vector<const char*> used;  // the tiers taken, each once, inner first
    for (const char* t : names::kTier)
      if (taken(t)) used.push_back(t);
    for (const auto& kv : prices) {
      const std::string tier = kv.first.Scalar();
      if (!taken(tier))
        rep.notes.push_back("system.network.prices." + tier + " is not used: this network's dimensions take the " +
                            (used.empty() ? std::string("no tier (one NPU each)")
                                          : join(used) + (used.size() == 1 ? " tier" : " tiers")) +
                            " (docs/config.md, network.prices)");
    }
  }
  return rep;
}

// A --vs text's edits: split at ';' outside quoted values and brackets (so `model.name="a;b"` and
// `key=[1;2]` stay whole), each trimmed; empty ones (`;;`, a trailing `;`) are dropped. As in
// YAML, a quote opens a quoted value only where a value starts (after '=', or '[', '{', ',' or
// ':' in a flow), not inside a plain one (`O'Brien`); `\"` and `''` stay inside their quotes.
std::vector<std::string> split_edits(const std::string& text) {
  std::vector<std::string> edits;
  std::string e;
  char quote = 0, before = 0;  // before: the last character outside spaces
  int depth = 0;
  const auto flush = [&] {
    e = psa::trim(e);
    if (!e.empty()) edits.push_back(e);
    e.clear();
  };
  for (size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (quote) {
      const bool escaped = k + 1 < text.size() && ((quote == '"' && c == '\\') || (quote == '\'' && c == '\'' && text[k + 1] == '\''));
      if (escaped) e += text[k++];  // \" in double quotes, '' in single ones
      else if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && before && std::strchr("=[{,:", before)) {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ';' && depth == 0) {
      flush();
      before = 0;
      continue;
    }
    e += text[k];
    if (c != ' ') before = c;
  }
  flush();
  return edits;
}

// The key an edit sets, spaces dropped as --set drops them.
std::string edit_key(const std::string& edit) { return psa::trim(edit.substr(0, edit.find('='))); }

}  // namespace

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
      ("vs", "a variant to compare side by side with the configuration: edits as --set takes them, "
             "several separated by ';' (--vs 'workload.tp=4;workload.dp=64'; a ';' in quotes or brackets is part of its value); repeatable, up to 8",
       cxxopts::value<std::vector<std::string>>())
      ("json", "print JSON instead of text")
      ("h,help", "show this help");
  opts.parse_positional({"config"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"config", "CONFIG.yaml"}}, args, status)) return status;
  const std::vector<std::string> sets = list_option(args, "set");
  const std::vector<std::string> variants = list_option(args, "vs");
  if (variants.size() > 8) return usage_error(opts, "--vs: at most 8 variants, got " + std::to_string(variants.size()));
  const std::string file = args["config"].as<std::string>();
  try {
    const psa::LoadedConfig lc = psa::load_config(file, sets);
    const EvalReport rep = checked_report(lc);
    if (variants.empty()) {
      if (args.count("json")) std::cout << json_text(to_json(rep), 2) << "\n";
      else std::cout << to_text(rep);
      return 0;
    }
    // Each variant: the configuration with the --set edits and then its own.
    std::vector<EvalReport> reports = {rep};
    std::vector<std::string> labels = {"base"}, legend = {file};
    for (const std::string& s : sets) legend[0] += " --set " + s;
    nlohmann::json j = {{"base", to_json(rep)}, {"variants", nlohmann::json::array()}};
    for (size_t k = 0; k < variants.size(); ++k) {
      const std::vector<std::string> edits = split_edits(variants[k]);
      // One key edited twice in a variant is a slip: which value was meant?
      for (size_t a = 0; a < edits.size(); ++a)
        for (size_t b = 0; b < a; ++b)
          if (edit_key(edits[a]) == edit_key(edits[b]))
            return usage_error(opts, "--vs '" + variants[k] + "': '" + edit_key(edits[a]) + "' is edited twice");
      if (edits.empty()) return usage_error(opts, "--vs '" + variants[k] + "': no edit (KEY=VALUE, several separated by ';')");
      std::vector<std::string> all = sets;
      all.insert(all.end(), edits.begin(), edits.end());
      psa::LoadedConfig v;
      try {
        v = psa::load_config(file, all);
      } catch (const psa::ConfigError& e) {
        throw psa::ConfigError(std::string(e.what()) + " (in --vs '" + variants[k] + "')");
      }
      reports.push_back(checked_report(v));
      labels.push_back(std::string(1, char('A' + k)));
      legend.push_back("base with " + variants[k]);
      j["variants"].push_back({{"vs", variants[k]}, {"edits", edits}, {"result", to_json(reports.back())}});
    }
    if (args.count("json")) std::cout << json_text(j, 2) << "\n";
    else std::cout << comparison_text(reports, labels, legend);
  } catch (const psa::ConfigError& e) {
    std::cerr << "cosmic eval: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace cosmic
