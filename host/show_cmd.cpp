// `cosmic show FILE.h5 [--top N] [--json]`: what a result file of `cosmic sweep`, `cosmic merge`
// or `cosmic search` holds, without writing Python: how far the run got, its counts, and its best
// points decoded into the parameters' values. The labels come from the file itself (a sweep's
// /genes, a search's /best), so neither the PSA file nor its base configuration is needed. The
// file is read as summary_json() builds it; the text is printed from that JSON, so both outputs
// say the same thing.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/child.hpp"
#include "host/cli.hpp"
#include "host/commands.hpp"
#include "host/report.hpp"
#include "host/h5.hpp"
#include "host/population.hpp"
#include "host/provenance.hpp"
#include "host/search.hpp"
#include "host/text.hpp"
#include "kernels/model.hpp"
#include "kernels/score.hpp"
#include "psa/names.hpp"
#include "psa/space.hpp"

namespace cosmic {

using ojson = nlohmann::ordered_json;

namespace {

// A result file's /genes: the gene names in genome order and each gene's value labels.
struct GeneLabels {
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> labels;  // labels[g][value index]
  GeneLabels() = default;  // no genes
  explicit GeneLabels(hid_t f) {
    h5::Handle gg = h5::group(f, "genes", false);
    names = h5::attr_strings(gg.id(), "gene_names");
    for (const auto& g : names) labels.push_back(h5::read_strings(gg.id(), g));
  }
  // Gene g's label of value index v ("#v" for one outside the table).
  std::string of(size_t g, int32_t v) const {
    return v >= 0 && size_t(v) < labels[g].size() ? labels[g][size_t(v)] : "#" + std::to_string(v);
  }
};

// The first n rows of a sweep's point table (/top/<objective> or /pareto): objectives, metrics
// and the decoded genes, each column read once.
ojson sweep_points(hid_t table, size_t n, const std::vector<std::string>& objectives, const GeneLabels& genes) {
  ojson rows = ojson::array();
  n = std::min(n, h5::column_size(table, "index"));
  if (n == 0) return rows;
  const auto lo = h5::read_column<uint64_t>(table, "index", 0, n), hi = h5::read_column<uint64_t>(table, "index_hi", 0, n);
  for (size_t r = 0; r < n; ++r) rows.push_back({{"index", psa::to_string_u128((u128(hi[r]) << 64) | lo[r])}});
  auto doubles = [&](const std::string& name, const std::string& group) {
    const auto v = h5::read_column<double>(table, name, 0, n);
    for (size_t r = 0; r < n; ++r) (group.empty() ? rows[r][name] : rows[r][group][name]) = v[r];
  };
  for (const auto& o : objectives) doubles(o, "objectives");
  for (const char* m : kPopMetricNames)
    if (h5::exists(table, m)) doubles(m, "");  // files before 2026-12-02 lack first_token_s
  for (size_t g = 0; g < genes.names.size(); ++g) {
    const auto v = h5::read_column<int32_t>(table, genes.names[g], 0, n);
    for (size_t r = 0; r < n; ++r) rows[r]["genes"][genes.names[g]] = genes.of(g, v[r]);
  }
  return rows;
}

// The model revision the results come from (files of older cosmic versions lack it), the --set
// edits of the PSA file and the space's limits.
void provenance_json(hid_t f, ojson& j) {
  if (h5::has_attr(f, "model_revision")) j["model_revision"] = h5::attr_int(f, "model_revision");
  if (h5::has_attr(f, "psa_sets")) j["psa_sets"] = h5::attr_strings(f, "psa_sets");
  if (h5::has_attr(f, "limits"))  // "objective <= value" each (host/provenance.cpp)
    for (const std::string& l : h5::attr_strings(f, "limits")) {
      const size_t at = l.find(" <= ");
      if (at != std::string::npos) j["limits"][l.substr(0, at)] = std::stod(l.substr(at + 4));
    }
}
// "  PSA edited by --set A, --set B\n" when the run applied --set edits; "  limits: latency <= 2.5"
// when the space has limits.
std::string sets_line(const ojson& j) {
  std::string out = j.contains("psa_sets") ? "  PSA edited by " + sets_text(j["psa_sets"].get<std::vector<std::string>>()) + "\n" : "";
  if (j.contains("limits")) {
    out += "  limits: ";
    for (const auto& [name, v] : j["limits"].items())
      if (const auto o = psa::objective_named(name)) out += (out.back() == ' ' ? "" : ", ") + psa::limit_text(*o, v.get<double>());
    out += "\n";
  }
  return out;
}
std::string version_text(const ojson& j) {
  std::string s = "cosmic " + j.value("tool_version", std::string("?"));
  if (j.contains("model_revision")) s += " (model revision " + std::to_string(j["model_revision"].get<int64_t>()) + ")";
  return s;
}

ojson sweep_summary(hid_t f, size_t top_n) {
  ojson j;
  const bool merged = h5::attr_string(f, "shard") == "merged";
  j["kind"] = merged ? "merged sweep" : "sweep";
  for (const char* s : {"space_name", "psa_file", "tool_version", "backend", "device", "shard", "space_size",
                        "range_begin", "range_end", "next_index", "keep"})
    if (h5::has_attr(f, s)) j[s] = h5::attr_string(f, s);
  j["seed"] = h5::attr_uint(f, "seed");
  provenance_json(f, j);
  j["complete"] = h5::attr_int(f, "complete") != 0;
  j["swept"] = h5::attr_uint(f, "swept_count");
  j["evaluated"] = h5::attr_uint(f, "evaluated_count");
  j["feasible"] = h5::attr_uint(f, "feasible_count");
  j["wall_time_s"] = h5::attr_double(f, "wall_time_s");
  j["configs_per_s"] = h5::attr_double(f, "configs_per_s");
  if (h5::has_attr(f, "all_rows")) j["all_rows"] = h5::attr_int(f, "all_rows");  // --keep all
  if (h5::has_attr(f, "folded_genes")) j["folded_genes"] = h5::attr_strings(f, "folded_genes");
  if (h5::has_attr(f, "fold_copies")) j["fold_copies"] = h5::attr_uint(f, "fold_copies");
  if (merged && h5::has_attr(f, "merged_from")) j["merged_from"] = h5::attr_strings(f, "merged_from");
  if (merged && h5::has_attr(f, "merge_lacks")) j["merge_lacks"] = h5::attr_strings(f, "merge_lacks");
  {
    h5::Handle r = h5::group(f, "reasons", false);
    const auto names = h5::read_strings(r.id(), "name");
    const auto counts = h5::read_column<uint64_t>(r.id(), "count");
    j["reasons"] = ojson::object();
    for (size_t i = 0; i < names.size() && i < counts.size(); ++i)
      if (counts[i]) j["reasons"][names[i]] = counts[i];
  }
  const std::vector<std::string> objectives = h5::attr_strings(f, "objectives");
  j["objectives"] = objectives;
  const GeneLabels genes(f);
  j["top_k"] = h5::attr_int(f, "top_k");
  h5::Handle top = h5::group(f, "top", false);
  for (const auto& o : objectives) {
    h5::Handle t = h5::group(top.id(), o, false);
    j["top"][o] = sweep_points(t.id(), top_n, objectives, genes);
  }
  if (h5::exists(f, "pareto")) {
    h5::Handle p = h5::group(f, "pareto", false);
    j["pareto_points"] = h5::column_size(p.id(), "index");
    j["pareto_truncated"] = h5::has_attr(p.id(), "truncated") && h5::attr_int(p.id(), "truncated") != 0;
    j["pareto"] = sweep_points(p.id(), top_n, objectives, genes);
  }
  return j;
}

ojson search_summary(hid_t f, size_t top_n) {
  ojson j;
  j["kind"] = "search";
  for (const char* s : {"space_name", "psa_file", "tool_version", "backend", "device", "agent", "params", "params_effective",
                        "keep", "stopped"})
    if (h5::has_attr(f, s)) j[s] = h5::attr_string(f, s);
  for (const char* u : {"seed", "population", "budget"}) j[u] = h5::attr_uint(f, u);
  provenance_json(f, j);
  j["complete"] = h5::attr_int(f, "complete") != 0;
  if (h5::has_attr(f, "evaluated_rows")) j["evaluated_rows"] = h5::attr_uint(f, "evaluated_rows");
  // The counts and times are written when the run stops; a file killed with SIGKILL lacks them
  // (or holds those of an earlier session): they are taken from /generations, which is written
  // with every batch.
  uint64_t gens = 0, evaluated = 0, infeasible = 0;
  double wall_s = 0, best_so_far = std::numeric_limits<double>::infinity();
  if (h5::exists(f, "generations")) {
    h5::Handle g = h5::group(f, "generations", false);
    const auto evals = h5::read_column<uint64_t>(g.id(), "evaluations");
    const auto inf = h5::read_column<uint64_t>(g.id(), "infeasible");
    const auto wall = h5::read_column<double>(g.id(), "wall_s");
    const auto best = h5::read_column<double>(g.id(), "best_objective");
    gens = std::min({evals.size(), inf.size(), wall.size(), best.size()});
    if (gens > 0) evaluated = evals[gens - 1], wall_s = wall[gens - 1], best_so_far = best[gens - 1];
    for (size_t k = 0; k < gens; ++k) infeasible += inf[k];
  }
  // Stopped cleanly: `stopped` written, and no generation after the wall time it recorded (a
  // session resumed and then killed leaves the previous session's `stopped` and /best).
  const bool clean = h5::has_attr(f, "stopped") && h5::has_attr(f, "wall_time_s") &&
                     (gens == 0 || wall_s <= h5::attr_double(f, "wall_time_s"));
  j["killed"] = !clean;
  if (!clean) j.erase("stopped");
  j["best_objective_so_far"] = best_so_far;  // /generations' best-so-far (inf: nothing feasible)
  j["generations"] = gens;
  j["evaluated"] = evaluated;
  j["feasible"] = evaluated - infeasible;
  // A run that stopped cleanly recorded its whole time (start-up and writing the end included);
  // a killed one has the loop's time at its last generation.
  j["wall_time_s"] = clean ? h5::attr_double(f, "wall_time_s") : wall_s;
  j["configs_per_s"] = clean ? h5::attr_double(f, "configs_per_s") : wall_s > 0 ? double(evaluated) / wall_s : 0.0;
  // Where the wall time went, over all sessions (disjoint stretches: the evaluator's batches,
  // the agent's ask and tell, the loop waiting for the writer), as the run recorded it at its end.
  for (const char* t : {"eval_s", "agent_s", "write_s"})
    if (clean && h5::has_attr(f, t)) j[t] = h5::attr_double(f, t);
  const std::vector<std::string> objectives = h5::attr_strings(f, "objectives");
  j["objectives"] = objectives;
  j["best"] = nullptr;  // /best is written when a run stops: a killed session's is missing or stale
  if (clean && h5::exists(f, "best")) {
    h5::Handle b = h5::group(f, "best", false);
    ojson p;
    p["feasible"] = h5::attr_int(b.id(), "feasible") != 0;
    p["found_at_evaluation"] = h5::attr_uint(b.id(), "found_at_evaluation");
    if (h5::has_attr(b.id(), "space_index")) p["index"] = h5::attr_string(b.id(), "space_index");  // for --config
    for (const auto& o : objectives) p["objectives"][o] = h5::attr_double(b.id(), o);
    for (const char* m : kPopMetricNames)
      if (h5::has_attr(b.id(), m)) p[m] = h5::attr_double(b.id(), m);  // older files lack first_token_s
    p["violation"] = h5::attr_double(b.id(), "violation");
    if (h5::has_attr(b.id(), "reason")) {
      const int64_t code = h5::attr_int(b.id(), "reason");
      p["reason"] = names::reason_code_name(code);
    }
    const auto gene = h5::read_strings(b.id(), "gene"), value = h5::read_strings(b.id(), "value");
    for (size_t g = 0; g < gene.size() && g < value.size(); ++g) p["genes"][gene[g]] = value[g];
    j["best"] = p;
  }
  if (h5::exists(f, "pareto")) {
    h5::Handle p = h5::group(f, "pareto", false);
    // Stored in the order found: listed here by the objectives, as a sweep's front is.
    const auto evaluation = h5::read_column<uint64_t>(p.id(), "evaluation");
    std::vector<std::vector<double>> value;
    for (const auto& o : objectives) value.push_back(h5::read_column<double>(p.id(), o));
    std::vector<size_t> order(evaluation.size());
    for (size_t r = 0; r < order.size(); ++r) order[r] = r;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      for (const auto& v : value)
        if (v[a] != v[b]) return v[a] < v[b];
      return evaluation[a] < evaluation[b];
    });
    j["pareto_points"] = order.size();
    j["pareto"] = ojson::array();
    for (size_t r = 0; r < std::min(top_n, order.size()); ++r) {
      ojson q;
      q["row"] = order[r];  // of /pareto
      q["found_at_evaluation"] = evaluation[order[r]] + 1;  // 1-based, as /best's
      for (size_t o = 0; o < objectives.size(); ++o) q["objectives"][objectives[o]] = value[o][order[r]];
      j["pareto"].push_back(q);
    }
    if (h5::exists(f, "genes")) {  // the value labels (files before 2026-12-02 have none)
      const GeneLabels genes(f);
      for (size_t g = 0; g < genes.names.size(); ++g) {
        const auto v = h5::read_column<int16_t>(p.id(), genes.names[g]);
        for (auto& q : j["pareto"]) {
          const size_t row = q["row"].get<size_t>();
          q["genes"][genes.names[g]] = genes.of(g, row < v.size() ? v[row] : -1);
        }
      }
    }
  }
  return j;
}

// An objective's value with its unit (docs/psa.md, "objectives"): seconds, seconds per token, GiB,
// millions of dollars; the study's runtime x bandwidth and runtime x cost as they are.
std::string objective_text(const std::string& objective, double v) {
  if (objective == "latency" || objective == "first_token" || objective == "per_output_token") return fmt_g(v) + " s";
  if (objective == "throughput") return fmt_g(v) + " s/token";
  if (objective == "memory") return fmt_g(v / 1073741824.0) + " GiB";
  if (objective == "cost" || objective == "cluster_cost") return "$" + fmt_g(v / 1e6) + "M";
  if (objective == "npus") return fmt_g(v) + " NPUs";
  if (objective == "npu_s_per_token") return fmt_g(v) + " NPU-s/token";
  if (objective == "energy_per_token") return fmt_g(v) + " J/token";
  if (objective == "usd_per_token") return "$" + fmt_g(v * 1e6) + " per million tokens";
  return fmt_g(v);
}

// "183.682 (time 459.2 s, memory 18.9 GiB, network $8.78M)"
std::string point_line(const ojson& p, const std::string& objective) {
  const double first = p.value("first_token_s", 0.0);  // generate, serve and prefill
  const double per_token = p.value("per_output_token_s", 0.0);  // generate and serve (add_derived)
  const ojson& usd = p["network_cost_usd"];  // NaN (or null) where a Switch has no price
  return objective_text(objective, p["objectives"][objective].get<double>()) + " (time " + fmt_g(p["time_s"].get<double>(), 4) +
         (first > 0 ? " s, first token " + fmt_g(first, 4) : std::string()) +
         (per_token > 0 ? " s, per output token " + fmt_g(per_token, 4) : std::string()) +
         " s, memory " + fmt_g(p["memory_bytes"].get<double>() / 1073741824.0, 3) + " GiB, network " +
         (usd.is_number() && !std::isnan(usd.get<double>()) ? "$" + human(usd.get<double>()) : "unpriced") + ")";
}

// A line saying that a run is writing the file (summary_json's "running"), where one is: its
// counts are those of its last write, and --resume would be refused. True when it said so.
bool says_running(std::ostream& os, const ojson& j) {
  if (!j.value("running", false)) return false;
  os << "  a cosmic run is writing it: these are its counts as of its last write\n";
  return true;
}

void print_genes(std::ostream& os, const ojson& p) {
  for (const auto& [gene, value] : p["genes"].items()) os << "    " << gene << " = " << value.get<std::string>() << "\n";
  if (p.contains("derived"))
    for (const auto& [name, value] : p["derived"].items())
      os << "    workload." << name << " = " << value << " (derived)\n";
}

// "workload.cp = 4, workload.dp = 256": the genes where p differs from `best`.
std::string differences(const ojson& p, const ojson& best) {
  std::string s;
  for (const auto& [gene, value] : p["genes"].items())
    if (!best["genes"].contains(gene) || best["genes"][gene] != value)
      s += (s.empty() ? "" : ", ") + gene + " = " + value.get<std::string>();
  if (p.contains("derived") && best.contains("derived"))
    for (const auto& [name, value] : p["derived"].items())
      if (best["derived"][name] != value)
        s += std::string(s.empty() ? "" : ", ") + "workload." + name + " = " + value.dump() + " (derived)";
  return s.empty() ? "the same values" : s;
}

std::string count(uint64_t n) { return psa::with_commas(std::to_string(n)); }
std::string points(uint64_t n) { return count(n) + (n == 1 ? " point" : " points"); }

// "  /all: 1,234 rows", the group's committed rows (the counter `attr`), when the file has them.
// After a kill the columns can be longer, and the rows past the counter are not committed.
void committed_rows_line(std::ostream& os, const ojson& j, const char* group, const char* attr) {
  if (!j.contains(attr)) return;
  os << "  " << group << ": " << count(j[attr].get<uint64_t>()) << " rows"
     << (j["complete"].get<bool>() ? "" : std::string(" written (read the first ") + attr + " rows of each column)") << "\n";
}

// The first points of the Pareto front (by the first objective): the objective values, and what
// `detail` says of each (of the first, shown in full where the genes are known: `found`).
template <class Detail>
void print_front(std::ostream& os, const ojson& j, Detail detail, const std::string& found = "") {
  if (!j.contains("pareto")) return;
  os << "Pareto front: " << points(j["pareto_points"].get<uint64_t>())
     << (j.value("pareto_truncated", false) ? " (cut at the file's limit)" : "");
  if (j["pareto"].empty()) {
    os << "\n";
    return;
  }
  os << (j["pareto"].size() < j["pareto_points"].get<size_t>() ? ", the first " + std::to_string(j["pareto"].size()) : "")
     << " by " << j["objectives"][0].get<std::string>() << ":\n";
  for (size_t r = 0; r < j["pareto"].size(); ++r) {
    const ojson& p = j["pareto"][r];
    std::string values;
    for (const auto& [o, v] : p["objectives"].items()) values += (values.empty() ? "" : ", ") + o + " " + objective_text(o, v.template get<double>());
    if (r == 0 && p.contains("genes")) {  // the first point in full, the others by what differs from it
      os << "  1. " << values << found << "\n";
      print_genes(os, p);
    } else
      os << "  " << r + 1 << ". " << values << ": " << detail(p) << "\n";
  }
}

void print_sweep(std::ostream& os, const std::string& file, const ojson& j) {
  os << file << ": " << j["kind"].get<std::string>() << " of " << j.value("space_name", std::string("?")) << " ("
     << j.value("psa_file", std::string("?")) << ")\n" << sets_line(j);
  // Of this file's slice of the index range (a shard's; a merged file's is the whole space). The
  // swept count saturates at 2^64 - 1: an unmerged file's is next_index - range_begin exactly.
  const bool merged = j["kind"] == "merged sweep";
  u128 begin = 0, end = 0, next = 0;
  const bool range = psa::parse_u128(j.value("range_begin", std::string()), begin) &&
                     psa::parse_u128(j.value("range_end", std::string()), end) &&
                     psa::parse_u128(j.value("next_index", std::string()), next);
  const bool exact = range && !merged && next >= begin;
  const std::string swept = psa::with_commas(exact ? psa::to_string_u128(next - begin) : std::to_string(j["swept"].get<uint64_t>())) +
                            " of " +
                            psa::with_commas(range && !merged ? psa::to_string_u128(end - begin) : j.value("space_size", std::string("?")));
  const double wall = j["wall_time_s"].get<double>();
  const double rate = exact && wall > 0 ? double(next - begin) / wall : j["configs_per_s"].get<double>();
  os << "  " << (j["complete"].get<bool>() ? "complete" : "incomplete") << ": " << swept << " points swept";
  if (j.value("shard", std::string()) != "0/1" && j.value("shard", std::string()) != "merged")
    os << " (shard " << j["shard"].get<std::string>() << ")";
  os << " in " << fmt_g(wall, 3) << " s (" << human(rate)
     << " configs/s), " << j.value("backend", std::string("?")) << " (" << j.value("device", std::string("?"))
     << "), " << version_text(j) << "\n";
  if (!says_running(os, j) && !j["complete"].get<bool>())
    os << "  " << (j["kind"] == "sweep" ? "`cosmic sweep --resume -o FILE` continues it"
                   : j.contains("merge_lacks") ? "it lacks " + join(j["merge_lacks"].get<std::vector<std::string>>(), "; ") +
                                                   ": sweep or finish those, then merge every shard file again (a "
                                                   "merged file takes no more shards)"
                                               : "finish the shards it lacks, then merge every shard file again")
       << "\n";
  os << "  " << count(j["evaluated"].get<uint64_t>()) << " meet the constraints, " << count(j["feasible"].get<uint64_t>())
     << " feasible";
  std::string why;
  for (const auto& [name, n] : j["reasons"].items())
    if (name != "OK" && name != "CONSTRAINT") why += (why.empty() ? "" : ", ") + name + " " + count(n.get<uint64_t>());
  os << (why.empty() ? "" : "; not feasible: " + why) << "\n";
  if (j.contains("folded_genes"))
    os << "  each point stands for " << count(j.value("fold_copies", uint64_t(1))) << " points of the PSA's space: "
       << "no result depends on " << join(j["folded_genes"].get<std::vector<std::string>>()) << " (swept at the first value)\n";
  committed_rows_line(os, j, "/all", "all_rows");
  for (const auto& [objective, rows] : j["top"].items()) {
    if (rows.empty()) {
      const uint64_t over = j["reasons"].value("LIMIT_EXCEEDED", uint64_t(0));
      os << "no feasible point for " << objective
         << (over ? " (" + count(over) + " points the model can run are over the limits)" : "") << "\n";
      continue;
    }
    os << "best " << objective << ": " << point_line(rows[0], objective) << "\n";
    print_genes(os, rows[0]);
    if (rows.size() > 1) os << "  next " << rows.size() - 1 << " (what differs from the best):\n";
    for (size_t r = 1; r < rows.size(); ++r)
      os << "  " << r + 1 << ". " << point_line(rows[r], objective) << ": " << differences(rows[r], rows[0]) << "\n";
  }
  print_front(os, j, [&](const ojson& p) { return differences(p, j["pareto"][0]); });
}

// A search's front: each point's evaluation, after what differs from the first (files with labels).
std::string found_at(const ojson& p) { return "found at evaluation " + count(p["found_at_evaluation"].get<uint64_t>()); }
void print_search_front(std::ostream& os, const ojson& j) {
  const auto detail = [&j](const ojson& p) {
    return p.contains("genes") ? differences(p, j["pareto"][0]) + " (" + found_at(p) + ")" : found_at(p);
  };
  print_front(os, j, detail, j.contains("pareto") && !j["pareto"].empty() ? ": " + found_at(j["pareto"][0]) : "");
}

void print_search(std::ostream& os, const std::string& file, const ojson& j) {
  os << file << ": search of " << j.value("space_name", std::string("?")) << " (" << j.value("psa_file", std::string("?"))
     << ") by " << j.value("agent", std::string("?")) << ", seed " << j["seed"].get<uint64_t>() << "\n" << sets_line(j);
  const uint64_t gens = j["generations"].get<uint64_t>();
  os << "  " << (j["complete"].get<bool>() ? "complete" : "incomplete") << " (stopped: "
     << (j["killed"].get<bool>() ? "killed, or still running" : j.value("stopped", std::string("?")))
     << "): " << count(gens) << (gens == 1 ? " generation, " : " generations, ") << count(j["evaluated"].get<uint64_t>())
     << " of " << count(j["budget"].get<uint64_t>()) << " evaluations, " << count(j["feasible"].get<uint64_t>())
     << " feasible, in " << fmt_g(j["wall_time_s"].get<double>(), 3) << " s (" << human(j["configs_per_s"].get<double>())
     << " evaluations/s), " << j.value("backend", std::string("?")) << " (" << j.value("device", std::string("?"))
     << "), " << version_text(j) << "\n";
  if (!says_running(os, j) && !j["complete"].get<bool>()) os << "  `cosmic search --resume -o FILE` continues it\n";
  if (j.contains("eval_s") && j.contains("agent_s") && j.contains("write_s")) {
    const double e = j["eval_s"].get<double>(), a = j["agent_s"].get<double>(), w = j["write_s"].get<double>();
    const double rest = j["wall_time_s"].get<double>() - e - a - w;
    os << "  time: evaluation " << fmt_g(e, 3) << " s, agent " << fmt_g(a, 3) << " s, waiting for writes " << fmt_g(w, 3)
       << " s, the rest " << fmt_g(rest > 0 ? rest : 0.0, 3) << " s (start-up, bookkeeping, a resume's replay)\n";
  }
  committed_rows_line(os, j, "/evaluated", "evaluated_rows");
  const auto lines = [&](const char* key) {  // "a=1\nb=2\n" -> "a=1, b=2"
    std::string t = j.value(key, std::string());
    while (!t.empty() && t.back() == '\n') t.pop_back();
    for (size_t at; (at = t.find('\n')) != std::string::npos;) t.replace(at, 1, ", ");
    return t;
  };
  const std::string set = lines("params"), effective = lines("params_effective");
  os << "  population " << count(j["population"].get<uint64_t>()) << "; hyperparameters: "
     << (effective.empty() ? (set.empty() ? "the defaults" : set)
                           : effective + (set.empty() ? " (the defaults)" : " (set: " + set + ")"))
     << "\n";
  const ojson& b = j["best"];
  const std::string objective = j["objectives"].at(0).get<std::string>();
  if (b.is_null()) {  // killed (or running): /best is not written yet, or is an earlier session's
    const double so_far = j["best_objective_so_far"].is_number() ? j["best_objective_so_far"].get<double>() : INFINITY;
    os << (std::isfinite(so_far) ? "best " + objective + " so far " + objective_text(objective, so_far) + " (from /generations; "
                                 : "no feasible point so far (")
       << "the best point is written when the run stops: --resume finishes it)\n";
    print_search_front(os, j);
    return;
  }
  if (!b["feasible"].get<bool>()) {
    os << "no feasible point found (least violation " << fmt_g(b["violation"].get<double>())
       << (b.contains("reason") ? ", " + b["reason"].get<std::string>() : "") << ")\n";
    return;
  }
  os << "best " << objective << ": " << point_line(b, objective) << ", found at evaluation "
     << count(b["found_at_evaluation"].get<uint64_t>()) << "\n";
  print_genes(os, b);
  print_search_front(os, j);
}

// A search's best genome (/best's value indices) into `genome`; false when /best is missing or
// not of `s`'s genes.
bool best_genome(hid_t f, const SpaceView& s, int32_t* genome) {
  if (!h5::exists(f, "best")) return false;
  h5::Handle b = h5::group(f, "best", false);
  const auto g = h5::read_column<int32_t>(b.id(), "index");
  if (g.size() != size_t(s.ngenes)) return false;
  std::copy(g.begin(), g.end(), genome);
  return true;
}

// A search killed before it wrote /best: its best point among the rows of /evaluated the file
// commits that belong to the generations /generations lists (the rows may run into the next
// one), as the search picks it (feasible; the least first objective, ties by the next
// objectives, then the earliest), so that it is the point of the best so far that show takes
// from /generations. False where /evaluated does not hold it (--keep none, or no feasible row).
bool best_evaluated(hid_t f, const psa::DesignSpace& ds, int32_t* genome) {
  if (!h5::exists(f, "evaluated") || !h5::has_attr(f, "evaluated_rows")) return false;
  h5::Handle e = h5::group(f, "evaluated", false);
  if (!h5::exists(e.id(), "reason")) return false;
  size_t n = std::min(size_t(h5::attr_uint(f, "evaluated_rows")), h5::column_size(e.id(), "reason"));
  if (h5::exists(e.id(), "generation")) {
    const size_t listed = listed_generations(f);
    const auto gen = h5::read_column<int64_t>(e.id(), "generation", 0, n);  // in order
    n = size_t(std::lower_bound(gen.begin(), gen.end(), int64_t(listed)) - gen.begin());
  }
  std::vector<std::vector<double>> value;
  for (Objective o : ds.objectives) {
    const std::string name = psa::objective_name(o);
    if (!h5::exists(e.id(), name)) return false;
    n = std::min(n, h5::column_size(e.id(), name));
    value.push_back(h5::read_column<double>(e.id(), name, 0, n));
  }
  const auto reason = h5::read_column<int32_t>(e.id(), "reason", 0, n);
  const auto before = [&](size_t a, size_t b) {
    for (const auto& v : value)
      if (v[a] != v[b]) return v[a] < v[b];
    return false;
  };
  size_t best = n;
  for (size_t r = 0; r < n; ++r)
    if (reason[r] == 0 && (best == n || before(r, best))) best = r;
  if (best == n) return false;
  const auto names = h5::attr_strings(h5::group(f, "genes", false).id(), "gene_names");
  for (size_t g = 0; g < names.size(); ++g) genome[g] = h5::read_column<int32_t>(e.id(), names[g], best, 1)[0];
  std::cerr << "cosmic show: note: the search stopped before writing /best; its best point is row " << best
            << " of /evaluated\n";
  return true;
}

// The same, or null when it cannot be rebuilt (a file of an older cosmic, say).
std::unique_ptr<psa::DesignSpace> space_of(hid_t f) {
  try {
    return std::make_unique<psa::DesignSpace>(file_space(f, ""));
  } catch (const std::exception&) {
    return nullptr;
  }
}

// A derived degree is no gene, so the file's tables do not hold it: each shown point gets
// "derived": {"tp": N} (or dp, pp, cp) from its decoding (sweep rows by their index, a search's best by /best,
// its front's points by their /pareto row, which also gives them their index for --config).
void add_derived(hid_t f, ojson& j) {
  const auto ds = space_of(f);
  if (!ds) return;
  const SpaceView& s = *ds->view;
  std::vector<int32_t> genome(size_t(kMaxGenes), 0);
  const auto derive = [&](ojson& p) {
    const Config c = decode(s, genome.data());
    if (s.derived_degree >= 0) p["derived"][psa::degree_name(Param(s.derived_degree))] = degree_of(c.work, s.derived_degree);
    // generate and serve: the time per output token after the first (the per_output_token
    // objective), which the tables hold only where it is an objective.
    const double first = p.value("first_token_s", 0.0);
    if ((c.work.mode == Mode::Generate || c.work.mode == Mode::Serve) && first > 0 && p.contains("time_s"))
      p["per_output_token_s"] = (p["time_s"].get<double>() - first) / c.work.output_tokens;
  };
  const auto by_index = [&](ojson& p) {
    u128 index = 0;
    if (!p.contains("index") || !psa::parse_u128(p["index"].get<std::string>(), index) || index >= space_size(s)) return;
    unrank(s, index, genome.data());
    derive(p);
  };
  if (j.contains("top"))
    for (auto& [objective, rows] : j["top"].items())
      for (auto& p : rows) by_index(p);
  if (j.contains("pareto") && j["kind"] != "search")
    for (auto& p : j["pareto"]) by_index(p);
  if (j.contains("pareto") && j["kind"] == "search" && h5::exists(f, "pareto")) {
    h5::Handle t = h5::group(f, "pareto", false);
    std::vector<std::vector<int16_t>> cols;
    for (const auto& g : ds->genes) cols.push_back(h5::read_column<int16_t>(t.id(), g.name));
    for (auto& p : j["pareto"]) {
      const size_t row = p["row"].get<size_t>();
      for (size_t g = 0; g < cols.size(); ++g) genome[g] = row < cols[g].size() ? cols[g][row] : 0;
      p["index"] = psa::to_string_u128(rank(s, genome.data()));
      derive(p);
    }
  }
  if (j.contains("best") && j["best"].is_object() && best_genome(f, s, genome.data())) derive(j["best"]);
}

ojson summary_json(const std::string& file, size_t top_n) {
  h5::Handle f = h5::open_file(file, false);  // its errors say why not (a writer's lock, a damaged file)
  ojson j;
  if (h5::result_kind(f.id()) == "search") {
    j = search_summary(f.id(), top_n);
  } else {
    const std::string not_result = file + ": not a result file of cosmic sweep, merge or search";
    if (!h5::exists(f.id(), "genes") || !h5::exists(f.id(), "top")) throw std::runtime_error(not_result);
    try {
      j = sweep_summary(f.id(), top_n);
    } catch (const h5::Error& e) {  // a file with some of a sweep file's groups, not all
      throw std::runtime_error(not_result + " (" + e.what() + ")");
    }
  }
  add_derived(f.id(), j);
  j["running"] = h5::is_being_written(file);  // read with HDF5_USE_FILE_LOCKING=FALSE while a run writes it
  return j;
}

void print_summary(std::ostream& os, const std::string& file, const ojson& j) {
  if (j["kind"] == "search") print_search(os, file, j);
  else print_sweep(os, file, j);
}

// `--config POINT`: the configuration file of one point of the run's space, POINT an index of
// the space (the `index` column of /top, /pareto and /all; of the swept, folded, space for a
// sweep) or `best`: the first of the first objective's top list (a sweep) or /best (a search).
std::string point_config_text(const std::string& file, const std::string& point) {
  h5::Handle f = h5::open_file(file, false);
  const bool search = h5::result_kind(f.id()) == "search";
  const psa::DesignSpace ds = file_space(f.id(), file);
  const SpaceView& s = *ds.view;
  std::vector<int32_t> genome(size_t(kMaxGenes), 0);
  u128 index = 0;
  if (point == "best" && search) {
    if (!best_genome(f.id(), s, genome.data()) && !best_evaluated(f.id(), ds, genome.data()))
      throw std::runtime_error(file + ": no /best (the search " +
                               (h5::exists(f.id(), "best") || !h5::exists(f.id(), "generations")
                                    ? std::string("found no feasible point yet)")
                                    : "stopped before writing it, and /evaluated does not hold its best point; cosmic search "
                                      "--resume -o " + file + " writes it)"));
    index = rank(s, genome.data());
  } else if (point == "best") {
    const std::string top = std::string("top/") + psa::objective_name(ds.objectives[0]);
    if (!h5::exists(f.id(), top) || h5::column_size(h5::group(f.id(), top, false).id(), "index") == 0)
      throw std::runtime_error(file + ": no feasible point in /" + top);
    h5::Handle t = h5::group(f.id(), top, false);
    index = (u128(h5::read_column<uint64_t>(t.id(), "index_hi", 0, 1)[0]) << 64) | h5::read_column<uint64_t>(t.id(), "index", 0, 1)[0];
  } else if (!psa::parse_u128(point, index) || index >= space_size(s)) {
    throw std::runtime_error("--config expects best or an index of the space below " + psa::to_string_u128(space_size(s)) +
                             ", got '" + point + "'");
  }
  unrank(s, index, genome.data());
  const std::string name = "point " + psa::to_string_u128(index);
  const Config c = decode(s, genome.data());
  if (s.derived_degree >= 0 && degree_of(c.work, s.derived_degree) == 0) {
    const std::string rule = psa::derived_rule(Param(s.derived_degree));  // "tp = NPUs / (dp x cp x pp)"
    std::string degree = psa::degree_name(Param(s.derived_degree));
    for (char& ch : degree) ch = char(std::toupper(ch));
    throw std::runtime_error(name + " has no configuration: its derived " + degree + ", " + rule.substr(rule.find("= ") + 2) +
                             ", is not a whole number");
  }
  // A point outside the constraints or one the model rejects is written, with what is wrong with it.
  double violation = 0;
  std::string caveat;
  if (!check_constraints(s, c, violation)) caveat = "; it violates the PSA's constraints";
  double values[kNumObjectives];
  if (const Reason r = score_config(s, c, nullptr, 0, values).reason; r == Reason::LimitExceeded)
    caveat += "; it is over the PSA's limits (LIMIT_EXCEEDED)";
  else if (r != Reason::Ok)
    caveat += std::string("; the model finds it infeasible: ") + names::name(names::kReason, r);
  if (!caveat.empty()) std::cerr << "cosmic show: note: " << name << ":" << caveat.substr(1) << "\n";
  return psa::point_config(ds, genome.data(),
                           name + " of " + ds.name + (search ? " (searched" : " (swept") + " in " + file +
                               "); cosmic eval reads this file" + caveat);
}

// A CSV field (RFC 4180): quoted, with its quotes doubled, where it holds a comma, quote or line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A table of a result file (a sweep's top/OBJECTIVE, pareto or all; a search's evaluated,
// pareto or generations) as CSV on `os`: the genes' values by their labels, in genome order,
// the derived parallel degree where the space derives one (workload.tp, ...: decoded per row),
// then the index in the space (a decimal, from its two 64-bit halves), then the other columns
// in name order, `reason` by its name; numbers written to round-trip (%.17g). Read 65,536 rows
// at a time, so /all of any length streams. /all and /evaluated stop at the rows the file
// commits (all_rows, evaluated_rows: a killed run may hold a batch past them); /generations
// (the search's curve, no genes) at its shortest column.
void write_csv(std::ostream& os, const std::string& file, const std::string& table) {
  h5::Handle f = h5::open_file(file, false);
  std::vector<std::string> tables;  // the tables this file has
  if (h5::exists(f.id(), "top"))
    for (const std::string& o : h5::member_names(h5::group(f.id(), "top", false).id())) tables.push_back("top/" + o);
  for (const char* t : {"pareto", "all", "evaluated", "generations"})
    if (h5::exists(f.id(), t)) tables.push_back(t);
  if (std::find(tables.begin(), tables.end(), table) == tables.end()) {
    // The tables a run keeps depend on its --keep: say which keeps the one asked for.
    const bool search = h5::exists(f.id(), "generations");
    const bool points = table == "all" || table == "evaluated";
    const std::string hint = points && search    ? "; a search keeps its points in /evaluated unless --keep none"
                             : points            ? "; a sweep keeps its points in /all with --keep all"
                             : table != "pareto" || search ? ""
                             : h5::has_attr(f.id(), "objectives") && h5::attr_strings(f.id(), "objectives").size() < 2
                                 ? "; a sweep of one objective has no Pareto front"
                                 : "; a sweep keeps /pareto with --keep pareto or all";
    throw std::runtime_error(file + ": no table /" + table + " (this file's tables: " +
                             (tables.empty() ? std::string("none") : join(tables, ", ")) + hint + ")");
  }
  h5::Handle t = h5::group(f.id(), table, false);
  const GeneLabels genes = table == "generations" ? GeneLabels{} : GeneLabels(f.id());  // the curve has no genes
  std::vector<std::string> others;
  for (const auto& c : h5::member_names(t.id()))
    if (std::find(genes.names.begin(), genes.names.end(), c) == genes.names.end() && c != "index" && c != "index_hi")
      others.push_back(c);
  size_t n = SIZE_MAX;
  for (const auto& c : others) n = std::min(n, h5::column_size(t.id(), c));
  for (const auto& c : genes.names) n = std::min(n, h5::column_size(t.id(), c));
  if (n == SIZE_MAX) n = 0;
  const char* committed = table == "all" ? "all_rows" : table == "evaluated" ? "evaluated_rows" : nullptr;
  if (committed && h5::has_attr(f.id(), committed)) n = std::min(n, size_t(h5::attr_uint(f.id(), committed)));
  const bool indexed = h5::exists(t.id(), "index") && h5::exists(t.id(), "index_hi");
  const auto ds = space_of(f.id());  // null where the file's space does not read back
  const int derived = ds && !genes.names.empty() ? ds->view->derived_degree : -1;
  std::vector<std::string> header = genes.names;
  if (derived >= 0) header.push_back("workload." + psa::degree_name(Param(derived)));
  if (indexed) header.push_back("index");
  header.insert(header.end(), others.begin(), others.end());
  os << join(header, ",") << "\n";  // names of genes, metrics and objectives hold no comma or quote
  constexpr size_t kWindow = size_t(1) << 16;
  char buf[40];
  std::string line;
  std::vector<int32_t> genome(size_t(kMaxGenes), 0);
  for (size_t at = 0; at < n; at += kWindow) {
    const size_t m = std::min(kWindow, n - at);
    std::vector<std::vector<int32_t>> g(genes.names.size());
    for (size_t k = 0; k < g.size(); ++k) g[k] = h5::read_column<int32_t>(t.id(), genes.names[k], at, m);
    std::vector<uint64_t> lo, hi;
    if (indexed) lo = h5::read_column<uint64_t>(t.id(), "index", at, m), hi = h5::read_column<uint64_t>(t.id(), "index_hi", at, m);
    std::vector<std::vector<double>> v(others.size());
    for (size_t k = 0; k < v.size(); ++k) v[k] = h5::read_column<double>(t.id(), others[k], at, m);
    for (size_t r = 0; r < m; ++r) {
      line.clear();
      const auto add = [&](const std::string& field) { line += (line.empty() ? "" : ",") + field; };
      for (size_t k = 0; k < g.size(); ++k) add(csv_field(genes.of(k, g[k][r])));  // an NPU type's label is free text
      if (derived >= 0) {
        for (size_t k = 0; k < g.size(); ++k) genome[k] = g[k][r];
        add(std::to_string(degree_of(decode(*ds->view, genome.data()).work, derived)));
      }
      if (indexed) add(psa::to_string_u128((u128(hi[r]) << 64) | lo[r]));
      for (size_t k = 0; k < v.size(); ++k) {
        const double x = v[k][r];
        if (others[k] == "reason") add(names::reason_code_name(int32_t(x)));
        else std::snprintf(buf, sizeof buf, "%.17g", x), add(buf);
      }
      os << line << "\n";
    }
  }
}

// Runs `read` (which reads `file` and prints) in a child process and returns its exit status.
// HDF5 trusts the heap that a file's variable-length strings live in (its checks there are
// assertions, compiled out of release builds): a damaged heap crashed it inside memcpy. A
// child's crash is reported as a damaged file instead. (The attributes, where a damaged heap
// also made HDF5 allocate without end, are read first under limits: h5::check_readable.)
int in_child(const std::string& file, const std::function<int()>& read) {
  const int status = run_in_child(read);
  if (status >= 0) return status;
  const int sig = -status;
  if (sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE || sig == SIGILL) {
    std::cerr << "cosmic show: " << file << ": HDF5 crashed reading it (" << strsignal(sig) << "): the file is damaged\n";
    return 1;
  }
  // Stopped from outside (Ctrl-C, a closed pipe): end as the child did.
  signal(sig, SIG_DFL);
  raise(sig);
  return 128 + sig;
}

// What cmd_show prints of `file`, as its options ask.
int show_file(const cxxopts::ParseResult& args, const std::string& file, int top) {
  try {
    if (args.count("csv")) {
      write_csv(std::cout, file, args["csv"].as<std::string>());
      return 0;
    }
    if (args.count("config")) {
      std::cout << point_config_text(file, args["config"].as<std::string>());
      return 0;
    }
    if (args.count("base") || args.count("psa")) {  // the recorded inputs, to run again or compare
      const std::string attr = args.count("base") ? "base_config" : "psa";
      h5::Handle f = h5::open_file(file, false);
      if (!h5::has_attr(f.id(), attr))
        throw std::runtime_error(file + ": no " + attr + " attribute (not a cosmic result file, or written before it was recorded)");
      const std::string text = h5::attr_string(f.id(), attr);
      std::cout << text;
      if (args.count("psa") && h5::has_attr(f.id(), "psa_sets")) {  // the run edited that text
        if (!text.empty() && text.back() != '\n') std::cout << "\n";
        for (const auto& e : h5::attr_strings(f.id(), "psa_sets")) std::cout << "# edited by --set " << e << "\n";
      }
      return 0;
    }
    const ojson j = summary_json(file, size_t(top));
    if (args.count("json")) std::cout << json_text(j, 2) << "\n";
    else print_summary(std::cout, file, j);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "cosmic show: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int cmd_show(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic show",
                        "Summarise a result file of cosmic sweep, merge or search: how far the run got, its counts,\n"
                        "and its best points decoded (sweeps: the first N of each objective's top-K list, with what\n"
                        "differs from the best; searches: the best point found).");
  opts.positional_help("FILE.h5");
  opts.add_options()
      ("file", "result file (HDF5)", cxxopts::value<std::string>())
      ("top", "points shown per objective (sweeps) and of the Pareto front", cxxopts::value<int>()->default_value("5"))
      ("json", "print JSON instead of text")
      ("base", "print only the base configuration the run used (a configuration file cosmic eval reads; "
               "files written before 2026-12-01, which have no model_revision attribute, lack it)")
      ("psa", "print only the PSA text the run used (and, as comments, the --set edits it applied)")
      ("config", "print only the configuration of one point, a file cosmic eval reads: POINT is best or an index "
                 "of the space (a sweep's index columns of /top, /pareto, /all; --json's index of a point)",
       cxxopts::value<std::string>(), "POINT")
      ("csv", "print only one table as CSV, genes by their labels: TABLE is top/OBJECTIVE, pareto or all (sweeps), "
              "evaluated, pareto or generations (searches)", cxxopts::value<std::string>(), "TABLE")
      ("h,help", "show this help");
  opts.parse_positional({"file"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"file", "FILE.h5"}}, args, status)) return status;
  const int top = args["top"].as<int>();
  if (top < 1) return usage_error(opts, "--top expects a positive number of points");
  const std::string file = args["file"].as<std::string>();
  if (args.count("base") + args.count("psa") + args.count("json") + args.count("config") + args.count("csv") > 1)
    return usage_error(opts, "--json, --base, --psa, --config and --csv: one at a time");
  try {
    h5::check_readable(file);
  } catch (const std::exception& e) {
    std::cerr << "cosmic show: " << e.what() << "\n";
    return 1;
  }
  return in_child(file, [&] { return show_file(args, file, top); });
}

}  // namespace cosmic
