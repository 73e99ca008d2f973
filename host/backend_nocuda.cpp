// Stand-in for host/batch_cuda.cu in builds without CUDA: reports the backend unavailable.
#include <stdexcept>

#include "host/backend.hpp"

namespace cosmic {

CudaDevice cuda_device() {
  CudaDevice d;
  d.why = "cosmic was built without CUDA (no nvcc at configure time, or COSMIC_CUDA=OFF)";
  return d;
}

struct CudaEvaluator::Buffers {};

CudaEvaluator::CudaEvaluator(size_t) { throw std::runtime_error(cuda_device().why); }
CudaEvaluator::~CudaEvaluator() = default;
void CudaEvaluator::evaluate(const Config*, Result*, size_t) { throw std::runtime_error(cuda_device().why); }

}  // namespace cosmic
