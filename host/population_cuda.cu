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

#include "host/backend.hpp"
#include "host/cuda_buffer.hpp"
#include "host/population.hpp"
#include "kernels/population_kernel.cuh"

namespace cosmic {

namespace {

class CudaPopulationEvaluator : public PopulationEvaluator {
 public:
  CudaPopulationEvaluator(const SpaceView& s, const std::vector<Objective>& objectives)
      : PopulationEvaluator(s, objectives) {
    const CudaDevice dev = cuda_device();
    if (!dev.available) throw std::runtime_error(dev.why);
    device_ = dev.name;
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  // The work queued on the stream ends before it goes; the buffers (members) go after.
  ~CudaPopulationEvaluator() override {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }

 protected:
  bool breeds() const override { return true; }

  void breed_on_device(const BreedPlan& p, agents::Population& pop) override {
    const size_t n = pop.size, ng = size_t(p.ngenes);
    if (ng > size_t(kMaxGenes)) throw std::invalid_argument("population evaluator: more genes than kMaxGenes");
    cuda_check(cudaStreamSynchronize(stream_), "population_kernel (earlier call)");
    resident_ = nullptr;
    reserve(n, ng);
    // One upload: records, parents' rows, mutation skips' tables, cardinalities (BreedPacking).
    const BreedPacking at(p);
    const size_t child_rows = n * ng * p.gene_bytes;
    grow(d_breed_, h_breed_, at.bytes, "parents");
    grow(d_children_, h_children_, child_rows, "children");
    at.pack(p, h_breed_.get());
    cuda_check(cudaMemcpyAsync(d_breed_.get(), h_breed_.get(), at.bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpy(parents)");
    const int threads = 128;
    const unsigned grid = unsigned((n + threads - 1) / threads);
    const auto launch = [&](auto gene, auto record) {
      using Gene = decltype(gene);
      const auto v = at.view<Gene, decltype(record)>(p, d_breed_.get());
      breed_kernel<<<grid, threads, 0, stream_>>>(v, n, d_genes_.get(), reinterpret_cast<Gene*>(d_children_.get()));
    };
    const auto with_record = [&](auto gene) {
      p.crowded ? launch(gene, agents::Crowded{}) : launch(gene, agents::Standing{});
    };
    p.gene_bytes == 1 ? with_record(uint8_t{}) : with_record(int32_t{});
    cuda_check(cudaGetLastError(), "breed_kernel launch");
    cuda_check(cudaMemcpyAsync(h_genes_.get(), d_genes_.get(), n * ng * sizeof(uint16_t), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy(bred genes)");
    cuda_check(cudaMemcpyAsync(h_children_.get(), d_children_.get(), child_rows, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy(bred rows)");
    cuda_check(cudaStreamSynchronize(stream_), "breed_kernel");
    widen_genes(h_genes_.get(), pop);
    copy_parallel(h_children_.get(), p.children, child_rows);
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
    cuda_check(cudaStreamSynchronize(stream_), "population_kernel (earlier call)");
    reserve(n, size_t(pop.ngenes));  // (forgets resident genes where it allocates again)
    // The genes are on the device already when breed_on_device() made this population.
    const bool resident = resident_ == &pop && resident_genes_ == pop.genes.data() && resident_size_ == n;
    resident_ = nullptr;
    if (!resident) narrow_genes(pop, h_genes_.get());
    cuda_check(cudaMemcpyToSymbolAsync(c_view, view_.get(), sizeof(SpaceView), 0, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyToSymbol(view)");
    cuda_check(cudaMemcpyToSymbolAsync(c_obj, &obj_, sizeof(PopObjectives), 0, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyToSymbol(objectives)");
    if (!resident)
      cuda_check(cudaMemcpyAsync(d_genes_.get(), h_genes_.get(), genes * sizeof(uint16_t), cudaMemcpyHostToDevice, stream_),
            "cudaMemcpy(genes)");
    // Outputs with stride n: objectives, then the violation, then the metrics.
    const PopBuffers b{d_genes_.get(), n, d_out_.get(), d_out_.get() + nobj * n, d_out_.get() + (nobj + 1) * n, d_reason_.get()};
    const int threads = 128;
    const unsigned grid = unsigned((n + threads - 1) / threads);
    if (view_->base.net.convention == Convention::Physical)
      population_kernel<Conventions::Physical><<<grid, threads, 0, stream_>>>(b);
    else
      population_kernel<Conventions::Any><<<grid, threads, 0, stream_>>>(b);
    cuda_check(cudaGetLastError(), "population_kernel launch");
    cuda_check(cudaMemcpyAsync(h_out_.get(), d_out_.get(), doubles_per_individual() * n * sizeof(double), cudaMemcpyDeviceToHost,
                          stream_),
          "cudaMemcpy(outputs)");
    cuda_check(cudaMemcpyAsync(h_reason_.get(), d_reason_.get(), n * sizeof(int32_t), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpy(reasons)");
    cuda_check(cudaStreamSynchronize(stream_), "population_kernel");
    copy_parallel(h_out_.get(), scores.obj.data(), nobj * n * sizeof(double));
    copy_parallel(h_out_.get() + nobj * n, scores.violation.data(), n * sizeof(double));
    copy_parallel(h_out_.get() + (nobj + 1) * n, m.col.data(), size_t(kPopMetrics) * n * sizeof(double));
    copy_parallel(h_reason_.get(), scores.reason.data(), n * sizeof(int32_t));
  }

  // A device buffer and its pinned host twin of at least `bytes` (contents not kept).
  static void grow(CudaBuffer<char>& d, PinnedBuffer<char>& h, size_t bytes, const std::string& what) {
    d.reserve(bytes, bytes, ("cudaMalloc(" + what + ")").c_str());
    h.reserve(bytes, bytes, ("cudaMallocHost(" + what + ")").c_str());
  }
  // Room to score n individuals of `ngenes` genes (forgets the resident genes where it grows).
  void reserve(size_t n, size_t ngenes) {
    if (n <= cap_ && ngenes <= cap_genes_) return;
    resident_ = nullptr;
    cap_ = cap_genes_ = 0;
    // The old buffers go first: the new ones may not fit beside them.
    d_genes_ = {};
    d_out_ = {};
    d_reason_ = {};
    h_genes_ = {};
    h_out_ = {};
    h_reason_ = {};
    const size_t doubles = doubles_per_individual() * n;
    d_genes_ = {n * ngenes, "cudaMalloc(genes)"};
    d_out_ = {doubles, "cudaMalloc(outputs)"};
    d_reason_ = {n, "cudaMalloc(reasons)"};
    h_genes_ = {n * ngenes, "cudaMallocHost(genes)"};
    h_out_ = {doubles, "cudaMallocHost(outputs)"};
    h_reason_ = {n, "cudaMallocHost(reasons)"};
    cap_ = n;
    cap_genes_ = ngenes;
  }
  std::string device_;
  cudaStream_t stream_ = nullptr;
  size_t cap_ = 0, cap_genes_ = 0;  // individuals and genes the scoring buffers hold
  CudaBuffer<uint16_t> d_genes_;
  PinnedBuffer<uint16_t> h_genes_;
  CudaBuffer<double> d_out_;
  PinnedBuffer<double> h_out_;
  CudaBuffer<int32_t> d_reason_;
  PinnedBuffer<int32_t> h_reason_;
  // Breeding: the parents (records, rows, tables) and the children's rows.
  CudaBuffer<char> d_breed_, d_children_;
  PinnedBuffer<char> h_breed_, h_children_;
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
