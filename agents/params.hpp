// Hyperparameters of the agents: "agent.key" -> text, as given by `--param key=value` or by the
// `agent:` mapping of a PSA file. Each agent reads its own keys through ParamReader, which checks
// ranges and refuses unknown keys with a message naming the key, the expected range and the
// value ("ga.mutation_rate: expected a number in [0, 1], got 2").
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace cosmic::agents {

using Params = std::map<std::string, std::string>;

struct ParamError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class ParamReader {
 public:
  // Reads the keys "<agent>.<name>" of `p`; with `effective`, records there every key read with
  // the value it takes, given or default (a number as the shortest text that reads back as it,
  // or "auto").
  ParamReader(const Params& p, std::string agent, Params* effective = nullptr)
      : p_(p), agent_(std::move(agent)), effective_(effective) {}
  double real(const std::string& name, double def, double lo, double hi);
  int64_t integer(const std::string& name, int64_t def, int64_t lo, int64_t hi);
  // A number in [lo, hi] or the word "auto" (returns `auto_value`).
  double real_or_auto(const std::string& name, double auto_value, double lo, double hi);
  // Throws ParamError for any key of this agent that was not read (misspelled, or of no use).
  void finish() const;
  std::string key(const std::string& name) const { return agent_ + "." + name; }

 private:
  const std::string* find(const std::string& name);
  template <class T>
  T took(const std::string& name, T v) {
    if (effective_) (*effective_)[key(name)] = number_text(double(v));
    return v;
  }
  static std::string number_text(double v);
  const Params& p_;
  std::string agent_;
  Params* effective_;
  std::set<std::string> used_;
};

// Splits "key=value" (a --param of a search with `agent`); a key without "<agent>." gets the
// agent's prefix, a key with another prefix or one `p` holds already is refused. Throws ParamError.
void add_param(Params& p, const std::string& agent, const std::string& key_eq_value);

// Canonical text of the parameters (sorted "key=value" lines), recorded in result files, and
// the parameters read back from it (lines without '=' are skipped).
std::string params_text(const Params& p);
Params params_from_text(const std::string& text);

}  // namespace cosmic::agents
