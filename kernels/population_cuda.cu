// CUDA population evaluator: the SpaceView and the objectives live in __constant__ memory
// (uploaded before each launch, ~20 KB), one thread scores one individual with the same code as
// the CPU (kernels/population.hpp).
//
// Per population, everything crosses PCIe once, through pinned host buffers on one stream: the
// genes go up narrowed to uint16_t (half the agents' int32; kMaxValues bounds every gene's
// values), and the doubles (objectives, violation, metrics) come back in one copy and the reasons
// in another, then one synchronisation. Narrowing and the copies out of the pinned buffers run
// on the OpenMP threads (host/population.cpp). Before: four synchronous copies from and to
// pageable memory, int32 genes.
//
// It also breeds GA's and NSGA-II's children (breed_on_device(), PopulationEvaluator::breed()):
// the parents' rows and tournament records go up in one copy, one thread makes one child with the
// CPU's operators (agents/breed.hpp), and writes it gene-major where the evaluation reads it and
// as a row for the agent; the genes and rows come back in two copies. The next evaluation of that
// population then copies no genes up.
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "agents/breed.hpp"
#include "host/backend.hpp"
#include "host/population.hpp"
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

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

class CudaPopulationEvaluator : public PopulationEvaluator {
 public:
  CudaPopulationEvaluator(const SpaceView& s, const std::vector<Objective>& objectives)
      : PopulationEvaluator(s, objectives) {
    const CudaDevice dev = cuda_device();
    if (!dev.available) throw std::runtime_error(dev.why);
    device_ = dev.name;
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaPopulationEvaluator() override {
    release();
    for (char* d : {d_breed_, d_children_}) cudaFree(d);
    for (char* h : {h_breed_, h_children_}) cudaFreeHost(h);
    cudaStreamDestroy(stream_);
  }
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }

 protected:
  bool breeds() const override { return true; }

  void breed_on_device(const BreedPlan& p, agents::Population& pop) override {
    const size_t n = pop.size, ng = size_t(p.ngenes);
    if (ng > size_t(kMaxGenes)) throw std::invalid_argument("population evaluator: more genes than kMaxGenes");
    check(cudaStreamSynchronize(stream_), "population_kernel (earlier call)");
    resident_ = nullptr;
    reserve(n, ng);
    // One upload: records, parents' rows, mutation skips' tables, cardinalities (BreedPacking).
    const BreedPacking at(p);
    const size_t child_rows = n * ng * p.gene_bytes;
    grow(breed_cap_, at.bytes, d_breed_, h_breed_, "parents");
    grow(children_cap_, child_rows, d_children_, h_children_, "children");
    at.pack(p, h_breed_);
    check(cudaMemcpyAsync(d_breed_, h_breed_, at.bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpy(parents)");
    const int threads = 128;
    const unsigned grid = unsigned((n + threads - 1) / threads);
    const auto launch = [&](auto gene, auto record) {
      using Gene = decltype(gene);
      const auto v = at.view<Gene, decltype(record)>(p, d_breed_);
      breed_kernel<<<grid, threads, 0, stream_>>>(v, n, d_genes_, reinterpret_cast<Gene*>(d_children_));
    };
    const auto with_record = [&](auto gene) {
      p.crowded ? launch(gene, agents::Crowded{}) : launch(gene, agents::Standing{});
    };
    p.gene_bytes == 1 ? with_record(uint8_t{}) : with_record(int32_t{});
    check(cudaGetLastError(), "breed_kernel launch");
    check(cudaMemcpyAsync(h_genes_, d_genes_, n * ng * sizeof(uint16_t), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy(bred genes)");
    check(cudaMemcpyAsync(h_children_, d_children_, child_rows, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy(bred rows)");
    check(cudaStreamSynchronize(stream_), "breed_kernel");
    widen_genes(h_genes_, pop);
    copy_parallel(h_children_, p.children, child_rows);
    resident_ = &pop;
    resident_genes_ = pop.genes.data();
    resident_size_ = n;
  }

 private:
  // Doubles per individual in the output buffers: objectives, violation, metrics.
  size_t doubles_per_individual() const { return size_t(obj_.n) + 1 + size_t(kPopMetrics); }

  void score(const agents::Population& pop, agents::Scores& scores, PopulationMetrics& m) override {
    const size_t n = pop.size, genes = size_t(pop.ngenes) * n, nobj = size_t(obj_.n);
    // Work an earlier call queued may still run if that call threw before its synchronisation;
    // the pinned buffers are rewritten below.
    check(cudaStreamSynchronize(stream_), "population_kernel (earlier call)");
    reserve(n, size_t(pop.ngenes));  // (forgets resident genes where it allocates again)
    // The genes are on the device already when breed_on_device() made this population.
    const bool resident = resident_ == &pop && resident_genes_ == pop.genes.data() && resident_size_ == n;
    resident_ = nullptr;
    if (!resident) narrow_genes(pop, h_genes_);
    check(cudaMemcpyToSymbolAsync(c_view, view_.get(), sizeof(SpaceView), 0, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyToSymbol(view)");
    check(cudaMemcpyToSymbolAsync(c_obj, &obj_, sizeof(PopObjectives), 0, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyToSymbol(objectives)");
    if (!resident)
      check(cudaMemcpyAsync(d_genes_, h_genes_, genes * sizeof(uint16_t), cudaMemcpyHostToDevice, stream_),
            "cudaMemcpy(genes)");
    // Outputs with stride n: objectives, then the violation, then the metrics.
    const PopBuffers b{d_genes_, n, d_out_, d_out_ + nobj * n, d_out_ + (nobj + 1) * n, d_reason_};
    const int threads = 128;
    const unsigned grid = unsigned((n + threads - 1) / threads);
    if (view_->base.net.convention == Convention::Physical)
      population_kernel<Conventions::Physical><<<grid, threads, 0, stream_>>>(b);
    else
      population_kernel<Conventions::Any><<<grid, threads, 0, stream_>>>(b);
    check(cudaGetLastError(), "population_kernel launch");
    check(cudaMemcpyAsync(h_out_, d_out_, doubles_per_individual() * n * sizeof(double), cudaMemcpyDeviceToHost,
                          stream_),
          "cudaMemcpy(outputs)");
    check(cudaMemcpyAsync(h_reason_, d_reason_, n * sizeof(int32_t), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy(reasons)");
    check(cudaStreamSynchronize(stream_), "population_kernel");
    copy_parallel(h_out_, scores.obj.data(), nobj * n * sizeof(double));
    copy_parallel(h_out_ + nobj * n, scores.violation.data(), n * sizeof(double));
    copy_parallel(h_out_ + (nobj + 1) * n, m.col.data(), size_t(kPopMetrics) * n * sizeof(double));
    copy_parallel(h_reason_, scores.reason.data(), n * sizeof(int32_t));
  }

  // A device buffer and its pinned host twin of at least `bytes` (contents not kept).
  void grow(size_t& cap, size_t bytes, char*& d, char*& h, const char* what) {
    if (bytes <= cap) return;
    cudaFree(d);
    cudaFreeHost(h);
    d = h = nullptr;
    cap = 0;
    check(cudaMalloc(&d, bytes), (std::string("cudaMalloc(") + what + ")").c_str());
    check(cudaMallocHost(&h, bytes), (std::string("cudaMallocHost(") + what + ")").c_str());
    cap = bytes;
  }
  void reserve(size_t n, size_t ngenes) {
    if (n <= cap_ && ngenes <= cap_genes_) return;
    release();
    resident_ = nullptr;
    const size_t doubles = doubles_per_individual() * n;
    check(cudaMalloc(&d_genes_, n * ngenes * sizeof(uint16_t)), "cudaMalloc(genes)");
    check(cudaMalloc(&d_out_, doubles * sizeof(double)), "cudaMalloc(outputs)");
    check(cudaMalloc(&d_reason_, n * sizeof(int32_t)), "cudaMalloc(reasons)");
    check(cudaMallocHost(&h_genes_, n * ngenes * sizeof(uint16_t)), "cudaMallocHost(genes)");
    check(cudaMallocHost(&h_out_, doubles * sizeof(double)), "cudaMallocHost(outputs)");
    check(cudaMallocHost(&h_reason_, n * sizeof(int32_t)), "cudaMallocHost(reasons)");
    cap_ = n;
    cap_genes_ = ngenes;
  }
  void release() {
    cudaFree(d_genes_);
    cudaFree(d_out_);
    cudaFree(d_reason_);
    cudaFreeHost(h_genes_);
    cudaFreeHost(h_out_);
    cudaFreeHost(h_reason_);
    d_genes_ = h_genes_ = nullptr;
    d_out_ = h_out_ = nullptr;
    d_reason_ = h_reason_ = nullptr;
    cap_ = cap_genes_ = 0;
  }
  std::string device_;
  cudaStream_t stream_ = nullptr;
  size_t cap_ = 0, cap_genes_ = 0;
  uint16_t *d_genes_ = nullptr, *h_genes_ = nullptr;
  double *d_out_ = nullptr, *h_out_ = nullptr;
  int32_t *d_reason_ = nullptr, *h_reason_ = nullptr;
  // Breeding: the parents (records, rows, tables) and the children's rows.
  size_t breed_cap_ = 0, children_cap_ = 0;
  char *d_breed_ = nullptr, *h_breed_ = nullptr, *d_children_ = nullptr, *h_children_ = nullptr;
  // The population whose genes d_genes_ holds (breed_on_device()), its genes' storage and size.
  const agents::Population* resident_ = nullptr;
  const int32_t* resident_genes_ = nullptr;
  size_t resident_size_ = 0;
};

}  // namespace

std::unique_ptr<PopulationEvaluator> make_cuda_population_evaluator(const SpaceView& s,
                                                                    const std::vector<Objective>& objectives) {
  return std::make_unique<CudaPopulationEvaluator>(s, objectives);
}

}  // namespace cosmic
