// Memory of the CUDA backends (host/*_cuda.cu) held by owning handles, and CUDA errors turned
// into exceptions. A backend's buffers then free themselves whatever throws, in a constructor
// or later, and a buffer that grows lets the old one go first (the new one may not fit beside it).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace cosmic {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

enum class CudaMemory { Device, Pinned };  // cudaMalloc, or page-locked host memory (cudaMallocHost)

// n elements of T, uninitialised; empty (null) by default. Moves, never copies.
template <class T, CudaMemory kWhere = CudaMemory::Device>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  CudaBuffer(size_t n, const char* what) {
    if (n == 0) return;
    void* p = nullptr;
    cuda_check(kWhere == CudaMemory::Device ? cudaMalloc(&p, n * sizeof(T)) : cudaMallocHost(&p, n * sizeof(T)), what);
    p_ = static_cast<T*>(p);
    n_ = n;
  }
  ~CudaBuffer() {
    if (p_) kWhere == CudaMemory::Device ? cudaFree(p_) : cudaFreeHost(p_);
  }
  CudaBuffer(CudaBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  CudaBuffer& operator=(CudaBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  // Room for at least n elements: where it has less, the old buffer is freed and a new one of
  // `grown` (>= n) elements takes its place (the contents are not kept); a failed allocation
  // leaves it empty.
  void reserve(size_t n, size_t grown, const char* what) {
    if (n <= n_) return;
    *this = CudaBuffer();
    *this = CudaBuffer(grown, what);
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

template <class T>
using PinnedBuffer = CudaBuffer<T, CudaMemory::Pinned>;

}  // namespace cosmic
