// Human-readable and JSON renderings of one evaluated configuration.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kernels/types.hpp"

namespace cosmic {

struct EvalReport {
  std::string model_name;
  std::string system_name;
  Config config;
  Result result;
};

nlohmann::json to_json(const EvalReport& r);
std::string to_text(const EvalReport& r);

}  // namespace cosmic
