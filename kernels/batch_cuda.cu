// CUDA backend: one thread scores one configuration with the same model code as the CPU.
//
// Layering as in CUB: CudaEvaluator (host, owns device buffers) -> launch -> kernel ->
// per-thread evaluate(). The kernel receives a small trivially-copyable view by value.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "host/backend.hpp"
#include "kernels/model.hpp"

namespace cosmic {

namespace {

struct BatchView {
  const Config* in;
  Result* out;
  size_t n;
};

// kConv = Physical leaves the ASTRA-sim flow shop out of the kernel (kernels/collective.hpp);
// the host launches it only for chunks whose configurations all use the Physical convention.
template <Conventions kConv>
__global__ void evaluate_kernel(BatchView v) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < v.n) v.out[i] = evaluate<kConv>(v.in[i]);
}

bool all_physical(const Config* in, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (in[i].net.convention != Convention::Physical) return false;
  return true;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace

CudaDevice cuda_device() {
  CudaDevice d;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    d.why = std::string("no usable CUDA device: ") + cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky error
    return d;
  }
  if (count == 0) {
    d.why = "no CUDA device present";
    return d;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) d.name = prop.name;
  d.available = true;
  return d;
}

CudaEvaluator::CudaEvaluator(size_t capacity) : capacity_(capacity) {
  if (capacity == 0) throw std::invalid_argument("CudaEvaluator: capacity must be at least 1");
  const CudaDevice dev = cuda_device();
  if (!dev.available) throw std::runtime_error(dev.why);
  check(cudaMalloc(&d_in_, capacity * sizeof(Config)), "cudaMalloc(configs)");
  check(cudaMalloc(&d_out_, capacity * sizeof(Result)), "cudaMalloc(results)");
}

CudaEvaluator::~CudaEvaluator() {
  cudaFree(d_in_);
  cudaFree(d_out_);
}

void CudaEvaluator::evaluate(const Config* in, Result* out, size_t n) {
  for (size_t done = 0; done < n; done += capacity_) {
    const size_t m = n - done < capacity_ ? n - done : capacity_;
    check(cudaMemcpy(d_in_, in + done, m * sizeof(Config), cudaMemcpyHostToDevice), "copy configs");
    const int block = 128;
    const unsigned grid = unsigned((m + block - 1) / block);
    const BatchView view{d_in_, d_out_, m};
    if (all_physical(in + done, m))
      evaluate_kernel<Conventions::Physical><<<grid, block>>>(view);
    else
      evaluate_kernel<Conventions::Any><<<grid, block>>>(view);
    check(cudaGetLastError(), "evaluate_kernel launch");
    check(cudaDeviceSynchronize(), "evaluate_kernel");  // a fault is named here, not by the next copy
    check(cudaMemcpy(out + done, d_out_, m * sizeof(Result), cudaMemcpyDeviceToHost), "copy results");
  }
}

}  // namespace cosmic
