#include "host/backend.hpp"

#include "kernels/model.hpp"

namespace cosmic {

void evaluate_batch_cpu(const Config* in, Result* out, size_t n) {
  const long long count = (long long)n;
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < count; ++i) out[i] = evaluate(in[i]);
}

}  // namespace cosmic
