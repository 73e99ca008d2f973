#include "host/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "host/csv.hpp"
#include "host/report.hpp"
#include "host/text.hpp"
#include "kernels/astra.hpp"
#include "kernels/model.hpp"
#include "psa/config.hpp"
#include "psa/names.hpp"

namespace cosmic {

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = char(std::tolower((unsigned char)ch));
  return s;
}
bool contains(const std::string& hay, const char* needle) { return lower(hay).find(needle) != std::string::npos; }

bool number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && std::isfinite(out);
}

// The whole number just before an occurrence of `word` in `text` ("8 experts", "8-expert"; the
// first occurrence that has one), else -1.
long integer_before(const std::string& text, const char* word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    size_t end = at;
    while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '-')) --end;
    size_t begin = end;
    while (begin > 0 && std::isdigit((unsigned char)text[begin - 1])) --begin;
    if (begin < end && end - begin < 9) return std::stol(text.substr(begin, end - begin));
  }
  return -1;
}

// The whole number just after an occurrence of `word` in `text` ("top-2", "top 2", "top-k=2",
// "top_k: 2"), else -1.
long integer_after(const std::string& text, const char* word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t begin = text.find_first_not_of(" -_k=:", at + std::char_traits<char>::length(word));
    size_t end = begin;
    while (end < text.size() && std::isdigit((unsigned char)text[end])) ++end;
    if (begin != std::string::npos && begin < end && end - begin < 9) return std::stol(text.substr(begin, end - begin));
  }
  return -1;
}

// The words of `text`: runs of letters and digits, lower case.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : text + " ")
    if (std::isalnum((unsigned char)ch)) {
      w += char(std::tolower((unsigned char)ch));
    } else if (!w.empty()) {
      out.push_back(w);
      w.clear();
    }
  return out;
}

// Why a column that should hold a number does not: blank, or something else.
std::string not_a_number(const std::string& column, const std::string& text) {
  return text.empty() ? column + " is blank" : column + " '" + text + "' is not a finite number";
}

// An optional column of counts: blank (false), or a whole number in [1, hi] (true, in `out`);
// anything else sets `why` (the row is skipped rather than read with a default).
bool count_or_blank(const std::string& column, const std::string& text, double hi, double& out, std::string& why) {
  if (text.empty()) return false;
  if (!number(text, out) || out < 1 || out > hi || out != std::floor(out)) {
    why = column + " '" + text + "' is not a whole number from 1 to " + std::to_string((long long)hi);
    return false;
  }
  return true;
}

// "forward=7.7 ms; backward=11.9 ms; combined=19.6 ms" -> 0.0196
bool per_layer_combined_s(const std::string& text, double& out) {
  const auto at = text.find("combined=");
  if (at == std::string::npos) return false;
  out = std::strtod(text.c_str() + at + 9, nullptr) * 1e-3;
  return out > 0;
}

void summarise(ValidationReport& rep) {
  std::vector<double> errs;
  for (const auto& r : rep.rows) errs.push_back(std::fabs(r.error_pct));
  if (errs.empty()) return;
  double sum = 0;
  for (double e : errs) sum += e;
  rep.mean_abs_pct = sum / errs.size();
  std::sort(errs.begin(), errs.end());
  const size_t n = errs.size();
  rep.median_abs_pct = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
  rep.max_abs_pct = errs.back();
}

// ------------------------------------------------------------------ training runs
ValidationReport validate_training(const CsvTable& t) {
  ValidationReport rep;
  rep.kind = "training";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const std::string id = row.at("row_id");
    Config c;
    std::string why;
    if (!groundtruth_config(row, c, why)) {
      rep.skipped.push_back({id, why});
      continue;
    }
    ValidationRow v;
    v.row_id = id;
    char label[160];
    std::snprintf(label, sizeof label, "%s %s x%s tp%d pp%d dp%d cp%d", row.at("model_name").c_str(),
                  row.at("precision").c_str(), row.at("num_gpus").c_str(), c.work.tp, c.work.pp, c.work.dp, c.work.cp);
    v.label = label;
    const bool per_layer = contains(row.at("metric_scope"), "per transformer layer");
    const Result r = evaluate(c);
    constexpr double GiB = 1073741824.0;
    v.memory_GiB = r.memory_bytes / GiB;
    v.capacity_GiB = c.compute.mem_capacity_bytes / GiB;
    v.out_of_memory = r.reason == Reason::OutOfMemory;
    if (per_layer) {
      if (!per_layer_combined_s(row.at("measured_other"), v.measured_s)) {
        rep.skipped.push_back({id, "per-layer row without a 'combined=' time in measured_other"});
        continue;
      }
      const LayerPassTimes lt = training_layer_times(c);
      v.predicted_s = lt.forward_s + lt.backward_s;
      v.measured_from = "per-layer forward+backward (measured_other)";
    } else {
      // The measured time, else the derived one, else from a throughput per GPU (optional
      // columns): global_batch x seq tokens / (tokens/s per GPU x GPUs). A cell that holds
      // something else than a number is an error in the row, not a blank to fall back from.
      std::string unreadable;
      for (const char* col : {"measured_iteration_time_s", "derived_iteration_time_s", "measured_tokens_per_s_per_gpu",
                              "derived_tokens_per_s_per_gpu"}) {
        const auto cell = row.find(col);
        if (cell == row.end() || cell->second.empty()) continue;
        if (!number(cell->second, v.measured_s)) {
          unreadable = not_a_number(col, cell->second);
          break;
        }
        v.measured_from = col;
        if (contains(col, "tokens") && v.measured_s > 0) {
          v.measured_s = double(c.work.global_batch) * c.model.seq / (v.measured_s * double(total_npus(c.net)));
          v.measured_from += std::string(" (global_batch x seq / (tokens/s x GPUs))");
        }
        break;
      }
      if (!unreadable.empty() || v.measured_from.empty()) {
        rep.skipped.push_back({id, unreadable.empty() ? "no iteration time (measured_iteration_time_s, derived_iteration_time_s) "
                                                        "nor tokens/s per GPU (measured_ or derived_tokens_per_s_per_gpu)"
                                                      : unreadable});
        continue;
      }
      if (!(v.measured_s > 0 && v.measured_s <= 1e9)) {
        char s[32];
        std::snprintf(s, sizeof s, "%g", v.measured_s);
        rep.skipped.push_back({id, v.measured_from + " gives " + s + " s an iteration, not a time above 0 and at most 1e9 s"});
        continue;
      }
      if (r.reason != Reason::Ok && r.reason != Reason::OutOfMemory) {
        rep.skipped.push_back({id, std::string("model reports ") + names::name(names::kReason, r.reason) + ": " +
                                       names::reason_message(r.reason)});
        continue;
      }
      v.predicted_s = r.time_s;
    }
    v.error_pct = 100 * (v.predicted_s - v.measured_s) / v.measured_s;
    rep.out_of_memory += v.out_of_memory;
    rep.rows.push_back(v);
  }
  summarise(rep);
  return rep;
}

// ------------------------------------------------------------------ ASTRA-sim collectives
std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) out.push_back(x);
  return out;
}

ValidationReport validate_collectives(const CsvTable& t) {
  ValidationReport rep;
  rep.kind = "collectives";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const std::string id = std::to_string(t.line[i]);
    auto fail = [&](const std::string& why) { rep.skipped.push_back({id, why}); };
    const auto topo = split_list(row.at("topology")), npus = split_list(row.at("npus_per_dim")),
               bw = split_list(row.at("bandwidth_GBps_per_link")), lat = split_list(row.at("latency_ns"));
    if (topo.empty() || topo.size() > size_t(kMaxDims) || npus.size() != topo.size() || bw.size() != topo.size() ||
        lat.size() != topo.size()) {
      fail("per-dim lists (topology, npus_per_dim, bandwidth, latency) differ in length");
      continue;
    }
    const auto coll = names::parse(names::kColl, row.at("collective"));
    const auto md = names::parse(names::kMultiDim, row.at("multidim"));
    const auto algos = split_list(row.at("algorithm"));  // one for all dims, or one per dim
    if (!coll) {
      fail("unknown collective '" + row.at("collective") + "' (one of " + names::choices(names::kColl) + ")");
      continue;
    }
    if (!md) {
      fail("unknown multidim '" + row.at("multidim") + "' (one of " + names::choices(names::kMultiDim) + ")");
      continue;
    }
    if (algos.size() != 1 && algos.size() != topo.size()) {
      fail("algorithm '" + row.at("algorithm") + "': one for all dimensions or one per dimension (" +
           std::to_string(topo.size()) + ")");
      continue;
    }
    Network net;
    net.ndims = int32_t(topo.size());
    net.convention = Convention::AstraSim;
    net.multidim = *md;
    if (row.at("mode") != "aware" && row.at("mode") != "unaware") {
      fail("mode '" + row.at("mode") + "' not understood (expected aware or unaware)");
      continue;
    }
    net.congestion_aware = row.at("mode") == "aware";
    // Each number in the ranges configuration files accept (docs/config.md); a row outside them
    // is skipped with the column and value named.
    std::string why;
    const auto field = [&](const char* column, const std::string& text, double lo, double hi, double& out,
                           bool integer = false) {
      if (!why.empty()) return;
      const std::string named = std::string(column) + " '" + text + "'";
      if (!number(text, out)) why = named + " is not a number";
      else if (!(out >= lo && out <= hi)) why = named + " outside [" + fmt_g(lo) + ", " + fmt_g(hi) + "]";
      else if (integer && out != std::floor(out)) why = named + " is not an integer";
    };
    for (size_t d = 0; d < topo.size() && why.empty(); ++d) {
      const auto tp = names::parse(names::kTopology, topo[d]);
      const auto algo = names::parse(names::kAlgo, algos[algos.size() == 1 ? 0 : d]);
      if (!tp || !algo) {
        why = "topology '" + topo[d] + "' or algorithm '" + algos[algos.size() == 1 ? 0 : d] + "' not understood";
        break;
      }
      double n = 0;
      field("npus_per_dim", npus[d], 1, 1 << 24, n, true);
      field("bandwidth_GBps_per_link", bw[d], 1e-9, 1e12, net.dim[d].link_bw_GBps);
      field("latency_ns", lat[d], 0, 1e15, net.dim[d].latency_ns);
      net.dim[d].topology = *tp;
      net.dim[d].npus = int32_t(n);
      for (auto& a : net.dim[d].algo) a = *algo;
    }
    double splits = 0, active = 0, mem = 0, size = 0, measured = 0;
    field("splits", row.at("splits"), 1, 1 << 20, splits, true);
    field("active_chunks", row.at("active_chunks"), 1, 1 << 20, active, true);
    field("endpoint_delay_ns", row.at("endpoint_delay_ns"), 0, 1e12, net.endpoint_delay_ns);
    field("local_mem_bw_GBps", row.at("local_mem_bw_GBps"), 1e-9, 1e12, mem);
    field("size_bytes", row.at("size_bytes"), 1, 1e18, size, true);  // whole bytes
    field("time_ns", row.at("time_ns"), 1e-9, 1e18, measured);
    if (!why.empty()) {
      fail(why);
      continue;
    }
    net.chunks = int32_t(splits);
    net.active_chunks = int32_t(active);
    const Span span = [&] { Span s; for (int d = 0; d < net.ndims; ++d) s.k[d] = net.dim[d].npus; return s; }();
    const int64_t system = span_size(span, net.ndims);
    if (!astra::modelled(net, span, *coll)) {
      fail(row.at("algorithm") + " " + row.at("collective") +
           " is not modelled exactly in the astra-sim convention (docs/astrasim-mode.md)");
      continue;
    }
    ValidationRow v;
    v.row_id = id;
    v.label = row.at("collective") + " " + row.at("algorithm") + " " + row.at("topology") + " x" + row.at("npus_per_dim") +
              " " + row.at("mode");
    v.measured_from = "time_ns";
    v.measured_s = measured * 1e-9;
    v.predicted_s = astra::collective_ns(net, mem, span, *coll, size, system) * 1e-9;
    v.error_pct = 100 * (v.predicted_s - v.measured_s) / v.measured_s;
    rep.rows.push_back(v);
  }
  summarise(rep);
  return rep;
}

}  // namespace

// Mapping of a ground-truth row (docs/validation.md §Mapping):
// - model from its shape columns; SwiGLU when arch_family says so (3 matrices, untied, no
//   biases), else a 2-matrix GELU-style MLP (squared-ReLU Nemotron too, untied and without
//   biases as the Nemotron-4 report gives); vocabulary 51200 when blank;
// - system: the dgx-a100, dgx-h100, dgx-h200, dgx-h800 or dgx-b200 preset by gpu_type (memory
//   and calibration), with the row's peak for its precision, NVLink Switch dimension of gpus_per_node at
//   intra_node_bw_GBps_per_dir and an InfiniBand Switch dimension of num_gpus / gpus_per_node at
//   inter_node_bw_Gbps_per_gpu / 8;
// - workload from the parallelism columns; unstated settings take the recipe defaults:
//   sequence parallelism on when tp > 1 ("likely"), selective recompute when "not stated",
//   distributed optimizer (ZeRO-1) when the sharding column says distributed; fused (flash)
//   attention on H100 / H200 recipes, off on the 2021-2022 A100 Megatron runs; a blank dp or
//   global batch follows from the other columns;
// - mixture of experts: experts per layer and top-k from arch_family ("8 experts, top-2"), ep
//   from its column; a mixture-of-experts row without them is refused.
bool groundtruth_config(const std::map<std::string, std::string>& row, Config& out, std::string& why) {
  auto get = [&](const char* k) {
    auto it = row.find(k);
    return it == row.end() ? std::string() : it->second;
  };
  double v = 0;
  YAML::Node model;
  for (const char* k : {"num_layers", "hidden_size", "ffn_hidden_size", "num_heads", "seq_len"})
    if (!number(get(k), v)) {
      why = "model shape not given (" + not_a_number(k, get(k)) + ")";
      return false;
    }
  // Words the recipe columns may hold (the cell starts with one); anything else is refused
  // rather than read as a default.
  auto starts = [](const std::string& text, std::initializer_list<const char*> words) {
    for (const char* w : words)
      if (text.rfind(w, 0) == 0) return true;
    return false;
  };
  auto word = [&](const char* column, std::initializer_list<const char*> words, bool blank_ok, std::string& out) {
    out = lower(get(column));
    if ((blank_ok && out.empty()) || starts(out, words)) return true;
    std::string list;
    for (const char* w : words) list += std::string(list.empty() ? "" : ", ") + w;
    why = std::string(column) + " '" + get(column) + "' not understood (expected " + list + (blank_ok ? " or blank" : "") +
          " ...)";
    return false;
  };
  // Mixture of experts: arch_family gives the experts per layer and top-k ("MoE, 8 experts,
  // top-2"); a row that has ep > 1 or names experts without both is refused, not scored as dense.
  // Shared experts by their count ("64 routed experts, 2 shared experts, top-6").
  const std::string arch = lower(get("arch_family"));
  const long routed = integer_before(arch, "routed");
  const long experts = routed >= 0 ? routed : integer_before(arch, "expert"), top_k = integer_after(arch, "top");
  const long shared = integer_before(arch, "shared");
  if (contains(arch, "shared") && shared < 0) {
    why = "arch_family '" + get("arch_family") + "' names shared experts without their count (e.g. \"2 shared experts\")";
    return false;
  }
  bool moe = number(get("ep"), v) && v > 1;
  for (const char* column : {"arch_family", "model_name"})
    for (const std::string& w : words_of(get(column)))
      moe = moe || w == "moe" || w == "mixture" || w == "experts" || w == "mixtral";
  if (moe && (experts < 2 || top_k < 1)) {
    why = "a mixture-of-experts row (ep '" + get("ep") + "', arch_family '" + get("arch_family") +
          "') without the experts per layer and top-k in arch_family (e.g. \"8 experts, top-2\")";
    return false;
  }
  std::string rc;
  if (!word("activation_recompute", {"full", "selective", "none", "not stated"}, true, rc)) return false;
  // Sequence parallelism by the cell's first word: on, off, or not stated (blank, "likely",
  // "not stated": the recipes' default).
  const std::vector<std::string> sp_words = words_of(get("sequence_parallel"));
  const std::string sp = sp_words.empty() ? "" : sp_words[0];
  const bool sp_on = sp == "yes" || sp == "true" || sp == "on";
  const bool sp_default = sp.empty() || sp == "likely" || (sp == "not" && sp_words.size() > 1 && sp_words[1] == "stated");
  if (!sp_on && !sp_default && sp != "no" && sp != "false" && sp != "off") {
    why = "sequence_parallel '" + get("sequence_parallel") +
          "' not understood (expected yes, true, on, no, false, off, likely, not stated or blank ...)";
    return false;
  }
  // The precision the cell names first ("fp16 mixed", "mixed (BF16)", "BF16 (FP8 disabled)").
  const std::string cell = lower(get("precision"));
  std::string precision;
  size_t first = std::string::npos;
  for (const char* p : {"fp8", "bf16", "fp16"})
    if (cell.find(p) < first) {
      first = cell.find(p);
      precision = p;
    }
  if (precision.empty()) {
    why = "precision '" + get("precision") + "' not understood (expected a cell naming fp8, bf16 or fp16)";
    return false;
  }
  // ZeRO stages in any spelling ("ZeRO-3", "zero stage 2", "ZeRO1"); Megatron's distributed
  // optimizer shards the optimizer state as ZeRO-1 does; FSDP shards as ZeRO-3 does. Offloading
  // and hybrid (intra-node) sharding are not modelled.
  const std::string sharding = lower(get("optimizer_sharding"));
  Sharding zero = Sharding::None;
  if (contains(sharding, "offload") || contains(sharding, "hybrid")) {
    why = "optimizer_sharding '" + get("optimizer_sharding") + "': offloading and hybrid sharding are not modelled";
    return false;
  } else if (starts(sharding, {"distributed optim"})) {
    zero = Sharding::Zero1;
  } else if (starts(sharding, {"fsdp"})) {
    zero = Sharding::Zero3;
  } else if (!sharding.empty() && sharding != "no" &&
             !starts(sharding, {"none", "no sharding", "ddp", "distributed data parallel"})) {
    // "zero" ("DeepSpeed ZeRO-2" too), then separators or "stage", then the stage 1-3
    const size_t at = sharding.find("zero");
    const size_t digit = at == std::string::npos ? at : sharding.find_first_not_of("-_ (stage", at + 4);
    const char stage = digit < sharding.size() ? sharding[digit] : '?';
    if (stage < '1' || stage > '3' || (digit + 1 < sharding.size() && std::isdigit((unsigned char)sharding[digit + 1]))) {
      why = "optimizer_sharding '" + get("optimizer_sharding") +
            "' not understood (expected none, DDP, distributed optimizer, ZeRO-1, ZeRO-2, ZeRO-3, FSDP or blank ...)";
      return false;
    }
    zero = Sharding(stage - '0');
  }
  const bool swiglu = contains(get("arch_family"), "swiglu");
  model["name"] = get("model_name");
  model["layers"] = get("num_layers");
  model["hidden"] = get("hidden_size");
  model["ffn"] = get("ffn_hidden_size");
  model["heads"] = get("num_heads");
  // (counts as whole numbers: "8.0" is 8)
  if (count_or_blank("num_kv_heads", get("num_kv_heads"), 1e6, v, why)) model["kv_heads"] = (long long)v;
  else model["kv_heads"] = get("num_heads");
  model["seq"] = get("seq_len");
  if (count_or_blank("vocab_size", get("vocab_size"), 1e9, v, why)) model["vocab"] = (long long)v;
  else model["vocab"] = 51200;
  if (!why.empty()) return false;
  model["mlp"] = swiglu ? "swiglu" : "gelu";
  if (experts >= 2 && top_k >= 1) {
    model["experts"] = experts;
    model["top_k"] = top_k;
    if (shared > 0) model["shared_experts"] = shared;
  }
  if (contains(get("arch_family"), "nemotron")) {  // Nemotron-4 report: untied embeddings, no biases, no dropout
    model["tied_embeddings"] = false;
    model["biases"] = false;
    model["dropout"] = false;
  }

  const std::string gpu = get("gpu_type");
  // H200: the H100's chip with more and faster memory; H800: the H100's chip with less NVLink
  // bandwidth, which the row's column gives (GH200, a Grace-Hopper superchip with its own memory
  // system, has no preset). B200 on the DGX-B200 preset; GB200 rows are not mapped (how
  // many GPUs share an NVLink domain, 4 or 72, is not in the columns).
  const char* preset = contains(gpu, "a100")                              ? "dgx-a100"
                       : contains(gpu, "h100")                            ? "dgx-h100"
                       : contains(gpu, "h200") && !contains(gpu, "gh200") ? "dgx-h200"
                       : contains(gpu, "h800")                            ? "dgx-h800"
                       : contains(gpu, "b200") && !contains(gpu, "gb200") ? "dgx-b200"
                                                                          : nullptr;
  if (!preset) {
    why = "no system preset for gpu_type '" + gpu + "'";
    return false;
  }
  double gpus = 0, per_node = 0, peak = 0, intra = 0, inter = 0;
  for (auto [k, x] : {std::pair<const char*, double*>{"num_gpus", &gpus}, {"gpus_per_node", &per_node},
                      {"peak_tflops_per_gpu", &peak}, {"intra_node_bw_GBps_per_dir", &intra},
                      {"inter_node_bw_Gbps_per_gpu", &inter}})
    if (!number(get(k), *x)) {
      why = "hardware columns incomplete (" + not_a_number(k, get(k)) + ")";
      return false;
    } else if (!(*x > 0)) {
      why = std::string(k) + " '" + get(k) + "' is not above 0";
      return false;
    } else if (*x > 1e9) {  // (GPU counts then go into 32-bit fields)
      why = std::string(k) + " '" + get(k) + "' is above 1e9";
      return false;
    }
  if (gpus != std::floor(gpus) || per_node != std::floor(per_node) || (gpus > per_node && std::fmod(gpus, per_node) != 0)) {
    why = "num_gpus '" + get("num_gpus") + "' is not a whole number of nodes of gpus_per_node '" + get("gpus_per_node") + "'";
    return false;
  }
  const bool fp8 = precision == "fp8";
  YAML::Node system;
  system["preset"] = preset;
  system["compute"]["peak_tflops"][fp8 ? "fp8" : "bf16"] = peak;
  std::string gpu_joined;  // "A100 40 GB", "A100-SXM4-40GB" -> "a10040gb", "a100sxm440gb"
  for (const std::string& w : words_of(gpu)) gpu_joined += w;
  if (contains(gpu_joined, "a100") && contains(gpu_joined, "40gb")) {  // A100 40 GB datasheet: 1555 GB/s HBM2
    system["compute"]["memory_GiB"] = 40;
    system["compute"]["memory_bw_GBps"] = 1555;
  }
  YAML::Node dims(YAML::NodeType::Sequence);
  const double in_node = std::min(gpus, per_node);
  YAML::Node nv;
  nv["topology"] = "Switch";
  nv["npus"] = int(in_node);
  nv["bandwidth_GBps"] = intra;
  nv["latency_ns"] = 500;
  nv["algorithm"] = "ring";
  dims.push_back(nv);
  if (gpus > per_node) {
    YAML::Node ib;
    ib["topology"] = "Switch";
    ib["npus"] = int(std::llround(gpus / per_node));
    ib["bandwidth_GBps"] = inter / 8;
    ib["latency_ns"] = 2000;
    ib["algorithm"] = "ring";
    dims.push_back(ib);
  }
  system["network"]["dims"] = dims;

  YAML::Node work;
  double tp = 0, pp = 0, dp = 0, cp = 1;
  for (auto [k, x] : {std::pair<const char*, double*>{"tp", &tp}, {"pp", &pp}})
    if (!number(get(k), *x)) {
      why = "parallelism column " + not_a_number(k, get(k));
      return false;
    }
  if (!get("cp").empty() && !number(get("cp"), cp)) {
    why = "parallelism column " + not_a_number("cp", get("cp"));
    return false;
  }
  // A blank dp is what the GPUs leave: num_gpus / (tp pp cp).
  if (!number(get("dp"), dp)) {
    dp = gpus / (tp * pp * cp);
    if (!get("dp").empty() || !(dp >= 1) || dp != std::floor(dp)) {
      why = get("dp").empty() ? "dp is blank and num_gpus / (tp pp cp) is not a whole number"
                              : "parallelism column " + not_a_number("dp", get("dp"));
      return false;
    }
  }
  // Cells as written (the configuration reader refuses 8.5 ranks), derived values as integers.
  work["tp"] = get("tp");
  work["pp"] = get("pp");
  work["cp"] = get("cp").empty() ? "1" : get("cp");
  if (get("dp").empty()) work["dp"] = (long long)dp;
  else work["dp"] = get("dp");
  if (!get("ep").empty()) work["ep"] = get("ep");
  work["sequence_parallel"] = sp_on || (sp_default && tp > 1);
  double vpp = 1;
  const bool vpp_given = count_or_blank("vpp_chunks", get("vpp_chunks"), 65536, vpp, why);
  if (!why.empty()) return false;
  if (vpp_given && vpp > 1) {
    work["schedule"] = "interleaved";
    work["vpp"] = int(vpp);
  }
  double micro = 1, global = 0, tokens = 0, per_rank = 0;
  if (!get("micro_batch_size").empty()) work["micro_batch"] = get("micro_batch_size");
  number(get("micro_batch_size"), micro);
  // Sequences per step: global_batch_size, else global_batch_tokens / seq_len, else micro-batches
  // per DP rank x micro_batch_size x dp; a per-layer row without them times one micro-batch.
  if (get("global_batch_size").empty()) {
    auto whole = [](double x) { return x >= 1 && x == std::floor(x); };
    if (number(get("global_batch_tokens"), tokens) && number(get("seq_len"), v) && whole(tokens / v)) global = tokens / v;
    else if (number(get("num_microbatches_per_dp_rank"), per_rank) && whole(per_rank * micro * dp)) global = per_rank * micro * dp;
    else if (contains(get("metric_scope"), "per transformer layer")) global = micro;
    if (!whole(global)) {
      why = "global batch not given (global_batch_size, or a whole number from global_batch_tokens / seq_len or "
            "num_microbatches_per_dp_rank x micro_batch_size x dp)";
      return false;
    }
    work["global_batch"] = (long long)global;
  } else {
    work["global_batch"] = get("global_batch_size");
  }
  work["recompute"] = starts(rc, {"full"}) ? "full" : (starts(rc, {"none"}) ? "none" : "selective");
  work["sharding"] = names::name(names::kSharding, zero);
  work["flash_attention"] = preset != std::string("dgx-a100");
  work["precision"] = fp8 ? "fp8" : "bf16";
  // A measured run split its layers somehow: Megatron sets the first and last stages' counts.
  work["uneven_stages"] = true;

  YAML::Node root;
  root["model"] = model;
  root["system"] = system;
  root["workload"] = work;
  psa::Sources src;
  src.config_file = "row " + get("row_id");
  try {
    psa::resolve_presets(root, src);
    // `nodes` is not used: the dims above are explicit.
    out = psa::convert_config(root, src);
  } catch (const psa::ConfigError& e) {
    why = e.what();
    const std::string place = src.config_file + ": ";  // the row, which the skipped list names already
    if (why.rfind(place, 0) == 0) why.erase(0, place.size());
    return false;
  }
  // The row's own parameter count, where given, checks the model its columns make (the shipped
  // rows' agree within 3%): a Llama row whose arch_family does not say SwiGLU would otherwise be
  // timed as a GELU model with a third fewer MLP weights.
  const double built_B = model_params(out.model) / 1e9;
  if (number(get("params_billion"), v) && v > 0 && std::fabs(built_B / v - 1) > 0.1) {
    // The hint where it can explain the gap: a model short of its count, whose MLP nothing named.
    const bool named_mlp = swiglu || contains(arch, "gelu") || contains(arch, "relu");
    why = "its columns make a model of " + param_count(built_B * 1e9) + " parameters, more than 10% from params_billion '" +
          get("params_billion") + "'" +
          (named_mlp || built_B > v ? std::string()
                                    : " (arch_family '" + get("arch_family") +
                                          "' does not say SwiGLU, so its MLP was taken as GELU's two matrices: write "
                                          "SwiGLU there for a gated MLP)");
    return false;
  }
  return true;
}

// Columns each kind of CSV must have (the ones read by name; other columns may be blank).
const char* const kTrainingColumns[] = {
    "row_id", "model_name", "arch_family", "num_layers", "hidden_size", "ffn_hidden_size", "num_heads",
    "num_kv_heads", "seq_len", "vocab_size", "gpu_type", "num_gpus", "gpus_per_node", "peak_tflops_per_gpu",
    "precision", "intra_node_bw_GBps_per_dir", "inter_node_bw_Gbps_per_gpu", "tp", "pp", "dp", "cp",
    "sequence_parallel", "vpp_chunks", "micro_batch_size", "global_batch_size", "activation_recompute",
    "optimizer_sharding", "metric_scope", "measured_iteration_time_s", "measured_other", "derived_iteration_time_s"};
const char* const kCollectiveColumns[] = {
    "collective", "topology", "npus_per_dim", "bandwidth_GBps_per_link", "latency_ns", "algorithm", "multidim",
    "splits", "active_chunks", "endpoint_delay_ns", "local_mem_bw_GBps", "size_bytes", "mode", "time_ns"};

std::string csv_kind(const CsvTable& t, const std::string& path) {
  auto has = [&](const char* col) { return std::find(t.header.begin(), t.header.end(), col) != t.header.end(); };
  auto missing_of = [&](const auto& columns) {
    std::string missing;
    for (const char* col : columns)
      if (!has(col)) missing += std::string(missing.empty() ? "" : ", ") + col;
    return missing;
  };
  // The kind of which the file lacks the smaller share of columns; a column missing from it is an error.
  auto count = [](const std::string& list) { return list.empty() ? 0 : 1 + std::count(list.begin(), list.end(), ','); };
  const std::string no_coll = missing_of(kCollectiveColumns), no_train = missing_of(kTrainingColumns);
  const bool collectives = count(no_coll) * std::size(kTrainingColumns) < count(no_train) * std::size(kCollectiveColumns);
  const std::string& missing = collectives ? no_coll : no_train;
  if (!missing.empty())
    throw std::runtime_error(path + ": " + (collectives ? "collective-timing" : "ground-truth") +
                             " CSV without the column(s) " + missing +
                             " (the columns of data/validation/" +
                             (collectives ? "astrasim-collectives-dev.csv" : "groundtruth-dev.csv") + ")");
  return collectives ? "collectives" : "training";
}

ValidationReport validate_file(const std::string& path) {
  const CsvTable t = read_csv(path);
  if (csv_kind(t, path) == "collectives") return validate_collectives(t);
  // Runs are named by row_id (--row ID picks one): each must be given once.
  std::map<std::string, int> first_line;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    if (t.rows[i].at("row_id").empty())
      throw std::runtime_error(path + ":" + std::to_string(t.line[i]) + ": row_id is blank (each run needs a name, --row ID)");
    const auto [at, fresh] = first_line.emplace(t.rows[i].at("row_id"), t.line[i]);
    if (!fresh)
      throw std::runtime_error(path + ":" + std::to_string(t.line[i]) + ": row_id '" + at->first +
                               "' is given twice (first on line " + std::to_string(at->second) + ")");
  }
  return validate_training(t);
}

nlohmann::json to_json(const ValidationReport& r) {
  nlohmann::json j;
  j["kind"] = r.kind;
  j["rows"] = nlohmann::json::array();
  for (const auto& v : r.rows) {
    j["rows"].push_back({{"row_id", v.row_id}, {"label", v.label}, {"predicted_s", v.predicted_s},
                         {"measured_s", v.measured_s}, {"measured_from", v.measured_from}, {"error_pct", v.error_pct}});
    if (r.kind == "training")
      j["rows"].back().update(
          {{"memory_GiB", v.memory_GiB}, {"capacity_GiB", v.capacity_GiB}, {"out_of_memory", v.out_of_memory}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& [id, why] : r.skipped) skipped.push_back({{"row_id", id}, {"reason", why}});
  // With no row modelled there is no error to report: null, not a perfect 0.
  auto pct = [&](double v) { return r.rows.empty() ? nlohmann::json() : nlohmann::json(v); };
  j["summary"] = {{"n", r.rows.size()}, {"mean_abs_pct", pct(r.mean_abs_pct)}, {"median_abs_pct", pct(r.median_abs_pct)},
                  {"max_abs_pct", pct(r.max_abs_pct)}, {"skipped", skipped}};
  if (r.kind == "training") j["summary"]["out_of_memory"] = r.out_of_memory;
  return j;
}

namespace {
// A signed error in percent to two decimals, and past a million percent (a measured time near 0)
// in %g, so that the table keeps its shape.
std::string error_text(double pct, bool sign) {
  char b[32];
  const bool huge = !(std::fabs(pct) < 1e6);
  std::snprintf(b, sizeof b, huge ? (sign ? "%+.3g%%" : "%.3g%%") : (sign ? "%+.2f%%" : "%.2f%%"), pct);
  return b;
}
}  // namespace

std::string to_text(const ValidationReport& r) {
  std::ostringstream os;
  char buf[320];
  std::snprintf(buf, sizeof buf, "%-6s  %-48s %14s %14s %9s\n", "row", r.kind == "training" ? "configuration" : "collective",
                "predicted_s", "measured_s", "error");
  os << buf;
  for (const auto& v : r.rows) {
    std::snprintf(buf, sizeof buf, "%-6s  %-48.48s %14.6g %14.6g %9s%s\n", v.row_id.c_str(), v.label.c_str(),
                  v.predicted_s, v.measured_s, error_text(v.error_pct, true).c_str(), v.out_of_memory ? "  *" : "");
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "\nrows modelled: %zu, skipped: %zu\n", r.rows.size(), r.skipped.size());
  os << buf;
  if (r.rows.empty()) {
    os << "absolute error: none (no row modelled)\n";
  } else {
    std::snprintf(buf, sizeof buf, "absolute error: mean %s, median %s, max %s\n", error_text(r.mean_abs_pct, false).c_str(),
                  error_text(r.median_abs_pct, false).c_str(), error_text(r.max_abs_pct, false).c_str());
    os << buf;
  }
  if (r.out_of_memory > 0) {
    std::snprintf(buf, sizeof buf, "* out of memory in the model at the row's layout (%zu row%s; for a per-layer row, the "
                  "whole model at that layout): its time is compared all the same\n", r.out_of_memory,
                  r.out_of_memory > 1 ? "s" : "");
    os << buf;
    for (const auto& v : r.rows)
      if (v.out_of_memory) {
        std::snprintf(buf, sizeof buf, "  row %s: %.2f GiB of %.2f GiB\n", v.row_id.c_str(), v.memory_GiB, v.capacity_GiB);
        os << buf;
      }
  }
  for (const auto& [id, why] : r.skipped) os << "  skipped row " << id << ": " << why << "\n";
  return os.str();
}

}  // namespace cosmic
