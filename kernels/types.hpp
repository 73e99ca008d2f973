// Plain input and output structs of the cosmic analytical model.
//
// Every input the model reads is a field here: no hidden constants. All structs are trivially
// copyable so that batches of them (or views into value tables) can be copied to a GPU as is.
// Units are part of the field names: _GBps (1e9 bytes/s unless a convention says otherwise),
// _ns, _s, _bytes, _tflops (1e12 FLOP/s).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/hd.hpp"

namespace cosmic {

constexpr int kMaxDims = 8;  // network dimensions supported (the study uses 4)
constexpr int64_t kMaxNpus = int64_t(1) << 31;  // NPUs in a network at most (products stay in range)

enum class Mlp : int8_t { Gelu = 0, SwiGLU = 1 };  // 2-matrix GELU MLP, 3-matrix gated SwiGLU MLP

struct ModelSpec {
  int32_t layers = 0;
  int32_t hidden = 0;
  int32_t ffn = 0;       // FFN (intermediate) width
  int32_t heads = 0;
  int32_t kv_heads = 0;  // = heads for multi-head attention, fewer for GQA
  int32_t seq = 0;       // training sequence length (tokens)
  int32_t vocab = 0;
  Mlp mlp = Mlp::Gelu;
  int32_t dtype_bytes = 2;       // bytes per weight / activation element (2 = fp16/bf16, 1 = fp8)
  bool tied_embeddings = true;   // output projection shares the input embedding (GPT) or not (Llama)
  bool biases = true;            // linear layers and LayerNorms carry biases (GPT) or not (Llama)
  int32_t experts = 0;           // mixture of experts: routed experts per layer, each an MLP of ffn; 0 = dense
  int32_t top_k = 1;             // experts each token is routed to (experts > 0)
  int32_t shared_experts = 0;    // experts every token passes through besides its top_k (experts > 0)
  int32_t head_dim = 0;          // width of one attention head; 0 = hidden / heads
  // Mixture of experts with dense layers among the expert layers: layer i (from 0) holds experts
  // when i >= first_dense_layers and (i + 1) % moe_layer_step == 0 (DeepSeek-V3's first three
  // dense layers; Llama 4 Maverick's alternation); the others hold one dense MLP of dense_ffn.
  int32_t first_dense_layers = 0;
  int32_t moe_layer_step = 1;
  int32_t dense_ffn = 0;         // the dense layers' MLP width; 0 = ffn
  // Multi-head latent attention (DeepSeek-V2 / V3) when kv_lora_rank > 0: keys and values
  // up-projected from a latent of kv_lora_rank a token (the KV cache), queries from one of
  // q_lora_rank (0: from the input); a head's query and key are head_dim + rope_head_dim wide
  // (the RoPE key shared by the heads), its value v_head_dim (0: head_dim).
  int32_t kv_lora_rank = 0;
  int32_t q_lora_rank = 0;
  int32_t rope_head_dim = 0;
  int32_t v_head_dim = 0;
  // Group-limited routing (DeepSeek-V3's node-limited routing; Hugging Face n_group /
  // topk_group): the routed experts form expert_groups groups of consecutive experts, and a
  // token's top_k lie in groups_per_token of them. 0, 0: any top_k of all the experts.
  int32_t expert_groups = 0;
  int32_t groups_per_token = 0;
  bool dropout = true;  // trained with dropout after attention's softmax and each block (GPT) or none (Llama)
};

enum class Mode : int8_t {
  Training = 0,  // one optimizer step over the global batch
  Prefill = 1,   // inference: one forward pass over the prompt, filling the KV cache
  Decode = 2,    // inference: one new token per sequence with a KV cache of kv_len tokens
  Generate = 3,  // inference: prefill + output_tokens decode steps (the study's Chat / QA latency)
  Serve = 4,     // inference: continuous batching in its steady state (global_batch sequences in flight)
};
enum class Schedule : int8_t { GPipe = 0, OneF1B = 1, Interleaved = 2, DualPipe = 3 };
enum class Sharding : int8_t { None = 0, Zero1 = 1, Zero2 = 2, Zero3 = 3 };  // Zero3 = FSDP = study's weight sharding
enum class Recompute : int8_t { None = 0, Selective = 1, Full = 2 };
// What selective recompute drops and computes again in the backward pass (Workload::
// recompute_modules, a set of these bits; Megatron-Core's --recompute-modules names them so):
// the attention core's scores, the two norms' outputs, MLA's up-projected queries, keys and
// values, and the MLPs' activation-function outputs.
enum RecomputeModule : uint8_t {
  kRecomputeCoreAttn = 1,
  kRecomputeLayerNorm = 2,
  kRecomputeMlaUpProj = 4,
  kRecomputeMlpAct = 8,
};
// How context parallelism exchanges a layer's attention inputs: AllGather gathers keys and values
// over the cp ranks (Megatron-LM's context parallelism); AllToAll sends each head's queries, keys
// and values to one rank and the attention output back (DeepSpeed-Ulysses).
enum class CpStyle : int8_t { AllGather = 0, AllToAll = 1 };
// How the experts' tokens cross the network: an all-to-all of every routed copy, or each token
// sent once to every node that holds one of its experts and fanned out inside it (DeepEP-style).
enum class EpDispatch : int8_t { AllToAll = 0, NodeDedup = 1 };

struct Workload {
  Mode mode = Mode::Training;
  int64_t global_batch = 1;  // sequences per iteration (or per inference request batch)
  int32_t micro_batch = 1;   // sequences per micro-batch
  int32_t dp = 1, tp = 1, pp = 1;
  int32_t cp = 1;            // context / sequence sharding (the study's "SP"): the sequence is split,
                             // keys and values are gathered (cp_style)
  CpStyle cp_style = CpStyle::AllGather;
  bool seq_parallel = false; // Megatron sequence parallelism inside the TP group
  Schedule schedule = Schedule::OneF1B;
  int32_t vpp = 1;           // model chunks per pipeline rank (Interleaved only)
  bool uneven_stages = false; // layers need not divide pp x vpp: chunks hold the quotient rounded up or down
  Sharding sharding = Sharding::None;
  Recompute recompute = Recompute::None;
  int32_t recompute_layers = 0; // with recompute full: the layers of each model chunk that recompute (Megatron's
                                // block method, the chunk's first ones; the rest keep their activations); 0 = all
  uint8_t recompute_modules = kRecomputeCoreAttn;  // with recompute selective: what it drops (RecomputeModule bits)
  bool fp8_cache = false;       // training with FP8 GEMMs: the activations that are their inputs kept in FP8
                                // (layer_activation_bytes)
  bool flash_attention = true;  // fused attention: no s^2 score tensors stored or streamed
  int32_t prompt_tokens = 0;    // inference prompt length; 0 = the model's seq
  int32_t kv_len = 0;           // Decode: tokens already in the KV cache
  int32_t output_tokens = 0;    // Generate, Serve: tokens produced after the prompt
  int32_t ep = 1;               // expert parallelism: each layer's experts split over ep ranks of the DP group
                                // (folded, etp > 0: of the TP x CP x DP ranks after the ETP group)
  EpDispatch ep_dispatch = EpDispatch::AllToAll;
  bool overlap_ep_comm = false; // training: the experts' all-to-alls run while a paired micro-batch computes
                                // (DualPipe; kernels/model.hpp evaluate)
  bool fp8_dispatch = false;    // with FP8 GEMMs: the dispatch all-to-alls carry FP8 (the combines 16 bits)
  double ep_comm_sm_share = 0;  // with overlap_ep_comm: the share of the compute units the all-to-alls'
                                // kernels take while they run (DeepEP: 20 of an H800's 132 SMs)
  int32_t etp = 0;              // expert tensor parallelism (MoE parallel folding): 0, the experts split by tp
                                // and EP inside DP; else each expert split over etp ranks and EP taken from
                                // the TP x CP x DP ranks after them (kernels/model.hpp place_experts)
};

enum class Topology : int8_t { Ring = 0, Switch = 1, FullyConnected = 2 };
enum class Algo : int8_t { Ring = 0, Direct = 1, HalvingDoubling = 2, DoubleBinaryTree = 3 };
enum class Coll : int8_t { AllReduce = 0, AllGather = 1, ReduceScatter = 2, AllToAll = 3 };
constexpr int kNumColls = 4;
enum class Policy : int8_t { LIFO = 0, FIFO = 1 };
enum class MultiDim : int8_t { Baseline = 0, BWAware = 1 };  // BWAware = Themis / ASTRA-sim localBWAware
enum class Convention : int8_t { Physical = 0, AstraSim = 1 };
// Links per NPU that a per-NPU bandwidth is divided over (kernels/space.hpp links_per_npu): the
// study's count (FullyConnected 7 whatever its size) or the physical one (npus - 1).
enum class LinkCount : int8_t { Study = 0, Physical = 1 };
enum class Group : int8_t { TP = 0, CP = 1, DP = 2, PP = 3 };
constexpr int kNumGroups = 4;

struct NetDim {
  Topology topology = Topology::Ring;
  int32_t npus = 1;
  double link_bw_GBps = 0;  // per link, per direction
  double latency_ns = 0;    // per hop
  Algo algo[kNumColls] = {Algo::Ring, Algo::Ring, Algo::Ring, Algo::Ring};  // indexed by Coll
};

// Dollars per GB/s of per-link bandwidth on one tier of the network (kernels/cost.hpp).
struct TierPrice {
  double link_usd_per_GBps = 0;
  double switch_usd_per_GBps = -1;  // < 0: no switch price on this tier (a Switch there: SWITCH_NOT_PRICED)
  double nic_usd_per_GBps = 0;
};
constexpr int kNumTiers = 4;  // chiplet, package, node, pod (kernels/cost.hpp)

struct Network {
  int32_t ndims = 0;
  NetDim dim[kMaxDims] = {};
  int32_t chunks = 4;                  // chunks each collective is split into (pipelined across dims)
  Policy policy = Policy::LIFO;        // accepted for PSA compatibility; see collective.hpp
  MultiDim multidim = MultiDim::BWAware;
  Convention convention = Convention::Physical;
  LinkCount links_per_npu = LinkCount::Study;  // read where a PSA gives per-NPU bandwidth
  bool congestion_aware = true;        // AstraSim convention only
  int32_t active_chunks = 1;           // AstraSim convention: chunks in flight per dimension
  double endpoint_delay_ns = 10;       // per message, at each end
  Group order[kNumGroups] = {Group::TP, Group::CP, Group::DP, Group::PP};  // placement, innermost first
  // Unit prices by tier, chiplet to pod: LIBRA's (shared/reference/cosmic-study.md §4) unless
  // the configuration gives its own (network.prices).
  TierPrice price[kNumTiers] = {{2.0, -1.0, 0.0}, {4.0, 13.0, 0.0}, {4.0, 13.0, 0.0}, {7.8, 18.0, 31.6}};
};

// How one parallel group's ranks lie on the network: k[d] ranks of the group along dimension d,
// `stride[d]` NPUs apart (the product of the inner groups' shares of that dimension).
// Dimensions with k[d] == 1 are not crossed by the group.
struct Span {
  int32_t k[kMaxDims] = {1, 1, 1, 1, 1, 1, 1, 1};
  int32_t stride[kMaxDims] = {1, 1, 1, 1, 1, 1, 1, 1};
};

struct Compute {
  double peak_tflops[3] = {0, 0, 0};  // dense peak by element size: [0] 4-byte, [1] 2-byte, [2] 1-byte
  double mem_bw_GBps = 0;
  double mem_capacity_bytes = 0;
  double price_usd = 0;  // what one NPU costs, with its share of the servers around it; 0: not given
  double power_W = 0;    // what one NPU draws under load, with its share of the servers around it; 0: not given
};

// Where and how long a cluster runs, for the cost of a token (kernels/cost.hpp): none of it has a
// default but the PUE, since prices and lifetimes vary too much to ship one.
struct Operation {
  double pue = 1.0;            // power usage effectiveness: the facility's draw over the IT equipment's
  double usd_per_kWh = 0;      // electricity price; 0: not given
  double lifetime_years = 0;   // years over which the cluster's price is written off; 0: not given
};

// The few efficiency factors that turn peak figures into achieved ones. Each is a physical
// quantity, shared by every configuration on a system (no per-run fitting). The defaults here are
// the ideal machine (peak compute, full bandwidth, as ASTRA-sim assumes); GPU system presets in
// data/systems/ set measured values (docs/model.md).
struct Calibration {
  double gemm_eff_max = 1.0;          // fraction of peak reached by large matrix multiplies
  double gemm_half_flops = 0;         // GEMM size (FLOPs) at which efficiency falls to half of max
  double attn_eff = 1.0;              // attention kernels' efficiency relative to GEMMs
  double fp8_eff = 1.0;               // FP8 GEMMs' efficiency relative to 16-bit ones (casts, scaling)
  double mem_eff = 1.0;               // fraction of memory bandwidth reached by streaming kernels
  double net_eff = 1.0;               // fraction of link bandwidth reached by collectives (Physical)
  double layer_overhead_s = 0;        // fixed cost per layer per pass (kernel launches, syncs)
  double tp_overlap = 0;              // fraction of TP communication hidden behind compute
  double cp_overlap = 0;              // fraction of context-parallel K/V exchange hidden
  double ep_overlap = 0;              // fraction of the experts' all-to-alls hidden (dispatch / combine overlap)
  double dp_overlap = 1.0;            // fraction of a micro-batch's pass that hides the DP sync (0-1)
  double grad_bytes = 2;              // bytes per gradient element (reduced and stored)
  double master_bytes = 12;           // fp32 master weight + 2 Adam moments per parameter
  double optimizer_bytes_per_param = 32;  // bytes the optimizer step reads and writes per parameter
};

// Index into Compute::peak_tflops for an element size: [0] 4-byte, [1] 2-byte, [2] 1-byte.
COSMIC_HD inline int peak_index(int32_t dtype_bytes) { return dtype_bytes >= 4 ? 0 : (dtype_bytes == 2 ? 1 : 2); }

// NPUs of a network: the product over its dimensions, saturating just above kMaxNpus (a larger
// network is invalid input, and the product must not overflow).
COSMIC_HD inline int64_t total_npus(const Network& n) {
  int64_t t = 1;
  for (int32_t i = 0; i < n.ndims; ++i) {
    const int64_t d = n.dim[i].npus;
    if (d < 1) return 0;
    if (t > kMaxNpus / d) return kMaxNpus + 1;
    t *= d;
  }
  return t;
}

struct Config {
  ModelSpec model;
  Workload work;
  Network net;
  Compute compute;
  Calibration cal;
  Operation op;
};

// Why a configuration cannot run. Ok = feasible. Codes are stable: they are written to result files.
enum class Reason : int32_t {
  Ok = 0,
  InvalidInput = 1,        // a non-positive size, bandwidth, peak, ...
  ProductMismatch = 2,     // dp*tp*pp*cp != NPUs of the network
  TpExceedsHeads = 3,      // more tensor-parallel ranks than attention heads
  HeadsNotDivisible = 4,   // heads (or FFN width) not divisible by tp
  BatchNotDivisible = 5,   // global batch not divisible by dp * micro_batch
  LayersNotDivisible = 6,  // layers not divisible by pp (* vpp when interleaved)
  SeqNotDivisible = 7,     // sequence not divisible by cp (or by tp with sequence parallelism;
                           // decode: micro-batch not divisible by tp with sequence parallelism)
  PlacementMismatch = 8,   // a parallel group cannot be laid onto the network dimensions (or ep onto dp)
  OutOfMemory = 9,         // peak memory per NPU exceeds capacity
  SwitchNotPriced = 10,    // a Switch on an unpriced tier (LIBRA's chiplet) in a space that reads the cost; timed
  ExpertsNotDivisible = 11,  // ep > 1 does not divide the experts per layer (or the model has none)
  LimitExceeded = 12,      // feasible for the model, but over a limit of the design space (PSA `limits:`)
};
constexpr int kNumReasons = 13;

struct Result {
  Reason reason = Reason::Ok;
  // time, seconds; the breakdown terms add up to time_s
  double time_s = 0;
  double forward_s = 0, backward_s = 0, recompute_s = 0, optimizer_s = 0;
  double tp_comm_s = 0, cp_comm_s = 0, dp_comm_s = 0, pp_comm_s = 0, bubble_s = 0;
  double ep_comm_s = 0;        // expert parallelism's token all-to-alls (mixture of experts)
  // memory per NPU, bytes (worst pipeline stage); the parts add up to memory_bytes
  double weights_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, activation_bytes = 0, kv_cache_bytes = 0;
  double memory_bytes = 0;
  double network_cost_usd = 0;
  double model_flops = 0;      // useful FLOPs per iteration (no recompute), whole model
  double tokens_per_s = 0;
  double mfu = 0;              // model_flops / (time * NPUs * peak)
  double first_token_s = 0;    // inference: time to the first output token (generate: its prefill; serve:
                               // a prefill and half a cycle; prefill: its time); else 0
};

static_assert(std::is_trivially_copyable<Config>::value, "Config must be trivially copyable");
static_assert(std::is_trivially_copyable<Result>::value, "Result must be trivially copyable");

}  // namespace cosmic
