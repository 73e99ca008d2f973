#include "agents/params.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace cosmic::agents {

namespace {

std::string fmt(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// A decimal number (strtod's hexadecimal, infinities and NaNs are not: 0x10 is no way to write 16).
bool parse_real(const std::string& s, double& out) {
  if (s.empty() || s.find_first_of("xXnN") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  // ERANGE also flags underflow (1e-310 is read as a subnormal or 0): that value is taken.
  const bool in_range = errno == 0 || (errno == ERANGE && std::fabs(out) < 1);
  return in_range && end == s.c_str() + s.size() && std::isfinite(out);
}

bool parse_int(const std::string& s, int64_t& out) {
  double d = 0;
  if (!parse_real(s, d) || d != std::floor(d) || std::fabs(d) > 9e15) return false;  // accepts 1e6
  out = int64_t(d);
  return true;
}

}  // namespace

const std::string* ParamReader::find(const std::string& name) {
  used_.insert(key(name));
  auto it = p_.find(key(name));
  return it == p_.end() ? nullptr : &it->second;
}

std::string ParamReader::number_text(double v) {  // the shortest text that reads back as v
  char buf[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

double ParamReader::real(const std::string& name, double def, double lo, double hi) {
  const std::string* s = find(name);
  if (!s) return took(name, def);
  double v = 0;
  if (!parse_real(*s, v) || v < lo || v > hi)
    throw ParamError(key(name) + ": expected a number in [" + fmt(lo) + ", " + fmt(hi) + "], got '" + *s + "'");
  return took(name, v);
}

double ParamReader::real_or_auto(const std::string& name, double auto_value, double lo, double hi) {
  const std::string* s = find(name);
  std::string lower = s ? *s : "";
  for (char& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (!s || lower == "auto") {  // in any case, as PSA choices
    if (effective_) (*effective_)[key(name)] = "auto";
    return auto_value;
  }
  double v = 0;
  if (!parse_real(*s, v) || v < lo || v > hi)
    throw ParamError(key(name) + ": expected auto or a number in [" + fmt(lo) + ", " + fmt(hi) + "], got '" + *s + "'");
  return took(name, v);
}

int64_t ParamReader::integer(const std::string& name, int64_t def, int64_t lo, int64_t hi) {
  const std::string* s = find(name);
  if (!s) return took(name, def);
  int64_t v = 0;
  if (!parse_int(*s, v) || v < lo || v > hi)
    throw ParamError(key(name) + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                     "], got '" + *s + "'");
  return took(name, v);
}

void ParamReader::finish() const {
  const std::string prefix = agent_ + ".";
  for (const auto& kv : p_) {
    if (kv.first.compare(0, prefix.size(), prefix) != 0 || used_.count(kv.first)) continue;
    std::string known;
    for (const auto& u : used_) known += (known.empty() ? "" : ", ") + u;
    throw ParamError(kv.first + ": unknown hyperparameter of agent " + agent_ + " (known: " + known + ")");
  }
}

void add_param(Params& p, const std::string& agent, const std::string& kv) {
  // Spaces around the key and the value are dropped, as --set drops them.
  const auto trimmed = [](std::string t) {
    t.erase(t.find_last_not_of(" \t") + 1);
    return t.erase(0, t.find_first_not_of(" \t"));
  };
  const size_t eq = kv.find('=');
  std::string k = trimmed(kv.substr(0, eq)), v = eq == std::string::npos ? "" : trimmed(kv.substr(eq + 1));
  if (eq == std::string::npos || k.empty() || v.empty()) throw ParamError("--param expects key=value, got '" + kv + "'");
  const size_t dot = k.find('.');
  if (dot == std::string::npos) k = agent + "." + k;
  else if (k.substr(0, dot) != agent)  // it would be recorded but never read
    throw ParamError("--param " + k + ": the search runs agent " + agent + ", so keys are " + agent + ".KEY or KEY");
  if (p.count(k)) throw ParamError("--param " + k + " given twice (" + k + "=" + p[k] + " and " + kv + "): give it once");
  p[k] = v;
}

std::string params_text(const Params& p) {
  std::string s;
  for (const auto& kv : p) s += kv.first + "=" + kv.second + "\n";
  return s;
}

Params params_from_text(const std::string& text) {
  Params p;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) p[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return p;
}

}  // namespace cosmic::agents
