#include "host/study.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include <nlohmann/json.hpp>
#include <omp.h>
#include <yaml-cpp/yaml.h>

#include "agents/factory.hpp"
#include "agents/params.hpp"
#include "host/commands.hpp"
#include "host/report.hpp"
#include "host/h5.hpp"
#include "host/provenance.hpp"
#include "host/search.hpp"
#include "host/sweep.hpp"
#include "host/text.hpp"
#include "kernels/model.hpp"
#include "kernels/space.hpp"
#include "psa/config.hpp"
#include "psa/names.hpp"
#include "psa/space.hpp"
#include "psa/study.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cosmic {

namespace {

// Writes `text` to `path` whole, or throws with the system's reason (a full disk among them): the
// file is closed before the check, so that what the stream still buffered is counted.
void write_file(const fs::path& path, const std::string& text) {
  errno = 0;
  std::ofstream os(path, std::ios::binary);
  os << text;
  os.close();
  if (!os) throw std::runtime_error("cannot write " + path.string() + (errno ? std::string(": ") + std::strerror(errno) : ""));
}

const double kInf = std::numeric_limits<double>::infinity();

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string fmt(double x, int digits = 4) { return std::isfinite(x) ? fmt_g(x, digits) : "-"; }

std::string fmt_fixed(double x, int decimals) {
  if (!std::isfinite(x)) return "-";
  char b[40];
  std::snprintf(b, sizeof b, "%.*f", decimals, x);
  return b;
}

std::string gain_text(double g) { return std::isfinite(g) ? fmt(g, 4) + "x" : "-"; }

std::string algo_short(Algo a) {
  switch (a) {
    case Algo::Ring: return "ring";
    case Algo::Direct: return "direct";
    case Algo::HalvingDoubling: return "hd";
    case Algo::DoubleBinaryTree: return "dbt";
  }
  return "?";
}

// One line a reader can act on: the parallel layout, the collective settings, the network.
std::string describe(const Config& c) {
  std::ostringstream os;
  const Workload& w = c.work;
  os << "dp " << w.dp << " tp " << w.tp << " pp " << w.pp << " cp " << w.cp
     << (w.cp > 1 && w.cp_style == CpStyle::AllToAll ? " (all-to-all)" : "") << (w.ep > 1 ? " ep " + std::to_string(w.ep) : "")
     << (w.etp > 0 && c.model.experts > 0 ? " etp " + std::to_string(w.etp) : "")
     << ", " << names::name(names::kSharding, w.sharding) << "; " << names::name(names::kPolicy, c.net.policy) << ", "
     << c.net.chunks << " chunks, " << names::name(names::kMultiDim, c.net.multidim) << "; ";
  for (int32_t d = 0; d < c.net.ndims; ++d) {
    const NetDim& n = c.net.dim[d];
    os << (d ? " | " : "") << names::name(names::kTopology, n.topology) << " " << n.npus << " @ "
       << fmt(n.link_bw_GBps * links_per_npu(c.net, d), 4) << " GB/s";
    bool same = true;
    for (int k = 1; k < kNumColls; ++k) same = same && n.algo[k] == n.algo[0];
    os << " (";
    if (same) os << algo_short(n.algo[0]);
    else
      os << "AR " << algo_short(n.algo[0]) << ", AG " << algo_short(n.algo[1]) << ", RS " << algo_short(n.algo[2])
         << ", A2A " << algo_short(n.algo[3]);
    os << ")";
  }
  return os.str();
}

// The parallel layout and network shape (no bandwidths, no algorithms): what makes two
// configurations structurally different.
std::string structure_key(const Config& c) {
  const CpStyle cp_style = c.work.cp > 1 ? c.work.cp_style : CpStyle::AllGather;  // no style without cp
  std::vector<int64_t> v{c.work.dp, c.work.tp, c.work.pp, c.work.cp, int64_t(cp_style), int64_t(c.work.sharding), c.work.ep,
                         c.model.experts > 0 ? c.work.etp : 0};
  for (int32_t d = 0; d < c.net.ndims; ++d) {
    v.push_back(int64_t(c.net.dim[d].topology));
    v.push_back(c.net.dim[d].npus);
  }
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));  // compared, never shown
}

struct Point {
  bool found = false;  // a feasible point exists
  std::vector<int32_t> genome;
  std::vector<double> obj;  // as stored in the file
  Config cfg{};
  Result res{};
  double bw = 0;
  std::string file;
  uint64_t seed = 0;
};

// Seconds, from a run's file: its wall time and, for a search, where it went (the attributes of
// docs/results-format.md; 0 where a file lacks them). Summed over runs for the report.
struct Times {
  uint64_t runs = 0;
  double wall_s = 0, eval_s = 0, agent_s = 0, write_s = 0, writer_s = 0;
  void add(const Times& t) {
    runs += t.runs;
    wall_s += t.wall_s;
    eval_s += t.eval_s;
    agent_s += t.agent_s;
    write_s += t.write_s;
    writer_s += t.writer_s;
  }
  double other_s() const { return std::max(0.0, wall_s - eval_s - agent_s - write_s); }
};

Times read_times(hid_t file) {
  Times t;
  t.runs = 1;
  for (auto [name, v] : {std::pair<const char*, double*>{"wall_time_s", &t.wall_s}, {"eval_s", &t.eval_s},
                         {"agent_s", &t.agent_s}, {"write_s", &t.write_s}, {"writer_s", &t.writer_s}})
    if (h5::has_attr(file, name)) *v = h5::attr_double(file, name);
  return t;
}

json times_json(const Times& t, bool phases) {
  json j = {{"runs", t.runs}, {"wall_s", t.wall_s}};
  if (!phases) return j;
  j["eval_s"] = t.eval_s;
  j["agent_s"] = t.agent_s;
  j["write_s"] = t.write_s;
  j["other_s"] = t.other_s();
  j["writer_s"] = t.writer_s;
  return j;
}

struct RunInfo {
  std::string file;
  uint64_t seed = 0;
  double best = kInf;
  uint64_t evaluations = 0;
  uint64_t copies = 1;  // a sweep's fold_copies: points of the PSA's space each evaluated one stands for
  double wall_s = 0;  // as the study saw it (reused: the file's)
  Times times;        // the file's
  bool reused = false;
  Point point;
};

struct ExpResult {
  const psa::StudyExperiment* e = nullptr;
  std::string psa_file;  // the materialised PSA file
  std::unique_ptr<psa::DesignSpace> ds;
  std::vector<RunInfo> runs;
  Point best;
  double wall_s = 0;
  std::string limit_constraint;
  double limit_value = 0;
};

std::string obj_name(const ExpResult& r, size_t j = 0) { return psa::objective_name(r.ds->objectives[j]); }

// " (reused)" when --reuse took every run of an experiment from its file, " (k of n reused)" when some.
std::string reused_text(const ExpResult& r) {
  size_t k = 0;
  for (const RunInfo& run : r.runs) k += run.reused;
  if (k == 0) return "";
  return k == r.runs.size() ? " (reused)" : " (" + std::to_string(k) + " of " + std::to_string(r.runs.size()) + " reused)";
}

// Fills cfg, res and bw from the genome; checks the stored objective against a fresh evaluation.
void score(const psa::DesignSpace& ds, Point& p) {
  p.cfg = decode(*ds.view, p.genome.data());
  p.res = evaluate(p.cfg);
  p.bw = npu_bandwidth_total(p.cfg);  // the study's "bw" (kernels/space.hpp)
  const double again = objective_value(ds.objectives[0], p.cfg, p.res);
  if (!p.obj.empty() && std::fabs(again - p.obj[0]) > 1e-9 * std::max(1.0, std::fabs(p.obj[0])))
    std::cerr << "study: warning: " << p.file << ": stored objective " << p.obj[0] << " but the model gives " << again
              << "\n";
}

Point read_sweep_best(const psa::DesignSpace& ds, const std::string& file) {
  Point p;
  p.file = file;
  h5::Handle f = h5::open_file(file, false);
  h5::Handle top = h5::group(h5::group(f.id(), "top", false).id(), psa::objective_name(ds.objectives[0]), false);
  if (h5::column_size(top.id(), psa::objective_name(ds.objectives[0])) == 0) return p;
  for (const auto& g : ds.genes) p.genome.push_back(h5::read_column<int32_t>(top.id(), g.name)[0]);
  for (Objective o : ds.objectives) p.obj.push_back(h5::read_column<double>(top.id(), psa::objective_name(o))[0]);
  p.found = true;
  score(ds, p);
  return p;
}

Point read_search_best(const psa::DesignSpace& ds, const std::string& file) {
  Point p;
  p.file = file;
  h5::Handle f = h5::open_file(file, false);
  if (!h5::exists(f.id(), "best")) return p;
  h5::Handle b = h5::group(f.id(), "best", false);
  if (!h5::attr_int(b.id(), "feasible")) return p;
  p.genome = h5::read_column<int32_t>(b.id(), "index");
  for (Objective o : ds.objectives) p.obj.push_back(h5::attr_double(b.id(), psa::objective_name(o)));
  p.found = true;
  score(ds, p);
  return p;
}

// The points a run kept (sweep: its top-K list; search: every feasible evaluated point) whose
// objective 0 is at most `bound`, as (value, genome).
struct Kept {
  size_t ngenes = 0;
  std::vector<double> value;
  std::vector<int32_t> genes;  // genes[q * ngenes + g]: gene g of point q
  bool capped = false;  // a sweep's top-K list is full and all in the bound: more may lie within it
  const int32_t* genome(size_t q) const { return genes.data() + q * ngenes; }
};

void read_kept(const ExpResult& r, const RunInfo& run, double bound, Kept& k) {
  const psa::DesignSpace& ds = *r.ds;
  h5::Handle f = h5::open_file(run.file, false);
  const std::string o = obj_name(r);
  k.ngenes = ds.genes.size();
  if (r.e->method == "sweep") {
    h5::Handle top = h5::group(h5::group(f.id(), "top", false).id(), o, false);
    const std::vector<double> v = h5::read_column<double>(top.id(), o);
    std::vector<std::vector<int32_t>> cols;
    for (const auto& g : ds.genes) cols.push_back(h5::read_column<int32_t>(top.id(), g.name));
    for (size_t i = 0; i < v.size(); ++i) {
      if (!(v[i] <= bound)) continue;
      k.value.push_back(v[i]);
      for (const auto& c : cols) k.genes.push_back(c[i]);
    }
    // Sorted best first: the list is all within the bound when its last point is.
    k.capped = k.capped || (int64_t(v.size()) >= h5::attr_int(f.id(), "top_k") && !v.empty() && v.back() <= bound);
    return;
  }
  if (!h5::exists(f.id(), "evaluated")) return;
  h5::Handle ev = h5::group(f.id(), "evaluated", false);
  const std::vector<double> v = h5::read_column<double>(ev.id(), o);
  const std::vector<double> viol = h5::read_column<double>(ev.id(), "violation");
  const std::vector<int32_t> reason = h5::read_column<int32_t>(ev.id(), "reason");
  std::vector<size_t> rows;  // most evaluated points are far from the best: read their genes only if any is near
  for (size_t i = 0; i < v.size(); ++i)
    if (reason[i] == 0 && viol[i] == 0 && v[i] <= bound) rows.push_back(i);
  if (rows.empty()) return;
  std::vector<std::vector<int16_t>> cols;
  for (const auto& g : ds.genes) cols.push_back(h5::read_column<int16_t>(ev.id(), g.name));
  for (size_t i : rows) {
    k.value.push_back(v[i]);
    for (const auto& c : cols) k.genes.push_back(c[i]);
  }
}

// --- PSA files made for each experiment -------------------------------------------------

std::string find_file(const std::string& name, const std::string& relative_to) {
  for (const fs::path& p : {fs::path(relative_to).parent_path() / name, fs::path(name), fs::path(psa::data_dir()) / name})
    if (fs::is_regular_file(p)) return p.string();
  return "";
}

std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

// Writes DIR/psa/<id>.yaml: the experiment's PSA file with its base configuration inlined, the
// `set` edits applied, the objectives replaced and the budget constraint added; returns its path.
std::string materialise(const psa::StudyExperiment& e, const std::string& dir, const std::string& extra_constraint) {
  YAML::Node root = psa::load_yaml_file(e.psa);
  psa::Sources src;
  src.config_file = e.psa;
  const std::vector<std::string> sets = psa::application_order(e.sets);
  for (const auto& s : sets)  // `base=FILE` first: it replaces the base the base.* edits apply to
    if (psa::replaces_base(s)) psa::apply_set(root, s, src);
  psa::Sources base_src;  // the base's presets are found next to its file (or the PSA, inline)
  base_src.config_file = e.psa;
  if (root["base"].IsScalar()) {
    const std::string base = find_file(root["base"].Scalar(), e.psa);
    if (base.empty()) throw psa::ConfigError(e.psa + ": base '" + root["base"].Scalar() + "' not found");
    YAML::Node b = psa::load_yaml_file(base);
    if (!b.IsMap()) throw psa::ConfigError(base + ": expected a mapping with model, system and workload");
    b.remove("name");
    b.remove("description");
    root["base"] = b;
    base_src.config_file = base;
  }
  // The edits that pick a preset, then the base's presets written out, so that the other base.*
  // edits reach the keys a preset holds (a preset system's network dims), as they do where a
  // sweep loads the base file itself.
  for (const auto& s : sets)
    if (!psa::replaces_base(s) && psa::picks_preset(s)) psa::apply_set(root, s, src);
  for (const auto& [key, from] : src.override_from)  // an error in a preset an edit picked names the edit
    if (key.rfind("base.", 0) == 0) base_src.override_from[key.substr(5)] = base_src.edit_label = "set";
  if (root["base"].IsMap()) psa::resolve_presets(root["base"], base_src);
  for (const auto& s : sets)
    if (!psa::replaces_base(s) && !psa::picks_preset(s)) psa::apply_set(root, s, src);
  // NPU types inline too (the files a compute.device gene names may be relative to e.psa).
  if (psa::has_device_gene(root)) psa::inline_devices(root, psa::load_psa(e.psa, e.sets).device_systems);
  if (!e.objectives.empty()) {
    root.remove("objective");
    root.remove("pareto");
    YAML::Node l(YAML::NodeType::Sequence);
    for (const auto& o : e.objectives) l.push_back(o);
    root["objectives"] = l;
  }
  if (!extra_constraint.empty()) {
    if (!root["constraints"].IsDefined() || root["constraints"].IsNull()) root["constraints"] = YAML::Node(YAML::NodeType::Sequence);
    root["constraints"].push_back(extra_constraint);
  }
  root["name"] = e.id;
  const std::string out = (fs::path(dir) / "psa" / (e.id + ".yaml")).string();
  YAML::Emitter em;
  em << root;
  write_file(out, "# Made by `cosmic study` for experiment " + e.id + " from " + e.psa + "\n" + em.c_str() + "\n");
  return out;
}

// An agent experiment's params: as "<agent>.<key>" -> value (ParamError on a malformed key).
agents::Params study_params(const psa::StudyExperiment& e) {
  agents::Params params;
  for (const auto& [k, v] : e.params) agents::add_param(params, e.method, k + "=" + v);
  return params;
}

// A run's file can be reused when it is complete and was made from the same PSA text and settings.
bool reusable(const std::string& file, const psa::DesignSpace& ds, const psa::StudyExperiment& e, uint64_t seed) {
  if (!fs::is_regular_file(file)) return false;
  try {
    // The hyperparameters the run would be given (the PSA's agent: section, then the study's
    // params), as the search records them.
    const agents::Params params =
        e.method == "sweep" ? agents::Params{} : budget_params(e.method, psa_agent_params(ds, e.method, study_params(e)), e.budget);
    h5::check_readable(file);  // (a damaged one is run again: its replacing says it is damaged)
    h5::Handle f = h5::open_file(file, false);
    if (!h5::has_attr(f.id(), "complete") || h5::attr_int(f.id(), "complete") != 1) return false;
    if (h5::attr_string(f.id(), "psa") != ds.text || !provenance_mismatch(read_provenance(f.id()), ds).empty()) return false;
    if (e.method == "sweep") {
      const std::vector<std::string> folded =
          h5::has_attr(f.id(), "folded_genes") ? h5::attr_strings(f.id(), "folded_genes") : std::vector<std::string>{};
      return h5::attr_int(f.id(), "top_k") == e.top && folded == fold_names(ds);  // files before folding: none
    }
    const bool has_feasible_rows = !h5::has_attr(f.id(), "keep") || h5::attr_string(f.id(), "keep") != "none";  // read_kept
    return h5::attr_string(f.id(), "agent") == e.method && h5::attr_uint(f.id(), "seed") == seed &&
           h5::attr_uint(f.id(), "budget") == e.budget && has_feasible_rows &&
           h5::attr_string(f.id(), "params") == agents::params_text(params);
  } catch (const std::exception&) {
    return false;
  }
}

json point_json(const ExpResult& r, const Point& p) {
  json j;
  j["found"] = p.found;
  if (!p.found) return j;
  j["file"] = fs::path(p.file).filename().string();
  j["seed"] = p.seed;
  for (size_t k = 0; k < r.ds->objectives.size(); ++k) j["objectives"][obj_name(r, k)] = p.obj[k];
  j["objective"] = p.obj[0];
  j["time_s"] = p.res.time_s;
  j["memory_bytes"] = p.res.memory_bytes;
  j["bandwidth_GBps"] = p.bw;
  j["network_cost_usd"] = p.res.network_cost_usd;
  j["config"] = describe(p.cfg);
  j["genome"] = p.genome;
  json genes = json::object();
  for (size_t g = 0; g < r.ds->genes.size(); ++g) {
    const auto& gi = r.ds->genes[g];
    const int32_t v = p.genome[g];
    genes[gi.name] = size_t(v) < gi.labels.size() ? gi.labels[size_t(v)] : std::to_string(v);
  }
  j["genes"] = genes;
  return j;
}

std::string vars_text(const std::vector<std::pair<std::string, std::string>>& vars) {
  std::string s;
  for (const auto& [k, v] : vars) s += (s.empty() ? "" : ", ") + v;
  return s;
}

std::string md_escape(std::string s) {
  for (size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2)) s.replace(at, 1, "\\|");
  return s;
}

// `cosmic sweep` / `cosmic search` arguments of one run (after the program name): the same
// command line whether the run happens in this process or in a child.
std::vector<std::string> run_command(const ExpResult& r, const RunInfo& run, const StudyOptions& o) {
  const psa::StudyExperiment& e = *r.e;
  std::vector<std::string> a;
  if (e.method == "sweep") {
    a = {"sweep", r.psa_file, "-o", run.file, "--top", std::to_string(e.top), "--keep",
         r.ds->objectives.size() >= 2 ? "pareto" : "top"};
  } else {
    // The report reads the feasible evaluated points only (read_kept).
    a = {"search", r.psa_file, "--agent", e.method, "--budget", std::to_string(e.budget),
         "--seed", std::to_string(run.seed), "--keep", "feasible", "-o", run.file};
    for (const auto& [k, v] : e.params) a.insert(a.end(), {"--param", k + "=" + v});
  }
  a.insert(a.end(), {"--backend", o.backend});
  if (o.quiet || o.jobs > 1) a.push_back("--quiet");
  return a;
}

// Runs a command in this process (cmd_sweep / cmd_search); returns its exit status.
int run_here(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& s : args) argv.push_back(s.c_str());
  return (args[0] == "sweep" ? cmd_sweep : cmd_search)(int(argv.size()), argv.data());
}

// Starts `cosmic ARGS...` (this executable) as a child with OMP_NUM_THREADS=threads; returns its pid.
pid_t spawn(const std::vector<std::string>& args, int threads) {
  static const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("OMP_NUM_THREADS=", 0) != 0 && std::string_view(*e).rfind("COSMIC_STUDY_PID=", 0) != 0)
      env_s.emplace_back(*e);
  env_s.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  env_s.push_back("COSMIC_STUDY_PID=" + std::to_string(getpid()));  // the run stops with the study (host/main.cpp)
  std::vector<char*> argv{const_cast<char*>(self.c_str())}, envp;
  for (const auto& s : args) argv.push_back(const_cast<char*>(s.c_str()));
  for (auto& s : env_s) envp.push_back(s.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (const int err = posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()))
    throw std::runtime_error("cannot start " + self + ": " + std::strerror(err));
  return pid;
}

// While the study runs runs in child processes: SIGINT and SIGTERM are noted (not fatal) so that
// they can be passed on to the children, whose files then stay valid and resumable.
volatile std::sig_atomic_t g_study_signal = 0;
extern "C" void on_study_signal(int sig) { g_study_signal = sig; }

class StudySignals {
 public:
  StudySignals() {
    g_study_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_study_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waitpid returns on a signal
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StudySignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// Reads every experiment's space once before any run, so that an error in a `set` edit or
// objective, a comparison of experiments that optimise different objectives, or a front of one
// objective is reported at once, not after the runs before it.
void check_objectives(const psa::Study& st, const std::string& dir) {
  // The PSA files are written to a scratch folder in DIR (removed after): DIR/psa/<id>.yaml is
  // its run's own (with its budget constraint), which a stopped study leaves for --reuse.
  std::string scratch = (fs::path(dir) / ".check-XXXXXX").string();
  if (!mkdtemp(scratch.data())) throw std::runtime_error("cannot make a scratch folder in " + dir);
  struct Remove {
    std::string dir;
    ~Remove() { std::error_code ec; fs::remove_all(dir, ec); }
  } remove{scratch};
  fs::create_directories(fs::path(scratch) / "psa");
  std::map<std::string, std::vector<std::string>> objectives;
  for (const auto& e : st.experiments) {
    try {
      for (Objective ob : psa::load_psa(materialise(e, scratch, "")).objectives)
        objectives[e.id].push_back(psa::objective_name(ob));
    } catch (const psa::ConfigError& err) {
      // A message that names the file written for the experiment names the copy kept in DIR/psa
      // for the user to read, not the scratch one.
      std::string what = err.what();
      const std::string made = (fs::path(scratch) / "psa" / (e.id + ".yaml")).string();
      if (what.find(made) != std::string::npos) {
        const std::string kept = materialise(e, dir, "");
        for (size_t at = what.find(made); at != std::string::npos; at = what.find(made, at + kept.size()))
          what.replace(at, made.size(), kept);
      }
      throw psa::ConfigError(e.where + ": experiment '" + e.id + "': " + what);
    }
  }
  for (const auto& c : st.comparisons) {
    if (c.kind == "gain" || c.kind == "gap" || c.kind == "convergence") {
      const std::string& first = c.target.empty() ? c.others[0] : c.target;  // convergence: no target
      for (const auto& id : c.others)
        if (objectives[id][0] != objectives[first][0])
          throw psa::ConfigError(c.where + ": comparison '" + c.title + "': " + id + " optimises " + objectives[id][0] +
                                 ", " + first + " " + objectives[first][0] + " (a " + c.kind +
                                 " compares one objective)");
    }
    if (c.kind == "pareto" && objectives[c.target].size() < 2)
      throw psa::ConfigError(c.where + ": comparison '" + c.title + "': front " + c.target +
                             " has one objective (a pareto comparison needs an experiment with two)");
  }
}

}  // namespace

int run_study(const std::string& study_file, const StudyOptions& o) {
  if (o.jobs < 1) throw std::invalid_argument("jobs must be at least 1");
  const double t0 = now_s();
  const psa::Study st = psa::load_study(study_file);
  // Agents' hyperparameters are checked before any run starts (a typo in the last experiment
  // would otherwise be found after all the others ran).
  // Each one alone first, so that the message gives its line; then together.
  for (const auto& e : st.experiments) {
    if (e.method == "sweep") continue;
    const auto refuse = [&](const std::string& where, const agents::ParamError& err) {
      throw psa::ConfigError(where + ": experiment '" + e.id + "': params: " + err.what());
    };
    for (size_t k = 0; k < e.params.size(); ++k) {
      try {
        agents::Params one;
        agents::add_param(one, e.method, e.params[k].first + "=" + e.params[k].second);
        agents::check_params(e.method, one);
      } catch (const agents::ParamError& err) {
        refuse(e.params_where[k], err);
      }
    }
    try {
      agents::check_params(e.method, study_params(e));
    } catch (const agents::ParamError& err) {
      refuse(e.where, err);
    }
  }
  std::error_code ec;
  if (fs::exists(o.out_dir, ec) && !fs::is_directory(o.out_dir, ec))
    throw std::runtime_error(o.out_dir + ": is a file, expected a folder for the study's results");
  // Whether this study makes the folder: only create_directory() of its last part can say (a
  // path through a missing folder, `new/..`, may end at one that exists).
  const fs::path out_path = fs::absolute(o.out_dir);
  if (out_path.has_parent_path()) fs::create_directories(out_path.parent_path());
  const bool made_folder = fs::create_directory(out_path);
  fs::create_directories(fs::path(o.out_dir) / "psa");
  // One study at a time in a folder: a second would rewrite the first's files under its report.
  const std::string lock_path = (fs::path(o.out_dir) / ".cosmic-study.lock").string();
  struct FolderLock {
    int fd;
    ~FolderLock() { if (fd >= 0) ::close(fd); }
  } lock{::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)};
  if (lock.fd < 0) throw std::runtime_error("cannot create " + lock_path + ": " + std::strerror(errno));
  if (flock(lock.fd, LOCK_EX | LOCK_NB) != 0)
    throw std::runtime_error(errno == EWOULDBLOCK
                                 ? o.out_dir + ": another cosmic study is writing this folder (choose another -o, or wait for it)"
                                 : "cannot lock " + lock_path + ": " + std::strerror(errno));
  // A folder holds one study's results: another study's (named in .cosmic-study, or in the
  // summary.json of a folder written before that marker) is refused, not written over.
  const fs::path marker = fs::path(o.out_dir) / ".cosmic-study";
  std::string holder;
  if (std::ifstream held{marker}) {
    std::getline(held, holder);
  } else if (std::ifstream summary{fs::path(o.out_dir) / "summary.json"}) {
    try {
      holder = nlohmann::json::parse(summary).value("study", "");
    } catch (const std::exception&) {  // not ours: no study named
    }
  }
  if (!holder.empty() && holder != st.name)
    throw std::runtime_error(o.out_dir + ": holds the results of study '" + holder + "', not of '" + st.name +
                             "' (choose another -o, or remove that folder)");
  {
    // A Ctrl-C during the checks (a second or two) stops the study after them, so that their
    // scratch folder is removed.
    StudySignals during_checks;
    try {
      check_objectives(st, o.out_dir);
    } catch (...) {
      // A study refused before any run leaves no folder it made: its lock file and empty psa/
      // go, then the folder, each only if empty (so not when the error names the PSA file it
      // kept in DIR/psa for the user to read).
      if (made_folder) {
        fs::remove(lock_path, ec);
        fs::remove(fs::path(o.out_dir) / "psa", ec);
        fs::remove(out_path, ec);
      }
      throw;
    }
    if (const int sig = g_study_signal) {
      std::cerr << "study: stopped (signal " << sig << ") before any run\n";
      return 128 + sig;
    }
  }
  // The folder is this study's from its first run on.
  if (!(std::ofstream(marker) << st.name << "\n")) throw std::runtime_error("cannot write " + marker.string());
  const size_t nexp = st.experiments.size();
  std::cout << "study " << st.name << ": " << nexp << " experiments -> " << o.out_dir
            << (o.jobs > 1 ? " (" + std::to_string(o.jobs) + " runs at a time)" : "") << "\n";

  // Runs (a sweep, or one seed of a search) start in the study's order, at most o.jobs at a time
  // (more than one: as child processes, each with its share of the OpenMP threads). An
  // experiment is prepared (its PSA file written, its runs queued) once the experiment it takes
  // its budget from has finished. Results are read back from the files in seed order, so they do
  // not depend on the order in which runs finish.
  std::vector<ExpResult> exps(nexp);
  std::map<std::string, size_t> index;
  std::vector<size_t> unfinished(nexp, 0);                  // runs not finished (every experiment has one)
  std::vector<double> prep_s(nexp, 0), started(nexp, -1);  // preparing; the first run's start
  std::vector<char> prepared(nexp, 0);
  auto finished = [&](size_t i) { return prepared[i] && unfinished[i] == 0; };
  std::set<std::pair<size_t, size_t>> ready;                // (experiment, run) waiting to start
  struct Child {
    size_t exp, run;
    double started_s;
  };
  std::map<pid_t, Child> running;
  size_t nfinished = 0;

  auto finish_experiment = [&](size_t i) {
    ExpResult& r = exps[i];
    for (const RunInfo& run : r.runs)  // seed order: ties go to the earlier seed
      if (run.point.found && (!r.best.found || run.best < r.best.obj[0])) r.best = run.point;
    r.wall_s = prep_s[i] + (started[i] < 0 ? 0 : now_s() - started[i]);
    const psa::StudyExperiment& e = *r.e;
    std::cout << "[" << ++nfinished << "/" << nexp << "] " << e.id << " (" << e.method
              << (e.method == "sweep" ? "" : " x" + std::to_string(r.runs.size())) << "): " << obj_name(r) << " "
              << (r.best.found ? fmt(r.best.obj[0], 6) : "no feasible point") << ", " << fmt_fixed(r.wall_s, 1) << " s"
              << reused_text(r) << "\n"
              << std::flush;
  };
  auto finish_run = [&](size_t i, size_t k, double started_s) {
    ExpResult& r = exps[i];
    RunInfo& run = r.runs[k];
    run.point = r.e->method == "sweep" ? read_sweep_best(*r.ds, run.file) : read_search_best(*r.ds, run.file);
    run.point.seed = run.seed;
    run.best = run.point.found ? run.point.obj[0] : kInf;
    h5::Handle f = h5::open_file(run.file, false);
    run.evaluations = h5::attr_uint(f.id(), "evaluated_count");
    if (h5::has_attr(f.id(), "fold_copies")) run.copies = h5::attr_uint(f.id(), "fold_copies");
    run.times = read_times(f.id());
    run.wall_s = run.reused ? run.times.wall_s : now_s() - started_s;
    if (--unfinished[i] == 0) finish_experiment(i);
  };
  auto stopped = [&](size_t i, size_t k, int status) {
    std::cerr << "study: " << st.experiments[i].id << " (" << exps[i].runs[k].file << ") stopped (status " << status
              << "); finished runs are kept, --reuse skips them\n";
  };
  auto prepare = [&](size_t i) {
    const psa::StudyExperiment& e = st.experiments[i];
    ExpResult& r = exps[i];
    r.e = &e;
    const double t = now_s();
    std::string extra;
    if (!e.budget_of.empty()) {
      const ExpResult& ref = exps[index.at(e.budget_of)];
      if (!ref.best.found)
        throw std::runtime_error(e.where + ": experiment '" + e.id + "': its budget_of experiment '" + e.budget_of +
                                 "' found no feasible point, so there is no " + e.limit +
                                 " budget to give it (the finished runs are kept: fix the reference, then --reuse)");
      // A relative margin of 1e-9 keeps the reference point itself on the right side of rounding.
      if (e.limit == "bandwidth") {
        r.limit_value = ref.best.bw;
        extra = "npu_bandwidth_total <= " + num(ref.best.bw * (1 + 1e-9));
      } else {
        r.limit_value = ref.best.res.network_cost_usd;
        extra = "network_cost <= " + num(r.limit_value * (1 + 1e-9));
      }
      r.limit_constraint = extra;
    }
    r.psa_file = materialise(e, o.out_dir, extra);
    try {
      r.ds = std::make_unique<psa::DesignSpace>(psa::load_psa(r.psa_file));
    } catch (const psa::ConfigError& err) {  // a `set:` or objective of the study's, in the file written from it
      throw psa::ConfigError(e.where + ": experiment '" + e.id + "': " + err.what());
    }
    if (!e.limit.empty() && r.ds->view->base.net.ndims != exps[index.at(e.budget_of)].best.cfg.net.ndims)
      throw std::runtime_error(e.where + ": experiment '" + e.id + "': its budget_of experiment '" + e.budget_of +
                               "' has another number of network dimensions");
    const std::vector<uint64_t> seeds = psa::run_seeds(e);
    unfinished[i] = seeds.size();
    for (uint64_t seed : seeds) {
      RunInfo run;
      run.seed = seed;
      run.file = (fs::path(o.out_dir) / psa::result_file(e, seed)).string();
      run.reused = o.reuse && reusable(run.file, *r.ds, e, seed);
      // A run the study makes again starts over: its unfinished file (an interrupted study's),
      // which `cosmic sweep` and `search` would not replace, goes first.
      if (!run.reused && h5::is_unfinished_run(run.file)) fs::remove(run.file);
      r.runs.push_back(std::move(run));
    }
    prepared[i] = 1;
    prep_s[i] = now_s() - t;
    for (size_t k = 0; k < r.runs.size(); ++k)
      if (r.runs[k].reused) finish_run(i, k, 0);
      else ready.insert({i, k});
  };

  for (size_t i = 0; i < nexp; ++i) index[st.experiments[i].id] = i;
  const int threads_per_child = std::max(1, omp_get_max_threads() / o.jobs);
  std::unique_ptr<StudySignals> signals;
  if (o.jobs > 1) signals = std::make_unique<StudySignals>();
  int rc = 0;
  std::exception_ptr error;
  while (nfinished < nexp || !running.empty()) {
    try {
      for (size_t i = 0; i < nexp && !rc && !error && !g_study_signal; ++i)
        if (!prepared[i] && (st.experiments[i].budget_of.empty() || finished(index.at(st.experiments[i].budget_of))))
          prepare(i);
      while (!rc && !error && !g_study_signal && !ready.empty() && running.size() < size_t(o.jobs)) {
        const auto [i, k] = *ready.begin();
        ready.erase(ready.begin());
        const std::vector<std::string> args = run_command(exps[i], exps[i].runs[k], o);
        const double t = now_s();
        if (started[i] < 0) started[i] = t;
        if (o.jobs > 1) {
          const pid_t pid = spawn(args, threads_per_child);
          running[pid] = {i, k, t};
          continue;
        }
        rc = run_here(args);
        if (rc == 0) finish_run(i, k, t);
        else stopped(i, k, rc);
      }
    } catch (...) {
      error = std::current_exception();
    }
    if (running.empty()) {
      if (rc || error || g_study_signal || nfinished == nexp) break;
      continue;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
      for (const auto& [child, run] : running) kill(child, g_study_signal);  // pass the signal on
      continue;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const Child c = it->second;
    running.erase(it);
    const int child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (child_rc != 0) {
      if (!rc) rc = child_rc;
      stopped(c.exp, c.run, child_rc);
      continue;
    }
    try {
      finish_run(c.exp, c.run, c.started_s);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  if (!rc && g_study_signal) {
    std::cerr << "study: interrupted; finished runs are kept, --reuse skips them\n";
    rc = 128 + int(g_study_signal);
  }
  if (rc) return rc;
  std::map<std::string, ExpResult> res;
  for (size_t i = 0; i < nexp; ++i) res.emplace(st.experiments[i].id, std::move(exps[i]));
  const double run_s = now_s() - t0;

  // --- Comparisons ------------------------------------------------------------------------
  json summary;
  summary["study"] = st.name;
  summary["study_file"] = st.file;
  summary["backend"] = o.backend;
  summary["experiments"] = json::object();
  for (const auto& e : st.experiments) {
    const ExpResult& r = res.at(e.id);
    json j;
    j["label"] = e.label;
    j["method"] = e.method;
    j["psa"] = fs::relative(r.psa_file, o.out_dir).string();
    j["source_psa"] = e.psa;
    j["objectives"] = json::array();
    for (size_t k = 0; k < r.ds->objectives.size(); ++k) j["objectives"].push_back(obj_name(r, k));
    j["vars"] = json::object();
    for (const auto& [k, v] : e.vars) j["vars"][k] = v;
    j["wall_s"] = r.wall_s;
    j["space_size"] = psa::to_string_u128(space_size(*r.ds->view));
    if (!e.budget_of.empty()) j["budget_of"] = {{"experiment", e.budget_of}, {"limit", e.limit}, {"value", r.limit_value}};
    j["runs"] = json::array();
    for (const auto& run : r.runs)
      j["runs"].push_back({{"file", fs::path(run.file).filename().string()}, {"seed", run.seed},
                           {"best", run.point.found ? json(run.best) : json(nullptr)}, {"evaluations", run.evaluations},
                           {"fold_copies", run.copies}, {"wall_s", run.wall_s}, {"reused", run.reused},
                           {"times", times_json(run.times, e.method != "sweep")}});
    j["best"] = point_json(r, r.best);
    summary["experiments"][e.id] = j;
  }

  std::ostringstream md;
  md << "# Study " << st.name << "\n\n";
  if (!st.description.empty()) md << st.description << "\n\n";
  size_t reused_runs = 0, all_runs = 0;
  for (const auto& [id, r] : res)
    for (const RunInfo& run : r.runs) {
      reused_runs += run.reused;
      ++all_runs;
    }
  md << "Made by `cosmic study " << st.file << " -o " << o.out_dir << (o.reuse ? " --reuse" : "")
     << (o.jobs > 1 ? " --jobs " + std::to_string(o.jobs) : "") << "` (backend " << o.backend << "): " << nexp
     << " experiments in " << fmt_fixed(run_s, 1) << " s"
     << (reused_runs ? " (" + std::to_string(reused_runs) + " of their " + std::to_string(all_runs) + " runs reused)" : "")
     << ". Every number below is read back from the experiments' HDF5 files "
     << "in this folder (best point: a sweep's `/top/<objective>` row 0, a search's `/best`, the best over seeds), "
     << "decoded and re-scored with the model. Times are per training iteration (or per inference request) of the "
     << "whole model; memory is per NPU; bandwidth is the sum over dimensions of per-NPU bandwidth.\n\n";

  summary["comparisons"] = json::array();
  int32_t last_entry = -1;
  for (const auto& c : st.comparisons) {
    json jc;
    jc["kind"] = c.kind;
    jc["title"] = c.title;
    jc["entry"] = c.entry;
    jc["figure"] = c.figure;
    jc["x"] = c.x;
    jc["series"] = c.series;
    jc["vars"] = json::object();
    for (const auto& [k, v] : c.vars) jc["vars"][k] = v;
    jc["rows"] = json::array();
    const bool first = c.entry != last_entry;
    last_entry = c.entry;
    md << "## " << c.title << "\n\n";

    if (c.kind == "gain") {
      const ExpResult& t = res.at(c.target);
      const std::string on = obj_name(t);
      jc["target"] = c.target;
      jc["objective"] = on;
      md << "Objective `" << on << "` (lower is better). Gain = baseline / `" << c.target
         << "`; on the metric and on raw time; "
         << (on == "runtime_x_bw"     ? "the metric gain is time gain x denominator gain (total per-NPU bandwidth ratio)"
             : on == "runtime_x_cost" ? "the metric gain is time gain x denominator gain (network cost ratio)"
             : on == "latency" || on == "throughput"
                 ? "the metric gain is time gain x denominator gain (1: no denominator)"
             : on == "first_token" || on == "per_output_token"
                 ? "the metric is a part of a request's time, so \"gain from denominator\" is the metric gain over the whole request's time gain"
                 : "the metric is not a time, so \"gain from denominator\" is only the metric gain over the time gain")
         << ".\n\n";
      md << "| experiment | objective | time (s) | memory/NPU (GiB) | bandwidth/NPU (GB/s) | network cost ($) | gain (metric) | gain (time) | gain from denominator | configuration |\n"
         << "|---|---|---|---|---|---|---|---|---|---|\n";
      std::vector<std::string> ids{c.target};
      ids.insert(ids.end(), c.others.begin(), c.others.end());
      for (const auto& id : ids) {
        const ExpResult& b = res.at(id);
        json row;
        row["experiment"] = id;
        row["label"] = b.e->label;
        row["role"] = id == c.target ? "target" : "baseline";
        const Point& p = b.best;
        double gm = kInf, gt = kInf, gd = kInf;
        if (p.found && t.best.found) {
          gm = p.obj[0] / t.best.obj[0];
          gt = p.res.time_s / t.best.res.time_s;
          gd = gm / gt;
          row["gain_metric"] = gm;
          row["gain_time"] = gt;
          row["gain_denominator"] = gd;
        }
        row["best"] = point_json(b, p);
        jc["rows"].push_back(row);
        md << "| " << md_escape(b.e->label) << (id == c.target ? " (target)" : "") << " | ";
        if (!p.found) {
          md << "no feasible point | | | | | | | | |\n";
          continue;
        }
        md << fmt(p.obj[0]) << " | " << fmt(p.res.time_s) << " | " << fmt_fixed(p.res.memory_bytes / 1073741824.0, 2) << " | "
           << fmt(p.bw) << " | " << fmt(p.res.network_cost_usd, 6) << " | " << (id == c.target ? "" : gain_text(gm)) << " | "
           << (id == c.target ? "" : gain_text(gt)) << " | " << (id == c.target ? "" : gain_text(gd)) << " | "
           << md_escape(describe(p.cfg)) << " |\n";
      }
      md << "\n";
    } else if (c.kind == "gap") {
      const ExpResult& opt = res.at(c.target);
      const std::string on = obj_name(opt);
      jc["optimum"] = c.target;
      jc["optimum_value"] = opt.best.found ? json(opt.best.obj[0]) : json(nullptr);
      md << "Exact optimum of `" << c.target << "` (exhaustive sweep, " << opt.runs[0].evaluations << " points scored"
         << (opt.runs[0].copies > 1 ? ", each for " + std::to_string(opt.runs[0].copies) + " of the space (folded)" : "")
         << "): " << (opt.best.found ? fmt(opt.best.obj[0], 6) : "none") << " (`" << on << "`).\n\n"
         << "| agent run | seed | evaluations | best | gap to optimum |\n|---|---|---|---|---|\n";
      bool other_space = false;
      for (const auto& id : c.others) {
        const ExpResult& a = res.at(id);
        // An agent over another space (a larger one, say) may end below the optimum of this one.
        const bool same = psa::same_space(*a.e, *opt.e);
        other_space = other_space || !same;
        for (const auto& run : a.runs) {
          const double gap = run.point.found && opt.best.found ? run.best / opt.best.obj[0] - 1 : kInf;
          jc["rows"].push_back({{"experiment", id}, {"seed", run.seed}, {"evaluations", run.evaluations},
                                {"best", run.point.found ? json(run.best) : json(nullptr)},
                                {"gap", std::isfinite(gap) ? json(gap) : json(nullptr)}, {"same_space", same}});
          md << "| " << md_escape(a.e->label) << " | " << run.seed << " | " << run.evaluations << " | " << fmt(run.best, 6)
             << " | " << (std::isfinite(gap) ? fmt_fixed(100 * gap, 3) + "%" : "-") << (same ? "" : " (other space)")
             << " |\n";
        }
      }
      if (other_space)
        md << "\n\"(other space)\": the agent searched another design space than `" << c.target
           << "` (another PSA file, `set` or budget), so its gap is to an optimum of a space it did not search; "
           << "below 0 means its space holds better points.\n";
      md << "\n";
    } else if (c.kind == "near_optimal") {
      jc["within"] = c.within;
      md << "Points within " << fmt(100 * c.within) << "% of each experiment's best: distinct genomes (those that differ "
         << "only in genes a sweep folds, `cosmic space`'s \"no effect\" genes no constraint reads, counted once), and distinct "
         << "structures (parallel layout dp/tp/pp/cp (and its style)/sharding and network topology x NPUs per dimension; bandwidths and "
         << "collective algorithms left out; examples show the folded genes at their first value). A sweep keeps its top-K list only: \">=\" marks a full list.\n\n"
         << "| experiment | best | genomes within | structures within | example structures (best first) |\n|---|---|---|---|---|\n";
      for (const auto& id : c.others) {
        const ExpResult& r = res.at(id);
        const double bound = r.best.found ? r.best.obj[0] * (1 + c.within) : -kInf;
        Kept k;
        for (const auto& run : r.runs) read_kept(r, run, bound, k);
        // Genomes that differ only in genes no result depends on are one point, as a sweep folds them.
        for (int32_t g : psa::foldable_genes(*r.ds))
          for (size_t q = 0; q < k.value.size(); ++q) k.genes[q * k.ngenes + size_t(g)] = 0;
        // Points best first; of equal genomes (agents re-evaluate many) only the first counts.
        std::vector<size_t> order(k.value.size());
        for (size_t q = 0; q < order.size(); ++q) order[q] = q;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return k.value[a] < k.value[b]; });
        const size_t bytes = k.ngenes * sizeof(int32_t);
        auto bytes_of = [&](size_t q) { return std::string_view(reinterpret_cast<const char*>(k.genome(q)), bytes); };
        auto hash = [&](size_t q) { return std::hash<std::string_view>{}(bytes_of(q)); };
        auto same = [&](size_t a, size_t b) { return bytes_of(a) == bytes_of(b); };
        std::unordered_set<size_t, decltype(hash), decltype(same)> distinct(order.size(), hash, same);  // point numbers
        std::vector<std::pair<double, std::string>> structs;
        std::set<std::string> seen;
        for (size_t q : order) {
          if (!distinct.insert(q).second) continue;
          const Config cfg = decode(*r.ds->view, k.genome(q));
          const std::string key = structure_key(cfg);
          if (seen.insert(key).second) structs.emplace_back(k.value[q], describe(cfg));
        }
        const bool capped = k.capped;
        json row = {{"experiment", id}, {"best", r.best.found ? json(r.best.obj[0]) : json(nullptr)},
                    {"genomes", distinct.size()}, {"structures", structs.size()}, {"capped", capped}};
        row["examples"] = json::array();
        std::string ex;
        for (size_t q = 0; q < structs.size() && q < 3; ++q) {
          row["examples"].push_back({{"objective", structs[q].first}, {"config", structs[q].second}});
          ex += (q ? "<br>" : "") + fmt(structs[q].first) + ": " + md_escape(structs[q].second);
        }
        jc["rows"].push_back(row);
        md << "| " << md_escape(r.e->label) << " | " << fmt(r.best.found ? r.best.obj[0] : kInf, 6) << " | "
           << (capped ? ">= " : "") << distinct.size() << " | " << (capped ? ">= " : "") << structs.size() << " | " << ex << " |\n";
      }
      md << "\n";
    } else if (c.kind == "convergence") {
      md << "Best objective after each generation is in each run's `/generations` (figure `convergence-*.png`).\n\n"
         << "| run | seed | evaluations | best | evaluations to within 1% of the best of all runs |\n|---|---|---|---|---|\n";
      double best_all = kInf;
      for (const auto& id : c.others)
        for (const auto& run : res.at(id).runs) best_all = std::min(best_all, run.best);
      for (const auto& id : c.others) {
        const ExpResult& r = res.at(id);
        for (const auto& run : r.runs) {
          uint64_t reach = 0;  // 0: not reached (or no feasible point in any run)
          if (std::isfinite(best_all)) {
            h5::Handle f = h5::open_file(run.file, false);
            if (h5::exists(f.id(), "generations")) {
              h5::Handle g = h5::group(f.id(), "generations", false);
              const auto b = h5::read_column<double>(g.id(), "best_objective");
              const auto ev = h5::read_column<uint64_t>(g.id(), "evaluations");
              for (size_t q = 0; q < b.size(); ++q)
                if (b[q] <= best_all * 1.01) {
                  reach = ev[q];
                  break;
                }
            }
          }
          jc["rows"].push_back({{"experiment", id}, {"file", fs::path(run.file).filename().string()}, {"seed", run.seed},
                                {"evaluations", run.evaluations}, {"best", run.point.found ? json(run.best) : json(nullptr)},
                                {"to_within_1pct", reach ? json(reach) : json(nullptr)}});
          md << "| " << md_escape(r.e->label) << " | " << run.seed << " | " << run.evaluations << " | " << fmt(run.best, 6)
             << " | " << (reach ? std::to_string(reach) : std::isfinite(best_all) ? "not reached" : "-") << " |\n";
        }
      }
      md << "\n";
    } else if (c.kind == "pareto") {
      const ExpResult& fr = res.at(c.target);
      jc["front"] = c.target;
      std::vector<double> f0, f1;
      for (const auto& run : fr.runs) {
        h5::Handle f = h5::open_file(run.file, false);
        if (!h5::exists(f.id(), "pareto")) continue;
        h5::Handle p = h5::group(f.id(), "pareto", false);
        const auto a = h5::read_column<double>(p.id(), obj_name(fr, 0));
        const auto b = h5::read_column<double>(p.id(), obj_name(fr, 1));
        f0.insert(f0.end(), a.begin(), a.end());
        f1.insert(f1.end(), b.begin(), b.end());
      }
      const std::string n0 = obj_name(fr, 0), n1 = obj_name(fr, 1);
      // The seeds' fronts merged: the points no other point of any seed dominates (equal ones once).
      std::vector<std::pair<double, double>> pts;
      for (size_t q = 0; q < f0.size(); ++q) pts.emplace_back(f0[q], f1[q]);
      std::sort(pts.begin(), pts.end());
      size_t front_points = 0;
      double lowest1 = kInf;
      for (const auto& [x, y] : pts)
        if (y < lowest1) {
          ++front_points;
          lowest1 = y;
        }
      jc["objectives"] = {n0, n1};
      jc["front_points"] = front_points;
      md << "Front of `" << c.target << "` over (" << n0 << ", " << n1 << "): " << front_points << " points"
         << (fr.runs.size() > 1 ? " (its " + std::to_string(fr.runs.size()) + " seeds' fronts merged)" : "")
         << (c.figure == "pareto" ? " (figure `pareto-*.png`)" : "") << ".";
      if (c.others.empty()) md << " (No `marks:` to place on it.)\n\n";
      else
        md << " Where each marked winner sits: the best " << n0 << " on the front at no more " << n1
           << ", and the ratio.\n\n| winner | " << n0 << " | " << n1 << " | front's best " << n0 << " at <= its " << n1
           << " | ratio |\n|---|---|---|---|---|\n";
      for (const auto& id : c.others) {
        const ExpResult& m = res.at(id);
        if (!m.best.found) {
          jc["rows"].push_back({{"experiment", id}, {"label", m.e->label}, {"found", false}});
          md << "| " << md_escape(m.e->label) << " | no feasible point | | | |\n";
          continue;
        }
        const double a = objective_value(fr.ds->objectives[0], m.best.cfg, m.best.res),
                     b = objective_value(fr.ds->objectives[1], m.best.cfg, m.best.res);
        double bestf = kInf;
        for (size_t q = 0; q < f0.size(); ++q)
          if (f1[q] <= b * (1 + 1e-12)) bestf = std::min(bestf, f0[q]);
        jc["rows"].push_back({{"experiment", id}, {"label", m.e->label}, {n0, a}, {n1, b},
                              {"front_best", std::isfinite(bestf) ? json(bestf) : json(nullptr)}});
        md << "| " << md_escape(m.e->label) << " | " << fmt(a) << " | " << fmt(b, 6) << " | " << fmt(bestf) << " | "
           << (std::isfinite(bestf) ? gain_text(a / bestf) : "-") << " |\n";
      }
      md << "\n";
    }
    (void)first;
    summary["comparisons"].push_back(jc);
  }

  md << "## Experiments\n\n| experiment | method | space | runs | evaluations | best | wall (s) | PSA file |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& e : st.experiments) {
    const ExpResult& r = res.at(e.id);
    uint64_t ev = 0;
    for (const auto& run : r.runs) ev += run.evaluations;
    const uint64_t copies = r.runs.empty() ? 1 : r.runs[0].copies;
    md << "| " << e.id << " | " << e.method << (e.method == "sweep" ? "" : " (budget " + std::to_string(e.budget) + ")")
       << " | " << psa::with_commas(psa::to_string_u128(space_size(*r.ds->view))) << " | " << r.runs.size() << " | " << ev
       << (copies > 1 ? " (each for " + std::to_string(copies) + ", folded)" : "") << " | "
       << fmt(r.best.found ? r.best.obj[0] : kInf, 6) << " " << obj_name(r) << " | " << fmt_fixed(r.wall_s, 1) << reused_text(r)
       << " | `" << fs::relative(r.psa_file, o.out_dir).string() << "`" << (r.limit_constraint.empty() ? "" : " (+ " + e.limit + " <= " + fmt(r.limit_value, 6) + ")") << " |\n";
  }
  md << "\nTotal: " << fmt_fixed(run_s, 1) << " s.\n\n";

  // Where the time went: the runs' own times from their files, summed per method.
  Times sweeps, searches;
  std::map<std::string, Times> by_method;
  double ran_s = 0;  // wall time of the runs made by this invocation (not reused)
  for (const auto& e : st.experiments)
    for (const auto& run : res.at(e.id).runs) {
      (e.method == "sweep" ? sweeps : searches).add(run.times);
      if (e.method != "sweep") by_method[e.method].add(run.times);
      if (!run.reused) ran_s += run.times.wall_s;
    }
  const double runs_s = sweeps.wall_s + searches.wall_s, comparisons_s = now_s() - t0 - run_s;
  json jt;
  jt["experiments_s"] = run_s;
  jt["jobs"] = o.jobs;
  jt["sweeps"] = times_json(sweeps, false);
  jt["searches"] = times_json(searches, true);
  for (const auto& [m, t] : by_method) jt["searches_by_method"][m] = times_json(t, true);
  if (o.jobs == 1) jt["around_runs_s"] = run_s - ran_s;  // with runs in parallel their times overlap
  jt["comparisons_s"] = comparisons_s;
  jt["reused_runs"] = reused_runs;
  summary["time"] = jt;
  md << "## Where the time went\n\n"
     << "Seconds, summed from the runs' files (`wall_time_s`; searches also `eval_s`, `agent_s`, `write_s`, `writer_s`, "
     << "docs/results-format.md" << (reused_runs ? "; " + std::to_string(reused_runs) + " reused runs count with the times in their files" : "")
     << "). A search's wall time splits into the evaluator calls, the agent's ask + tell, the time the loop spent on "
     << "results (buffering rows, waiting for the writer, the final write) and the rest (best point, Pareto archive, "
     << "start-up). The background writer compresses and writes the rows while the loop goes on, so its busy time "
     << "overlaps the other columns.\n\n"
     << "| runs | count | wall | evaluation | agent | writing | other | background writer |\n|---|---|---|---|---|---|---|---|\n"
     << "| sweeps | " << sweeps.runs << " | " << fmt_fixed(sweeps.wall_s, 1) << " | | | | | |\n";
  auto row = [&](const std::string& name, const Times& t) {
    md << "| " << name << " | " << t.runs << " | " << fmt_fixed(t.wall_s, 1) << " | " << fmt_fixed(t.eval_s, 1) << " | "
       << fmt_fixed(t.agent_s, 1) << " | " << fmt_fixed(t.write_s, 1) << " | " << fmt_fixed(t.other_s(), 1) << " | "
       << fmt_fixed(t.writer_s, 1) << " |\n";
  };
  for (const auto& [m, t] : by_method) row("searches, " + m, t);
  row("all searches", searches);
  if (o.jobs == 1)
    md << "\nThe experiments took " << fmt_fixed(run_s, 1) << " s: " << fmt_fixed(ran_s, 1) << " s in the runs"
       << (reused_runs ? " made now (the reused runs' times above are from their files)" : "") << " and "
       << fmt_fixed(run_s - ran_s, 1) << " s around them (PSA files, loading spaces, reading the best points back); "
       << "the comparisons took " << fmt_fixed(comparisons_s, 1) << " s more. An evaluator that took no time at all would "
       << "save at most " << fmt_fixed(searches.eval_s + sweeps.wall_s, 1) << " s (the searches' evaluation and the "
       << "sweeps' whole wall time" << (reused_runs ? ", reused runs' included" : "") << "); the agents and the writing remain.\n";
  else
    md << "\nThe experiments took " << fmt_fixed(run_s, 1) << " s with up to " << o.jobs << " runs at a time (each with "
       << std::max(1, omp_get_max_threads() / o.jobs) << " OpenMP threads); the runs' own wall times add up to "
       << fmt_fixed(runs_s, 1) << " s" << (reused_runs ? " (the reused runs' from their files)" : "") << ". The comparisons took "
       << fmt_fixed(comparisons_s, 1) << " s more.\n";

  summary["wall_s"] = run_s;
  const fs::path dir(o.out_dir);
  write_file(dir / "summary.json", json_text(summary, 1) + "\n");
  std::string figures;
  if (o.plots) {
    const std::string script = (fs::path(psa::data_dir()).parent_path() / "scripts" / "study_plots.py").string();
    // The python3 on PATH may lack Debian's packages (pyenv, venv): fall back to /usr/bin/python3.
    std::string py;
    for (const char* cand : {"python3", "/usr/bin/python3"})
      if (py.empty() && fs::is_regular_file(script) &&
          std::system((std::string(cand) + " -c 'import matplotlib, h5py' >/dev/null 2>&1").c_str()) == 0)
        py = cand;
    if (!py.empty()) {
      const std::string cmd = py + " '" + script + "' '" + o.out_dir + "'";
      if (std::system(cmd.c_str()) != 0) std::cerr << "study: the figures failed: " << cmd << "\n";
    } else {
      std::cout << "figures: python3 with matplotlib and h5py not found (Debian: apt-get install python3-matplotlib "
                   "python3-h5py); then run: python3 scripts/study_plots.py "
                << o.out_dir << "\n";
    }
  }
  std::vector<std::string> pngs;
  if (fs::is_directory(dir / "figures"))
    for (const auto& f : fs::directory_iterator(dir / "figures"))
      if (f.path().extension() == ".png") pngs.push_back(f.path().filename().string());
  std::sort(pngs.begin(), pngs.end());
  if (!pngs.empty()) {
    md << "\n## Figures\n\n";
    for (const auto& p : pngs) md << "![" << p << "](figures/" << p << ")\n\n";
  }
  write_file(dir / "report.md", md.str());
  std::cout << "report: " << (dir / "report.md").string() << "\nsummary: " << (dir / "summary.json").string() << "\n";
  if (!pngs.empty()) std::cout << "figures: " << (dir / "figures").string() << " (" << pngs.size() << " PNG)\n";
  return 0;
}

}  // namespace cosmic
