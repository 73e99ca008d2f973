// The CUDA population evaluator's kernels (host/population_cuda.cu owns the buffers and the
// stream, and launches them): population_kernel scores one individual a thread with the CPU's
// code (kernels/population.hpp), breed_kernel makes one child a thread with the CPU's operators
// (agents/breed.hpp). For nvcc only; included by host/population_cuda.cu alone (the
// __constant__ symbols are that file's).
#pragma once

#include "agents/breed.hpp"
#include "kernels/population.hpp"

namespace cosmic {

namespace {

static_assert(kMaxValues <= 65536, "genes are uploaded as uint16_t");

// One copy per process, written on each evaluator's own stream before its launch: two CUDA
// population evaluators scoring at once from different threads would read each other's space.
// A search has one; `cosmic study --jobs` runs its searches as separate processes.
__constant__ SpaceView c_view;
__constant__ PopObjectives c_obj;

struct PopBuffers {
  const uint16_t* genes;
  size_t n;
  double* obj;        // nobj x n
  double* violation;  // n
  double* metrics;    // kPopMetrics x n
  int32_t* reason;    // n
};

// kConv = Physical leaves the ASTRA-sim flow shop out of the kernel (kernels/collective.hpp).
// No gene sets the collective convention, so every individual has the base configuration's.
template <Conventions kConv>
__global__ void population_kernel(PopBuffers b) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < b.n) score_individual<kConv>(c_view, c_obj, b.genes, b.n, i, b.obj, b.violation, b.reason, b.metrics);
}

static_assert(sizeof(agents::Standing) == 16 && sizeof(agents::Crowded) == 16, "BreedPlan's 16-byte records");

// Child i as a row (in local memory), then written gene-major and as a row.
template <class Gene, class Record>
__global__ void breed_kernel(agents::BreedView<Gene, Record> v, size_t n, uint16_t* genes, Gene* rows) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Gene child[kMaxGenes];
  agents::breed_child(v, i, child);
  const size_t ng = size_t(v.ngenes);
  for (size_t g = 0; g < ng; ++g) {
    genes[g * n + i] = uint16_t(child[g]);
    rows[i * ng + g] = child[g];
  }
}

}  // namespace

}  // namespace cosmic
