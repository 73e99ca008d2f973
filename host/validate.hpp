// `cosmic validate`: predictions against measured data.
//   - training runs (columns of data/validation/groundtruth-dev.csv): each row is mapped to a
//     configuration (mapping documented in docs/validation.md) and its iteration time (or, for
//     per-layer rows, one layer's forward + backward time) is predicted;
//   - collective timings (columns of data/validation/astrasim-collectives-dev.csv, recognised by
//     the header): each row is predicted with the ASTRA-sim-compatible collective convention.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/csv.hpp"
#include "kernels/types.hpp"

namespace cosmic {

struct ValidationRow {
  std::string row_id;
  std::string label;     // model / configuration summary
  std::string measured_from;  // which column or quantity was compared
  double predicted_s = 0;
  double measured_s = 0;
  double error_pct = 0;  // signed: 100 (predicted - measured) / measured
  // Training rows: the model's memory per NPU for the row's layout (the whole model's, for a
  // per-layer row), and whether it exceeds the NPU's capacity (the time is compared all the same).
  double memory_GiB = 0, capacity_GiB = 0;
  bool out_of_memory = false;
};

struct ValidationReport {
  std::string kind;  // "training" or "collectives"
  std::vector<ValidationRow> rows;
  std::vector<std::pair<std::string, std::string>> skipped;  // row id, reason
  double mean_abs_pct = 0, median_abs_pct = 0, max_abs_pct = 0;
  size_t out_of_memory = 0;  // rows the model finds out of memory
};

// Maps one ground-truth row to a configuration; returns false with `why` when it cannot.
bool groundtruth_config(const std::map<std::string, std::string>& row, Config& out, std::string& why);

ValidationReport validate_file(const std::string& path);
// "training" or "collectives" by the header; throws naming the file and the missing columns.
std::string csv_kind(const CsvTable& t, const std::string& path);
nlohmann::json to_json(const ValidationReport& r);
std::string to_text(const ValidationReport& r);

}  // namespace cosmic
