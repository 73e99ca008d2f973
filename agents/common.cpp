#include "agents/common.hpp"

namespace cosmic::agents {

std::vector<size_t> best_indices(const Scores& s, size_t k) {
  std::vector<Standing> f;
  standings(s, f);
  return first_k(f, k);
}

}  // namespace cosmic::agents
