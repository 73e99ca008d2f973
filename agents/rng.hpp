// The agents' random numbers: xoshiro256** seeded through splitmix64 (Blackman & Vigna), and
// integer / real draws written out here rather than taken from <random>'s distributions, whose
// results differ between standard libraries. Same seed, same stream, on any platform, and on a
// CUDA device (COSMIC_HD: the device breeds GA's and NSGA-II's children, agents/breed.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/hd.hpp"

namespace cosmic::agents {

// Fowler-Noll-Vo 1a, 64 bits, over n bytes: BO's set of asked genomes, and the search's check
// that a checkpoint is as written.
inline uint64_t fnv1a(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t k = 0; k < n; ++k) h = (h ^ p[k]) * 0x100000001b3ULL;
  return h;
}

// A stream per (seed, generation, individual): individuals can be drawn in parallel and the
// genomes do not depend on the thread count. splitmix64-style mixing of the three words.
COSMIC_HD inline uint64_t stream_seed(uint64_t seed, uint64_t gen, uint64_t i) {
  uint64_t z = seed ^ (gen * 0x9e3779b97f4a7c15ULL) ^ (i * 0xd1b54a32d192ed03ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  Rng() = default;  // all-zero state: assign a seeded Rng before drawing
  COSMIC_HD explicit Rng(uint64_t seed) {
    for (auto& w : s_) {  // splitmix64 expands the seed into the 256-bit state
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  COSMIC_HD uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform integer in [0, n), n >= 1 (Lemire's multiply-shift with rejection: unbiased).
  COSMIC_HD uint64_t below(uint64_t n) {
    uint64_t x = next(), low = x * n;  // the low and high words of the 128-bit product x n
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        x = next();
        low = x * n;
      }
    }
    return mul_high(x, n);
  }
  // Uniform real in [0, 1) with 53 random bits.
  COSMIC_HD double uniform() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  COSMIC_HD static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  COSMIC_HD static uint64_t mul_high(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return uint64_t((unsigned __int128)a * b >> 64);
#endif
  }
  uint64_t s_[4] = {0, 0, 0, 0};
};

}  // namespace cosmic::agents
