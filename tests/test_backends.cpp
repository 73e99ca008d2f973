// The batch backends run the same model code: each backend's results must equal the scalar
// evaluate() of the same configurations (the CUDA one skipped, with the reason, without a GPU).
// The CPU backend is evaluate() in an OpenMP loop, so what it can get wrong is where each result
// goes (tested on its own below).
#include <gtest/gtest.h>
#include <omp.h>

#include <random>
#include <string>
#include <vector>

#include "host/backend.hpp"
#include "kernels/model.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

// Random configurations (a quarter of them mixtures of experts, half of those with dense layers
// among the expert layers; a quarter with multi-head latent attention); with `astra`, a third use the
// ASTRA-sim convention, else none does (the CUDA backend then launches the kernel built without
// the ASTRA-sim flow shop).
std::vector<Config> sample_configs(size_t n, bool astra) {
  std::mt19937_64 rng(7);
  std::vector<Config> out(n, test::gpt175b_cluster());
  const int tps[] = {1, 2, 4, 8};
  for (auto& c : out) {
    c.work.tp = tps[rng() % 4];
    c.work.pp = 64 / c.work.tp / (1 << (rng() % 3));
    c.work.dp = 64 / (c.work.tp * c.work.pp);
    c.work.global_batch = 512;
    c.work.micro_batch = 1 << (rng() % 3);
    c.work.sharding = Sharding(rng() % 4);
    c.work.recompute = Recompute(rng() % 3);
    c.work.schedule = Schedule(rng() % 4);  // GPipe, 1F1B, interleaved, DualPipe
    c.work.vpp = c.work.schedule == Schedule::Interleaved ? 2 : 1;
    c.work.seq_parallel = rng() % 2;
    c.work.flash_attention = rng() % 2;
    if (rng() % 4 == 0 && c.work.dp % 2 == 0) {  // context sharding, all-gather or all-to-all
      c.work.cp = 2;
      c.work.dp /= 2;
      c.work.cp_style = CpStyle(rng() % 2);
    }
    if (rng() % 4 == 0) {  // a mixture of experts, its experts split over up to 8 DP ranks
      c.model.experts = 8;
      c.model.top_k = 1 + int(rng() % 2);
      c.work.ep = 1 << (rng() % 4);
      while (c.work.dp % c.work.ep != 0) c.work.ep /= 2;
      c.work.ep_dispatch = EpDispatch(rng() % 2);  // every copy, or once a node
      c.work.overlap_ep_comm = rng() % 2;
      if (rng() % 2 == 0) {  // group-limited routing: a token's experts in 1 of 2 or 2 of 4 groups
        c.model.expert_groups = 2 << (rng() % 2);
        c.model.groups_per_token = c.model.expert_groups / 2;
      }
      if (rng() % 2 == 0) {  // with dense layers: the first 0-2, and every other one
        c.model.first_dense_layers = int(rng() % 3);
        c.model.moe_layer_step = 1 + int(rng() % 2);
        c.model.dense_ffn = 12288 * int(1 + rng() % 8);
      }
    }
    if (rng() % 4 == 0) {  // multi-head latent attention, queries from a latent or not
      c.model.biases = false;
      c.model.kv_lora_rank = 512;
      c.model.q_lora_rank = rng() % 2 ? 1536 : 0;
      c.model.rope_head_dim = 64;
    }
    c.work.mode = Mode(rng() % 4);  // training, prefill, decode, generate
    c.work.kv_len = 1024;
    c.work.output_tokens = 16;
    c.net.convention = astra && rng() % 3 == 0 ? Convention::AstraSim : Convention::Physical;
    c.net.congestion_aware = rng() % 2;
    c.net.multidim = MultiDim(rng() % 2);
    c.net.dim[1].link_bw_GBps = 10.0 * (1 + rng() % 10);
    c.net.chunks = 1 + int(rng() % 8);
  }
  return out;
}

void expect_same(const Result& a, const Result& b, size_t i) {
  ASSERT_EQ(a.reason, b.reason) << "config " << i;
  // Both backends evaluate in double without FMA contraction (--fmad=false on the GPU,
  // -ffp-contract=off on the host), and the model calls no libm function that rounds
  // (astra::log2_int): bit-identical, every figure.
  const struct {
    const char* name;
    double Result::*field;
  } figures[] = {{"time_s", &Result::time_s}, {"forward_s", &Result::forward_s},
                 {"backward_s", &Result::backward_s}, {"recompute_s", &Result::recompute_s},
                 {"optimizer_s", &Result::optimizer_s}, {"tp_comm_s", &Result::tp_comm_s},
                 {"cp_comm_s", &Result::cp_comm_s}, {"dp_comm_s", &Result::dp_comm_s},
                 {"pp_comm_s", &Result::pp_comm_s}, {"bubble_s", &Result::bubble_s},
                 {"ep_comm_s", &Result::ep_comm_s}, {"weights_bytes", &Result::weights_bytes},
                 {"grads_bytes", &Result::grads_bytes}, {"optimizer_bytes", &Result::optimizer_bytes},
                 {"activation_bytes", &Result::activation_bytes}, {"kv_cache_bytes", &Result::kv_cache_bytes},
                 {"memory_bytes", &Result::memory_bytes}, {"network_cost_usd", &Result::network_cost_usd},
                 {"model_flops", &Result::model_flops}, {"tokens_per_s", &Result::tokens_per_s},
                 {"mfu", &Result::mfu}, {"first_token_s", &Result::first_token_s}};
  static_assert(sizeof(figures) / sizeof(figures[0]) * sizeof(double) + sizeof(double) == sizeof(Result),
                "every figure of Result compared");
  for (const auto& f : figures) EXPECT_EQ(a.*(f.field), b.*(f.field)) << "config " << i << ": " << f.name;
}

class Backend : public ::testing::TestWithParam<const char*> {};

TEST_P(Backend, MatchesScalarEvaluate) {
  const bool cuda = std::string(GetParam()) == "cuda";
  const CudaDevice dev = cuda_device();
  if (cuda && !dev.available) GTEST_SKIP() << "CUDA backend not tested: " << dev.why;
  for (bool astra : {true, false}) {
    const std::vector<Config> in = sample_configs(3000, astra);
    std::vector<Result> out(in.size());
    if (cuda) {
      CudaEvaluator eval(1024);  // smaller than the batch: exercises the chunked copy loop
      eval.evaluate(in.data(), out.data(), in.size());
    } else {
      evaluate_batch_cpu(in.data(), out.data(), in.size());
    }
    size_t feasible = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      expect_same(out[i], evaluate(in[i]), i);
      feasible += out[i].reason == Reason::Ok;
    }
    EXPECT_GT(feasible, 0u) << "astra " << astra;
  }
}

// Each result lands at its input's index: 1001 inputs whose times strictly grow with the index
// (global batch 64 (i + 1): i + 1 times the micro-batches), split over 4 threads into static
// chunks of about 250, so a shifted, shuffled or skipped write leaves a wrong or a sentinel
// result somewhere.
TEST(CpuBackend, WritesEachResultAtItsInputsIndex) {
  const size_t n = 1001;
  std::vector<Config> in(n, test::gpt175b_cluster());
  for (size_t i = 0; i < n; ++i) in[i].work.global_batch = int64_t(64 * (i + 1));
  Result sentinel;
  sentinel.reason = Reason::SwitchNotPriced;
  sentinel.time_s = -1;
  std::vector<Result> out(n, sentinel);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(4);
  evaluate_batch_cpu(in.data(), out.data(), n);
  omp_set_num_threads(threads);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i].reason, Reason::Ok) << "index " << i;
    ASSERT_EQ(out[i].time_s, evaluate(in[i]).time_s) << "index " << i;
    if (i > 0) ASSERT_GT(out[i].time_s, out[i - 1].time_s) << "index " << i;
  }
}

// The model instantiated for the physical convention only (what the CUDA kernels use when no
// configuration of a batch or space asks for ASTRA-sim collectives) gives the same results.
TEST(Model, PhysicalOnlyInstantiationEqualsTheGeneralOne) {
  size_t feasible = 0;
  for (const Config& c : sample_configs(3000, false)) {
    const Result a = evaluate<Conventions::Physical>(c), b = evaluate(c);
    ASSERT_EQ(a.reason, b.reason);
    ASSERT_EQ(a.time_s, b.time_s);
    ASSERT_EQ(a.memory_bytes, b.memory_bytes);
    ASSERT_EQ(a.network_cost_usd, b.network_cost_usd);
    feasible += a.reason == Reason::Ok;
  }
  EXPECT_GT(feasible, 300u);  // a tenth or more of the timings compared are of whole evaluations
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Backend, ::testing::Values("cpu", "cuda"));

}  // namespace
}  // namespace cosmic
