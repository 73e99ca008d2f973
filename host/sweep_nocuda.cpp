// Stand-in for host/sweep_cuda.cu in builds without CUDA: the CUDA sweep is unavailable.
#include <stdexcept>

#include "host/backend.hpp"
#include "host/sweep.hpp"

namespace cosmic {

std::unique_ptr<SweepBackend> make_cuda_sweep_backend(const SweepProblem&) {
  throw std::runtime_error(cuda_device().why);
}

}  // namespace cosmic
