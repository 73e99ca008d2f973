// Exhaustive sweeps of a design space with reductions (host/sweep.cpp), in layers as in CUB:
//   driver (this file: batches of the index range, host-side merge of reductions, HDF5 file,
//           progress, signals, resume, shards)
//   -> SweepBackend: CPU (host/sweep_cpu.cpp, OpenMP) or CUDA (host/sweep_cuda.cu)
//   -> per-point code (kernels/sweep.hpp + kernels/space.hpp + kernels/model.hpp).
// Backends see only live segments of the index range (the driver skips regions that violate
// constraints on the most significant genes) and return reductions, never per-point results
// (except with --keep all).
// File layout: docs/results-format.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/sweep.hpp"
#include "psa/space.hpp"

namespace cosmic {

// A run of consecutive indices to sweep.
struct Segment {
  u128 begin = 0;
  uint64_t count = 0;
};

// The segments of a batch with their live offsets and first genomes (kernels/sweep.hpp), as
// sweep_walk_live takes them; the last element's start + its count is the batch's live count.
std::vector<LiveSegment> live_segments(const SpaceView& s, const std::vector<Segment>& segs);

// What a backend returns for one batch of segments.
struct BatchOutput {
  uint64_t reasons[kNumReasons] = {};  // per Reason code, of the points that pass the constraints
  std::vector<uint64_t> hist;          // nobj x kHistBins, feasible points only
  std::vector<SweepPoint> candidates;  // a superset of the batch's points that can enter top-K or the front
  std::vector<SweepRow> rows;          // --keep all: every point that passed the constraints, index order
  void reset(int nobj);
};

// What the host already kept; a backend may drop points it rules out.
struct Pruning {
  bool full[kMaxSweepObjectives] = {};  // top list j holds K points...
  SweepPoint kth[kMaxSweepObjectives];  // ...and this is its K-th (worst kept) point
  std::vector<SweepPoint> front;        // current Pareto front, sorted by (obj[0], index); empty = no front kept
  bool want_front = false;
};

struct SweepProblem {
  const SpaceView* view = nullptr;
  SweepConst k;
  int32_t top_k = 10;
  bool want_front = false;
  bool keep_all = false;
};

class SweepBackend {
 public:
  virtual ~SweepBackend() = default;
  virtual std::string name() const = 0;
  virtual std::string device() const = 0;
  virtual uint64_t min_batch() const = 0;  // live indices per batch to start with
  virtual uint64_t max_batch() const = 0;
  // Sweeps the segments (their total count at most max_batch()). Output is reset first.
  virtual void run(const std::vector<Segment>& segs, const Pruning& prune, BatchOutput& out) = 0;
};

std::unique_ptr<SweepBackend> make_cpu_sweep_backend(const SweepProblem& p);
// Throws std::runtime_error (with the reason) without a usable device or CUDA build.
std::unique_ptr<SweepBackend> make_cuda_sweep_backend(const SweepProblem& p);

// The constants kernels need: objectives, per-constraint lowest gene, histogram edges.
SweepConst make_sweep_const(const SpaceView& s, const std::vector<Objective>& objectives);

// Reductions kept by the host; merging is exact and order-independent (same result for any
// batch sizes, thread counts, shards or backend).
struct SweepState {
  int32_t nobj = 1;
  int32_t top_k = 10;
  bool want_front = false;
  u128 swept = 0;                           // indices covered
  uint64_t reasons[kNumReasons] = {};       // model verdicts of points that pass the constraints
  std::vector<uint64_t> hist;               // nobj x kHistBins
  std::vector<SweepPoint> top[kMaxSweepObjectives];  // best first, at most top_k
  std::vector<SweepPoint> pareto;           // sorted by (obj[0], index)
  bool pareto_truncated = false;

  void init(int32_t nobj_, int32_t top_k_, bool want_front_);
  void add(const BatchOutput& b, u128 swept_);
  void merge(const SweepState& o);
  void add_points(const std::vector<SweepPoint>& pts);
  Pruning pruning() const;
  uint64_t evaluated() const;  // passed the constraints
  uint64_t feasible() const { return reasons[0]; }
};

// The Pareto front keeps at most this many points (exact below it; see docs/results-format.md).
constexpr size_t kMaxParetoPoints = 1 << 16;
// The largest top-K a sweep keeps per objective: the lists are kept sorted and rewritten with
// every batch, so a K in the millions would cost more than the sweep (--keep all keeps every point).
constexpr int32_t kMaxTopK = 1 << 16;

// Live segments from `cursor` towards `end`, skipping runs that violate constraints whose
// lowest gene is >= coarse_gene, until `live_target` indices are collected. Advances cursor.
std::vector<Segment> plan_segments(const SpaceView& s, const SweepConst& k, int32_t coarse_gene, u128& cursor,
                                   u128 end, uint64_t live_target);
int32_t coarse_gene_for(const SpaceView& s, u128 min_stride);
// Indices in one run of the leading workload genes (the product of their cardinalities; 1 when
// gene 0 is not a workload gene or the run exceeds 2^20): the cycle in which a sweep's verdicts
// repeat fastest, used to line up the lanes of a GPU warp (sweep_part_of_thread).
uint64_t sweep_phase_cycle(const SpaceView& s);

// Sweeps [begin, end) with a backend, no file: the reductions (tests, benchmarks).
SweepState sweep_range(const SpaceView& s, const std::vector<Objective>& objectives, SweepBackend& backend,
                       u128 begin, u128 end, int32_t top_k, bool want_front);

struct SweepOptions {
  std::string out;                // HDF5 file
  std::string backend = "auto";   // auto, cpu, cuda
  int32_t top_k = 10;
  std::string keep = "pareto";    // top, pareto, all
  uint64_t shard_i = 0, shard_n = 1;
  uint64_t seed = 0;
  bool resume = false;
  bool fold = true;               // sweep genes no result depends on at one value (psa::foldable_genes)
  bool quiet = false;
  double batch_s = 0.5;           // target seconds per batch (and per file flush)
  double progress_every_s = 10;   // plain progress lines when stderr is not a terminal
};

// The genes a sweep of `space` folds (psa::foldable_genes), by name, as result files record them
// (attribute folded_genes, absent when none).
std::vector<std::string> fold_names(const psa::DesignSpace& space);

// Runs a sweep into opts.out. Returns the exit status: 0 done, 130 / 143 interrupted by
// SIGINT / SIGTERM (file marked incomplete, resumable). Throws on errors.
int run_sweep(const psa::DesignSpace& space, const SweepOptions& opts);

// Merges shard files into one. Returns 0, or 1 with a message on std::cerr.
int merge_sweeps(const std::string& out, const std::vector<std::string>& inputs, bool quiet);


}  // namespace cosmic
