// A design space as the kernels see it: value tables, genome codec (mixed radix, 128-bit
// index), decoding a genome onto a base configuration, constraints and objectives.
//
// A genome is one small integer per gene; gene g takes values[offset_g + genome[g]]. The index
// of a genome is its mixed-radix number, gene 0 least significant:
//   index = sum_g genome[g] * prod_{j<g} card_j.
// Full-stack spaces exceed 2^64 points, so indices are unsigned 128-bit integers.
// SpaceView is trivially copyable: the CUDA backend copies it to constant memory as is.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cost.hpp"
#include "kernels/hd.hpp"
#include "kernels/model.hpp"
#include "kernels/types.hpp"

namespace cosmic {

using u128 = unsigned __int128;

constexpr int kMaxGenes = 48;
constexpr int kMaxValues = 2048;   // all genes' values together
constexpr int kMaxProgram = 192;   // constraint program instructions
constexpr int kMaxConstraints = 16;
constexpr int kMaxDevices = 16;    // NPU types a Device gene chooses from

// What a gene sets. Per-dimension parameters carry the dimension in Gene::dim
// (-1 = the same value for every dimension).
enum class Param : int16_t {
  // workload
  DP = 0, TP, PP, CP, MicroBatch, GlobalBatch, SeqParallel, Schedule, Vpp, Sharding, Recompute, CpStyle, Ep, Etp, EpDispatch, RecomputeLayers,
  // collective
  Policy = 32, Chunks, MultiDim, Algo, AlgoAllReduce, AlgoAllGather, AlgoReduceScatter, AlgoAllToAll,
  // network (per dimension)
  Topology = 64, Npus, LinkBw, NpuBw, Latency,
  // compute
  PeakTflops = 96, MemBw, MemCapacityGB,
  Device,  // an NPU type: its compute figures and calibration at once (SpaceView::device[value])
};

struct Gene {
  Param param = Param::DP;
  int8_t dim = -1;      // network dimension, -1 = all
  int32_t card = 0;     // number of values
  int32_t offset = 0;   // first value in SpaceView::values
};

// Constraint programs: a tiny stack machine over gene values and derived quantities, one
// program per constraint, evaluated per genome on host or device.
enum class Op : int8_t {
  PushConst = 0,   // arg: value
  PushParam,       // arg: Param code, dim: network dimension or -1 (reads the decoded Config)
  PushNpusTotal,   // product of npus over dimensions
  PushNetworkCost, // network_cost_usd (kernels/cost.hpp), USD
  PushNpuBwTotal,  // npu_bandwidth_total: sum over dimensions of per-NPU bandwidth, GB/s
  Add, Sub, Mul, Div,
  Eq, Ne, Lt, Le, Gt, Ge,  // push 1 or 0; when false, by |lhs - rhs| (+ 1 if lhs == rhs): its violation
  And, Or,                 // of two comparisons (or of And / Or results): both hold / either holds
};
struct Instr {
  Op op = Op::PushConst;
  int8_t dim = -1;
  double arg = 0;
};

enum class Objective : int8_t {
  Latency = 0,      // time_s (iteration or request)
  Throughput = 1,   // seconds per token (1 / tokens_per_s), so lower is better
  Memory = 2,       // memory_bytes per NPU
  Cost = 3,         // network_cost_usd
  RuntimeXBw = 4,   // the study's "runtime*bw": time_s x (sum over dims of per-NPU bandwidth GB/s) / 2000
  RuntimeXCost = 5, // the study's "runtime*cost": time_s x network_cost_usd
  FirstToken = 6,   // seconds to the first output token: generate's or serve's, a prefill's time (else time_s)
  PerOutputToken = 7,  // generate's or serve's mean seconds per output token after the first (else time_s)
  Npus = 8,         // the NPUs of the network (the product over dimensions): fewest that do the job
  ClusterCost = 9,  // network_cost_usd + NPUs x compute.price_usd: what the cluster costs to buy
  NpuSPerToken = 10,  // NPU-seconds per token, NPUs / tokens_per_s: the run's NPU-hours per token
  EnergyPerToken = 11,  // joules per token, NPUs x compute.power_W x op.pue / tokens_per_s
  UsdPerToken = 12,     // dollars per token: the cluster's price over its lifetime, and the electricity
};
constexpr int kNumObjectives = 13;
constexpr int kStudyObjectives = 6;  // `objectives: all`: the first six, the study's and the usual ones

// An NPU type of a Device gene: a system's compute figures and calibration (the efficiencies
// fitted to it), which the gene's value sets together.
struct DeviceSpec {
  Compute compute;
  Calibration cal;
};

struct SpaceView {
  Config base;                      // the configuration genes are applied to
  int32_t ngenes = 0;
  Gene gene[kMaxGenes] = {};
  double values[kMaxValues] = {};   // enum values stored as their integer codes
  // Derived parameters.
  // One parallel degree, the Param DP, TP, PP or CP, derived as NPUs / (the other three) when no
  // gene sets it (PSA derived.tp: auto, or dp, pp, cp); -1: none.
  int8_t derived_degree = -1;
  bool algo_follows_topology = false;  // Ring -> ring, FullyConnected -> direct, Switch -> halvingDoubling
  DeviceSpec device[kMaxDevices] = {};  // a Device gene's value k is device[k]
  // Constraints: program k is instrs [prog_start[k], prog_start[k+1]).
  int32_t nconstraints = 0;
  int32_t prog_start[kMaxConstraints + 1] = {};
  Instr prog[kMaxProgram] = {};
  // Limits on results (PSA `limits:`): limit k bounds the value of objective limit_obj[k]
  // (objective_value(), lower is better) from above by limit_max[k] > 0.
  int32_t nlimits = 0;
  Objective limit_obj[kNumObjectives] = {};
  double limit_max[kNumObjectives] = {};
};

// Links per NPU of dimension d (per-link bandwidth = per-NPU bandwidth / links): Ring 2, Switch 1,
// FullyConnected 7 in the study's convention (hard-coded whatever the dimension's size:
// shared/reference/cosmic-study.md §1, right for groups of 8) or npus - 1 with
// `links_per_npu: physical` (a link to every other NPU; at least 1).
COSMIC_HD inline double links_per_npu(const Network& net, int32_t d) {
  const NetDim& n = net.dim[d];
  if (n.topology != Topology::FullyConnected) return n.topology == Topology::Ring ? 2.0 : 1.0;
  return net.links_per_npu == LinkCount::Study ? 7.0 : double(n.npus > 1 ? n.npus - 1 : 1);
}

COSMIC_HD inline u128 space_size(const SpaceView& s) {
  u128 n = 1;
  for (int32_t g = 0; g < s.ngenes; ++g) n *= u128(s.gene[g].card);
  return n;
}

COSMIC_HD inline void unrank(const SpaceView& s, u128 index, int32_t* genome) {
  for (int32_t g = 0; g < s.ngenes; ++g) {
    const u128 c = u128(s.gene[g].card);
    genome[g] = int32_t(index % c);
    index /= c;
  }
}

COSMIC_HD inline u128 rank(const SpaceView& s, const int32_t* genome) {
  u128 index = 0;
  for (int32_t g = s.ngenes - 1; g >= 0; --g) index = index * u128(s.gene[g].card) + u128(genome[g]);
  return index;
}

// Writes one parameter value into a configuration (dim -1: every dimension).
COSMIC_HD inline void set_param(Config& c, Param p, int32_t dim, double v) {
  const int32_t iv = int32_t(v);
  const int32_t d0 = dim < 0 ? 0 : dim, d1 = dim < 0 ? c.net.ndims : dim + 1;
  switch (p) {
    case Param::DP: c.work.dp = iv; break;
    case Param::TP: c.work.tp = iv; break;
    case Param::PP: c.work.pp = iv; break;
    case Param::CP: c.work.cp = iv; break;
    case Param::MicroBatch: c.work.micro_batch = iv; break;
    case Param::GlobalBatch: c.work.global_batch = int64_t(v); break;
    case Param::SeqParallel: c.work.seq_parallel = iv != 0; break;
    case Param::Schedule: c.work.schedule = Schedule(iv); break;
    case Param::Vpp: c.work.vpp = iv; break;
    case Param::Sharding: c.work.sharding = Sharding(iv); break;
    case Param::Recompute: c.work.recompute = Recompute(iv); break;
    case Param::CpStyle: c.work.cp_style = cosmic::CpStyle(iv); break;
    case Param::Ep: c.work.ep = iv; break;
    case Param::Etp: c.work.etp = iv; break;
    case Param::EpDispatch: c.work.ep_dispatch = cosmic::EpDispatch(iv); break;
    case Param::RecomputeLayers: c.work.recompute_layers = iv; break;
    case Param::Policy: c.net.policy = Policy(iv); break;
    case Param::Chunks: c.net.chunks = iv; break;
    case Param::MultiDim: c.net.multidim = MultiDim(iv); break;
    case Param::Algo:
      for (int32_t d = d0; d < d1; ++d)
        for (int k = 0; k < kNumColls; ++k) c.net.dim[d].algo[k] = Algo(iv);
      break;
    case Param::AlgoAllReduce:
    case Param::AlgoAllGather:
    case Param::AlgoReduceScatter:
    case Param::AlgoAllToAll:
      for (int32_t d = d0; d < d1; ++d) c.net.dim[d].algo[int(p) - int(Param::AlgoAllReduce)] = Algo(iv);
      break;
    case Param::Topology: for (int32_t d = d0; d < d1; ++d) c.net.dim[d].topology = Topology(iv); break;
    case Param::Npus: for (int32_t d = d0; d < d1; ++d) c.net.dim[d].npus = iv; break;
    case Param::LinkBw: for (int32_t d = d0; d < d1; ++d) c.net.dim[d].link_bw_GBps = v; break;
    case Param::NpuBw:  // resolved against the topology after all genes are applied
      for (int32_t d = d0; d < d1; ++d) c.net.dim[d].link_bw_GBps = v;
      break;
    case Param::Latency: for (int32_t d = d0; d < d1; ++d) c.net.dim[d].latency_ns = v; break;
    case Param::PeakTflops: c.compute.peak_tflops[peak_index(c.model.dtype_bytes)] = v; break;
    case Param::MemBw: c.compute.mem_bw_GBps = v; break;
    case Param::MemCapacityGB: c.compute.mem_capacity_bytes = v * 1e9; break;
    case Param::Device: break;  // set_gene: it needs the view's table
  }
}

// Writes gene ge's value v into a configuration: set_param, or a Device gene's NPU type.
COSMIC_HD inline void set_gene(const SpaceView& s, Config& c, const Gene& ge, double v) {
  if (ge.param != Param::Device) return set_param(c, ge.param, ge.dim, v);
  c.compute = s.device[int32_t(v)].compute;
  c.cal = s.device[int32_t(v)].cal;
}

// Reads back a parameter from a decoded configuration (for constraints). Per-dim parameters
// with dim -1 read dimension 0.
COSMIC_HD inline double get_param(const Config& c, Param p, int32_t dim) {
  const int32_t d = dim < 0 ? 0 : dim;
  switch (p) {
    case Param::DP: return c.work.dp;
    case Param::TP: return c.work.tp;
    case Param::PP: return c.work.pp;
    case Param::CP: return c.work.cp;
    case Param::MicroBatch: return c.work.micro_batch;
    case Param::GlobalBatch: return double(c.work.global_batch);
    case Param::SeqParallel: return c.work.seq_parallel ? 1 : 0;
    case Param::Schedule: return int(c.work.schedule);
    case Param::Vpp: return c.work.vpp;
    case Param::Sharding: return int(c.work.sharding);
    case Param::Recompute: return int(c.work.recompute);
    case Param::CpStyle: return int(c.work.cp_style);
    case Param::Ep: return c.work.ep;
    case Param::Etp: return c.work.etp;
    case Param::EpDispatch: return int(c.work.ep_dispatch);
    case Param::RecomputeLayers: return c.work.recompute_layers;
    case Param::Policy: return int(c.net.policy);
    case Param::Chunks: return c.net.chunks;
    case Param::MultiDim: return int(c.net.multidim);
    case Param::Algo:
    case Param::AlgoAllReduce: return int(c.net.dim[d].algo[0]);
    case Param::AlgoAllGather: return int(c.net.dim[d].algo[1]);
    case Param::AlgoReduceScatter: return int(c.net.dim[d].algo[2]);
    case Param::AlgoAllToAll: return int(c.net.dim[d].algo[3]);
    case Param::Topology: return int(c.net.dim[d].topology);
    case Param::Npus: return c.net.dim[d].npus;
    case Param::LinkBw: return c.net.dim[d].link_bw_GBps;
    case Param::NpuBw: return c.net.dim[d].link_bw_GBps * links_per_npu(c.net, d);
    case Param::Latency: return c.net.dim[d].latency_ns;
    case Param::PeakTflops: return c.compute.peak_tflops[peak_index(c.model.dtype_bytes)];
    case Param::MemBw: return c.compute.mem_bw_GBps;
    case Param::MemCapacityGB: return c.compute.mem_capacity_bytes / 1e9;
    case Param::Device: break;  // not read by constraints (psa refuses it): they read the figures it sets
  }
  return 0;
}

// A workload's parallel degree p, Param::DP .. Param::CP.
COSMIC_HD inline int32_t degree_of(const Workload& w, int p) {
  const int32_t degree[4] = {w.dp, w.tp, w.pp, w.cp};
  return degree[p];
}

// The derived degree (SpaceView::derived_degree) = NPUs / the product of the other three, when
// the space derives one.
COSMIC_HD inline void derive_degree(const SpaceView& s, Config& c) {
  if (s.derived_degree < 0) return;
  int32_t* degree[4] = {&c.work.dp, &c.work.tp, &c.work.pp, &c.work.cp};  // Param::DP .. Param::CP
  int64_t others = 1;
  for (int k = 0; k < 4; ++k)
    if (k != s.derived_degree) others *= *degree[k];
  const int64_t n = total_npus(c.net);
  // Not a whole number: 0, which evaluate() reports as ProductMismatch; constraints written in
  // the PSA (workload.tp >= 1) normally exclude it first.
  *degree[s.derived_degree] = (others > 0 && n % others == 0) ? int32_t(n / others) : 0;
}

// Applies a genome to `c`, a copy of the base configuration s.base, then the derived
// parameters: decode() in place. CUDA kernels call it on the one Config a thread holds; with
// decode() nvcc kept two per thread in local memory (decode's and the returned copy).
// `c` may also be the decoding of another genome of the space: every field a gene or a derived
// parameter touches is rewritten from the genome (the per-NPU bandwidth is set again before it is
// divided), and no other field is touched, so the result is the same (sweeps walk that way,
// without a 544-byte copy of s.base per point).
COSMIC_HD inline void apply_genome(const SpaceView& s, const int32_t* genome, Config& c) {
  bool npu_bw[kMaxDims] = {false, false, false, false, false, false, false, false};
  for (int32_t g = 0; g < s.ngenes; ++g) {
    const Gene& ge = s.gene[g];
    set_gene(s, c, ge, s.values[ge.offset + genome[g]]);
    if (ge.param == Param::NpuBw)
      for (int32_t d = (ge.dim < 0 ? 0 : ge.dim); d < (ge.dim < 0 ? c.net.ndims : ge.dim + 1); ++d) npu_bw[d] = true;
  }
  for (int32_t d = 0; d < c.net.ndims; ++d) {
    if (npu_bw[d]) c.net.dim[d].link_bw_GBps /= links_per_npu(c.net, d);
    if (s.algo_follows_topology) {
      const Topology t = c.net.dim[d].topology;
      const Algo a = t == Topology::Ring ? Algo::Ring : (t == Topology::FullyConnected ? Algo::Direct : Algo::HalvingDoubling);
      for (int k = 0; k < kNumColls; ++k) c.net.dim[d].algo[k] = a;
    }
  }
  derive_degree(s, c);
}

// The decoding of a genome that differs from the one `c` holds the decoding of only in genes
// 0 .. changed: when all of them are below `plain` (psa::plain_genes), only they are set again and
// the derived degree derived again; otherwise apply_genome. Sweeps step through consecutive
// indices this way, where mostly gene 0 alone changes.
COSMIC_HD inline void reapply_genome(const SpaceView& s, const int32_t* genome, Config& c, int32_t changed,
                                     int32_t plain) {
  if (changed >= plain) return apply_genome(s, genome, c);
  for (int32_t g = 0; g <= changed; ++g) {
    const Gene& ge = s.gene[g];
    set_gene(s, c, ge, s.values[ge.offset + genome[g]]);
  }
  derive_degree(s, c);
}

// Applies a genome to the base configuration, then the derived parameters.
COSMIC_HD inline Config decode(const SpaceView& s, const int32_t* genome) {
  Config c = s.base;
  apply_genome(s, genome, c);
  return c;
}

// Sum over dimensions of the per-NPU bandwidth (per-link bandwidth x links per NPU), GB/s: the
// study's "bw", read by the RuntimeXBw objective and the constraint name npu_bandwidth_total.
COSMIC_HD inline double npu_bandwidth_total(const Config& c) {
  double bw = 0;
  for (int32_t d = 0; d < c.net.ndims; ++d) bw += c.net.dim[d].link_bw_GBps * links_per_npu(c.net, d);
  return bw;
}

// Evaluates constraint program k on a decoded configuration. Comparisons take two values within
// 1e-12 of the larger as equal: a per-NPU bandwidth is read back as per-link bandwidth x links
// (29 GB/s on a FullyConnected dimension reads 29.000000000000004), and a budget taken from
// another point's total is a sum. A failed comparison's violation, the measure feasibility rules
// rank by, is |lhs - rhs|, plus 1 when lhs and rhs are equal (a failed !=, < or >), so that it is
// positive; a failed `and` adds its sides', a failed `or` takes the smaller (the nearer way to
// hold). The constraint's is added to `violation`.
COSMIC_HD inline bool constraint_holds(const SpaceView& s, const Config& c, int32_t k, double& violation) {
  double stack[16], vstack[16];  // values, and the violation of each comparison's result
  int sp = 0;
  for (int32_t i = s.prog_start[k]; i < s.prog_start[k + 1]; ++i) {
    const Instr& in = s.prog[i];
    switch (in.op) {
      case Op::PushConst: stack[sp++] = in.arg; break;
      case Op::PushParam: stack[sp++] = get_param(c, Param(int16_t(in.arg)), in.dim); break;
      case Op::PushNpusTotal: stack[sp++] = double(total_npus(c.net)); break;
      case Op::PushNetworkCost: {
        // The dollar figure even where a Switch sits on an unpriced tier: score_config rejects
        // those points (Reason::SwitchNotPriced), since this constraint reads the price.
        bool priced = true;
        stack[sp++] = network_cost_usd(c.net, priced);
        break;
      }
      case Op::PushNpuBwTotal: stack[sp++] = npu_bandwidth_total(c); break;
      case Op::And:
      case Op::Or: {
        --sp;
        const bool a = stack[sp - 1] != 0, b = stack[sp] != 0;
        const double va = vstack[sp - 1], vb = vstack[sp];
        const bool holds = in.op == Op::And ? a && b : a || b;
        vstack[sp - 1] = holds ? 0 : (in.op == Op::And ? va + vb : (va < vb ? va : vb));
        stack[sp - 1] = holds ? 1 : 0;
        break;
      }
      default: {
        const double b = stack[--sp], a = stack[--sp];
        // Equal within 1e-12 of the larger (a == b: infinities too); only comparisons ask. An
        // overflow to infinity is larger than every finite value, not "equal within tolerance"
        // (an infinite tolerance), so diff must be finite (diff - diff == 0: no libm on the GPU).
        const auto equal = [a, b]() {
          const double diff = a - b, abs_a = a < 0 ? -a : a, abs_b = b < 0 ? -b : b;
          const double tol = 1e-12 * (abs_a > abs_b ? abs_a : abs_b);
          return a == b || (diff - diff == 0 && diff <= tol && -diff <= tol);
        };
        const bool same = in.op >= Op::Eq && equal();
        double r = 0;
        bool cmp = true, holds = true;
        switch (in.op) {
          case Op::Add: r = a + b; cmp = false; break;
          case Op::Sub: r = a - b; cmp = false; break;
          case Op::Mul: r = a * b; cmp = false; break;
          case Op::Div: r = b != 0 ? a / b : 0; cmp = false; break;
          case Op::Eq: holds = same; break;
          case Op::Ne: holds = !same; break;
          case Op::Lt: holds = a < b && !same; break;
          case Op::Le: holds = a < b || same; break;
          case Op::Gt: holds = a > b && !same; break;
          case Op::Ge: holds = a > b || same; break;
          default: break;
        }
        double v = 0;
        if (cmp) {
          if (!holds) {  // by how much; an infinity or a NaN (inf - inf) counts as 1e300
            const double by = a > b ? a - b : b - a;
            v = (by <= 1e300 ? by : 1e300) + (same ? 1 : 0);
          }
          r = holds ? 1 : 0;
        }
        vstack[sp] = v;
        stack[sp++] = r;
      }
    }
  }
  // A program ends in a comparison, an and or an or: its truth and violation are on top.
  violation += vstack[0];
  return stack[0] != 0;
}

// Evaluates every constraint. Returns true when all hold; `violation` is the sum over failed
// comparisons (feasibility-rule ranking).
COSMIC_HD inline bool check_constraints(const SpaceView& s, const Config& c, double& violation) {
  violation = 0;
  bool ok = true;
  for (int32_t k = 0; k < s.nconstraints; ++k) ok = constraint_holds(s, c, k, violation) && ok;
  return ok;
}

// The objective value of an evaluated configuration; lower is better.
COSMIC_HD inline double objective_value(Objective o, const Config& c, const Result& r) {
  switch (o) {
    case Objective::Latency: return r.time_s;
    case Objective::Throughput: return r.tokens_per_s > 0 ? 1.0 / r.tokens_per_s : 0.0;
    case Objective::Memory: return r.memory_bytes;
    case Objective::Cost: return r.network_cost_usd;
    case Objective::RuntimeXBw: return r.time_s * npu_bandwidth_total(c) / 2000.0;
    case Objective::RuntimeXCost: return r.time_s * r.network_cost_usd;
    case Objective::FirstToken: return r.first_token_s > 0 ? r.first_token_s : r.time_s;
    case Objective::PerOutputToken:
      return (c.work.mode == Mode::Generate || c.work.mode == Mode::Serve) && r.first_token_s > 0
                 ? (r.time_s - r.first_token_s) / c.work.output_tokens
                 : r.time_s;
    case Objective::Npus: return double(total_npus(c.net));
    case Objective::ClusterCost: return cluster_cost_usd(c, r.network_cost_usd);
    // A training run of T tokens takes T x this / 3600 NPU-hours (times an hourly price: its cost).
    case Objective::NpuSPerToken: return r.tokens_per_s > 0 ? double(total_npus(c.net)) / r.tokens_per_s : 0.0;
    case Objective::EnergyPerToken: return energy_per_token_J(c, r.tokens_per_s);
    case Objective::UsdPerToken: return usd_per_token(c, cluster_cost_usd(c, r.network_cost_usd), r.tokens_per_s);
  }
  return 0;
}

// How far an evaluated configuration is over the space's limits: the sum over the limits it
// exceeds of (value - limit) / limit, the relative excess (as OUT_OF_MEMORY's violation measures
// memory over capacity, kernels/population.hpp); 0 when every limit holds. A value exactly at
// its limit holds.
COSMIC_HD inline double limit_excess(const SpaceView& s, const Config& c, const Result& r) {
  double x = 0;
  for (int32_t k = 0; k < s.nlimits; ++k) {
    const double v = objective_value(s.limit_obj[k], c, r), lim = s.limit_max[k];
    if (v > lim) x += (v - lim) / lim;
  }
  return x;
}

}  // namespace cosmic
