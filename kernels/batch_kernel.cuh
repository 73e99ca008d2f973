// The kernel of the CUDA batch evaluator (host/batch_cuda.cu, which owns the buffers and
// launches it): one thread scores one configuration with the CPU's code, evaluate()
// (kernels/model.hpp). For nvcc only; included by that one file.
#pragma once

#include "kernels/model.hpp"

namespace cosmic {

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

}  // namespace cosmic
