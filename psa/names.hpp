// Names of the model's enumerations, as written in YAML files, on the command line and in
// result files. The first name of each value is canonical (what cosmic prints); the others are
// accepted aliases. Matching ignores case.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/types.hpp"

namespace cosmic::names {

template <class E>
struct Entry {
  const char* name;
  E value;
};

// GeGLU (Gemma) has the three matrices and element-wise traffic of SwiGLU: the same model.
inline const Entry<Mlp> kMlp[] = {{"gelu", Mlp::Gelu}, {"swiglu", Mlp::SwiGLU}, {"geglu", Mlp::SwiGLU}};
inline const Entry<Mode> kMode[] = {{"training", Mode::Training}, {"prefill", Mode::Prefill},
                                    {"decode", Mode::Decode}, {"generate", Mode::Generate},
                                    {"serve", Mode::Serve}};
inline const Entry<Schedule> kSchedule[] = {{"1f1b", Schedule::OneF1B}, {"gpipe", Schedule::GPipe},
                                            {"interleaved", Schedule::Interleaved}, {"dualpipe", Schedule::DualPipe}};
inline const Entry<Sharding> kSharding[] = {{"none", Sharding::None}, {"zero1", Sharding::Zero1},
                                            {"zero2", Sharding::Zero2}, {"zero3", Sharding::Zero3},
                                            {"fsdp", Sharding::Zero3}};
inline const Entry<Recompute> kRecompute[] = {{"none", Recompute::None}, {"selective", Recompute::Selective},
                                              {"full", Recompute::Full}};
inline const Entry<RecomputeModule> kRecomputeModule[] = {{"core_attn", kRecomputeCoreAttn},
                                                          {"layernorm", kRecomputeLayerNorm},
                                                          {"mla_up_proj", kRecomputeMlaUpProj},
                                                          {"mlp_act", kRecomputeMlpAct}};
inline const Entry<EpDispatch> kEpDispatch[] = {{"alltoall", EpDispatch::AllToAll}, {"dedup", EpDispatch::NodeDedup}};
inline const Entry<CpStyle> kCpStyle[] = {{"allgather", CpStyle::AllGather}, {"alltoall", CpStyle::AllToAll},
                                          {"ulysses", CpStyle::AllToAll}};
inline const Entry<Topology> kTopology[] = {{"Ring", Topology::Ring}, {"Switch", Topology::Switch},
                                            {"FullyConnected", Topology::FullyConnected}};
inline const Entry<Algo> kAlgo[] = {{"ring", Algo::Ring},
                                    {"direct", Algo::Direct},
                                    {"halvingDoubling", Algo::HalvingDoubling},
                                    {"doubleBinaryTree", Algo::DoubleBinaryTree},
                                    {"halving_doubling", Algo::HalvingDoubling},
                                    {"double_binary_tree", Algo::DoubleBinaryTree}};
// The network cost's tiers, innermost first, as network.prices names them (kernels/cost.hpp).
inline const char* const kTier[kNumTiers] = {"chiplet", "package", "node", "pod"};

inline const Entry<Coll> kColl[] = {{"all_reduce", Coll::AllReduce}, {"all_gather", Coll::AllGather},
                                    {"reduce_scatter", Coll::ReduceScatter}, {"all_to_all", Coll::AllToAll}};
inline const Entry<Policy> kPolicy[] = {{"LIFO", Policy::LIFO}, {"FIFO", Policy::FIFO}};
inline const Entry<MultiDim> kMultiDim[] = {{"localBWAware", MultiDim::BWAware}, {"baseline", MultiDim::Baseline},
                                            {"bwaware", MultiDim::BWAware}};
inline const Entry<LinkCount> kLinkCount[] = {{"study", LinkCount::Study}, {"physical", LinkCount::Physical}};
inline const Entry<Convention> kConvention[] = {{"physical", Convention::Physical},
                                                {"astra-sim", Convention::AstraSim},
                                                {"astrasim", Convention::AstraSim}};
inline const Entry<Group> kGroup[] = {{"tp", Group::TP}, {"cp", Group::CP}, {"dp", Group::DP}, {"pp", Group::PP}};
inline const Entry<Reason> kReason[] = {
    {"OK", Reason::Ok},
    {"INVALID_INPUT", Reason::InvalidInput},
    {"PRODUCT_MISMATCH", Reason::ProductMismatch},
    {"TP_EXCEEDS_HEADS", Reason::TpExceedsHeads},
    {"HEADS_NOT_DIVISIBLE", Reason::HeadsNotDivisible},
    {"BATCH_NOT_DIVISIBLE", Reason::BatchNotDivisible},
    {"LAYERS_NOT_DIVISIBLE", Reason::LayersNotDivisible},
    {"SEQ_NOT_DIVISIBLE", Reason::SeqNotDivisible},
    {"PLACEMENT_MISMATCH", Reason::PlacementMismatch},
    {"OUT_OF_MEMORY", Reason::OutOfMemory},
    {"SWITCH_NOT_PRICED", Reason::SwitchNotPriced},
    {"EXPERTS_NOT_DIVISIBLE", Reason::ExpertsNotDivisible},
    {"LIMIT_EXCEEDED", Reason::LimitExceeded},
};

inline bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

template <class E, size_t N>
std::optional<E> parse(const Entry<E> (&table)[N], std::string_view text) {
  for (const auto& e : table)
    if (iequal(e.name, text)) return e.value;
  return std::nullopt;
}

template <class E, size_t N>
const char* name(const Entry<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

// The name of a result's reason code: a Reason, or -1 for a violated PSA constraint (what the
// result files' /reasons table lists).
inline const char* reason_code_name(int32_t code) { return code < 0 ? "CONSTRAINT" : name(kReason, Reason(code)); }

// "a, b or c": the canonical names, for error messages.
template <class E, size_t N>
std::string choices(const Entry<E> (&table)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    bool alias = false;
    for (size_t j = 0; j < i; ++j) alias = alias || table[j].value == table[i].value;
    if (alias) continue;
    if (!out.empty()) out += ", ";
    out += table[i].name;
  }
  return out;
}

inline const char* reason_message(Reason r) {
  switch (r) {
    case Reason::Ok: return "feasible";
    case Reason::InvalidInput: return "an input is zero, negative or out of range";
    case Reason::ProductMismatch: return "dp x tp x pp x cp does not equal the number of NPUs in the network";
    case Reason::TpExceedsHeads: return "tensor parallelism exceeds the number of attention heads";
    case Reason::HeadsNotDivisible:
      return "attention heads or FFN width not divisible by tp, or KV heads neither divisible by tp nor dividing it "
             "(with cp_style alltoall: the heads of a TP rank, "
             "query and KV, not divisible by cp; with etp: an expert's FFN width by etp; a mixture's dense layers' FFN "
             "width by tp)";
    case Reason::BatchNotDivisible:
      return "global batch not divisible by dp x micro_batch, or (interleaved schedule only) the micro-batches per "
             "pipeline not a multiple of pp (dualpipe: pp odd, or the micro-batches per pipeline odd or fewer than 2 pp)";
    case Reason::LayersNotDivisible:
      return "layers not divisible by pp (x vpp when interleaved), or with uneven_stages fewer layers than chunks";
    case Reason::SeqNotDivisible:
      return "sequence not divisible by cp (or cp x tp with sequence parallelism; in decode, the micro-batch by tp)";
    case Reason::PlacementMismatch:
      return "a parallel group cannot be laid evenly onto the network dimensions (or the ep ranks onto the DP group's; "
             "with etp, etp x ep onto a stage's TP x CP x DP ranks)";
    case Reason::OutOfMemory: return "peak memory per NPU exceeds its capacity";
    case Reason::SwitchNotPriced: return "the design space reads the network's cost, and a Switch sits on a tier without a switch price (LIBRA's chiplet tier: the fourth dimension of more than one NPU from the outside, and any inside it): give one in network.prices";
    case Reason::ExpertsNotDivisible: return "ep does not divide the experts per layer (a dense model has none to split)";
    case Reason::LimitExceeded: return "the model can run it, but a result is over one of the design space's limits (PSA limits:)";
  }
  return "?";
}

}  // namespace cosmic::names
