// The cosmic analytical model: one configuration in, time / memory / cost out.
//
// Header-only, host and device (COSMIC_HD), no allocation, no exceptions: the same function
// scores one configuration for `cosmic eval` and billions in the batch evaluators.
//
// Structure (per NPU, worst pipeline stage; sources in each function's comment):
//   iteration = m x t_mb + bubble + exposed DP sync + optimizer step          (training)
//   t_mb      = stage layers x (forward + backward + recompute + exposed TP, CP and EP communication)
//               (a mixture of experts with dense layers: each kind's layers of the worst stage)
//               + logits and the output layer's TP collectives (last stage; the embedding's
//               too when pp = 1) + pipeline p2p + exposed ZeRO-3 gathers
//   bubble    = (pp - 1) / v x t_mb    (1F1B and GPipe: v = 1; interleaved: v chunks; DualPipe:
//               (pp / 2 - 1) (t_mb + B - 3 W), evaluate)
// Each GEMM and the attention core are timed with a roofline: max(FLOPs / (peak x eff),
// bytes / (memory bandwidth x mem_eff)); eff grows with GEMM size, eff = max x f / (f + half).
// The whole depth of the model is modelled (every layer of every stage), not a slice.
#pragma once

#include <cmath>

#include "kernels/collective.hpp"
#include "kernels/cost.hpp"
#include "kernels/hd.hpp"
#include "kernels/types.hpp"

namespace cosmic {

// The model's revision: bumped by every change that alters any evaluation's result (a time, a
// memory or cost figure, a verdict). Result files record it, and --resume, cosmic merge and a
// study's reuse of a finished run refuse a file of another revision rather than mix two models.
// 2: the embedding and output layer's tensor-parallel collectives, tied-embedding gradients
//    (none but development builds of 2026-12-01 wrote files of revision 2 with another model).
// 3: multi-dimensional collectives timed by each dimension's flow-shop bound (localBWAware);
//    pipeline messages under the ASTRA-sim convention in its units; context-parallel K / V
//    gathered again in backward under full recompute; efficiencies capped at the peak; fp32
//    training's gradient and optimizer bytes; inference ignores interleaving; unfused decode
//    scores over the rank's share of the cache.
// 4: K / V weights replicated when tp exceeds the KV heads counted in every per-rank parameter
//    figure (weights, gradients, optimizer state, DP traffic); ZeRO-3 gathers one layer ahead
//    only where the stage holds two; a dimension of one NPU has no links and costs nothing.
// 5: ZeRO-3's weight gathers and gradient reduce-scatters hidden by the usable fraction
//    dp_overlap of each pass, the fraction that hides the other data-parallel traffic (they
//    took the whole pass); the same as before where dp_overlap is 1 (the ideal machine, the
//    COSMIC study's systems).
//    A derived TP that does not divide (tp 0) is PRODUCT_MISMATCH, not INVALID_INPUT.
// 6: the network cost rounded to whole cents (kernels/cost.hpp), so that costs equal but for the
//    rounding of per-link bandwidths given per NPU compare equal; ep not dividing the experts is
//    EXPERTS_NOT_DIVISIBLE (was HEADS_NOT_DIVISIBLE). (The DGX and GB200 presets'
//    direct all-to-all of the same day is a change of data: the base configuration a result
//    file records shows it.)
// 7: network cost: a dimension of one NPU takes no tier, so the others are priced as in the
//    network without it (a padding dimension moved them a tier in); unit prices may be given
//    (network.prices; LIBRA's by default); a SWITCH_NOT_PRICED point is timed, as an
//    out-of-memory one, so the groups' placement is checked first (an unpriced point whose
//    groups cannot be placed is PLACEMENT_MISMATCH, was SWITCH_NOT_PRICED). Mixture of experts:
//    a pass reads the experts its tokens reach in expectation (experts_reached), not the most
//    they could reach.
// 8: inference holds one layer's live tensors (inference_activation_bytes), not the activations
//    a training backward keeps (about half as much in prefill); the logits' all-gather of an
//    inference pass is of its own micro-batch; FP8 inference holds its embedding and output
//    layer in 16 bits. Mode serve (continuous batching) added. Training unchanged.
// 9: mixture of experts with tensor parallelism: a rank keeps the routed copies its expert
//    slices take as input, gathered over the experts' TP group (D T h top_k e / t; was the copies
//    before the gather, D T h top_k / t), and the backward pass does not gather them again (one
//    all-gather a layer less). workload.etp (MoE parallel folding), workload.ep_dispatch
//    (dedup) and calibration.ep_overlap added; their defaults give every other result as
//    revision 8 did. Dense models and MoE without TP unchanged.
// 10: multi-head latent attention with a query latent under tensor parallelism: the attention's
//    input-side collectives carry the latents and the RoPE key (was the layer's input), the
//    down-projections run on the rank's T / t tokens under sequence parallelism, the latents'
//    norm inputs are held. (Dense layers among the expert layers and MLA came with the last
//    builds of revision 9.) Group-limited routing (model keys expert_groups, groups_per_token)
//    added: the DeepSeek-V3 preset uses it. workload.overlap_ep_comm and schedule dualpipe
//    added. ep_dispatch dedup counts nodes as the network's innermost dimension (it found none
//    where the EP group had one rank a node). Every other result unchanged.
// 11: uneven stages split the layers over the model chunks as evenly as they go (the heaviest
//    stage holds ceil(layers / pp)); with interleaving each chunk was taken as holding
//    ceil(layers / (pp vpp)), up to twice the layers (Llama 3 405B on 16 x 7 chunks: 14 layers
//    a stage for 8). The pipeline bubble holds no gradient reduce-scatter (ZeRO-2's each
//    micro-batch, ZeRO-3's after its gathers): with two micro-batches ZeRO-2 took pp - 1
//    scatters more than with one. With overlap_ep_comm, a micro-batch bound by its all-to-alls
//    stretches the windows that hide data-parallel traffic; DualPipe's B and W stretch as t_mb
//    does (a faster NPU made both slower). Selective recompute without flash attention holds one
//    layer's scores again. Every other result unchanged (validate's 52 rows too).
// 12: a training step of a mixture with dense layers is timed on the slower of its two candidate
//    stages (most expert layers, most dense layers), not the one with the dearer layers, whose
//    parameters could be far fewer; ep_dispatch dedup's node is the innermost dimension of more
//    than one NPU (a one-NPU dimension below it was taken as the node). recompute_layers added
//    (0, every layer, as before). The shipped configurations and validate unchanged.
// 13: collectives, Physical convention (a review's hand checks): a group within one dimension
//    is sent whole (its chunks paid the latency once each: a decode step's tensor-parallel
//    all-reduces took network.chunks times theirs); localBWAware's all-reduce is also bounded by
//    one chunk's phases + (chunks - 1) x its longest phase (the bound by its last chunk; it was
//    up to 16% below the flow shop on three or more dimensions); halving-doubling partners half
//    a Ring apart send both ways round; a double binary tree of 2 ranks takes the ring's time
//    (it took twice that). The astra-sim convention and the presets' results (chunks 1, Switch
//    dimensions) unchanged; the COSMIC study's systems (chunks 4, Ring dimensions) move.
// 14: training memory is the larger of the first stage's and the last stage's, which holds
//    fewer micro-batches (1F1B one, interleaved ((v - 1) pp + 1) / v stages' worth, GPipe all)
//    and their fp32 logits (4 T V / t each; the first stage's alone was counted when pp > 1, so
//    a large vocabulary over few micro-batches in flight came out low: Llama 4 Maverick's
//    preset 8.9%). GPipe keeps every micro-batch's logits (it kept one with pp = 1). A tp that
//    neither divides the KV heads nor is a multiple of them is HEADS_NOT_DIVISIBLE (ranks were
//    given fractions of a KV head). A Switch on an unpriced tier leaves the network cost
//    undefined (NaN) and the point feasible; only a design space whose objectives, limits or
//    constraints read the cost makes it SWITCH_NOT_PRICED (score_config; every point was).
// 15: model key `dropout` (default: with a GELU MLP, as GPT's recipes; none with SwiGLU, as
//    Llama's): without it the activations keep no dropout masks (4D T h whole, was (4D + 2) T h)
//    and unfused attention keeps D per score (was 2D + 1) and streams 4D (was 6D + 1). ZeRO-2 and
//    ZeRO-3 hold one unit's whole gradient before its reduce-scatter (a layer, or the embedding
//    or output layer), and ZeRO-3 gathers the embedding or output layer with one layer beside it
//    (stage_memory). Validate's rows unchanged (their SwiGLU runs use fused attention).
// 16: workload.recompute_modules (what selective recompute drops and runs again: core_attn, as
//    before, layernorm, mla_up_proj, mlp_act) and workload.fp8_cache (FP8 GEMMs' inputs kept in
//    FP8), DeepSeek-V3's memory recipe (layer_activation_bytes, layer_time), and
//    workload.ep_comm_sm_share (the compute units overlapped all-to-alls take) and
//    workload.fp8_dispatch (the experts' dispatches in FP8); the DeepSeek-V3
//    configuration uses them instead of full recompute. Their defaults give every other result
//    as revision 15 did.
// 17: partial full recompute whose every model chunk keeps a layer (recompute_layers below
//    the fewest layers a chunk holds) no longer adds the rebuilt layer's whole activations: the
//    chunk's recomputed layers are its first, rebuilt after its other layers freed theirs
//    (stage_memory). One recomputed layer had come out above no recompute, by that layer. On
//    the last stage the rebuilt layer (or selective recompute's scores) takes the place of the
//    logits its micro-batch frees first, where both were added (DualPipe still adds both).
constexpr int64_t kModelRevision = 17;

// ---------------------------------------------------------------------------------------------
// Placement of parallel groups on network dimensions.
// Groups are laid out in net.order, innermost first (default TP, CP, DP, PP). Each group takes
// NPUs from the innermost dimensions that still have room; a group may take part of a dimension
// (k < npus) or span several. A share must divide evenly, otherwise PlacementMismatch; `why`,
// when given, then says where (for reports).
struct PlaceFailure {
  int32_t group = -1;  // Group number of the group that could not be laid
  int32_t dim = -1;    // the dimension it could not share
  int32_t size = 0;    // of its degree, what was still to place there
  int32_t room = 0;    // the dimension's NPUs not yet taken by the groups placed before
};
// The degree of group g (a Group number: TP, CP, DP, PP).
COSMIC_HD inline int32_t group_degree(const Workload& w, int g) {
  const int32_t degree[kNumGroups] = {w.tp, w.cp, w.dp, w.pp};
  return degree[g];
}

COSMIC_HD inline Reason place_groups(const Network& net, const Workload& w, Span out[kNumGroups],
                                     PlaceFailure* why = nullptr) {
  int32_t remaining[kMaxDims];
  for (int32_t i = 0; i < net.ndims; ++i) remaining[i] = net.dim[i].npus;
  for (int32_t gi = 0; gi < kNumGroups; ++gi) {
    const int g = int(net.order[gi]);
    int32_t size = group_degree(w, g);
    out[g] = Span{};
    for (int32_t i = 0; i < net.ndims && size > 1; ++i) {
      const int32_t r = remaining[i];
      if (r <= 1) continue;
      int32_t take;
      if (r % size == 0) take = size;
      else if (size % r == 0) take = r;
      else {
        if (why) *why = PlaceFailure{g, i, size, r};
        return Reason::PlacementMismatch;
      }
      out[g].k[i] = take;
      out[g].stride[i] = net.dim[i].npus / r;
      remaining[i] = r / take;
      size /= take;
    }
    if (size != 1) return Reason::ProductMismatch;
  }
  return Reason::Ok;
}

// The outermost network dimension a group's span takes more than one rank of; -1 for none.
COSMIC_HD inline int32_t outermost_dim(const Span& s, int32_t ndims) {
  for (int32_t i = ndims - 1; i >= 0; --i)
    if (s.k[i] > 1) return i;
  return -1;
}

// The union of two groups' spans (e.g. DP x CP, which hold the same weights and reduce
// gradients together). Approximation: the merged group in a dimension is as dense as the denser.
COSMIC_HD inline Span merge_spans(const Span& a, const Span& b) {
  Span m;
  for (int32_t i = 0; i < kMaxDims; ++i) {
    m.k[i] = a.k[i] * b.k[i];
    m.stride[i] = a.k[i] > 1 && b.k[i] > 1 ? (a.stride[i] < b.stride[i] ? a.stride[i] : b.stride[i])
                                            : (a.k[i] > 1 ? a.stride[i] : b.stride[i]);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Parameter and FLOP counts.

// Width of the attention's queries and of its output, a x head width: h unless the model gives
// heads a width of their own (Qwen3, Gemma: head_dim x a need not be h).
COSMIC_HD inline double q_width(const ModelSpec& m) {
  return m.head_dim > 0 ? double(m.heads) * m.head_dim : double(m.hidden);
}

// Multi-head latent attention (MLA; DeepSeek-V2, DeepSeek-AI 2024; V3): each token's keys and
// values are up-projected from a latent c_kv of kv_lora_rank (r_kv) values, with one RoPE key of
// rope_head_dim (d_r) shared by the heads; queries from a latent of q_lora_rank (r_q; from the
// input when 0). A head's query and key are d_n + d_r wide (d_n = head_dim, or h / a), its value
// d_v (v_head_dim, or d_n). Parameters: down-projections h r_q and h (r_kv + d_r), held whole by
// every tensor-parallel rank (Megatron-LM's MLA splits only the per-head up-projections and the
// output), with norms of r_q and r_kv; up-projections r_q a (d_n + d_r) (h a (d_n + d_r) without a
// query latent) and r_kv a (d_n + d_v); output a d_v h. DeepSeek-V3 (h 7168, a 128, r_q 1536,
// r_kv 512, d_n 128, d_r 64, d_v 128): 187,105,280 a layer, its KV cache 576 values a token a
// layer (kept whole on every TP rank), against 2 x 128 x 128 for its heads' keys and values.
COSMIC_HD inline bool mla(const ModelSpec& m) { return m.kv_lora_rank > 0; }
COSMIC_HD inline double head_width(const ModelSpec& m) {
  return m.head_dim > 0 ? double(m.head_dim) : double(m.hidden) / m.heads;
}
COSMIC_HD inline double mla_qk_width(const ModelSpec& m) { return head_width(m) + m.rope_head_dim; }  // a head's
COSMIC_HD inline double mla_v_width(const ModelSpec& m) { return m.v_head_dim > 0 ? double(m.v_head_dim) : head_width(m); }
// With a query latent (r_q > 0) every projection of the attention's input is a down-projection
// held whole on every TP rank, so tensor parallelism moves the latents and the RoPE key, r_q + r_kv
// + d_r a token, instead of the layer's input (layer_comm); without one the queries need the input.
COSMIC_HD inline double mla_latent_width(const ModelSpec& m) {
  return mla(m) && m.q_lora_rank > 0 ? double(m.q_lora_rank) + m.kv_lora_rank + m.rope_head_dim : 0.0;
}
COSMIC_HD inline double mla_down_params(const ModelSpec& m) {  // whole on every TP rank, with the norms
  const double h = m.hidden, rq = m.q_lora_rank, rkv = m.kv_lora_rank;
  return (rq > 0 ? h * rq + rq : 0.0) + h * (rkv + m.rope_head_dim) + rkv;
}
COSMIC_HD inline double mla_matmul_params(const ModelSpec& m) {  // every projection's weights
  const double h = m.hidden, a = m.heads, rq = m.q_lora_rank, rkv = m.kv_lora_rank, dv = mla_v_width(m);
  return (rq > 0 ? h * rq : 0.0) + h * (rkv + m.rope_head_dim) + (rq > 0 ? rq : h) * a * mla_qk_width(m) +
         rkv * a * (head_width(m) + dv) + a * dv * h;
}

// Tokens of an inference prompt: the workload's prompt_tokens, else the model's sequence length.
COSMIC_HD inline int32_t prompt_tokens(const ModelSpec& m, const Workload& w) {
  return w.prompt_tokens > 0 ? w.prompt_tokens : m.seq;
}

// Serve: the sequences of a replica that finish each decode step on average, and so the new
// prompts prefilled between steps: k = (global_batch / dp) / output_tokens (evaluate()).
COSMIC_HD inline double serve_new_prompts(const Workload& w) { return double(w.global_batch) / w.dp / w.output_tokens; }
// ...prefilled in batches of max(1, k) prompts.
COSMIC_HD inline double serve_prefill_batch(const Workload& w) {
  const double k = serve_new_prompts(w);
  return k > 1 ? k : 1.0;
}

// Experts of a rank's `local` that a pass reaches: the EP group's `tokens` (tokens per rank x
// ep) each routed to top_k of the layer's E experts, uniformly at random (the balanced routing
// the model assumes), reach local x (1 - (1 - k / E)^tokens) of them in expectation: 2 of 8 for
// one token of Mixtral's top-2, 3.5 for two, all 8 (to the last bit) from a few hundred. Only
// those experts' weights are read. (Model revision 7; before, min(local, tokens x k), the most
// a pass could reach, which over-counted small decode batches by up to 46%.)
// The power is taken by repeated squaring over the token count rounded to a whole number, with
// multiplications only (libm's and CUDA's pow differ in the last bit, and the backends must
// agree bit for bit); below 2^-60 it is 0, as it underflows on the way.
COSMIC_HD inline double experts_reached(const ModelSpec& m, double local, double tokens) {
  double miss = 1, base = 1 - double(m.top_k) / m.experts;  // a token misses a given expert
  for (uint64_t n = uint64_t(tokens + 0.5); n > 0 && miss > 0x1p-60; n >>= 1) {
    if (n & 1) miss *= base;
    base *= base;
  }
  return local * (1 - (miss > 0x1p-60 ? miss : 0.0));
}

// F-wide MLPs each token passes through in a layer: 1 in a dense model; top_k routed experts
// and the shared ones in a mixture of experts.
COSMIC_HD inline double mlps_per_token(const ModelSpec& m) {
  return m.experts > 0 ? double(m.top_k) + m.shared_experts : 1.0;
}

// Mixture of experts with dense layers among the expert layers (ModelSpec::first_dense_layers,
// moe_layer_step): layer i (from 0) holds experts when i >= first_dense_layers and (i + 1) is a
// multiple of moe_layer_step (DeepSeek-V3: the first 3 of 61 dense; Llama 4 Maverick: every
// second layer, the odd ones), one dense MLP of dense_ffn otherwise.
COSMIC_HD inline bool has_dense_layers(const ModelSpec& m) {
  return m.experts > 0 && (m.first_dense_layers > 0 || m.moe_layer_step > 1);
}
// Expert layers among layers 0 .. x - 1: the multiples of the step in first_dense_layers + 1 .. x.
COSMIC_HD inline int64_t moe_layers_below(const ModelSpec& m, int64_t x) {
  return x > m.first_dense_layers ? x / m.moe_layer_step - m.first_dense_layers / m.moe_layer_step : 0;
}
// Layers of the model's own kind: every layer of a dense model, the expert layers of a mixture.
COSMIC_HD inline double main_layers(const ModelSpec& m) {
  return has_dense_layers(m) ? double(moe_layers_below(m, m.layers)) : double(m.layers);
}
// A dense layer of a mixture of experts: the same attention and one MLP of dense_ffn (ffn when 0).
COSMIC_HD inline ModelSpec dense_layer_model(const ModelSpec& m) {
  ModelSpec d = m;
  d.experts = 0;
  d.top_k = 1;
  d.shared_experts = 0;
  d.first_dense_layers = 0;
  d.moe_layer_step = 1;
  d.ffn = m.dense_ffn > 0 ? m.dense_ffn : m.ffn;
  return d;
}

// Tensor parallelism of the routed experts: etp where the layout folds them (Megatron's MoE
// parallel folding, Liu et al. 2025: the experts take their own layout, ETP x EP x EDP, over the
// TP x CP x DP ranks of a pipeline stage), else the attention's tp.
COSMIC_HD inline int32_t expert_tp(const Workload& w) { return w.etp > 0 ? w.etp : w.tp; }

// Ranks of a stage holding the same slice of the same experts, which reduce their gradients
// together and share their ZeRO shards: the TP x CP x DP ranks over the expert_tp x ep that split
// the experts (without folding, the DP x CP ranks over ep).
COSMIC_HD inline double expert_replicas(const Workload& w) {
  return double(w.dp) * w.cp * w.tp / (double(w.ep) * expert_tp(w));
}

// Mixture of experts: the routed copies a rank's expert slices take as input (and keep for the
// weight gradients), gathered over the experts' TP group, bytes, for T tokens a TP group:
// D T h top_k e / t (e = expert_tp; model revision 9). 0 in a dense model.
COSMIC_HD inline double expert_input_bytes(const ModelSpec& m, const Workload& w, double D, double T) {
  return m.experts > 0 ? D * T * m.hidden * m.top_k * (expert_tp(w) / double(w.tp)) : 0.0;
}

// Parameters of one MLP (one expert of a mixture-of-experts layer): nmat matrices of h x F, with
// biases (nmat - 1) F + h.
COSMIC_HD inline double mlp_params(const ModelSpec& m) {
  const double nmat = m.mlp == Mlp::SwiGLU ? 3 : 2;
  return nmat * double(m.hidden) * m.ffn + (m.biases ? (nmat - 1) * m.ffn + m.hidden : 0.0);
}

// Parameters of one transformer layer (whole layer, before tensor parallelism).
// Attention: Q and output projections h q each, K and V h q g/a each (GQA with g KV heads; q =
// q_width, h unless the heads have a width of their own);
// MLP: 2 (GELU) or 3 (SwiGLU) matrices of h x F; LayerNorm scales 2h. With biases (GPT):
// QKV h (1 + 2g/a), output h, MLP F + h, LayerNorm shifts 2h. For GPT (g = a, F = 4h) this is
// 12 h^2 + 13 h, Narayanan et al. 2021's per-layer count. A mixture-of-experts layer (Shazeer
// et al. 2017; Mixtral: Jiang et al. 2024) holds `experts` such MLPs and a router of h x experts,
// and `shared_experts` MLPs more that every token passes through (DeepSeekMoE, Dai et al. 2024).
COSMIC_HD inline double layer_params(const ModelSpec& m) {
  const double h = m.hidden, F = m.ffn, kv = double(m.kv_heads) / m.heads, q = q_width(m);
  const double nmat = m.mlp == Mlp::SwiGLU ? 3 : 2;
  double p = (mla(m) ? mla_matmul_params(m) + m.q_lora_rank + m.kv_lora_rank : h * q * (2 + 2 * kv)) + nmat * h * F + 2 * h;
  if (m.biases) p += q * (1 + 2 * kv) + h + (nmat - 1) * F + h + 2 * h;  // QKV, proj, MLP up (gate), down, LNs
  if (m.experts > 0) p += (m.experts - 1 + m.shared_experts) * mlp_params(m) + h * m.experts;  // other experts, router
  return p;
}

// Parameters of one layer that a rank of the expert-parallel group holds: the layer's with its
// experts / ep experts instead of all of them (before tensor parallelism).
COSMIC_HD inline double rank_layer_params(const ModelSpec& m, const Workload& w) {
  return m.experts > 0 ? layer_params(m) - (m.experts - m.experts / w.ep) * mlp_params(m) : layer_params(m);
}

// The input embedding's parameters, V h, and as many in an untied output projection.
COSMIC_HD inline double vocab_layer_params(const ModelSpec& m) { return double(m.vocab) * m.hidden; }

// Whole-model parameters: layers (expert and dense ones apart), input embedding V h, plus an
// output projection when untied.
COSMIC_HD inline double model_params(const ModelSpec& m) {
  double p = main_layers(m) * layer_params(m);
  if (has_dense_layers(m)) p += (m.layers - main_layers(m)) * layer_params(dense_layer_model(m));
  return p + vocab_layer_params(m) * (m.tied_embeddings ? 1 : 2);
}

// Parameters a token passes through (a mixture's "active" parameters): all but the experts it
// is not routed to, experts - top_k of each expert layer. The whole model when dense.
COSMIC_HD inline double active_params(const ModelSpec& m) {
  return m.experts > 0 ? model_params(m) - main_layers(m) * (m.experts - m.top_k) * mlp_params(m) : model_params(m);
}

// MLA's attention FLOPs a layer: every projection once per token; scores over d_n + d_r, values
// d_v wide.
COSMIC_HD inline double mla_layer_forward_flops(const ModelSpec& m, double s_q, double s_kv) {
  return 2 * s_q * mla_matmul_params(m) + 2 * s_q * s_kv * m.heads * (mla_qk_width(m) + mla_v_width(m));
}

// Forward FLOPs of one sequence of s_q query tokens attending to s_kv keys, whole model
// (2 FLOPs per multiply-add). Per layer: QKV 2 s h (q + 2 q g/a), output 2 s h q, MLP
// 2 nmat s h F, attention scores and values 4 s_q s_kv q; logits 2 s_q h V (q = q_width = h
// unless the heads have a width of their own). For GPT with
// s_q = s_kv = s this is 24 s h^2 + 4 s^2 h per layer (Narayanan et al. 2021); 3x it gives
// the model-FLOPs formula 72 B s L h^2 (1 + s/(6h) + V/(12 L h)); for Llama it is the NVIDIA
// recipe convention s [12 L h^2 (1 + g/a + s/h) + 18 L F h + 6 V h] / 3. Mixture of experts:
// each token passes through top_k expert MLPs and the shared ones, after the router's 2 s h
// experts; a dense layer among them through one MLP of dense_ffn.
COSMIC_HD inline double layer_forward_flops(const ModelSpec& m, double s_q, double s_kv) {
  const double h = m.hidden, F = m.ffn, kv = double(m.kv_heads) / m.heads, q = q_width(m);
  const double nmat = m.mlp == Mlp::SwiGLU ? 3 : 2;
  const double mlps = mlps_per_token(m);
  double layer = 2 * s_q * h * q * (1 + 2 * kv) + 2 * s_q * h * q + 2 * nmat * s_q * h * F * mlps + 4 * s_q * s_kv * q;
  if (mla(m)) layer = mla_layer_forward_flops(m, s_q, s_kv) + 2 * nmat * s_q * h * F * mlps;
  if (m.experts > 0) layer += 2 * s_q * h * m.experts;  // router
  return layer;
}
COSMIC_HD inline double forward_flops_per_sequence(const ModelSpec& m, double s_q, double s_kv, double logit_tokens) {
  double f = main_layers(m) * layer_forward_flops(m, s_q, s_kv);
  if (has_dense_layers(m)) f += (m.layers - main_layers(m)) * layer_forward_flops(dense_layer_model(m), s_q, s_kv);
  return f + 2 * logit_tokens * double(m.hidden) * m.vocab;
}

// Bytes per element of what is stored and communicated (activations, gradients exchanged by
// tensor and pipeline parallelism, KV cache, training weights). FP8 training (Transformer Engine
// style, as in the NVIDIA recipes) runs only the GEMMs in FP8: activations, attention,
// communication and the weights' master copy stay 16-bit. So dtype_bytes = 1 means 1-byte GEMM
// operands at the FP8 peak, 2-byte everything else.
COSMIC_HD inline double act_bytes(const ModelSpec& m) { return m.dtype_bytes < 2 ? 2.0 : double(m.dtype_bytes); }

// Width of K (or V) held per tensor-parallel rank: g/t KV heads, at least one (KV heads are
// replicated when t > g, as Megatron does).
COSMIC_HD inline double kv_width_per_rank(const ModelSpec& m, int32_t tp) {
  const double head_dim = m.head_dim > 0 ? double(m.head_dim) : double(m.hidden) / m.heads;
  const double kv_heads = double(m.kv_heads) / tp;
  return (kv_heads < 1 ? 1 : kv_heads) * head_dim;
}

// K and V projection parameters a tensor-parallel rank holds beyond its 1/t share of a layer's:
// with t > g each rank keeps a whole KV head (kv_width_per_rank), replicated over t / g ranks.
// 0 when t <= g (an even split). MLA: the down-projections, which every rank holds whole.
COSMIC_HD inline double kv_replica_params(const ModelSpec& m, int32_t tp) {
  if (mla(m)) return mla_down_params(m) * (1 - 1.0 / tp);  // MLA's down-projections: whole on every rank
  if (m.kv_heads >= tp) return 0.0;
  const double h = m.hidden, kv_width = double(m.kv_heads) * q_width(m) / m.heads, per_rank = kv_width_per_rank(m, tp);
  return (2 * h + (m.biases ? 2 : 0)) * (per_rank - kv_width / tp);
}

// Bytes kept per attention score for the backward pass (unfused attention): the softmax output
// D, and with dropout its 1-byte mask and its output D (Korthikanti et al. 2022 §4).
COSMIC_HD inline double score_bytes(const ModelSpec& m) {
  const double D = act_bytes(m);
  return m.dropout ? 2 * D + 1 : D;
}

// What selective recompute drops in training (Workload::recompute_modules), none without it.
COSMIC_HD inline uint8_t recomputed_modules(const Workload& w) {
  return w.recompute == Recompute::Selective ? w.recompute_modules : uint8_t(0);
}

// ---------------------------------------------------------------------------------------------
// Activation memory of one transformer layer for one micro-batch, bytes per NPU.
// Korthikanti et al. 2022 §4, generalised to GQA / SwiGLU and to sharded sequences. With
// T = b s_q tokens, D bytes per element, 1-byte dropout masks:
//   kept whole (split by t only with sequence parallelism): two LayerNorm inputs 2DTh, their
//     outputs (the QKV input DTh and the MLP input DTh), two dropout masks 2Th -> (4D + 2) T h = 10 sbh
//   split by t: Q D T q, K and V D T q g/a each, output-projection input D T q (q = q_width),
//     MLP activation inputs D T F (nmat - 1) and output D T F    -> 24 sbh / t for GPT
//   attention scores (skipped by selective recompute and fused attention):
//     softmax output D, dropout mask 1, dropout output D per score -> 5 a s^2 b / t
//   a model trained without dropout (m.dropout false: Llama-style recipes, Megatron's
//     --hidden-dropout 0 --attention-dropout 0) keeps no masks and no dropout output: 4D T h
//     whole, and D per score (the softmax output, which the backward of PV and of the softmax read).
//   full recompute keeps only the layer input: D T h (/ t with sequence parallelism).
//   mixture of experts: the MLP terms for each of the top_k experts a token visits and each
//     shared expert, plus the routed copies the rank's experts take as input, D T h top_k e / t
//     (e = expert_tp: the copies gathered over the experts' TP group, kept for the weight
//     gradients; model revision 9, before D T h top_k / t, the copies before the gather).
// Selective recompute drops what its modules compute again (recompute_modules; Megatron-Core's
// names; DeepSeek-V3 §3.2.3 and §3.3.3 describe its recipe): core_attn the scores; layernorm every
// norm's output (the QKV and MLP inputs, and MLA's normed latents); mla_up_proj MLA's queries,
// keys and values (the queries projected from the input where there is no query latent, as
// Megatron-Core recomputes them too); mlp_act the
// activation function's output (the down-projection's input). fp8_cache (training with FP8
// GEMMs, DeepSeek-V3's "low-precision storage", §3.3.3) keeps in 1 byte the GEMMs' inputs (QKV and MLP
// inputs, MLA's normed latents, the output projection's input, the routed copies, the
// down-projection's input) and the MLP activation function's inputs; the norms' inputs (the
// residual stream), the attention core's Q, K, V and scores and the RoPE key stay D.
// Cross-check: GPT-22B, s 2048, b 4, t 8 -> 59.25 GiB over 48 layers (TP only), 9.56 GiB with
// sequence parallelism + selective recompute.
COSMIC_HD inline double layer_activation_bytes(const ModelSpec& m, const Workload& w, double b, double s_q, double s_kv) {
  const double h = m.hidden, F = m.ffn, D = act_bytes(m), t = w.tp;
  const double T = b * s_q;
  const double sp_div = w.seq_parallel ? t : 1.0;
  if (w.recompute == Recompute::Full) return D * T * h / sp_div;
  const uint8_t dropped = recomputed_modules(w);
  const double G = w.fp8_cache ? 1.0 : D;  // a GEMM input's bytes
  const bool norms_kept = !(dropped & kRecomputeLayerNorm), up_kept = !(dropped & kRecomputeMlaUpProj);
  const double nmat = m.mlp == Mlp::SwiGLU ? 3 : 2;
  const double kv_width = kv_width_per_rank(m, w.tp);
  const double whole = (2 * D + (norms_kept ? 2 * G : 0.0) + (m.dropout ? 2 : 0)) * T * h / sp_div;
  // Mixture of experts: the F-wide activations of each of the top_k experts a token visits and
  // of the shared experts, and the routed copies the rank's expert slices take as input.
  const double mlp = G * T * F * (dropped & kRecomputeMlpAct ? nmat - 1 : nmat) / t * mlps_per_token(m);
  // (Written as the 16-bit count less what fp8_cache and the modules save: the same sums as
  // before them where neither applies.)
  double split = D * T * (2 * q_width(m) / t + 2 * kv_width) - (D - G) * T * q_width(m) / t + mlp;
  if (mla(m)) {  // per head of the a / t: Q and K (d_n + d_r), V and the output-projection input
                 // (d_v); the normed latents (the up-projections' inputs) and the RoPE key, whole on
                 // every rank, and the latents before their norms (on the rank's T / t tokens where
                 // gathered after)
    const double a_t = double(m.heads) / t, rq = m.q_lora_rank, rkv = m.kv_lora_rank;
    const double qk = mla_qk_width(m), dv = mla_v_width(m);
    const double saved = (D - G) * a_t * dv + (up_kept ? 0.0 : D * a_t * (2 * qk + dv)) +
                         (norms_kept ? (D - G) * (rq + rkv) : D * (rq + rkv));
    split = D * T * (a_t * 2 * (qk + dv) + rq + rkv + m.rope_head_dim) - T * saved +
            D * T * (rq + rkv) / (mla_latent_width(m) > 0 ? sp_div : 1.0) + mlp;
  }
  split += expert_input_bytes(m, w, G, T);
  const bool scores_kept = !w.flash_attention && !(dropped & kRecomputeCoreAttn);
  const double scores = scores_kept ? score_bytes(m) * b * (double(m.heads) / t) * s_q * s_kv : 0.0;
  return whole + split + scores;
}

// Working activation memory of one transformer layer's forward in inference, bytes per NPU,
// for a micro-batch of b sequences of s_q query tokens (T = b s_q) attending to s_kv keys:
// nothing is kept for a backward pass, so what is live is the layer's input (kept for the
// residual, D T h, / t with sequence parallelism) and the larger of its two blocks' live
// tensors:
//   attention: the normalised input D T h and the Q, K, V projections D T (q / t + 2 kv_width)
//     (the new keys and values are then copied into the KV cache, counted apart), with unfused
//     attention the scores and their softmax, 2 D b (a / t) s_q s_kv;
//   MLP: the normalised input D T h and the nmat F-wide products D T F nmat / t (GeLU: the first
//     GEMM's output and its activation; SwiGLU: gate, up and their product), for each expert a
//     token visits and each shared expert, plus the routed copies the rank's expert slices take,
//     D T h top_k e / t (e = expert_tp);
// and, on the last stage, the next tokens' logits D b V / t. An engine's buffers (NCCL, CUDA
// graphs, allocator slack) are not counted (docs/model.md). Llama 3.1 70B at t = 8: 27,136
// elements a token, 54 KB in 16 bits, where the training count (layer_activation_bytes, what
// a backward pass needs kept) is twice that.
COSMIC_HD inline double inference_activation_bytes(const ModelSpec& m, const Workload& w, double b, double s_q,
                                                   double s_kv) {
  const double h = m.hidden, D = act_bytes(m), t = w.tp, T = b * s_q;
  const double nmat = m.mlp == Mlp::SwiGLU ? 3 : 2;
  const double input = D * T * h / (w.seq_parallel ? t : 1.0);
  const double scores = w.flash_attention ? 0.0 : 2 * D * b * (double(m.heads) / t) * s_q * s_kv;
  const double attention =
      mla(m) ? D * T * (h + m.q_lora_rank + m.kv_lora_rank + m.rope_head_dim +
                        (double(m.heads) / t) * (2 * mla_qk_width(m) + mla_v_width(m))) +
                   scores
             : D * T * (h + q_width(m) / t + 2 * kv_width_per_rank(m, w.tp)) + scores;
  double mlp = D * T * (h + double(m.ffn) * nmat / t * mlps_per_token(m));
  mlp += expert_input_bytes(m, w, D, T);
  return input + (attention > mlp ? attention : mlp) + D * b * double(m.vocab) / t;
}

// ---------------------------------------------------------------------------------------------
// Compute time of one layer.

struct LayerTime {
  double fwd_s = 0;        // forward pass of one layer, one micro-batch
  double bwd_s = 0;        // backward pass (activation and weight gradients)
  double selective_s = 0;  // what selective recompute runs again (its modules' forward)
};

COSMIC_HD inline double peak_flops(const Compute& c, int32_t dtype_bytes) {
  return c.peak_tflops[peak_index(dtype_bytes)] * 1e12;
}

// Peak of the 16-bit (or wider) kernels: attention and the output layer. With FP8 GEMMs they
// run at the 16-bit peak; a system that gives only an FP8 peak falls back to it.
COSMIC_HD inline double act_peak_flops(const Compute& c, const ModelSpec& m) {
  const double p = peak_flops(c, int32_t(act_bytes(m)));
  return p > 0 ? p : peak_flops(c, m.dtype_bytes);
}

// GEMM efficiency vs size: eff = max x f / (f + half). A smooth version of Calculon's step table
// (small GEMMs under-fill the GPU; large ones approach a sustained fraction of peak).
COSMIC_HD inline double gemm_eff(const Calibration& cal, double flops) {
  return cal.gemm_eff_max * flops / (flops + cal.gemm_half_flops);
}

// Roofline time of one kernel: bound by math at eff x peak, or by streaming `bytes` at mem_eff x BW.
// eff is capped at 1: attn_eff and fp8_eff are factors relative to the GEMM efficiency and may
// exceed 1, but no kernel runs faster than the peak.
COSMIC_HD inline double roofline_s(double flops, double eff, double peak, double bytes, double mem_Bps) {
  const double math = flops > 0 ? flops / (peak * (eff < 1 ? eff : 1.0)) : 0.0;
  const double mem = bytes / mem_Bps;
  return math > mem ? math : mem;
}

// One GEMM (M x K) . (K x N): 2 M K N FLOPs; reads both operands, writes the result.
// FP8 GEMMs (dtype_bytes 1) reach fp8_eff of the 16-bit efficiency: the per-tensor casts and
// scaling around each one and lower sustained tensor-core utilisation.
// `elem_bytes`: the operands' element size, the model's dtype unless a GEMM stays 16-bit.
COSMIC_HD inline double gemm_s(const Config& c, double M, double K, double N, double peak, double mem_Bps,
                               double elem_bytes) {
  const double flops = 2 * M * K * N;
  const double bytes = elem_bytes * (M * K + K * N + M * N);
  const double eff = gemm_eff(c.cal, flops) * (elem_bytes == 1 ? c.cal.fp8_eff : 1.0);
  return roofline_s(flops, eff, peak, bytes, mem_Bps);
}

// Times of one layer for b sequences of s_q query tokens attending to s_kv keys, per NPU.
// Backward: every GEMM twice (activation and weight gradients) -> 2x forward; the fused
// attention core 2.5x (FlashAttention recomputes the scores in backward: 5 matmuls vs 2),
// unfused 2x. Element-wise kernels (LayerNorm, bias, dropout, residual, activation) stream
// 10 h values (LayerNorms 2+2, two bias-dropout-residuals 3+3; / t with sequence parallelism)
// and 2F (GELU) or 3F (SwiGLU) values / t per token, forward; twice that backward.
// MLA's attention projections (their GEMMs' time) and its attention core (FLOPs and bytes), as
// layer_time describes.
struct MlaAttention {
  double gemms_s = 0, flops = 0, bytes = 0;
};
COSMIC_HD inline MlaAttention mla_attention(const Config& c, const ModelSpec& m, double b, double s_q,
                                                        double s_kv, bool absorbed, double peak, double mem_Bps) {
  const double h = m.hidden, t = c.work.tp, T = b * s_q, D = act_bytes(m), W = m.dtype_bytes;
  const double a_t = double(m.heads) / t, rq = m.q_lora_rank, rkv = m.kv_lora_rank, dr = m.rope_head_dim;
  const double dn = head_width(m), qk = mla_qk_width(m), dv = mla_v_width(m);
  MlaAttention r;
  // With a query latent the down-projections run on the rank's own tokens, T / t under sequence
  // parallelism (their outputs, not the layer's input, are then gathered: layer_comm).
  const double T_down = c.work.seq_parallel && mla_latent_width(m) > 0 ? T / t : T;
  r.gemms_s = (rq > 0 ? gemm_s(c, T_down, h, rq, peak, mem_Bps, W) + gemm_s(c, T, rq, a_t * qk, peak, mem_Bps, W)
                      : gemm_s(c, T, h, a_t * qk, peak, mem_Bps, W)) +  // queries
              gemm_s(c, T_down, h, rkv + dr, peak, mem_Bps, W) +      // KV latent and RoPE key
              gemm_s(c, T, a_t * dv, h, peak, mem_Bps, W);            // output projection
  r.gemms_s += absorbed ? a_t * (gemm_s(c, T, dn, rkv, peak, mem_Bps, W) + gemm_s(c, T, rkv, dv, peak, mem_Bps, W))
                        : gemm_s(c, T, rkv, a_t * (dn + dv), peak, mem_Bps, W);  // keys and values of the T tokens
  // The attention core: Q and K d_n + d_r wide a head, V and O d_v (absorbed: Q and O r_kv + d_r
  // and r_kv wide, K and V the latent and RoPE key, one for all heads).
  r.flops = absorbed ? 2 * b * s_q * s_kv * a_t * (2 * rkv + dr) : 2 * b * s_q * s_kv * a_t * (qk + dv);
  r.bytes = absorbed ? D * b * (s_q * a_t * (2 * rkv + dr) + s_kv * (rkv + dr)) : D * b * (s_q + s_kv) * a_t * (qk + dv);
  return r;
}

// `m`: the layer's model, c.model or a mixture's dense layer (dense_layer_model).
// MLA (`mla`): the down-projections over the rank's T tokens whole, the up-projections and the
// output over its a / t heads. Training and prefill up-project the keys and values of their own
// tokens (Megatron-LM, the prefill kernels) and attend over d_n + d_r and d_v; a decode step
// (`absorbed`) attends in the latent, as FlashMLA and the serving engines do: each head's
// query is multiplied into the key up-projection (d_n x r_kv) and its output out of the value
// one (r_kv x d_v), per-head GEMMs, and the scores and values read the cached latent and RoPE key
// (r_kv + d_r a token, read once for the a / t heads): 2 s_kv (2 r_kv + d_r) FLOPs a head a query.
COSMIC_HD inline LayerTime layer_time(const Config& c, const ModelSpec& m, double b, double s_q, double s_kv,
                                      bool absorbed = false) {
  const double h = m.hidden, F = m.ffn, t = c.work.tp, D = act_bytes(m);
  const double peak = peak_flops(c.compute, m.dtype_bytes);
  const double peak16 = act_peak_flops(c.compute, m);
  const double mem_Bps = c.compute.mem_bw_GBps * 1e9 * c.cal.mem_eff;
  const double T = b * s_q;
  const double kvw = kv_width_per_rank(m, c.work.tp);
  const double nmat = m.mlp == Mlp::SwiGLU ? 3 : 2;

  const double W = m.dtype_bytes;  // the GEMMs' operands: FP8 where the model is
  const double q = q_width(m);
  double gemms = gemm_s(c, T, h, q / t + 2 * kvw, peak, mem_Bps, W)  // QKV projection
                 + gemm_s(c, T, q / t, h, peak, mem_Bps, W);         // output projection
  MlaAttention mla_attn;  // the attention core's (below)
  if (mla(m)) {
    mla_attn = mla_attention(c, m, b, s_q, s_kv, absorbed, peak, mem_Bps);
    gemms = mla_attn.gemms_s;
  }
  if (m.experts == 0) {
    gemms = gemms + gemm_s(c, T, h, (nmat - 1) * F / t, peak, mem_Bps, W)  // MLP up (and gate)
            + gemm_s(c, T, F / t, h, peak, mem_Bps, W);                    // MLP down
  } else {
    // Mixture of experts, balanced routing: each of the e = expert_tp ranks holding slices of
    // the rank's experts / ep experts receives the routed copies of the tokens of e / t TP
    // groups, T top_k e / t in all (T top_k without folding, e = t), spread over the
    // experts_reached() of them (a decode step's few tokens reach few experts, whose weights
    // alone are read; the EP group's tokens are T ep e / t); each expert's MLP is split e ways.
    // The router (h x experts, 16-bit) scores the rank's T tokens.
    const double e = expert_tp(c.work);
    const double local = double(m.experts) / c.work.ep, routed = T * m.top_k * (e / t);
    const double active = experts_reached(m, local, T * c.work.ep * (e / t)), Te = routed / active;
    gemms += active * (gemm_s(c, Te, h, (nmat - 1) * F / e, peak, mem_Bps, W) + gemm_s(c, Te, F / e, h, peak, mem_Bps, W)) +
             gemm_s(c, T, h, m.experts, peak16, mem_Bps, D);
    // Shared experts: one MLP of shared x F over every token, split by t.
    const double Fs = double(m.shared_experts) * F;
    if (m.shared_experts > 0)
      gemms += gemm_s(c, T, h, (nmat - 1) * Fs / t, peak, mem_Bps, W) + gemm_s(c, T, Fs / t, h, peak, mem_Bps, W);
  }

  // Attention core: QK^T and PV, 4 b s_q s_kv q / t FLOPs; reads Q, K, V, writes O. Unfused
  // attention (Megatron 2021-22) also streams the a s_q s_kv score elements through memory:
  // QK^T writes them (D), the fused scale-mask-softmax reads and writes them (2D), dropout
  // reads them and writes its output and a 1-byte mask (2D + 1), PV reads them (D): 6D + 1;
  // without dropout 4D.
  // MLA: mla_attn_flops and mla_attn_bytes above.
  const double attn_flops = mla(m) ? mla_attn.flops : 4 * b * s_q * s_kv * q / t;
  double attn_bytes = mla(m) ? mla_attn.bytes : D * b * (2 * s_q * q / t + 2 * s_kv * kvw);
  if (!c.work.flash_attention) attn_bytes += (m.dropout ? 6 * D + 1 : 4 * D) * b * (double(m.heads) / t) * s_q * s_kv;
  const double attn = roofline_s(attn_flops, gemm_eff(c.cal, attn_flops) * c.cal.attn_eff, peak16, attn_bytes, mem_Bps);

  const double sp_div = c.work.seq_parallel ? t : 1.0;
  // Mixture of experts: the F-wide element-wise kernels once per routed token copy and per
  // shared expert, and the permutation that gathers the copies before the experts and scatters
  // them back (each reads and writes D h per copy; a TP rank permutes its 1/t of the copies).
  const double act_elems = nmat * F / t * mlps_per_token(m);  // the activation functions' streams
  const double elem_bytes = D * T * (10 * h / sp_div + act_elems + (m.experts == 0 ? 0.0 : 4 * h * m.top_k / t));
  const double elem = elem_bytes / mem_Bps;

  LayerTime lt;
  lt.fwd_s = gemms + attn + elem + c.cal.layer_overhead_s;
  lt.bwd_s = 2 * gemms + (c.work.flash_attention ? 2.5 : 2.0) * attn + 2 * elem + c.cal.layer_overhead_s;
  // Selective recompute's modules again: the attention core; the two norms (each reads and
  // writes its D T h, / t with sequence parallelism, as the element-wise traffic above counts
  // them; MLA's latent norms, not counted there, neither); MLA's query and key-value
  // up-projection GEMMs (the query projection from the input where there is no query latent);
  // the MLPs' activation functions (the F-wide element-wise traffic above).
  const uint8_t again = recomputed_modules(c.work);
  if (again & kRecomputeCoreAttn) lt.selective_s += attn;
  if (again & kRecomputeLayerNorm) lt.selective_s += D * T * 4 * h / sp_div / mem_Bps;
  if ((again & kRecomputeMlaUpProj) && mla(m)) {
    const double a_t = double(m.heads) / t, rq = m.q_lora_rank;
    lt.selective_s += gemm_s(c, T, m.kv_lora_rank, a_t * (head_width(m) + mla_v_width(m)), peak, mem_Bps, W) +
                      gemm_s(c, T, rq > 0 ? rq : h, a_t * mla_qk_width(m), peak, mem_Bps, W);
  }
  if (again & kRecomputeMlpAct) lt.selective_s += D * T * act_elems / mem_Bps;
  return lt;
}

// Logits of `tokens` tokens on the last stage: a GEMM to V/t vocabulary columns and, in
// training, a fused fp32 softmax-cross-entropy that streams the logits 3 times (4 bytes each).
COSMIC_HD inline LayerTime logits_time(const Config& c, double tokens, bool training) {
  const double peak = act_peak_flops(c.compute, c.model);
  const double mem_Bps = c.compute.mem_bw_GBps * 1e9 * c.cal.mem_eff;
  const double vt = double(c.model.vocab) / c.work.tp;
  const double g = gemm_s(c, tokens, c.model.hidden, vt, peak, mem_Bps, act_bytes(c.model));  // 16-bit under FP8
  const double ce = training ? 3 * 4 * tokens * vt / mem_Bps : 0.0;
  LayerTime lt;
  lt.fwd_s = g + ce;
  lt.bwd_s = 2 * g + ce;
  return lt;
}

// ---------------------------------------------------------------------------------------------
// Checks before the model runs: every input positive and finite, degrees consistent.
COSMIC_HD inline bool positive(double x) { return x > 0 && x < 1e300; }

COSMIC_HD inline Reason check_config(const Config& c, int64_t& npus) {
  const ModelSpec& m = c.model;
  const Workload& w = c.work;
  if (c.net.ndims < 1 || c.net.ndims > kMaxDims) return Reason::InvalidInput;
  for (int32_t i = 0; i < c.net.ndims; ++i) {
    const NetDim& d = c.net.dim[i];
    if (d.npus < 1 || (d.npus > 1 && !positive(d.link_bw_GBps)) || !(d.latency_ns >= 0)) return Reason::InvalidInput;
  }
  npus = total_npus(c.net);
  if (npus > kMaxNpus) return Reason::InvalidInput;  // more NPUs than any system
  if (m.layers < 1 || m.hidden < 1 || m.ffn < 1 || m.heads < 1 || m.kv_heads < 1 || m.seq < 1 || m.vocab < 1 ||
      m.kv_heads > m.heads || m.heads % m.kv_heads != 0 ||
      !(m.dtype_bytes == 1 || m.dtype_bytes == 2 || m.dtype_bytes == 4) || m.experts < 0 || m.experts == 1 ||
      (m.experts > 1 && (m.top_k < 1 || m.top_k > m.experts)) || m.head_dim < 0 || m.shared_experts < 0 ||
      (m.shared_experts > 0 && m.experts == 0))
    return Reason::InvalidInput;
  // MLA: every head its own keys and values, no biases; its widths only with it.
  if (m.kv_lora_rank < 0 || m.q_lora_rank < 0 || m.rope_head_dim < 0 || m.v_head_dim < 0 ||
      (mla(m) ? m.kv_heads != m.heads || m.biases : (m.q_lora_rank | m.rope_head_dim | m.v_head_dim) != 0))
    return Reason::InvalidInput;
  // Group-limited routing: a mixture's, groups dividing the experts, enough experts in a token's
  // groups for its top_k.
  if ((m.expert_groups | m.groups_per_token) != 0 &&
      (m.experts == 0 || m.expert_groups < 1 || m.groups_per_token < 1 || m.groups_per_token > m.expert_groups ||
       m.experts % m.expert_groups != 0 || m.top_k > int64_t(m.groups_per_token) * (m.experts / m.expert_groups)))
    return Reason::InvalidInput;
  // Dense layers among the experts: a mixture's, leaving it an expert layer.
  if ((m.first_dense_layers != 0 || m.moe_layer_step != 1 || m.dense_ffn != 0) &&
      (m.experts == 0 || m.first_dense_layers < 0 || m.moe_layer_step < 1 || m.dense_ffn < 0 ||
       moe_layers_below(m, m.layers) < 1))
    return Reason::InvalidInput;
  // A degree of 0 is a derived one that did not divide (kernels/space.hpp derive_degree): the
  // product check below reports it as what it is.
  if (w.global_batch < 1 || w.micro_batch < 1 || w.dp < 0 || w.tp < 0 || w.pp < 0 || w.cp < 0 || w.vpp < 1 || w.ep < 1 || w.etp < 0 ||
      w.recompute_layers < 0 || c.net.chunks < 1 || w.prompt_tokens < 0 || w.kv_len < 0 || w.output_tokens < 0)
    return Reason::InvalidInput;
  if (!positive(peak_flops(c.compute, m.dtype_bytes)) || !positive(c.compute.mem_bw_GBps) ||
      !positive(c.compute.mem_capacity_bytes))
    return Reason::InvalidInput;
  const Calibration& k = c.cal;
  if (!positive(k.gemm_eff_max) || k.gemm_eff_max > 1 || !(k.gemm_half_flops >= 0) || !positive(k.attn_eff) ||
      !positive(k.fp8_eff) ||
      !positive(k.mem_eff) || !positive(k.net_eff) || !(k.layer_overhead_s >= 0) || !(k.tp_overlap >= 0 && k.tp_overlap <= 1) ||
      !(k.cp_overlap >= 0 && k.cp_overlap <= 1) || !(k.ep_overlap >= 0 && k.ep_overlap <= 1) || !(k.dp_overlap >= 0 && k.dp_overlap <= 1) || !(k.grad_bytes >= 0) || !(k.master_bytes >= 0) ||
      !(k.optimizer_bytes_per_param >= 0))
    return Reason::InvalidInput;
  if (w.mode == Mode::Decode && w.kv_len < 1) return Reason::InvalidInput;
  if ((w.mode == Mode::Generate || w.mode == Mode::Serve) && w.output_tokens < 1) return Reason::InvalidInput;

  if (int64_t(w.dp) * w.tp * w.pp * w.cp != npus) return Reason::ProductMismatch;
  if (w.tp > m.heads) return Reason::TpExceedsHeads;
  if (m.heads % w.tp != 0 || m.ffn % w.tp != 0 || (m.dense_ffn > 0 && has_dense_layers(m) && m.dense_ffn % w.tp != 0))
    return Reason::HeadsNotDivisible;
  // Each TP rank holds whole KV heads: g / t of them, or one shared by t / g ranks (Megatron-Core
  // asserts the former, vLLM either); 8 KV heads over 6 ranks would give each 1.33.
  if (m.kv_heads % w.tp != 0 && w.tp % m.kv_heads != 0) return Reason::HeadsNotDivisible;
  if (w.ep > 1 && (m.experts < w.ep || m.experts % w.ep != 0)) return Reason::ExpertsNotDivisible;  // dense: none to split
  if (m.experts > 0 && m.ffn % expert_tp(w) != 0) return Reason::HeadsNotDivisible;  // each expert split etp ways
  // DeepSpeed-Ulysses gives each cp rank whole heads, query and KV heads alike (the KV heads a
  // TP rank holds, at least one, must split over cp too); a decode step splits its cache instead.
  if (w.cp_style == CpStyle::AllToAll && w.mode != Mode::Decode && w.cp > 1) {
    const int32_t kv_per_tp = m.kv_heads / w.tp > 0 ? m.kv_heads / w.tp : 1;
    if ((m.heads / w.tp) % w.cp != 0 || kv_per_tp % w.cp != 0) return Reason::HeadsNotDivisible;
  }
  if (w.global_batch % (int64_t(w.dp) * w.micro_batch) != 0) return Reason::BatchNotDivisible;
  // Interleaving is a training schedule: inference ignores schedule and vpp.
  const int32_t vchunks = w.mode == Mode::Training && w.schedule == Schedule::Interleaved ? w.vpp : 1;
  // The interleaved schedule (Narayanan et al. 2021; Megatron-LM asserts it) needs the
  // micro-batches per pipeline to be a multiple of pp: its bubble (p-1)/(v m) and memory factor
  // assume m >= p, and below that they would undercut one micro-batch crossing all stages.
  if (w.mode == Mode::Training && vchunks > 1 && (w.global_batch / (int64_t(w.dp) * w.micro_batch)) % w.pp != 0)
    return Reason::BatchNotDivisible;
  // DualPipe feeds micro-batches from both ends of the pipeline, pairing stage i with pp - 1 - i:
  // an even pp, and an even number of micro-batches, at least 2 pp (its implementation asserts
  // both; its bubble assumes that steady state).
  if (w.mode == Mode::Training && w.schedule == Schedule::DualPipe) {
    const int64_t micro = w.global_batch / (int64_t(w.dp) * w.micro_batch);
    if (w.pp % 2 != 0 || micro % 2 != 0 || micro < 2 * int64_t(w.pp)) return Reason::BatchNotDivisible;
  }
  // Uneven stages (Megatron's first / last stage layer counts; Llama 3's 126 layers on 16 stages):
  // every model chunk needs at least one layer.
  if (w.uneven_stages ? m.layers < w.pp * vchunks : m.layers % (w.pp * vchunks) != 0) return Reason::LayersNotDivisible;
  // The sequence a pass splits over cp (and tp with sequence parallelism): the training
  // sequence or the prompt; a decode step splits its KV cache, not a sequence.
  const int32_t seq = w.mode == Mode::Training ? m.seq : prompt_tokens(m, w);
  if (w.mode != Mode::Decode && (seq % w.cp != 0 || (w.seq_parallel && (seq / w.cp) % w.tp != 0)))
    return Reason::SeqNotDivisible;
  // A decode step has one token per sequence: sequence parallelism splits the micro-batch's
  // tokens over tp, so it must hold a multiple of tp sequences.
  const bool decodes = w.mode == Mode::Decode || w.mode == Mode::Generate || w.mode == Mode::Serve;
  if (decodes && w.seq_parallel && w.micro_batch % w.tp != 0) return Reason::SeqNotDivisible;
  return Reason::Ok;
}

// ---------------------------------------------------------------------------------------------
// Communication of one layer, one micro-batch, forward or backward (seconds).
struct Groups {
  Span span[kNumGroups];
  Span dp_cp;  // gradient reduction group: DP x CP replicas of the same weights
  Span ep;     // expert parallelism: the innermost ep ranks of the DP group (folded: after the ETP group)
  Span ep_dp;  // replicas of the same experts: the DP ranks outside the EP group, x CP (folded: the rest)
  Span etp;    // the experts' tensor parallelism: the TP group (folded: the innermost etp ranks)
};

// Splits a group's span into its innermost `inner` ranks and the ranks that step over them (the
// expert-parallel group inside the DP group, and the DP ranks holding the same experts). False
// when `inner` does not divide the group dimension by dimension.
COSMIC_HD inline bool split_span(const Span& s, int32_t ndims, int32_t inner, Span& in, Span& out) {
  in = Span{};
  out = s;
  for (int32_t i = 0; i < ndims && inner > 1; ++i) {
    const int32_t k = s.k[i];
    if (k <= 1) continue;
    int32_t take;
    if (inner % k == 0) take = k;
    else if (k % inner == 0) take = inner;
    else return false;
    in.k[i] = take;
    in.stride[i] = s.stride[i];
    out.k[i] = k / take;
    out.stride[i] = out.k[i] > 1 ? s.stride[i] * take : 1;
    inner /= take;
  }
  return inner == 1;
}

// The experts' groups, from the placed TP, CP and DP groups: g.etp, g.ep and g.ep_dp (the
// ranks holding the same experts). Without folding (etp 0) the EP group is the innermost ep
// ranks of the DP group and the experts keep the TP group; folded, the TP x CP x DP ranks of a
// stage are split innermost first into ETP, EP and the rest (Megatron's expert rank order:
// ETP, then EP, then expert DP). False when a group does not divide the dimensions it falls on
// (folded: or etp x ep does not divide TP x CP x DP).
COSMIC_HD inline bool place_experts(const Config& c, Groups& g) {
  const Span &tp = g.span[int(Group::TP)], &cp = g.span[int(Group::CP)], &dp = g.span[int(Group::DP)];
  if (c.work.etp <= 0 || c.model.experts == 0) {  // a dense model has no experts to fold
    g.etp = tp;
    Span expert_dp = dp;
    g.ep = Span{};
    if (c.work.ep > 1 && !split_span(dp, c.net.ndims, c.work.ep, g.ep, expert_dp)) return false;
    g.ep_dp = merge_spans(expert_dp, cp);
    return true;
  }
  Span rest;
  return split_span(merge_spans(merge_spans(tp, cp), dp), c.net.ndims, c.work.etp, g.etp, rest) &&
         split_span(rest, c.net.ndims, c.work.ep, g.ep, g.ep_dp);
}

// The experts' dispatch with ep_dispatch: dedup (DeepEP-style): a token is sent once to each node
// (the network's innermost dimension of more than one NPU, node_dim, d: it holds ep.k[d] of the EP
// group's ranks, one where the EP group does not span it) that holds any of its top_k experts, then fanned out
// inside it; the combine returns the same way. Under uniform routing a node
// holding E / n of the E experts gets none of a token's k distinct experts with probability
// prod_{i<k} (E - E/n - i) / (E - i), so a token reaches n (1 - that) of the n nodes where the
// all-to-all sends k copies: the scale of what crosses the outer dimensions (1 within a node).
// Mixtral-like, 8 experts top-2 over 2 nodes: 2 (1 - 4/8 x 3/7) / 2 = 11/14.
// Group-limited routing (expert_groups G, groups_per_token g; the groups' experts consecutive,
// as the EP ranks hold them): a token's k experts are uniform over the g E / G experts of g
// groups drawn uniformly. A group spanning n / G nodes (G < n, G dividing n): the token can reach
// only the g n / G nodes of its groups, each with E / n of the g E / G candidates. A node holding
// q = G / n whole groups (G >= n): c of the token's groups are on it with the hypergeometric
// probability C(q, c) C(G - q, g - c) / C(G, g), and it gets none of the experts with
// prod_{i<k} (g E / G - c E / G - i) / (g E / G - i). Groups that do not align with nodes are
// taken as unlimited (an upper bound). DeepSeek-V3 (256 experts, top-8, 8 groups, 4 a token) over
// 8 nodes: 4 (1 - prod_{i<8} (96 - i) / (128 - i)) = 3.63 nodes a token, against 5.29 unlimited.
COSMIC_HD inline double choose(int32_t n, int32_t r) {  // C(n, r), 0 <= r <= n
  double x = 1;
  for (int32_t i = 0; i < r; ++i) x = x * (n - i) / (i + 1);
  return x;
}
COSMIC_HD inline double none_of_k(double candidates, double here, int32_t k) {  // P(no pick lands here)
  double none = 1;
  for (int32_t i = 0; i < k && none > 0; ++i) none = candidates - here - i > 0 ? none * (candidates - here - i) / (candidates - i) : 0.0;
  return none;
}
COSMIC_HD inline double node_dedup_scale(const ModelSpec& m, const Workload& w, const Network& net, const Span& ep) {
  const int32_t nodes = w.ep / ep.k[node_dim(net)], G = m.expert_groups, g = m.groups_per_token;  // the EP ranks a node holds
  const double n = nodes, E = m.experts, per_node = E / n;
  if (n <= 1 || m.experts <= 0) return 1.0;
  if (G > 0 && g < G && G < nodes && nodes % G == 0)  // a group spans n / G nodes
    return g * (n / G) * (1 - none_of_k(g * E / G, per_node, m.top_k)) / m.top_k;
  if (G > 0 && g < G && G >= nodes && G % nodes == 0) {  // a node holds q whole groups
    const int32_t q = G / nodes;
    double none = 0;
    for (int32_t c = 0; c <= q && c <= g; ++c)
      if (g - c <= G - q) none += choose(q, c) * choose(G - q, g - c) / choose(G, g) * none_of_k(g * E / G, c * E / G, m.top_k);
    return n * (1 - none) / m.top_k;
  }
  return n * (1 - none_of_k(E, per_node, m.top_k)) / m.top_k;
}

// Per-layer communication of one micro-batch, each distinct collective timed once.
struct LayerComm {
  double tp_fwd_s = 0, tp_bwd_s = 0;  // tensor parallelism, forward and backward pass
  double cp_fwd_s = 0, cp_bwd_s = 0;  // context sharding, forward and backward pass
  double ep_fwd_s = 0, ep_bwd_s = 0;  // expert parallelism, forward and backward pass
  // One collective of the layer's activations (D T h bytes) over the TP group, before tp_overlap:
  // all-reduce without sequence parallelism, all-gather and reduce-scatter with it.
  double tp_ar_s = 0, tp_ag_s = 0, tp_rs_s = 0;
};

// Megatron tensor parallelism: two all-reduces of the layer's activations (D T h bytes) per
// pass; with sequence parallelism each becomes all-gather + reduce-scatter of the same volume
// (Korthikanti et al. 2022 §4.2.2), and the backward pass all-gathers the two sequence-sharded
// GEMM inputs once more, since only the shards are kept for the weight gradients (same section).
// Context / sequence sharding (the study's SP): each rank holds s/cp of the sequence; keys and
// values are all-gathered before attention (forward) and their gradients reduce-scattered
// (backward). Same volume each way: cp x (K and V of the local tokens). Only the local K and V
// are kept (memory_per_npu), so the backward pass, whose attention needs every key, gathers
// them again (as Megatron's context parallelism circulates K and V again in backward), also
// under full recompute, whose repeated forward gathers them once more (as the sequence-parallel
// GEMM inputs above are gathered again in backward after a recomputed forward). With cp_style
// AllToAll (DeepSpeed-Ulysses) attention runs on whole heads instead: all-to-alls of the local
// tokens' Q, K, V and of the output, the same compute and memory per rank (s/cp queries against s
// keys on a/(t cp) heads rather than s/cp queries on a/t heads).
// Expert parallelism (mixture of experts, ep > 1): each pass sends the rank's routed token
// copies to the ranks of their experts and brings the outputs back, two all-to-alls over the EP
// group of D T top_k h / t bytes per rank (each TP rank dispatches its 1/t of the tokens, as
// under sequence parallelism, which Megatron requires for experts with TP).
// `tp_overlap` / `cp_overlap` / `ep_overlap` hide a fraction of each (ep: 0, exposed, by default).
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline LayerComm layer_comm(const Config& c, const ModelSpec& m, const Groups& g, double T, int64_t npus) {
  LayerComm lc;
  const bool moe = m.experts > 0;
  const double keep = 1 - c.cal.tp_overlap;
  if (c.work.tp > 1) {
    const double bytes = act_bytes(m) * T * m.hidden;
    const Span& s = g.span[int(Group::TP)];
    // Mixture of experts: the attention's half of the layer's TP collectives, and the shared
    // experts' pair (the routed experts' half is below).
    const double halves = moe ? 1.0 + (m.shared_experts > 0 ? 1.0 : 0.0) : 2.0;
    if (c.work.seq_parallel) {
      const double ag = lc.tp_ag_s = collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllGather, bytes, npus);
      const double rs = lc.tp_rs_s =
          collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::ReduceScatter, bytes, npus);
      lc.tp_fwd_s = keep * halves * (ag + rs);
      lc.tp_bwd_s = keep * halves * (ag + rs + ag);
    } else {
      lc.tp_ar_s = collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllReduce, bytes, npus);
      lc.tp_fwd_s = lc.tp_bwd_s = keep * halves * lc.tp_ar_s;
    }
    // MLA with a query latent (mla_latent_width): the attention's input side carries the latents
    // and the RoPE key, D T (r_q + r_kv + d_r), not the layer's input (with sequence parallelism
    // gathered forward and reduce-scattered backward, gathered again for the up-projections'
    // weight gradients; without, the backward all-reduce of their gradient); its output side is
    // the usual D T h.
    if (mla_latent_width(m) > 0) {
      const double latent = act_bytes(m) * T * mla_latent_width(m);
      const double others = halves - 1;  // the MLP's half (the shared experts' with experts)
      if (c.work.seq_parallel) {
        const double ag = lc.tp_ag_s, rs = lc.tp_rs_s;
        const double ag_in = collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllGather, latent, npus);
        const double rs_in = collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::ReduceScatter, latent, npus);
        lc.tp_fwd_s = keep * (ag_in + rs + others * (ag + rs));
        lc.tp_bwd_s = keep * (ag + rs_in + ag_in + others * (ag + rs + ag));
      } else {
        const double ar_in = collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllReduce, latent, npus);
        lc.tp_fwd_s = keep * (1 + others) * lc.tp_ar_s;
        lc.tp_bwd_s = keep * (ar_in + others * lc.tp_ar_s);
      }
    }
  }
  // The routed experts' half, over the experts' TP group (e = expert_tp ranks; the TP group
  // without folding): their inputs, the routed copies of the group's tokens, gathered after the
  // dispatch and their outputs reduce-scattered before the combine, D (T / t) top_k e h bytes
  // (top_k times the attention's D T h without folding), and in backward the transposes, a
  // reduce-scatter and an all-gather (the gathered inputs are kept for the weight gradients,
  // layer_activation_bytes, not gathered again as a sequence-parallel linear layer's are; model
  // revision 9); without sequence parallelism one all-reduce each pass. In tp_comm_s, with the
  // same overlap.
  if (moe && expert_tp(c.work) > 1) {
    const double e = expert_tp(c.work);
    const double bytes = m.top_k * (act_bytes(m) * T * m.hidden) * (e / c.work.tp);
    if (c.work.seq_parallel) {
      const double ag = collective_time_s<kConv>(c.net, c.compute, c.cal, g.etp, Coll::AllGather, bytes, npus);
      const double rs = collective_time_s<kConv>(c.net, c.compute, c.cal, g.etp, Coll::ReduceScatter, bytes, npus);
      lc.tp_fwd_s += keep * (ag + rs);
      lc.tp_bwd_s += keep * (ag + rs);
    } else {
      const double ar = collective_time_s<kConv>(c.net, c.compute, c.cal, g.etp, Coll::AllReduce, bytes, npus);
      lc.tp_fwd_s += keep * ar;
      lc.tp_bwd_s += keep * ar;
    }
  }
  if (c.work.cp > 1) {
    const double D = act_bytes(m), kvw = kv_width_per_rank(m, c.work.tp);
    const Span& s = g.span[int(Group::CP)];
    const double keep = 1 - c.cal.cp_overlap;
    if (c.work.cp_style == CpStyle::AllToAll) {
      // DeepSpeed-Ulysses (Jacobs et al. 2023): the local tokens' queries, keys and values go to
      // the ranks of their heads (an all-to-all of D T (q/t + 2 kv-width)) and the attention
      // output comes back (D T q/t); backward sends their gradients the same ways.
      // MLA: queries and keys d_n + d_r a head, values and the output d_v.
      const double a_t = double(m.heads) / c.work.tp;
      const double out = mla(m) ? D * T * a_t * mla_v_width(m) : D * T * q_width(m) / c.work.tp;  // the attention output
      const double in = mla(m) ? D * T * a_t * (2 * mla_qk_width(m) + mla_v_width(m)) : out + D * T * 2 * kvw;
      lc.cp_fwd_s = lc.cp_bwd_s = keep * (collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllToAll, in, npus) +
                                          collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllToAll, out, npus));
    } else {
      // MLA: each head's keys (d_n + d_r) and values (d_v), up-projected, as Megatron-LM gathers them.
      const double bytes = mla(m) ? D * c.work.cp * T * (double(m.heads) / c.work.tp) * (mla_qk_width(m) + mla_v_width(m))
                                  : D * c.work.cp * T * 2 * kvw;
      lc.cp_fwd_s = keep * collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllGather, bytes, npus);
      lc.cp_bwd_s = keep * collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::ReduceScatter, bytes, npus) +
                    lc.cp_fwd_s;
    }
  }
  if (moe && c.work.ep > 1) {  // a mixture's dense layers have no experts to reach
    // A pass dispatches and combines (backward: the gradients, the same ways). fp8_dispatch
    // (DeepSeek-V3 §3.3.3): the dispatches, forward and backward, carry 1-byte elements, the
    // combines stay 16-bit.
    const double bytes = act_bytes(m) * T / c.work.tp * m.top_k * m.hidden;
    const double outer =
        c.work.ep_dispatch == EpDispatch::NodeDedup ? node_dedup_scale(m, c.work, c.net, g.ep) : 1.0;
    const auto a2a = [&](double b) { return collective_time_s<kConv>(c.net, c.compute, c.cal, g.ep, Coll::AllToAll, b, npus, outer); };
    const double combine = a2a(bytes);
    lc.ep_fwd_s = lc.ep_bwd_s = (1 - c.cal.ep_overlap) * (c.work.fp8_dispatch ? a2a(bytes / act_bytes(m)) + combine : 2 * combine);
  }
  return lc;
}

// Tensor-parallel communication of the embedding and the output layer, one micro-batch
// (Megatron's vocabulary-parallel embedding, output GEMM and cross-entropy: Shoeybi et al. 2019
// §3; with sequence parallelism Korthikanti et al. 2022 §4.2.2), seconds per pass:
// - output layer (last stage): its input is copied to every TP rank, so the backward pass
//   all-reduces the input's gradient (D T h); with sequence parallelism the forward all-gathers
//   the sequence-sharded input, and the backward gathers it again (only the shard is kept for
//   the weight gradient, as in the layers) and reduce-scatters its gradient;
// - training's cross-entropy over the V / t logits of each rank: three all-reduces of T fp32
//   values (the maximum, the target's logit, the sum of exponentials) in the forward pass;
// - inference: the next tokens' logits (D b V) are all-gathered for sampling, and with sequence
//   parallelism their hidden states (D b h) before the output layer (logits_time computes the
//   next tokens' logits only);
// - embedding (first stage): the forward all-reduces the looked-up rows (D T h), with sequence
//   parallelism reduce-scatters them and the backward all-gathers their gradient. The slowest
//   stage is taken as the last (its layers and the logits), so this counts only when pp = 1.
// `lc` holds the layer's collectives of D T h over the TP group for the same T; b is the micro-batch's sequences.
struct EdgeComm {
  double fwd_s = 0, bwd_s = 0;
};
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline EdgeComm edge_comm(const Config& c, const Groups& g, const LayerComm& lc, double b, double T,
                                    bool training, int64_t npus) {
  EdgeComm e;
  if (c.work.tp <= 1) return e;
  const Span& s = g.span[int(Group::TP)];
  const double keep = 1 - c.cal.tp_overlap;
  const bool sp = c.work.seq_parallel, first_too = c.work.pp == 1;
  const double D = act_bytes(c.model);
  double fwd = 0, bwd = 0;
  if (training) {
    fwd = (sp ? lc.tp_ag_s : 0.0) + 3 * collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllReduce, 4 * T, npus);
    bwd = sp ? lc.tp_ag_s + lc.tp_rs_s : lc.tp_ar_s;
  } else {
    fwd = collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllGather, D * b * double(c.model.vocab), npus) +
          (sp ? collective_time_s<kConv>(c.net, c.compute, c.cal, s, Coll::AllGather, D * b * c.model.hidden, npus) : 0.0);
  }
  if (first_too) {
    fwd += sp ? lc.tp_rs_s : lc.tp_ar_s;
    bwd += sp ? lc.tp_ag_s : 0.0;
  }
  e.fwd_s = keep * fwd;
  e.bwd_s = training ? keep * bwd : 0.0;
  return e;
}

// ---------------------------------------------------------------------------------------------
// Memory per NPU: weights, gradients, optimizer state (mixed-precision Adam: D bytes of weights,
// grad_bytes of gradients, master_bytes (fp32 master + 2 moments = 12) per parameter; ZeRO-1
// shards the optimizer state over the DP x CP replicas, ZeRO-2 also gradients, ZeRO-3 also
// weights; Rajbhandari et al. 2020). Worst stage: a stage's layers plus the embedding (and the
// untied output projection when one stage holds the whole model).
// Layers of the heaviest pipeline stage: layers / pp; with uneven stages, the balanced split of
// the L layers over the C = pp v model chunks (v = vpp when training interleaved, else 1): chunk j
// holds q = floor(L / C) layers, one more for the first r = L mod C chunks, and stage s the
// chunks s, s + pp, ...; stage 0 then holds v q + ceil(r / pp) = ceil(L / pp). That stage is
// taken as the one with the logits too (an upper bound: Llama 3 405B's own split gives the last
// stage fewer layers).
COSMIC_HD inline double stage_layers(const ModelSpec& m, const Workload& w) {
  if (!w.uneven_stages) return double(m.layers) / w.pp;
  return double((m.layers + w.pp - 1) / w.pp);
}

// The share of the worst stage's layers that recompute in training: with recompute full,
// recompute_layers of each of the stage's model chunks (Megatron-LM's --recompute-method block
// --recompute-num-layers N: the chunk's first N layers; interleaved, v chunks a stage), the rest
// keeping their activations as without recompute; all of them where recompute_layers is 0 or
// covers the chunks. Assumed: a mixture's dense and expert layers recompute in that share alike
// (the chunk's first layers may be all of one kind), and N v of stage_layers() recompute where
// uneven chunks hold fewer than N (an upper bound on the saving).
COSMIC_HD inline double recompute_share(const ModelSpec& m, const Workload& w) {
  if (w.recompute != Recompute::Full) return 0;
  if (w.recompute_layers <= 0) return 1;
  const int32_t v = w.schedule == Schedule::Interleaved ? w.vpp : 1;
  const double share = double(w.recompute_layers) * v / stage_layers(m, w);
  return share < 1 ? share : 1;
}

// The worst stage's layers by kind, stage_layers() in all: `main` of the model's own kind (the
// expert layers of a mixture), `dense` the dense layers of a mixture (has_dense_layers). A
// mixture's stages differ: the one holding the most dense layers (most_dense) or the most expert
// layers is the worst, whichever kind of layer costs more. Stage s holds the model chunks s,
// s + pp, ... (one a stage but when training interleaved, v), chunk j the layers from
// j q + min(j, r) on, q + 1 of them for j < r, else q (q = floor(layers / (pp v)), r the rest:
// the balanced split of stage_layers(); with uneven stages the upper bound stage_layers() is made
// up of the dearer kind where the stage holds fewer, at most as many layers of it as the model
// has: other splits move layers between neighbouring stages).
struct StageMix {
  double main = 0, dense = 0;
};
COSMIC_HD inline StageMix stage_mix(const ModelSpec& m, const Workload& w, bool most_dense) {
  StageMix mix;
  mix.main = stage_layers(m, w);
  if (!has_dense_layers(m)) return mix;
  const int32_t v = w.mode == Mode::Training && w.schedule == Schedule::Interleaved ? w.vpp : 1;
  const int64_t L = m.layers, chunks = int64_t(w.pp) * v, q = L / chunks, r = L % chunks;
  const int64_t bound = int64_t(mix.main), moe_all = moe_layers_below(m, L);
  int64_t most = 0;
  for (int64_t s = 0; s < w.pp; ++s) {
    int64_t moe = 0, held = 0;
    for (int64_t j = s; j < chunks; j += w.pp) {
      const int64_t lo = j * q + (j < r ? j : r), hi = lo + q + (j < r ? 1 : 0);
      moe += moe_layers_below(m, hi) - moe_layers_below(m, lo);
      held += hi - lo;
    }
    const int64_t count = (most_dense ? held - moe : moe) + (bound - held);
    if (count > most) most = count;
  }
  const int64_t all = most_dense ? L - moe_all : moe_all;
  if (most > all) most = all;
  mix.dense = most_dense ? double(most) : mix.main - double(most);
  mix.main -= mix.dense;
  return mix;
}

// Parameters per rank of the worst stage, by how they are replicated: `dense` over the DP x CP
// ranks, `expert` (the rank's experts / ep experts of a mixture-of-experts layer, each split
// expert_tp ways) over the expert_replicas() ranks that hold the same slices of them.
struct RankParams {
  double dense = 0, expert = 0;
  COSMIC_HD double total() const { return dense + expert; }
};
// The embedding's (and, untied, the output layer's) parameters a rank of the worst stage holds:
// V h / t each (the first stage's input embedding; the last stage's output layer, tied to it
// when the model ties them; one stage holding both when pp = 1).
COSMIC_HD inline double embedding_params_per_rank(const ModelSpec& m, const Workload& w) {
  const double n_emb = (w.pp == 1 && !m.tied_embeddings) ? 2.0 : 1.0;
  return n_emb * vocab_layer_params(m) / w.tp;
}
// A mixture's dense layers are split by t (`mix`: the stage's layers by kind, stage_mix()).
COSMIC_HD inline RankParams stage_params_per_rank(const ModelSpec& m, const Workload& w, const StageMix& mix) {
  const double layers = mix.main + mix.dense;
  const double embedding = embedding_params_per_rank(m, w);
  const double kv_replicas = layers * kv_replica_params(m, w.tp);
  // DualPipe: a rank holds two stages, i and pp - 1 - i (DeepSeek-V3 report, Table 2: "2x"
  // parameters); taken as twice the worst stage, an upper bound.
  const double stages = w.mode == Mode::Training && w.schedule == Schedule::DualPipe ? 2.0 : 1.0;
  RankParams p;
  if (m.experts == 0) {
    p.dense = layers * layer_params(m) / w.tp + embedding + kv_replicas;
  } else {
    const double experts = double(m.experts) / w.ep * mlp_params(m);
    p.expert = mix.main * experts / expert_tp(w);
    p.dense = mix.main * (rank_layer_params(m, w) - experts) / w.tp + embedding + kv_replicas;
    if (mix.dense > 0) p.dense += mix.dense * layer_params(dense_layer_model(m)) / w.tp;
  }
  p.dense *= stages;
  p.expert *= stages;
  return p;
}

// Peak memory per NPU, bytes, by part: what evaluate() reports and checks against the
// capacity. It reads the model, the workload and the calibration only (no timing), so a caller
// may settle "out of memory" before the timing (evaluate's stop_at_oom).
// Training: the first stage or the last, whichever holds more. The first: 1F1B keeps min(pp, m)
// micro-batches in flight (Narayanan et al. 2021), interleaving adds (1 + (pp-1)/(pp v))
// (Korthikanti et al. 2022), GPipe keeps all m. The last holds fewer (1F1B one) but also the
// fp32 logits (4 T V / t bytes) of each; with pp = 1 one stage holds both. Full recompute also
// needs one layer's full activations to rebuild; weights, gradients and optimizer state as
// stage_params_per_rank() says, ZeRO-3 adding the gathered layer and its prefetch.
// Inference: weights at their own precision (the embedding and output layer in 16 bits), the
// KV cache of every resident sequence (2 D kv_width per token per layer, sequence sharded over
// cp), one layer's working activations (inference_activation_bytes).
// A mixture with dense layers: the stage holding the most expert layers or the one holding the
// most dense layers, whichever needs more; each kind's activations for its layers, and of one
// layer's (full recompute's rebuilt layer, ZeRO-3's gathered ones, inference's live tensors) the
// larger of the kinds the stage holds.
struct MemoryBytes {
  double weights = 0, grads = 0, optimizer = 0, activation = 0, kv_cache = 0;
  COSMIC_HD double total() const { return weights + grads + optimizer + activation + kv_cache; }
};
COSMIC_HD inline double larger(double a, double b) { return a > b ? a : b; }
COSMIC_HD inline MemoryBytes stage_memory(const Config& c, const StageMix& mix) {
  const ModelSpec& m = c.model;
  const bool mixed = mix.dense > 0, moe_held = mix.main > 0;
  const Workload& w = c.work;
  const double D = act_bytes(m), t = w.tp, pp = w.pp, b = w.micro_batch;
  const double micro = double(w.global_batch / (int64_t(w.dp) * w.micro_batch));  // per DP rank
  const double stage_layers = mix.main + mix.dense;
  const double replicas = double(w.dp) * w.cp;
  const RankParams P = stage_params_per_rank(m, w, mix);
  Workload none = w;
  none.recompute = Recompute::None;
  MemoryBytes mb;
  if (w.mode == Mode::Training) {
    const bool zero3 = w.sharding == Sharding::Zero3;
    const int32_t v = w.schedule == Schedule::Interleaved ? w.vpp : 1;
    const double s_q = double(m.seq) / w.cp, s_kv = m.seq, T = b * s_q;
    const double inflight_1f1b = micro < pp ? micro : pp;
    // DualPipe keeps pp + 1 (DeepSeek-V3 report, Table 2).
    double inflight = w.schedule == Schedule::GPipe ? micro : inflight_1f1b + (w.schedule == Schedule::DualPipe ? 1 : 0);
    // The last stage holds the micro-batches whose backward has not run: 1F1B one, GPipe all m;
    // interleaved, (v - 1) pp + 1 model chunks' micro-batches (Megatron-LM's warm-up for the last
    // rank), that is ((v - 1) pp + 1) / v stages' worth. DualPipe's ranks each hold a first and
    // a last stage, so its count is the rank's.
    double inflight_last = w.pp == 1 || w.schedule == Schedule::DualPipe ? inflight
                           : w.schedule == Schedule::GPipe              ? micro
                                                                        : 1.0;
    // Korthikanti's factor for v >= 2 chunks; with one chunk the interleaved schedule is 1F1B
    // (its time already is), and the factor (2 - 1/p there) does not apply.
    if (w.schedule == Schedule::Interleaved && v > 1) {
      inflight *= 1 + (pp - 1) / (pp * v);
      const double last_chunks = ((v - 1) * pp + 1) / v;  // in stages, at most the micro-batches
      if (w.pp > 1) inflight_last = last_chunks < micro ? last_chunks : micro;
    }
    // A layer's activations, blended by the share of the stage's layers that recompute.
    const double share = recompute_share(m, w);
    const auto kept = [&](const ModelSpec& mm) {
      const double own = layer_activation_bytes(mm, w, b, s_q, s_kv);
      return share > 0 && share < 1 ? share * own + (1 - share) * layer_activation_bytes(mm, none, b, s_q, s_kv) : own;
    };
    const double per_microbatch = mix.main * kept(m) + (mixed ? mix.dense * kept(dense_layer_model(m)) : 0.0);
    double rebuilt = 0;  // live during one layer's backward
    // Full recompute rebuilds the whole activations of the layer whose backward runs. With
    // recompute_layers N, those are each chunk's first N layers, whose backward runs after the
    // chunk's other layers freed their whole activations: where every chunk keeps a layer (N
    // below the fewest layers a chunk holds, L / (pp v) rounded down with uneven stages), the
    // rebuilt layer fits in that space (assumed for a mixture's two kinds too; revision 17).
    const int64_t fewest_in_chunk = int64_t(m.layers) / (int64_t(w.pp) * v);
    const bool every_chunk_keeps = w.recompute_layers > 0 && w.recompute_layers < fewest_in_chunk;
    if (w.recompute == Recompute::Full && !every_chunk_keeps)
      rebuilt += larger(moe_held ? layer_activation_bytes(m, none, b, s_q, s_kv) : 0.0,
                        mixed ? layer_activation_bytes(dense_layer_model(m), none, b, s_q, s_kv) : 0.0);
    // Selective recompute without flash attention computes the scores of the layer whose
    // backward runs again: one layer's scores and softmax are live then, as full recompute's
    // layer holds them.
    if (w.recompute == Recompute::Selective && !w.flash_attention)
      rebuilt += score_bytes(m) * b * (double(m.heads) / t) * s_q * s_kv;
    // The first stage (most micro-batches in flight) or the last, which also keeps the fp32
    // logits of each micro-batch it holds until that one's backward (all m under GPipe), the
    // same layers (stage_layers()) and as many parameters (its output layer for the first's
    // embedding); one stage when pp = 1.
    // A micro-batch's backward starts with its loss and output layer, which free its logits
    // before any layer's backward: the layer rebuilt then (or its scores) takes their place.
    // Not under DualPipe, whose rank runs one micro-batch's backward beside another's forward.
    const double one_logits = 4 * T * double(m.vocab) / t;
    const double logits = one_logits * (w.schedule == Schedule::GPipe ? micro : 1.0);
    const double at_backward = w.schedule == Schedule::DualPipe ? logits + rebuilt
                                                                : logits - one_logits + larger(one_logits, rebuilt);
    mb.activation = larger(rebuilt + inflight * per_microbatch, inflight_last * per_microbatch + at_backward);
    mb.weights = D * P.dense / (zero3 ? replicas : 1);
    mb.grads = c.cal.grad_bytes * P.dense / (w.sharding >= Sharding::Zero2 ? replicas : 1);
    mb.optimizer = c.cal.master_bytes * P.dense / (w.sharding >= Sharding::Zero1 ? replicas : 1);
    const double copies = expert_replicas(w);
    if (P.expert > 0) {  // sharded over the ranks holding the same experts
      mb.weights += D * P.expert / (zero3 ? copies : 1);
      mb.grads += c.cal.grad_bytes * P.expert / (w.sharding >= Sharding::Zero2 ? copies : 1);
      mb.optimizer += c.cal.master_bytes * P.expert / (w.sharding >= Sharding::Zero1 ? copies : 1);
    }
    // ZeRO-2 and ZeRO-3 keep a shard of what the replicas share, and hold one unit whole at a
    // time: a layer (the rank's part of it; experts held by one rank each are never sharded) or
    // the stage's embedding or output layer, V h / t (the larger of the two, or the layers of
    // the mixture's two kinds). Its gradient, at grad_bytes, exists whole before its
    // reduce-scatter (FSDP's per-layer unit; DeepSpeed's and Megatron's buckets are their own
    // size, which is not modelled). ZeRO-3 also gathers the weights: a layer and its prefetch
    // (one layer when the stage holds one), or at either end of a pass the embedding or output
    // layer and the one layer after or before it (the embedding and output layer from model
    // revision 15, when the gradient unit came in too).
    // (Folded, the experts may have copies where the dense weights have none: dp x cp = 1.)
    if (w.sharding >= Sharding::Zero2 && (replicas > 1 || copies > 1)) {
      const double experts = m.experts > 0 ? double(m.experts) / w.ep * mlp_params(m) : 0.0;
      const double held = copies > 1 ? 0.0 : experts;  // one copy: never sharded
      const double dense = replicas > 1 ? (rank_layer_params(m, w) - experts) / t : 0.0;
      const double moe_layer =
          w.etp > 0 ? dense + (experts - held) / expert_tp(w) : (rank_layer_params(m, w) - held) / t;
      const double dense_layer = mixed && replicas > 1 ? layer_params(dense_layer_model(m)) / t : 0.0;
      const double layer = larger(moe_held ? moe_layer : 0.0, dense_layer) + (replicas > 1 ? kv_replica_params(m, w.tp) : 0.0);
      const double vocab = replicas > 1 ? vocab_layer_params(m) / t : 0.0;
      mb.grads += c.cal.grad_bytes * larger(layer, vocab);
      const double gathered = stage_layers < 2 ? stage_layers : 2.0;
      if (zero3) mb.weights += D * larger(gathered * layer, layer + vocab);
    }
    return mb;
  }
  const double prompt = prompt_tokens(m, w);
  // Every resident sequence's cache as at its last token (Serve: a sequence in flight may be
  // anywhere between its prompt and its last output token; the cache is sized for the latter).
  const double kv_tokens = w.mode == Mode::Prefill  ? prompt
                           : w.mode == Mode::Decode ? w.kv_len + 1.0
                                                    : prompt + w.output_tokens;  // Generate, Serve
  const double resident = double(w.global_batch) / w.dp;
  // The layers' weights at the model's precision; the embedding and the output layer, which
  // run with 16-bit operands under FP8 (logits_time), at the activations' (the same but in FP8).
  const double embedding = embedding_params_per_rank(m, w);
  mb.weights = m.dtype_bytes * (P.total() - embedding) + D * embedding;
  mb.kv_cache = resident * kv_tokens / w.cp * stage_layers * 2 * D * kv_width_per_rank(m, w.tp);
  if (mla(m))  // the latent and the RoPE key, whole on every TP rank
    mb.kv_cache = resident * kv_tokens / w.cp * stage_layers * D * (double(m.kv_lora_rank) + m.rope_head_dim);
  // A decode step attends to the rank's share of the cache, kv_len / cp keys (Serve: at the
  // last output token); a prefill's micro-batch (Serve: one prompt) to its prompt.
  const double step_kv = (w.mode == Mode::Decode ? double(w.kv_len) : prompt + w.output_tokens) / w.cp;
  const double prompts = w.mode == Mode::Serve ? serve_prefill_batch(w) : b;
  const double step = larger(moe_held ? inference_activation_bytes(m, w, b, 1.0, step_kv) : 0.0,
                             mixed ? inference_activation_bytes(dense_layer_model(m), w, b, 1.0, step_kv) : 0.0);
  const double prefill = larger(moe_held ? inference_activation_bytes(m, w, prompts, prompt / w.cp, prompt) : 0.0,
                                mixed ? inference_activation_bytes(dense_layer_model(m), w, prompts, prompt / w.cp, prompt) : 0.0);
  mb.activation = w.mode == Mode::Decode    ? step
                  : w.mode == Mode::Prefill ? prefill
                                            : (step > prefill ? step : prefill);  // Generate, Serve: both run
  return mb;
}
COSMIC_HD inline MemoryBytes memory_per_npu(const Config& c) {
  const MemoryBytes most_moe = stage_memory(c, stage_mix(c.model, c.work, false));
  if (!has_dense_layers(c.model)) return most_moe;
  const MemoryBytes most_dense = stage_memory(c, stage_mix(c.model, c.work, true));
  return most_dense.total() > most_moe.total() ? most_dense : most_moe;
}

// The worst stage's layers for a pass of b sequences of s_q query tokens (T = b s_q a TP group)
// attending to s_kv keys (evaluate): each kind's layer time and communication (`lt`, `lc`; a
// mixture's dense layers `ltd`, `lcd`), and the worst stage's layers by kind, the stage with the
// most layers of the kind whose `cost` (of a layer's time and communication) is larger.
// sum(scale, f): the stage's sum of f(layer time, layer communication) over its layers, x scale.
struct StageLayers {
  LayerTime lt, ltd;
  LayerComm lc, lcd;
  StageMix mix;
  template <class F>
  COSMIC_HD double sum(double scale, F f) const {
    return scale * mix.main * f(lt, lc) + (mix.dense > 0 ? scale * mix.dense * f(ltd, lcd) : 0.0);
  }
};
template <Conventions kConv, class Cost>
COSMIC_HD inline StageLayers stage_layers_for(const Config& c, const Groups& g, double b, double s_q, double s_kv,
                                              bool absorbed, int64_t npus, Cost cost) {
  const ModelSpec& m = c.model;
  const double T = b * s_q;
  StageLayers k;
  k.lt = layer_time(c, m, b, s_q, s_kv, absorbed);
  k.lc = layer_comm<kConv>(c, m, g, T, npus);
  const bool mixed = has_dense_layers(m);
  if (mixed) {
    const ModelSpec md = dense_layer_model(m);
    k.ltd = layer_time(c, md, b, s_q, s_kv, absorbed);
    k.lcd = layer_comm<kConv>(c, md, g, T, npus);
  }
  k.mix = stage_mix(m, c.work, mixed && cost(k.ltd, k.lcd) > cost(k.lt, k.lc));
  return k;
}

// ---------------------------------------------------------------------------------------------
// Evaluate one configuration. kConv: the conventions this instantiation can run
// (kernels/collective.hpp); Physical requires c.net.convention == Physical.
//
// stop_at_oom: return as soon as the configuration is known not to fit in memory (reason
// OutOfMemory, with memory and network cost but no timing), for callers that keep nothing else
// of such a point (sweeps without --keep all). The verdict is the same as the full evaluation's
// except where the timing is not finite and positive, which the full evaluation reports as
// InvalidInput (check_config's checks leave no such configuration known to us).
template <Conventions kConv = Conventions::Any>
COSMIC_HD inline Result evaluate(const Config& c, bool stop_at_oom = false) {
  Result r;
  int64_t npus = 1;
  r.reason = check_config(c, npus);
  if (r.reason != Reason::Ok) return r;

  // A Switch on a tier without a switch price leaves the cost undefined (NaN); the point is
  // timed as any other. A design space that reads the cost rejects it (score_config:
  // SWITCH_NOT_PRICED).
  bool priced = true;
  r.network_cost_usd = network_cost_usd(c.net, priced);
  if (!priced) r.network_cost_usd = NAN;

  Groups g;
  r.reason = place_groups(c.net, c.work, g.span);
  if (r.reason != Reason::Ok) return r;
  if (!place_experts(c, g)) {
    r.reason = Reason::PlacementMismatch;
    return r;
  }
  const MemoryBytes mem = memory_per_npu(c);
  auto set_memory = [&] {
    r.weights_bytes = mem.weights;
    r.grads_bytes = mem.grads;
    r.optimizer_bytes = mem.optimizer;
    r.activation_bytes = mem.activation;
    r.kv_cache_bytes = mem.kv_cache;
    r.memory_bytes = mem.total();
  };
  if (stop_at_oom && mem.total() > c.compute.mem_capacity_bytes) {
    set_memory();
    r.reason = Reason::OutOfMemory;
    return r;
  }
  g.dp_cp = merge_spans(g.span[int(Group::DP)], g.span[int(Group::CP)]);

  const ModelSpec& m = c.model;
  const Workload& w = c.work;
  const double D = act_bytes(m), h = m.hidden;  // stored / communicated element size
  const double t = w.tp, pp = w.pp;
  const double b = w.micro_batch;
  const double micro = double(w.global_batch / (int64_t(w.dp) * w.micro_batch));  // per DP rank
  const int32_t v = w.schedule == Schedule::Interleaved ? w.vpp : 1;
  const double mem_Bps = c.compute.mem_bw_GBps * 1e9 * c.cal.mem_eff;
  const bool zero3 = w.sharding == Sharding::Zero3;
  const double replicas = double(w.dp) * w.cp;  // ranks holding the same weights
  const double expert_copies = expert_replicas(w);  // ranks holding the same experts
  const Span& pp_span = g.span[int(Group::PP)];
  const double peak = peak_flops(c.compute, m.dtype_bytes);

  // Pipeline p2p: one activation tensor per micro-batch per stage boundary, forward and
  // backward, v times with interleaving. Each of the t tensor-parallel ranks sends its 1/t of it
  // (D T h / t): with sequence parallelism that is its shard; without, Megatron's scatter /
  // gather (Narayanan et al. 2021 §4.1) sends a slice and all-gathers the whole over the TP group.
  auto p2p_s = [&](double T) {
    if (pp <= 1) return 0.0;
    const double sent = p2p_time_s<kConv>(c.net, c.cal.net_eff, pp_span, D * T * h / t);
    return w.seq_parallel || w.tp <= 1
               ? sent
               : sent + collective_time_s<kConv>(c.net, c.compute, c.cal, g.span[int(Group::TP)], Coll::AllGather,
                                                  D * T * h, npus);
  };
  const double cp_keep = 1 - c.cal.cp_overlap;

  if (w.mode == Mode::Training) {
    const double s_q = double(m.seq) / w.cp, s_kv = m.seq, T = b * s_q;
    const LayerTime lg = logits_time(c, T, true);
    // Full recompute repeats each layer's forward (with its TP / CP communication) before its
    // backward; selective recomputes only the attention core (Korthikanti et al. 2022 §5).
    // Full recompute repeats the forward of its share of the layers (all but with recompute_layers).
    const double again = recompute_share(m, w);
    const auto fwd_of = [](const LayerTime& l, const LayerComm&) { return l.fwd_s; };
    const auto bwd_of = [](const LayerTime& l, const LayerComm&) { return l.bwd_s; };
    const auto rec_of = [&](const LayerTime& l, const LayerComm&) {
      return again > 0 ? again * l.fwd_s : l.selective_s;
    };
    const auto tp_of = [&](const LayerTime&, const LayerComm& l) { return l.tp_fwd_s + l.tp_bwd_s + again * l.tp_fwd_s; };
    const auto cp_of = [&](const LayerTime&, const LayerComm& l) { return l.cp_fwd_s + l.cp_bwd_s + again * l.cp_fwd_s; };
    const auto ep_of = [&](const LayerTime&, const LayerComm& l) { return l.ep_fwd_s + l.ep_bwd_s + again * l.ep_fwd_s; };
    const auto layer_of = [&](const LayerTime& l, const LayerComm& k) {
      return fwd_of(l, k) + bwd_of(l, k) + rec_of(l, k) + tp_of(l, k) + cp_of(l, k) + ep_of(l, k);
    };
    // A mixture with dense layers: the stage holding the most layers of the dearer kind, or the
    // other candidate where its parameters (ZeRO-3's gathers in every pass, the gradient
    // synchronisation, the optimizer step) make its step the slower: the slowest stage sets the
    // pace (a cheaper dense layer once dropped the expert stages' traffic from the step).
    const StageLayers k0 = stage_layers_for<kConv>(c, g, b, s_q, s_kv, false, npus, layer_of);
    const auto step = [&](const StageLayers& k, Result& r) {
      const EdgeComm ec = edge_comm<kConv>(c, g, k.lc, b, T, true, npus);
      const RankParams P = stage_params_per_rank(m, w, k.mix);

      const double fwd = k.sum(1.0, fwd_of) + lg.fwd_s;
      const double bwd = k.sum(1.0, bwd_of) + lg.bwd_s;
      const double rec = k.sum(1.0, rec_of);
      const double tpc = k.sum(1.0, tp_of) + ec.fwd_s + ec.bwd_s;
      const double cpc = k.sum(1.0, cp_of);
      // overlap_ep_comm: in the steady state a forward chunk runs beside another micro-batch's
      // backward chunk, each one's all-to-alls while the other computes (DeepSeek-V3's DualPipe;
      // Megatron-Core's MoE all-to-all overlap), so a micro-batch's all-to-alls are hidden up to
      // its compute (forward, backward, recompute) and only what exceeds it is exposed. Nothing is
      // paired with one micro-batch, nor under GPipe (all forwards, then all backwards), nor in the
      // 1F1B and interleaved schedules' warm-up and cool-down (their bubble, below, keeps the
      // all-to-alls whole). ep_overlap's fraction is hidden first. While the all-to-alls run
      // (A of them, beside C of compute), their kernels take ep_comm_sm_share = f of the compute
      // units (DeepSeek-V3 §3.2.2: 20 of an H800's 132 SMs), and the compute runs at 1 - f of
      // its speed: the pair takes C + f A where the all-to-alls end first (A (1 - f) <= C), else
      // A; exposed, max(f A, A - C). Assumed: every kernel slows alike, memory-bound ones too.
      const double ep_all = k.sum(1.0, ep_of);
      const bool paired = w.overlap_ep_comm && micro > 1 && w.schedule != Schedule::GPipe;
      const double epc = paired ? larger(w.ep_comm_sm_share * ep_all, ep_all - (fwd + bwd + rec)) : ep_all;
      // Paired micro-batches whose all-to-alls outlast their compute run as long as the
      // all-to-alls do: their passes stretch by that factor, and so do the windows that hide
      // data-parallel traffic behind a pass (without it a faster compute shrank the windows while
      // the step, bound by the all-to-alls, stayed as long, and exposed more of that traffic).
      const double stretch = paired && epc > 0 ? (fwd + bwd + rec + epc) / (fwd + bwd + rec) : 1.0;
      const double p2p = 2 * v * p2p_s(T);

      // Weight and gradient traffic over the DP x CP replicas, each collective timed once: collective
      // `coll` of `per_param` bytes per parameter, the dense parameters over DP x CP, then the
      // experts' over the ranks that hold the same experts.
      // (Folded, the experts may have copies to synchronise where the dense weights have none.)
      const bool sync = replicas > 1 || (P.expert > 0 && expert_copies > 1);
      auto replica_coll = [&](Coll coll, double per_param) {
        double s = replicas > 1 ? collective_time_s<kConv>(c.net, c.compute, c.cal, g.dp_cp, coll, per_param * P.dense, npus)
                                : 0.0;
        if (P.expert > 0 && expert_copies > 1)
          s += collective_time_s<kConv>(c.net, c.compute, c.cal, g.ep_dp, coll, per_param * P.expert, npus);
        return s;
      };
      auto sharded_coll = [&](Coll coll, double per_param) {  // ZeRO's weight gathers and gradient scatters
        return sync && w.sharding != Sharding::None ? replica_coll(coll, per_param) : 0.0;
      };
      const double gather_w = sharded_coll(Coll::AllGather, D);
      const double scatter_g = sharded_coll(Coll::ReduceScatter, c.cal.grad_bytes);
      // DualPipe's rank holds two stages (P counts both) but a micro-batch passes through one:
      // what each micro-batch gathers or reduce-scatters (ZeRO-3, ZeRO-2) is one stage's.
      const double pass_share = w.schedule == Schedule::DualPipe ? 0.5 : 1.0;
      const double pass_gather = pass_share < 1 ? sharded_coll(Coll::AllGather, pass_share * D) : gather_w;
      const double pass_scatter = pass_share < 1 ? sharded_coll(Coll::ReduceScatter, pass_share * c.cal.grad_bytes) : scatter_g;
      // ZeRO-3 / FSDP: each pass all-gathers the stage's weights over the replicas, prefetched one
      // layer ahead; backward also reduce-scatters the gradients (Zhao et al. 2023, FSDP). This is
      // data-parallel traffic like the gradient synchronisation below, so the same usable fraction
      // of the pass hides it (dp_overlap; 1 on the ideal machine: only what exceeds the pass's
      // compute is exposed; our assumption, not validated: no measured run uses ZeRO-3).
      // z3_scatter: the share of z3 that the gradient reduce-scatter adds, after the gathers.
      double z3 = 0, z3_scatter = 0;
      if (zero3 && sync) {
        const double back = pass_gather + pass_scatter;
        const double fwd_window = stretch * c.cal.dp_overlap * fwd, bwd_window = stretch * c.cal.dp_overlap * (bwd + rec);
        const double back_exposed = back > bwd_window ? back - bwd_window : 0.0;
        z3 = (pass_gather > fwd_window ? pass_gather - fwd_window : 0.0) + back_exposed;
        z3_scatter = back_exposed - (pass_gather > bwd_window ? pass_gather - bwd_window : 0.0);
      }
      // ZeRO-2 keeps a 1/replicas share of the gradients, so over several micro-batches each one's
      // gradients are reduce-scattered as its backward produces them (DeepSpeed's ZeRO-2 with
      // gradient accumulation), each hidden by the usable fraction of that backward; one
      // micro-batch is the end-of-step case below.
      const double bwd_window = stretch * k.sum(c.cal.dp_overlap, bwd_of);
      const bool z2_each = w.sharding == Sharding::Zero2 && sync && micro > 1;
      const double z2 = z2_each && pass_scatter > bwd_window ? pass_scatter - bwd_window : 0.0;
      const double t_mb = fwd + bwd + rec + tpc + cpc + p2p + z3 + z2 + epc;

      // Gradient synchronisation over DP x CP at the end of the step. The gradient all-reduce
      // (no sharding) or reduce-scatter (ZeRO-1/2, the distributed optimizer) overlaps the last
      // micro-batch's backward (bucketed DDP); dp_overlap = the usable fraction of that backward.
      // The all-gather of updated weights follows the optimizer step, so it can only overlap the
      // next iteration's first forward (Megatron's overlap-param-gather), by the same fraction.
      double dp_exposed = 0;
      if (sync && !zero3) {
        const double grads = w.sharding == Sharding::None ? replica_coll(Coll::AllReduce, c.cal.grad_bytes)
                                                          : (z2_each ? 0.0 : scatter_g);
        const double fwd_window = stretch * k.sum(c.cal.dp_overlap, fwd_of);
        dp_exposed = (grads > bwd_window ? grads - bwd_window : 0.0) + (gather_w > fwd_window ? gather_w - fwd_window : 0.0);
      }

      // Adam step: streams optimizer_bytes_per_param for each parameter this rank updates.
      double opt_params = w.sharding == Sharding::None ? P.dense : P.dense / replicas;
      if (P.expert > 0) opt_params += w.sharding == Sharding::None ? P.expert : P.expert / expert_copies;
      r.optimizer_s = opt_params * c.cal.optimizer_bytes_per_param / mem_Bps;

      r.forward_s = micro * fwd;
      r.backward_s = micro * bwd;
      r.recompute_s = micro * rec;
      r.tp_comm_s = micro * tpc;
      r.cp_comm_s = micro * cpc;
      r.pp_comm_s = micro * p2p;
      r.ep_comm_s = micro * epc;
      // Tied embeddings with pp > 1: the last stage keeps a copy of the word embeddings, and the
      // two copies' gradients (grad_bytes V h / t per rank) are all-reduced between the first and
      // the last stage after the DP synchronisation (Megatron's embedding group), exposed: an
      // exchange of the whole buffer over the outermost network dimension the pipeline spans
      // (the first and the last stage differ there; it is usually the slowest).
      double tied_sync = 0;
      if (pp > 1 && m.tied_embeddings) {
        Span outer;
        const int32_t d = outermost_dim(pp_span, c.net.ndims);  // pp > 1: one exists
        outer.k[d] = pp_span.k[d];
        outer.stride[d] = pp_span.stride[d];
        tied_sync = p2p_time_s<kConv>(c.net, c.cal.net_eff, outer, c.cal.grad_bytes * vocab_layer_params(m) / t);
      }
      r.dp_comm_s = micro * (z3 + z2) + dp_exposed + tied_sync;
      // The warm-up and cool-down: nothing paired, and no gradient reduce-scatter (ZeRO-2's, and
      // ZeRO-3's after its gathers): a stage sends its input gradient on before it scatters its
      // weight gradients, so the stages waiting for it do not wait for the scatter, which fills the
      // stage's own idle time (the weight gathers do delay each pass).
      r.bubble_s = (pp - 1) / v * (t_mb - z2 - z3_scatter + (ep_all - epc));
      // DualPipe (DeepSeek-V3 report, Table 2): (pp / 2 - 1) (F&B + B - 3 W), F&B a forward and
      // a backward chunk run together (t_mb: the all-to-alls hidden as overlap_ep_comm says), B
      // a backward chunk (with its recompute), W its weight-gradient half (our assumption: half
      // the backward, which overstates it by the attention core's share). B and W are taken to
      // stretch as the micro-batch does, by t_mb over its compute (each chunk's communication in
      // proportion to its compute): with B and W at their compute alone, a faster compute left a
      // t_mb bound by communication as long and shrank the W that fills the bubble, and the step
      // got slower.
      if (w.schedule == Schedule::DualPipe)
        r.bubble_s = (pp / 2 - 1) * (t_mb + t_mb / (fwd + bwd + rec) * ((bwd + rec) - 3 * (bwd / 2)));

      r.model_flops = 3 * double(w.global_batch) * forward_flops_per_sequence(m, m.seq, m.seq, m.seq);
      const double tokens = double(w.global_batch) * m.seq;
      r.time_s = r.forward_s + r.backward_s + r.recompute_s + r.optimizer_s + r.tp_comm_s + r.cp_comm_s +
                 r.dp_comm_s + r.pp_comm_s + r.bubble_s + r.ep_comm_s;
      r.tokens_per_s = tokens / r.time_s;
    };
    step(k0, r);
    if (has_dense_layers(m))
      for (const bool most_dense : {false, true}) {
        StageLayers k1 = k0;
        k1.mix = stage_mix(m, w, most_dense);
        if (k1.mix.main == k0.mix.main && k1.mix.dense == k0.mix.dense) continue;  // k0's own
        Result r1 = r;
        step(k1, r1);
        if (r1.time_s > r.time_s) r = r1;
      }
  } else {
    // Inference: forward only; the DP replicas serve global_batch / dp sequences each, in
    // micro-batches that flow through the pipeline: (m + pp - 1) stage times.
    const double prompt = prompt_tokens(m, w);
    struct Pass { double fwd, tp, cp, p2p, ep; };
    // A mixture with dense layers: each pass timed on the stage slowest for it (stage_layers_for).
    auto pass = [&](double bb, double s_q_total, double s_kv) {
      // A micro-batch of bb sequences: s_q_total query tokens each (sharded over cp), s_kv keys.
      const double s_q = s_q_total >= w.cp ? s_q_total / w.cp : s_q_total;
      const double T = bb * s_q;
      const double keys = s_kv / (s_q_total >= w.cp ? 1.0 : w.cp);
      const LayerTime lg = logits_time(c, bb, false);  // next-token logits only
      // Prefill gathers keys/values over cp (layer_comm's forward); decode combines partial
      // attention outputs (an all-reduce of D bb q / t, q = q_width) across the cp ranks that
      // each hold s_kv / cp of the cache.
      const bool prefill = s_q_total >= w.cp;
      const double decode_cp = w.cp > 1 && !prefill ? cp_keep * collective_time_s<kConv>(
                                                          c.net, c.compute, c.cal, g.span[int(Group::CP)],
                                                          Coll::AllReduce,
                                                          D * bb * (mla(m) ? m.heads * mla_v_width(m) : q_width(m)) / t, npus)
                                                    : 0.0;
      const auto fwd_of = [](const LayerTime& l, const LayerComm&) { return l.fwd_s; };
      const auto tp_of = [](const LayerTime&, const LayerComm& l) { return l.tp_fwd_s; };
      const auto cp_of = [&](const LayerTime&, const LayerComm& l) { return prefill ? l.cp_fwd_s : decode_cp; };
      const auto ep_of = [](const LayerTime&, const LayerComm& l) { return l.ep_fwd_s; };
      const auto layer_of = [&](const LayerTime& l, const LayerComm& k) {
        return fwd_of(l, k) + tp_of(l, k) + cp_of(l, k) + ep_of(l, k);
      };
      const bool decode = s_q_total == 1;  // a decode step: MLA attends in the latent
      const StageLayers k = stage_layers_for<kConv>(c, g, bb, s_q, keys, decode, npus, layer_of);
      const EdgeComm ec = edge_comm<kConv>(c, g, k.lc, bb, T, false, npus);
      Pass p;
      p.fwd = k.sum(1.0, fwd_of) + lg.fwd_s;
      p.tp = k.sum(1.0, tp_of) + ec.fwd_s;
      p.cp = k.sum(1.0, cp_of);
      p.p2p = p2p_s(T);
      p.ep = k.sum(1.0, ep_of);
      return p;
    };
    // `repeat` passes of `mbs` micro-batches one after another (decode steps): unless the
    // pipeline is already full (`steady`), the first fills it in (mbs + pp - 1) stage times;
    // afterwards each micro-batch's next token starts as soon as its previous one has left the
    // last stage, so a pass takes max(mbs, pp) stage times.
    // `passes` micro-batches' work on a stage, in a pipeline with no idle stage left to fill.
    auto add_work = [&](const Pass& p, double passes) {
      r.forward_s += passes * p.fwd;
      r.tp_comm_s += passes * p.tp;
      r.cp_comm_s += passes * p.cp;
      r.pp_comm_s += passes * p.p2p;
      r.ep_comm_s += passes * p.ep;
    };
    auto add = [&](const Pass& p, double mbs, double repeat, bool steady) {
      const double t_mb = p.fwd + p.tp + p.cp + p.p2p + p.ep;
      add_work(p, repeat * mbs);
      const double idle_per_pass = (mbs < pp ? pp - mbs : 0.0) * t_mb;
      r.bubble_s += steady ? repeat * idle_per_pass : (pp - 1) * t_mb + (repeat - 1) * idle_per_pass;
    };
    double tokens = 0;
    const double B = double(w.global_batch);
    const auto elapsed = [&] { return r.forward_s + r.tp_comm_s + r.cp_comm_s + r.pp_comm_s + r.bubble_s + r.ep_comm_s; };
    const double mid = prompt + 0.5 * w.output_tokens;  // the mean context of the output tokens
    if (w.mode == Mode::Prefill) {
      add(pass(b, prompt, prompt), micro, 1, false);
      tokens = B * prompt;
      r.model_flops = B * forward_flops_per_sequence(m, prompt, prompt, 1);
    } else if (w.mode == Mode::Decode) {
      add(pass(b, 1, w.kv_len), micro, 1, false);
      tokens = B;
      r.model_flops = B * forward_flops_per_sequence(m, 1, w.kv_len, 1);
    } else if (w.mode == Mode::Generate) {  // the study's latency = prefill + N_out x decode at the mid-point context
      add(pass(b, prompt, prompt), micro, 1, false);
      r.first_token_s = elapsed();  // the first token comes with the prefill, summed as a prefill's time_s
      add(pass(b, 1, mid), micro, w.output_tokens, false);
      tokens = B * w.output_tokens;
      r.model_flops = B * (forward_flops_per_sequence(m, prompt, prompt, 1) +
                           w.output_tokens * forward_flops_per_sequence(m, 1, mid, 1));
    } else {
      // Serve: continuous batching (Orca, Yu et al. 2022; vLLM) in its steady state. A replica
      // keeps n = global_batch / dp sequences in flight, decoding one token for each in a step
      // (its micro-batches in a full pipeline: max(m, pp) stage times at the mean context).
      // Every step k = n / N_out of them finish on average, and as many new prompts are
      // prefilled, in batches of kb = max(1, k) prompts that flow through the pipeline among
      // the decode micro-batches (each stage does their work; no fill of their own). A cycle,
      // a step and its prefills, gives each sequence a token: per output token = step + (k / kb)
      // x a kb-prompt batch's stage time. A new request arrives at a random moment of a cycle
      // (half a cycle to wait, on average; no queue beyond it) and its prompt, in such a batch,
      // crosses all pp stages: first token = pp stage times of the batch + per output token / 2.
      // time_s = first token + N_out x per output token, one request's latency, which the
      // breakdown sums.
      const double k = serve_new_prompts(w), kb = serve_prefill_batch(w);
      const Pass prefill = pass(kb, prompt, prompt), step = pass(b, 1, mid);
      add(prefill, 1, 1, false);
      add(step, micro, 0.5, true);
      add_work(prefill, 0.5 * k / kb);
      r.first_token_s = elapsed();
      add(step, micro, w.output_tokens, true);
      add_work(prefill, w.output_tokens * k / kb);
      tokens = B * w.output_tokens;
      r.model_flops = double(w.dp) * (kb + (w.output_tokens + 0.5) * k) * forward_flops_per_sequence(m, prompt, prompt, 1) +
                      B * (w.output_tokens + 0.5) * forward_flops_per_sequence(m, 1, mid, 1);
    }
    r.time_s = elapsed();
    if (w.mode == Mode::Prefill) r.first_token_s = r.time_s;
    // Serve: the steady rate, global_batch tokens per time per output token.
    r.tokens_per_s = tokens / (w.mode == Mode::Serve ? r.time_s - r.first_token_s : r.time_s);
  }

  set_memory();
  r.mfu = r.model_flops / (r.time_s * double(npus) * peak);
  if (!(r.time_s > 0) || !(r.time_s < 1e300)) { r = Result{}; r.reason = Reason::InvalidInput; return r; }
  if (r.memory_bytes > c.compute.mem_capacity_bytes) r.reason = Reason::OutOfMemory;
  return r;
}

// One transformer layer of one training micro-batch, as Korthikanti et al. 2022 Table 4 times
// it: forward (compute + exposed TP / CP communication) and backward (with recompute), seconds.
struct LayerPassTimes {
  double forward_s = 0;
  double backward_s = 0;
};
COSMIC_HD inline LayerPassTimes training_layer_times(const Config& c) {
  LayerPassTimes out;
  int64_t npus = 1;
  if (check_config(c, npus) != Reason::Ok) return out;
  Groups g;
  if (place_groups(c.net, c.work, g.span) != Reason::Ok || !place_experts(c, g)) return out;
  const double s_q = double(c.model.seq) / c.work.cp, T = c.work.micro_batch * s_q;
  const LayerTime lt = layer_time(c, c.model, c.work.micro_batch, s_q, c.model.seq);
  const LayerComm lc = layer_comm(c, c.model, g, T, npus);
  out.forward_s = lt.fwd_s + lc.tp_fwd_s + lc.cp_fwd_s + lc.ep_fwd_s;
  out.backward_s = lt.bwd_s + lc.tp_bwd_s + lc.cp_bwd_s + lc.ep_bwd_s;
  if (c.work.recompute == Recompute::Full) out.backward_s += out.forward_s;
  else out.backward_s += lt.selective_s;
  return out;
}

}  // namespace cosmic
