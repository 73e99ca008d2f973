// CUDA population evaluator: the SpaceView and the objectives live in __constant__ memory
// (uploaded before each launch, ~20 KB), genomes are uploaded gene-major as the agents store
// them, one thread scores one individual with the same code as the CPU (kernels/population.hpp).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "host/backend.hpp"
#include "host/population.hpp"
#include "kernels/population.hpp"

namespace cosmic {

namespace {

__constant__ SpaceView c_view;
__constant__ PopObjectives c_obj;

struct PopBuffers {
  const int32_t* genes;
  size_t n;
  double* obj;
  double* violation;
  int32_t* reason;
  double* metrics;
};

// kConv = Physical leaves the ASTRA-sim flow shop out of the kernel (kernels/collective.hpp).
// No gene sets the collective convention, so every individual has the base configuration's.
template <Conventions kConv>
__global__ void population_kernel(PopBuffers b) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < b.n) score_individual<kConv>(c_view, c_obj, b.genes, b.n, i, b.obj, b.violation, b.reason, b.metrics);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

class CudaPopulationEvaluator : public PopulationEvaluator {
 public:
  CudaPopulationEvaluator(const SpaceView& s, const std::vector<Objective>& objectives)
      : PopulationEvaluator(s, objectives) {
    const CudaDevice dev = cuda_device();
    if (!dev.available) throw std::runtime_error(dev.why);
    device_ = dev.name;
  }
  ~CudaPopulationEvaluator() override { release(); }
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }

 private:
  void score(const agents::Population& pop, agents::Scores& scores, PopulationMetrics& m) override {
    const size_t n = pop.size;
    reserve(n, size_t(pop.ngenes));
    check(cudaMemcpyToSymbol(c_view, view_.get(), sizeof(SpaceView)), "cudaMemcpyToSymbol(view)");
    check(cudaMemcpyToSymbol(c_obj, &obj_, sizeof(PopObjectives)), "cudaMemcpyToSymbol(objectives)");
    check(cudaMemcpy(d_genes_, pop.genes.data(), pop.genes.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
          "cudaMemcpy(genes)");
    PopBuffers b{d_genes_, n, d_obj_, d_violation_, d_reason_, d_metrics_};
    const int threads = 128;
    const unsigned grid = unsigned((n + threads - 1) / threads);
    if (view_->base.net.convention == Convention::Physical)
      population_kernel<Conventions::Physical><<<grid, threads>>>(b);
    else
      population_kernel<Conventions::Any><<<grid, threads>>>(b);
    check(cudaGetLastError(), "population_kernel launch");
    check(cudaMemcpy(scores.obj.data(), d_obj_, scores.obj.size() * sizeof(double), cudaMemcpyDeviceToHost),
          "cudaMemcpy(objectives)");
    check(cudaMemcpy(scores.violation.data(), d_violation_, n * sizeof(double), cudaMemcpyDeviceToHost),
          "cudaMemcpy(violation)");
    check(cudaMemcpy(scores.reason.data(), d_reason_, n * sizeof(int32_t), cudaMemcpyDeviceToHost),
          "cudaMemcpy(reason)");
    check(cudaMemcpy(m.col.data(), d_metrics_, m.col.size() * sizeof(double), cudaMemcpyDeviceToHost),
          "cudaMemcpy(metrics)");
  }

  void reserve(size_t n, size_t ngenes) {
    if (n <= cap_) return;
    release();
    check(cudaMalloc(&d_genes_, n * ngenes * sizeof(int32_t)), "cudaMalloc(genes)");
    check(cudaMalloc(&d_obj_, n * size_t(obj_.n) * sizeof(double)), "cudaMalloc(objectives)");
    check(cudaMalloc(&d_violation_, n * sizeof(double)), "cudaMalloc(violation)");
    check(cudaMalloc(&d_reason_, n * sizeof(int32_t)), "cudaMalloc(reason)");
    check(cudaMalloc(&d_metrics_, n * size_t(kPopMetrics) * sizeof(double)), "cudaMalloc(metrics)");
    cap_ = n;
  }
  void release() {
    cudaFree(d_genes_);
    cudaFree(d_obj_);
    cudaFree(d_violation_);
    cudaFree(d_reason_);
    cudaFree(d_metrics_);
    d_genes_ = nullptr;
    d_obj_ = d_violation_ = d_metrics_ = nullptr;
    d_reason_ = nullptr;
    cap_ = 0;
  }
  std::string device_;
  size_t cap_ = 0;
  int32_t* d_genes_ = nullptr;
  double* d_obj_ = nullptr;
  double* d_violation_ = nullptr;
  int32_t* d_reason_ = nullptr;
  double* d_metrics_ = nullptr;
};

}  // namespace

std::unique_ptr<PopulationEvaluator> make_cuda_population_evaluator(const SpaceView& s,
                                                                    const std::vector<Objective>& objectives) {
  return std::make_unique<CudaPopulationEvaluator>(s, objectives);
}

}  // namespace cosmic
