// The analytical model of one configuration: golden values computed by hand from the published
// formulas (Korthikanti et al. 2022 activations, Narayanan et al. 2021 FLOPs, pipeline bubble,
// LIBRA network cost), feasibility reason codes, and finiteness over random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/model.hpp"
#include "kernels/score.hpp"
#include "kernels/space.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

constexpr double GiB = 1073741824.0;

ModelSpec gpt22b() { return ModelSpec{48, 6144, 24576, 64, 64, 2048, 51200, Mlp::Gelu, 2, true, true}; }

TEST(Activations, Korthikanti22B) {
  // s 2048, b 4, h 6144, a 64, t 8, L 48 (Korthikanti et al. 2022, Table 2 / §4).
  const ModelSpec m = gpt22b();
  Workload w;
  w.tp = 8;
  w.flash_attention = false;
  // TP only: s b h (10 + 24/t + 5 a s / (h t)) per layer = 50331648 x 26.333.. = 1325400064 B;
  // x 48 layers = 63619203072 B = 59.25 GiB.
  EXPECT_NEAR(48 * layer_activation_bytes(m, w, 4, 2048, 2048) / GiB, 59.25, 1e-9);
  // TP + sequence parallel + selective recompute: 34 s b h / t = 213909504 B per layer;
  // x 48 = 10267656192 B = 9.5625 GiB.
  w.seq_parallel = true;
  w.recompute = Recompute::Selective;
  EXPECT_NEAR(48 * layer_activation_bytes(m, w, 4, 2048, 2048) / GiB, 9.5625, 1e-9);
  // Full recompute keeps the layer input: 2 s b h / t with sequence parallelism.
  w.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 4, 2048, 2048), 2.0 * 2048 * 4 * 6144 / 8);
}

// Trained without dropout, a layer keeps no masks (the 2 s b h of the kept-whole part) and no
// dropout output (of the 5 bytes a score, the softmax output's 2 stay), and unfused attention
// streams 4D a score, not 6D + 1.
TEST(Activations, NoDropoutKeepsNoMasks) {
  ModelSpec m = gpt22b();
  m.dropout = false;
  Workload w;
  w.tp = 8;
  w.flash_attention = false;
  // s b h (8 + 24/t + 2 a s / (h t)) = 50331648 x (8 + 3 + 2 x 64 x 2048 / 49152) = 50331648 x
  // 16.333.. = 822083584 B a layer.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 4, 2048, 2048), 822083584.0);
  // Sequence parallel + selective recompute: 32 s b h / t = 201326592 B.
  w.seq_parallel = true;
  w.recompute = Recompute::Selective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 4, 2048, 2048), 201326592.0);
}

// Selective recompute's modules and FP8-cached activations (model revision 16), GPT-22B as
// above (s b h = 50331648 bytes per unit below; t 8, unfused attention, GELU: two MLP matrices,
// F = 4h). Whole 10 sbh: norm inputs 4, norm outputs 4, masks 2; split 24 sbh / t: Q, K, V, O 2
// each, the MLP's activation input and output 8 each; scores 5 a s / (h t) = 13.33.. sbh.
TEST(Activations, RecomputeModulesAndFp8Cache) {
  ModelSpec m = gpt22b();
  Workload w;
  w.tp = 8;
  w.flash_attention = false;
  w.recompute = Recompute::Selective;
  const double sbh = 50331648;
  // layernorm and mlp_act without core_attn: whole 6, split (8 + 8) / 8 = 2, the scores kept:
  // 6 + 2 + 40 / 3 = 64 / 3 sbh.
  w.recompute_modules = kRecomputeLayerNorm | kRecomputeMlpAct;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 4, 2048, 2048), sbh * 64 / 3);
  // FP8 GEMMs with their inputs cached in FP8 (core_attn): whole 4 + 2 + 2 = 8; split: Q, K, V 6,
  // O 1, the MLP 4 + 4 -> 15 / 8. 9.875 sbh.
  m.dtype_bytes = 1;
  w.fp8_cache = true;
  w.recompute_modules = kRecomputeCoreAttn;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 4, 2048, 2048), sbh * 9.875);
  // All four: whole 4 + 2 = 6; split 7 / 8 + 4 / 8. 7.375 sbh.
  w.recompute_modules = kRecomputeCoreAttn | kRecomputeLayerNorm | kRecomputeMlpAct;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 4, 2048, 2048), sbh * 7.375);
  // Modules are read with selective recompute only.
  w.recompute = Recompute::None;
  w.fp8_cache = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 4, 2048, 2048), sbh * (10 + 3 + 40.0 / 3));
}

// MLA's up-projections and normed latents: a small MLA model, h 1024, 8 heads of d_n 64 + d_r 32
// (d_v 64), latents r_q 256 and r_kv 128, SwiGLU F 2048, no dropout; 1,000 tokens, t 1, flash
// attention; per token in 2-byte elements: whole 4 h = 4096; heads a 2 (qk + d_v) = 2560, the
// normed latents and the RoPE key 256 + 128 + 32, the latents before their norms 384; the MLP
// 3 F = 6144. 13,600 elements, 27.2 MB.
TEST(Activations, MlaUpProjectionsAndNorms) {
  ModelSpec m{4, 1024, 2048, 8, 8, 1000, 32000, Mlp::SwiGLU, 2, false, false};
  m.head_dim = 64, m.rope_head_dim = 32, m.v_head_dim = 64, m.q_lora_rank = 256, m.kv_lora_rank = 128;
  m.dropout = false;
  Workload w;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 1, 1000, 1000), 27.2e6);
  // mla_up_proj drops Q, K (96 each a head) and V (64): 8 x 256 = 2048 elements, 4.096 MB.
  w.recompute = Recompute::Selective;
  w.recompute_modules = kRecomputeMlaUpProj;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 1, 1000, 1000), 23.104e6);
  // layernorm too: the two norm outputs 2 h and the normed latents 384: 2432 elements more.
  w.recompute_modules = kRecomputeMlaUpProj | kRecomputeLayerNorm;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 1, 1000, 1000), 18.24e6);
  // Without a query latent the queries are projected from the input, and dropped all the same
  // (Megatron-Core recomputes that projection too): whole 4096, the output 8 x 64, the normed
  // KV latent 128 and the RoPE key 32, the KV latent before its norm 128, the MLP 6144.
  m.q_lora_rank = 0;
  w.recompute_modules = kRecomputeMlaUpProj;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, w, 1, 1000, 1000), 2.0 * 1000 * (4096 + 8 * 64 + 128 + 32 + 128 + 6144));
}

// What selective recompute runs again (LayerTime::selective_s): the attention core, as before
// revision 16; the norms, 4 D T h streamed (GPT-22B, T = 8192 tokens, no sequence parallelism);
// the MLP's activation function, 2 D T F / t (GELU).
TEST(LayerTime, SelectiveRecomputeModules) {
  Config c = test::gpt175b_cluster();
  c.model = gpt22b();
  c.work.tp = 8;
  c.work.seq_parallel = false;
  c.work.recompute = Recompute::Selective;
  const double mem_Bps = c.compute.mem_bw_GBps * 1e9 * c.cal.mem_eff;
  const double attn = layer_time(c, c.model, 4, 2048, 2048).selective_s;
  EXPECT_GT(attn, 0);
  c.work.recompute_modules = kRecomputeLayerNorm;
  EXPECT_DOUBLE_EQ(layer_time(c, c.model, 4, 2048, 2048).selective_s, 2.0 * 8192 * 4 * 6144 / mem_Bps);
  c.work.recompute_modules = kRecomputeMlpAct;
  EXPECT_DOUBLE_EQ(layer_time(c, c.model, 4, 2048, 2048).selective_s, 2.0 * 8192 * 2 * 24576 / 8 / mem_Bps);
  c.work.recompute_modules = kRecomputeCoreAttn | kRecomputeLayerNorm;
  EXPECT_DOUBLE_EQ(layer_time(c, c.model, 4, 2048, 2048).selective_s, attn + 2.0 * 8192 * 4 * 6144 / mem_Bps);
  c.work.recompute = Recompute::None;
  EXPECT_EQ(layer_time(c, c.model, 4, 2048, 2048).selective_s, 0.0);
}

TEST(Flops, NarayananFormula) {
  // Model FLOPs of one iteration: 72 B s L h^2 (1 + s/(6h) + V/(12 L h)).
  Config c = test::gpt175b_cluster();
  const Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  const double B = 64, s = 2048, L = 96, h = 12288, V = 51200;
  const double expect = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  EXPECT_NEAR(r.model_flops / expect, 1.0, 1e-12);
  // Llama (GQA, SwiGLU), NVIDIA recipe convention per sequence:
  // s [12 L h^2 (1 + g/a + s/h) + 18 L F h + 6 V h], Llama 3.1 8B: L 32, h 4096, F 14336, g/a 1/4.
  const ModelSpec llama{32, 4096, 14336, 32, 8, 8192, 128256, Mlp::SwiGLU, 2, false, false};
  const double Ls = 32, hs = 4096, F = 14336, ss = 8192, Vs = 128256;
  const double recipe = ss * (12 * Ls * hs * hs * (1 + 0.25 + ss / hs) + 18 * Ls * F * hs + 6 * Vs * hs);
  EXPECT_NEAR(3 * forward_flops_per_sequence(llama, ss, ss, ss) / recipe, 1.0, 1e-12);
}

TEST(Params, BiasesOfEachMatrix) {
  // Per layer: QKV h (1 + 2 g/a), output projection h, MLP up F (gate and up, 2F, with SwiGLU),
  // down h, two LayerNorms 2h: 7h + F (GELU) or 7h + 2F (SwiGLU) with MHA.
  for (Mlp mlp : {Mlp::Gelu, Mlp::SwiGLU}) {
    ModelSpec m{32, 4096, 11008, 32, 32, 4096, 32000, mlp, 2, false, false};
    const double without = layer_params(m);
    m.biases = true;
    EXPECT_EQ(layer_params(m) - without, 7 * 4096 + (mlp == Mlp::SwiGLU ? 2 : 1) * 11008.0);
  }
}

TEST(Params, NarayananCount) {
  // P = 12 L h^2 (1 + 13/(12h) + (V + s)/(12 L h)) counts learned position embeddings (s h),
  // which cosmic leaves out (rotary or negligible).
  const ModelSpec m{96, 12288, 49152, 96, 96, 2048, 51200, Mlp::Gelu, 2, true, true};
  const double L = 96, h = 12288, V = 51200, s = 2048;
  const double expect = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h));
  EXPECT_NEAR(model_params(m) + s * h, expect, 1e-12 * expect);
}

// Heads with a width of their own (head_dim): Qwen3's released configurations, counted by hand.
TEST(Params, HeadsOfTheirOwnWidth) {
  // Qwen3-32B: h 5120, 64 heads and 8 KV heads of 128 (queries 8192 wide), F 25600, V 151936,
  // untied. A layer: Q and output 2 x 5120 x 8192, K and V 2 x 5120 x 1024, MLP 3 x 5120 x 25600,
  // norms 2 x 5120: 94,371,840 + 393,216,000 + 10,240 = 487,598,080; 64 of them and 2 x 151936 x
  // 5120 of embeddings: 32,762,101,760 (the report's 32.8 B).
  ModelSpec q32{64, 5120, 25600, 64, 8, 4096, 151936, Mlp::SwiGLU, 2, false, false};
  q32.head_dim = 128;
  EXPECT_EQ(layer_params(q32), 487598080.0);
  EXPECT_EQ(model_params(q32), 32762101760.0);
  // Forward FLOPs of one 4,096-token sequence: QKV 2 s h (8192 + 2 x 1024), output 2 s h 8192,
  // MLP 6 s h F, attention 4 s^2 8192 per layer; logits 2 s h V.
  const double s = 4096, h = 5120;
  const double layer = 2 * s * h * (8192 + 2048) + 2 * s * h * 8192 + 6 * s * h * 25600 + 4 * s * s * 8192;
  EXPECT_DOUBLE_EQ(forward_flops_per_sequence(q32, s, s, s), 64 * layer + 2 * s * h * 151936);
  // K / V per TP rank: 8 heads of 128 split by tp (one head from tp 8 up).
  EXPECT_EQ(kv_width_per_rank(q32, 2), 512.0);
  EXPECT_EQ(kv_width_per_rank(q32, 16), 128.0);
  // Qwen3-235B-A22B: 94 layers, h 4096, 64 / 4 heads of 128, 128 experts of F 1536, top 8.
  // A layer: attention 2 x 4096 x 8192 + 2 x 4096 x 512 = 71,303,168, experts 128 x 3 x 4096 x
  // 1536 = 2,415,919,104, router 4096 x 128 = 524,288, norms 8,192: 2,487,754,752; the model
  // 94 x that + 2 x 151936 x 4096 = 235,093,606,400 (the name's 235 B).
  ModelSpec q235{94, 4096, 1536, 64, 4, 4096, 151936, Mlp::SwiGLU, 2, false, false, 128, 8};
  q235.head_dim = 128;
  EXPECT_EQ(model_params(q235), 235093606400.0);
  // A head width equal to h / a is the default, bit for bit.
  const Config base = test::gpt175b_cluster();
  Config own = base;
  own.model.head_dim = 12288 / 96;
  const Result a = evaluate(base), b = evaluate(own);
  EXPECT_EQ(a.time_s, b.time_s);
  EXPECT_EQ(a.memory_bytes, b.memory_bytes);
  EXPECT_EQ(a.model_flops, b.model_flops);
  // Wider heads cost more time, FLOPs and memory; a negative width is invalid input.
  own.model.head_dim = 256;
  const Result w = evaluate(own);
  EXPECT_GT(w.time_s, a.time_s);
  EXPECT_GT(w.model_flops, a.model_flops);
  EXPECT_GT(w.memory_bytes, a.memory_bytes);
  own.model.head_dim = -1;
  EXPECT_EQ(evaluate(own).reason, Reason::InvalidInput);
}

// Sum of the per-micro-batch terms of a training result (everything that repeats m times).
double per_microbatch_terms(const Result& r) {
  return r.forward_s + r.backward_s + r.recompute_s + r.tp_comm_s + r.cp_comm_s + r.pp_comm_s;
}

TEST(Pipeline, BubbleFraction) {
  // 1F1B: bubble = (p - 1) / m of the micro-batch work; interleaved: (p - 1) / (v m).
  Config c = test::gpt175b_cluster();  // pp 8, m = 64
  Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.bubble_s, 7.0 / 64 * per_microbatch_terms(r), 1e-9 * r.bubble_s);
  c.work.schedule = Schedule::Interleaved;
  c.work.vpp = 3;
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.bubble_s, 7.0 / (3 * 64) * per_microbatch_terms(r), 1e-9 * r.bubble_s);
  // The breakdown adds up to the total.
  EXPECT_NEAR(r.time_s, per_microbatch_terms(r) + r.bubble_s + r.optimizer_s + r.dp_comm_s, 1e-9 * r.time_s);
}

TEST(Pipeline, InterleavedMemoryFactor) {
  // Activations of the first stage: 1F1B holds min(p, m) micro-batches; interleaving with v >= 2
  // chunks x (1 + (p - 1) / (p v)) (Korthikanti et al. 2022); one chunk is 1F1B, time and memory.
  Config c = test::gpt175b_cluster();  // pp 8, m = 64
  const Result base = evaluate(c);
  ASSERT_EQ(base.reason, Reason::Ok);
  c.work.schedule = Schedule::Interleaved;
  c.work.vpp = 1;
  const Result one = evaluate(c);
  EXPECT_EQ(one.activation_bytes, base.activation_bytes);
  EXPECT_EQ(one.time_s, base.time_s);
  c.work.vpp = 2;
  const Result two = evaluate(c);
  EXPECT_NEAR(two.activation_bytes, base.activation_bytes * (1 + 7.0 / 16), 1e-12 * two.activation_bytes);
}

// DualPipe (DeepSeek-V3 report, Table 2): bubble (p/2 - 1)(F&B + B - 3W), twice the parameters,
// p + 1 micro-batches of activations; an even p and an even number of micro-batches, >= 2 p.
TEST(Pipeline, DualPipe) {
  Config c = test::gpt175b_cluster();  // pp 8, m = 64, selective recompute, no ZeRO
  c.compute.mem_capacity_bytes = 1e15;  // twice the weights do not fit in 80 GiB
  const Result one = evaluate(c);
  c.work.schedule = Schedule::DualPipe;
  const Result dual = evaluate(c);
  ASSERT_EQ(one.reason, Reason::Ok);
  ASSERT_EQ(dual.reason, Reason::Ok);
  // A micro-batch's work (1F1B's bubble is 7 of them), a backward chunk with its recompute, and
  // its weight-gradient half: 3 x (8 / 2 - 1) = 3 bubbles of t_mb + B - 3 W, B and W stretched
  // by the micro-batch's communication (t_mb over its compute C).
  const double t_mb = one.bubble_s / 7, B = (one.backward_s + one.recompute_s) / 64, W = one.backward_s / 64 / 2;
  const double C = (one.forward_s + one.backward_s + one.recompute_s) / 64;
  EXPECT_NEAR(dual.bubble_s, 3 * (t_mb + t_mb / C * (B - 3 * W)), 1e-9 * dual.bubble_s);
  EXPECT_LT(dual.bubble_s, one.bubble_s);
  EXPECT_EQ(dual.forward_s, one.forward_s);
  EXPECT_EQ(dual.weights_bytes, 2 * one.weights_bytes);
  EXPECT_EQ(dual.grads_bytes, 2 * one.grads_bytes);
  EXPECT_EQ(dual.optimizer_bytes, 2 * one.optimizer_bytes);
  // pp + 1 micro-batches in flight where 1F1B's first stage holds pp, and the rank's last stage's
  // fp32 logits: 4 bytes x 2,048 tokens x 51,200 / 8 = 52,428,800 bytes.
  EXPECT_NEAR(dual.activation_bytes, one.activation_bytes * 9 / 8 + 52428800.0, 1e-12 * dual.activation_bytes);
  // Inference ignores the schedule.
  Config serve = c;
  serve.work.mode = Mode::Prefill;
  Config serve_1f1b = serve;
  serve_1f1b.work.schedule = Schedule::OneF1B;
  EXPECT_EQ(evaluate(serve).time_s, evaluate(serve_1f1b).time_s);
  EXPECT_EQ(evaluate(serve).memory_bytes, evaluate(serve_1f1b).memory_bytes);
  // Each micro-batch gathers and reduce-scatters one stage's weights under ZeRO-3, as 1F1B's do.
  Config z3 = c;
  z3.work.dp = 2;
  z3.work.pp = 4;
  z3.work.sharding = Sharding::Zero3;
  Config z3_1f1b = z3;
  z3_1f1b.work.schedule = Schedule::OneF1B;
  ASSERT_GT(evaluate(z3_1f1b).dp_comm_s, 0);
  EXPECT_EQ(evaluate(z3).dp_comm_s, evaluate(z3_1f1b).dp_comm_s);
  // pp odd (1, with dp 8: 8 micro-batches); 7 micro-batches (odd); 14 (fewer than 2 pp).
  for (const auto& [pp, dp, global_batch] : {std::tuple<int32_t, int32_t, int64_t>{1, 8, 64}, {8, 1, 7}, {8, 1, 14}}) {
    Config bad = c;
    bad.work.pp = pp;
    bad.work.dp = dp;
    bad.work.global_batch = global_batch;
    EXPECT_EQ(evaluate(bad).reason, Reason::BatchNotDivisible) << pp << " " << global_batch;
  }
}

TEST(Pipeline, UnevenStagesTakeTheHeaviestStage) {
  // Layers per heaviest stage, by hand: Llama 3 405B's 126 layers on 16 stages -> ceil(7.875) = 8;
  // interleaved 8 x 8 chunks of 1 or 2 layers (q = 1, r = 62) -> 8 + ceil(62 / 8) = 16; 9 x 7
  // chunks divide evenly -> 14; Meta's 16 x 7 chunks (q = 1, r = 14) -> 7 + 1 = 8.
  ModelSpec llama405{126, 16384, 53248, 128, 8, 8192, 128256, Mlp::SwiGLU, 2, false, false};
  Workload w;
  w.uneven_stages = true;
  w.pp = 16;
  EXPECT_EQ(stage_layers(llama405, w), 8.0);
  w.pp = 8;
  w.schedule = Schedule::Interleaved;
  w.vpp = 8;
  EXPECT_EQ(stage_layers(llama405, w), 16.0);
  w.pp = 9;
  w.vpp = 7;
  EXPECT_EQ(stage_layers(llama405, w), 14.0);
  w.mode = Mode::Decode;  // inference has no model chunks: ceil(126 / 9) = 14 again
  EXPECT_EQ(stage_layers(llama405, w), 14.0);
  w.mode = Mode::Training;
  w.pp = 16;
  EXPECT_EQ(stage_layers(llama405, w), 8.0);  // 7 chunks of up to 2 layers: not 14

  // GPT-3 175B, pp 8: 94 layers split unevenly time and size as 96 (12 on the heaviest stage),
  // though the model does less work (its FLOPs, and so its MFU, are lower).
  Config c = test::gpt175b_cluster();
  const Result even = evaluate(c);
  ASSERT_EQ(even.reason, Reason::Ok);
  c.work.uneven_stages = true;  // divisible layers: the same result
  const Result flagged = evaluate(c);
  EXPECT_EQ(flagged.time_s, even.time_s);
  EXPECT_EQ(flagged.memory_bytes, even.memory_bytes);
  c.model.layers = 94;
  const Result uneven = evaluate(c);
  ASSERT_EQ(uneven.reason, Reason::Ok);
  EXPECT_EQ(uneven.time_s, even.time_s);
  EXPECT_EQ(uneven.memory_bytes, even.memory_bytes);
  EXPECT_LT(uneven.model_flops, even.model_flops);
  c.work.uneven_stages = false;
  EXPECT_EQ(evaluate(c).reason, Reason::LayersNotDivisible);
  // Interleaved, 8 stages x 3 chunks: 90 layers -> ceil(90 / 24) = 4 per chunk, as 96 layers.
  c = test::gpt175b_cluster();
  c.work.schedule = Schedule::Interleaved;
  c.work.vpp = 3;
  const Result even3 = evaluate(c);
  ASSERT_EQ(even3.reason, Reason::Ok);
  c.work.uneven_stages = true;
  c.model.layers = 90;
  EXPECT_EQ(evaluate(c).time_s, even3.time_s);
  // Every chunk needs a layer: 23 layers on 24 chunks cannot be split.
  c.model.layers = 23;
  EXPECT_EQ(evaluate(c).reason, Reason::LayersNotDivisible);
  c.model.layers = 24;
  EXPECT_EQ(evaluate(c).reason, Reason::Ok);
}

TEST(Memory, ShardingAndScheduleOrdering) {
  Config c = test::gpt175b_cluster();
  c.work.tp = 8; c.work.pp = 4; c.work.dp = 2; c.work.global_batch = 64;
  double last = 1e300;
  for (Sharding s : {Sharding::None, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3}) {
    c.work.sharding = s;
    const Result r = evaluate(c);
    EXPECT_LT(r.weights_bytes + r.grads_bytes + r.optimizer_bytes, last);
    last = r.weights_bytes + r.grads_bytes + r.optimizer_bytes;
  }
  // Mixed-precision Adam without sharding: D = 2 bytes of weights, grad_bytes of gradients and
  // 12 bytes of fp32 master weights and moments per parameter.
  c.work.sharding = Sharding::None;
  const Result r = evaluate(c);
  // Worst stage of GPT-175B at tp 8, pp 4: 24 layers of 12 h^2 + 13 h = 1,812,099,072
  // parameters each, plus the embedding V h = 629,145,600, all split 8 ways:
  // (24 x 1,812,099,072 + 629,145,600) / 8 = 5,514,940,416 parameters per NPU.
  const double P = 5514940416.0;
  EXPECT_DOUBLE_EQ(r.weights_bytes, 2 * P);
  EXPECT_DOUBLE_EQ(r.grads_bytes, c.cal.grad_bytes * P);
  EXPECT_DOUBLE_EQ(r.optimizer_bytes, 12 * P);
  // GPipe holds every micro-batch, and its last stage their fp32 logits, 4 bytes x 2,048 tokens
  // x 51,200 / 8 = 52,428,800 bytes each; 1F1B's first stage holds pp (its last stage one and
  // its logits, less here).
  c.work.schedule = Schedule::GPipe;
  const Result g = evaluate(c);
  const double logits = 52428800.0;
  EXPECT_NEAR(g.activation_bytes, 32.0 / 4.0 * r.activation_bytes + 32 * logits, 1e-12 * g.activation_bytes);
  // The last stage holds more than the first where few micro-batches are in flight: with one a
  // DP rank, every stage holds one, and the last its logits too.
  const double per_microbatch = r.activation_bytes / 4;
  c.work.schedule = Schedule::OneF1B;
  c.work.global_batch = 2;
  EXPECT_NEAR(evaluate(c).activation_bytes, per_microbatch + logits, 1e-12 * per_microbatch);
  // And with a large vocabulary: 2 x 10^7 words make 4 x 2,048 x 2e7 / 8 = 2.048e10 bytes of
  // logits. 1F1B's last stage holds one micro-batch; interleaved over v = 2 chunks the last rank
  // holds (v - 1) pp + 1 = 5 chunks' micro-batches, 2.5 stages' worth (its first rank 5.5).
  c.work.global_batch = 64;
  c.model.vocab = 20000000;
  const double big = 4 * 2048 * 2e7 / 8;
  ASSERT_GT(big, 4.5 * per_microbatch);
  EXPECT_NEAR(evaluate(c).activation_bytes, per_microbatch + big, 1e-12 * big);
  c.work.schedule = Schedule::Interleaved;
  c.work.vpp = 2;
  EXPECT_NEAR(evaluate(c).activation_bytes, 2.5 * per_microbatch + big, 1e-12 * big);
  c.model.vocab = 51200;
  c.work.vpp = 1;
  // ZeRO-3 with a single replica shards nothing: the weights are those of no sharding (no
  // gathered layers on top).
  c.work.schedule = Schedule::OneF1B;
  c.work.tp = 8; c.work.pp = 8; c.work.dp = 1;
  c.work.sharding = Sharding::None;
  const double unsharded = evaluate(c).weights_bytes;
  c.work.sharding = Sharding::Zero3;
  EXPECT_EQ(evaluate(c).weights_bytes, unsharded);
}

// With more TP ranks than KV heads each rank holds a whole KV head (as its KV cache and QKV GEMM
// already assumed): the weights, gradients and optimizer state count those copies.
// Selective recompute without flash attention computes the attention scores again in each
// layer's backward: one layer's scores and softmax, (2D + 1) b (a / t) s^2 = 5 x 12 x 2048^2 =
// 251,658,240 bytes for GPT-3 175B at tp 8, are live then (full recompute's rebuilt layer holds
// them too). With flash attention there are none.
TEST(Memory, SelectiveRecomputeHoldsOneLayersScoresAgain) {
  Config c = test::gpt175b_cluster();  // selective recompute, tp 8, micro-batch 1
  const Result fused = evaluate(c);
  c.work.flash_attention = false;
  const Result unfused = evaluate(c);
  ASSERT_EQ(unfused.reason, Reason::Ok);
  EXPECT_EQ(unfused.activation_bytes - fused.activation_bytes, 251658240.0);
}

// A micro-batch's backward frees its logits (output layer and loss first) before full
// recompute rebuilds a layer: GPT-3 175B at tp 8 with sequence parallelism on one stage (pp 1,
// dp 8), one micro-batch in flight of T = 2048 tokens. Kept: 96 layer inputs of D T h / t =
// 0.25 T h, 24 T h; then the larger of the fp32 logits, 4 T V / t = 4 x 2048 x 51200 / 8 =
// 52,428,800 bytes (2.08 T h), and the rebuilt layer's 34 T h / t = 4.25 T h, not both:
// 28.25 T h = 28.25 x 2048 x 12288 = 710,934,528 bytes. With a vocabulary 4x as large the
// logits (8.33 T h) are the larger: 32.33 T h.
TEST(Memory, LastStageRebuildsALayerWhereItsLogitsWere) {
  Config c = test::gpt175b_cluster();
  c.work.pp = 1;
  c.work.dp = 8;
  c.work.recompute = Recompute::Full;
  const Result r = evaluate(c);
  ASSERT_NE(r.reason, Reason::InvalidInput);
  EXPECT_EQ(r.activation_bytes, 710934528.0);
  c.model.vocab *= 4;
  EXPECT_EQ(evaluate(c).activation_bytes, 24.0 * 2048 * 12288 + 4.0 * 2048 * 204800 / 8);
}

// Partial full recompute (recompute_layers, Megatron's block method): GPT-3 175B at tp 8 with
// sequence parallelism and flash attention, pp 8 (12 layers a stage), 1F1B with 8 micro-batches
// in flight, T = 2048 tokens. A layer that recomputes keeps its input, D T h / t = T h / 4
// bytes; one that does not keeps 34 T h / t = 4.25 T h (Korthikanti's 10 + 24 / t, no scores).
// With 3 of the 12 recomputing: 8 x (3 x 0.25 + 9 x 4.25) T h = 312 T h = 312 x 2048 x 12288 =
// 7,851,737,088 bytes, and no more: the recomputed layers are the chunk's first, rebuilt in the
// backward after the other 9 freed theirs (full recompute of every layer adds the rebuilt one).
// So one layer recomputing keeps less than none. The recompute, and the forward's TP
// collectives it repeats, are those of full recompute times 3 / 12.
TEST(Memory, RecomputeLayersRecomputeTheirShareOfTheStage) {
  Config c = test::gpt175b_cluster();
  c.work.recompute = Recompute::Full;
  const Result full = evaluate(c);
  c.work.recompute_layers = 3;
  const Result part = evaluate(c);
  ASSERT_EQ(part.reason, Reason::Ok);
  EXPECT_EQ(part.activation_bytes, 7851737088.0);
  EXPECT_NEAR(part.recompute_s, 0.25 * full.recompute_s, 1e-12 * full.recompute_s);
  c.work.recompute = Recompute::None;
  c.work.recompute_layers = 0;
  const Result none = evaluate(c);
  // One micro-batch in flight (pp 1, 96 layers): one layer recomputing saves 4 T h, less than
  // the rebuilt layer's 4.25 T h, and still keeps less than none.
  Config one = c;
  one.work.pp = 1;
  one.work.dp = 8;
  const double one_none = evaluate(one).activation_bytes;
  one.work.recompute = Recompute::Full;
  one.work.recompute_layers = 1;
  const Result one_layer = evaluate(one);
  ASSERT_NE(one_layer.reason, Reason::InvalidInput);
  EXPECT_EQ(one_none - one_layer.activation_bytes, 4.0 * 2048 * 12288);
  EXPECT_GT(full.recompute_s, 0.0);
  EXPECT_NEAR(part.tp_comm_s - none.tp_comm_s, 0.25 * (full.tp_comm_s - none.tp_comm_s), 1e-12 * full.tp_comm_s);
  EXPECT_GT(part.tp_comm_s, none.tp_comm_s);
  // Every layer of the stage, or more, is full recompute; 0 is its default, every layer.
  c.work.recompute = Recompute::Full;
  for (int32_t n : {12, 13, 1000}) {
    c.work.recompute_layers = n;
    const Result r = evaluate(c);
    EXPECT_EQ(r.activation_bytes, full.activation_bytes) << n;
    EXPECT_EQ(r.time_s, full.time_s) << n;
  }
  // Interleaved with two chunks of 6 layers a stage, 3 a chunk recompute: half of the stage.
  c.work.schedule = Schedule::Interleaved;
  c.work.vpp = 2;
  c.work.recompute_layers = 0;
  const Result ifull = evaluate(c);
  c.work.recompute_layers = 3;
  const Result ipart = evaluate(c);
  ASSERT_EQ(ipart.reason, Reason::Ok);
  EXPECT_NEAR(ipart.recompute_s, 0.5 * ifull.recompute_s, 1e-12 * ifull.recompute_s);
  // More layers recomputing never holds more memory nor takes less time.
  c.work.schedule = Schedule::OneF1B;
  c.work.vpp = 1;
  Result last = none;
  for (int32_t n = 1; n <= 12; ++n) {
    c.work.recompute_layers = n;
    const Result r = evaluate(c);
    EXPECT_LT(r.activation_bytes, last.activation_bytes) << n;
    EXPECT_GT(r.time_s, last.time_s) << n;
    last = r;
  }
  c.work.recompute_layers = -1;
  EXPECT_EQ(evaluate(c).reason, Reason::InvalidInput);
  // Uneven stages, 96 layers on pp 7 (56 GPUs): stages of 13 and 14 layers, 7 micro-batches in
  // flight on the first, which holds 14. recompute_layers 12: every stage keeps a layer, so the
  // rebuilt one fits where they were: 7 x (12 x 0.25 + 2 x 4.25) T h = 80.5 T h. 13: the
  // 13-layer stages keep none, and a layer rebuilt is added: 7 x (13 x 0.25 + 4.25) + 4.25 =
  // 56.75 T h (T h = 2048 x 12288).
  Config uneven = test::gpt175b_cluster();
  uneven.net.dim[1].npus = 7;
  uneven.work.pp = 7;
  uneven.work.uneven_stages = true;
  uneven.work.recompute = Recompute::Full;
  uneven.work.recompute_layers = 12;
  const Result twelve = evaluate(uneven);
  ASSERT_EQ(twelve.reason, Reason::Ok);
  EXPECT_NEAR(twelve.activation_bytes, 80.5 * 2048 * 12288, 1e-12 * twelve.activation_bytes);  // (blended shares)
  uneven.work.recompute_layers = 13;
  EXPECT_NEAR(evaluate(uneven).activation_bytes, 56.75 * 2048 * 12288, 1e-12 * twelve.activation_bytes);
}

TEST(Memory, KvHeadsReplicatedBeyondTheirCount) {
  // Llama 3.1 8B: h 4096, 32 heads, 8 KV heads (head 128), F 14336, V 128256, untied, no biases.
  Config c = test::gpt175b_cluster();
  c.model = ModelSpec{32, 4096, 14336, 32, 8, 8192, 128256, Mlp::SwiGLU, 2, false, false};
  c.work.pp = 1;
  c.work.dp = 64 / c.work.tp;
  c.work.sharding = Sharding::None;
  // A layer: attention h^2 (2 + 2 x 8/32) = 41,943,040, MLP 3 h F = 176,160,768, LayerNorms 2h
  // = 8,192: 218,112,000; 32 layers 6,979,584,000; embedding and output 2 V h = 1,050,673,152.
  const double whole = 32 * 218112000.0 + 1050673152.0;
  for (int32_t tp : {1, 2, 8}) {  // up to the KV heads: an even split
    c.work.tp = tp;
    c.work.dp = 64 / tp;
    EXPECT_DOUBLE_EQ(evaluate(c).weights_bytes, 2 * whole / tp) << tp;
  }
  // tp 16: a rank holds one KV head (K and V, 2 x 4096 x 128 each layer) instead of half of one:
  // 2 h (128 - 1024 / 16) = 524,288 more per layer; tp 32: 2 h (128 - 32) = 786,432.
  for (auto [tp, extra] : {std::pair<int32_t, double>{16, 524288.0}, {32, 786432.0}}) {
    c.work.tp = tp;
    c.work.dp = 64 / tp;
    const Result r = evaluate(c);
    const double P = whole / tp + 32 * extra;
    EXPECT_DOUBLE_EQ(r.weights_bytes, 2 * P) << tp;
    EXPECT_DOUBLE_EQ(r.grads_bytes, c.cal.grad_bytes * P) << tp;
    EXPECT_DOUBLE_EQ(r.optimizer_bytes, c.cal.master_bytes * P) << tp;
  }
  // ZeRO-3's gathered layers carry the copies too: a layer is 218,112,000 / 32 + 786,432 =
  // 7,602,432 parameters a rank, and here the output layer (128,256 x 4096 / 32 = 16,416,768)
  // with one layer beside it outweighs two layers. The output layer's gradient, at fp32, is
  // whole before its reduce-scatter.
  c.work.sharding = Sharding::Zero3;
  const double sharded = (whole / 32 + 32 * 786432.0) / 2;  // dp 2
  const Result z = evaluate(c);
  EXPECT_DOUBLE_EQ(z.weights_bytes, 2 * sharded + 2 * (7602432.0 + 16416768.0));
  EXPECT_DOUBLE_EQ(z.grads_bytes, c.cal.grad_bytes * (sharded + 16416768.0));
  EXPECT_DOUBLE_EQ(z.optimizer_bytes, c.cal.master_bytes * sharded);
  // A rank holds whole KV heads: 48 heads of which 8 KV heads (head 128 in h 6144) over tp 6
  // would be 1.33 a rank; over tp 12 0.67 (neither splits them evenly nor shares each among
  // the same number of ranks). Over tp 4 and 16 the heads divide.
  c.model = ModelSpec{8, 6144, 24576, 48, 8, 4096, 32000, Mlp::SwiGLU, 2, false, false};
  c.work.sharding = Sharding::None;
  c.net.dim[1].npus = 6;  // 48 NPUs
  for (auto [tp, reason] : {std::pair{6, Reason::HeadsNotDivisible}, {12, Reason::HeadsNotDivisible},
                            {4, Reason::Ok}, {16, Reason::Ok}}) {
    c.work.tp = tp;
    c.work.dp = 48 / tp;
    c.work.global_batch = 48;
    if (48 % tp != 0) c.net.dim[1].npus = 2, c.work.dp = 1;  // tp 16: 16 NPUs
    EXPECT_EQ(evaluate(c).reason, reason) << tp;
  }
}

// ZeRO-3 gathers a layer and prefetches the next: two layers' buffers, one when the stage holds
// a single layer (before, two were counted there too, and ZeRO-3 could exceed ZeRO-2); or the
// stage's embedding (or output layer) and the layer beside it, where that is more.
TEST(Memory, Zero3GathersNoMoreLayersThanTheStageHolds) {
  Config c = test::gpt175b_cluster();  // GPT-175B layers: 12 h^2 + 13 h = 1,812,099,072 parameters
  const double layer = 1812099072.0, emb = 12288.0 * 51200;  // tied: the first and last stage hold V h
  c.work.sharding = Sharding::Zero3;
  c.work.dp = 2;
  c.work.tp = 8;
  c.work.pp = 96;  // one layer per stage: the embedding and that layer gathered together
  c.net.dim[1].npus = 192;
  double expected = 2 * (layer + emb) / 8 / 2 + 2 * (layer + emb) / 8;
  Result r = evaluate(c);
  EXPECT_DOUBLE_EQ(r.weights_bytes, expected);
  // The gradient of one layer (larger than the embedding) is whole before its reduce-scatter.
  EXPECT_DOUBLE_EQ(r.grads_bytes, c.cal.grad_bytes * ((layer + emb) / 8 / 2 + layer / 8));
  c.work.pp = 48;  // two layers: both buffers, which outweigh a layer and the embedding
  c.net.dim[1].npus = 96;
  expected = 2 * (2 * layer + emb) / 8 / 2 + 2 * 2 * layer / 8;
  EXPECT_DOUBLE_EQ(evaluate(c).weights_bytes, expected);
  // ZeRO-2 gathers nothing but holds the same whole gradient; ZeRO-1 neither.
  c.work.sharding = Sharding::Zero2;
  r = evaluate(c);
  EXPECT_DOUBLE_EQ(r.weights_bytes, 2 * (2 * layer + emb) / 8);
  EXPECT_DOUBLE_EQ(r.grads_bytes, c.cal.grad_bytes * ((2 * layer + emb) / 8 / 2 + layer / 8));
  c.work.sharding = Sharding::Zero1;
  EXPECT_DOUBLE_EQ(evaluate(c).grads_bytes, c.cal.grad_bytes * (2 * layer + emb) / 8);
}

TEST(Time, OutputLayerStays16BitUnderFp8) {
  // docs/model.md: the output layer runs at the 16-bit peak on 16-bit operands in an FP8 model,
  // so its time is that of the same model in bf16.
  Config c = test::gpt175b_cluster();
  c.model.dtype_bytes = 2;
  const LayerTime bf16 = logits_time(c, 2048, true);
  c.model.dtype_bytes = 1;
  c.compute.peak_tflops[2] = 2 * c.compute.peak_tflops[1];
  c.cal.fp8_eff = 0.5;
  const LayerTime fp8 = logits_time(c, 2048, true);
  EXPECT_EQ(fp8.fwd_s, bf16.fwd_s);
  EXPECT_EQ(fp8.bwd_s, bf16.bwd_s);
}

// In FP8 inference the layers' weights take a byte each and the embedding, 16-bit like the
// output layer it is tied to, two. GPT3-175B, tp 8, pp 8, decode: a stage of 12 layers of
// 12 h^2 + 13 h = 1,812,099,072 parameters (GPT: biases), /8 = 2,718,148,608 B in FP8, and the
// embedding 51,200 x 12,288 / 8 = 78,643,200 parameters at 2 bytes, 157,286,400 B.
TEST(Inference, Fp8WeightsKeepA16BitEmbedding) {
  Config c = test::gpt175b_cluster();
  c.work.mode = Mode::Decode;
  c.work.kv_len = 128;
  c.model.dtype_bytes = 1;
  c.compute.peak_tflops[2] = 2 * c.compute.peak_tflops[1];
  const double h = 12288, layer = 12 * h * h + 13 * h;
  EXPECT_DOUBLE_EQ(memory_per_npu(c).weights, 12 * layer / 8 + 2 * 51200 * h / 8);
  c.model.dtype_bytes = 2;
  EXPECT_DOUBLE_EQ(memory_per_npu(c).weights, 2 * (12 * layer / 8 + 51200 * h / 8));
}

// The test cluster (tests/test_util.hpp): dim 0 a Switch of 8 at 300 GB/s, 500 ns; dim 1 a
// Switch of 8 at 25 GB/s, 2000 ns; endpoint delay 10 ns. Groups take dims innermost first (TP,
// CP, DP, PP), so TP fills dim 0 and the others share dim 1. A ring step of 2 ranks on dim 1:
// 2 x 2000 + 10 ns + bytes / 2 / 25e9.

// Context sharding keeps only the local K and V, so backward gathers them again before its
// reduce-scatter; full recompute adds the repeated forward's gather.
TEST(Time, ContextShardingGathersKeysAndValuesAgainInBackward) {
  Config c = test::gpt175b_cluster();
  c.work.pp = 4;
  c.work.cp = 2;
  c.compute.mem_capacity_bytes = 1e15;  // recompute none must fit too
  // K and V of cp x T = 2 x 1024 tokens, 1536 wide per TP rank (96 heads of 128 over 8), 2 bytes:
  // 12,582,912 B; all-gather or reduce-scatter over 2 ranks: 4.01 us + 251.65824 us.
  const double step_s = 4.01e-6 + 251.65824e-6;
  // Forward gather + backward gather and reduce-scatter, 24 layers a stage, 64 micro-batches:
  // 1.17811924992 s; full recompute gathers once more: 1.57082566656 s.
  for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    c.work.recompute = rc;
    const Result r = evaluate(c);
    ASSERT_EQ(r.reason, Reason::Ok);
    EXPECT_NEAR(r.cp_comm_s, 64 * 24 * (rc == Recompute::Full ? 4 : 3) * step_s, 1e-9) << int(rc);
  }
}

// DeepSpeed-Ulysses (cp_style alltoall): per layer and pass an all-to-all of the local tokens'
// Q, K, V and one of the attention output (backward: their gradients), over the 2 cp ranks of
// the 25 GB/s Switch: T = 1024 local tokens, h/t = 1536, K and V 1536 wide each, 2 bytes:
// 9,437,184 and 3,145,728 B; an all-to-all of S bytes over 2 ranks on a Switch is 2 x 2000 ns +
// 10 ns + S / 2 / 25e9: 192.75368 + 66.92456 = 259.67824 us a pass.
TEST(Time, UlyssesContextParallelismExchangesHeads) {
  Config c = test::gpt175b_cluster();
  c.work.pp = 4;
  c.work.cp = 2;
  c.work.cp_style = CpStyle::AllToAll;
  c.compute.mem_capacity_bytes = 1e15;
  const double pass_s = 259.67824e-6;
  for (Recompute rc : {Recompute::None, Recompute::Full}) {  // full recompute repeats the forward's
    c.work.recompute = rc;
    const Result r = evaluate(c);
    ASSERT_EQ(r.reason, Reason::Ok);
    EXPECT_NEAR(r.cp_comm_s, 64 * 24 * (rc == Recompute::Full ? 3 : 2) * pass_s, 1e-9) << int(rc);
  }
  // Compute and memory are those of the all-gather style: only the communication differs.
  Config gather = c;
  gather.work.cp_style = CpStyle::AllGather;
  const Result u = evaluate(c), a = evaluate(gather);
  EXPECT_EQ(u.forward_s, a.forward_s);
  EXPECT_EQ(u.memory_bytes, a.memory_bytes);
  // GQA: 8 KV heads over tp 8 leave one per TP rank, which cp 2 cannot split; 16 leave two.
  Config gqa = c;
  gqa.model.kv_heads = 8;
  EXPECT_EQ(evaluate(gqa).reason, Reason::HeadsNotDivisible);
  gqa.model.kv_heads = 16;
  EXPECT_EQ(evaluate(gqa).reason, Reason::Ok);
  // Whole heads per rank: 96 heads / tp 8 = 12 do not split over cp 8.
  c.work.pp = 1;
  c.work.cp = 8;
  EXPECT_EQ(evaluate(c).reason, Reason::HeadsNotDivisible);
  c.work.cp_style = CpStyle::AllGather;
  EXPECT_NE(evaluate(c).reason, Reason::HeadsNotDivisible);
}

// A step's micro-batch work apart from data-parallel traffic: compute, TP, CP and pipeline p2p.
double passes_s(const Result& r) {
  return r.forward_s + r.backward_s + r.recompute_s + r.tp_comm_s + r.cp_comm_s + r.pp_comm_s;
}

// ZeRO-2 keeps a share of the gradients, so with several micro-batches each one's gradients are
// reduce-scattered after its backward (ZeRO-1: once a step); one micro-batch: the same.
TEST(Time, Zero2ReduceScattersEachMicroBatch) {
  Config c = test::gpt175b_cluster();
  c.work.tp = 8; c.work.pp = 4; c.work.dp = 2; c.work.global_batch = 64;  // 32 micro-batches
  c.cal.dp_overlap = 0;  // nothing hidden
  // Reduce-scatter of 2 x 5,514,940,416 gradient bytes over the 2 DP ranks:
  // 4.01 us + 11,029,880,832 / 2 / 25e9 = 0.22060162664 s.
  const double rs_s = 0.22060162664;
  c.work.sharding = Sharding::Zero1;
  const Result z1 = evaluate(c);
  c.work.sharding = Sharding::Zero2;
  const Result z2 = evaluate(c);
  ASSERT_EQ(z2.reason, Reason::Ok);
  EXPECT_NEAR(z2.dp_comm_s - z1.dp_comm_s, 31 * rs_s, 1e-9);  // 32 instead of 1
  // Inside each micro-batch's stage time, but not in the bubble (3 stage times): a stage sends
  // its input gradient on before it scatters, so the warm-up and cool-down do not wait for it.
  EXPECT_NEAR(z2.time_s - z1.time_s, 31 * rs_s, 1e-9);
  EXPECT_EQ(z2.bubble_s, z1.bubble_s);
  // Two micro-batches per DP rank take one more stage time than one, not one more and three
  // scatters (a review helper found the step more than doubled from 1 to 2 micro-batches).
  c.work.global_batch = 4;
  const Result two = evaluate(c);
  c.work.global_batch = 2;
  const Result one = evaluate(c);
  EXPECT_NEAR(two.time_s - one.time_s, passes_s(two) - passes_s(one) + rs_s, 1e-9);  // 2 scatters for the step's 1
  c.work.sharding = Sharding::Zero1;  // one micro-batch per DP rank: the step's one scatter
  EXPECT_EQ(one.dp_comm_s, evaluate(c).dp_comm_s);
}

// ZeRO-3 gathers the stage's weights each forward and gathers them again and reduce-scatters the
// gradients each backward; dp_overlap of each pass hides that traffic, as it hides the other
// data-parallel synchronisation.
TEST(Time, Zero3TrafficHidesBehindTheUsableFractionOfEachPass) {
  Config c = test::gpt175b_cluster();
  c.work.tp = 8; c.work.pp = 4; c.work.dp = 2; c.work.global_batch = 64;  // 32 micro-batches
  c.model.tied_embeddings = false;  // no embedding exchange; the last stage holds as many parameters
  c.work.sharding = Sharding::Zero3;
  c.compute.mem_capacity_bytes = 1e15;
  // An all-gather of 2 x 5,514,940,416 weight bytes over the 2 DP ranks, and the reduce-scatter
  // of as many gradient bytes: 4.01 us + 11,029,880,832 / 2 / 25e9 s = 0.22060162664 s each.
  const double g = 0.22060162664;
  c.cal.dp_overlap = 0;  // nothing hidden: forward g, backward 2 g, per micro-batch
  Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.dp_comm_s, 32 * 3 * g, 1e-9);
  for (double overlap : {0.25, 1.0}) {
    c.cal.dp_overlap = overlap;
    r = evaluate(c);
    const double fwd = r.forward_s / 32, bwd = (r.backward_s + r.recompute_s) / 32;
    ASSERT_GT(2 * g, overlap * bwd);  // some of it exposed in both passes
    EXPECT_NEAR(r.dp_comm_s, 32 * (std::max(0.0, g - overlap * fwd) + 2 * g - overlap * bwd), 1e-9) << overlap;
    // The bubble (3 stage times) holds the exposed gathers, not the reduce-scatter after them.
    const double stage = passes_s(r) / 32;
    const double gathers = std::max(0.0, g - overlap * fwd) + std::max(0.0, g - overlap * bwd);
    EXPECT_NEAR(r.bubble_s, 3 * (stage + gathers), 1e-9) << overlap;
  }
}

// Pipeline messages without sequence parallelism use Megatron's scatter / gather: each TP rank
// sends 1/t of the activations, then the TP group all-gathers them (Narayanan et al. 2021 §4.1).
TEST(Time, PipelineMessagesAreScatteredOverTensorParallelRanks) {
  Config c = test::gpt175b_cluster();  // tp 8, pp 8 (on dim 1), 64 micro-batches
  c.work.seq_parallel = false;
  c.work.recompute = Recompute::Full;  // so that the activations fit either way
  // D T h = 2 x 2048 x 12288 = 50,331,648 B; an eighth over dim 1: 2 x 2000 + 2 x 10 ns +
  // 6,291,456 / 25e9 = 255.67824 us; the all-gather over dim 0 (8 ranks): 7 x 1010 ns +
  // 7/8 x 50,331,648 / 300e9 = 153.87064 us. Two messages per micro-batch.
  const Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.pp_comm_s, 64 * 2 * (255.67824e-6 + 153.87064e-6), 1e-10);
  c.work.seq_parallel = true;  // the activations are sharded already: no gather
  EXPECT_NEAR(evaluate(c).pp_comm_s, 64 * 2 * 255.67824e-6, 1e-10);
}

// Tensor parallelism's collectives, by hand: per layer two all-reduces of D T h a pass (with
// sequence parallelism an all-gather and a reduce-scatter each, and two more all-gathers in
// backward), and the embedding and output layer's (Megatron's vocabulary-parallel layers): the
// output layer's input gradient all-reduced in backward (SP: its input all-gathered forward and
// the gradient reduce-scattered), three all-reduces of T fp32 values in the cross-entropy, and
// with pp = 1 the embedding's forward all-reduce (SP: reduce-scatter, then an all-gather back).
TEST(Time, TensorParallelCommunicationByHand) {
  Config c = test::gpt175b_cluster();  // tp 8 on dim 0 (Switch, 300 GB/s, 500 ns), 64 micro-batches
  c.compute.mem_capacity_bytes = 1e15;  // every variant must fit
  // D T h = 2 x 2048 x 12288 = 50,331,648 B. Ring all-gather or reduce-scatter over a Switch of 8:
  // 7 x (2 hops x 500 ns + 10 ns) + 7/8 x 50,331,648 / 300e9 = 7.07 + 146.80064 = 153.87064 us;
  // an all-reduce is twice that. The cross-entropy's all-reduce of 4 x 2048 = 8,192 B:
  // 2 x (7.07 + 7/8 x 8,192 / 300e9 s) = 2 x 7.0938933.. = 14.1877866.. us.
  const double ag_us = 153.87064, ce_us = 2 * (7.07 + 7.0 / 8 * 8192 / 300e3);
  // SP, pp 8 (12 layers a stage): 12 x (4 + 6) collectives; the output layer 3 (its input
  // gathered forward and again backward, the gradient reduce-scattered), cross-entropy 3.
  Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.tp_comm_s, 64 * (12 * 10 * ag_us + 3 * ag_us + 3 * ce_us) * 1e-6, 1e-10);  // 1.2139937.. s
  // Without SP: 12 x 4 all-reduces, the output layer's backward one and the cross-entropy's 3.
  c.work.seq_parallel = false;
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.tp_comm_s, 64 * (12 * 4 * 2 * ag_us + 2 * ag_us + 3 * ce_us) * 1e-6, 1e-10);
  // pp 1, dp 8 (8 micro-batches a rank, 96 layers): the embedding's all-reduce too.
  c.work.pp = 1;
  c.work.dp = 8;
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.tp_comm_s, 8 * (96 * 4 * 2 * ag_us + 2 * 2 * ag_us + 3 * ce_us) * 1e-6, 1e-10);
  c.work.seq_parallel = true;  // output layer 2 all-gathers + a reduce-scatter, embedding the reverse of one
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.tp_comm_s, 8 * (96 * 10 * ag_us + 5 * ag_us + 3 * ce_us) * 1e-6, 1e-10);
  c.work.tp = 1;  // no tensor parallelism, no collectives
  c.work.dp = 64;
  c.work.seq_parallel = false;
  EXPECT_EQ(evaluate(c).tp_comm_s, 0.0);
}

// Decode, tp 8, pp 1, one token a sequence: per layer two all-reduces of D b h = 24,576 B, the
// embedding's one, and the next tokens' logits all-gathered (D b V = 102,400 B) for sampling.
TEST(Inference, DecodeGathersTheLogitsOverTensorParallelRanks) {
  Config c = test::gpt175b_cluster();
  c.work.mode = Mode::Decode;
  c.work.kv_len = 1024;
  c.work.pp = 1;
  c.work.dp = 8;  // 8 sequences a rank, one a micro-batch
  c.work.seq_parallel = false;
  // All-reduce: 2 x (7.07 us + 7/8 x 24,576 / 300e9 s) = 14.28336 us; all-gather 7.07 us +
  // 7/8 x 102,400 / 300e9 s = 7.3686666.. us.
  const double ar_us = 14.28336, ag_us = 7.07 + 7.0 / 8 * 102400 / 300e3;
  Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.tp_comm_s, 8 * (96 * 2 * ar_us + ar_us + ag_us) * 1e-6, 1e-12);
  // With sequence parallelism (8 sequences a micro-batch, one micro-batch a rank): per layer two
  // all-gathers and two reduce-scatters of D b h = 196,608 B, 7.07 + 7/8 x 196,608 / 300e3 =
  // 7.64344 us each; the embedding's reduce-scatter and the hidden states' all-gather before the
  // output layer, the same; the logits' all-gather of D b V = 819,200 B: 7.07 + 2.3893333.. us.
  c.work.seq_parallel = true;
  c.work.micro_batch = 8;
  const double sp_us = 7.64344, logits_us = 7.07 + 7.0 / 8 * 819200 / 300e3;
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.tp_comm_s, (96 * 4 * sp_us + 2 * sp_us + logits_us) * 1e-6, 1e-12);
}

// Tied embeddings with pp > 1: the first and the last stage each hold the word embeddings, and
// exchange their gradients once a step: grad_bytes x V h / t = 2 x 51,200 x 12,288 / 8 =
// 157,286,400 B over dim 1 (Switch, 25 GB/s, 2,000 ns a hop): 2 x 2 us + 2 x 10 ns + 6.291456 ms.
TEST(Time, TiedEmbeddingGradientsAreExchangedBetweenFirstAndLastStage) {
  Config c = test::gpt175b_cluster();  // dp 1: no other gradient traffic
  Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.dp_comm_s, 4.02e-6 + 6.291456e-3, 1e-12);
  // tp 4, pp 16: the pipeline takes 2 NPUs of dim 0 (4 apart) and all of dim 1; the first and the
  // last stage differ in dim 1, the slower: 2 x 51,200 x 12,288 / 4 = 314,572,800 B at 25 GB/s.
  c.work.tp = 4;
  c.work.pp = 16;
  c.compute.mem_capacity_bytes = 1e15;
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.dp_comm_s, 4.02e-6 + 12.582912e-3, 1e-12);
  c.model.tied_embeddings = false;
  EXPECT_EQ(evaluate(c).dp_comm_s, 0.0);
  c.work.tp = 8;
  c.work.pp = 8;
  c.model.tied_embeddings = true;
  c.net.ndims = 1;  // 8 NPUs: tp 8, pp 1, one stage holds both
  c.work.pp = 1;
  c.compute.mem_capacity_bytes = 1e15;
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_EQ(r.dp_comm_s, 0.0);
}

TEST(Inference, DecodeIsBoundByStreamingWeights) {
  // One sequence, one GPU, short cache: every GEMM is memory-bound, so a decode step costs
  // about (weights + KV cache) / memory bandwidth. Llama-2-7B-like, fp16: 2 B/param.
  Config c;
  c.model = ModelSpec{32, 4096, 11008, 32, 32, 4096, 32000, Mlp::SwiGLU, 2, false, false};
  c.work.mode = Mode::Decode;
  c.work.kv_len = 128;
  c.net.ndims = 1;
  c.net.dim[0] = test::dim(Topology::Switch, 1, 100, 100);
  c.compute.peak_tflops[1] = 312;
  c.compute.mem_bw_GBps = 2000;
  c.compute.mem_capacity_bytes = 80 * GiB;
  const Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  // Per layer 4 h^2 (Q, K, V, O) + 3 h F (SwiGLU) + 2 h (norms) = 67,108,864 + 135,266,304 +
  // 8,192 = 202,383,360; 32 layers + the output head's V h = 131,072,000 (the input embedding
  // is a lookup): 6,607,339,520 parameters of 2 bytes.
  const double weights = 2 * 6607339520.0;
  const double expect = weights / 2000e9;
  EXPECT_NEAR(r.time_s / expect, 1.0, 0.02);
  EXPECT_NEAR(r.tokens_per_s, 1.0 / r.time_s, 1e-9);
}

TEST(Inference, GenerateIsPrefillPlusDecodeSteps) {
  // The study's inference latency: prefill of the prompt + N_out decode steps at the mid-point
  // context (shared/reference/cosmic-study.md §4), decode steps pipelined back to back, here 1000 prompt + 200 output tokens, GPT3-175B, tp 8 pp 8.
  Config c = test::gpt175b_cluster();
  c.work.global_batch = 8;
  c.work.prompt_tokens = 1000;
  c.work.seq_parallel = false;
  c.work.mode = Mode::Prefill;
  const Result prefill = evaluate(c);
  c.work.mode = Mode::Decode;
  c.work.kv_len = 1100;  // 1000 + 200 / 2
  const Result step = evaluate(c);
  c.work.mode = Mode::Generate;
  c.work.output_tokens = 200;
  const Result gen = evaluate(c);
  ASSERT_EQ(prefill.reason, Reason::Ok);
  ASSERT_EQ(step.reason, Reason::Ok);
  ASSERT_EQ(gen.reason, Reason::Ok);
  // m = 8 micro-batches, pp = 8: one decode step alone takes (m + pp - 1) = 15 stage times;
  // in a run of steps, after the first, each takes max(m, pp) = 8.
  EXPECT_NEAR(gen.time_s, prefill.time_s + step.time_s + 199 * (8.0 / 15.0) * step.time_s, 1e-9 * gen.time_s);
  EXPECT_NEAR(gen.tokens_per_s, 8 * 200 / gen.time_s, 1e-9 * gen.tokens_per_s);
  // KV cache of the 8 resident sequences, 1200 tokens, 12 layers per stage, K and V of
  // 96/8 = 12 heads x 128 = 1536 values, 2 bytes: 8 x 1200 x 12 x 2 x 2 x 1536 = 707,788,800 B.
  EXPECT_DOUBLE_EQ(gen.kv_cache_bytes, 707788800.0);
  // Inference keeps no gradients or optimizer state.
  EXPECT_EQ(gen.grads_bytes, 0);
  EXPECT_EQ(gen.optimizer_bytes, 0);
  // The serving objectives: the first token comes with the prefill (the same sum, bit for bit);
  // the 200 output tokens share the rest: (step + 199 x 8/15 step) / 200. A prefill's first
  // token is its time; a decode step and a training iteration have no first token, and both
  // objectives are their time.
  EXPECT_EQ(gen.first_token_s, prefill.time_s);
  EXPECT_EQ(objective_value(Objective::FirstToken, c, gen), prefill.time_s);
  EXPECT_NEAR(objective_value(Objective::PerOutputToken, c, gen), (step.time_s + 199 * (8.0 / 15.0) * step.time_s) / 200,
              1e-9 * step.time_s);
  c.work.mode = Mode::Prefill;
  EXPECT_EQ(prefill.first_token_s, prefill.time_s);
  EXPECT_EQ(objective_value(Objective::PerOutputToken, c, prefill), prefill.time_s);
  c.work.mode = Mode::Decode;
  EXPECT_EQ(step.first_token_s, 0);
  EXPECT_EQ(objective_value(Objective::FirstToken, c, step), step.time_s);
  EXPECT_EQ(objective_value(Objective::PerOutputToken, c, step), step.time_s);
  const Config train = test::gpt175b_cluster();
  const Result it = evaluate(train);
  EXPECT_EQ(objective_value(Objective::FirstToken, train, it), it.time_s);
  EXPECT_EQ(objective_value(Objective::PerOutputToken, train, it), it.time_s);
}

// Inference keeps no activations for a backward pass: one layer's live tensors. Llama 3.1 70B
// (h 8,192, F 28,672 SwiGLU, 64 heads, 8 KV heads of 128), t = 8, one prompt of 2,000 tokens, 2
// bytes: the layer input 2,000 x 8,192 x 2 = 32,768,000 B; attention's normalised input and Q, K,
// V, 2,000 x (8,192 + 1,024 + 2 x 128) x 2 = 37,888,000 B, below the MLP's normalised input,
// gate, up and product, 2,000 x (8,192 + 3 x 3,584) x 2 = 75,776,000 B; the next token's logits
// 128,256 / 8 x 2 = 32,064 B. Sequence parallelism splits the layer input over t; unfused
// attention adds the scores and their softmax, 2 x 2 x 8 heads x 2,000^2 = 128,000,000 B, which
// then makes attention the larger block.
TEST(Inference, WorkingActivationsAreOneLayersLiveTensors) {
  const ModelSpec m{80, 8192, 28672, 64, 8, 8192, 128256, Mlp::SwiGLU, 2, false, false};
  Workload w;
  w.tp = 8;
  EXPECT_DOUBLE_EQ(inference_activation_bytes(m, w, 1, 2000, 2000), 32768000.0 + 75776000.0 + 32064.0);
  w.seq_parallel = true;
  EXPECT_DOUBLE_EQ(inference_activation_bytes(m, w, 1, 2000, 2000), 32768000.0 / 8 + 75776000.0 + 32064.0);
  w.seq_parallel = false;
  w.flash_attention = false;
  EXPECT_DOUBLE_EQ(inference_activation_bytes(m, w, 1, 2000, 2000), 32768000.0 + 37888000.0 + 128000000.0 + 32064.0);
}

// Serve: continuous batching in its steady state, from the same passes as prefill and decode.
// GPT3-175B, tp 8, pp 8, dp 1: n = 16 sequences in flight in 4 micro-batches of 4, 1,000 prompt
// tokens. A decode step at the mean context alone takes (4 + 8 - 1) stage times; in the full
// pipeline of a steady state max(4, 8) = 8. Each step k = n / N_out sequences finish and as many
// prompts are prefilled, in batches of max(1, k), each batch a micro-batch among the decode ones
// (a stage's time each: a prefill's time / 8). Per output token: step + (k / batch) x that; first
// token: a batch's prefill through the 8 stages and half a cycle; a request's time: the first
// token and N_out x per output token; throughput n / per output token.
TEST(Inference, ServeIsDecodeStepsWithTheirShareOfPrefills) {
  Config c = test::gpt175b_cluster();
  c.work.seq_parallel = false;
  c.work.prompt_tokens = 1000;
  // N_out 200: k = 0.08, prompts prefilled one at a time; N_out 4: k = 4, in batches of 4.
  for (const int32_t out : {200, 4}) {
    const double k = 16.0 / out, batch = std::max(1.0, k);
    c.work.global_batch = int64_t(batch);
    c.work.micro_batch = int32_t(batch);
    c.work.mode = Mode::Prefill;
    const Result prefill = evaluate(c);
    c.work.global_batch = 16;
    c.work.micro_batch = 4;
    c.work.mode = Mode::Decode;
    c.work.kv_len = 1000 + out / 2;
    const Result decode = evaluate(c);
    c.work.mode = Mode::Serve;
    c.work.output_tokens = out;
    const Result serve = evaluate(c);
    ASSERT_EQ(prefill.reason, Reason::Ok);
    ASSERT_EQ(decode.reason, Reason::Ok);
    ASSERT_EQ(serve.reason, Reason::Ok) << int(serve.reason);
    const double step = decode.time_s * 8 / 11, per_token = step + k / batch * prefill.time_s / 8;
    EXPECT_NEAR(serve.first_token_s, prefill.time_s + per_token / 2, 1e-12 * prefill.time_s) << out;
    EXPECT_NEAR(objective_value(Objective::PerOutputToken, c, serve), per_token, 1e-12 * per_token) << out;
    EXPECT_NEAR(serve.time_s, prefill.time_s + (out + 0.5) * per_token, 1e-12 * serve.time_s) << out;
    EXPECT_NEAR(serve.tokens_per_s, 16 / per_token, 1e-9 * serve.tokens_per_s) << out;
    // The breakdown sums to the time, bubble included (the request's own prefill fills the
    // pipeline: 7 of its 8 stage times).
    EXPECT_NEAR(serve.forward_s + serve.tp_comm_s + serve.cp_comm_s + serve.pp_comm_s + serve.bubble_s + serve.ep_comm_s,
                serve.time_s, 1e-12 * serve.time_s);
  }
  // Memory (N_out 4): the cache of the 16 sequences at their last token, 1,004 tokens, 12 layers a
  // stage, 12 KV heads of 128 a rank, 2 bytes: 16 x 1,004 x 12 x 2 x 2 x 1,536 = 1,184,366,592 B;
  // the activations of a batch of 4 prompts' prefill (h 12,288, F 49,152 GeLU, t 8), above a
  // step's: the layer input 2 x 4,000 x 12,288 = 98,304,000 B, the MLP's normalised input and two
  // F / t products 2 x 4,000 x 24,576 = 196,608,000 B (attention's 2 x 4,000 x 16,896 is less),
  // the 4 next tokens' logits 2 x 4 x 6,400 = 51,200 B.
  const Result serve = evaluate(c);
  EXPECT_DOUBLE_EQ(serve.kv_cache_bytes, 1184366592.0);
  EXPECT_DOUBLE_EQ(serve.activation_bytes, 98304000.0 + 196608000.0 + 51200.0);
  // It needs output tokens, as generate does.
  c.work.output_tokens = 0;
  EXPECT_EQ(evaluate(c).reason, Reason::InvalidInput);
}

TEST(Feasibility, ReasonCodes) {
  const Config base = test::gpt175b_cluster();
  ASSERT_EQ(evaluate(base).reason, Reason::Ok);
  auto reason = [&](auto edit) { Config c = base; edit(c); return evaluate(c).reason; };
  EXPECT_EQ(reason([](Config& c) { c.work.dp = 2; }), Reason::ProductMismatch);
  // A degree of 0: a derived one that did not divide (kernels/space.hpp derive_degree); -1 is no
  // such thing.
  EXPECT_EQ(reason([](Config& c) { c.work.tp = 0; }), Reason::ProductMismatch);
  EXPECT_EQ(reason([](Config& c) { c.work.dp = 0; }), Reason::ProductMismatch);
  EXPECT_EQ(reason([](Config& c) { c.work.pp = 0; }), Reason::ProductMismatch);
  EXPECT_EQ(reason([](Config& c) { c.work.cp = 0; }), Reason::ProductMismatch);
  EXPECT_EQ(reason([](Config& c) { c.work.tp = -1; }), Reason::InvalidInput);
  EXPECT_EQ(reason([](Config& c) { c.work.dp = -1; }), Reason::InvalidInput);
  EXPECT_EQ(reason([](Config& c) { c.work.tp = 128; c.work.pp = 1; c.net.dim[1].npus = 16; }), Reason::TpExceedsHeads);
  EXPECT_EQ(reason([](Config& c) { c.model.heads = 100; c.model.kv_heads = 100; }), Reason::HeadsNotDivisible);
  EXPECT_EQ(reason([](Config& c) { c.work.micro_batch = 2; c.work.global_batch = 65; }), Reason::BatchNotDivisible);
  // Interleaving needs a multiple of pp micro-batches per pipeline (pp 8, dp 1, micro-batch 1 here).
  auto interleaved = [](int64_t batch) {
    return [batch](Config& c) { c.work.schedule = Schedule::Interleaved; c.work.vpp = 2; c.work.global_batch = batch; };
  };
  EXPECT_EQ(reason(interleaved(4)), Reason::BatchNotDivisible);   // 4 micro-batches < pp
  EXPECT_EQ(reason(interleaved(12)), Reason::BatchNotDivisible);  // not a multiple of 8
  EXPECT_EQ(reason(interleaved(16)), Reason::Ok);
  EXPECT_EQ(reason([](Config& c) { c.model.layers = 90; }), Reason::LayersNotDivisible);
  EXPECT_EQ(reason([](Config& c) { c.model.seq = 2047; }), Reason::SeqNotDivisible);
  // A decode step has one token per sequence, so with sequence parallelism the micro-batch must
  // split over tp: micro-batch 1 over tp 8 fails (whatever kv_len is), micro-batch 8 passes.
  EXPECT_EQ(reason([](Config& c) { c.work.mode = Mode::Decode; c.work.kv_len = 100; }), Reason::SeqNotDivisible);
  EXPECT_EQ(reason([](Config& c) { c.work.mode = Mode::Decode; c.work.kv_len = 100; c.work.micro_batch = 8; }),
            Reason::Ok);
  EXPECT_EQ(reason([](Config& c) { c.compute.mem_capacity_bytes = 1 * GiB; }), Reason::OutOfMemory);
  EXPECT_EQ(reason([](Config& c) { c.net.dim[0].link_bw_GBps = -1; }), Reason::InvalidInput);
  EXPECT_EQ(reason([](Config& c) { c.compute.peak_tflops[1] = 0; }), Reason::InvalidInput);
  EXPECT_EQ(reason([](Config& c) { c.work.tp = 4; c.work.dp = 2; c.net.dim[0].npus = 6; c.net.dim[1].npus = 32; c.work.pp = 24; c.work.global_batch = 72; }),
            Reason::PlacementMismatch);
}

// A Switch on an unpriced tier leaves the cost undefined (NaN), not the time: the point is
// feasible and timed as the same network priced (network.prices.chiplet.switch) is. A design
// space that reads the cost (an objective, a limit or a constraint on it) rejects it,
// SWITCH_NOT_PRICED; one that does not ranks it (model revision 14; every point was rejected).
TEST(Model, UnpricedNetworkIsTimedAndRejectedWhereTheCostIsRead) {
  Config c = test::gpt175b_cluster();
  c.net.ndims = 4;
  c.net.dim[0] = test::dim(Topology::Switch, 2, 100, 100);
  c.net.dim[1] = test::dim(Topology::Ring, 4, 100, 100);
  c.net.dim[2] = test::dim(Topology::Ring, 2, 100, 100);
  c.net.dim[3] = test::dim(Topology::Ring, 4, 100, 100);
  c.work.tp = 8, c.work.pp = 4, c.work.dp = 2, c.work.cp = 1;
  c.compute.mem_capacity_bytes = 1e15;
  const Result unpriced = evaluate(c);
  EXPECT_EQ(unpriced.reason, Reason::Ok);
  EXPECT_TRUE(std::isnan(unpriced.network_cost_usd));
  const Result early = evaluate(c, true);
  EXPECT_EQ(early.reason, Reason::Ok);
  EXPECT_EQ(early.time_s, unpriced.time_s);
  Config priced_c = c;
  priced_c.net.price[0].switch_usd_per_GBps = 5;
  const Result priced = evaluate(priced_c);
  ASSERT_EQ(priced.reason, Reason::Ok);
  EXPECT_GT(priced.time_s, 0);
  EXPECT_EQ(unpriced.time_s, priced.time_s);
  EXPECT_EQ(unpriced.memory_bytes, priced.memory_bytes);

  SpaceView s;
  s.base = c;
  double values[2];
  const auto verdict = [&](std::initializer_list<Objective> objs, bool stop_at_oom = false) {
    const std::vector<Objective> o(objs);
    return score_config(s, c, o.data(), int32_t(o.size()), values, stop_at_oom).reason;
  };
  EXPECT_EQ(verdict({Objective::Latency, Objective::Memory}), Reason::Ok);
  EXPECT_EQ(verdict({Objective::Latency}, true), Reason::Ok);
  for (Objective o : {Objective::Cost, Objective::RuntimeXCost, Objective::ClusterCost, Objective::UsdPerToken})
    EXPECT_EQ(verdict({Objective::Latency, o}), Reason::SwitchNotPriced) << int(o);
  EXPECT_EQ(verdict({Objective::Cost}, true), Reason::SwitchNotPriced);
  // ... also where it would not fit (the price is the first thing missing, as before) ...
  c.compute.mem_capacity_bytes = 1e9;
  EXPECT_EQ(verdict({Objective::Cost}), Reason::SwitchNotPriced);
  EXPECT_EQ(verdict({Objective::Latency}), Reason::OutOfMemory);
  c.compute.mem_capacity_bytes = 1e15;
  // ... where a limit reads it ...
  s.nlimits = 1;
  s.limit_obj[0] = Objective::Cost;
  s.limit_max[0] = 1e12;
  EXPECT_EQ(verdict({Objective::Latency}), Reason::SwitchNotPriced);
  s.limit_obj[0] = Objective::Latency;
  EXPECT_EQ(verdict({Objective::Latency}), Reason::Ok);
  s.nlimits = 0;
  // ... and where a constraint does (network_cost >= 0).
  s.nconstraints = 1;
  s.prog[0] = Instr{Op::PushNetworkCost, -1, 0};
  s.prog[1] = Instr{Op::PushConst, -1, 0};
  s.prog[2] = Instr{Op::Ge, -1, 0};
  s.prog_start[1] = 3;
  EXPECT_EQ(verdict({Objective::Latency}), Reason::SwitchNotPriced);
  // Priced, nothing is rejected.
  EXPECT_EQ(score_config(s, priced_c, std::vector<Objective>{Objective::Cost}.data(), 1, values).reason, Reason::Ok);
}

// Every numeric field of a result, each of which must be finite and >= 0.
std::vector<double> numeric_fields(const Result& r) {
  return {r.time_s, r.forward_s, r.backward_s, r.recompute_s, r.optimizer_s, r.tp_comm_s, r.cp_comm_s,
          r.dp_comm_s, r.pp_comm_s, r.bubble_s, r.weights_bytes, r.grads_bytes, r.optimizer_bytes,
          r.activation_bytes, r.kv_cache_bytes, r.memory_bytes, r.network_cost_usd, r.model_flops,
          r.tokens_per_s, r.mfu};
}

// A random configuration that passes every check before the model's arithmetic: a network of
// 1-3 dimensions of 1, 2, 4 or 8 NPUs (no 4th tier, so every Switch has a LIBRA price), the
// parallel degrees a factorisation of its NPUs (powers of two, so every placement divides), and
// model sizes divisible by every degree: heads 16-96 by tp <= 16, layers (48, 96) by pp x vpp
// (pp <= 8, vpp <= 3), seq and prompt (512+) by cp x tp <= 64. Extreme but valid bandwidths, peaks,
// latencies and efficiencies; memory capacities from 1 GiB (often out of memory) to 1 PB.
Config random_valid_config(std::mt19937_64& rng) {
  auto pick = [&](std::initializer_list<double> v) { return *(v.begin() + rng() % v.size()); };
  Config c;
  c.net.ndims = 1 + int(rng() % 3);
  for (int d = 0; d < c.net.ndims; ++d)
    c.net.dim[d] = test::dim(Topology(rng() % 3), int(pick({1, 2, 4, 8})), pick({1e-3, 25, 300}),
                             pick({0, 500, 1e6}), Algo(rng() % 4));
  c.net.chunks = int(pick({1, 4, 16}));
  c.net.convention = Convention(rng() % 2);
  c.net.congestion_aware = rng() % 2;
  c.net.multidim = MultiDim(rng() % 2);
  c.net.active_chunks = int(pick({1, 2}));
  std::shuffle(std::begin(c.net.order), std::end(c.net.order), rng);

  // Hand each factor 2 of the NPU count to tp (<= 16), cp (<= 4), pp (<= 8) or dp.
  Workload& w = c.work;
  for (int64_t n = total_npus(c.net); n > 1; n /= 2) {
    int32_t* to[] = {&w.tp, &w.cp, &w.pp, &w.dp};
    const int32_t cap[] = {16, 4, 8, 1 << 30};
    int g = int(rng() % 4);
    while (*to[g] >= cap[g]) g = (g + 1) % 4;
    *to[g] *= 2;
  }

  ModelSpec& m = c.model;
  m.heads = int(pick({16, 32, 64, 96}));
  m.kv_heads = m.heads / int(pick({1, 2, 8}));
  if (m.kv_heads % w.tp != 0 && w.tp % m.kv_heads != 0) m.kv_heads = m.heads;  // whole KV heads a rank
  m.hidden = m.heads * int(pick({64, 128}));
  m.mlp = Mlp(rng() % 2);
  m.ffn = m.hidden * int(pick({3, 4}));
  m.layers = int(pick({48, 96}));
  m.seq = int(pick({512, 2048, 8192}));
  m.vocab = int(pick({32000, 51200, 128256}));
  m.dtype_bytes = int(pick({1, 2, 4}));
  m.tied_embeddings = rng() % 2;
  m.biases = rng() % 2;

  w.mode = Mode(rng() % 4);
  w.prompt_tokens = int(pick({0, 1024}));
  w.kv_len = int(pick({1, 4096}));
  w.output_tokens = int(pick({1, 200}));
  w.seq_parallel = rng() % 2;
  w.flash_attention = rng() % 2;
  w.schedule = Schedule(rng() % 4);
  w.vpp = w.schedule == Schedule::Interleaved ? int(pick({1, 2, 3})) : 1;
  w.sharding = Sharding(rng() % 4);
  w.recompute = Recompute(rng() % 3);
  // Decode steps with sequence parallelism split the micro-batch's sequences over tp.
  const bool decodes = w.mode == Mode::Decode || w.mode == Mode::Generate;
  w.micro_batch = int(pick({1, 2, 4})) * (decodes && w.seq_parallel ? w.tp : 1);
  w.global_batch = int64_t(w.dp) * w.micro_batch * int64_t(pick({1, 8, 64}));
  // Interleaving needs a multiple of pp micro-batches per pipeline, DualPipe an even pp and an
  // even number of them, at least 2 pp (else 1F1B).
  if (w.schedule == Schedule::Interleaved && w.vpp > 1) w.global_batch *= w.pp;
  if (w.schedule == Schedule::DualPipe) {
    if (w.pp % 2 == 0) w.global_batch = int64_t(w.dp) * w.micro_batch * 2 * w.pp * int64_t(pick({1, 2}));
    else w.schedule = Schedule::OneF1B;
  }

  // Peaks ordered as on real parts: fp32 <= 16-bit <= fp8.
  const double peak16 = pick({1e-3, 312, 989});
  c.compute.peak_tflops[0] = peak16 / 16;
  c.compute.peak_tflops[1] = peak16;
  c.compute.peak_tflops[2] = 2 * peak16;
  c.compute.mem_bw_GBps = pick({1, 2039, 8000});
  c.compute.mem_capacity_bytes = pick({1 * GiB, 80 * GiB, 1e15});

  Calibration& k = c.cal;
  k.gemm_eff_max = pick({0.1, 1});
  k.gemm_half_flops = pick({0, 1e9, 1e15});
  k.attn_eff = pick({0.5, 1});
  k.fp8_eff = pick({0.5, 1});
  k.mem_eff = pick({0.5, 1});
  k.net_eff = pick({0.5, 1});
  k.layer_overhead_s = pick({0, 1e-5});
  k.tp_overlap = pick({0, 0.5, 1});
  k.cp_overlap = pick({0, 0.5, 1});
  k.dp_overlap = pick({0, 1});
  return c;
}

// One decode step of GPT-175B on 64 NPUs: tp 8, pp 4, cp 2 (the cache split in two), 512 tokens
// cached, micro-batch 8 (a multiple of tp, for sequence parallelism).
Config decode_cluster() {
  Config c = test::gpt175b_cluster();
  c.work.pp = 4;
  c.work.cp = 2;
  c.work.mode = Mode::Decode;
  c.work.kv_len = 512;
  c.work.micro_batch = 8;
  return c;
}

// A decode step splits its KV cache over cp, not a sequence: the model's (unused) sequence
// length need not divide; prefill's prompt must.
TEST(Feasibility, DecodeIgnoresTheSequenceItDoesNotSplit) {
  Config c = decode_cluster();
  c.model.seq = 2047;
  EXPECT_EQ(evaluate(c).reason, Reason::Ok);
  c.work.mode = Mode::Prefill;
  EXPECT_EQ(evaluate(c).reason, Reason::SeqNotDivisible);
}

// Interleaving is a training schedule: inference ignores it (and so the layers need not divide
// by pp x vpp).
TEST(Feasibility, InferenceIgnoresTheInterleavedSchedule) {
  Config c = decode_cluster();
  const Result plain = evaluate(c);
  ASSERT_EQ(plain.reason, Reason::Ok);
  c.work.schedule = Schedule::Interleaved;
  c.work.vpp = 5;  // 96 layers do not divide by 4 x 5
  const Result r = evaluate(c);
  EXPECT_EQ(r.reason, Reason::Ok);
  EXPECT_EQ(r.time_s, plain.time_s);
  EXPECT_EQ(r.memory_bytes, plain.memory_bytes);
  c.work.mode = Mode::Training;
  EXPECT_EQ(evaluate(c).reason, Reason::LayersNotDivisible);
}

// Unfused attention holds a decode step's scores and their softmax: one query against the rank's
// kv_len / cp keys, 2 D b (a / t) bytes per key. With 512 / 2 keys, 2 x 2 x 8 x 12 x 256 = 98,304
// B, the attention block (2 x 8 x (12,288 + 1,536 + 2 x 1,536) = 270,336 B) stays below the MLP's
// (2 x 8 x (12,288 + 2 x 6,144) = 393,216 B), so the peak is the same; with 51,200 / 2 keys the
// scores, 9,830,400 B, make attention the peak: 270,336 + 9,830,400 - 393,216 = 9,707,520 B more.
TEST(Inference, DecodeScoresCoverTheRanksShareOfTheCache) {
  Config c = decode_cluster();
  double fused = evaluate(c).memory_bytes;
  c.work.flash_attention = false;
  EXPECT_EQ(evaluate(c).memory_bytes, fused);
  c.work.kv_len = 51200;
  const double unfused = evaluate(c).memory_bytes;
  c.work.flash_attention = true;
  fused = evaluate(c).memory_bytes;
  EXPECT_EQ(unfused - fused, 9707520.0);
}

// attn_eff and fp8_eff scale the GEMM efficiency and may exceed 1, but no kernel beats the peak:
// with gemm_eff_max 0.5 (and no size penalty), attn_eff 2 and 10 give the same times.
TEST(Time, NoKernelRunsFasterThanThePeak) {
  Config c = test::gpt175b_cluster();
  c.cal.gemm_eff_max = 0.5;
  c.cal.gemm_half_flops = 0;
  c.cal.attn_eff = 2;
  const Result at_peak = evaluate(c);
  c.cal.attn_eff = 10;
  EXPECT_EQ(evaluate(c).forward_s, at_peak.forward_s);
  c.cal.attn_eff = 1;
  EXPECT_GT(evaluate(c).forward_s, at_peak.forward_s);
}

TEST(Feasibility, ValidRandomInputsReachTheModelWithFiniteResults) {
  std::mt19937_64 rng(12345);
  int ok = 0, oom = 0;
  for (int i = 0; i < 20000; ++i) {
    const Config c = random_valid_config(rng);
    const Result r = evaluate(c);
    // Every draw passes the input checks, so the model runs: it is feasible or out of memory.
    ASSERT_TRUE(r.reason == Reason::Ok || r.reason == Reason::OutOfMemory)
        << "config " << i << ": reason " << int(r.reason);
    for (double f : numeric_fields(r)) ASSERT_TRUE(std::isfinite(f) && f >= 0) << "config " << i;
    ASSERT_GT(r.time_s, 0) << "config " << i;
    ASSERT_GT(r.tokens_per_s, 0) << "config " << i;
    ASSERT_GT(r.model_flops, 0) << "config " << i;
    ASSERT_GT(r.memory_bytes, 0) << "config " << i;
    // Useful FLOPs never exceed what the NPUs could do at peak in that time.
    ASSERT_LE(r.mfu, 1.0) << "config " << i;
    // The reason follows from memory against capacity.
    ASSERT_EQ(r.reason == Reason::OutOfMemory, r.memory_bytes > c.compute.mem_capacity_bytes) << "config " << i;
    ok += r.reason == Reason::Ok;
    oom += r.reason == Reason::OutOfMemory;
  }
  // Both outcomes are common: about a third of the 20,000 draws have 1 PB of memory per NPU,
  // which nearly all fit, and a third 1 GiB, which most do not.
  EXPECT_GE(ok, 5000);
  EXPECT_GE(oom, 2000);
}

// evaluate(c, stop_at_oom = true), as sweeps call it: the same verdict and the same memory as
// the full evaluation; an out-of-memory point comes back without timing, any other unchanged.
TEST(Feasibility, StopAtOomGivesTheFullVerdictAndMemory) {
  std::mt19937_64 rng(777);
  int stopped = 0, full = 0;
  for (int i = 0; i < 20000; ++i) {
    const Config c = random_valid_config(rng);
    const Result want = evaluate(c), got = evaluate(c, true);
    ASSERT_EQ(got.reason, want.reason) << "config " << i;
    ASSERT_EQ(got.memory_bytes, want.memory_bytes) << "config " << i;
    ASSERT_EQ(got.weights_bytes, want.weights_bytes) << "config " << i;
    ASSERT_EQ(got.activation_bytes, want.activation_bytes) << "config " << i;
    ASSERT_EQ(got.kv_cache_bytes, want.kv_cache_bytes) << "config " << i;
    ASSERT_EQ(got.network_cost_usd, want.network_cost_usd) << "config " << i;
    ASSERT_EQ(memory_per_npu(c).total(), want.memory_bytes) << "config " << i;
    if (want.reason == Reason::OutOfMemory) {
      ASSERT_EQ(got.time_s, 0) << "config " << i;
      ASSERT_GT(want.time_s, 0) << "config " << i;
      ++stopped;
    } else {
      ASSERT_EQ(numeric_fields(got), numeric_fields(want)) << "config " << i;
      ++full;
    }
  }
  EXPECT_GE(stopped, 2000);
  EXPECT_GE(full, 5000);
}

TEST(Feasibility, InvalidInputsAreRejectedBeforeAnyArithmetic) {
  std::mt19937_64 rng(54321);
  const double nan = std::nan("");
  struct Edit {
    void (*apply)(Config&, double);
    Reason expect;
  };
  const Edit edits[] = {
      {[](Config& c, double) { c.model.layers = 0; }, Reason::InvalidInput},
      {[](Config& c, double) { c.model.hidden = -64; }, Reason::InvalidInput},
      {[](Config& c, double) { c.model.dtype_bytes = 3; }, Reason::InvalidInput},
      {[](Config& c, double) { c.model.kv_heads = c.model.heads + 1; }, Reason::InvalidInput},
      {[](Config& c, double) { c.work.micro_batch = 0; }, Reason::InvalidInput},
      {[](Config& c, double) { c.net.chunks = 0; }, Reason::InvalidInput},
      {[](Config& c, double) { c.net.dim[0].latency_ns = -1; }, Reason::InvalidInput},
      {[](Config& c, double x) { c.net.dim[0].npus = 2; c.net.dim[0].link_bw_GBps = x; }, Reason::InvalidInput},
      {[](Config& c, double) { c.compute.peak_tflops[peak_index(c.model.dtype_bytes)] = 0; }, Reason::InvalidInput},
      {[](Config& c, double x) { c.compute.mem_bw_GBps = x; }, Reason::InvalidInput},
      {[](Config& c, double x) { c.compute.mem_capacity_bytes = x; }, Reason::InvalidInput},
      {[](Config& c, double) { c.cal.gemm_eff_max = 1.5; }, Reason::InvalidInput},
      {[](Config& c, double) { c.cal.tp_overlap = -0.5; }, Reason::InvalidInput},
      {[](Config& c, double) { c.work.mode = Mode::Decode; c.work.kv_len = 0; }, Reason::InvalidInput},
      {[](Config& c, double) { c.work.mode = Mode::Generate; c.work.output_tokens = 0; }, Reason::InvalidInput},
      {[](Config& c, double) { c.work.dp *= 2; }, Reason::ProductMismatch},
  };
  const double bad_numbers[] = {0, -1, nan, INFINITY};
  for (int i = 0; i < 2000; ++i) {
    Config c = random_valid_config(rng);
    const size_t e = rng() % std::size(edits);
    edits[e].apply(c, bad_numbers[rng() % std::size(bad_numbers)]);
    const Result r = evaluate(c);
    ASSERT_EQ(r.reason, edits[e].expect) << "config " << i << ", edit " << e;
    // Rejected before any arithmetic: every field is left at zero.
    for (double f : numeric_fields(r)) ASSERT_EQ(f, 0.0) << "config " << i << ", edit " << e;
  }
}

// Mixture of experts (docs/model.md): a Mixtral-shaped layer (h 4096, 8 SwiGLU experts of
// F = 14336, top-2, GQA 32 / 8 heads, no biases) on the test cluster: TP 8 on dim 0, DP 8 on
// dim 1 (a Switch of 8 at 25 GB/s, 2000 ns per hop, endpoint delay 10 ns).
ModelSpec mixtral_like(int32_t layers) {
  return ModelSpec{layers, 4096, 14336, 32, 8, 4096, 32000, Mlp::SwiGLU, 2, false, false, 8, 2};
}
Config moe_cluster(int32_t ep) {
  Config c = test::gpt175b_cluster();
  c.model = mixtral_like(8);
  c.work.tp = 8;
  c.work.pp = 1;
  c.work.dp = 8;
  c.work.ep = ep;
  c.work.global_batch = 8;  // one micro-batch per DP rank
  c.work.recompute = Recompute::None;
  c.compute.mem_capacity_bytes = 1e15;
  return c;
}

TEST(MixtureOfExperts, ParametersAndFlopsByHand) {
  // Mixtral 8x7B: per layer attention 4096^2 (2 + 2 x 8/32) = 41,943,040, LayerNorms 8,192,
  // router 4096 x 8 = 32,768, experts 8 x 3 x 4096 x 14336 = 1,409,286,144; x 32 layers plus
  // untied embeddings 2 x 32000 x 4096: 46,702,788,608 (the published 46.7 B).
  const ModelSpec m = mixtral_like(32);
  EXPECT_EQ(mlp_params(m), 176160768.0);
  EXPECT_EQ(layer_params(m), 1451270144.0);
  EXPECT_EQ(model_params(m), 46702788608.0);
  // Active: all but the 6 experts a token skips in each of 32 layers, 12,879,921,152 (12.9 B).
  EXPECT_EQ(active_params(m), 46702788608.0 - 32 * 6 * 176160768.0);
  // A rank of an EP group of 4 holds 2 experts: 41,984,000 + 2 x 176,160,768.
  Workload w;
  w.ep = 4;
  EXPECT_EQ(rank_layer_params(m, w), 41984000.0 + 2 * 176160768.0);
  // FLOPs: each token passes through 2 experts, as through a dense MLP twice as wide, plus the
  // router's 2 s h experts per layer.
  ModelSpec dense = m;
  dense.experts = 0;
  dense.ffn = 2 * 14336;
  const double s = 4096;
  EXPECT_NEAR(forward_flops_per_sequence(m, s, s, s),
              forward_flops_per_sequence(dense, s, s, s) + 32 * 2 * s * 4096 * 8, 1e-12 * forward_flops_per_sequence(m, s, s, s));
}

TEST(MixtureOfExperts, ExpertsSplitOverEpRanks) {
  // Per rank, 8 layers, TP 8: dense 8 x 41,984,000 / 8 + untied embeddings 2 x 32000 x 4096 / 8
  // = 74,752,000; experts 8 x (8 / ep) x 176,160,768 / 8.
  for (int32_t ep : {1, 2, 8}) {
    Config c = moe_cluster(ep);
    const double dense = 74752000, expert = 8.0 * (8 / ep) * 176160768 / 8;
    Result r = evaluate(c);
    ASSERT_EQ(r.reason, Reason::Ok) << ep;
    EXPECT_EQ(r.weights_bytes, 2 * dense + 2 * expert) << ep;    // bf16
    EXPECT_EQ(r.grads_bytes, 2 * dense + 2 * expert) << ep;      // grad_bytes 2 (ideal calibration)
    EXPECT_EQ(r.optimizer_bytes, 12 * dense + 12 * expert) << ep;
    // ZeRO-1 shards the dense state over the 8 DP ranks, the experts' over the 8 / ep ranks
    // that hold the same experts.
    c.work.sharding = Sharding::Zero1;
    r = evaluate(c);
    EXPECT_NEAR(r.optimizer_bytes, 12 * dense / 8 + 12 * expert / (8 / ep), 1e-3) << ep;
  }
  // ZeRO-3: weights sharded likewise, plus two gathered layers (dense part 41,984,000 and the
  // rank's experts, / t): EP 2, 2 x 74,752,000 / 8 + 2 x 704,643,072 / 4 + 2 x 2 x (41,984,000 +
  // 4 x 176,160,768) / 8 = 744,323,072 bytes. EP 8 leaves one copy of each expert: never
  // gathered, so a layer's buffer holds the dense part only, 5,248,000 parameters, and the
  // output layer (32,000 x 4096 / 8 = 16,384,000) with one layer beside it outweighs two:
  // 18,688,000 + 352,321,536 + 2 x (5,248,000 + 16,384,000) = 414,273,536.
  Config z = moe_cluster(2);
  z.work.sharding = Sharding::Zero3;
  EXPECT_NEAR(evaluate(z).weights_bytes, 744323072.0, 1e-3);
  z.work.ep = 8;
  EXPECT_NEAR(evaluate(z).weights_bytes, 414273536.0, 1e-3);
}

TEST(MixtureOfExperts, TokensCrossTheEpGroupByAllToAll) {
  // Each pass dispatches and combines D T top_k h / t = 2 x 4096 x 2 x 4096 / 8 = 8,388,608 bytes
  // per rank. EP 2: a ring all-to-all of 2 ranks on dim 1, 4.01 us + 8388608 / 2 / 25e9 s =
  // 171.78216 us; forward 2, backward 2, x 8 layers, 1 micro-batch: 5.49702912 ms (full
  // recompute dispatches again: 6 per layer). EP 8: 4 steps of 4.01 us + 8388608 / 8 x 16 /
  // 25e9 s = 687.12864 us each.
  Config c = moe_cluster(2);
  Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.ep_comm_s, 32 * 171.78216e-6, 1e-12);
  EXPECT_NEAR(r.time_s, r.forward_s + r.backward_s + r.recompute_s + r.optimizer_s + r.tp_comm_s + r.cp_comm_s +
                            r.dp_comm_s + r.pp_comm_s + r.bubble_s + r.ep_comm_s, 1e-12 * r.time_s);
  c.work.recompute = Recompute::Full;
  EXPECT_NEAR(evaluate(c).ep_comm_s, 48 * 171.78216e-6, 1e-12);
  // ep_overlap hides that fraction of each (Megatron's overlap of one micro-batch's all-to-alls
  // with another's compute); a fraction outside [0, 1] is invalid.
  c.cal.ep_overlap = 0.25;
  EXPECT_NEAR(evaluate(c).ep_comm_s, 0.75 * 48 * 171.78216e-6, 1e-12);
  c.cal.ep_overlap = 1.5;
  EXPECT_EQ(evaluate(c).reason, Reason::InvalidInput);
  // fp8_dispatch: the dispatches carry 1-byte elements, 4.01 us + 4194304 / 2 / 25e9 s =
  // 87.89608 us; the combines as before: 16 x (87.89608 + 171.78216) us (FP8 GEMMs; the
  // activations stay 2 bytes).
  c = moe_cluster(2);
  c.model.dtype_bytes = 1;
  c.compute.peak_tflops[2] = 624;
  c.work.fp8_dispatch = true;
  EXPECT_NEAR(evaluate(c).ep_comm_s, 16 * (87.89608e-6 + 171.78216e-6), 1e-12);
  c = moe_cluster(8);
  EXPECT_NEAR(evaluate(c).ep_comm_s, 32 * 687.12864e-6, 1e-12);
  EXPECT_EQ(evaluate(moe_cluster(1)).ep_comm_s, 0.0);
  // With TP (8 on dim 0: a Switch at 300 GB/s, 500 ns per hop) and sequence parallelism, the MLP
  // half of each layer's TP collectives carries top_k copies: a ring all-gather or
  // reduce-scatter of 8 takes 7 x 1.01 us + 7/8 x bytes / 300e9 s: 104.93709333 us for D T h =
  // 33,554,432 bytes, 202.80418667 us for twice that. Top-2 over top-1, per layer: forward
  // 2 x 97.86709333 us more (the gather and the scatter), backward the same (their transposes;
  // the gathered copies are kept, not gathered again); x 8 layers: 3.13174699 ms.
  c = moe_cluster(2);
  c.model.top_k = 1;
  const double tp1 = evaluate(c).tp_comm_s;
  c.model.top_k = 2;
  EXPECT_NEAR(evaluate(c).tp_comm_s - tp1, 8 * 4 * 97.867093333e-6, 1e-11);
  // Inference: forward only, the two all-to-alls of each layer.
  c = moe_cluster(2);
  c.work.mode = Mode::Prefill;
  r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_NEAR(r.ep_comm_s, 16 * 171.78216e-6, 1e-12);
}

// Shared experts (DeepSeekMoE style): every token passes through them besides its top_k; they
// are held by every rank of the EP group, like the attention.
TEST(MixtureOfExperts, SharedExpertsByHand) {
  // Qwen2-57B-A14B (its released configuration; its QKV biases left out): 28 layers, h 3584, 28
  // heads, 4 KV heads, 64 routed experts of F 2560, top 8, and a shared MLP of 20,480 = 8 x 2560.
  // A layer: attention 3584^2 (2 + 2 x 4/28) = 29,360,128, 72 MLPs of 3 x 3584 x 2560 =
  // 27,525,120, router 3584 x 64 = 229,376, norms 7,168: 2,011,405,312; the model 28 of them and
  // 2 x 151936 x 3584 of embeddings: 57,408,425,984 (the name's 57 B).
  ModelSpec q{28, 3584, 2560, 28, 4, 4096, 151936, Mlp::SwiGLU, 2, false, false, 64, 8};
  q.shared_experts = 8;
  EXPECT_EQ(layer_params(q), 2011405312.0);
  EXPECT_EQ(model_params(q), 57408425984.0);
  // A rank of an EP group of 8 holds 8 routed experts and all 8 shared ones.
  Workload w;
  w.ep = 8;
  EXPECT_EQ(rank_layer_params(q, w), 29360128.0 + 229376 + 7168 + 16 * 27525120.0);
  // FLOPs: 8 routed + 8 shared MLPs per token (active: 14.2 B parameters), the router's 2 s h 64.
  const double s = 4096, h = 3584;
  const double layer = 2 * s * h * h * (1 + 2.0 * 4 / 28) + 2 * s * h * h + 2 * 3 * s * h * 2560 * 16 + 4 * s * s * h +
                       2 * s * h * 64;
  EXPECT_NEAR(forward_flops_per_sequence(q, s, s, s), 28 * layer + 2 * s * h * 151936, 1e-12 * 28 * layer);
  // In a cluster: the shared MLP adds its GEMMs, activations and, with TP, the tokens' own
  // gather / scatter pair; an ep all-to-all carries only the routed copies.
  Config c = moe_cluster(8);
  const Result plain = evaluate(c);
  c.model.shared_experts = 2;
  const Result shared = evaluate(c);
  EXPECT_GT(shared.forward_s, plain.forward_s);
  EXPECT_GT(shared.tp_comm_s, plain.tp_comm_s);
  EXPECT_GT(shared.activation_bytes, plain.activation_bytes);
  EXPECT_EQ(shared.ep_comm_s, plain.ep_comm_s);
  // Two shared experts per rank more: 8 layers x 2 x 176,160,768 / tp 8 parameters, in 2-byte weights.
  EXPECT_DOUBLE_EQ(shared.weights_bytes - plain.weights_bytes, 2.0 * 8 * 2 * 176160768.0 / 8);
  // In a dense model they are invalid input (config files refuse them).
  c.model.experts = 0;
  c.work.ep = 1;
  EXPECT_EQ(evaluate(c).reason, Reason::InvalidInput);
}

TEST(MixtureOfExperts, ReasonsAndWhatExpertsCost) {
  // ep must divide the experts and fit in the DP group; a dense model has no experts to split.
  Config c = moe_cluster(3);
  EXPECT_EQ(evaluate(c).reason, Reason::ExpertsNotDivisible);
  c = moe_cluster(4);
  c.work.dp = 2;
  c.work.pp = 4;  // DP 2 on dim 1: 4 EP ranks do not fit
  EXPECT_EQ(evaluate(c).reason, Reason::PlacementMismatch);
  c = moe_cluster(2);
  c.model.experts = 0;
  EXPECT_EQ(evaluate(c).reason, Reason::ExpertsNotDivisible);
  c.work.ep = 1;
  EXPECT_EQ(evaluate(c).reason, Reason::Ok);
  for (auto [experts, top_k] : {std::pair<int32_t, int32_t>{1, 1}, {8, 0}, {8, 9}, {-2, 1}}) {
    c = moe_cluster(1);
    c.model.experts = experts;
    c.model.top_k = top_k;
    EXPECT_EQ(evaluate(c).reason, Reason::InvalidInput) << experts << " " << top_k;
  }
  // More experts per token cost forward time; more EP ranks cut memory.
  c = moe_cluster(2);
  const Result top2 = evaluate(c);
  c.model.top_k = 4;
  const Result top4 = evaluate(c);
  EXPECT_GT(top4.forward_s, top2.forward_s);
  EXPECT_GT(top4.ep_comm_s, top2.ep_comm_s);
  EXPECT_LT(evaluate(moe_cluster(8)).memory_bytes, evaluate(moe_cluster(2)).memory_bytes);
  // A decode step's one token per rank, routed to one expert, reads that expert's weights only:
  // more experts of the same size leave its forward time as it was.
  c = moe_cluster(1);
  c.model.top_k = 1;
  c.work.mode = Mode::Decode;
  c.work.kv_len = 1024;
  c.work.micro_batch = 1;
  c.work.global_batch = 8;
  const double decode8 = evaluate(c).forward_s;
  c.model.experts = 64;
  EXPECT_EQ(evaluate(c).forward_s, decode8);
}

// Megatron's MoE parallel folding (workload.etp > 0): the experts take their own layout over a
// stage's TP x CP x DP ranks, ETP innermost, then EP, then the ranks holding the same slices.
// On moe_cluster (TP 8 on dim 0, DP 8 on dim 1) etp = tp folds the experts as the unfolded
// layout lays them (ETP = the TP group, EP the innermost DP ranks): the same results.
TEST(MixtureOfExperts, FoldingWithEtpEqualToTpIsTheUnfoldedLayout) {
  for (int32_t ep : {1, 2, 8}) {
    Config folded = moe_cluster(ep);
    folded.work.etp = 8;
    const Result a = evaluate(moe_cluster(ep)), b = evaluate(folded);
    ASSERT_EQ(b.reason, Reason::Ok) << ep;
    EXPECT_EQ(a.time_s, b.time_s) << ep;
    EXPECT_EQ(a.memory_bytes, b.memory_bytes) << ep;
    EXPECT_EQ(a.tp_comm_s, b.tp_comm_s) << ep;
    EXPECT_EQ(a.ep_comm_s, b.ep_comm_s) << ep;
    EXPECT_EQ(a.dp_comm_s, b.dp_comm_s) << ep;
  }
  // ZeRO-3 with EP 8 folded at ETP 8: one copy of each expert slice, never gathered, as unfolded
  // (ExpertsSplitOverEpRanks: 414,273,536 bytes).
  Config z = moe_cluster(8);
  z.work.sharding = Sharding::Zero3;
  z.work.etp = 8;
  EXPECT_NEAR(evaluate(z).weights_bytes, 414273536.0, 1e-3);
  // With cp > 1 the folded EP group is the innermost ranks after ETP, here the CP ranks (stride
  // 1 on dim 1), where unfolded it is the innermost DP ranks (stride 2, outside CP).
  Config cp = moe_cluster(2);
  cp.work.cp = 2;
  cp.work.dp = 4;
  Groups unfolded, folded;
  ASSERT_EQ(place_groups(cp.net, cp.work, unfolded.span), Reason::Ok);
  folded = unfolded;
  ASSERT_TRUE(place_experts(cp, unfolded));
  cp.work.etp = 8;
  ASSERT_TRUE(place_experts(cp, folded));
  EXPECT_EQ(unfolded.ep.k[1], 2);
  EXPECT_EQ(unfolded.ep.stride[1], 2);
  EXPECT_EQ(folded.ep.k[1], 2);
  EXPECT_EQ(folded.ep.stride[1], 1);
  EXPECT_EQ(folded.etp.k[0], 8);
  // A dense model has no experts to fold: etp changes nothing.
  Config dense = moe_cluster(1);
  dense.model.experts = 0;
  const double t0 = evaluate(dense).time_s;
  dense.work.etp = 1;
  EXPECT_EQ(evaluate(dense).time_s, t0);
}

// Folded with ETP 1 and EP 8 inside dim 0 (the node's Switch): each rank holds one whole expert
// (8 layers x 176,160,768 parameters, replicated over the 8 ranks of dim 1), the dispatch of
// D T top_k h / t = 8,388,608 bytes crosses dim 0 (a ring all-to-all of 8: 4 steps of 1.01 us +
// 8388608 / 8 x 16 / 300e9 s = 59.96405333 us; x 4 a layer, x 8 layers), and the experts' half of
// the TP collectives goes (ETP 1): per layer the unfolded EP 8 gathers and scatters the top-2
// copies over TP, forward 2 and backward 2 collectives of 202.80418667 us (ring of 8 on dim 0,
// 7 x 1.01 us + 7/8 x 67,108,864 / 300e9 s). The experts' GEMMs do the same FLOPs per rank (1,024
// copies a full expert wide against 8,192 an eighth wide): compute-bound, the same time.
TEST(MixtureOfExperts, FoldedExpertsTakeTheirOwnLayout) {
  Config folded = moe_cluster(8);
  folded.work.etp = 1;
  const Result r = evaluate(folded), unfolded = evaluate(moe_cluster(8));
  ASSERT_EQ(r.reason, Reason::Ok);
  const double dense = 74752000, expert = 8.0 * 176160768;
  EXPECT_EQ(r.weights_bytes, 2 * dense + 2 * expert);
  EXPECT_EQ(r.optimizer_bytes, 12 * dense + 12 * expert);
  EXPECT_NEAR(r.ep_comm_s, 32 * 59.96405333e-6, 1e-11);
  EXPECT_NEAR(unfolded.tp_comm_s - r.tp_comm_s, 8 * 4 * 202.80418667e-6, 1e-10);
  EXPECT_NEAR(r.forward_s, unfolded.forward_s, 1e-12 * r.forward_s);
  // A rank keeps the copies its expert slices take as input (model revision 9): gathered over
  // the TP group unfolded, D T h k = 2 x 4096 x 4096 x 2 = 67,108,864 bytes a layer; an eighth
  // of that with ETP 1; x 8 layers, one micro-batch in flight.
  EXPECT_NEAR(unfolded.activation_bytes - r.activation_bytes, 8 * (67108864.0 - 8388608.0), 1e-3);
  // ZeRO-1 shards the experts over the 8 ranks holding the same expert (dim 1); ZeRO-3 also
  // gathers two layers: the dense part / t and the rank's expert whole.
  folded.work.sharding = Sharding::Zero1;
  EXPECT_NEAR(evaluate(folded).optimizer_bytes, 12 * dense / 8 + 12 * expert / 8, 1e-3);
  folded.work.sharding = Sharding::Zero3;
  EXPECT_NEAR(evaluate(folded).weights_bytes,
              2 * dense / 8 + 2 * expert / 8 + 2 * 2 * (41984000.0 / 8 + 176160768.0), 1e-3);
  // ETP 2: each expert split over 2 ranks of dim 0, its copies gathered there (2 x 8,388,608
  // bytes: a ring of 2, 1.01 us + 1/2 x 16,777,216 / 300e9 s = 28.97202667 us; forward 2,
  // backward 2 a layer); EP 4 the next 4 ranks of dim 0 (4 experts of 2 a rank, each half wide).
  Config etp2 = moe_cluster(4);
  etp2.work.etp = 2;
  const Result r2 = evaluate(etp2);
  ASSERT_EQ(r2.reason, Reason::Ok);
  EXPECT_EQ(r2.weights_bytes, 2 * dense + 2 * 8.0 * 2 * 176160768 / 2);
  EXPECT_NEAR(r2.tp_comm_s - r.tp_comm_s, 8 * 4 * 28.97202667e-6, 1e-10);
  // Folded, the experts can have copies where the dense weights have none: DP 1, PP 8, EP 2,
  // ETP 1 leaves 8 / 2 = 4 ranks of a stage holding each expert. ZeRO-3 shards them 4 ways and
  // gathers the stage's one layer of them (4 experts whole), and their gradients and gathers
  // are timed. Per rank: dense 41,984,000 / 8 + 32000 x 4096 / 8 = 21,632,000 parameters,
  // experts 4 x 176,160,768 = 704,643,072.
  Config alone = moe_cluster(2);
  alone.work.dp = 1;
  alone.work.pp = 8;
  alone.work.etp = 1;
  alone.work.sharding = Sharding::Zero3;
  const Result ra = evaluate(alone);
  ASSERT_EQ(ra.reason, Reason::Ok);
  EXPECT_NEAR(ra.weights_bytes, 2 * 21632000.0 + 2 * 704643072.0 / 4 + 2 * 704643072.0, 1e-3);
  EXPECT_GT(ra.dp_comm_s, 0.0);
  alone.work.etp = 0;  // unfolded: one copy of each expert slice, nothing to synchronise
  EXPECT_EQ(evaluate(alone).dp_comm_s, 0.0);
  // ep_dispatch dedup (DeepEP-style): a token crosses to each node holding one of its experts
  // once. 16 experts top-2, folded ETP 1 / EP 16: dim 0's 8 ranks (a node) x 2 nodes on dim 1.
  // A node holds 8 experts and misses both of a token's with probability 8/16 x 7/15 = 7/30, so
  // a token reaches 2 x 23/30 nodes: dim 1's phase of each all-to-all carries 23/30 of the
  // copies, 4.01 us + 23/30 x 8388608 x 1/2 / 25e9 s (the ring of 2 above) where the plain
  // all-to-all takes 4.01 us + 167.77216 us: 7/30 x 167.77216 us less, x 32 a step.
  Config dedup = moe_cluster(16);
  dedup.model.experts = 16;
  dedup.work.etp = 1;
  const double plain = evaluate(dedup).ep_comm_s;
  dedup.work.ep_dispatch = EpDispatch::NodeDedup;
  ASSERT_EQ(evaluate(dedup).reason, Reason::Ok);
  EXPECT_NEAR(plain - evaluate(dedup).ep_comm_s, 32 * 167.77216e-6 * 7 / 30, 1e-12);
  // A dimension of one NPU inside the node (a package level, or a PSA's padding) has no links to
  // fan tokens out over: the node is still dim 0's 8 NPUs (it was taken as the node, every rank
  // one, and its inner phase scaled too).
  Config padded = dedup;
  padded.net.ndims = 3;
  padded.net.dim[2] = dedup.net.dim[1];
  padded.net.dim[1] = dedup.net.dim[0];
  padded.net.dim[0].npus = 1;
  EXPECT_EQ(evaluate(padded).ep_comm_s, evaluate(dedup).ep_comm_s);
  EXPECT_EQ(evaluate(padded).time_s, evaluate(dedup).time_s);
  // EP 8 over the DP ranks, one a node (dim 1 alone; TP fills dim 0): 8 experts, one a node, so a
  // token's two experts are always on two nodes: nothing to de-duplicate.
  Config one = moe_cluster(8);
  const double one_plain = evaluate(one).ep_comm_s;
  one.work.ep_dispatch = EpDispatch::NodeDedup;
  EXPECT_EQ(evaluate(one).ep_comm_s, one_plain);
  // 16 experts, two a node: a node misses both of a token's with probability 14/16 x 13/15, so a
  // token reaches 8 x (1 - 182/240) = 1.9333 nodes, 29/30 of its 2 copies; without latencies the
  // whole all-to-all (one phase, over dim 1, outside the node) takes 29/30 of the time.
  Config sixteen = moe_cluster(8);
  sixteen.model.experts = 16;
  sixteen.net.dim[1].latency_ns = 0;
  sixteen.net.endpoint_delay_ns = 0;
  const double sixteen_plain = evaluate(sixteen).ep_comm_s;
  sixteen.work.ep_dispatch = EpDispatch::NodeDedup;
  EXPECT_NEAR(evaluate(sixteen).ep_comm_s / sixteen_plain, 29.0 / 30, 1e-12);
  // etp x ep must divide a stage's TP x CP x DP ranks and fall evenly on the dimensions; etp
  // must divide each expert's FFN width.
  Config bad = moe_cluster(8);
  bad.work.etp = 16;
  EXPECT_EQ(evaluate(bad).reason, Reason::PlacementMismatch);
  bad.work.etp = 3;
  EXPECT_EQ(evaluate(bad).reason, Reason::HeadsNotDivisible);  // 14,336 / 3
  bad.work.etp = -1;
  EXPECT_EQ(evaluate(bad).reason, Reason::InvalidInput);
}

// Group-limited routing (DeepSeek-V3's node-limited routing): the nodes a token reaches under
// ep_dispatch dedup, each node 8 EP ranks (dim 0) and `nodes` of them on dim 1.
double nodes_reached(int32_t E, int32_t k, int32_t G, int32_t g, int32_t nodes) {
  ModelSpec m;
  m.experts = E;
  m.top_k = k;
  m.expert_groups = G;
  m.groups_per_token = g;
  Workload w;
  w.ep = 8 * nodes;
  Network net;
  net.ndims = 2;
  net.dim[0].npus = 8;
  net.dim[1].npus = nodes;
  Span ep;
  ep.k[0] = 8;
  ep.k[1] = nodes;
  return node_dedup_scale(m, w, net, ep) * k;
}

TEST(MixtureOfExperts, GroupLimitedRoutingReachesFewerNodes) {
  // DeepSeek-V3 over 8 nodes, a group a node: a token's 4 groups are 4 nodes, and each misses all
  // 8 of its experts (drawn from the 128 of the 4 groups) with probability prod_{i<8} (96 - i) /
  // (128 - i) = 0.0927473: 4 x 0.9072527 = 3.6290109 nodes, against 8 x (1 - prod_{i<8} (224 - i)
  // / (256 - i)) = 5.2946520 unlimited.
  EXPECT_NEAR(nodes_reached(256, 8, 8, 4, 8), 3.6290109244, 1e-9);
  EXPECT_NEAR(nodes_reached(256, 8, 0, 0, 8), 5.2946520004, 1e-9);
  EXPECT_EQ(nodes_reached(256, 8, 8, 8, 8), nodes_reached(256, 8, 0, 0, 8));  // every group allowed
  // Groups that do not fall on whole nodes (6 groups over 4 nodes) are taken as unlimited.
  EXPECT_EQ(nodes_reached(96, 6, 6, 2, 4), nodes_reached(96, 6, 0, 0, 4));
  // Against a simulation of the routing (seeded): g of the G groups, then k distinct experts of
  // theirs, uniformly; experts on consecutive nodes. Groups spanning nodes (16 nodes), nodes
  // holding 2 or 4 groups (4 and 2 nodes; 5 groups of 8 a token on 2 nodes: at least one on each).
  struct Case {
    int32_t E, k, G, g, nodes;
  };
  std::mt19937_64 rng(7);
  for (const Case& c : {Case{256, 8, 8, 4, 8}, Case{256, 8, 8, 4, 16}, Case{256, 8, 8, 3, 4}, Case{64, 6, 8, 5, 2},
                        Case{128, 4, 16, 2, 8}}) {
    const int32_t per_group = c.E / c.G, per_node = c.E / c.nodes;
    std::vector<int32_t> groups(size_t(c.G), 0), experts;
    double total = 0;
    const int kTokens = 200000;
    for (int t = 0; t < kTokens; ++t) {
      for (int32_t i = 0; i < c.G; ++i) groups[size_t(i)] = i;
      std::shuffle(groups.begin(), groups.end(), rng);
      experts.clear();
      for (int32_t i = 0; i < c.g; ++i)
        for (int32_t e = 0; e < per_group; ++e) experts.push_back(groups[size_t(i)] * per_group + e);
      std::shuffle(experts.begin(), experts.end(), rng);
      std::vector<bool> hit(size_t(c.nodes), false);
      for (int32_t i = 0; i < c.k; ++i) hit[size_t(experts[size_t(i)] / per_node)] = true;
      total += double(std::count(hit.begin(), hit.end(), true));
    }
    EXPECT_NEAR(nodes_reached(c.E, c.k, c.G, c.g, c.nodes), total / kTokens, 0.01)
        << c.E << " " << c.k << " " << c.G << " " << c.g << " " << c.nodes;
  }
  // Invalid: without experts, groups not dividing them, too few experts in a token's groups.
  const std::pair<void (*)(Config&), Reason> cases[] = {
      {[](Config& c) { c.model.expert_groups = 4; c.model.groups_per_token = 2; }, Reason::Ok},
      {[](Config& c) { c.model.expert_groups = 4; }, Reason::InvalidInput},
      {[](Config& c) { c.model.expert_groups = 3; c.model.groups_per_token = 1; }, Reason::InvalidInput},
      {[](Config& c) { c.model.expert_groups = 8; c.model.groups_per_token = 1; }, Reason::InvalidInput},  // top-2
      {[](Config& c) { c.model.expert_groups = 4; c.model.groups_per_token = 5; }, Reason::InvalidInput},
  };
  for (const auto& [edit, want] : cases) {
    Config c = moe_cluster(8);
    edit(c);
    EXPECT_EQ(evaluate(c).reason, want) << c.model.expert_groups << " " << c.model.groups_per_token;
  }
}

// A faster NPU (every peak and the memory bandwidth k times) never makes a step slower, where
// the step is bound by communication whose exposure depends on the compute: paired all-to-alls
// that outlast the compute (the windows hiding the data-parallel sync shrank with it), and
// DualPipe with ZeRO-3 gathers exposed (the weight-gradient work filling its bubble shrank while
// the micro-batch stayed as long). Both were found by a review helper's metamorphic checks.
TEST(Time, AFasterComputeNeverSlowsTheStep) {
  Config paired = moe_cluster(4);
  paired.work.pp = 1;  // no bubble, whose unpaired all-to-alls would shrink with the compute
  paired.work.dp = 8;
  paired.work.tp = 8;
  paired.work.global_batch = 32;  // 4 micro-batches a DP rank
  paired.net.dim[1].link_bw_GBps = 0.5;  // the all-to-alls outlast the compute
  paired.work.overlap_ep_comm = true;
  Config dual = test::gpt175b_cluster();
  dual.work.schedule = Schedule::DualPipe;
  dual.work.pp = 4;
  dual.work.dp = 2;
  dual.work.sharding = Sharding::Zero3;
  dual.net.dim[1].link_bw_GBps = 1;  // the gathers exposed, the more so the faster the pass
  dual.cal.dp_overlap = 1;            // (the ideal machine): a micro-batch as long as its gathers
  for (Config c : {paired, dual}) {
    c.compute.mem_capacity_bytes = 1e15;
    double before = INFINITY;
    for (double k : {1.0, 2.0, 10.0, 100.0}) {
      Config fast = c;
      for (double& peak : fast.compute.peak_tflops) peak *= k;
      fast.compute.mem_bw_GBps *= k;
      const Result r = evaluate(fast);
      ASSERT_EQ(r.reason, Reason::Ok);
      EXPECT_LE(r.time_s, before * (1 + 1e-12)) << k;
      before = r.time_s;
    }
  }
}

// overlap_ep_comm: a micro-batch's all-to-alls hidden behind its compute (forward, backward,
// recompute), only what exceeds it exposed, in the step and in the bubble alike.
TEST(MixtureOfExperts, AllToAllsBesideAPairedMicroBatch) {
  for (const double inter_GBps : {25.0, 0.5}) {  // hidden whole, then exceeding the compute
    Config c = moe_cluster(4);  // EP 4 over DP ranks: across dim 1
    c.work.pp = 2;
    c.work.dp = 4;
    c.work.tp = 8;
    c.work.global_batch = 16;  // 4 micro-batches a DP rank
    c.net.dim[1].link_bw_GBps = inter_GBps;
    const Result off = evaluate(c);
    c.work.overlap_ep_comm = true;
    const Result on = evaluate(c);
    ASSERT_EQ(off.reason, Reason::Ok);
    ASSERT_EQ(on.reason, Reason::Ok);
    ASSERT_GT(off.ep_comm_s, 0);
    const double compute = off.forward_s + off.backward_s + off.recompute_s;
    const double exposed = off.ep_comm_s > compute ? off.ep_comm_s - compute : 0.0;
    EXPECT_NEAR(on.ep_comm_s, exposed, 1e-12 * off.time_s) << inter_GBps;
    EXPECT_EQ(inter_GBps == 25.0, exposed == 0.0) << off.ep_comm_s << " " << compute;
    // The bubble (warm-up and cool-down, nothing paired) keeps the all-to-alls whole.
    EXPECT_NEAR(on.bubble_s, off.bubble_s, 1e-12 * off.bubble_s);
    // A micro-batch bound by its all-to-alls lasts as long as they do, and so does the usable
    // fraction of its passes that hides the data-parallel traffic.
    EXPECT_NEAR(off.time_s - on.time_s, off.ep_comm_s - exposed + off.dp_comm_s - on.dp_comm_s, 1e-9 * off.time_s);
    EXPECT_EQ(inter_GBps == 25.0, on.dp_comm_s == off.dp_comm_s) << on.dp_comm_s << " " << off.dp_comm_s;
    EXPECT_LE(on.dp_comm_s, off.dp_comm_s);
    // Nothing to pair: one micro-batch, or GPipe's forwards all before its backwards.
    Config one = c;
    one.work.global_batch = 4;
    const Result one_on = evaluate(one);
    one.work.overlap_ep_comm = false;
    EXPECT_EQ(one_on.ep_comm_s, evaluate(one).ep_comm_s);
    Config gpipe = c;
    gpipe.work.schedule = Schedule::GPipe;
    const Result gpipe_on = evaluate(gpipe);
    gpipe.work.overlap_ep_comm = false;
    EXPECT_EQ(gpipe_on.ep_comm_s, evaluate(gpipe).ep_comm_s);
  }
}

// The experts a pass reaches, in expectation under uniform top-k routing: E (1 - (1 - k/E)^T).
// Mixtral (8 experts, top 2): one token 8 x (1 - 0.75) = 2, two 8 x (1 - 0.5625) = 3.5, four
// 8 x (1 - 0.31640625) = 5.46875; a rank of an EP group of 8 holding 1 expert, one top-1 token
// per rank: 1 - (7/8)^8 = 0.656...; a training micro-batch's thousands of tokens reach them all.
TEST(MixtureOfExperts, ExpertsReachedByAPass) {
  ModelSpec m;
  m.experts = 8;
  m.top_k = 2;
  EXPECT_EQ(experts_reached(m, 8, 1), 2.0);
  EXPECT_EQ(experts_reached(m, 8, 2), 3.5);
  EXPECT_EQ(experts_reached(m, 8, 4), 5.46875);
  EXPECT_EQ(experts_reached(m, 8, 4096), 8.0);
  m.top_k = 1;
  EXPECT_NEAR(experts_reached(m, 1, 8), 1 - std::pow(7.0 / 8, 8), 1e-15);
  // In the model: two tokens of top-2 reach 4 - 4/E experts, 3.5 of 8 and 3.9375 of 64 (the
  // most they could reach, 4, either way), so 64 experts of the same size take longer than 8 at
  // two tokens a step, by more than at one (2 reached either way, the router's E aside).
  const auto decode = [](int32_t experts, int32_t tokens) {
    Config c = moe_cluster(1);
    c.model.top_k = 2;
    c.model.experts = experts;
    c.work.mode = Mode::Decode;
    c.work.seq_parallel = false;  // a decode micro-batch of 1 or 2 does not split over 8 TP ranks
    c.work.kv_len = 1024;
    c.work.micro_batch = tokens;
    c.work.global_batch = int64_t(tokens) * c.work.dp;
    const Result r = evaluate(c);
    EXPECT_EQ(r.reason, Reason::Ok);
    return r.forward_s;
  };
  const double one = decode(64, 1) - decode(8, 1), two = decode(64, 2) - decode(8, 2);
  // By hand: 0.4375 experts more, each 3 x 4096 x 14336 / 8 x 2 bytes = 44,040,192 read at
  // 2,039 GB/s, in 8 layers: 75.6 us (the experts' few tokens of activations aside).
  EXPECT_NEAR(two - one, 0.4375 * 44040192.0 / 2039e9 * 8, 0.02 * 75.6e-6) << one << " " << two;
}

// Dense layers among the expert layers (ModelSpec::first_dense_layers, moe_layer_step,
// dense_ffn): Llama 4 Maverick's alternation and DeepSeekMoE's dense first layer.
ModelSpec maverick() {
  ModelSpec m{48, 5120, 8192, 40, 8, 8192, 202048, Mlp::SwiGLU, 2, false, false, 128, 1};
  m.shared_experts = 1;
  m.head_dim = 128;
  m.moe_layer_step = 2;
  m.dense_ffn = 16384;
  return m;
}
ModelSpec deepseek_moe_16b() {
  ModelSpec m{28, 2048, 1408, 16, 16, 4096, 102400, Mlp::SwiGLU, 2, false, false, 64, 6};
  m.shared_experts = 2;
  m.first_dense_layers = 1;
  m.dense_ffn = 10944;
  return m;
}

TEST(MixtureOfExperts, DenseLayersParametersAndFlopsByHand) {
  // Which layers hold experts: i >= first_dense_layers and (i + 1) a multiple of the step.
  ModelSpec m = maverick();
  EXPECT_EQ(moe_layers_below(m, 48), 24);
  EXPECT_EQ(moe_layers_below(m, 1), 0);  // layer 0 dense
  EXPECT_EQ(moe_layers_below(m, 2), 1);  // layer 1 experts
  m.first_dense_layers = 3;              // then layers 3, 5, 7, 9 of 10
  EXPECT_EQ(moe_layers_below(m, 10), 4);
  EXPECT_EQ(moe_layers_below(m, 3), 0);
  EXPECT_EQ(moe_layers_below(deepseek_moe_16b(), 28), 27);
  // Llama 4 Maverick: attention 5120 x 5120 (2 + 2 x 8/40) = 62,914,560 and norms 10,240 a
  // layer; an expert layer 129 MLPs of 3 x 5120 x 8192 = 125,829,120 and a router of 5120 x 128
  // = 655,360: 16,295,536,640; a dense layer one MLP of 3 x 5120 x 16384 = 251,658,240:
  // 314,583,040; 24 of each and 2 x 202048 x 5120 of embeddings: 400,711,843,840 (400 B).
  EXPECT_EQ(layer_params(maverick()), 16295536640.0);
  EXPECT_EQ(layer_params(dense_layer_model(maverick())), 314583040.0);
  EXPECT_EQ(model_params(maverick()), 400711843840.0);
  // DeepSeekMoE 16B: attention 4 x 2048^2 = 16,777,216 and norms 4,096; an expert layer 66 MLPs
  // of 3 x 2048 x 1408 = 8,650,752 and a router of 2048 x 64: 587,862,016; the dense layer
  // 3 x 2048 x 10944 = 67,239,936 more than the attention: 84,021,248; 27 + 1 of them and
  // 2 x 102400 x 2048 of embeddings: 16,375,726,080 (16.4 B).
  EXPECT_EQ(model_params(deepseek_moe_16b()), 27 * 587862016.0 + 84021248.0 + 419430400.0);
  // Maverick's FLOPs: a token's expert layer (one routed and the shared MLP, 2 x 8192 wide)
  // costs what its dense layer (16384 wide) does, plus the router's 2 s h 128.
  const double s = 8192, h = 5120;
  const double layer = 2 * s * h * h * (1 + 2 * 0.2) + 2 * s * h * h + 2 * 3 * s * h * 16384 + 4 * s * s * h;
  const double want = 48 * layer + 24 * 2 * s * h * 128 + 2 * s * h * 202048;
  EXPECT_NEAR(forward_flops_per_sequence(maverick(), s, s, s), want, 1e-12 * want);
}

// A mixture's step is timed on its slowest stage: the one holding the most layers of the dearer
// kind, or the other where its parameters (ZeRO-3's gathers, the gradient synchronisation, the
// optimizer step) make it slower. Chosen by the layers' cost alone, a dense layer made a little
// dearer moved the step onto a stage of few parameters and the step got faster (Llama 4
// Maverick -30% for a 10% wider dense MLP; found by a review helper's metamorphic checks).
TEST(MixtureOfExperts, TheSlowestStageSetsThePace) {
  Config c = test::gpt175b_cluster();
  c.model = maverick();
  c.model.layers = 12;  // 6 dense and 6 expert layers, alternating, on 4 stages of 3
  c.work.tp = 2;
  c.work.pp = 4;
  c.work.dp = 8;
  c.work.global_batch = 32;
  c.work.sharding = Sharding::Zero3;
  c.compute.mem_capacity_bytes = 1e15;
  c.net.dim[1].link_bw_GBps = 5;  // the expert layers' gathers exposed
  double before = 0;
  for (const int32_t dense_ffn : {8192, 16384, 16640, 18018, 20480, 32768}) {
    c.model.dense_ffn = dense_ffn;
    const Result r = evaluate(c);
    ASSERT_EQ(r.reason, Reason::Ok);
    EXPECT_GE(r.time_s, before) << dense_ffn;
    before = r.time_s;
  }
}

TEST(MixtureOfExperts, StageMixOfDenseAndExpertLayers) {
  // DeepSeekMoE 16B on 4 stages of 7 layers: stage 0 holds the dense layer.
  const ModelSpec m = deepseek_moe_16b();
  Workload w;
  w.pp = 4;
  auto mix = [&](bool most_dense) {
    const StageMix x = stage_mix(m, w, most_dense);
    return std::pair<double, double>{x.main, x.dense};
  };
  EXPECT_EQ(mix(false), std::make_pair(7.0, 0.0));
  EXPECT_EQ(mix(true), std::make_pair(6.0, 1.0));
  // Interleaved, 2 stages of 2 chunks of 7: stage 0 holds chunks 0 and 2.
  w.pp = 2;
  w.schedule = Schedule::Interleaved;
  w.vpp = 2;
  EXPECT_EQ(mix(false), std::make_pair(14.0, 0.0));
  EXPECT_EQ(mix(true), std::make_pair(13.0, 1.0));
  // Uneven, 3 stages of 10, 9 and 9 layers (q = 9, r = 1): the upper bound of 10 made up of the
  // kind (stage 1's 9 expert layers and its missing one).
  w = Workload();
  w.pp = 3;
  w.uneven_stages = true;
  EXPECT_EQ(mix(false), std::make_pair(10.0, 0.0));
  EXPECT_EQ(mix(true), std::make_pair(9.0, 1.0));  // the missing layers not dense: the model has 1
  // Interleaved and uneven, 2 stages of 3 chunks (q = 4, r = 4: chunks of 5, 5, 5, 5, 4, 4
  // layers): stage 0 holds chunks 0, 2 and 4, layers 0-4, 10-14 and 20-23, the dense one among
  // them; stage 1 the 14 expert layers 5-9, 15-19 and 24-27.
  w.pp = 2;
  w.schedule = Schedule::Interleaved;
  w.vpp = 3;
  EXPECT_EQ(mix(false), std::make_pair(14.0, 0.0));
  EXPECT_EQ(mix(true), std::make_pair(13.0, 1.0));
  // DeepSeek-V3's 61 layers (the first 3 dense) on 2 uneven stages of up to 31: stage 1 holds
  // 30 expert layers, a split of 30 / 31 gives it 31.
  ModelSpec v3 = m;
  v3.layers = 61;
  v3.first_dense_layers = 3;
  w.pp = 2;
  EXPECT_EQ(stage_mix(v3, w, false).main, 31.0);
  EXPECT_EQ(stage_mix(v3, w, false).dense, 0.0);
  EXPECT_EQ(stage_mix(v3, w, true).dense, 3.0);
  // Maverick's alternation gives every stage of an even count half of each.
  w = Workload();
  w.pp = 4;
  EXPECT_EQ(stage_mix(maverick(), w, false).main, 6.0);
  EXPECT_EQ(stage_mix(maverick(), w, true).dense, 6.0);
  // A model without dense layers: all of its own kind.
  EXPECT_EQ(stage_mix(mixtral_like(32), w, true).main, 8.0);
  EXPECT_EQ(stage_mix(mixtral_like(32), w, true).dense, 0.0);
}

// A mixture's dense layers are timed and held as the same layers of a dense model: on one stage
// the mixture of 4 expert and 4 dense layers is the 4-layer mixture plus what 4 more layers add
// to the dense model.
TEST(MixtureOfExperts, DenseLayersCostWhatADenseModelsLayersDo) {
  auto with = [](int32_t layers, bool experts, int32_t step) {
    Config c = moe_cluster(experts ? 4 : 1);
    c.model.layers = layers;
    if (!experts) {
      c.model.experts = 0;
      c.model.top_k = 1;
      c.model.ffn = 8192;
    }
    c.model.moe_layer_step = step;
    c.model.dense_ffn = step > 1 ? 8192 : 0;
    const Result r = evaluate(c);
    EXPECT_EQ(r.reason, Reason::Ok) << layers << experts << step;
    return r;
  };
  const Result mixed = with(8, true, 2), moe = with(4, true, 1), dense8 = with(8, false, 1), dense4 = with(4, false, 1);
  auto near = [](double got, double want) { EXPECT_NEAR(got, want, 1e-12 * want); };
  near(mixed.forward_s, moe.forward_s + dense8.forward_s - dense4.forward_s);
  near(mixed.backward_s, moe.backward_s + dense8.backward_s - dense4.backward_s);
  near(mixed.tp_comm_s, moe.tp_comm_s + dense8.tp_comm_s - dense4.tp_comm_s);
  EXPECT_EQ(mixed.ep_comm_s, moe.ep_comm_s);  // only the expert layers send tokens to experts
  near(mixed.weights_bytes, moe.weights_bytes + dense8.weights_bytes - dense4.weights_bytes);
  near(mixed.optimizer_bytes, moe.optimizer_bytes + dense8.optimizer_bytes - dense4.optimizer_bytes);
  near(mixed.activation_bytes, moe.activation_bytes + dense8.activation_bytes - dense4.activation_bytes);
  near(mixed.model_flops, moe.model_flops + dense8.model_flops - dense4.model_flops);
}

// With pipeline stages the worst one is timed: the one holding the most expert layers, unless a
// dense layer costs more than an expert layer.
TEST(MixtureOfExperts, TheWorstStageOfAMixtureWithDenseLayers) {
  auto run = [](int32_t first_dense, int32_t dense_ffn, bool experts) {
    Config c = moe_cluster(4);
    c.work.dp = 4;
    c.work.pp = 2;
    c.model.first_dense_layers = first_dense;
    c.model.dense_ffn = dense_ffn;
    if (!experts) {  // every layer the dense one
      c.model.experts = 0;
      c.model.top_k = 1;
      c.model.ffn = dense_ffn;
      c.model.dense_ffn = 0;
      c.work.ep = 1;
    }
    const Result r = evaluate(c);
    EXPECT_EQ(r.reason, Reason::Ok) << first_dense << " " << dense_ffn << experts;
    return r;
  };
  // Layers 0-1 dense: stage 0 holds 2 dense and 2 expert layers, stage 1 4 expert layers.
  // Dense layers as wide as one expert cost less than an expert layer (top-2, the all-to-all):
  // stage 1 is the worst, as in the model without dense layers, to the last bit.
  const Result all_moe = run(0, 0, true), light = run(2, 14336, true);
  EXPECT_EQ(light.time_s, all_moe.time_s);
  EXPECT_EQ(light.forward_s, all_moe.forward_s);
  EXPECT_EQ(light.memory_bytes, all_moe.memory_bytes);
  // Dense layers 8 experts wide cost more: stage 0 is the worst, for time and memory, its 2
  // expert and 2 dense layers half of each model's 4.
  const Result heavy = run(2, 8 * 14336, true), dense = run(0, 8 * 14336, false);
  auto near = [](double got, double want) { EXPECT_NEAR(got, want, 1e-12 * want); };
  near(heavy.forward_s, (all_moe.forward_s + dense.forward_s) / 2);
  near(heavy.ep_comm_s, all_moe.ep_comm_s / 2);
  near(heavy.weights_bytes, (all_moe.weights_bytes + dense.weights_bytes) / 2);
  near(heavy.activation_bytes, (all_moe.activation_bytes + dense.activation_bytes) / 2);
}

TEST(MixtureOfExperts, DenseLayersOfAMixtureOnly) {
  // The placement fields belong to a mixture, need an expert layer, and the dense MLP splits over tp.
  const std::pair<void (*)(Config&), Reason> cases[] = {
      {[](Config& c) { c.model.moe_layer_step = 0; }, Reason::InvalidInput},
      {[](Config& c) { c.model.first_dense_layers = -1; }, Reason::InvalidInput},
      {[](Config& c) { c.model.first_dense_layers = 8; }, Reason::InvalidInput},  // no expert layer left
      {[](Config& c) { c.model.moe_layer_step = 9; }, Reason::InvalidInput},
      {[](Config& c) { c.model.experts = 0; c.work.ep = 1; c.model.moe_layer_step = 2; }, Reason::InvalidInput},
      {[](Config& c) { c.model.experts = 0; c.work.ep = 1; c.model.dense_ffn = 8192; }, Reason::InvalidInput},
      {[](Config& c) { c.model.moe_layer_step = 2; c.model.dense_ffn = 8190; }, Reason::HeadsNotDivisible},
      {[](Config& c) { c.model.dense_ffn = 8190; }, Reason::Ok},  // no dense layer to split
      {[](Config& c) { c.model.first_dense_layers = 7; }, Reason::Ok},
      {[](Config& c) { c.model.moe_layer_step = 8; }, Reason::Ok},
  };
  for (const auto& [edit, want] : cases) {
    Config c = moe_cluster(2);
    edit(c);
    EXPECT_EQ(evaluate(c).reason, want) << c.model.first_dense_layers << " " << c.model.moe_layer_step;
  }
}

// Multi-head latent attention (DeepSeek-V2 / V3): kernels/model.hpp mla.
ModelSpec deepseek_v3() {
  ModelSpec m{61, 7168, 2048, 128, 128, 4096, 129280, Mlp::SwiGLU, 2, false, false, 256, 8};
  m.shared_experts = 1;
  m.head_dim = 128;
  m.first_dense_layers = 3;
  m.dense_ffn = 18432;
  m.kv_lora_rank = 512;
  m.q_lora_rank = 1536;
  m.rope_head_dim = 64;
  m.v_head_dim = 128;
  return m;
}

TEST(MultiHeadLatentAttention, DeepSeekV3ParametersByHand) {
  // Attention: queries 7168 x 1536 = 11,010,048 down and 1536 x 128 x (128 + 64) = 37,748,736
  // up; keys and values 7168 x (512 + 64) = 4,128,768 down and 512 x 128 x (128 + 128) =
  // 16,777,216 up; output 128 x 128 x 7168 = 117,440,512: 187,105,280, with the latents' norms
  // (1536 + 512) and the layer's (2 x 7168) 187,121,664.
  const ModelSpec m = deepseek_v3();
  EXPECT_EQ(mla_matmul_params(m), 187105280.0);
  // A dense layer: 3 x 7168 x 18432 = 396,361,728 more; an expert layer 257 experts of
  // 3 x 7168 x 2048 = 44,040,192 and a router of 7168 x 256: 11,507,286,016.
  EXPECT_EQ(layer_params(dense_layer_model(m)), 187121664.0 + 396361728.0);
  EXPECT_EQ(layer_params(m), 187121664.0 + 257 * 44040192.0 + 7168 * 256.0);
  // 58 expert layers, 3 dense, 2 x 129280 x 7168 of embeddings: 671,026,397,184 (671 B); active,
  // all but 248 experts of each expert layer: 37,552,275,456 (37 B).
  EXPECT_EQ(model_params(m), 58 * 11507286016.0 + 3 * 583483392.0 + 2 * 129280.0 * 7168);
  EXPECT_EQ(active_params(m), 671026397184.0 - 58 * 248 * 44040192.0);
  // FLOPs of a dense layer: every projection once a token, scores over 192 and values 128 wide
  // a head.
  const double s = 4096;
  ModelSpec d = dense_layer_model(m);
  d.layers = 1;
  d.first_dense_layers = 0;
  const double want = 2 * s * 187105280.0 + 2 * 3 * s * 7168 * 18432.0 + 2 * s * s * 128 * (192 + 128) +
                      2 * s * 7168 * 129280.0;
  EXPECT_NEAR(forward_flops_per_sequence(d, s, s, s), want, 1e-12 * want);
}

// A dense MLA model (GPT-3 175B's shape, heads 128 wide) on the test cluster: tp 8, pp 8.
Config mla_cluster() {
  Config c = test::gpt175b_cluster();
  c.model.biases = false;
  c.model.kv_lora_rank = 512;
  c.model.q_lora_rank = 1536;
  c.model.rope_head_dim = 64;
  return c;
}

TEST(MultiHeadLatentAttention, TpRanksHoldTheDownProjectionsAndTheLatentCacheWhole) {
  Config c = mla_cluster();
  const ModelSpec& m = c.model;
  // Down-projections 12288 x 1536 + 1536 and 12288 x 576 + 512: 25,954,304, whole on each of the
  // 8 ranks; the rest of a layer split 8 ways. 12 layers a stage, the embedding V h / t.
  const double down = 12288.0 * 1536 + 1536 + 12288.0 * 576 + 512;
  const double rest = layer_params(m) - down;
  const RankParams p = stage_params_per_rank(m, c.work, stage_mix(m, c.work, false));
  EXPECT_NEAR(p.dense, 12 * (rest / 8 + down) + 51200.0 * 12288 / 8, 1e-6);
  // A decode step's cache: every resident sequence's kv_len + 1 tokens, 512 + 64 values each a
  // layer, in 2 bytes, whole on every TP rank (a head's keys and values would be 2 x 128 / tp).
  c.work.mode = Mode::Decode;
  c.work.kv_len = 1024;
  c.work.micro_batch = 8;
  c.work.global_batch = 64;
  const Result r = evaluate(c);
  ASSERT_EQ(r.reason, Reason::Ok);
  EXPECT_EQ(r.kv_cache_bytes, 64.0 * 1025 * 12 * 2 * 576);
  c.work.tp = 4;
  c.work.dp = 2;
  c.work.global_batch = 128;  // the same 64 sequences a replica
  EXPECT_EQ(evaluate(c).kv_cache_bytes, 64.0 * 1025 * 12 * 2 * 576);
}

TEST(MultiHeadLatentAttention, TensorParallelismMovesTheLatentsIntoAttention) {
  // The down-projections are whole on every TP rank, so the attention's input side gathers (and
  // in backward reduce-scatters) the latents and the RoPE key, 1536 + 512 + 64 = 2,112 values a
  // token, where the usual layer gathers its input, 12,288. With no latency every collective's
  // time is its bytes over the bandwidth, an all-reduce twice a gather's: per layer and
  // micro-batch, in units of a 12,288-wide gather or reduce-scatter,
  //   sequence parallel, usual: forward 2 x (ag + rs), backward 2 x (ag + rs + ag): 10;
  //     MLA: forward ag(latent) + rs + (ag + rs), backward ag + rs(latent) + ag(latent)
  //     + (ag + rs + ag): 7 + 3 x 2112 / 12288;
  //   no sequence parallelism, usual: 2 all-reduces a pass: 8; MLA: forward 2 all-reduces,
  //     backward one of the latents and one of the MLP's: 6 + 2 x 2112 / 12288.
  Config mla = mla_cluster();
  mla.net.dim[0].latency_ns = 0;
  mla.net.endpoint_delay_ns = 0;
  Config usual = mla;
  usual.model.kv_lora_rank = usual.model.q_lora_rank = usual.model.rope_head_dim = 0;
  Groups g;
  ASSERT_EQ(place_groups(mla.net, mla.work, g.span), Reason::Ok);
  const double T = 2048, w = 2112.0 / 12288;
  auto per_layer = [&](const Config& c) {
    const LayerComm lc = layer_comm(c, c.model, g, T, 64);
    return lc.tp_fwd_s + lc.tp_bwd_s;
  };
  for (const bool sp : {true, false}) {
    mla.work.seq_parallel = usual.work.seq_parallel = sp;
    ASSERT_GT(per_layer(usual), 0);
    EXPECT_NEAR(per_layer(mla) / per_layer(usual), sp ? (7 + 3 * w) / 10 : (6 + 2 * w) / 8, 1e-12) << sp;
  }
  // Without a query latent the queries need the layer's input: the usual traffic.
  mla.model.q_lora_rank = 0;
  EXPECT_EQ(per_layer(mla), per_layer(usual));
}

TEST(MultiHeadLatentAttention, ADecodeStepAttendsInTheLatent) {
  // Absorbed, a decode step's attention reads the cached latent once for the rank's heads; the
  // keys and values up-projected (as training and prefill do) would be 12 heads x 256 values a
  // token: so the MLA model's decode step takes less time than its own prefill-style attention
  // would at a long context, and grows with the context by about the cache's read.
  Config c = mla_cluster();
  c.work.mode = Mode::Decode;
  c.work.micro_batch = 8;
  c.work.global_batch = 64;
  c.work.seq_parallel = false;
  auto fwd = [&](int32_t kv_len) {
    c.work.kv_len = kv_len;
    const Result r = evaluate(c);
    EXPECT_EQ(r.reason, Reason::Ok);
    return r.forward_s;
  };
  // 8 sequences x 1024 tokens x 576 values x 2 bytes more a layer, 12 layers, 8 micro-batches:
  // at 2,039 GB/s (the ideal machine's mem_eff 1) when memory-bound. 2 x 12 heads x (1024 + 64)
  // FLOPs a byte read (24 x 1088 / (2 x 576) = 22.7) is below the machine balance
  // (312e12 / 2039e9 = 153): memory-bound.
  const double more = fwd(2048) - fwd(1024);
  EXPECT_NEAR(more, 8 * 12 * 8 * 1024.0 * 576 * 2 / 2039e9, 0.02 * more);
}

TEST(MultiHeadLatentAttention, InvalidWithoutItsShape) {
  const std::pair<void (*)(Config&), Reason> cases[] = {
      {[](Config& c) { c.model.kv_heads = 8; }, Reason::InvalidInput},  // every head its own keys
      {[](Config& c) { c.model.biases = true; }, Reason::InvalidInput},
      {[](Config& c) { c.model.kv_lora_rank = 0; }, Reason::InvalidInput},  // its widths without it
      {[](Config& c) { c.model.q_lora_rank = 0; }, Reason::Ok},              // queries from the input
      {[](Config& c) { c.model.v_head_dim = 64; }, Reason::Ok},
  };
  for (const auto& [edit, want] : cases) {
    Config c = mla_cluster();
    edit(c);
    EXPECT_EQ(evaluate(c).reason, want);
  }
}

TEST(Cost, LibraStudySystems) {
  // shared/reference/cosmic-study.md §4: System 1 = 768,000 + 716,800 + 614,400 + 6,676,480 = $8,775,680.
  using test::dim;
  Network s1;
  s1.ndims = 4;
  s1.dim[0] = dim(Topology::Ring, 4, 187.5, 20);
  s1.dim[1] = dim(Topology::FullyConnected, 8, 25, 700);
  s1.dim[2] = dim(Topology::Ring, 4, 75, 700);
  s1.dim[3] = dim(Topology::Switch, 8, 100, 1700);
  bool ok = false;
  EXPECT_NEAR(network_cost_usd(s1, ok), 8775680.0, 1e-6);
  EXPECT_TRUE(ok);
  // One dimension = node tier: a 16-NPU Switch at 10 GB/s: 2 x 16 x 4.0 x 10 + 16 x 13 x 10 = $3,360.
  Network one;
  one.ndims = 1;
  one.dim[0] = dim(Topology::Switch, 16, 10, 100);
  EXPECT_NEAR(network_cost_usd(one, ok), 3360.0, 1e-9);
  // A dimension of one NPU has no links and no switch ports (a one-node DGX preset's InfiniBand
  // dimension, say): it costs nothing, whatever its topology, and a Switch there needs no price.
  Network node;
  node.ndims = 2;
  node.dim[0] = dim(Topology::Switch, 16, 10, 100);
  for (Topology t : {Topology::Ring, Topology::Switch, Topology::FullyConnected}) {
    node.dim[1] = dim(t, 1, 50, 2000);
    EXPECT_NEAR(network_cost_usd(node, ok), 3360.0, 1e-9);
    EXPECT_TRUE(ok);
  }
  Network chiplet = s1;  // a Switch of one NPU where the chiplet tier (no switch price) was needs none
  chiplet.dim[0] = dim(Topology::Switch, 1, 187.5, 20);
  network_cost_usd(chiplet, ok);
  EXPECT_TRUE(ok);
}

// A dimension of one NPU takes no tier: a two-tier switched network of 4,096 NPUs (64 x 64 at
// 800 and 100 GB/s per link) costs the same padded with a 1-NPU dimension outside, between or
// inside. By hand: node tier 64 blocks x (2 x 64 x $4 + 64 x $13) x 800 = $68,812,800; pod tier
// 64 x (2 x 64 x $7.8 + 64 x $18 + 64 x $31.6) x 100 = $26,705,920; $95,518,720 in all. (Before
// revision 7 the padding outside made them package and node tiers: $77,414,400, no NICs.)
TEST(Cost, OneNpuDimensionsTakeNoTier) {
  using test::dim;
  Network two;
  two.ndims = 2;
  two.dim[0] = dim(Topology::Switch, 64, 800, 100);
  two.dim[1] = dim(Topology::Switch, 64, 100, 1000);
  bool ok = false;
  EXPECT_EQ(network_cost_usd(two, ok), 95518720.0);
  EXPECT_TRUE(ok);
  for (int32_t at = 0; at <= 2; ++at) {
    Network padded;
    padded.ndims = 3;
    for (int32_t i = 0, k = 0; i < 3; ++i) padded.dim[i] = i == at ? dim(Topology::Ring, 1, 50, 10) : two.dim[k++];
    EXPECT_EQ(network_cost_usd(padded, ok), 95518720.0) << "padding at " << at;
    int tier[kMaxDims];
    dim_tiers(padded, tier);
    EXPECT_EQ(tier[at], -1);
  }
}

// Unit prices of one's own (network.prices) replace LIBRA's per tier. One Ring of 8 at 100 GB/s
// per link (node tier) at $10 per GB/s: 2 x 8 x 10 x 100 = $16,000; a two-tier network priced
// pod {link 1, switch 2, nic 3}: pod Switch of 16 x 8 at 50 GB/s, 8 blocks x (2 x 16 x 1 +
// 16 x 2 + 16 x 3) x 50 = $44,800, plus the node Ring's 16 blocks x $16,000 = $256,000.
TEST(Cost, PricesOfOnesOwn) {
  using test::dim;
  Network one;
  one.ndims = 1;
  one.dim[0] = dim(Topology::Ring, 8, 100, 100);
  one.price[2].link_usd_per_GBps = 10;
  bool ok = false;
  EXPECT_EQ(network_cost_usd(one, ok), 16000.0);
  Network two = one;
  two.ndims = 2;
  two.dim[1] = dim(Topology::Switch, 16, 50, 1000);
  two.price[3] = TierPrice{1, 2, 3};
  EXPECT_EQ(network_cost_usd(two, ok), 44800.0 + 256000.0);
  EXPECT_TRUE(ok);
}

// Whole cents: per-NPU bandwidth divided over a FullyConnected dimension's 7 links and priced
// back gives the cost of the bandwidth as written, exactly (8 x 7 x $4 x 900/7 = $28,800: the
// products give 28800.000000000004), so two points of equal cost compare equal on a front.
TEST(Cost, RoundedToWholeCents) {
  using test::dim;
  Network fc;
  fc.ndims = 1;  // the node tier: $4 per GB/s of link
  fc.dim[0] = dim(Topology::FullyConnected, 8, 900.0 / 7, 500);
  bool ok = false;
  EXPECT_EQ(network_cost_usd(fc, ok), 28800.0);
  fc.dim[0] = dim(Topology::FullyConnected, 8, 0.123456, 500);  // 56 x 4 x 0.123456 = 27.654144
  EXPECT_EQ(network_cost_usd(fc, ok), 27.65);
}

TEST(Model, MoreBandwidthOrComputeNeverSlower) {
  const Config base = test::gpt175b_cluster();
  const double t0 = evaluate(base).time_s;
  Config c = base;
  c.net.dim[1].link_bw_GBps *= 2;
  EXPECT_LT(evaluate(c).time_s, t0);
  c = base;
  c.compute.peak_tflops[1] *= 2;
  EXPECT_LT(evaluate(c).time_s, t0);
  c = base;
  c.work.recompute = Recompute::Full;
  EXPECT_GT(evaluate(c).time_s, t0);
  EXPECT_LT(evaluate(c).activation_bytes, evaluate(base).activation_bytes);
}

}  // namespace
}  // namespace cosmic
