// The batch backends run the same model code: each backend's results must equal the scalar
// evaluate() of the same configurations. The CUDA case skips (with the reason) without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "host/backend.hpp"
#include "kernels/model.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

// Random configurations; with `astra`, a third use the ASTRA-sim convention, else none does
// (the CUDA backend then launches the kernel built without the ASTRA-sim flow shop).
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
    c.work.schedule = Schedule(rng() % 3);
    c.work.vpp = c.work.schedule == Schedule::Interleaved ? 2 : 1;
    c.work.seq_parallel = rng() % 2;
    c.work.flash_attention = rng() % 2;
    if (rng() % 4 == 0 && c.work.dp % 2 == 0) {  // context sharding
      c.work.cp = 2;
      c.work.dp /= 2;
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
  // Both backends evaluate in double, and the CUDA build disables FMA contraction
  // (--fmad=false), so results are bit-identical; 1e-12 relative leaves room for libm's last bit.
  EXPECT_NEAR(a.time_s, b.time_s, 1e-12 * b.time_s) << "config " << i;
  EXPECT_NEAR(a.memory_bytes, b.memory_bytes, 1e-12 * b.memory_bytes) << "config " << i;
  EXPECT_NEAR(a.network_cost_usd, b.network_cost_usd, 1e-12 * b.network_cost_usd) << "config " << i;
  EXPECT_NEAR(a.mfu, b.mfu, 1e-12 * b.mfu) << "config " << i;
}

class Backend : public ::testing::TestWithParam<const char*> {};

TEST_P(Backend, MatchesScalarEvaluate) {
  const std::string backend = GetParam();
  CudaDevice dev;
  if (backend == "cuda") {
    dev = cuda_device();
    if (!dev.available) GTEST_SKIP() << "CUDA backend not tested: " << dev.why;
  }
  for (bool astra : {true, false}) {
    const std::vector<Config> in = sample_configs(3000, astra);
    std::vector<Result> out(in.size());
    if (backend == "cuda") {
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

// The model instantiated for the physical convention only (what the CUDA kernels use when no
// configuration of a batch or space asks for ASTRA-sim collectives) gives the same results.
TEST(Model, PhysicalOnlyInstantiationEqualsTheGeneralOne) {
  for (const Config& c : sample_configs(3000, false)) {
    const Result a = evaluate<Conventions::Physical>(c), b = evaluate(c);
    ASSERT_EQ(a.reason, b.reason);
    ASSERT_EQ(a.time_s, b.time_s);
    ASSERT_EQ(a.memory_bytes, b.memory_bytes);
    ASSERT_EQ(a.network_cost_usd, b.network_cost_usd);
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Backend, ::testing::Values("cpu", "cuda"));

}  // namespace
}  // namespace cosmic
