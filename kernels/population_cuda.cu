// CUDA population evaluator: the SpaceView and the objectives live in __constant__ memory
// (uploaded before each launch, ~20 KB), one thread scores one individual with the same code as
// the CPU (kernels/population.hpp).
//
// Per population, everything crosses PCIe once, through pinned host buffers on one stream: the
// genes go up narrowed to uint16_t (half the agents' int32; kMaxValues bounds every gene's
// values), and the doubles (objectives, violation, metrics) come back in one copy and the reasons
// in another, then one synchronisation. Narrowing and the copies out of the pinned buffers run
// on the OpenMP threads (host/population.cpp). Before: four synchronous copies from and to
// pageable memory, int32 genes.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "host/backend.hpp"
#include "host/population.hpp"
#include "kernels/population.hpp"

namespace cosmic {

namespace {

static_assert(kMaxValues <= 65536, "genes are uploaded as uint16_t");

// One copy per process, written on each evaluator's own stream before its launch: two CUDA
// population evaluators scoring at once from different threads would read each other's space.
// A search has one; `cosmic study --jobs` runs its searches as separate processes.
__constant__ SpaceView c_view;
__constant__ PopObjectives c_obj;

struct PopBuffers {
  const uint16_t* genes;
  size_t n;
  double* obj;        // nobj x n
  double* violation;  // n
  double* metrics;    // kPopMetrics x n
  int32_t* reason;    // n
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
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaPopulationEvaluator() override {
    release();
    cudaStreamDestroy(stream_);
  }
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }

 private:
  // Doubles per individual in the output buffers: objectives, violation, metrics.
  size_t doubles_per_individual() const { return size_t(obj_.n) + 1 + size_t(kPopMetrics); }

  void score(const agents::Population& pop, agents::Scores& scores, PopulationMetrics& m) override {
    const size_t n = pop.size, genes = size_t(pop.ngenes) * n, nobj = size_t(obj_.n);
    // Work an earlier call queued may still run if that call threw before its synchronisation;
    // the pinned buffers are rewritten below.
    check(cudaStreamSynchronize(stream_), "population_kernel (earlier call)");
    reserve(n, size_t(pop.ngenes));
    narrow_genes(pop, h_genes_);
    check(cudaMemcpyToSymbolAsync(c_view, view_.get(), sizeof(SpaceView), 0, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyToSymbol(view)");
    check(cudaMemcpyToSymbolAsync(c_obj, &obj_, sizeof(PopObjectives), 0, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyToSymbol(objectives)");
    check(cudaMemcpyAsync(d_genes_, h_genes_, genes * sizeof(uint16_t), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpy(genes)");
    // Outputs with stride n: objectives, then the violation, then the metrics.
    const PopBuffers b{d_genes_, n, d_out_, d_out_ + nobj * n, d_out_ + (nobj + 1) * n, d_reason_};
    const int threads = 128;
    const unsigned grid = unsigned((n + threads - 1) / threads);
    if (view_->base.net.convention == Convention::Physical)
      population_kernel<Conventions::Physical><<<grid, threads, 0, stream_>>>(b);
    else
      population_kernel<Conventions::Any><<<grid, threads, 0, stream_>>>(b);
    check(cudaGetLastError(), "population_kernel launch");
    check(cudaMemcpyAsync(h_out_, d_out_, doubles_per_individual() * n * sizeof(double), cudaMemcpyDeviceToHost,
                          stream_),
          "cudaMemcpy(outputs)");
    check(cudaMemcpyAsync(h_reason_, d_reason_, n * sizeof(int32_t), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy(reasons)");
    check(cudaStreamSynchronize(stream_), "population_kernel");
    copy_parallel(h_out_, scores.obj.data(), nobj * n * sizeof(double));
    copy_parallel(h_out_ + nobj * n, scores.violation.data(), n * sizeof(double));
    copy_parallel(h_out_ + (nobj + 1) * n, m.col.data(), size_t(kPopMetrics) * n * sizeof(double));
    copy_parallel(h_reason_, scores.reason.data(), n * sizeof(int32_t));
  }

  void reserve(size_t n, size_t ngenes) {
    if (n <= cap_ && ngenes <= cap_genes_) return;
    release();
    const size_t doubles = doubles_per_individual() * n;
    check(cudaMalloc(&d_genes_, n * ngenes * sizeof(uint16_t)), "cudaMalloc(genes)");
    check(cudaMalloc(&d_out_, doubles * sizeof(double)), "cudaMalloc(outputs)");
    check(cudaMalloc(&d_reason_, n * sizeof(int32_t)), "cudaMalloc(reasons)");
    check(cudaMallocHost(&h_genes_, n * ngenes * sizeof(uint16_t)), "cudaMallocHost(genes)");
    check(cudaMallocHost(&h_out_, doubles * sizeof(double)), "cudaMallocHost(outputs)");
    check(cudaMallocHost(&h_reason_, n * sizeof(int32_t)), "cudaMallocHost(reasons)");
    cap_ = n;
    cap_genes_ = ngenes;
  }
  void release() {
    cudaFree(d_genes_);
    cudaFree(d_out_);
    cudaFree(d_reason_);
    cudaFreeHost(h_genes_);
    cudaFreeHost(h_out_);
    cudaFreeHost(h_reason_);
    d_genes_ = h_genes_ = nullptr;
    d_out_ = h_out_ = nullptr;
    d_reason_ = h_reason_ = nullptr;
    cap_ = cap_genes_ = 0;
  }
  std::string device_;
  cudaStream_t stream_ = nullptr;
  size_t cap_ = 0, cap_genes_ = 0;
  uint16_t *d_genes_ = nullptr, *h_genes_ = nullptr;
  double *d_out_ = nullptr, *h_out_ = nullptr;
  int32_t *d_reason_ = nullptr, *h_reason_ = nullptr;
};

}  // namespace

std::unique_ptr<PopulationEvaluator> make_cuda_population_evaluator(const SpaceView& s,
                                                                    const std::vector<Objective>& objectives) {
  return std::make_unique<CudaPopulationEvaluator>(s, objectives);
}

}  // namespace cosmic
