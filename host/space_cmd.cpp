// `cosmic space PSA.yaml [--set key=value ...] [--json]`: what a design space holds: each
// parameter with its values, the raw size (exact, 128-bit) and the exact feasible count
// (constraints only, before the model's memory check).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "host/cli.hpp"
#include <nlohmann/json.hpp>

#include "host/commands.hpp"
#include "host/report.hpp"
#include "host/search.hpp"
#include "host/sweep.hpp"
#include "host/text.hpp"
#include "psa/config.hpp"
#include "psa/space.hpp"

namespace cosmic {

namespace {

// "1, 2, 4, ..., 256, 512" when there are more than 8 values.
std::string abbreviate(const std::vector<std::string>& labels) {
  std::string out;
  const size_t n = labels.size();
  for (size_t i = 0; i < n; ++i) {
    if (n > 8 && i == 3) {
      out += ", ...";
      i = n - 3;
    }
    out += (out.empty() ? "" : ", ") + labels[i];
  }
  return out;
}

std::string derived_text(const SpaceView& v) {
  std::string out;
  if (v.derived_degree >= 0) out += psa::derived_rule(Param(v.derived_degree));
  if (v.algo_follows_topology)
    out += std::string(out.empty() ? "" : "; ") + "algorithm follows topology (Ring -> ring, FullyConnected -> direct, Switch -> halvingDoubling, in place of the base's algorithms)";
  return out.empty() ? "none" : out;
}

}  // namespace

int cmd_space(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic space",
                        "Describe a design space (PSA file, docs/psa.md): every parameter with its values,\n"
                        "the raw size (exact) and the exact number of points satisfying the constraints\n"
                        "(before the model's memory check).");
  opts.positional_help("PSA.yaml");
  add_psa_set_option(opts);
  opts.add_options()
      ("psa", "design-space file", cxxopts::value<std::string>())
      ("json", "print JSON instead of text")
      ("h,help", "show this help");
  opts.parse_positional({"psa"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"psa", "PSA.yaml"}}, args, status)) return status;
  const std::vector<std::string> sets = list_option(args, "set");
  try {
    const psa::DesignSpace ds = psa::load_psa(args["psa"].as<std::string>(), sets);
    psa_agent_params(ds, "");  // checks the agent: mapping as a search would
    const SpaceView& v = *ds.view;
    const u128 raw = space_size(v);
    const u128 feasible = psa::feasible_count(ds);
    std::vector<std::string> objectives;
    for (Objective o : ds.objectives) objectives.push_back(psa::objective_name(o));

    const std::vector<std::string> notes = psa::space_notes(ds, &feasible);
    const std::vector<int32_t> fold = psa::foldable_genes(ds);
    const uint64_t copies_folded = psa::fold_copies(ds, fold);  // no constraint reads them: exact divisions
    if (args.count("json")) {
      nlohmann::json j;
      j["name"] = ds.name;
      j["file"] = ds.file;
      j["model"] = ds.model_name;
      j["system"] = ds.system_name;
      j["genes"] = nlohmann::json::array();
      for (size_t g = 0; g < ds.genes.size(); ++g)
        j["genes"].push_back({{"name", ds.genes[g].name},
                              {"stack", ds.genes[g].stack},
                              {"cardinality", v.gene[g].card},
                              {"values", ds.genes[g].labels},
                              {"no_effect", psa::gene_has_no_effect(ds, g)},
                              {"sweep_folds", std::count(fold.begin(), fold.end(), int32_t(g)) > 0}});
      j["derived"] = {{"algorithm_follows_topology", v.algo_follows_topology}};
      for (Param p : {Param::DP, Param::TP, Param::PP, Param::CP}) j["derived"][psa::degree_name(p)] = int(p) == v.derived_degree;
      j["constraints"] = ds.constraint_text;
      j["limits"] = nlohmann::json::object();
      for (int32_t k = 0; k < v.nlimits; ++k) j["limits"][psa::objective_name(v.limit_obj[k])] = v.limit_max[k];
      j["objectives"] = objectives;
      j["pareto"] = ds.objectives.size() > 1;
      j["agent"] = nlohmann::json::object();
      for (const auto& a : ds.agent_sections)
        for (const auto& [key, value] : a.params) j["agent"][a.name][key.substr(key.find('.') + 1)] = value;
      j["raw_size"] = psa::to_string_u128(raw);
      j["raw_size_double"] = double(raw);
      j["feasible_count"] = psa::to_string_u128(feasible);
      j["feasible_count_double"] = double(feasible);
      j["fold_copies"] = copies_folded;  // what `cosmic sweep` visits: these divided by it
      j["sweep_size"] = psa::to_string_u128(raw / copies_folded);
      j["sweep_feasible_count"] = psa::to_string_u128(feasible / copies_folded);
      j["notes"] = notes;
      std::cout << json_text(j, 2) << "\n";
      return 0;
    }

    std::ostringstream os;
    os << "design space " << ds.name << " (" << ds.file << ")\n";
    os << "base: " << ds.model_name << " on " << ds.system_name << "\n\n";
    size_t width = 4;
    for (const auto& g : ds.genes) width = std::max(width, g.name.size());
    os << "  " << std::left << std::setw(int(width)) << "gene" << "  " << std::setw(10) << "stack" << std::right
       << std::setw(6) << "card" << "  values\n";
    for (size_t g = 0; g < ds.genes.size(); ++g)
      os << "  " << std::left << std::setw(int(width)) << ds.genes[g].name << "  " << std::setw(10) << ds.genes[g].stack
         << std::right << std::setw(6) << v.gene[g].card << "  " << abbreviate(ds.genes[g].labels) << "\n";
    // Genes no result depends on: every result appears (product of their cardinalities) times.
    std::string idle;
    double copies = 1;
    for (size_t g = 0; g < ds.genes.size(); ++g)
      if (v.gene[g].card > 1 && psa::gene_has_no_effect(ds, g)) {
        idle += (idle.empty() ? "" : ", ") + ds.genes[g].name;
        copies *= v.gene[g].card;
      }
    if (!idle.empty())
      os << "\nno effect:   " << idle << "\n             (the model accepts them, no result depends on them:"
         << " each result appears " << fmt_g(copies) << " times; docs/model.md)\n";
    if (!idle.empty()) {  // a sweep folds those no constraint reads
      const std::string folded = join(fold_names(ds));
      if (fold.empty())
        os << "             `cosmic sweep` sweeps every value of them: constraints read them\n";
      else
        os << "             `cosmic sweep` sweeps " << (folded == idle ? std::string("them") : folded)
           << " at the first value only (--no-fold: every value)"
           << (folded == idle ? "" : "; constraints read the others") << "\n";
    }
    os << "\nderived:     " << derived_text(v) << "\n";
    os << "constraints:" << (ds.constraint_text.empty() ? " none" : "") << "\n";
    for (const auto& c : ds.constraint_text) os << "  " << c << "\n";
    if (v.nlimits > 0) os << "limits:      ";
    for (int32_t k = 0; k < v.nlimits; ++k) os << (k ? ", " : "") << psa::limit_text(v, k) << (k + 1 == v.nlimits ? "\n" : "");
    os << "objectives:  ";
    for (size_t i = 0; i < objectives.size(); ++i) os << (i ? ", " : "") << objectives[i];
    os << (objectives.size() > 1 ? " (Pareto front)" : "") << "\n";
    // The PSA's hyperparameters for `cosmic search` (the command line's --param wins).
    for (size_t a = 0; a < ds.agent_sections.size(); ++a) {
      os << (a ? "             " : "agent:       ") << ds.agent_sections[a].name;
      for (const auto& [key, value] : ds.agent_sections[a].params) os << " " << key.substr(key.find('.') + 1) << "=" << value;
      os << "\n";
    }
    os << "\n";
    os << "raw size:        " << psa::with_commas(psa::to_string_u128(raw)) << "  (" << std::setprecision(4)
       << double(raw) << ")\n";
    os << "feasible count:  " << psa::with_commas(psa::to_string_u128(feasible)) << "  (" << double(feasible)
       << "; constraints only, before the memory check)\n";
    if (copies_folded > 1)
      os << "cosmic sweep:    " << psa::with_commas(psa::to_string_u128(raw / copies_folded)) << " points, "
         << psa::with_commas(psa::to_string_u128(feasible / copies_folded)) << " meeting the constraints (each for "
         << copies_folded << " of the space)\n";
    for (const std::string& n : notes) os << "note: " << n << "\n";
    std::cout << os.str();
  } catch (const psa::ConfigError& e) {
    std::cerr << "cosmic space: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace cosmic
