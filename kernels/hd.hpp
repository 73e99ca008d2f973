// Host/device marker for the header-only model.
//
// nvcc needs `__host__ __device__` on every function a kernel calls; g++ (with CCCL 3 headers on
// the include path) rejects those attributes, so the model code uses COSMIC_HD instead.
#pragma once

#if defined(__CUDACC__)
#define COSMIC_HD __host__ __device__
#else
#define COSMIC_HD
#endif

// Keeps a large function out of line on the device only, so that its local arrays occupy one
// stack frame shared by all call sites instead of one copy per inlined call site. Host builds
// (g++ and nvcc's host pass) inline as before. Inlining or not does not change any result:
// the arithmetic is the same, and --fmad=false keeps nvcc from contracting it differently.
#if defined(__CUDA_ARCH__)
#define COSMIC_DEVICE_NOINLINE __noinline__
#else
#define COSMIC_DEVICE_NOINLINE
#endif
