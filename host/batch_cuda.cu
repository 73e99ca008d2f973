// CUDA batch evaluator: one thread scores one configuration with the same model code as the CPU.
//
// Layering as in CUB: CudaEvaluator (here: owns the device buffers) -> launch -> kernel
// (kernels/batch_kernel.cuh) -> per-thread evaluate() (kernels/model.hpp). The kernel receives
// a small trivially-copyable view by value.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "host/backend.hpp"
#include "host/cuda_buffer.hpp"
#include "kernels/batch_kernel.cuh"

namespace cosmic {

namespace {

bool all_physical(const Config* in, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (in[i].net.convention != Convention::Physical) return false;
  return true;
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

struct CudaEvaluator::Buffers {
  CudaBuffer<Config> in;
  CudaBuffer<Result> out;
};

CudaEvaluator::CudaEvaluator(size_t capacity) : capacity_(capacity) {
  if (capacity == 0) throw std::invalid_argument("CudaEvaluator: capacity must be at least 1");
  const CudaDevice dev = cuda_device();
  if (!dev.available) throw std::runtime_error(dev.why);
  d_ = std::make_unique<Buffers>(Buffers{{capacity, "cudaMalloc(configs)"}, {capacity, "cudaMalloc(results)"}});
}

CudaEvaluator::~CudaEvaluator() = default;

void CudaEvaluator::evaluate(const Config* in, Result* out, size_t n) {
  for (size_t done = 0; done < n; done += capacity_) {
    const size_t m = n - done < capacity_ ? n - done : capacity_;
    cuda_check(cudaMemcpy(d_->in.get(), in + done, m * sizeof(Config), cudaMemcpyHostToDevice), "copy configs");
    const int block = 128;
    const unsigned grid = unsigned((m + block - 1) / block);
    const BatchView view{d_->in.get(), d_->out.get(), m};
    if (all_physical(in + done, m))
      evaluate_kernel<Conventions::Physical><<<grid, block>>>(view);
    else
      evaluate_kernel<Conventions::Any><<<grid, block>>>(view);
    cuda_check(cudaGetLastError(), "evaluate_kernel launch");
    cuda_check(cudaDeviceSynchronize(), "evaluate_kernel");  // a fault is named here, not by the next copy
    cuda_check(cudaMemcpy(out + done, d_->out.get(), m * sizeof(Result), cudaMemcpyDeviceToHost), "copy results");
  }
}

}  // namespace cosmic
