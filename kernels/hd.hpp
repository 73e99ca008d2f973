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
