// Batch evaluation backends: the same model (kernels/model.hpp) over many configurations,
// on all CPU cores (OpenMP) or on a CUDA device (one thread per configuration).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/types.hpp"

namespace cosmic {

// Scores n configurations on the CPU with OpenMP (static schedule: results do not depend on the
// thread count, each output is written by exactly one iteration).
void evaluate_batch_cpu(const Config* in, Result* out, size_t n);

struct CudaDevice {
  bool available = false;
  std::string name;  // device name when available
  std::string why;   // why not, otherwise (not built with CUDA, no device, driver error)
};
CudaDevice cuda_device();

// Owns device buffers for batches of up to `capacity` configurations and scores them on the
// GPU. Constructing one without a usable device throws std::runtime_error (see cuda_device()).
class CudaEvaluator {
 public:
  explicit CudaEvaluator(size_t capacity);
  ~CudaEvaluator();
  CudaEvaluator(const CudaEvaluator&) = delete;
  CudaEvaluator& operator=(const CudaEvaluator&) = delete;
  void evaluate(const Config* in, Result* out, size_t n);
  size_t capacity() const { return capacity_; }

 private:
  struct Buffers;  // the device's configurations and results (host/batch_cuda.cu)
  size_t capacity_ = 0;
  std::unique_ptr<Buffers> d_;
};

}  // namespace cosmic
