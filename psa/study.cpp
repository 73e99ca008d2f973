#include "psa/study.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "psa/config.hpp"
#include "psa/space.hpp"
#include "psa/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace cosmic::psa {

namespace {

using Vars = std::vector<std::pair<std::string, std::string>>;

// `text` (the value of `key` in section `s`) with each {var} of `vars` replaced. In what names
// something (an id, a file, a method, an edit) a {name} that is not one of them is refused (it
// was kept as written, and reported as a bad id or file); free text (labels, titles) keeps it
// (`2^{10}` for the figures' mathtext).
std::string subst(const Section& s, const char* key, std::string text, const Vars& vars, bool free_text = false) {
  for (size_t open = text.find('{'); open != std::string::npos && !free_text; open = text.find('{', open + 1)) {
    const size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    const std::string name = text.substr(open + 1, close - open - 1);
    const bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (word && std::none_of(vars.begin(), vars.end(), [&](const auto& kv) { return kv.first == name; }))
      s.fail(key, "variables of the entry's `for:` in braces ('{" + name + "}' is not one" +
                      (vars.empty() ? ": the entry has no `for:`" : "") + ")");
  }
  for (const auto& [k, v] : vars) {
    const std::string pat = "{" + k + "}";
    for (size_t at = text.find(pat); at != std::string::npos; at = text.find(pat, at + v.size())) text.replace(at, pat.size(), v);
  }
  return text;
}

// A scalar or a list of scalars, as strings.
std::vector<std::string> text_list(const Section& s, const char* key) {
  std::vector<std::string> out;
  const YAML::Node n = s.raw(key);
  if (n.IsNull()) return out;
  if (n.IsScalar()) return {n.Scalar()};
  if (!n.IsSequence()) s.fail(key, "a value or a list of values");
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) s.fail_node(n[i], s.key_path(key) + "." + std::to_string(i), "a value");
    out.push_back(n[i].Scalar());
  }
  return out;
}

// The combinations of an entry's `for:` mapping (one empty combination without it), first key
// varying slowest.
std::vector<Vars> expand_for(const Section& entry) {
  const Section f = entry.sub("for");
  std::vector<Vars> out{{}};
  if (!f.node().IsMap()) return out;
  for (auto it = f.node().begin(); it != f.node().end(); ++it) {
    const std::string var = it->first.as<std::string>();
    const std::vector<std::string> values = text_list(f, var.c_str());
    if (values.empty()) f.fail(var.c_str(), "a value or a non-empty list of values");
    std::vector<Vars> next;
    for (const Vars& v : out)
      for (const std::string& x : values) {
        Vars w = v;
        w.emplace_back(var, x);
        next.push_back(w);
      }
    out.swap(next);
  }
  return out;
}

bool valid_id(const std::string& id) {
  if (id.empty() || id.size() > 100) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return id[0] != '.';
}

const std::set<std::string> kMethods = {"sweep", "rw", "ga", "aco", "bo", "nsga2"};
const std::set<std::string> kKinds = {"gain", "gap", "near_optimal", "convergence", "pareto"};
const std::set<std::string> kFigures = {"", "bars", "batch", "convergence", "pareto"};

// The value each `set` key ends with (a later edit of a key replaces an earlier one), so that
// the same edits in another order compare equal.
std::map<std::string, std::string> final_sets(const std::vector<std::string>& sets) {
  std::map<std::string, std::string> out;
  for (const auto& s : sets) {
    const size_t eq = s.find('=');
    out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}
}  // namespace

bool same_space(const StudyExperiment& a, const StudyExperiment& b) {
  std::error_code ec;
  return fs::equivalent(a.psa, b.psa, ec) && final_sets(a.sets) == final_sets(b.sets) && a.budget_of == b.budget_of &&
         a.limit == b.limit;
}

std::vector<uint64_t> run_seeds(const StudyExperiment& e) {
  return e.method == "sweep" ? std::vector<uint64_t>{0} : e.seeds;
}

std::string result_file(const StudyExperiment& e, uint64_t seed) {
  return e.method == "sweep" ? e.id + ".h5" : e.id + "-s" + std::to_string(seed) + ".h5";
}

const StudyExperiment* Study::find(const std::string& id) const {
  for (const auto& e : experiments)
    if (e.id == id) return &e;
  return nullptr;
}

Study load_study(const std::string& path) {
  Study st;
  st.file = path;
  const YAML::Node root = load_yaml_file(path);
  Sources src;
  src.config_file = path;
  if (!root.IsMap()) throw ConfigError(path + ": expected a mapping with experiments and comparisons");
  const Section top(root, "", src);
  top.check_keys({"name", "description", "experiments", "comparisons"});
  st.name = top.text("name", fs::path(path).stem().string());
  st.description = top.text("description");

  const YAML::Node exps = top.raw("experiments");
  if (!exps.IsSequence() || exps.size() == 0) top.fail("experiments", "a non-empty list of experiments");
  for (size_t i = 0; i < exps.size(); ++i) {
    const Section e(exps[i], "experiments." + std::to_string(i), src);
    e.check_keys({"id", "label", "for", "psa", "objective", "objectives", "method", "budget", "seeds", "params", "top",
                  "set", "budget_of"});
    if (!e.has("id")) e.fail("id", "an experiment id (required)");
    if (!e.has("psa")) e.fail("psa", "a PSA file (required)");
    for (const Vars& vars : expand_for(e)) {
      StudyExperiment x;
      x.vars = vars;
      x.where = where(src, e.key_path("id"), e.raw("id"));
      x.id = subst(e, "id", e.text("id"), vars);
      if (!valid_id(x.id)) e.fail("id", "letters, digits, '-', '_' or '.' (after {var} substitution: '" + x.id + "')");
      if (st.find(x.id)) e.fail("id", "an id not used before ('" + x.id + "' is)");
      x.label = subst(e, "label", e.text("label", x.id), vars, true);
      const std::string psa_name = subst(e, "psa", e.text("psa"), vars);
      x.psa = find_file(psa_name, path);
      if (x.psa.empty())
        e.fail("psa", "a PSA file relative to the study file, the working directory or " + data_dir() + " ('" +
                          psa_name + "' not found)");
      if (e.has("objective") && e.has("objectives")) e.fail("objectives", "either objective or objectives, not both");
      const char* okey = e.has("objective") ? "objective" : "objectives";
      const std::vector<std::string> objectives = text_list(e, okey);
      for (size_t k = 0; k < objectives.size(); ++k) {
        const std::string o = subst(e, okey, objectives[k], vars);
        if (!is_objective_word(o)) {  // here, not in the PSA file written from it later
          const std::string expected =
              "one of " + objective_choices() + (o != objectives[k] ? " (after {var} substitution: '" + o + "')" : "");
          if (e.raw(okey).IsSequence()) e.fail_node(e.raw(okey)[k], e.key_path(okey) + "." + std::to_string(k), expected);
          e.fail(okey, expected);
        }
        x.objectives.push_back(o);
      }
      x.method = subst(e, "method", e.text("method", "sweep"), vars);
      if (!kMethods.count(x.method)) e.fail("method", "sweep, rw, ga, aco, bo or nsga2");
      const bool agent = x.method != "sweep";
      if (agent) {
        if (!e.has("budget")) e.fail("budget", "evaluations per seed (required for an agent)");
        x.budget = uint64_t(e.integer("budget", 0, 1, int64_t(1) << 40));
        const std::vector<std::string> seeds = text_list(e, "seeds");
        const YAML::Node list = e.raw("seeds");
        for (size_t k = 0; k < seeds.size(); ++k) {
          const std::string& s = seeds[k];
          const auto bad = [&](const std::string& expected) {  // names the item, e.g. experiments.3.seeds.1
            if (list.IsSequence()) e.fail_node(list[k], e.key_path("seeds") + "." + std::to_string(k), expected);
            e.fail("seeds", expected);
          };
          unsigned long long v = 0;
          try {
            size_t used = 0;
            if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) throw std::invalid_argument(s);
            v = std::stoull(s, &used);
            if (used != s.size()) throw std::invalid_argument(s);
          } catch (const std::logic_error&) {
            bad("a non-negative integer");
          }
          if (std::find(x.seeds.begin(), x.seeds.end(), v) != x.seeds.end()) bad("a seed not listed before");
          x.seeds.push_back(v);
        }
        if (e.has("seeds") && x.seeds.empty()) e.fail("seeds", "at least one seed (without the key: seed 0)");
        if (x.seeds.empty()) x.seeds.push_back(0);
        const Section p = e.sub("params");
        if (p.node().IsMap())
          for (auto it = p.node().begin(); it != p.node().end(); ++it) {
            const std::string k = it->first.as<std::string>();
            if (!it->second.IsScalar() || it->second.Scalar().empty()) p.fail(k.c_str(), "a value");
            x.params.emplace_back(k, subst(p, k.c_str(), it->second.Scalar(), vars));
            x.params_where.push_back(where(src, p.key_path(k), it->second));
          }
        if (e.has("top")) e.fail("top", "nothing for an agent (top is for sweeps)");
      } else {
        for (const char* k : {"budget", "seeds", "params"})
          if (e.has(k)) e.fail(k, std::string("nothing for a sweep (") + k + " is for agents)");
        x.top = int32_t(e.integer("top", 1000, 1, 1 << 16));  // a sweep's --top (kMaxTopK)
      }
      for (const auto& s : text_list(e, "set")) {
        const std::string v = subst(e, "set", s, vars);
        if (v.find('=') == std::string::npos) e.fail("set", "key=value assignments");
        x.sets.push_back(v);
      }
      if (e.has("budget_of")) {
        const Section b = e.sub("budget_of");
        b.check_keys({"experiment", "limit"});
        x.budget_of = subst(b, "experiment", b.text("experiment"), vars);
        x.limit = subst(b, "limit", b.text("limit", "bandwidth"), vars);
        if (x.limit == "bw") x.limit = "bandwidth";
        if (x.limit != "bandwidth" && x.limit != "cost") b.fail("limit", "bandwidth (or bw) or cost");
        if (!st.find(x.budget_of)) b.fail("experiment", "an experiment defined earlier ('" + x.budget_of + "' is not)");
      }
      // Two experiments' runs must not write one file (an agent x's seed 1 and a sweep x-s1).
      for (uint64_t seed : run_seeds(x)) {
        const std::string f = result_file(x, seed);
        for (const auto& other : st.experiments)
          for (uint64_t os : run_seeds(other))
            if (result_file(other, os) == f)
              e.fail("id", "an id whose result files differ from every other experiment's ('" + x.id + "' and '" +
                               other.id + "' would both write " + f + ")");
      }
      st.experiments.push_back(x);
    }
  }

  const YAML::Node comps = top.raw("comparisons");
  if (!comps.IsNull() && !comps.IsSequence()) top.fail("comparisons", "a list of comparisons");
  for (size_t i = 0; comps.IsSequence() && i < comps.size(); ++i) {
    const Section c(comps[i], "comparisons." + std::to_string(i), src);
    c.check_keys({"kind", "title", "for", "target", "baselines", "optimum", "agents", "experiments", "within", "front",
                  "marks", "figure", "x", "series"});
    const std::string kind = c.text("kind");
    if (!kKinds.count(kind)) c.fail("kind", "gain, gap, near_optimal, convergence or pareto");
    const std::string figure = c.text("figure");
    if (!kFigures.count(figure) || (figure.empty() && c.has("figure"))) c.fail("figure", "bars, batch, convergence or pareto");
    // Which figure draws which kind of comparison (scripts/study_plots.py).
    const std::string drawn = figure == "bars" || figure == "batch" ? "gain" : figure;
    if (!figure.empty() && drawn != kind)
      c.fail("figure", "a figure of a " + kind + " comparison (" + figure + " draws " + drawn + " comparisons)");
    if (figure == "batch")
      for (const char* k : {"x", "series"})
        if (!c.has(k) || !c.sub("for").has(c.text(k).c_str()))
          c.fail(k, "a variable of this comparison's `for:` (figure batch plots the gains against x, a line per series)");
    // Which keys name the target and the others, per kind.
    const char* tkey = kind == "gain" ? "target" : kind == "gap" ? "optimum" : kind == "pareto" ? "front" : nullptr;
    const char* okey = kind == "gain" ? "baselines" : kind == "gap" ? "agents" : kind == "pareto" ? "marks" : "experiments";
    for (const char* k : {"target", "baselines", "optimum", "agents", "experiments", "front", "marks"})
      if (c.has(k) && std::string(k) != (tkey ? tkey : "") && std::string(k) != okey)
        c.fail(k, std::string("nothing for kind ") + kind + ", which takes " + (tkey ? tkey + std::string(" and ") : "") + okey);
    if (tkey && !c.has(tkey)) c.fail(tkey, "an experiment id (required)");
    if (kind != "pareto" && text_list(c, okey).empty()) c.fail(okey, "a non-empty list of experiment ids");
    const auto check_id = [&](const char* key, const std::string& id) {
      if (!st.find(id)) c.fail(key, "the id of an experiment ('" + id + "' is not one)");
    };
    for (const Vars& vars : expand_for(c)) {
      StudyComparison x;
      x.kind = kind;
      x.entry = int32_t(i);
      x.vars = vars;
      x.where = where(src, c.key_path("kind"), c.raw("kind"));
      if (c.has("title") && c.text("title").find_first_not_of(" \t") == std::string::npos) c.fail("title", "a title (without the key: the kind)");
      x.title = subst(c, "title", c.text("title", kind), vars, true);
      x.within = c.number("within", 0.01, 0, 10);
      x.figure = figure;
      x.x = c.text("x");
      x.series = c.text("series");
      if (tkey) {
        x.target = subst(c, tkey, c.text(tkey), vars);
        check_id(tkey, x.target);
      }
      for (const auto& o : text_list(c, okey)) {
        x.others.push_back(subst(c, okey, o, vars));
        check_id(okey, x.others.back());
      }
      if (kind == "gap" && st.find(x.target)->method != "sweep") c.fail("optimum", "a sweep experiment (the exact optimum)");
      if (kind == "gap" || kind == "convergence")  // their others are agents
        for (const auto& id : x.others)
          if (st.find(id)->method == "sweep")
            c.fail(okey, std::string("agent experiments") +
                             (kind == "convergence" ? ": convergence follows their generations" : "") + " ('" + id +
                             "' is a sweep)");
      for (size_t k = 1; k < x.others.size(); ++k)
        if (std::find(x.others.begin(), x.others.begin() + k, x.others[k]) != x.others.begin() + k)
          c.fail(okey, "distinct experiment ids ('" + x.others[k] + "' twice)");
      if (kind == "gain" && std::find(x.others.begin(), x.others.end(), x.target) != x.others.end())
        c.fail("baselines", "experiments other than the target ('" + x.target + "')");
      st.comparisons.push_back(x);
    }
    st.entries = int32_t(i) + 1;
  }
  return st;
}

}  // namespace cosmic::psa
