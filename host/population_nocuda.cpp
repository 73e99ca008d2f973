// Stand-in for host/population_cuda.cu in builds without CUDA: reports the backend unavailable.
#include <stdexcept>

#include "host/backend.hpp"
#include "host/population.hpp"

namespace cosmic {

std::unique_ptr<PopulationEvaluator> make_cuda_population_evaluator(const SpaceView&, const std::vector<Objective>&) {
  throw std::runtime_error(cuda_device().why);
}

}  // namespace cosmic
