// An agent's state between generations as bytes, for the checkpoints of a search file: a resumed
// search loads the state of its last checkpoint instead of running every generation before it
// again (host/search.cpp). Values are written and read back in the same order; only whole values
// of trivially copyable types without padding, and vectors of them, so that the same state gives
// the same bytes. A reader that runs out of bytes, or has bytes left at the end, throws.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cosmic::agents {

class StateWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_arithmetic_v<T>, "whole values of arithmetic types only (no padding)");
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  template <class T>
  void put(const std::vector<T>& v) {
    static_assert(std::is_arithmetic_v<T>, "vectors of arithmetic types only (no padding)");
    put(uint64_t(v.size()));
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    bytes_.insert(bytes_.end(), p, p + v.size() * sizeof(T));
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

class StateReader {
 public:
  StateReader(const uint8_t* data, size_t size) : at_(data), end_(data + size) {}
  template <class T>
  void get(T& v) {
    static_assert(std::is_arithmetic_v<T>, "whole values of arithmetic types only");
    take(&v, sizeof(T));
  }
  template <class T>
  void get(std::vector<T>& v) {
    uint64_t n = 0;
    get(n);
    if (n > uint64_t(end_ - at_) / sizeof(T)) throw std::runtime_error("agent state: truncated");
    v.resize(size_t(n));
    take(v.data(), size_t(n) * sizeof(T));
  }
  template <class T>
  T get() {
    T v{};
    get(v);
    return v;
  }
  // Every byte read: else the state was written by something else.
  void finish() const {
    if (at_ != end_) throw std::runtime_error("agent state: bytes left over");
  }

 private:
  void take(void* to, size_t n) {
    if (n > size_t(end_ - at_)) throw std::runtime_error("agent state: truncated");
    if (n) std::memcpy(to, at_, n);
    at_ += n;
  }
  const uint8_t* at_;
  const uint8_t* end_;
};

}  // namespace cosmic::agents
