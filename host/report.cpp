#include "host/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "kernels/model.hpp"
#include "kernels/space.hpp"
#include "host/text.hpp"
#include "psa/names.hpp"
#include "psa/space.hpp"

namespace cosmic {

namespace {

// The names of what selective recompute drops (empty unless it is selective).
std::vector<std::string> recompute_module_names(const Workload& w) {
  std::vector<std::string> out;
  for (const auto& e : names::kRecomputeModule)
    if (recomputed_modules(w) & e.value) out.push_back(e.name);
  return out;
}

struct Term {
  const char* name;
  double value;
};

// The time and memory breakdowns, in the order they are printed.
constexpr int kTimeTerms = 10;
void time_terms(const Result& r, Term out[kTimeTerms]) {
  const Term t[kTimeTerms] = {{"forward", r.forward_s},     {"backward", r.backward_s}, {"recompute", r.recompute_s},
                              {"optimizer", r.optimizer_s}, {"tp_comm", r.tp_comm_s},   {"cp_comm", r.cp_comm_s},
                              {"ep_comm", r.ep_comm_s},     {"dp_comm", r.dp_comm_s},   {"pp_comm", r.pp_comm_s},
                              {"bubble", r.bubble_s}};
  for (int i = 0; i < kTimeTerms; ++i) out[i] = t[i];
}
constexpr int kMemoryTerms = 5;  // (no more than kTimeTerms: comparison_text's buffers)
void memory_terms(const Result& r, Term out[kMemoryTerms]) {
  const Term t[kMemoryTerms] = {{"weights", r.weights_bytes},
                     {"gradients", r.grads_bytes},
                     {"optimizer", r.optimizer_bytes},
                     {"activations", r.activation_bytes},
                     {"kv_cache", r.kv_cache_bytes}};
  for (int i = 0; i < kMemoryTerms; ++i) out[i] = t[i];
}

// The precision a run computes in, by element size (fp16 and bf16 are timed alike).
const char* precision_name(int32_t dtype_bytes) { return dtype_bytes == 4 ? "fp32" : dtype_bytes == 1 ? "fp8" : "16-bit"; }

std::string dollars(double usd) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", usd);
  std::string digits = buf, out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n && n % 3 == 0 && *it != '-') out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++n;
  }
  return "$" + out;
}

// The calibration's fields by their configuration keys (system.calibration.*), in its order.
std::vector<std::pair<const char*, double>> calibration_fields(const Calibration& k) {
  return {{"gemm_eff_max", k.gemm_eff_max},
          {"gemm_half_flops", k.gemm_half_flops},
          {"attn_eff", k.attn_eff},
          {"fp8_eff", k.fp8_eff},
          {"mem_eff", k.mem_eff},
          {"net_eff", k.net_eff},
          {"layer_overhead_s", k.layer_overhead_s},
          {"tp_overlap", k.tp_overlap},
          {"cp_overlap", k.cp_overlap},
          {"ep_overlap", k.ep_overlap},
          {"dp_overlap", k.dp_overlap},
          {"grad_bytes", k.grad_bytes},
          {"master_bytes", k.master_bytes},
          {"optimizer_bytes_per_param", k.optimizer_bytes_per_param}};
}

}  // namespace

nlohmann::json to_json(const EvalReport& rep) {
  const Result& r = rep.result;
  const Workload& w = rep.config.work;
  nlohmann::json j;
  j["model"] = rep.model_name;
  j["params"] = model_params(rep.config.model);
  j["active_params"] = active_params(rep.config.model);  // a token's: all but the experts it skips
  j["system"] = rep.system_name;
  j["npus"] = total_npus(rep.config.net);
  j["mode"] = names::name(names::kMode, w.mode);
  j["workload"] = {{"dp", w.dp}, {"tp", w.tp}, {"pp", w.pp}, {"cp", w.cp}, {"cp_style", names::name(names::kCpStyle, w.cp_style)},
                   {"micro_batch", w.micro_batch}, {"global_batch", w.global_batch},
                   {"sequence_parallel", w.seq_parallel}, {"schedule", names::name(names::kSchedule, w.schedule)},
                   {"vpp", w.vpp}, {"uneven_stages", w.uneven_stages}, {"ep", w.ep}, {"etp", w.etp},
                   {"ep_dispatch", names::name(names::kEpDispatch, w.ep_dispatch)}, {"overlap_ep_comm", w.overlap_ep_comm},
                   {"ep_comm_sm_share", w.ep_comm_sm_share}, {"fp8_dispatch", w.fp8_dispatch},
                   {"sharding", names::name(names::kSharding, w.sharding)},
                   {"recompute", names::name(names::kRecompute, w.recompute)}, {"recompute_layers", w.recompute_layers},
                   {"recompute_modules", recompute_module_names(w)}, {"fp8_cache", w.fp8_cache},
                   {"flash_attention", w.flash_attention},
                   {"precision_bits", 8 * rep.config.model.dtype_bytes}};
  if (w.mode != Mode::Training) {  // the request shape it scored (the prompt: the model's seq unless given)
    j["workload"]["prompt_tokens"] = prompt_tokens(rep.config.model, w);
    if (w.mode == Mode::Decode) j["workload"]["kv_len"] = w.kv_len;
    else if (w.mode != Mode::Prefill) j["workload"]["output_tokens"] = w.output_tokens;
  }
  j["feasible"] = r.reason == Reason::Ok;
  j["reason"] = names::name(names::kReason, r.reason);
  j["reason_message"] = names::reason_message(r.reason);
  j["time_s"] = r.time_s;
  Term t[kTimeTerms];
  time_terms(r, t);
  for (const auto& x : t) j["time_breakdown_s"][x.name] = x.value;
  j["memory_bytes"] = r.memory_bytes;
  j["memory_capacity_bytes"] = rep.config.compute.mem_capacity_bytes;
  Term m[kMemoryTerms];
  memory_terms(r, m);
  for (const auto& x : m) j["memory_breakdown_bytes"][x.name] = x.value;
  const auto number_or_null = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  j["network_cost_usd"] = number_or_null(rep.network_cost_usd);
  j["network_cost_by_dim"] = nlohmann::json::array();
  for (size_t d = 0; d < rep.dim_cost_usd.size(); ++d)
    j["network_cost_by_dim"].push_back({{"tier", rep.dim_tier[d]},
                                        {"usd", std::isnan(rep.dim_cost_usd[d]) ? nlohmann::json() : nlohmann::json(rep.dim_cost_usd[d])}});
  j["placement"] = nlohmann::json::object();
  for (const auto& [group, k] : rep.placement) j["placement"][group] = k;
  const double price = rep.config.compute.price_usd;  // per NPU; 0: not given
  j["npu_price_usd"] = price > 0 ? nlohmann::json(price) : nlohmann::json();
  j["cluster_cost_usd"] = number_or_null(rep.cluster_cost_usd);
  j["npu_power_W"] = rep.config.compute.power_W > 0 ? nlohmann::json(rep.config.compute.power_W) : nlohmann::json();
  j["energy_per_token_J"] = number_or_null(rep.energy_per_token_J);
  j["usd_per_token"] = number_or_null(rep.usd_per_token);
  j["model_flops"] = r.model_flops;
  j["tokens_per_s"] = r.tokens_per_s;
  j["npu_s_per_token"] = r.tokens_per_s > 0 ? nlohmann::json(objective_value(Objective::NpuSPerToken, rep.config, r))
                                            : nlohmann::json();  // a layout the model did not time
  j["mfu"] = r.mfu;
  // Every PSA objective's value (docs/psa.md: lower is better, in the units result files write
  // them), so that a result file's objective columns can be checked against eval: null where
  // the layout was not timed, cluster_cost where no NPU price is given, energy_per_token and
  // usd_per_token where they lack a figure. The system's own figures (cost, npus, cluster_cost)
  // are given for any layout, as network_cost_usd is.
  j["objectives"] = nlohmann::json::object();
  Result priced = r;  // the model leaves an untimed layout's network cost at 0
  priced.network_cost_usd = rep.network_cost_usd;
  for (int k = 0; k < kNumObjectives; ++k) {
    const Objective o = Objective(k);
    const bool dollars = o == Objective::Cost || o == Objective::RuntimeXCost || o == Objective::ClusterCost;
    const bool of_system = o == Objective::Cost || o == Objective::Npus || o == Objective::ClusterCost;
    const bool defined = (r.time_s > 0 || of_system) && (o != Objective::ClusterCost || rep.config.compute.price_usd > 0) &&
                         !(dollars && std::isnan(rep.network_cost_usd)) &&  // a Switch without a price
                         !(o == Objective::EnergyPerToken && std::isnan(rep.energy_per_token_J)) &&
                         !(o == Objective::UsdPerToken && std::isnan(rep.usd_per_token));
    j["objectives"][psa::objective_name(o)] = defined ? number_or_null(objective_value(o, rep.config, priced)) : nlohmann::json();
  }
  if (rep.config.work.mode == Mode::Generate || rep.config.work.mode == Mode::Serve) {
    j["first_token_s"] = rep.first_token_s;
    j["per_output_token_s"] = rep.per_output_token_s;
  } else if (rep.config.work.mode == Mode::Prefill && r.time_s > 0) {
    j["first_token_s"] = r.first_token_s;  // the whole time: the first token comes with the prefill
  }
  j["calibration"] = nlohmann::json::object();
  for (const auto& [key, value] : calibration_fields(rep.config.cal)) j["calibration"][key] = value;
  j["notes"] = rep.notes;
  return j;
}

namespace {

// Notes that say why a layout is infeasible where the reason code alone does not: the numbers
// of the rule it breaks (which group, dimension, count).
std::vector<std::string> why_infeasible(const Config& c, Reason reason) {
  std::vector<std::string> notes;
  const Workload& w = c.work;
  const ModelSpec& m = c.model;
  const auto num = [](int64_t v) { return std::to_string(v); };
  switch (reason) {
    case Reason::ProductMismatch: {  // the two products, so that the fix shows
      std::string dims;
      for (int32_t d = 0; d < c.net.ndims; ++d) dims += (d ? " x " : "") + num(c.net.dim[d].npus);
      notes.push_back("dp x tp x pp x cp = " + num(w.dp) + " x " + num(w.tp) + " x " + num(w.pp) + " x " + num(w.cp) +
                      " = " + num(int64_t(w.dp) * w.tp * w.pp * w.cp) + ", the network has " + dims + " = " +
                      num(total_npus(c.net)) + " NPUs");
      break;
    }
    case Reason::ExpertsNotDivisible:
      notes.push_back(m.experts == 0 ? "ep = " + num(w.ep) + " on a dense model (experts 0): there are no experts to split"
                                     : "ep = " + num(w.ep) + " must divide the model's " + num(m.experts) + " experts");
      break;
    case Reason::TpExceedsHeads:
      notes.push_back("tp = " + num(w.tp) + " is more than the model's " + num(m.heads) + " attention heads");
      break;
    case Reason::HeadsNotDivisible:  // which count tp (or cp) does not divide
      if (m.heads % w.tp != 0 || m.ffn % w.tp != 0)
        notes.push_back("tp = " + num(w.tp) + " must divide the " + num(m.heads) + " attention heads and the FFN width " +
                        num(m.ffn) + (m.heads % w.tp != 0 ? " (the heads do not divide)" : " (the FFN width does not divide)"));
      else if (m.kv_heads % w.tp != 0 && w.tp % m.kv_heads != 0)
        notes.push_back("tp = " + num(w.tp) + " must divide the " + num(m.kv_heads) +
                        " KV heads, or be a multiple of them, so that each rank holds whole KV heads");
      else if (m.experts > 0 && m.ffn % expert_tp(w) != 0)
        notes.push_back("etp = " + num(w.etp) + " must divide each expert's FFN width " + num(m.ffn));
      else if (has_dense_layers(m) && dense_layer_model(m).ffn % w.tp != 0)
        notes.push_back("tp = " + num(w.tp) + " must divide the dense layers' FFN width " + num(dense_layer_model(m).ffn));
      else
        notes.push_back("with cp_style alltoall each cp rank takes whole heads: cp = " + num(w.cp) + " must divide the " +
                        num(m.heads / w.tp) + " query heads and the " + num(std::max(1, m.kv_heads / w.tp)) +
                        " KV heads of a TP rank");
      break;
    case Reason::LayersNotDivisible: {
      const int64_t chunks = int64_t(w.pp) * (w.mode == Mode::Training && w.schedule == Schedule::Interleaved ? w.vpp : 1);
      notes.push_back(w.uneven_stages ? num(m.layers) + " layers are fewer than the " + num(chunks) + " model chunks (pp x vpp)"
                                      : num(m.layers) + " layers are not a multiple of pp x vpp = " + num(chunks) +
                                            " (workload.uneven_stages: true lets stages differ by a layer)");
      break;
    }
    case Reason::BatchNotDivisible: {  // which of the two rules
      const int64_t per_pass = int64_t(w.dp) * w.micro_batch;
      if (w.global_batch % per_pass != 0)
        notes.push_back("global_batch " + num(w.global_batch) + " is not a multiple of dp x micro_batch = " + num(w.dp) +
                        " x " + num(w.micro_batch) + " = " + num(per_pass));
      else if (w.schedule == Schedule::DualPipe)  // the rules of check_config, in its order
        notes.push_back(w.pp % 2 != 0 ? "DualPipe pairs the stages from both ends: pp = " + num(w.pp) + " must be even"
                                      : "DualPipe needs an even number of micro-batches per pipeline, at least 2 x pp = " +
                                            num(2 * int64_t(w.pp)) + "; global_batch / (dp x micro_batch) = " +
                                            num(w.global_batch / per_pass));
      else
        notes.push_back("the interleaved schedule needs the micro-batches per pipeline, global_batch / (dp x micro_batch) = " +
                        num(w.global_batch / per_pass) + ", to be a multiple of pp = " + num(w.pp));
      break;
    }
    case Reason::SeqNotDivisible: {  // the rules of check_config, in its order
      const int64_t seq = w.mode == Mode::Training ? m.seq : prompt_tokens(m, w);
      if (w.mode != Mode::Decode && seq % w.cp != 0)
        notes.push_back(std::string(w.mode == Mode::Training ? "the sequence" : "the prompt") + " of " + num(seq) +
                        " tokens does not split over cp = " + num(w.cp));
      else if (w.mode != Mode::Decode && w.seq_parallel && (seq / w.cp) % w.tp != 0)
        notes.push_back("sequence parallelism splits each cp rank's " + num(seq / w.cp) + " tokens over tp = " + num(w.tp) +
                        ", which does not divide them");
      else
        notes.push_back("sequence parallelism splits a decode step's micro-batch (one token a sequence) over tp: "
                        "micro_batch " + num(w.micro_batch) + " is not a multiple of tp = " + num(w.tp));
      break;
    }
    case Reason::PlacementMismatch: {  // a group that cannot share a dimension, or ep against the DP group
      Groups g;
      PlaceFailure why;
      if (place_groups(c.net, w, g.span, &why) == Reason::PlacementMismatch && why.group >= 0) {
        std::string order;
        for (int k = 0; k < kNumGroups; ++k) order += (k ? ", " : "") + std::string(names::name(names::kGroup, c.net.order[k]));
        notes.push_back(std::string(names::name(names::kGroup, Group(why.group))) + " = " + num(group_degree(w, why.group)) +
                        " cannot be laid onto the network: " + num(why.size) + " of its ranks meet dimension " +
                        num(why.dim) + " (" + num(c.net.dim[why.dim].npus) + " NPUs, " + num(why.room) +
                        " left by the groups inside it), and neither divides the other (groups are laid innermost first: " +
                        order + ")");
      } else if (w.etp > 0 && m.experts > 0) {
        const int64_t world = int64_t(w.tp) * w.cp * w.dp;
        notes.push_back(world % (int64_t(w.etp) * w.ep) != 0
                            ? "etp x ep = " + num(w.etp) + " x " + num(w.ep) + " does not divide the " + num(world) +
                                  " TP x CP x DP ranks of a stage that fold the experts"
                            : "etp = " + num(w.etp) + " and then ep = " + num(w.ep) +
                                  " cannot be taken from a stage's TP x CP x DP ranks, innermost dimension first, each "
                                  "share dividing or divided by what is left");
      } else if (w.ep > 1) {
        std::string dp;
        for (int32_t d = 0; d < c.net.ndims; ++d)
          if (g.span[int(Group::DP)].k[d] > 1)
            dp += (dp.empty() ? "" : " x ") + num(g.span[int(Group::DP)].k[d]) + " (dimension " + num(d) + ")";
        notes.push_back("ep = " + num(w.ep) + " cannot be taken from the data-parallel group's ranks, innermost dimension "
                        "first, each share dividing or divided by what is left: the DP group is " +
                        (dp.empty() ? std::string("1 rank") : dp));
      }
      break;
    }
    default: break;
  }
  return notes;
}

}  // namespace

EvalReport report_of(const std::string& model_name, const std::string& system_name, const Config& c) {
  EvalReport rep{model_name, system_name, c, evaluate(c)};
  const Workload& w = c.work;
  const int64_t prompt = prompt_tokens(c.model, w);
  if ((w.mode == Mode::Generate || w.mode == Mode::Serve) && rep.result.time_s > 0) {  // the serving objectives
    rep.first_token_s = objective_value(Objective::FirstToken, c, rep.result);
    rep.per_output_token_s = objective_value(Objective::PerOutputToken, c, rep.result);
  }
  bool priced = true;
  const double network_usd = network_cost_usd(c.net, priced);
  if (priced) {
    rep.network_cost_usd = network_usd;
    if (c.compute.price_usd > 0) rep.cluster_cost_usd = cluster_cost_usd(c, network_usd);
  }
  const double tokens_per_s = rep.result.time_s > 0 ? rep.result.tokens_per_s : 0;
  if (tokens_per_s > 0 && c.compute.power_W > 0) {
    rep.energy_per_token_J = energy_per_token_J(c, tokens_per_s);
    if (!std::isnan(rep.cluster_cost_usd) && c.op.usd_per_kWh > 0 && c.op.lifetime_years > 0)
      rep.usd_per_token = usd_per_token(c, rep.cluster_cost_usd, tokens_per_s);
  }
  int tier[kMaxDims];
  dim_tiers(c.net, tier);
  for (int32_t d = 0; d < c.net.ndims; ++d) {
    rep.dim_tier.push_back(tier[d] < 0 ? "-" : names::kTier[tier[d]]);
    bool priced = true;
    const double usd = dim_cost_usd(c.net, d, tier[d], priced);
    rep.dim_cost_usd.push_back(priced ? usd : NAN);  // a Switch on a tier without a switch price
  }
  rep.notes = why_infeasible(c, rep.result.reason);
  Groups g;
  if (place_groups(c.net, w, g.span) == Reason::Ok) {
    // The astra-sim convention estimates what ASTRA-sim's doc does not describe (kernels/astra.hpp
    // modelled()): a double binary tree's all-reduce phase, as a measured ratio to the ring's, and
    // halving-doubling on a dimension that is not a power of two, as the ring. Noted for the
    // groups whose collectives meet one (a group smaller than the system runs the ring anyway).
    if (c.net.convention == Convention::AstraSim) {
      g.dp_cp = merge_spans(g.span[int(Group::DP)], g.span[int(Group::CP)]);
      std::vector<std::string> estimated;
      const std::pair<const char*, const Span*> timed[] = {{"tp", &g.span[int(Group::TP)]},
                                                           {"cp", &g.span[int(Group::CP)]},
                                                           {"dp x cp", &g.dp_cp}};
      for (const auto& [group, span] : timed) {
        std::vector<const char*> colls;
        for (const auto& e : names::kColl)
          if (span_size(*span, c.net.ndims) > 1 && !astra::modelled(c.net, *span, e.value)) colls.push_back(e.name);
        if (!colls.empty()) estimated.push_back(std::string(group) + "'s " + join(colls));
      }
      if (!estimated.empty())
        rep.notes.push_back("the astra-sim convention estimates " + join(estimated, "; ") +
                            " (a double binary tree's all-reduce as a measured ratio to the ring's" +
                            (c.net.congestion_aware ? ", 12-61% low congestion-aware" : "") +
                            "; halving-doubling on a dimension that is not a power of two as the ring; "
                            "docs/astrasim-mode.md)");
    }
    for (const auto& e : names::kGroup)
      if (group_degree(w, int(e.value)) > 1) rep.placement.push_back({e.name, {g.span[int(e.value)].k, g.span[int(e.value)].k + c.net.ndims}});
    if (c.model.experts > 0 && place_experts(c, g)) {
      if (w.ep > 1) rep.placement.push_back({"ep", {g.ep.k, g.ep.k + c.net.ndims}});
      if (w.etp > 1) rep.placement.push_back({"etp", {g.etp.k, g.etp.k + c.net.ndims}});
      if ((w.ep > 1 || w.etp > 0) && expert_replicas(w) > 1)  // the ranks holding the same expert slices
        rep.placement.push_back({"edp", {g.ep_dp.k, g.ep_dp.k + c.net.ndims}});
      // An EP group pushed out of the innermost dimension by the TP ranks, which folding with
      // etp 1 would keep there: the all-to-alls would not leave it.
      const auto outermost = [&](const Span& s) { return outermost_dim(s, c.net.ndims); };
      Config folded = c;
      folded.work.etp = 1;
      Groups fg = g;
      if (w.mode == Mode::Training && w.ep > 1 && w.etp == 0 && w.tp > 1 && place_experts(folded, fg) &&
          outermost(fg.ep) < outermost(g.ep))
        rep.notes.push_back("ep = " + std::to_string(w.ep) + " reaches dimension " + std::to_string(outermost(g.ep)) +
                            " outside the TP ranks; the experts' own layout (--set workload.etp=1, docs/config.md) "
                            "would keep it within dimension " + std::to_string(outermost(fg.ep)));
    }
  }
  // Context past the model's sequence length: the model times it (attention and KV cache grow
  // with it), whether or not the model was trained for it.
  const int64_t context = w.mode == Mode::Training ? c.model.seq
                          : w.mode == Mode::Prefill ? prompt
                          : w.mode == Mode::Decode  ? int64_t(w.kv_len) + 1
                                                    : prompt + w.output_tokens;
  if (context > c.model.seq)
    rep.notes.push_back("the context (" + std::to_string(context) + " tokens) is longer than the model's seq (" +
                        std::to_string(c.model.seq) + "); it is timed as given");
  // Selective recompute of the attention core drops its scores, which flash attention never
  // stores: it costs the attention core's forward again and saves nothing.
  if (w.mode == Mode::Training && w.recompute == Recompute::Selective && (w.recompute_modules & kRecomputeCoreAttn) &&
      w.flash_attention && rep.result.recompute_s > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g s", rep.result.recompute_s);
    const bool alone = w.recompute_modules == kRecomputeCoreAttn;
    rep.notes.push_back(std::string(alone ? "selective recompute" : "recompute module core_attn") +
                        " with flash attention saves no memory (flash attention stores no attention scores to drop) and " +
                        (alone ? std::string("costs ") + buf +
                                     " a step to run the attention core again: recompute none holds the same memory"
                               : "runs the attention core again: leave it out"));
  }
  // A decode step of one sequence a micro-batch: the replica's sequences run one after another,
  // where an engine batches them.
  const int64_t per_replica = w.dp > 0 ? w.global_batch / w.dp : 0;
  if ((w.mode == Mode::Decode || w.mode == Mode::Generate || w.mode == Mode::Serve) && w.micro_batch == 1 &&
      per_replica > w.pp)
    rep.notes.push_back("micro_batch 1: a decode step runs each replica's " + std::to_string(per_replica) +
                        " sequences one at a time, where an engine batches them (micro_batch " +
                        std::to_string(per_replica / std::max(1, w.pp)) + " fills the pipeline)");
  // overlap_ep_comm pairs a micro-batch's forward with another's backward (kernels/model.hpp):
  // where there is nothing to pair, or no all-to-all, it changes nothing.
  if (w.overlap_ep_comm) {
    const int64_t micro = w.global_batch / std::max<int64_t>(1, int64_t(w.dp) * w.micro_batch);
    const char* why = w.mode != Mode::Training        ? "it pairs the passes of training"
                      : w.ep == 1                     ? "ep = 1 has no all-to-alls"
                      : w.schedule == Schedule::GPipe ? "schedule gpipe runs all forwards, then all backwards"
                      : micro == 1 ? "one micro-batch per pipeline (global_batch / (dp x micro_batch) = 1) has none to pair with"
                                   : nullptr;
    if (why) rep.notes.push_back(std::string("overlap_ep_comm hides nothing here: ") + why);
  }
  // The cost per token takes all four of these. The presets give power_W alone (for the energy),
  // a price alone prices the cluster; an operation's figure given without the rest is a file
  // meant to have them.
  const std::pair<const char*, bool> inputs[] = {{"system.compute.power_W", c.compute.power_W > 0},
                                                 {"system.compute.price_usd", c.compute.price_usd > 0},
                                                 {"system.operation.usd_per_kWh", c.op.usd_per_kWh > 0},
                                                 {"system.operation.lifetime_years", c.op.lifetime_years > 0}};
  std::vector<const char*> lacking;
  for (const auto& [key, has] : inputs)
    if (!has) lacking.push_back(key);
  if ((c.op.usd_per_kWh > 0 || c.op.lifetime_years > 0) && !lacking.empty())
    rep.notes.push_back("no cost per token: it takes the NPU's price and power and the operation's electricity price and "
                        "lifetime; not given: " + join(lacking));
  // Figures in the wrong unit (bytes/s as GB/s, FLOP/s as TFLOP/s, bytes as GB; or TB/s as GB/s,
  // PFLOP/s as TFLOP/s) are valid numbers that no hardware has: cutoffs well above the fastest
  // parts of 2026 (their links carry a few thousand GB/s a direction at most, their memories a
  // few tens of thousands of GB/s and a few hundred GB, their dense FP8 peaks a few tens of
  // thousands of TFLOP/s) and well below the slowest accelerator or link a cluster is built of
  // take them for a mistake worth a note.
  const auto unlikely = [&](const std::string& key, double value, double low, double high, const char* unit) {
    if (value >= low && value <= high) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, " %.6g %s is %s %.0f %s, %s: a figure in another unit?", value, unit,
                  value > high ? "above" : "below", value > high ? high : low, unit,
                  value > high ? "more than any hardware reaches" : "slower than any part a cluster is built of");
    rep.notes.push_back(key + buf);
  };
  for (int32_t d = 0; d < c.net.ndims; ++d)
    unlikely("system.network.dims." + std::to_string(d) + ".bandwidth_GBps", c.net.dim[d].link_bw_GBps, 1, 1e4, "GB/s");
  unlikely("system.compute.memory_bw_GBps", c.compute.mem_bw_GBps, 10, 1e5, "GB/s");
  unlikely("system.compute.peak_tflops", *std::max_element(c.compute.peak_tflops, c.compute.peak_tflops + 3), 1, 1e5, "TFLOP/s");
  unlikely("system.compute.memory_GB (or memory_GiB)", c.compute.mem_capacity_bytes / 1e9, 0, 1e4, "GB");
  // A fit with no margin: the model holds nothing back for what a real run needs besides.
  const double fill = rep.result.memory_bytes / c.compute.mem_capacity_bytes;
  if (rep.result.reason == Reason::Ok && fill > 0.95) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fill);
    rep.notes.push_back(std::string("memory fills ") + buf +
                        " of the capacity, which a real run shares with the CUDA context, communication buffers and "
                        "the allocator (several GiB; docs/model.md): give the usable capacity as "
                        "system.compute.memory_GiB for a margin");
  }
  return rep;
}

std::string param_count(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, n >= 1e12 ? "%.0f B" : n >= 1e9 ? "%.3g B" : "%.3g M", n >= 1e9 ? n / 1e9 : n / 1e6);
  return buf;
}

std::string to_text(const EvalReport& rep) {
  const Result& r = rep.result;
  const Workload& w = rep.config.work;
  std::ostringstream os;
  char buf[256];
  const ModelSpec& model = rep.config.model;
  os << rep.model_name << " (" << param_count(model_params(model)) << " parameters"
     << (model.experts > 0 ? ", " + param_count(active_params(model)) + " active" : "") << ") on " << rep.system_name << " (" << total_npus(rep.config.net)
     << (total_npus(rep.config.net) == 1 ? " NPU), " : " NPUs), ")
     << names::name(names::kMode, w.mode) << "\n";
  std::snprintf(buf, sizeof buf, "workload: dp %d tp %d pp %d cp %d%s%s, micro-batch %d, global batch %lld, %s", w.dp,
                w.tp, w.pp, w.cp, w.cp > 1 && w.cp_style == CpStyle::AllToAll ? " (all-to-all)" : "",
                w.seq_parallel && w.tp > 1 ? " +seq-parallel" : "", w.micro_batch, (long long)w.global_batch,
                precision_name(rep.config.model.dtype_bytes));
  os << buf;
  // A mixture's dense layers: which layers hold the experts, e.g. "in 24 of 48 layers (one layer
  // in 2; 24 dense, ffn 16384)".
  std::string placed;
  if (has_dense_layers(model)) {
    const std::string first = "the first " + std::to_string(model.first_dense_layers);
    const int64_t moe = int64_t(main_layers(model));
    placed = " in " + std::to_string(moe) + " of " + std::to_string(model.layers) + " layers (" +
             (model.moe_layer_step > 1 ? "one layer in " + std::to_string(model.moe_layer_step) +
                                             (model.first_dense_layers > 0 ? " after " + first : "")
                                       : "all but " + first) +
             "; " + std::to_string(model.layers - moe) + " dense, ffn " + std::to_string(dense_layer_model(model).ffn) +
             ")";
  }
  // How the all-to-alls are sent and hidden, e.g. " (dispatch dedup, all-to-alls beside a paired micro-batch)".
  std::string a2a;
  const auto add = [&](const std::string& part) { a2a += (a2a.empty() ? "" : ", ") + part; };
  if (w.ep > 1 && w.ep_dispatch == EpDispatch::NodeDedup) add("dispatch dedup");
  if (w.ep > 1 && w.fp8_dispatch) add("dispatched in fp8");
  if (w.ep > 1 && w.overlap_ep_comm && w.mode == Mode::Training)
    add("all-to-alls beside a paired micro-batch" +
        (w.ep_comm_sm_share > 0 ? " on " + std::to_string(int(std::lround(100 * w.ep_comm_sm_share))) + "% of the compute units"
                                : std::string()));
  if (!a2a.empty()) a2a = " (" + a2a + ")";
  if (model.experts > 0)
    os << ", " << model.experts << " experts top-" << model.top_k
       << (model.expert_groups > 0 ? " in " + std::to_string(model.groups_per_token) + " of " +
                                         std::to_string(model.expert_groups) + " groups"
                                   : "")
       << (model.shared_experts > 0 ? " + " + std::to_string(model.shared_experts) + " shared" : "") << placed
       << " ep " << w.ep
       << (w.etp > 0 ? " etp " + std::to_string(w.etp) + " (folded)" : "")
       << a2a;
  else if (w.ep > 1 || w.etp > 0)
    os << (w.ep > 1 ? ", ep " + std::to_string(w.ep) : "") << (w.etp > 0 ? ", etp " + std::to_string(w.etp) : "")
       << " (a dense model: no experts)";
  if (w.mode == Mode::Training)  // inference ignores the schedule, sharding and recompute
    os << ", " << names::name(names::kSchedule, w.schedule)
       << (w.schedule == Schedule::Interleaved ? " x" + std::to_string(w.vpp) : "") << ", sharding "
       << names::name(names::kSharding, w.sharding) << ", recompute " << names::name(names::kRecompute, w.recompute)
       << (w.recompute == Recompute::Full && w.recompute_layers > 0
               ? " (" + std::to_string(w.recompute_layers) + (w.recompute_layers == 1 ? " layer a " : " layers a ") +
                     (w.schedule == Schedule::Interleaved ? "chunk)" : "stage)")
               : "")
       << (w.recompute == Recompute::Selective && w.recompute_modules != kRecomputeCoreAttn
               ? " (" + join(recompute_module_names(w)) + ")"
               : "")
       << (w.fp8_cache ? ", fp8 activation cache" : "");
  if (w.uneven_stages && w.pp > 1) os << ", uneven stages";
  if (!w.flash_attention) os << ", no flash attention";
  if (w.mode != Mode::Training) {  // the request shape
    if (w.mode == Mode::Decode) os << ", kv_len " << w.kv_len;  // a step attends to the cache, whatever the prompt was
    else os << ", prompt " << prompt_tokens(rep.config.model, w);
    if (w.mode == Mode::Generate || w.mode == Mode::Serve) os << ", output " << w.output_tokens;
  }
  os << "\n";
  if (r.reason == Reason::Ok)
    os << "status: feasible\n";
  else
    os << "status: INFEASIBLE " << names::name(names::kReason, r.reason) << ": " << names::reason_message(r.reason)
       << (r.time_s > 0 ? " (timed below as if it were feasible)" : "") << "\n";
  const auto notes = [&] {
    for (const std::string& n : rep.notes) os << "note: " << n << "\n";
    return os.str();
  };
  if (r.time_s <= 0) return notes();

  // Training: one iteration; decode: one step of the batch (a token for each sequence); prefill
  // and generate: the batch's requests from prompt to their last token; serve: one request's.
  // Seconds to the microsecond, in a 14-wide field; past 10^7 s (no configuration a cluster
  // runs) in %g, so that the line keeps its shape.
  const auto secs = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, v < 1e7 ? "%14.6f" : "%14.6g", v);
    return std::string(b);
  };
  const char* unit = w.mode == Mode::Training ? "iteration" : w.mode == Mode::Decode ? "step" : "request";
  std::snprintf(buf, sizeof buf, "time per %-10s %s s\n", unit, secs(r.time_s).c_str());
  os << buf;
  Term t[kTimeTerms];
  time_terms(r, t);
  for (const auto& x : t) {
    if (x.value == 0) continue;
    std::snprintf(buf, sizeof buf, "  %-22s %s s  %5.1f%%\n", x.name, secs(x.value).c_str(), 100 * x.value / r.time_s);
    os << buf;
  }
  if (w.mode == Mode::Generate) {
    std::snprintf(buf, sizeof buf,
                  "first token            %s s  (the prefill)\n"
                  "per output token       %s s  (mean of %d after it)\n",
                  secs(rep.first_token_s).c_str(), secs(rep.per_output_token_s).c_str(), w.output_tokens);
    os << buf;
  } else if (w.mode == Mode::Prefill) {
    std::snprintf(buf, sizeof buf, "first token            %s s  (the whole prefill)\n", secs(r.time_s).c_str());
    os << buf;
  } else if (w.mode == Mode::Serve) {
    std::snprintf(buf, sizeof buf,
                  "first token            %s s  (a prompt's prefill and half a cycle)\n"
                  "per output token       %s s  (a step and its share of new prompts' prefills)\n",
                  secs(rep.first_token_s).c_str(), secs(rep.per_output_token_s).c_str());
    os << buf;
  }
  const double GiB = 1073741824.0;
  std::snprintf(buf, sizeof buf, "memory per NPU %13.2f GiB of %.2f GiB\n", r.memory_bytes / GiB,
                rep.config.compute.mem_capacity_bytes / GiB);
  os << buf;
  Term m[kMemoryTerms];
  memory_terms(r, m);
  for (const auto& x : m) {
    if (x.value == 0) continue;
    std::snprintf(buf, sizeof buf, "  %-22s %14.2f GiB\n", x.name, x.value / GiB);
    os << buf;
  }
  // A dollar figure, or why there is none.
  const auto usd = [](double v) { return std::isnan(v) ? std::string("undefined (a Switch without a price: network.prices)") : dollars(v); };
  os << "network cost           " << usd(rep.network_cost_usd) << "\n";
  for (size_t d = 0; d < rep.dim_cost_usd.size(); ++d) {
    if (rep.dim_tier[d] == "-") continue;
    const NetDim& n = rep.config.net.dim[d];
    const std::string label = "dim " + std::to_string(d) + ", " + rep.dim_tier[d] + " tier (" +
                              names::name(names::kTopology, n.topology) + " of " + std::to_string(n.npus) + ")";
    const std::string usd = std::isnan(rep.dim_cost_usd[d]) ? "no switch price" : dollars(rep.dim_cost_usd[d]);
    std::snprintf(buf, sizeof buf, "  %-44s %15s\n", label.c_str(), usd.c_str());
    os << buf;
  }
  if (rep.config.compute.price_usd > 0) {
    const double npus = double(total_npus(rep.config.net));
    os << "cluster cost           "
       << usd(rep.cluster_cost_usd)
       << "  (network + " << total_npus(rep.config.net) << " NPUs x " << dollars(rep.config.compute.price_usd) << " = "
       << dollars(npus * rep.config.compute.price_usd) << ")\n";
  }
  if (!rep.placement.empty()) {
    os << "placement (ranks along dims 0-" << rep.config.net.ndims - 1 << "):";
    for (const auto& [group, k] : rep.placement) {
      os << " " << group << " ";
      for (size_t d = 0; d < k.size(); ++d) os << (d ? "x" : "") << k[d];
    }
    os << "\n";
  }
  // What tokens_per_s counts: the trained tokens, the prompts' tokens of a prefill, the output
  // tokens of decode, generate and serve.
  const char* counted = w.mode == Mode::Training ? "tokens/s" : w.mode == Mode::Prefill ? "prompt tokens/s" : "output tokens/s";
  std::snprintf(buf, sizeof buf, "throughput        %16.1f %s  (%.1f per NPU)\nMFU               %16.1f %%\n",
                r.tokens_per_s, counted, r.tokens_per_s / double(total_npus(rep.config.net)), 100 * r.mfu);
  os << buf;
  const Config& cfg = rep.config;
  if (!std::isnan(rep.energy_per_token_J)) {
    std::snprintf(buf, sizeof buf, "energy            %16.4g J/token  (%lld NPUs x %.6g W x PUE %.6g = %.6g kW)\n",
                  rep.energy_per_token_J, (long long)total_npus(cfg.net), cfg.compute.power_W, cfg.op.pue,
                  double(total_npus(cfg.net)) * cfg.compute.power_W * cfg.op.pue / 1e3);
    os << buf;
  }
  if (!std::isnan(rep.usd_per_token)) {
    const double energy_usd = electricity_usd_per_token(cfg, r.tokens_per_s);  // usd_per_token's second part
    char usd[32];
    std::snprintf(usd, sizeof usd, "$%.4g", rep.usd_per_token * 1e6);
    std::snprintf(buf, sizeof buf,
                  "cost per token    %16s per million tokens  (the cluster over %.6g years $%.4g, electricity at $%.6g/kWh $%.4g)\n",
                  usd, cfg.op.lifetime_years, (rep.usd_per_token - energy_usd) * 1e6, cfg.op.usd_per_kWh, energy_usd * 1e6);
    os << buf;
  }
  // What the times and MFU above rest on: how the collectives are split, and the system's
  // efficiencies where they differ from the ideal machine (which a system file without them gets).
  const Network& net = rep.config.net;
  os << "network: " << names::name(names::kConvention, net.convention) << " convention, collectives in " << net.chunks
     << (net.chunks == 1 ? " chunk" : " chunks") << ", endpoint delay " << net.endpoint_delay_ns << " ns\ncalibration:";
  const auto ideal = calibration_fields(Calibration{});
  const auto fields = calibration_fields(rep.config.cal);
  std::string differ;
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].second != ideal[i].second) {
      std::snprintf(buf, sizeof buf, "%s %s %g", differ.empty() ? "" : ",", fields[i].first, fields[i].second);
      differ += buf;
    }
  os << (differ.empty() ? " none, the ideal machine (kernels at peak compute and memory bandwidth, links at full bandwidth, "
                          "the DP sync hidden; docs/model.md, Calibration)"
                        : differ)
     << "\n";
  return notes();
}

std::string comparison_text(const std::vector<EvalReport>& reports, const std::vector<std::string>& labels,
                            const std::vector<std::string>& legend) {
  std::ostringstream os;
  for (size_t k = 0; k < reports.size(); ++k) os << labels[k] << ": " << legend[k] << "\n";
  const size_t n = reports.size();
  constexpr int kName = 24, kCol = 22;
  char buf[128];
  const auto row = [&](const std::string& name, const std::vector<std::string>& cells) {
    std::snprintf(buf, sizeof buf, "%-*s", kName, name.c_str());
    os << buf;
    for (const auto& c : cells) {  // right-aligned, at least two spaces apart
      std::snprintf(buf, sizeof buf, "%*s", kCol, c.c_str());
      os << (c.size() + 2 > size_t(kCol) ? "  " + c : std::string(buf));
    }
    os << "\n";
  };
  // A value with its change from the base's ("+12.3%"), or "-" where the layout was not timed
  // (`timed`: a value of the timing's) or the value is undefined.
  const auto cells = [&](const std::function<double(const EvalReport&)>& value, const char* format, double scale, bool relative,
                         bool timed = true) {
    std::vector<std::string> out;
    const double base = value(reports[0]);
    const auto shown = [&](size_t k) { return (!timed || reports[k].result.time_s > 0) && !std::isnan(value(reports[k])); };
    for (size_t k = 0; k < n; ++k) {
      const double v = value(reports[k]);
      if (!shown(k)) {
        out.push_back("-");
        continue;
      }
      std::snprintf(buf, sizeof buf, format, v * scale);
      std::string c = buf;
      if (relative && k > 0 && base > 0 && shown(0)) {
        std::snprintf(buf, sizeof buf, " (%+.1f%%)", 100 * (v / base - 1));
        c += buf;
      }
      out.push_back(c);
    }
    return out;
  };
  const auto any = [&](const std::function<double(const EvalReport&)>& value) {
    for (const auto& r : reports)
      if (r.result.time_s > 0 && value(r) != 0 && !std::isnan(value(r))) return true;
    return false;
  };
  row("", labels);
  std::vector<std::string> status;
  for (const auto& r : reports) status.push_back(r.result.reason == Reason::Ok ? "feasible" : names::name(names::kReason, r.result.reason));
  row("status", status);
  // What is timed: an iteration, a decode step or a request (each column's own where a variant
  // changes the mode, and then no change from the base is shown: they time different things).
  const auto timed = [](Mode m) { return m == Mode::Training ? "iteration" : m == Mode::Decode ? "step" : "request"; };
  bool one_mode = true;
  for (const auto& r : reports) one_mode = one_mode && r.config.work.mode == reports[0].config.work.mode;
  if (!one_mode) {
    std::vector<std::string> modes;
    for (const auto& r : reports) modes.push_back(std::string("per ") + timed(r.config.work.mode));
    row("time is", modes);
  }
  row(one_mode ? std::string("time per ") + timed(reports[0].config.work.mode) : "time",
      cells([](const EvalReport& r) { return r.result.time_s; }, "%.6g s", 1, one_mode));
  // A breakdown's rows (time_terms or memory_terms), those that any column has.
  const auto breakdown = [&](void (*terms)(const Result&, Term*), int count, const char* format, double scale) {
    Term names[kTimeTerms];
    terms(reports[0].result, names);
    for (int i = 0; i < count; ++i) {
      const auto term = [terms, i](const EvalReport& r) {
        Term t[kTimeTerms];
        terms(r.result, t);
        return t[i].value;
      };
      if (any(term)) row(std::string("  ") + names[i].name, cells(term, format, scale, false));
    }
  };
  breakdown(time_terms, kTimeTerms, "%.6g s", 1);
  // The serving latencies where the mode has them (a prefill's first token is its whole time;
  // the time per output token is generate's and serve's), "-" elsewhere.
  const auto serves = [](const EvalReport& r) { return r.config.work.mode == Mode::Generate || r.config.work.mode == Mode::Serve; };
  const auto first = [&](const EvalReport& r) {
    return serves(r) ? r.first_token_s : r.config.work.mode == Mode::Prefill ? r.result.time_s : NAN;
  };
  const auto per_token = [&](const EvalReport& r) { return serves(r) ? r.per_output_token_s : NAN; };
  if (any(first)) row("first token", cells(first, "%.6g s", 1, true));
  if (any(per_token)) row("per output token", cells(per_token, "%.6g s", 1, true));
  const double GiB = 1073741824.0;
  row("memory per NPU", cells([](const EvalReport& r) { return r.result.memory_bytes; }, "%.2f GiB", 1 / GiB, true));
  breakdown(memory_terms, kMemoryTerms, "%.2f GiB", 1 / GiB);
  // (tokens of another kind where a variant changes the mode: no change shown then)
  row("tokens/s", cells([](const EvalReport& r) { return r.result.tokens_per_s; }, "%.1f", 1, one_mode));
  row("MFU", cells([](const EvalReport& r) { return r.result.mfu; }, "%.1f %%", 100, false));
  row("network cost", cells([](const EvalReport& r) { return r.network_cost_usd; }, "$%.4gM", 1e-6, true, false));
  const auto cluster = [](const EvalReport& r) { return r.cluster_cost_usd; };
  if (any(cluster)) row("cluster cost", cells(cluster, "$%.4gM", 1e-6, true, false));
  const auto energy = [](const EvalReport& r) { return r.energy_per_token_J; };
  if (any(energy)) row("energy", cells(energy, "%.4g J/token", 1, one_mode));
  const auto usd = [](const EvalReport& r) { return r.usd_per_token; };
  if (any(usd)) row("cost per M tokens", cells(usd, "$%.4g", 1e6, one_mode));
  for (size_t k = 0; k < n; ++k)  // why a layout is infeasible, and what else the numbers rest on
    for (const std::string& note : reports[k].notes) os << labels[k] << ": note: " << note << "\n";
  return os.str();
}

}  // namespace cosmic
