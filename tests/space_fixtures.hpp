// Design spaces built in code (no PSA file) for the sweep tests and benchmarks:
// - system1_fullstack(): the COSMIC study's full-stack space on System 1
//   (shared/reference/cosmic-study.md §1-2): DP, PP, SP (cp), weight sharding; policy, chunks,
//   one algorithm per dimension, multi-dim scheduling; topology, NPUs and per-NPU bandwidth per
//   dimension; TP derived. 1.6e14 raw points. Constraints: NPUs over dims = 1024,
//   DP x SP x PP <= NPUs, dimension 1 (index 0) is not a Switch.
// - small_system1(): about 8e4 points of the same system, for brute-force comparisons.
// - with_astra_sim(ds): either of them on the ASTRA-sim collective convention.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/space.hpp"
#include "psa/config.hpp"
#include "psa/space.hpp"

namespace cosmic::test {

class ViewBuilder {
 public:
  explicit ViewBuilder(const Config& base) : v_(std::make_unique<SpaceView>()) { v_->base = base; }
  ViewBuilder& gene(const std::string& name, Param p, int dim, const std::vector<double>& values) {
    Gene& g = v_->gene[v_->ngenes++];
    g.param = p;
    g.dim = int8_t(dim);
    g.card = int32_t(values.size());
    g.offset = nvalues_;
    psa::GeneInfo info;
    info.name = name;
    for (double x : values) {
      v_->values[nvalues_++] = x;
      info.labels.push_back(std::to_string(x));
    }
    genes_.push_back(info);
    return *this;
  }
  // One constraint as a stack program.
  ViewBuilder& constraint(const std::vector<Instr>& prog) {
    for (const Instr& in : prog) v_->prog[v_->prog_start[v_->nconstraints] + (&in - prog.data())] = in;
    v_->prog_start[v_->nconstraints + 1] = v_->prog_start[v_->nconstraints] + int32_t(prog.size());
    v_->nconstraints++;
    return *this;
  }
  psa::DesignSpace build(const std::string& name, std::vector<Objective> objectives) {
    psa::DesignSpace ds;
    ds.name = name;
    ds.text = "# built in code: " + name + "\n";
    ds.view = std::move(v_);
    ds.genes = genes_;
    ds.objectives = std::move(objectives);
    return ds;
  }
  SpaceView& view() { return *v_; }

 private:
  std::unique_ptr<SpaceView> v_;
  std::vector<psa::GeneInfo> genes_;
  int32_t nvalues_ = 0;
};

inline Instr push_param(Param p, int dim = -1) { return Instr{Op::PushParam, int8_t(dim), double(int(p))}; }
inline Instr push_const(double x) { return Instr{Op::PushConst, -1, x}; }
inline Instr op(Op o) { return Instr{o, -1, 0}; }

inline std::vector<double> powers_of_two(int from_exp, int to_exp) {
  std::vector<double> v;
  for (int e = from_exp; e <= to_exp; ++e) v.push_back(double(1 << e));
  return v;
}

// The study's System 1 baseline configuration; `sets` as `cosmic eval --set` (docs/config.md).
inline Config system1_base(const std::vector<std::string>& sets = {}) {
  return psa::load_config(std::string(COSMIC_DATA_DIR) + "/configs/cosmic-system1-baseline.yaml", sets).config;
}

// One of the System 1 spaces here, its base network's collectives on the ASTRA-sim convention
// (`network.convention: astra-sim`, docs/astrasim-mode.md). No gene sets the convention, so
// every point uses it, and the CUDA kernels take their general (Conventions::Any) form.
inline psa::DesignSpace with_astra_sim(psa::DesignSpace ds) {
  ds.view->base = system1_base({"system.network.convention=astra-sim"});
  ds.name += ", ASTRA-sim collectives";
  return ds;
}

inline psa::DesignSpace system1_fullstack() {
  ViewBuilder b(system1_base());
  b.gene("workload.dp", Param::DP, -1, powers_of_two(0, 9))
      .gene("workload.pp", Param::PP, -1, {1, 2, 4})
      .gene("workload.cp", Param::CP, -1, powers_of_two(0, 9))
      .gene("workload.sharding", Param::Sharding, -1, {0, 3})
      .gene("collective.policy", Param::Policy, -1, {0, 1})
      .gene("collective.chunks", Param::Chunks, -1, {2, 4, 8, 16});
  for (int d = 0; d < 4; ++d) b.gene("collective.algorithm." + std::to_string(d), Param::Algo, d, {0, 1, 2, 3});
  b.gene("collective.multidim", Param::MultiDim, -1, {0, 1});
  for (int d = 0; d < 4; ++d) b.gene("network.topology." + std::to_string(d), Param::Topology, d, {0, 1, 2});
  for (int d = 0; d < 4; ++d) b.gene("network.npus." + std::to_string(d), Param::Npus, d, {4, 8, 16});
  std::vector<double> bw;
  for (int x = 50; x <= 500; x += 50) bw.push_back(x);
  for (int d = 0; d < 4; ++d) b.gene("network.bandwidth_per_npu." + std::to_string(d), Param::NpuBw, d, bw);
  b.view().derived_degree = int8_t(Param::TP);
  b.constraint({Instr{Op::PushNpusTotal, -1, 0}, push_const(1024), op(Op::Eq)});
  b.constraint({push_param(Param::DP), push_param(Param::CP), op(Op::Mul), push_param(Param::PP), op(Op::Mul),
                Instr{Op::PushNpusTotal, -1, 0}, op(Op::Le)});
  b.constraint({push_param(Param::Topology, 0), push_const(double(int(Topology::Switch))), op(Op::Ne)});
  return b.build("system1-fullstack (built in code)", {Objective::RuntimeXBw, Objective::RuntimeXCost});
}

// 7 x 3 x 4 x 2 x 2 x 4 x 2 x 10 x 3 = 80,640 points; constraints on low, middle and top genes.
inline psa::DesignSpace small_system1(std::vector<Objective> objectives = {Objective::Latency, Objective::Cost}) {
  ViewBuilder b(system1_base());
  std::vector<double> bw;
  for (int x = 50; x <= 500; x += 50) bw.push_back(x);
  b.gene("workload.dp", Param::DP, -1, powers_of_two(0, 6))
      .gene("workload.pp", Param::PP, -1, {1, 2, 4})
      .gene("workload.cp", Param::CP, -1, powers_of_two(0, 3))
      .gene("workload.sharding", Param::Sharding, -1, {0, 3})
      .gene("collective.policy", Param::Policy, -1, {0, 1})
      .gene("collective.chunks", Param::Chunks, -1, {2, 4, 8, 16})
      .gene("collective.multidim", Param::MultiDim, -1, {0, 1})
      .gene("network.bandwidth_per_npu.3", Param::NpuBw, 3, bw)
      .gene("network.topology.2", Param::Topology, 2, {0, 1, 2});
  b.view().derived_degree = int8_t(Param::TP);
  b.constraint({push_param(Param::DP), push_param(Param::CP), op(Op::Mul), push_param(Param::PP), op(Op::Mul),
                Instr{Op::PushNpusTotal, -1, 0}, op(Op::Le)});
  b.constraint({push_param(Param::NpuBw, 3), push_const(100), op(Op::Ge)});
  b.constraint({push_param(Param::Topology, 2), push_const(double(int(Topology::Switch))), op(Op::Ne)});
  return b.build("small-system1 (built in code)", std::move(objectives));
}

// The first index of a region of a full-stack space where its top-gene constraints hold: NPUs
// 4 x 8 x 4 x 8 over the dimensions, dimension 0 a Ring (every other gene at its first value),
// per-NPU bandwidths at their middle value. The live slice of bench/bench_sweep.cpp and
// bench/warp_emulation.cpp.
inline u128 live_region_start(const SpaceView& s) {
  int32_t g[kMaxGenes] = {};
  for (int32_t i = 0; i < s.ngenes; ++i) {
    if (s.gene[i].param == Param::Npus) g[i] = (s.gene[i].dim == 1 || s.gene[i].dim == 3) ? 1 : 0;
    if (s.gene[i].param == Param::NpuBw) g[i] = s.gene[i].card / 2;
  }
  return rank(s, g);
}

}  // namespace cosmic::test
