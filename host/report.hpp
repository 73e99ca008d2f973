// Human-readable and JSON renderings of one evaluated configuration.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/types.hpp"

namespace cosmic {

// JSON text of j, `indent` spaces a level; a byte that is not UTF-8 (a file name's: Linux names
// are bytes) is written as U+FFFD rather than failing the whole output.
inline std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct EvalReport {
  std::string model_name;
  std::string system_name;
  Config config;
  Result result;
  // Generate mode: the prefill's time (the first token) and the mean time of the output tokens
  // after it, (time_s - first) / output_tokens; 0 in other modes.
  double first_token_s = 0, per_output_token_s = 0;
  std::vector<std::string> notes;  // what the numbers rest on that the user may not expect
  // Each network dimension's tier ("pod", ...; "-" for one of one NPU) and share of the cost,
  // in dollars, before the total is rounded to the cent (kernels/cost.hpp).
  std::vector<std::string> dim_tier;
  std::vector<double> dim_cost_usd;
  // The network's cost and the cluster's (network + NPUs x compute.price_usd), whatever the
  // layout (the model stops before pricing one it rejects early); NaN where undefined: a Switch
  // without a price, or (cluster) no price per NPU.
  double network_cost_usd = NAN, cluster_cost_usd = NAN;
  // Energy and cost per token (kernels/cost.hpp); NaN where the layout was not timed or the
  // configuration lacks a figure they need (power_W; and for the cost the cluster's cost and
  // system.operation's electricity price and lifetime).
  double energy_per_token_J = NAN, usd_per_token = NAN;
  // Where the parallel groups lie: for tp, cp, dp, pp (and ep, with experts) of degree > 1, the
  // group's ranks along each dimension (empty when the groups cannot be placed).
  std::vector<std::pair<std::string, std::vector<int32_t>>> placement;
};

// Evaluates `c` (evaluate()) and fills the report's other fields.
EvalReport report_of(const std::string& model_name, const std::string& system_name, const Config& c);

nlohmann::json to_json(const EvalReport& r);
// A parameter count to 3 digits: "46.7 B", "86.4 M"; from a thousand billion, whole ("1008 B").
std::string param_count(double n);

std::string to_text(const EvalReport& r);

// Reports side by side, one column each (`cosmic eval --vs`): the status, the time and its
// breakdown, the memory and its breakdown, throughput, MFU, costs and energy where given; the
// first column is the base, and the others' time, memory and throughput are also shown relative
// to it. `labels` name the columns, `legend` says what each is (printed above the table).
std::string comparison_text(const std::vector<EvalReport>& reports, const std::vector<std::string>& labels,
                            const std::vector<std::string>& legend);

}  // namespace cosmic
