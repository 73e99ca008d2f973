// PSA files -> DesignSpace (psa/space.hpp): parameters, derived parameters, constraints compiled
// to the SpaceView's stack programs, objectives; exact feasible counts. Schema: docs/psa.md.
#include "psa/space.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "psa/config.hpp"
#include "psa/names.hpp"
#include "psa/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace cosmic::psa {

namespace {

// ---------------------------------------------------------------------------------------------
// Parameters a PSA file can search.

enum class Kind { Int, Real, Bool, Enum, Device };

// An enumeration's names: every accepted name with its code; the canonical name of a value is
// the first one listed in psa/names.hpp.
struct EnumTable {
  std::vector<std::pair<std::string, int>> entries;
  std::string choices;

  std::optional<int> parse(const std::string& s) const {
    for (const auto& e : entries)
      if (names::iequal(e.first, s)) return e.second;
    return std::nullopt;
  }
  std::string label(int code) const {
    for (const auto& e : entries)
      if (e.second == code) return e.first;
    return "?";
  }
};

template <class E, size_t N>
EnumTable table_of(const names::Entry<E> (&t)[N]) {
  EnumTable out;
  for (const auto& e : t) out.entries.emplace_back(e.name, int(e.value));
  out.choices = names::choices(t);
  return out;
}

const EnumTable& enum_table(Param p) {
  static const EnumTable schedule = table_of(names::kSchedule), sharding = table_of(names::kSharding),
                         recompute = table_of(names::kRecompute), policy = table_of(names::kPolicy),
                         multidim = table_of(names::kMultiDim), algo = table_of(names::kAlgo),
                         topology = table_of(names::kTopology), cp_style = table_of(names::kCpStyle),
                         ep_dispatch = table_of(names::kEpDispatch);
  switch (p) {
    case Param::Schedule: return schedule;
    case Param::Sharding: return sharding;
    case Param::Recompute: return recompute;
    case Param::Policy: return policy;
    case Param::MultiDim: return multidim;
    case Param::Topology: return topology;
    case Param::CpStyle: return cp_style;
    case Param::EpDispatch: return ep_dispatch;
    default: return algo;
  }
}

struct ParamDef {
  const char* stack;
  const char* name;
  Param param;
  Kind kind;
  bool per_dim;   // one value per network dimension in the configuration
  double lo, hi;  // accepted range (Int, Real)
};

constexpr double kMaxInt = double(1 << 24);
const ParamDef kParams[] = {
    {"workload", "dp", Param::DP, Kind::Int, false, 1, kMaxInt},
    {"workload", "tp", Param::TP, Kind::Int, false, 1, kMaxInt},
    {"workload", "pp", Param::PP, Kind::Int, false, 1, kMaxInt},
    {"workload", "cp", Param::CP, Kind::Int, false, 1, kMaxInt},
    {"workload", "micro_batch", Param::MicroBatch, Kind::Int, false, 1, kMaxInt},
    {"workload", "global_batch", Param::GlobalBatch, Kind::Int, false, 1, double(int64_t(1) << 40)},
    {"workload", "sequence_parallel", Param::SeqParallel, Kind::Bool, false, 0, 1},
    {"workload", "schedule", Param::Schedule, Kind::Enum, false, 0, 0},
    {"workload", "vpp", Param::Vpp, Kind::Int, false, 1, 1 << 16},
    {"workload", "sharding", Param::Sharding, Kind::Enum, false, 0, 0},
    {"workload", "recompute", Param::Recompute, Kind::Enum, false, 0, 0},
    {"workload", "cp_style", Param::CpStyle, Kind::Enum, false, 0, 0},
    {"workload", "ep", Param::Ep, Kind::Int, false, 1, kMaxInt},
    {"workload", "etp", Param::Etp, Kind::Int, false, 0, kMaxInt},
    {"workload", "ep_dispatch", Param::EpDispatch, Kind::Enum, false, 0, 0},
    {"workload", "recompute_layers", Param::RecomputeLayers, Kind::Int, false, 0, kMaxInt},
    {"collective", "policy", Param::Policy, Kind::Enum, false, 0, 0},
    {"collective", "chunks", Param::Chunks, Kind::Int, false, 1, 1 << 20},
    {"collective", "multidim", Param::MultiDim, Kind::Enum, false, 0, 0},
    {"collective", "algorithm", Param::Algo, Kind::Enum, true, 0, 0},
    {"collective", "all_reduce_algorithm", Param::AlgoAllReduce, Kind::Enum, true, 0, 0},
    {"collective", "all_gather_algorithm", Param::AlgoAllGather, Kind::Enum, true, 0, 0},
    {"collective", "reduce_scatter_algorithm", Param::AlgoReduceScatter, Kind::Enum, true, 0, 0},
    {"collective", "all_to_all_algorithm", Param::AlgoAllToAll, Kind::Enum, true, 0, 0},
    {"network", "topology", Param::Topology, Kind::Enum, true, 0, 0},
    {"network", "npus", Param::Npus, Kind::Int, true, 1, kMaxInt},
    {"network", "bandwidth_GBps", Param::LinkBw, Kind::Real, true, 1e-9, 1e12},
    {"network", "npu_bandwidth_GBps", Param::NpuBw, Kind::Real, true, 1e-9, 1e12},
    {"network", "latency_ns", Param::Latency, Kind::Real, true, 0, 1e15},
    {"compute", "peak_tflops", Param::PeakTflops, Kind::Real, false, 1e-9, 1e12},
    {"compute", "memory_bw_GBps", Param::MemBw, Kind::Real, false, 1e-9, 1e12},
    {"compute", "memory_GB", Param::MemCapacityGB, Kind::Real, false, 1e-9, 1e12},
    {"compute", "device", Param::Device, Kind::Device, false, 0, kMaxDevices - 1},
};
const char* const kStacks[] = {"workload", "collective", "network", "compute"};

const ParamDef* find_param(const std::string& stack, const std::string& name) {
  for (const auto& d : kParams)
    if ((stack.empty() || stack == d.stack) && name == d.name) return &d;
  return nullptr;
}
const ParamDef& def_of(Param p) {
  for (const auto& d : kParams)
    if (d.param == p) return d;
  return kParams[0];
}

std::string param_list(const std::string& stack) {
  std::string out;
  for (const auto& d : kParams)
    if (stack.empty() || stack == d.stack) out += (out.empty() ? "" : ", ") + (stack.empty() ? std::string(d.stack) + "." : "") + d.name;
  return out;
}

// 10 significant digits, or as many as it takes to read back the same value (labels of values
// that differ only past the tenth digit stay distinct).
std::string fmt_number(double v) {
  char buf[64];
  for (int digits : {10, 17}) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// Splits "topology.2" into ("topology", 2); no suffix gives dim -1.
std::pair<std::string, int> split_dim(const std::string& s) {
  const auto dot = s.rfind('.');
  if (dot == std::string::npos || dot + 1 == s.size()) return {s, -1};
  for (size_t i = dot + 1; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return {s, -1};
  if (s.size() - dot - 1 > 3) return {s, -1};
  return {s.substr(0, dot), std::stoi(s.substr(dot + 1))};
}

// ---------------------------------------------------------------------------------------------
// Values of one parameter.

struct Value {
  double code;
  std::string label;
};

std::string expected_of(const ParamDef& d) {
  switch (d.kind) {
    case Kind::Int: return "an integer in [" + fmt_number(d.lo) + ", " + fmt_number(d.hi) + "]";
    case Kind::Real: return "a number in [" + fmt_number(d.lo) + ", " + fmt_number(d.hi) + "]";
    case Kind::Bool: return "true or false";
    case Kind::Enum: return "one of " + enum_table(d.param).choices;
    case Kind::Device: return "a system preset or system file, whose compute figures and calibration make the NPU type";
  }
  return "";
}

// Checks a number against the parameter's kind and range.
bool number_ok(const ParamDef& d, double v) {
  if (!std::isfinite(v) || v < d.lo || v > d.hi) return false;
  return d.kind != Kind::Int || v == std::floor(v);
}

Value parse_value(const Section& s, const ParamDef& d, const YAML::Node& n, const std::string& kp) {
  const std::string text = n.IsScalar() ? n.Scalar() : "";
  if (d.kind == Kind::Device) {  // its code is its place in the list (parse_values)
    const YAML::Node name = n.IsMap() ? n["name"] : YAML::Node();  // (a missing key: false, not to be asked its type)
    if (name && name.IsScalar() && !name.Scalar().empty()) return {0, name.Scalar()};  // a system inline
    if (text.empty()) s.fail_node(n, kp, expected_of(d) + " (inline: a mapping with its name)");
    return {0, text};
  }
  if (!n.IsScalar()) s.fail_node(n, kp, expected_of(d));
  if (d.kind == Kind::Enum) {
    const auto& t = enum_table(d.param);
    if (auto c = t.parse(text)) return {double(*c), t.label(*c)};
    s.fail_node(n, kp, expected_of(d));
  }
  if (d.kind == Kind::Bool) {
    if (names::iequal(text, "true") || names::iequal(text, "yes") || text == "1") return {1, "true"};
    if (names::iequal(text, "false") || names::iequal(text, "no") || text == "0") return {0, "false"};
    s.fail_node(n, kp, expected_of(d));
  }
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(text, &used);
    if (used != text.size()) s.fail_node(n, kp, expected_of(d));
  } catch (const std::logic_error&) {
    s.fail_node(n, kp, expected_of(d));
  }
  if (!number_ok(d, v)) s.fail_node(n, kp, expected_of(d));
  return {v, fmt_number(v)};
}

// A required key is missing: the error points at the mapping that lacks it.
[[noreturn]] void missing(const Section& s, const char* key, const std::string& expected) {
  throw ConfigError(where(s.sources(), s.key_path(key), s.node()) + ": key '" + s.key_path(key) + "': expected " +
                    expected + " (required)");
}

// A number inside a range / pow2 mapping (bounds are checked per generated value).
double bound(const Section& s, const char* key, bool required, double def) {
  if (!s.has(key)) {
    if (required) missing(s, key, "a number");
    return def;
  }
  return s.number(key, def, -1e300, 1e300);
}

std::vector<Value> parse_values(const Section& spec, const ParamDef& d, const YAML::Node& spec_node) {
  std::vector<Value> out;
  const int forms = int(spec.has("values")) + int(spec.has("range")) + int(spec.has("pow2"));
  if (forms != 1)  // the parameter's own key, and what it gave
    throw ConfigError(where(spec.sources(), spec.path(), spec_node) + ": key '" + spec.path() +
                      "': expected exactly one of values, range or pow2, got " +
                      (forms == 0 ? "none of them" : std::to_string(forms) + " of them"));
  // A generated value out of the parameter's range blames the bound it passed; one that is not
  // a whole number (an integer parameter) the step, or min when it is the first.
  auto add_number = [&](double v, const Section& r) {
    if (!number_ok(d, v)) {
      const char* key = v > d.hi ? "max" : (v < d.lo || out.empty()) ? "min" : "step";
      r.fail(key, expected_of(d) + " for every generated value (" + fmt_number(v) + ")");
    }
    out.push_back({v, fmt_number(v)});
    if (out.size() > size_t(kMaxValues)) r.fail("max", "at most " + std::to_string(kMaxValues) + " values");
  };
  if (spec.has("values")) {
    const YAML::Node list = spec.raw("values");
    const std::string kp = spec.key_path("values");
    if (!list.IsSequence() || list.size() == 0) spec.fail_node(list, kp, "a non-empty list");
    if (d.kind == Kind::Device && list.size() > size_t(kMaxDevices))
      spec.fail_node(list, kp, "at most " + std::to_string(kMaxDevices) + " NPU types");
    for (size_t i = 0; i < list.size(); ++i) {
      out.push_back(parse_value(spec, d, list[i], kp + "." + std::to_string(i)));
      if (d.kind == Kind::Device) out.back().code = double(i);
    }
  } else if (d.kind == Kind::Enum || d.kind == Kind::Bool || d.kind == Kind::Device) {
    spec.fail(spec.has("range") ? "range" : "pow2", "'values: [...]' (range and pow2 are for numbers)");
  } else if (spec.has("range")) {
    const Section r = spec.sub("range");
    r.check_keys({"min", "max", "step"});
    const double lo = bound(r, "min", true, 0), hi = bound(r, "max", true, 0), step = bound(r, "step", false, 1);
    if (step <= 0) r.fail("step", "a positive number");
    if (hi < lo) r.fail("max", "a number >= min (" + fmt_number(lo) + ")");
    const double n = std::floor((hi - lo) / step + 1e-9) + 1;
    if (n > kMaxValues)
      r.fail("step", "a step giving at most " + std::to_string(kMaxValues) + " values (step " + fmt_number(step) +
                         (r.has("step") ? "" : ", the default,") + " gives " + fmt_number(n) + ")");
    // lo + i step carries the binary rounding of step (0.1 x 3 = 0.30000000000000004): each
    // value is taken to 15 significant digits, the decimal the file meant.
    for (int i = 0; i < int(n); ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.15g", lo + i * step);
      add_number(std::strtod(buf, nullptr), r);
    }
  } else {
    const Section p = spec.sub("pow2");
    p.check_keys({"min", "max"});
    const double lo = bound(p, "min", true, 1), hi = bound(p, "max", true, 1);
    // Bounds that are not powers of two would silently drop out ({min: 3} starting at 4).
    const auto power_of_two = [&](const char* key, double v) {
      int e = 0;
      if (std::frexp(v, &e) != 0.5)
        p.fail(key, "a power of two (" + fmt_number(v) + " lies between " + fmt_number(std::ldexp(1.0, e - 1)) + " and " +
                        fmt_number(std::ldexp(1.0, e)) + ")");
    };
    if (lo <= 0) p.fail("min", "a positive number");
    power_of_two("min", lo);
    power_of_two("max", hi);
    if (hi < lo) p.fail("max", "a number >= min (" + fmt_number(lo) + ")");
    for (int k = -60; k < 63; ++k) {  // fractions too: {min: 0.25, max: 2} is 0.25, 0.5, 1, 2
      const double v = std::ldexp(1.0, k);
      if (v >= lo && v <= hi) add_number(v, p);
    }
    if (out.empty()) p.fail("max", "a range holding at least one power of two");
  }
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (out[i].code == out[j].code || (d.kind == Kind::Device && out[i].label == out[j].label))
        spec.fail_node(spec.raw("values"), spec.key_path("values"), "distinct values ('" + out[i].label + "' twice)");
  return out;
}

// ---------------------------------------------------------------------------------------------
// Constraint expressions -> stack programs (kernels/space.hpp Op / Instr).
//
//   constraint := both ('or' both)*
//   both       := condition ('and' condition)*
//   condition  := comparison | '(' constraint ')'   (a parenthesis that holds a comparison)
//   comparison := sum CMP sum        CMP: == != < <= > >=
//   sum        := term (('+' | '-') term)*
//   term       := factor (('*' | '/') factor)*
//   factor     := NUMBER | NAME | product(NAME) | sum(NAME) | '(' sum ')' | '-' factor
// NAME: [stack.]param[.dim], npus_total, network_cost, npu_bandwidth_total, true, false, or an
// enumeration value (Switch, zero3, ...).

class ExprCompiler {
 public:
  ExprCompiler(const std::string& text, int ndims, std::string where_key)
      : t_(text), ndims_(ndims), where_(std::move(where_key)) {}

  std::vector<Instr> compile() {
    either();
    c_operators();
    if (pos_ != t_.size()) fail("unexpected '" + t_.substr(pos_) + "'");
    // The evaluator's stack holds 16 values.
    int depth = 0, most = 0;
    for (const auto& in : code_) {
      depth += (in.op == Op::PushConst || in.op == Op::PushParam || in.op == Op::PushNpusTotal ||
                in.op == Op::PushNetworkCost || in.op == Op::PushNpuBwTotal)
                   ? 1
                   : -1;
      most = std::max(most, depth);
    }
    if (most > 16) fail("expression too deeply nested (the evaluator's stack holds 16 values)");
    return code_;
  }

 private:
  // What an operand is, for the checks on enumerations: a number (a constant, a numeric or
  // boolean parameter, arithmetic), an enumeration parameter, or an enumeration value whose code
  // is fixed by the parameter it is compared with.
  struct Operand {
    const EnumTable* table = nullptr;  // an enumeration parameter's values
    std::string value;                 // an enumeration value's name
    size_t at = 0;                     // its column
    size_t push = 0;                   // a value's PushConst in code_
    bool named = true;                 // false: a word that names no parameter nor any enumeration's value
    bool is_enum() const { return table || !value.empty(); }
  };

  [[noreturn]] void fail(const std::string& msg) const {
    const size_t kQuote = 100;  // a long expression is quoted up to here
    const std::string text = t_.size() > kQuote ? t_.substr(0, kQuote) + "..." : t_;
    throw ConfigError(where_ + ": " + msg + " in '" + text + "' at column " + std::to_string(pos_ + 1));
  }
  [[noreturn]] void fail_at(size_t at, const std::string& msg) {
    pos_ = at;
    fail(msg);
  }
  void no_arithmetic(const Operand& a, const Operand& b, const char* op) {
    for (const Operand* x : {&a, &b}) {
      if (!x->named) unknown_parameter(x->value, x->at);
      if (x->is_enum()) fail_at(x->at, std::string("'") + op + "' on an enumeration");
    }
  }
  // An enumeration compares with == or != to a parameter of the same enumeration or to one of
  // its values; a number never compares with an enumeration.
  void check_comparison(const Operand& l, const Operand& r, Op cmp, size_t cmp_at) {
    // A word that is no name: a misspelt value where the other side is an enumeration parameter
    // (said below, with its values), else a misspelt parameter.
    if (!l.named && !r.table) unknown_parameter(l.value, l.at);
    if (!r.named && !l.table) unknown_parameter(r.value, r.at);
    if (!l.is_enum() && !r.is_enum()) return;
    if (!l.is_enum() || !r.is_enum())
      fail_at((l.is_enum() ? l : r).at, "an enumeration compared with a number");
    if (cmp != Op::Eq && cmp != Op::Ne) fail_at(cmp_at, "enumerations compare with == or != only");
    if (!l.table && !r.table) fail_at(r.at, "two enumeration values compared (one side should be a parameter)");
    if (l.table && r.table) {
      if (l.table != r.table) fail_at(r.at, "parameters of different enumerations compared");
      return;
    }
    const Operand& param = l.table ? l : r;
    const Operand& value = l.table ? r : l;
    const auto code = param.table->parse(value.value);
    if (!code) fail_at(value.at, "'" + value.value + "' is not a value of that parameter (one of " + param.table->choices + ")");
    code_[value.push].arg = double(*code);
  }
  void either() {
    for (both(); keyword("or");) {
      both();
      code_.push_back(Instr{Op::Or, -1, 0});
    }
  }
  void both() {
    for (condition(); keyword("and");) {
      condition();
      code_.push_back(Instr{Op::And, -1, 0});
    }
  }
  // A comparison, or a parenthesised constraint: a parenthesis that holds a comparison
  // operator before it closes ('(tp == 8 or pp == 1) and ...'), where one that does not is
  // arithmetic ('(dp + cp) * 2 <= 8').
  void condition() {
    skip();
    if (pos_ < t_.size() && t_[pos_] == '(' && holds_comparison(pos_)) {
      if (++depth_ > kMaxNesting) fail("parentheses and signs nested more than " + std::to_string(kMaxNesting) + " deep");
      ++pos_;
      either();
      c_operators();
      if (!eat(")")) fail("expected ')'");
      --depth_;
      return;
    }
    compare();
  }
  // Where a condition ends: C's operators for `and` and `or`, named with the words to write.
  void c_operators() {
    skip();
    if (t_.compare(pos_, 2, "&&") == 0) fail("'&&' is not an operator (write 'and')");
    if (t_.compare(pos_, 2, "||") == 0) fail("'||' is not an operator (write 'or')");
  }
  bool holds_comparison(size_t open) const {
    int level = 0;
    for (size_t i = open; i < t_.size(); ++i) {
      const char c = t_[i];
      if (c == '(') ++level;
      if (c == ')' && --level == 0) return false;
      if (c == '<' || c == '>' || c == '=' || c == '!') return true;
    }
    return false;  // not closed: the arithmetic reading says so
  }
  void compare() {
    const Operand l = sum();
    skip();
    const size_t cmp_at = pos_;
    Op cmp;
    if (!comparison(cmp)) fail("expected a comparison (==, !=, <, <=, >, >=)");
    const Operand r = sum();
    check_comparison(l, r, cmp, cmp_at);
    code_.push_back(Instr{cmp, -1, 0});
  }
  // The word `w` as a whole word (not the start of a name such as `order`).
  bool keyword(const char* w) {
    skip();
    const size_t n = std::char_traits<char>::length(w);
    if (t_.compare(pos_, n, w) != 0) return false;
    const size_t end = pos_ + n;
    if (end < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[end])) || t_[end] == '_' || t_[end] == '.'))
      return false;
    pos_ = end;
    return true;
  }
  void skip() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  bool eat(const char* s) {
    skip();
    const size_t n = std::char_traits<char>::length(s);
    if (t_.compare(pos_, n, s) != 0) return false;
    pos_ += n;
    return true;
  }
  bool comparison(Op& op) {
    if (eat("==")) op = Op::Eq;
    else if (eat("!=")) op = Op::Ne;
    else if (eat("<=")) op = Op::Le;
    else if (eat(">=")) op = Op::Ge;
    else if (eat("<")) op = Op::Lt;
    else if (eat(">")) op = Op::Gt;
    else if (eat("=")) { --pos_; fail("'=' is not a comparison (write '==')"); }
    else return false;
    return true;
  }
  Operand sum() {
    Operand a = term();
    while (true) {
      const char* op = eat("+") ? "+" : eat("-") ? "-" : nullptr;
      if (!op) return a;
      const Operand b = term();
      no_arithmetic(a, b, op);
      code_.push_back(Instr{*op == '+' ? Op::Add : Op::Sub, -1, 0});
      a = Operand{};
    }
  }
  Operand term() {
    Operand a = factor();
    while (true) {
      const char* op = eat("*") ? "*" : eat("/") ? "/" : nullptr;
      if (!op) return a;
      const Operand b = factor();
      no_arithmetic(a, b, op);
      code_.push_back(Instr{*op == '*' ? Op::Mul : Op::Div, -1, 0});
      a = Operand{};
    }
  }
  std::string name_token() {
    skip();
    const size_t start = pos_;
    while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_' || t_[pos_] == '.'))
      ++pos_;
    return t_.substr(start, pos_ - start);
  }
  Operand factor() {
    skip();
    if (pos_ >= t_.size()) fail("expected a parameter, number or '(' but the expression ended");
    const char c = t_[pos_];
    // Parentheses and signs recurse: a depth limit keeps a hostile expression from overflowing
    // the parser's stack (no program that fits kMaxProgram needs more).
    if ((c == '(' || c == '-') && ++depth_ > kMaxNesting)
      fail("parentheses and signs nested more than " + std::to_string(kMaxNesting) + " deep");
    if (c == '(') {
      ++pos_;
      const Operand inner = sum();
      Op cmp;
      const size_t at = pos_;
      if (comparison(cmp))
        fail_at(at, "a comparison inside arithmetic (a condition is not a number; parentheses around a whole "
                    "condition group it)");
      if (!eat(")")) fail("expected ')'");
      --depth_;
      return inner;
    }
    if (c == '-') {
      ++pos_;
      code_.push_back(Instr{Op::PushConst, -1, 0});
      const Operand x = factor();
      no_arithmetic(x, Operand{}, "-");
      code_.push_back(Instr{Op::Sub, -1, 0});
      --depth_;
      return {};
    }
    const bool digit_first = std::isdigit(static_cast<unsigned char>(c)) || c == '.';
    if (digit_first) {
      // A decimal number: digits with an optional point, then an optional exponent (e, a sign,
      // digits). Followed by a letter, digit, '_' or '.', the word is a name instead (the
      // enumeration value 1f1b), or a bad number if it holds no letter (1.2.3).
      const auto digit = [&](size_t i) { return i < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i])); };
      const auto word_char = [&](size_t i) {
        return i < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i])) || t_[i] == '_' || t_[i] == '.');
      };
      size_t end = pos_, digits = 0;
      for (; digit(end); ++end) ++digits;
      if (end < t_.size() && t_[end] == '.')
        for (++end; digit(end); ++end) ++digits;
      if (digits > 0 && end < t_.size() && (t_[end] == 'e' || t_[end] == 'E')) {
        size_t e = end + 1;
        if (e < t_.size() && (t_[e] == '+' || t_[e] == '-')) ++e;
        if (digit(e)) {
          while (digit(e)) ++e;
          end = e;
        }
      }
      if (digits > 0 && !word_char(end)) {
        const double v = std::strtod(t_.c_str() + pos_, nullptr);
        if (!std::isfinite(v)) fail("number too large");
        pos_ = end;
        code_.push_back(Instr{Op::PushConst, -1, v});
        return {};
      }
      bool letters = false;
      for (size_t i = pos_; word_char(i); ++i) letters = letters || std::isalpha(static_cast<unsigned char>(t_[i]));
      if (!letters) fail("bad number");
    }
    if (!digit_first && !std::isalpha(static_cast<unsigned char>(c)) && c != '_') fail("expected a parameter, number or '('");
    const size_t at = pos_;
    const std::string name = name_token();
    if (eat("(")) {
      if (name != "product" && name != "sum") fail_at(at, "unknown function '" + name + "' (product, sum)");
      const size_t arg_at = pos_;
      const ParamDef* d = lookup(name_token(), arg_at, true);
      if (d->kind == Kind::Enum) fail_at(arg_at, name + "() of an enumeration");
      if (!eat(")")) fail("expected ')'");
      for (int k = 0; k < ndims_; ++k) {
        code_.push_back(Instr{Op::PushParam, int8_t(k), double(int(d->param))});
        if (k > 0) code_.push_back(Instr{name == "product" ? Op::Mul : Op::Add, -1, 0});
      }
      return {};
    }
    if (name == "npus_total") { code_.push_back(Instr{Op::PushNpusTotal, -1, 0}); return {}; }
    if (name == "network_cost") { code_.push_back(Instr{Op::PushNetworkCost, -1, 0}); return {}; }
    if (name == "npu_bandwidth_total") { code_.push_back(Instr{Op::PushNpuBwTotal, -1, 0}); return {}; }
    if (name == "true" || name == "false") { code_.push_back(Instr{Op::PushConst, -1, name == "true" ? 1.0 : 0.0}); return {}; }
    auto [base, dim] = split_dim(name);
    if (dim >= 0 && split_dim(base).second >= 0) fail_at(at, "'" + name + "': one dimension index at most");
    if (dim >= 0 && (base == "npus_total" || base == "network_cost" || base == "npu_bandwidth_total"))
      fail_at(at, "'" + base + "' is a whole-network total, not a per-dimension parameter");
    if (base.find('.') == std::string::npos && dim < 0 && !find_param("", base)) {
      // An enumeration value: its code is set by check_comparison from the parameter it meets.
      bool known = false;
      for (Param p : {Param::Schedule, Param::Sharding, Param::Recompute, Param::CpStyle, Param::Policy,
                      Param::MultiDim, Param::Algo, Param::Topology})
        known = known || enum_table(p).parse(base).has_value();
      // Any other such word is taken for a value too, so that a misspelt one is said to be no
      // value of the parameter it meets (check_comparison); elsewhere it is an unknown parameter.
      code_.push_back(Instr{Op::PushConst, -1, 0});
      Operand v;
      v.value = base;
      v.at = at;
      v.push = code_.size() - 1;
      v.named = known;
      return v;
    }
    const ParamDef* d = lookup(base, at, false);
    if (d->per_dim && dim < 0)
      fail_at(at, "'" + name + "' has one value per network dimension: write " + name + ".N (N < " + std::to_string(ndims_) +
                      ") or product(" + name + ") / sum(" + name + ")");
    if (!d->per_dim && dim >= 0) fail_at(at, "'" + base + "' is not a per-dimension parameter");
    if (dim >= ndims_) fail_at(at, "dimension " + std::to_string(dim) + " out of range (the base network has " + std::to_string(ndims_) + ")");
    code_.push_back(Instr{Op::PushParam, int8_t(dim), double(int(d->param))});
    Operand x;
    if (d->kind == Kind::Enum) x.table = &enum_table(d->param);
    x.at = at;
    return x;
  }
  [[noreturn]] void unknown_parameter(const std::string& name, size_t at) {
    pos_ = at;
    fail("unknown parameter '" + name + "' (parameters: " + param_list("") + ", npus_total, network_cost, npu_bandwidth_total)");
  }
  // "[stack.]param" -> its definition, or an error listing the known names.
  const ParamDef* lookup(const std::string& name, size_t at, bool want_per_dim) {
    std::string stack, param = name;
    if (auto dot = name.find('.'); dot != std::string::npos) {
      stack = name.substr(0, dot);
      param = name.substr(dot + 1);
    }
    const ParamDef* d = find_param(stack, param);
    if (!d) unknown_parameter(name, at);
    if (d->param == Param::Device) {
      pos_ = at;
      fail("'" + name + "' is not read by constraints: read the figures it sets, compute.peak_tflops, compute.memory_bw_GBps, "
           "compute.memory_GB");
    }
    if (want_per_dim && !d->per_dim) { pos_ = at; fail("product() and sum() take a per-dimension parameter, not '" + name + "'"); }
    return d;
  }

  const std::string& t_;
  int ndims_;
  std::string where_;
  size_t pos_ = 0;
  static constexpr int kMaxNesting = 64;
  int depth_ = 0;  // parentheses and signs open at pos_
  std::vector<Instr> code_;
};

// ---------------------------------------------------------------------------------------------
// Objectives.

struct ObjectiveName {
  const char* name;
  Objective value;
};
const ObjectiveName kObjectives[] = {
    {"latency", Objective::Latency},          {"throughput", Objective::Throughput},
    {"memory", Objective::Memory},            {"cost", Objective::Cost},
    {"runtime_x_bw", Objective::RuntimeXBw},  {"runtime_x_cost", Objective::RuntimeXCost},
    {"network_cost", Objective::Cost},        {"runtime*bw", Objective::RuntimeXBw},
    {"runtime*cost", Objective::RuntimeXCost},    {"first_token", Objective::FirstToken},
    {"per_output_token", Objective::PerOutputToken}, {"ttft", Objective::FirstToken},
    {"tpot", Objective::PerOutputToken},        {"npus", Objective::Npus},
    {"cluster_cost", Objective::ClusterCost},   {"npu_s_per_token", Objective::NpuSPerToken},
    {"energy_per_token", Objective::EnergyPerToken}, {"usd_per_token", Objective::UsdPerToken},
};
const char* kObjectiveChoices =
    "latency, throughput, memory, cost, runtime_x_bw, runtime_x_cost, first_token, per_output_token, npus, cluster_cost, "
    "npu_s_per_token, energy_per_token, usd_per_token, all";

bool is_per_dim(Param p) { return def_of(p).per_dim; }
bool is_algo(Param p) { return int(p) >= int(Param::Algo) && int(p) <= int(Param::AlgoAllToAll); }

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string degree_name(Param p) {
  switch (p) {
    case Param::DP: return "dp";
    case Param::TP: return "tp";
    case Param::PP: return "pp";
    case Param::CP: return "cp";
    default: return "?";
  }
}

std::string derived_rule(Param p) {
  std::string others;
  for (Param q : {Param::DP, Param::TP, Param::CP, Param::PP})
    if (q != p) others += (others.empty() ? "" : " x ") + degree_name(q);
  return degree_name(p) + " = NPUs / (" + others + ")";
}

const char* objective_name(Objective o) {
  for (const auto& e : kObjectives)
    if (e.value == o) return e.name;
  return "?";
}

std::optional<Objective> objective_named(const std::string& name) {
  for (int o = 0; o < kNumObjectives; ++o)
    if (name == objective_name(Objective(o))) return Objective(o);
  return std::nullopt;
}

bool is_objective_word(const std::string& word) {
  if (word == "all") return true;
  for (const auto& e : kObjectives)
    if (names::iequal(e.name, word)) return true;
  return false;
}
std::string objective_choices() { return kObjectiveChoices; }

std::string limit_text(const SpaceView& s, int32_t k) { return limit_text(s.limit_obj[k], s.limit_max[k]); }

namespace {
// Whether first_token / per_output_token mean a serving latency in `mode` (docs/psa.md): the
// first token in generate, serve and prefill, the time per output token in generate and serve;
// elsewhere both are the run's time.
bool serving_latency(Objective o, Mode mode) {
  const bool serves = mode == Mode::Generate || mode == Mode::Serve;
  return (o == Objective::FirstToken && (serves || mode == Mode::Prefill)) || (o == Objective::PerOutputToken && serves);
}
}  // namespace

const char* objective_units(Objective o) {
  switch (o) {
    case Objective::Throughput: return "s/token";
    case Objective::Memory: return "bytes";
    case Objective::Cost:
    case Objective::ClusterCost: return "USD";
    case Objective::RuntimeXBw: return "s x GB/s / 2000";
    case Objective::RuntimeXCost: return "s x USD";
    case Objective::Npus: return "NPUs";
    case Objective::NpuSPerToken: return "NPU-s/token";
    case Objective::EnergyPerToken: return "J/token";
    case Objective::UsdPerToken: return "USD/token";
    default: return "s";  // the times
  }
}

std::string limit_text(Objective o, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, o == Objective::RuntimeXBw ? "%.6g (%s)" : "%.6g %s", v, objective_units(o));
  std::string text = std::string(objective_name(o)) + " <= " + buf;
  if (o == Objective::Throughput) std::snprintf(buf, sizeof buf, " (%.6g tokens/s)", 1 / v);
  else if (o == Objective::Memory) std::snprintf(buf, sizeof buf, " (%.4g GiB)", v / 1073741824.0);
  else if (o == Objective::NpuSPerToken) std::snprintf(buf, sizeof buf, " (%.6g tokens/s per NPU)", 1 / v);
  else if (o == Objective::UsdPerToken) std::snprintf(buf, sizeof buf, " ($%.6g per million tokens)", v * 1e6);
  else buf[0] = '\0';
  return text + buf;
}

namespace {
// A resolved configuration tree as YAML text: the same tree gives the same text, whatever the
// files' layout and comments were.
std::string yaml_text(const YAML::Node& n) {
  YAML::Emitter em;
  em << n;
  return std::string(em.c_str()) + "\n";
}
}  // namespace

std::string point_config(const DesignSpace& space, const int32_t* genome, const std::string& comment) {
  const SpaceView& s = *space.view;
  const Config c = decode(s, genome);
  // Numbers as 17 significant digits (exact for doubles), so the file reads back as `c`.
  const auto num = [](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  YAML::Node root = YAML::Load(space.base_text);
  // Every field a gene or a derived parameter may set, from the decoded point (the rest is the
  // base's): the workload's layout and settings, the network's scalars and every dimension.
  YAML::Node w = root["workload"];
  const Workload& k = c.work;
  w["dp"] = k.dp, w["tp"] = k.tp, w["pp"] = k.pp, w["cp"] = k.cp, w["ep"] = k.ep;
  if (k.etp > 0) w["etp"] = k.etp;  // 0, not folded: the default, left out
  else w.remove("etp");
  w["micro_batch"] = k.micro_batch, w["global_batch"] = k.global_batch;
  w["sequence_parallel"] = k.seq_parallel;
  w["schedule"] = names::name(names::kSchedule, k.schedule);
  w["vpp"] = k.schedule == Schedule::Interleaved ? k.vpp : 1;  // read only when interleaved (a file refuses it else)
  w["sharding"] = names::name(names::kSharding, k.sharding), w["recompute"] = names::name(names::kRecompute, k.recompute);
  if (k.recompute == Recompute::Full && k.recompute_layers > 0) w["recompute_layers"] = k.recompute_layers;
  else w.remove("recompute_layers");  // read only with recompute full (a file refuses it else)
  if (k.recompute != Recompute::Selective) w.remove("recompute_modules");  // likewise with recompute selective
  w["cp_style"] = names::name(names::kCpStyle, k.cp_style);
  if (k.ep_dispatch != EpDispatch::AllToAll) w["ep_dispatch"] = names::name(names::kEpDispatch, k.ep_dispatch);
  else w.remove("ep_dispatch");
  YAML::Node net = root["system"]["network"];
  net["chunks"] = c.net.chunks;
  net["policy"] = names::name(names::kPolicy, c.net.policy);
  net["multidim"] = names::name(names::kMultiDim, c.net.multidim);
  for (int32_t d = 0; d < c.net.ndims; ++d) {
    YAML::Node dim = net["dims"][d];
    const NetDim& n = c.net.dim[d];
    dim["topology"] = names::name(names::kTopology, n.topology);
    dim["npus"] = n.npus;
    dim["bandwidth_GBps"] = num(n.link_bw_GBps);  // per link: a per-NPU gene's value divided
    dim["latency_ns"] = num(n.latency_ns);
    dim.remove("algorithm");
    for (const auto& coll : names::kColl) dim["algorithms"][coll.name] = names::name(names::kAlgo, n.algo[int(coll.value)]);
  }
  // Compute genes: their values as written (a capacity in GB, the peak of the model's precision);
  // an NPU type's compute section and calibration as its system gives them.
  YAML::Node compute = root["system"]["compute"];
  for (int32_t g = 0; g < s.ngenes; ++g) {
    const double v = s.values[s.gene[g].offset + genome[g]];
    if (s.gene[g].param == Param::Device) {  // the base's network with this NPU type: named so
      const YAML::Node device = YAML::Load(space.device_systems.at(size_t(v)));
      root["system"]["name"] = space.system_name + " with " + space.genes[size_t(g)].labels[size_t(genome[g])] + " NPUs";
      root["system"].remove("description");
      root["system"]["compute"] = device["compute"];
      if (device["calibration"]) root["system"]["calibration"] = device["calibration"];
      else root["system"].remove("calibration");
    }
    if (s.gene[g].param == Param::MemBw) compute["memory_bw_GBps"] = num(v);
    if (s.gene[g].param == Param::MemCapacityGB) {
      compute.remove("memory_GiB");
      compute["memory_GB"] = num(v);
    }
    if (s.gene[g].param == Param::PeakTflops) {
      YAML::Node peak = compute["peak_tflops"];
      if (peak.IsScalar()) {  // a scalar is the 16-bit peak
        const std::string bf16 = peak.Scalar();
        compute["peak_tflops"] = YAML::Node(YAML::NodeType::Map);
        peak = compute["peak_tflops"];
        peak["bf16"] = bf16;
      }
      const int bytes = c.model.dtype_bytes;
      if (bytes != 2) {
        peak[bytes == 4 ? "fp32" : "fp8"] = num(v);
      } else {  // the 16-bit peak under whichever of its names the base gives (both: equal)
        if (peak["fp16"]) peak["fp16"] = num(v);
        if (peak["bf16"] || !peak["fp16"]) peak["bf16"] = num(v);
      }
    }
  }
  YAML::Emitter em;
  if (!comment.empty()) em << YAML::Comment(comment) << YAML::Newline;
  em << root;
  return std::string(em.c_str()) + "\n";
}

namespace {

void block_style(YAML::Node n) {
  if (!n.IsMap() && !n.IsSequence()) return;
  n.SetStyle(YAML::EmitterStyle::Block);
  if (n.IsMap())
    for (auto it = n.begin(); it != n.end(); ++it) block_style(it->second);
  else
    for (auto it = n.begin(); it != n.end(); ++it) block_style(*it);
}

// An NPU type of a device gene: the system `name` (a preset or a file, found as a configuration's
// `system:` is) put in place of the base's system, its compute figures and calibration taken
// (the network stays the base's; a file with no network of its own gets the base's to load, one
// with no calibration the base's).
// Its resolved system is appended to `systems` as YAML, for point_config.
DeviceSpec load_device(const YAML::Node& base, const YAML::Node& name, const Sources& src, const std::string& kp,
                       std::vector<std::string>& systems) {
  try {
    YAML::Node cfg = YAML::Clone(base);
    cfg["system"] = name;
    Sources dsrc;
    dsrc.config_file = src.config_file;
    resolve_presets(cfg, dsrc);
    if (!cfg["system"]["network"].IsDefined()) cfg["system"]["network"] = YAML::Clone(base["system"]["network"]);
    // A type without a calibration takes the base's: its network's and framework's efficiencies
    // (net_eff, the overlaps) are the base system's, and a GPU of one's own is taken to reach
    // what the base's does. `calibration: {}` asks for the ideal machine.
    if (!cfg["system"]["calibration"].IsDefined() && base["system"]["calibration"].IsDefined())
      cfg["system"]["calibration"] = YAML::Clone(base["system"]["calibration"]);
    expand_nodes(cfg["system"], dsrc);
    const Config c = convert_config(cfg, dsrc);
    YAML::Node sys = YAML::Clone(cfg["system"]);
    sys.remove("name");  // information only: an inline copy is named by the value's label
    block_style(sys);    // the same text however the system was written (inline copies are flow)
    systems.push_back(yaml_text(sys));
    return {c.compute, c.cal};
  } catch (const ConfigError& e) {
    const std::string at = where(src, kp, name), same = at + ": key 'system': ";
    std::string why = e.what();
    if (why.rfind(same, 0) == 0) why = why.substr(same.size());  // the place is the value's: said once
    throw ConfigError(at + ": key '" + kp + "': expected a system preset or file for an NPU type: " + why);
  }
}

}  // namespace

bool has_device_gene(const YAML::Node& root) {
  const YAML::Node params = root["parameters"];  // (a missing key: a node that is false, whose type may not be asked)
  if (!params || !params.IsMap()) return false;
  const YAML::Node compute = params["compute"];
  return compute && compute.IsMap() && compute["device"];
}

void inline_devices(YAML::Node root, const std::vector<std::string>& systems) {
  if (systems.empty() || !has_device_gene(root)) return;
  YAML::Node device = root["parameters"]["compute"]["device"];
  const bool spec = device.IsMap() && device["values"];  // {values: ...}; else a list or one value
  const YAML::Node values = spec ? device["values"] : device;
  // A new list (assigning to the file's nodes would rewrite the nodes they refer to).
  YAML::Node list(YAML::NodeType::Sequence);
  for (size_t i = 0; i < systems.size(); ++i) {
    const YAML::Node v = values.IsSequence() ? values[i] : values;
    YAML::Node sys = YAML::Load(systems[i]);
    sys["name"] = v.IsMap() ? v["name"].Scalar() : v.Scalar();  // the value's label
    list.push_back(sys);
  }
  if (spec) device["values"] = list;
  else root["parameters"]["compute"]["device"] = list;
}

DesignSpace load_psa(const std::string& path, const std::vector<std::string>& sets) {
  DesignSpace ds;
  ds.file = path;
  YAML::Node root = load_yaml_file(path, &ds.text);
  ds.sets = sets;
  if (!root.IsMap()) throw ConfigError(path + ": expected a mapping with base, parameters and objectives (constraints and the rest optional: docs/psa.md)");
  Sources src;
  src.config_file = path;

  // --set, in application_order: `base=...` (a file or a mapping) first; then `base.*` goes to
  // the base configuration when it is a file (load_config orders those), and the rest edits the
  // PSA tree, the base's preset picks first.
  const std::vector<std::string> ordered = application_order(sets);
  for (const auto& s : ordered)
    if (replaces_base(s)) apply_set(root, s, src);
  const bool base_is_file = root["base"].IsDefined() && root["base"].IsScalar();
  std::vector<std::string> base_sets;
  for (const auto& s : ordered) {
    if (replaces_base(s)) continue;
    for (const char* section : {"model", "system", "workload"})  // a configuration's key, not the PSA's
      if (s.rfind(std::string(section) + ".", 0) == 0 || s.rfind(std::string(section) + "=", 0) == 0)
        throw ConfigError("--set " + s + ": '" + section + "' is a key of the base configuration, not of the PSA file: " +
                          "write --set base." + s);
    if (base_is_file && s.rfind("base.", 0) == 0) base_sets.push_back(s.substr(5));
    else apply_set(root, s, src);
  }
  ds.edited_text = yaml_text(root);

  const Section top(root, "", src);
  // `agent:` holds search hyperparameters per agent ({ga: {population: 4096}, ...}), read at the end.
  top.check_keys({"name", "description", "base", "parameters", "derived", "constraints", "limits", "objectives", "objective", "pareto",
                  "agent"});
  ds.name = top.text("name", fs::path(path).stem().string());

  // Base configuration.
  auto view = std::make_unique<SpaceView>();
  YAML::Node base_yaml;  // resolved: the NPU types of a device gene are loaded onto it
  if (!top.has("base")) missing(top, "base", "a configuration file or a mapping {model, system, workload}");
  if (base_is_file) {
    const std::string file = find_file(top.text("base"), path);
    if (file.empty())
      top.fail("base", "a configuration file (relative to the PSA file, the working directory or " + data_dir() + ")");
    // An error in a --set base.KEY names KEY within the base configuration: say which one.
    const LoadedConfig lc = [&] {
      try {
        return load_config(file, base_sets, "base.");
      } catch (const ConfigError& e) {
        const std::string msg = e.what();
        if (msg.rfind("--set", 0) != 0) throw;
        throw ConfigError(msg + " (a key of the base configuration " + file + ", set by --set base.KEY)");
      }
    }();
    view->base = lc.config;
    ds.model_name = lc.model_name;
    ds.system_name = lc.system_name;
    ds.base_text = yaml_text(lc.resolved);
    base_yaml = lc.resolved;
  } else {
    YAML::Node cfg = root["base"];
    if (!cfg.IsMap()) top.fail("base", "a configuration file or a mapping {model, system, workload}");
    Sources bsrc;
    bsrc.set_prefix = "base.";
    // (a base given whole by --set base={...}: its errors name that)
    bsrc.config_file = src.override_from.count("base") ? src.override_from.at("base") + " base" : path;
    for (const auto& [kp, from] : src.override_from)  // --set base.X: errors in X name --set
      if (kp.rfind("base.", 0) == 0) bsrc.override_from[kp.substr(5)] = from;
    try {
      resolve_presets(cfg, bsrc);
      expand_nodes(cfg["system"], bsrc);
      view->base = convert_config(cfg, bsrc);
    } catch (const ConfigError& e) {
      // An error in the PSA file or a --set names its key as they write it ('base.workload.dp');
      // one in a file the base names (a preset, a system file) keeps that file's key.
      std::string msg = e.what();
      const size_t at = msg.find("key '");
      if ((msg.rfind(path + ":", 0) == 0 || msg.rfind("--set", 0) == 0) && at != std::string::npos) msg.insert(at + 5, "base.");
      throw ConfigError(msg);
    }
    ds.model_name = node_name(cfg["model"]);
    ds.system_name = node_name(cfg["system"]);
    ds.base_text = yaml_text(cfg);
    base_yaml = cfg;
  }
  const int ndims = view->base.net.ndims;

  // Derived parameters.
  const Section der = top.sub("derived");
  der.check_keys({"tp", "dp", "pp", "cp", "algorithm"});
  for (Param p : {Param::TP, Param::DP, Param::PP, Param::CP}) {  // at most one, NPUs / the other three
    const std::string key = degree_name(p), rule = der.text(key.c_str(), "none");
    if (rule != "auto" && rule != "none") der.fail(key.c_str(), "auto (" + derived_rule(p) + ") or none");
    if (rule != "auto") continue;
    if (view->derived_degree >= 0)
      der.fail_against(key.c_str(), degree_name(Param(view->derived_degree)).c_str(),
                       "none: " + degree_name(Param(view->derived_degree)) + " is derived already (one degree at most)", "none");
    view->derived_degree = int8_t(p);
  }
  const std::string algo_rule = der.text("algorithm", "none");
  if (algo_rule != "follows_topology" && algo_rule != "none")
    der.fail("algorithm", "follows_topology (Ring -> ring, FullyConnected -> direct, Switch -> halvingDoubling) or none");
  view->algo_follows_topology = algo_rule == "follows_topology";

  // Parameters -> genes, stacks in a fixed order, parameters in file order within a stack.
  const Section params = top.sub("parameters");
  params.check_keys({"workload", "collective", "network", "compute"});
  std::vector<double> values;
  std::map<int, std::set<int>> taken;  // Param code -> dims set (-1 = all)
  auto overlaps = [&](Param p, int dim) {
    auto it = taken.find(int(p));
    if (it == taken.end()) return false;
    return dim < 0 ? !it->second.empty() : (it->second.count(-1) || it->second.count(dim));
  };
  for (const char* stack : kStacks) {
    const Section ss = params.sub(stack);
    const YAML::Node sn = params.raw(stack);
    if (!sn.IsMap()) continue;
    for (auto it = sn.begin(); it != sn.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      const std::string kp = ss.key_path(key);
      auto [pname, dim] = split_dim(key);
      const ParamDef* d = find_param(stack, pname);
      if (!d)
        throw ConfigError(where(src, kp, it->first) + ": unknown key '" + kp + "' (expected one of: " + param_list(stack) +
                          (std::string(stack) == "network" || std::string(stack) == "collective" ? "; add .N for one dimension" : "") + ")");
      if (dim >= 0 && !d->per_dim) ss.fail_node(it->first, kp, "a parameter name ('" + pname + "' has no dimensions)");
      if (dim >= ndims) ss.fail_node(it->first, kp, "a dimension below " + std::to_string(ndims) + " (the base network's)");
      // The spec: a list (values), a scalar (one value) or a mapping {values | range | pow2, per_dim}.
      // A list or a scalar is wrapped as {values: ...} in a node of its own (assigning to a node
      // that refers to the file's would rewrite the file's node instead).
      const YAML::Node spec_node = [&] {
        const YAML::Node raw = it->second;
        if (!raw.IsSequence() && !raw.IsScalar()) return raw;
        YAML::Node wrapped(YAML::NodeType::Map);
        if (raw.IsSequence()) {
          wrapped["values"] = raw;
        } else {
          YAML::Node list(YAML::NodeType::Sequence);
          list.push_back(raw);
          wrapped["values"] = list;
        }
        return wrapped;
      }();
      if (!spec_node.IsMap())
        ss.fail_node(it->second, kp, "a list of values or a mapping {values | range | pow2, per_dim}",
                     &place_of_value(it->first, it->second));
      const Section spec(spec_node, kp, src);
      spec.check_keys({"values", "range", "pow2", "per_dim"});
      const bool per_dim = spec.boolean("per_dim", false);
      if (per_dim && !d->per_dim) spec.fail("per_dim", "false ('" + kp + "' is not a per-dimension parameter)");
      if (per_dim && dim >= 0) spec.fail("per_dim", "false (the key already names dimension " + std::to_string(dim) + ")");
      const std::vector<Value> vals = parse_values(spec, *d, it->second);

      // Conflicts: the same setting twice, TP both searched and derived, algorithm both
      // searched and following the topology, per-link and per-NPU bandwidth on one dimension.
      auto conflict = [&](const std::string& why) { ss.fail_node(it->first, kp, "a parameter that " + why); };
      const int gdim = per_dim ? -1 : dim;
      if (overlaps(d->param, gdim)) conflict("is not already set for the same dimension");
      if (int(d->param) == view->derived_degree)
        conflict("is not derived (derived." + degree_name(d->param) + " is auto)");
      if (is_algo(d->param) && view->algo_follows_topology) conflict("is not derived (derived.algorithm is follows_topology)");
      if (d->param == Param::Algo)
        for (Param q : {Param::AlgoAllReduce, Param::AlgoAllGather, Param::AlgoReduceScatter, Param::AlgoAllToAll})
          if (overlaps(q, gdim)) conflict("does not overlap a per-collective algorithm");
      if (is_algo(d->param) && d->param != Param::Algo && overlaps(Param::Algo, gdim)) conflict("does not overlap 'algorithm'");
      // Which dimensions the other bandwidth already sets, to name them.
      const auto bw_clash = [&](Param other, const char* other_name) {
        if (!overlaps(other, gdim)) return;
        const std::set<int>& dims = taken[int(other)];
        const int shared = gdim >= 0 ? gdim : *dims.rbegin();  // -1 (every dimension) sorts first
        conflict(std::string("does not overlap ") + other_name + ", given for " +
                 (shared < 0 || dims.count(-1) ? std::string("every dimension") : "dimension " + std::to_string(shared)) +
                 " (a dimension's bandwidth is searched per link or per NPU, not both)");
      };
      if (d->param == Param::LinkBw) bw_clash(Param::NpuBw, "npu_bandwidth_GBps");
      if (d->param == Param::NpuBw) bw_clash(Param::LinkBw, "bandwidth_GBps");
      const bool figures = d->param == Param::PeakTflops || d->param == Param::MemBw || d->param == Param::MemCapacityGB;
      if (figures && overlaps(Param::Device, -1)) conflict("is not set by compute.device too (an NPU type sets its figures)");
      if (d->param == Param::Device)
        for (Param q : {Param::PeakTflops, Param::MemBw, Param::MemCapacityGB})
          if (overlaps(q, -1)) conflict("does not set compute." + std::string(def_of(q).name) + ", searched already");
      taken[int(d->param)].insert(gdim);

      if (d->param == Param::Device)
        for (size_t i = 0; i < vals.size(); ++i)
          view->device[i] = load_device(base_yaml, spec.raw("values")[i], src, spec.key_path("values." + std::to_string(i)),
                                        ds.device_systems);
      const int offset = int(values.size());
      if (values.size() + vals.size() > size_t(kMaxValues))
        ss.fail_node(it->first, kp, "values within the limit of " + std::to_string(kMaxValues) + " for all parameters together");
      GeneInfo info;
      info.stack = stack;
      for (const auto& v : vals) {
        values.push_back(v.code);
        info.labels.push_back(v.label);
      }
      const int first = per_dim ? 0 : dim, last = per_dim ? ndims - 1 : dim;
      for (int k = first; k <= last; ++k) {
        if (view->ngenes >= kMaxGenes)
          ss.fail_node(it->first, kp, "at most " + std::to_string(kMaxGenes) + " genes (per_dim counts one per dimension)");
        Gene& g = view->gene[view->ngenes++];
        g.param = d->param;
        g.dim = int8_t(k);
        g.card = int32_t(vals.size());
        g.offset = offset;
        info.name = std::string(stack) + "." + pname + (k >= 0 ? "." + std::to_string(k) : "");
        ds.genes.push_back(info);
      }
    }
  }
  std::copy(values.begin(), values.end(), view->values);

  // The raw size must fit in 128 bits.
  u128 size = 1;
  for (int g = 0; g < view->ngenes; ++g) {
    const u128 c = u128(view->gene[g].card);
    if (size > (~u128(0)) / c) throw ConfigError(where(src, "parameters", top.raw("parameters")) +
                        ": key 'parameters': the space has 2^128 points or more (at most 2^128 - 1: fewer values)");
    size *= c;
  }

  // Constraints.
  const YAML::Node cons = top.raw("constraints");
  if (!cons.IsNull() && !cons.IsSequence()) top.fail("constraints", "a list of expressions, e.g. \"workload.dp * workload.pp <= 1024\"");
  if (cons.IsSequence()) {
    if (cons.size() > size_t(kMaxConstraints)) top.fail("constraints", "at most " + std::to_string(kMaxConstraints) + " constraints");
    int n = 0;
    for (size_t i = 0; i < cons.size(); ++i) {
      const std::string kp = "constraints." + std::to_string(i);
      if (!cons[i].IsScalar()) top.fail_node(cons[i], kp, "an expression as a string");
      const std::string text = cons[i].Scalar();
      const std::vector<Instr> code = ExprCompiler(text, ndims, where(src, kp, cons[i]) + ": key '" + kp + "'").compile();
      if (n + int(code.size()) > kMaxProgram)
        top.fail_node(cons[i], kp, "constraints within " + std::to_string(kMaxProgram) + " instructions together");
      view->prog_start[view->nconstraints] = n;
      for (const auto& in : code) view->prog[n++] = in;
      view->prog_start[++view->nconstraints] = n;
      ds.constraint_text.push_back(text);
      ds.constraint_at.push_back(where(src, kp, cons[i]));
    }
  }

  // Objectives: a name or a list; `all` = the first kStudyObjectives; pareto: true with no list = all.
  // cluster_cost, as an objective or a limit, needs the NPUs' price; energy_per_token their
  // power; usd_per_token both, the electricity's price and the cluster's lifetime. With a
  // compute.device gene, every NPU type needs its own figures (the base's are not used).
  // What the space lacks of them, each missing figure named with where to give it.
  const auto base_lacks = [](const std::string& key) {  // key: under system.
    return "system." + key + " of the base configuration (--set base.system." + key + "=...)";
  };
  const auto npu_lacks = [&](const char* key, double Compute::*field, std::vector<std::string>& missing) {
    for (int32_t g = 0; g < view->ngenes; ++g)
      if (view->gene[g].param == Param::Device) {
        std::string types;
        for (int32_t k = 0; k < view->gene[g].card; ++k)
          if (!(view->device[k].compute.*field > 0)) types += (types.empty() ? "" : ", ") + ds.genes[size_t(g)].labels[size_t(k)];
        if (!types.empty())
          missing.push_back("compute." + std::string(key) + " of NPU type(s) " + types +
                            " (in each type's system file, or in its entry of compute.device: {name: NAME, preset: PRESET, "
                            "compute: {" + key + ": ...}})");
        return;
      }
    if (!(view->base.compute.*field > 0)) missing.push_back(base_lacks(std::string("compute.") + key));
  };
  const auto lacks = [&](Objective o) {
    std::vector<std::string> missing;
    if (o == Objective::ClusterCost || o == Objective::UsdPerToken) npu_lacks("price_usd", &Compute::price_usd, missing);
    if (o == Objective::EnergyPerToken || o == Objective::UsdPerToken) npu_lacks("power_W", &Compute::power_W, missing);
    if (o == Objective::UsdPerToken)
      for (auto [key, value] : {std::pair{"usd_per_kWh", view->base.op.usd_per_kWh}, {"lifetime_years", view->base.op.lifetime_years}})
        if (!(value > 0)) missing.push_back(base_lacks(std::string("operation.") + key));
    std::string why;
    for (const std::string& m : missing) why += (why.empty() ? "" : "; ") + m;
    return why;
  };
  const auto check_priced = [&](const Section& in, const YAML::Node& node, const std::string& kp, Objective o) {
    const std::string why = lacks(o);
    if (!why.empty())
      in.fail_node(node, kp, std::string("an objective the space has the figures for: ") + objective_name(o) + " needs " +
                                 (o == Objective::ClusterCost      ? "the NPUs' price (dollars an NPU)"
                                  : o == Objective::EnergyPerToken ? "the NPUs' power draw (watts an NPU)"
                                                                   : "the NPUs' price and power, the electricity's price and the "
                                                                     "cluster's lifetime") +
                                 "; missing: " + why);
  };
  const bool pareto = top.boolean("pareto", false);
  if (top.has("objective") && top.has("objectives")) top.fail("objective", "either objective or objectives, not both");
  const char* okey = top.has("objective") ? "objective" : "objectives";
  const YAML::Node on = top.raw(okey);
  std::vector<YAML::Node> items;
  if (on.IsScalar()) items.push_back(on);
  else if (on.IsSequence()) for (size_t i = 0; i < on.size(); ++i) items.push_back(on[i]);
  else if (!on.IsNull()) top.fail(okey, "an objective or a list of them (" + std::string(kObjectiveChoices) + ")");
  ds.objectives_at = where(src, okey, on);
  bool seen_all = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string kp = std::string(okey) + (on.IsSequence() ? "." + std::to_string(i) : "");
    const std::string s = items[i].IsScalar() ? items[i].Scalar() : "";
    if (s == "all") {  // the six, after any named before it ([latency, all]: latency once)
      seen_all = true;  // (`all` twice is `all`)
      for (int k = 0; k < kStudyObjectives; ++k)
        if (std::find(ds.objectives.begin(), ds.objectives.end(), Objective(k)) == ds.objectives.end())
          ds.objectives.push_back(Objective(k));
      continue;
    }
    bool found = false;
    for (const auto& e : kObjectives)
      if (names::iequal(e.name, s)) {
        if (std::find(ds.objectives.begin(), ds.objectives.end(), e.value) != ds.objectives.end())
          top.fail_node(items[i], kp, "distinct objectives", nullptr,
                        seen_all ? " (all, before it, gives it: name it before all to put it first)" : "");
        check_priced(top, items[i], kp, e.value);
        ds.objectives.push_back(e.value);
        found = true;
        break;
      }
    if (!found) top.fail_node(items[i], kp, "one of " + std::string(kObjectiveChoices));
  }
  if (ds.objectives.empty()) {
    if (!pareto && on.IsSequence()) top.fail(okey, "one or more of " + std::string(kObjectiveChoices));
    if (!pareto) missing(top, "objectives", "one or more of " + std::string(kObjectiveChoices));
    for (int k = 0; k < kStudyObjectives; ++k) ds.objectives.push_back(Objective(k));
  }
  if (pareto && ds.objectives.size() < 2) top.fail("pareto", "false with a single objective (a Pareto front needs two or more)");
  if (top.has("pareto") && !pareto && ds.objectives.size() > 1)
    top.fail("pareto", "true with several objectives (several objectives are searched as a Pareto front)");

  // Limits on results, {objective: upper bound}: a positive number in the objective's units.
  const Section limits = top.sub("limits");
  if (limits.node().IsMap())
    for (auto it = limits.node().begin(); it != limits.node().end(); ++it) {
      const std::string key = it->first.as<std::string>();
      const auto named = std::find_if(std::begin(kObjectives), std::end(kObjectives),
                                      [&](const ObjectiveName& e) { return names::iequal(e.name, key); });
      if (named == std::end(kObjectives))
        limits.fail_node(it->first, limits.key_path(key),
                         "an objective to limit (" + std::string(kObjectiveChoices).substr(0, std::string(kObjectiveChoices).rfind(", all")) +
                             "; or network_cost, runtime*bw, runtime*cost, ttft, tpot)");
      for (int32_t k = 0; k < view->nlimits; ++k)
        if (view->limit_obj[k] == named->value)
          limits.fail_node(it->first, limits.key_path(key),
                           std::string("one limit per objective (") + objective_name(named->value) + " has one already)");
      const bool serving = named->value == Objective::FirstToken || named->value == Objective::PerOutputToken;
      const std::string units = named->value == Objective::Memory       ? "bytes per NPU (72 GiB: 7.73e10)"
                                : named->value == Objective::Throughput ? "seconds per token (at least 5,000 tokens/s: 2e-4)"
                                : named->value == Objective::UsdPerToken ? "dollars per token ($2 per million tokens: 2e-6)"
                                : serving                               ? "seconds (200 ms: 0.2)"
                                                                        : "the objective's units (docs/psa.md)";
      double lim = NAN;
      if (it->second.IsScalar()) try {
          size_t used = 0;
          lim = std::stod(it->second.Scalar(), &used);
          if (used != it->second.Scalar().size()) lim = NAN;
        } catch (const std::logic_error&) {
        }
      if (!(lim > 0) || !std::isfinite(lim)) limits.fail(key.c_str(), "a positive upper bound in " + units);
      // Values no run can mean: a memory in GiB, a throughput in tokens per second, dollars per
      // million tokens (over $1,000 per million), a serving
      // latency in milliseconds (over 100 s to the first token, or 10 s a token, in the modes
      // where they are serving latencies; elsewhere they are the run's time).
      const bool latency = serving_latency(named->value, view->base.work.mode);
      if ((named->value == Objective::Memory && lim < 1e6) || (named->value == Objective::Throughput && lim >= 1) ||
          (named->value == Objective::UsdPerToken && lim > 1e-3) ||  // a price per million tokens, most likely
          (latency && named->value == Objective::FirstToken && lim > 100) ||
          (latency && named->value == Objective::PerOutputToken && lim > 10))
        limits.fail(key.c_str(), "an upper bound in " + units);
      if (named->value == Objective::Npus && lim < 1) limits.fail(key.c_str(), "a number of NPUs, at least 1");
      check_priced(limits, it->first, limits.key_path(key), named->value);
      view->limit_obj[view->nlimits] = named->value;
      view->limit_max[view->nlimits++] = lim;
    }

  // Agent hyperparameters, {agent: {key: value}}: their shape here, names and values where the
  // agents are known (host/search.cpp, psa_agent_params).
  const Section agents = top.sub("agent");
  if (agents.node().IsMap())
    for (auto it = agents.node().begin(); it != agents.node().end(); ++it) {
      const std::string name = it->first.as<std::string>();
      if (!it->second.IsMap()) agents.fail_node(it->second, agents.key_path(name), "a mapping of hyperparameters");
      const Section one(it->second, agents.key_path(name), src);
      AgentSection sec{name, where(src, agents.key_path(name), it->first), {}, {}};
      for (auto h = it->second.begin(); h != it->second.end(); ++h) {
        const std::string hyper = h->first.as<std::string>(), key = name + "." + hyper;
        if (!h->second.IsScalar()) one.fail_node(h->second, one.key_path(hyper), "a value");
        sec.params[key] = h->second.Scalar();
        sec.where_of[key] = where(src, one.key_path(hyper), h->first);
      }
      ds.agent_sections.push_back(std::move(sec));
    }

  ds.view = std::move(view);
  return ds;
}

// ---------------------------------------------------------------------------------------------
// Which genes each constraint reads (constraint_genes): the one rule set that sweep skipping
// (host/sweep.cpp) and exact feasible counting (below) both use.
//
// Each constraint reads some configuration fields; each gene writes some (including what
// decode()'s derived parameters make it write: DP / CP / PP / npus genes write TP when TP is
// derived; a topology gene writes the algorithms when they follow the topology, and the per-link
// bandwidth when that dimension's bandwidth is given per NPU). A constraint reads a gene when
// the gene writes a field the constraint reads.

namespace {

using Field = std::pair<int, int>;  // (Param code, dimension or -1)

void add_fields(std::set<Field>& out, Param p, int dim, int ndims) {
  if (!is_per_dim(p)) { out.insert({int(p), -1}); return; }
  if (dim >= 0) { out.insert({int(p), dim}); return; }
  for (int d = 0; d < ndims; ++d) out.insert({int(p), d});
}

std::set<Field> gene_writes(const SpaceView& s, const Gene& g, const bool npu_bw_dim[]) {
  const int nd = s.base.net.ndims;
  std::set<Field> out;
  const Param colls[] = {Param::AlgoAllReduce, Param::AlgoAllGather, Param::AlgoReduceScatter, Param::AlgoAllToAll};
  switch (g.param) {
    case Param::Algo:
      for (Param q : colls) add_fields(out, q, g.dim, nd);
      break;
    case Param::NpuBw: add_fields(out, Param::LinkBw, g.dim, nd); break;
    case Param::Device:  // an NPU type: its compute figures (and calibration, which no constraint reads)
      for (Param q : {Param::Device, Param::PeakTflops, Param::MemBw, Param::MemCapacityGB}) add_fields(out, q, -1, nd);
      break;
    case Param::Topology:
      add_fields(out, Param::Topology, g.dim, nd);
      for (int d = 0; d < nd; ++d) {
        if (g.dim >= 0 && g.dim != d) continue;
        if (npu_bw_dim[d]) out.insert({int(Param::LinkBw), d});
        if (s.algo_follows_topology)
          for (Param q : colls) out.insert({int(q), d});
      }
      break;
    case Param::Npus:  // with physical link counts, a FullyConnected dimension's NPUs set its links
      add_fields(out, Param::Npus, g.dim, nd);
      for (int d = 0; d < nd; ++d)
        if ((g.dim < 0 || g.dim == d) && npu_bw_dim[d] && s.base.net.links_per_npu == LinkCount::Physical)
          out.insert({int(Param::LinkBw), d});
      break;
    default: add_fields(out, g.param, g.dim, nd);
  }
  const bool degree = g.param == Param::DP || g.param == Param::TP || g.param == Param::PP || g.param == Param::CP;
  if (s.derived_degree >= 0 && (degree || g.param == Param::Npus)) out.insert({s.derived_degree, -1});
  return out;
}

// The fields the values constraint k pushes depend on (get_param and the Push ops of
// kernels/space.hpp).
std::set<Field> constraint_reads(const SpaceView& s, int k) {
  const int nd = s.base.net.ndims;
  const bool physical = s.base.net.links_per_npu == LinkCount::Physical;  // a FullyConnected NPU's links: npus - 1
  std::set<Field> out;
  for (int i = s.prog_start[k]; i < s.prog_start[k + 1]; ++i) {
    const Instr& in = s.prog[i];
    switch (in.op) {
      case Op::PushNpusTotal: add_fields(out, Param::Npus, -1, nd); break;
      case Op::PushNetworkCost:  // topology, NPUs and per-link bandwidth of every dimension
        add_fields(out, Param::Npus, -1, nd);
        [[fallthrough]];
      case Op::PushNpuBwTotal:  // per-link bandwidth x links per NPU (topology; NPUs when physical) of every dimension
        add_fields(out, Param::Topology, -1, nd);
        add_fields(out, Param::LinkBw, -1, nd);
        if (physical) add_fields(out, Param::Npus, -1, nd);
        break;
      case Op::PushParam: {
        const Param p = Param(int16_t(in.arg));
        const int d = in.dim < 0 ? 0 : in.dim;  // get_param reads dimension 0 for dim -1
        if (p == Param::Algo) {
          out.insert({int(Param::AlgoAllReduce), d});
        } else if (p == Param::NpuBw) {
          out.insert({int(Param::LinkBw), d});
          out.insert({int(Param::Topology), d});
          if (physical) out.insert({int(Param::Npus), d});
        } else {
          add_fields(out, p, is_per_dim(p) ? d : -1, nd);
        }
        break;
      }
      default: break;  // constants and arithmetic read nothing
    }
  }
  return out;
}

// The fields each gene writes (gene_writes), gene by gene.
std::vector<std::set<Field>> all_gene_writes(const SpaceView& s) {
  bool npu_bw_dim[kMaxDims] = {};  // dimensions whose bandwidth a gene gives per NPU
  for (int g = 0; g < s.ngenes; ++g)
    if (s.gene[g].param == Param::NpuBw)
      for (int d = 0; d < s.base.net.ndims; ++d) npu_bw_dim[d] = npu_bw_dim[d] || s.gene[g].dim < 0 || s.gene[g].dim == d;
  std::vector<std::set<Field>> out;
  for (int32_t g = 0; g < s.ngenes; ++g) out.push_back(gene_writes(s, s.gene[g], npu_bw_dim));
  return out;
}

}  // namespace

std::vector<int32_t> constraint_genes(const SpaceView& s, int32_t k) {
  const std::set<Field> reads = constraint_reads(s, k);
  const std::vector<std::set<Field>> writes = all_gene_writes(s);
  std::vector<int32_t> out;
  for (int32_t g = 0; g < s.ngenes; ++g) {
    bool touches = false;
    for (const Field& f : writes[size_t(g)]) touches = touches || reads.count(f);
    if (touches) out.push_back(g);
  }
  return out;
}

int32_t plain_genes(const SpaceView& s) {
  const std::vector<std::set<Field>> writes = all_gene_writes(s);
  const Field derived{s.derived_degree, -1};  // derived again at every step when a degree or NPUs write it
  for (int32_t g = 0; g < s.ngenes; ++g) {
    // A per-NPU bandwidth is divided by the links of its dimension's topology after it is set:
    // setting it again alone would skip the division.
    if (s.gene[g].param == Param::NpuBw) return g;
    // Algorithms that follow the topology are set from it by apply_genome only: setting a
    // topology gene (or an algorithm gene) again alone would keep the previous point's.
    if ((s.gene[g].param == Param::Topology || is_algo(s.gene[g].param)) && s.algo_follows_topology) return g;
    for (int32_t h = 0; h < s.ngenes; ++h)
      for (const Field& f : writes[size_t(g)])
        if (h != g && !(s.derived_degree >= 0 && f == derived) && writes[size_t(h)].count(f)) return g;
  }
  return s.ngenes;
}

// ---------------------------------------------------------------------------------------------
// Feasible counting.
//
// Genes linked through constraints (constraint_genes) form components; the feasible count is
// the product over components of their feasible sub-counts, times the cardinality of every gene
// no constraint reads. A component is enumerated with the other genes at index 0, which is
// exact because its constraints read none of them.

namespace {

// A copy of the view keeping only the constraints listed.
std::unique_ptr<SpaceView> with_constraints(const SpaceView& s, const std::vector<int>& ks) {
  auto v = std::make_unique<SpaceView>(s);
  v->nconstraints = 0;
  int n = 0;
  v->prog_start[0] = 0;
  for (int k : ks) {
    for (int i = s.prog_start[k]; i < s.prog_start[k + 1]; ++i) v->prog[n++] = s.prog[i];
    v->prog_start[++v->nconstraints] = n;
  }
  return v;
}

constexpr uint64_t kMaxComponentPoints = 100000000;  // enumeration budget per component

}  // namespace

bool gene_has_no_effect(const DesignSpace& space, size_t gene) {
  const SpaceView& v = *space.view;
  const Param p = v.gene[gene].param;
  if (p == Param::Policy) return true;
  if ((p == Param::Etp || p == Param::EpDispatch) && v.base.model.experts == 0) return true;  // no experts
  // Inference is forward only, each rank holding its weights whole (docs/config.md).
  if (v.base.work.mode != Mode::Training &&
      (p == Param::Schedule || p == Param::Vpp || p == Param::Sharding || p == Param::Recompute ||
       p == Param::RecomputeLayers))
    return true;
  if (p != Param::AlgoAllToAll) return false;
  // All-to-alls run only for Ulysses context parallelism and expert parallelism.
  if (v.base.work.cp_style == CpStyle::AllToAll || (v.base.model.experts > 0 && v.base.work.ep > 1)) return false;
  for (int32_t g = 0; g < v.ngenes; ++g)
    if (v.gene[g].param == Param::CpStyle || (v.gene[g].param == Param::Ep && v.base.model.experts > 0)) return false;
  return true;
}

std::vector<int32_t> foldable_genes(const DesignSpace& space) {
  const SpaceView& v = *space.view;
  std::vector<bool> read(size_t(v.ngenes), false);
  for (int32_t k = 0; k < v.nconstraints; ++k)
    for (int32_t g : constraint_genes(v, k)) read[size_t(g)] = true;
  std::vector<int32_t> out;
  for (int32_t g = 0; g < v.ngenes; ++g)
    if (v.gene[g].card > 1 && !read[size_t(g)] && gene_has_no_effect(space, size_t(g))) out.push_back(g);
  return out;
}

uint64_t fold_copies(const DesignSpace& space, const std::vector<int32_t>& genes) {
  uint64_t n = 1;
  for (int32_t g : genes) n *= uint64_t(space.view->gene[g].card);
  return n;
}

DesignSpace fold_genes(const DesignSpace& space, const std::vector<std::string>& names) {
  DesignSpace out;
  out.file = space.file;
  out.text = space.text;
  out.sets = space.sets;
  out.base_text = space.base_text;
  out.name = space.name;
  out.model_name = space.model_name;
  out.system_name = space.system_name;
  out.view = std::make_unique<SpaceView>(*space.view);
  out.genes = space.genes;
  out.objectives = space.objectives;
  out.constraint_text = space.constraint_text;
  out.constraint_at = space.constraint_at;
  out.edited_text = space.edited_text;
  out.agent_sections = space.agent_sections;
  out.device_systems = space.device_systems;
  const std::vector<int32_t> foldable = foldable_genes(space);
  for (const std::string& name : names) {
    int32_t g = 0;
    while (g < out.view->ngenes && out.genes[size_t(g)].name != name) ++g;
    if (std::find(foldable.begin(), foldable.end(), g) == foldable.end())
      throw std::runtime_error("'" + name + "' is not a gene of " + space.file + " that no result depends on");
    out.view->gene[g].card = 1;
    out.genes[size_t(g)].labels.resize(1);
  }
  return out;
}

namespace {

// feasible_count() of the space with view `s` (its constraints, maybe a subset of the space's).
u128 count_feasible(const DesignSpace& space, const SpaceView& s) {
  const int n = s.ngenes;

  // Union-find over genes, linked by the constraints that read them.
  std::vector<int> parent(n);
  for (int g = 0; g < n; ++g) parent[g] = g;
  auto find = [&](int g) {
    while (parent[g] != g) g = parent[g] = parent[parent[g]];
    return g;
  };
  std::vector<int> first_gene(s.nconstraints, -1);
  std::vector<bool> constrained(n, false);
  for (int k = 0; k < s.nconstraints; ++k) {
    for (int g : constraint_genes(s, k)) {
      constrained[g] = true;
      if (first_gene[k] < 0) first_gene[k] = g;
      else parent[find(g)] = find(first_gene[k]);
    }
  }

  std::vector<int> zeros(size_t(std::max(n, 1)), 0);
  u128 total = 1;
  for (int g = 0; g < n; ++g)
    if (!constrained[g]) total *= u128(s.gene[g].card);

  // Constraints no gene affects: true or false for the whole space.
  std::vector<int> fixed;
  for (int k = 0; k < s.nconstraints; ++k)
    if (first_gene[k] < 0) fixed.push_back(k);
  if (!fixed.empty()) {
    const auto v = with_constraints(s, fixed);
    double viol = 0;
    if (!check_constraints(*v, decode(*v, zeros.data()), viol)) return 0;
  }

  // Enumerate each component.
  std::map<int, std::vector<int>> comp_genes, comp_cons;
  for (int g = 0; g < n; ++g)
    if (constrained[g]) comp_genes[find(g)].push_back(g);
  for (int k = 0; k < s.nconstraints; ++k)
    if (first_gene[k] >= 0) comp_cons[find(first_gene[k])].push_back(k);
  for (const auto& [root, genes] : comp_genes) {
    u128 points = 1;
    for (int g : genes) points *= u128(s.gene[g].card);
    if (points > kMaxComponentPoints) {
      std::string names;
      for (int g : genes)
        names += (names.empty() ? "" : ", ") +
                 (size_t(g) < space.genes.size() ? space.genes[size_t(g)].name : "gene " + std::to_string(g));
      std::string keys;
      for (int k : comp_cons[root]) keys += (keys.empty() ? "" : ", ") + std::string("constraints.") + std::to_string(k);
      const size_t first = size_t(comp_cons[root].front());
      throw ConfigError((first < space.constraint_at.size() ? space.constraint_at[first] : space.file) + ": key '" + keys +
                        "': cannot count the feasible points exactly: they link " + names + " into " +
                        with_commas(to_string_u128(points)) + " combinations (more than " +
                        with_commas(std::to_string(kMaxComponentPoints)) + " to enumerate)");
    }
    const auto v = with_constraints(s, comp_cons[root]);
    std::vector<int32_t> genome(zeros.begin(), zeros.end());
    uint64_t count = 0;
    for (uint64_t i = 0; i < uint64_t(points); ++i) {
      double viol = 0;
      if (check_constraints(*v, decode(*v, genome.data()), viol)) ++count;
      for (int g : genes) {  // odometer step over the component's genes
        if (++genome[size_t(g)] < s.gene[g].card) break;
        genome[size_t(g)] = 0;
      }
    }
    total *= u128(count);
  }
  return total;
}

}  // namespace

u128 feasible_count(const DesignSpace& space) { return count_feasible(space, *space.view); }

std::vector<std::string> space_notes(const DesignSpace& space, const u128* feasible) {
  const SpaceView& s = *space.view;
  std::vector<std::string> notes;
  // Per-NPU bandwidth on FullyConnected dimensions of other than 8 NPUs, by the study's 7 links.
  for (int32_t d = 0; d < s.base.net.ndims && s.base.net.links_per_npu == LinkCount::Study; ++d) {
    bool npu_bw = false;
    std::set<double> topologies, npus;  // the values the dimension may take (genes, else the base)
    for (int32_t g = 0; g < s.ngenes; ++g) {
      const Gene& ge = s.gene[g];
      if (ge.dim >= 0 && ge.dim != d) continue;
      npu_bw = npu_bw || ge.param == Param::NpuBw;
      for (int32_t v = 0; v < ge.card; ++v) {
        if (ge.param == Param::Topology) topologies.insert(s.values[ge.offset + v]);
        if (ge.param == Param::Npus) npus.insert(s.values[ge.offset + v]);
      }
    }
    if (topologies.empty()) topologies.insert(double(int(s.base.net.dim[d].topology)));
    if (npus.empty()) npus.insert(double(s.base.net.dim[d].npus));
    npus.erase(8.0);
    if (!npu_bw || !topologies.count(double(int(Topology::FullyConnected))) || npus.empty()) continue;
    std::string sizes;
    for (auto x = npus.begin(); x != npus.end(); ++x)
      sizes += (x == npus.begin() ? "" : std::next(x) == npus.end() ? " or " : ", ") + fmt_number(*x);
    notes.push_back("dimension " + std::to_string(d) + ": a per-NPU bandwidth on a FullyConnected dimension of " + sizes +
                    " NPUs (where the constraints allow one) is divided over 7 links, the study's count (right for 8 "
                    "NPUs only); --set base.system.network.links_per_npu=physical divides it over npus - 1 (docs/psa.md)");
  }
  // The serving objectives (or limits on them) outside the mode that gives them a meaning.
  const Mode mode = s.base.work.mode;
  for (Objective o : {Objective::FirstToken, Objective::PerOutputToken}) {
    bool used = std::count(space.objectives.begin(), space.objectives.end(), o) > 0;
    for (int32_t k = 0; k < s.nlimits; ++k) used = used || s.limit_obj[k] == o;
    if (used && !serving_latency(o, mode))
      notes.push_back(std::string(objective_name(o)) + " is the latency in " + names::name(names::kMode, mode) +
                      " mode (base.workload.mode): " +
                      (o == Objective::FirstToken ? "a time to the first token belongs to generate, serve and prefill"
                                                  : "a time per output token belongs to generate and serve"));
  }
  // compute.memory_GB is in GB (1e9 bytes), where the system presets give GiB: a value that is
  // the base's capacity in GiB (80 for a DGX-H100) is 7% below it.
  const double base_GiB = s.base.compute.mem_capacity_bytes / 1073741824.0;
  for (int32_t g = 0; g < s.ngenes; ++g)
    for (int32_t v = 0; v < s.gene[g].card && s.gene[g].param == Param::MemCapacityGB; ++v)
      if (s.values[s.gene[g].offset + v] == base_GiB && base_GiB * 1073741824.0 != base_GiB * 1e9) {
        const auto two_places = [](double x) { return fmt_number(std::round(x * 100) / 100); };
        notes.push_back("compute.memory_GB is in GB (1e9 bytes): its value " + fmt_number(base_GiB) + " is " +
                        two_places(base_GiB / 1.073741824) + " GiB, less than the base's " + fmt_number(base_GiB) +
                        " GiB (" + two_places(base_GiB * 1.073741824) + " GB; the system presets give GiB)");
        break;
      }
  // No degree derived, and no product of the degrees' values is an NPU count the network can
  // have: every point is PRODUCT_MISMATCH, which only the model would say (at sweep time). The
  // products and counts over every combination of values (a superset where a gene sets all
  // dimensions at once), so the note errs towards silence.
  // Products are kept only while they divide an NPU count (a product that does not cannot grow
  // into one), and past 10^7 steps the check gives up (no note): it stays quick on any space.
  if (s.derived_degree < 0) {
    uint64_t work = 0;
    bool gave_up = false;
    const auto products = [&](std::vector<std::pair<Param, int32_t>> params, const std::set<double>* divisors) {
      std::set<double> out{1};
      for (const auto& [p, d] : params) {  // (param, dimension or -1)
        std::set<double> values;
        for (int32_t g = 0; g < s.ngenes; ++g)
          if (s.gene[g].param == p && (d < 0 || s.gene[g].dim < 0 || s.gene[g].dim == d))
            for (int32_t v = 0; v < s.gene[g].card; ++v) values.insert(s.values[s.gene[g].offset + v]);
        if (values.empty()) values.insert(get_param(s.base, p, d));
        std::set<double> next;
        for (double a : out)
          for (double b : values) {
            if (++work > 10000000) return gave_up = true, std::set<double>{};
            if (!divisors || divisors->count(a * b)) next.insert(a * b);
          }
        out.swap(next);
      }
      return out;
    };
    std::vector<std::pair<Param, int32_t>> dims;
    for (int32_t d = 0; d < s.base.net.ndims; ++d) dims.push_back({Param::Npus, d});
    const std::set<double> npus = products(dims, nullptr);
    std::set<double> divisors;
    for (double n : npus)
      for (double i = 1; i * i <= n && !gave_up; ++i)
        if (++work > 10000000) gave_up = true;
        else if (std::fmod(n, i) == 0) divisors.insert({i, n / i});
    const std::set<double> degrees =
        gave_up ? std::set<double>{} : products({{Param::DP, -1}, {Param::TP, -1}, {Param::PP, -1}, {Param::CP, -1}}, &divisors);
    bool meet = gave_up;
    for (double x : degrees) meet = meet || npus.count(x) > 0;
    if (!meet) {
      std::string counts;
      for (auto x = npus.begin(); x != npus.end(); ++x) {
        if (counts.size() > 60) {
          counts += ", ...";
          break;
        }
        counts += (counts.empty() ? "" : ", ") + fmt_number(*x);
      }
      // The degree to derive: one no gene sets (dp first), so that the fix loads as written.
      std::string free = "dp";
      for (Param p : {Param::DP, Param::TP, Param::PP, Param::CP}) {
        bool gene = false;
        for (int32_t g = 0; g < s.ngenes; ++g) gene = gene || s.gene[g].param == p;
        if (!gene) {
          free = degree_name(p);
          break;
        }
      }
      notes.push_back("dp x tp x pp x cp never equals the NPU count (" + counts +
                      "): every point is PRODUCT_MISMATCH; derive one degree from the others (derived: {" + free +
                      ": auto}, docs/psa.md)");
    }
  }
  // No point meets the constraints: those that no point meets alone.
  if (feasible && *feasible == 0 && s.nconstraints > 0) {
    std::string alone;
    for (int k = 0; k < s.nconstraints; ++k)
      if (count_feasible(space, *with_constraints(s, {k})) == 0)
        alone += (alone.empty() ? "" : "; ") + (size_t(k) < space.constraint_text.size() ? space.constraint_text[size_t(k)]
                                                                                          : "constraint " + std::to_string(k));
    notes.push_back(alone.empty() ? "no point meets every constraint, though each alone holds for some: they contradict "
                                    "each other"
                                  : "no point meets every constraint; none meets, alone: " + alone);
  }
  return notes;
}

// ---------------------------------------------------------------------------------------------
// 128-bit integers as text.

std::string to_string_u128(u128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v > 0) {
    s.push_back(char('0' + int(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

std::string with_commas(const std::string& decimal) {
  std::string out;
  const size_t n = decimal.size();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(decimal[i]);
  }
  return out;
}

bool parse_u128(const std::string& text, u128& out) {
  u128 v = 0;
  bool any = false;
  for (char c : text) {
    if (c == ',' || c == '_') continue;
    if (c < '0' || c > '9') return false;
    const u128 d = u128(c - '0');
    if (v > ((~u128(0)) - d) / 10) return false;
    v = v * 10 + d;
    any = true;
  }
  if (!any) return false;
  out = v;
  return true;
}

}  // namespace cosmic::psa
