#include "agents/common.hpp"

namespace cosmic::agents {

std::vector<size_t> best_indices(const Scores& s, size_t k) {
  std::vector<Standing> f;
  standings(s, f);
  return first_k(s.size, k, [&](size_t a, size_t b) { return stands_before(f.data(), a, b); });
}

}  // namespace cosmic::agents
