// Design-space (PSA) files: the study's counts (shared/reference/cosmic-study.md §1), feasible counts against
// brute force, 128-bit rank / unrank at the edges, and errors that name file, line and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "kernels/model.hpp"
#include "kernels/space.hpp"
#include "psa/config.hpp"
#include "psa/space.hpp"
#include "psa/study.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

std::string write_psa(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// Visits every raw point: unrank, decode, check the constraints.
uint64_t brute_force(const psa::DesignSpace& ds) {
  const SpaceView& v = *ds.view;
  std::vector<int32_t> genome(size_t(v.ngenes) + 1, 0);
  uint64_t count = 0;
  for (u128 i = 0, n = space_size(v); i < n; ++i) {
    unrank(v, i, genome.data());
    double violation = 0;
    if (check_constraints(v, decode(v, genome.data()), violation)) ++count;
  }
  return count;
}

std::string error_of(const std::string& path, const std::vector<std::string>& sets = {}) {
  try {
    psa::load_psa(path, sets);
  } catch (const psa::ConfigError& e) {
    return e.what();
  }
  return "";
}


TEST(Psa, PaperCountSystem1) {
  // 76,859,228,160,000 = 286 x 4,096 x 65,610,000 (shared/reference/cosmic-study.md §1).
  const std::string path = test::data_path("psa/cosmic/paper-count-system1.yaml");
  const psa::DesignSpace ds = psa::load_psa(path);
  const u128 n = psa::feasible_count(ds);
  EXPECT_EQ(psa::with_commas(psa::to_string_u128(n)), "76,859,228,160,000");
  EXPECT_EQ(n, u128(286) * 4096 * 65610000);

  const test::CliRun text = test::run_cli("space " + path);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("76,859,228,160,000"), std::string::npos) << text.out;
  const test::CliRun json = test::run_cli("space " + path + " --json");
  ASSERT_EQ(json.status, 0) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["feasible_count"], "76859228160000");
  EXPECT_DOUBLE_EQ(j["feasible_count_double"].get<double>(), 76859228160000.0);
  EXPECT_EQ(j["genes"].size(), size_t(23));  // 4 workload + 7 collective + 12 network
  // The scheduling policy changes no result: the space holds every result twice.
  EXPECT_NE(text.out.find("no effect:   collective.policy\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("each result appears 2 times"), std::string::npos) << text.out;
  int idle = 0;
  for (const auto& g : j["genes"]) idle += g["no_effect"].get<bool>();
  EXPECT_EQ(idle, 1);
  // One algorithm per collective type and dimension: the 4 all-to-all genes too, 2 x 4^4 = 512.
  const test::CliRun coll = test::run_cli("space " + test::data_path("psa/cosmic/collective-system1.yaml"));
  EXPECT_NE(coll.out.find("each result appears 512 times"), std::string::npos) << coll.out;
  // With Ulysses-style context parallelism the all-to-all algorithm counts; in inference the
  // training-only sharding does not.
  const test::CliRun ulysses = test::run_cli("space " + test::data_path("psa/cosmic/collective-system1.yaml") +
                                             " --set base.workload.cp_style=alltoall");
  EXPECT_NE(ulysses.out.find("no effect:   collective.policy\n"), std::string::npos) << ulysses.out;
  EXPECT_NE(ulysses.out.find("each result appears 2 times"), std::string::npos) << ulysses.out;
  const test::CliRun prefill = test::run_cli("space " + test::data_path("psa/cosmic/workload-system1.yaml") +
                                             " --set base.workload.mode=prefill");
  EXPECT_NE(prefill.out.find("no effect:   workload.sharding\n"), std::string::npos) << prefill.out;
  // A dense model has no experts whose layout etp would fold.
  const test::CliRun etp = test::run_cli("space " + test::data_path("psa/cosmic/workload-system1.yaml") +
                                         " --set 'parameters.workload.etp=[0,1]' --set 'parameters.workload.ep_dispatch=[alltoall,dedup]'");
  EXPECT_NE(etp.out.find("no effect:   workload.etp, workload.ep_dispatch\n"), std::string::npos) << etp.out;
  // Constraints that tie too many points together to count name themselves: 256^4 combinations
  // of four per-dimension NPU counts under one product constraint.
  const test::CliRun tangled = test::run_cli(
      "space " + write_psa("tangled.yaml", "base: " + test::data_path("configs/cosmic-system1-baseline.yaml") +
                                               "\nparameters:\n  network:\n    npus: {range: {min: 1, max: 256}, per_dim: true}\n"
                                               "constraints: [\"product(network.npus) == 1024\"]\nobjectives: [latency]\n"));
  EXPECT_EQ(tangled.status, 1);
  EXPECT_NE(tangled.out.find("tangled.yaml:5:15: key 'constraints.0': cannot count the feasible points exactly: they link network.npus.0, "
                             "network.npus.1, network.npus.2, network.npus.3 into 4,294,967,296 combinations"),
            std::string::npos)
      << tangled.out;
}

// The shipped Llama 3.1 405B configuration is what its comment says: the fastest point of its
// space with Meta's pipeline depth (pp 16) that fits in memory (the least recompute that fits),
// without recompute faster but out of memory in this tool's count, and a faster fit of a
// shallower pipeline that leaves under 1% of the memory free.
TEST(Psa, Llama405bBaseIsItsSpacesFastestFit) {
  const psa::DesignSpace ds = psa::load_psa(test::data_path("psa/dense/llama-405b-h100.yaml"));
  const SpaceView& v = *ds.view;
  std::vector<int32_t> genome(size_t(v.ngenes) + 1, 0);
  double fastest = INFINITY, fastest_any = INFINITY, its_memory = 0;
  for (u128 i = 0, n = space_size(v); i < n; ++i) {
    unrank(v, i, genome.data());
    const Config point = decode(v, genome.data());
    const Result r = evaluate(point);
    if (r.reason != Reason::Ok) continue;
    if (point.work.pp == 16 && r.time_s < fastest) fastest = r.time_s;
    if (r.time_s < fastest_any) {
      fastest_any = r.time_s;
      its_memory = r.memory_bytes / point.compute.mem_capacity_bytes;
    }
  }
  EXPECT_LT(fastest_any, fastest);
  EXPECT_GT(its_memory, 0.99);
  Config c = psa::load_config(test::data_path("configs/llama-3.1-405b-h100.yaml")).config;
  const Result base = evaluate(c);
  ASSERT_EQ(base.reason, Reason::Ok);
  EXPECT_EQ(base.time_s, fastest);
  c.work.recompute = Recompute::None;
  c.work.recompute_layers = 0;
  const Result none = evaluate(c);
  EXPECT_EQ(none.reason, Reason::OutOfMemory);
  EXPECT_LT(none.time_s, base.time_s);
}

// cp_style is a workload gene like the others: enumerated, named in constraints, and with it
// the all-to-all algorithm genes count.
TEST(Psa, ContextParallelStyleIsAGene) {
  const std::string path = write_psa("cpstyle.yaml",
                                     "name: ul\nbase: " + test::data_path("configs/cosmic-system2-baseline.yaml") +
                                         "\nparameters:\n  workload:\n    cp: {pow2: {min: 1, max: 16}}\n"
                                         "    cp_style: [allgather, alltoall]\n"
                                         "  collective:\n    all_to_all_algorithm: {values: [ring, direct], per_dim: true}\n"
                                         "derived: {tp: auto}\nconstraints: [\"workload.cp_style == alltoall\"]\n"
                                         "objectives: [runtime_x_bw]\n");
  const psa::DesignSpace ds = psa::load_psa(path);
  EXPECT_EQ(space_size(*ds.view), u128(5 * 2 * 16));
  EXPECT_EQ(psa::feasible_count(ds), u128(5 * 16));  // half: all-to-all only
  EXPECT_EQ(brute_force(ds), 5u * 16);
  for (size_t g = 0; g < ds.genes.size(); ++g) EXPECT_FALSE(psa::gene_has_no_effect(ds, g)) << ds.genes[g].name;
}

// A compute.device gene chooses an NPU type: a system preset's or file's compute figures and
// calibration at once, on the base's network. A point scores as the base configuration given
// that compute section and calibration by --set, exactly; a file with no network of its own is
// enough; constraints read the figures it sets (A100 80 GiB = 85.9 GB and this file's 96 GB are
// under 100 GB, B200's 179 GiB is not), not the gene; it excludes the figures' own genes.
TEST(Psa, DeviceGeneSetsAnNpuType) {
  const std::string mine = write_psa("my-npu.yaml",
                                     "name: my-npu\ncompute: {peak_tflops: {bf16: 500}, memory_bw_GBps: 3000, memory_GB: 96, "
                                     "price_usd: 20000}\ncalibration: {gemm_eff_max: 0.7, tp_overlap: 0.5}\n");
  const std::string base = test::data_path("configs/mixtral-8x7b-h100.yaml");
  const std::string head = "base: " + base + "\nparameters:\n  workload:\n    tp: [1, 2]\n  compute:\n";
  const std::string devices = "    device: [dgx-a100, dgx-b200, my-npu.yaml]\n";
  const psa::DesignSpace ds = psa::load_psa(write_psa("devices.yaml", head + devices + "objectives: [latency]\n"));
  ASSERT_EQ(ds.genes.size(), 2u);
  EXPECT_EQ(ds.genes[1].labels, (std::vector<std::string>{"dgx-a100", "dgx-b200", "my-npu.yaml"}));
  const psa::LoadedConfig lc = psa::load_config(base);
  const double gib = 1073741824.0, capacity[3] = {80 * gib, 179 * gib, 96e9}, peak[3] = {312, 2250, 500},
               gemm[3] = {0.75, 0.75, 0.7};
  for (int32_t k = 0; k < 3; ++k) {
    const int32_t genome[2] = {1, k};
    const Config c = decode(*ds.view, genome);
    EXPECT_EQ(c.compute.mem_capacity_bytes, capacity[k]) << k;
    EXPECT_EQ(c.compute.peak_tflops[1], peak[k]) << k;
    EXPECT_EQ(c.cal.gemm_eff_max, gemm[k]) << k;
    for (int32_t d = 0; d < c.net.ndims; ++d) EXPECT_EQ(c.net.dim[d].link_bw_GBps, lc.config.net.dim[d].link_bw_GBps);
  }
  const int32_t own[2] = {0, 2};  // tp 1, the base's layout
  const Config by_gene = decode(*ds.view, own);
  const Config by_set = psa::load_config(base, {"system.compute={peak_tflops: {bf16: 500}, memory_bw_GBps: 3000, memory_GB: 96, "
                                                "price_usd: 20000}",
                                                "system.calibration={gemm_eff_max: 0.7, tp_overlap: 0.5}"})
                            .config;
  const Result a = evaluate(by_gene), b = evaluate(by_set);
  ASSERT_EQ(a.reason, Reason::Ok);
  EXPECT_EQ(a.time_s, b.time_s);
  EXPECT_EQ(a.memory_bytes, b.memory_bytes);
  EXPECT_EQ(by_gene.compute.price_usd, 20000);
  // A type without a calibration takes the base's (the H100 preset's: gemm_eff_max 0.75, net_eff
  // 0.8, dp_overlap 0.25), not the ideal machine, which made a GPU of one's own win by its
  // efficiencies alone; `calibration: {}` is the ideal machine.
  write_psa("bare-npu.yaml", "compute: {peak_tflops: {bf16: 500}, memory_bw_GBps: 3000, memory_GB: 96}\n");
  write_psa("ideal-npu.yaml", "compute: {peak_tflops: {bf16: 500}, memory_bw_GBps: 3000, memory_GB: 96}\ncalibration: {}\n");
  const psa::DesignSpace bare =
      psa::load_psa(write_psa("devices-bare.yaml", head + "    device: [bare-npu.yaml, ideal-npu.yaml]\nobjectives: [latency]\n"));
  const int32_t first[2] = {0, 0}, second[2] = {0, 1};
  const Calibration inherited = decode(*bare.view, first).cal, ideal = decode(*bare.view, second).cal;
  EXPECT_EQ(inherited.gemm_eff_max, lc.config.cal.gemm_eff_max);
  EXPECT_EQ(inherited.net_eff, 0.8);
  EXPECT_EQ(inherited.dp_overlap, 0.25);
  EXPECT_EQ(ideal.gemm_eff_max, 1);
  EXPECT_EQ(ideal.net_eff, 1);
  EXPECT_EQ(ideal.dp_overlap, 1);
  // Constraints read the figures; the gene itself is refused, as are the figures' genes beside it.
  EXPECT_EQ(psa::feasible_count(psa::load_psa(write_psa(
                "devices-mem.yaml", head + devices + "constraints: [\"compute.memory_GB >= 100\"]\nobjectives: [latency]\n"))),
            u128(2));
  EXPECT_NE(error_of(write_psa("devices-c.yaml", head + devices + "constraints: [\"compute.device == 1\"]\nobjectives: [latency]\n"))
                .find("'compute.device' is not read by constraints"),
            std::string::npos);
  const std::string both = error_of(write_psa("devices-both.yaml", head + devices + "    memory_GB: [40, 80]\nobjectives: [latency]\n"));
  EXPECT_NE(both.find("devices-both.yaml:7:5: key 'parameters.compute.memory_GB': expected a parameter that is not set by "
                      "compute.device too"),
            std::string::npos)
      << both;
  const std::string unknown = error_of(write_psa("devices-bad.yaml", head + "    device: [dgx-a100, dgx-h1000]\nobjectives: [latency]\n"));
  EXPECT_NE(unknown.find("devices-bad.yaml:6:24: key 'parameters.compute.device.values.1': expected a system preset or file "
                         "for an NPU type: no system preset or file named 'dgx-h1000'"),
            std::string::npos)
      << unknown;
  // An inline system is named; without a name it is an error at its place.
  EXPECT_NE(error_of(write_psa("devices-noname.yaml", head + "    device: [dgx-a100, {preset: dgx-h100}]\nobjectives: [latency]\n"))
                .find("devices-noname.yaml:6:24: key 'parameters.compute.device.values.1': expected a system preset or system "
                      "file, whose compute figures and calibration make the NPU type (inline: a mapping with its name)"),
            std::string::npos);
  // cluster_cost needs every type's price (the presets give none; my-npu.yaml does).
  EXPECT_NE(error_of(write_psa("devices-price.yaml", head + devices + "objectives: [cluster_cost]\n"))
                .find("missing: compute.price_usd of NPU type(s) dgx-a100, dgx-b200 (in each type's system file"),
            std::string::npos);
  EXPECT_EQ(error_of(write_psa("devices-priced.yaml", head + "    device: [my-npu.yaml]\nobjectives: [cluster_cost]\n")), "");
  // Inline, as a result file's recorded space has them: the same NPU types, under the same labels.
  YAML::Node root = YAML::LoadFile(::testing::TempDir() + "devices.yaml");
  psa::inline_devices(root, ds.device_systems);
  YAML::Emitter em;
  em << root;
  const psa::DesignSpace inlined = psa::load_psa(write_psa("devices-inline.yaml", em.c_str()));
  EXPECT_EQ(inlined.genes[1].labels, ds.genes[1].labels);
  EXPECT_EQ(inlined.device_systems, ds.device_systems);
  EXPECT_EQ(evaluate(decode(*inlined.view, own)).time_s, evaluate(by_gene).time_s);
}

// A mixture of experts exchanges tokens by all-to-all only when its experts are split (ep > 1 in
// the base or an ep gene): otherwise the all-to-all algorithm changes no result.
TEST(Psa, AllToAllCountsWithExpertParallelism) {
  auto a2a_idle = [](const std::string& ep_gene, const std::string& base_ep) {
    const std::string path = write_psa("moe-a2a.yaml",
        "base: " + test::data_path("configs/mixtral-8x7b-h100.yaml") +
        "\nparameters:\n  workload:\n    dp: [8, 16]\n" + ep_gene +
        "  collective:\n    all_to_all_algorithm: {values: [ring, direct], per_dim: true}\n"
        "derived: {tp: auto}\nobjectives: latency\n");
    const psa::DesignSpace ds = psa::load_psa(path, {"base.workload.ep=" + base_ep});
    bool idle = true;
    for (size_t g = 0; g < ds.genes.size(); ++g)
      if (ds.genes[g].name.rfind("collective.all_to_all_algorithm", 0) == 0) idle = idle && psa::gene_has_no_effect(ds, g);
    return idle;
  };
  EXPECT_FALSE(a2a_idle("", "8"));
  EXPECT_FALSE(a2a_idle("    ep: [1, 2]\n", "1"));
  EXPECT_TRUE(a2a_idle("", "1"));
}

// A gap row is marked "(other space)" when the agent's space differs from the optimum's: the
// same edits in another order are the same space; a key edited to another final value is not.
TEST(Psa, StudySpacesCompareByTheirFinalEdits) {
  psa::StudyExperiment a, b;
  a.psa = b.psa = test::data_path("psa/cosmic/workload-system1.yaml");
  a.sets = {"base.workload.global_batch=4096", "base.model=LLaMA-7B"};
  b.sets = {"base.model=LLaMA-7B", "base.workload.global_batch=4096"};
  EXPECT_TRUE(psa::same_space(a, b));
  b.sets.push_back("base.workload.global_batch=1024");
  EXPECT_FALSE(psa::same_space(a, b));
  b.sets = a.sets;
  b.budget_of = "full";
  EXPECT_FALSE(psa::same_space(a, b));
}

TEST(Psa, WorkloadOnlyMatchesBruteForce) {
  // 600 raw points (10 x 3 x 10 x 2); 164 / 191 / 136 (DP, PP, SP) triples x 2 shardings.
  const std::pair<int, uint64_t> cases[] = {{1, 164 * 2}, {2, 191 * 2}, {3, 136 * 2}};
  for (const auto& [sys, expect] : cases) {
    const auto ds = psa::load_psa(test::data_path("psa/cosmic/workload-system" + std::to_string(sys) + ".yaml"));
    EXPECT_EQ(space_size(*ds.view), u128(600));
    const uint64_t brute = brute_force(ds);
    EXPECT_EQ(brute, expect) << "system " << sys;
    EXPECT_EQ(psa::feasible_count(ds), u128(brute)) << "system " << sys;
    EXPECT_EQ(ds.view->derived_degree, int(Param::TP));
    ASSERT_EQ(ds.objectives.size(), size_t(1));
    EXPECT_EQ(ds.objectives[0], Objective::RuntimeXBw);
  }
}

TEST(Psa, StudyTupleCounts) {
  const std::pair<int, std::pair<int, int>> cases[] = {{1024, {10, 164}}, {2048, {16, 191}}, {512, {4, 136}}};
  for (const auto& [npus, counts] : cases) {
    const std::string n = std::to_string(npus);
    const auto net = psa::load_psa(write_psa("npus" + n + ".yaml",
        "base: configs/cosmic-system1-baseline.yaml\n"
        "parameters:\n  network:\n    npus: {values: [4, 8, 16], per_dim: true}\n"
        "constraints:\n  - \"product(network.npus) == " + n + "\"\n"
        "objectives: latency\n"));
    EXPECT_EQ(psa::feasible_count(net), u128(counts.first)) << n;
    EXPECT_EQ(brute_force(net), uint64_t(counts.first)) << n;
    const auto work = psa::load_psa(write_psa("triples" + n + ".yaml",
        "base: configs/cosmic-system1-baseline.yaml\n"
        "parameters:\n  workload:\n    dp: {pow2: {min: 1, max: 512}}\n    pp: [1, 2, 4]\n"
        "    cp: {pow2: {min: 1, max: 512}}\n"
        "constraints:\n  - \"dp * pp * workload.cp <= " + n + "\"\n"
        "objectives: [latency]\n"));
    EXPECT_EQ(psa::feasible_count(work), u128(counts.second)) << n;
    EXPECT_EQ(brute_force(work), uint64_t(counts.second)) << n;
  }
}

// cosmic space's notes: per-NPU bandwidth by the study's 7 links on FullyConnected dimensions
// of other sizes (System 1's dimension 1 is FullyConnected 8; dimension 3 a Switch), and the
// constraints that no point meets on their own.
TEST(Psa, SpaceNotesNameStudyLinkCountsAndImpossibleConstraints) {
  const auto notes = [](const std::string& name, const std::string& params, const std::string& more = "") {
    const auto ds = psa::load_psa(write_psa(name, "base: configs/cosmic-system1-baseline.yaml\nparameters:\n  network:\n" +
                                                      params + "objectives: latency\n" + more));
    const u128 feasible = psa::feasible_count(ds);
    return psa::space_notes(ds, &feasible);
  };
  const std::string bw = "    npu_bandwidth_GBps: {values: [100, 200], per_dim: true}\n";
  std::vector<std::string> n = notes("fc_sizes.yaml", bw + "    npus.1: [4, 8, 16]\n");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("dimension 1: a per-NPU bandwidth on a FullyConnected dimension of 4 or 16 NPUs (where the "
                      "constraints allow one) is divided over 7 links"),
            std::string::npos) << n[0];
  EXPECT_NE(n[0].find("--set base.system.network.links_per_npu=physical"), std::string::npos) << n[0];
  EXPECT_TRUE(notes("fc_eight.yaml", bw).empty());                                 // FullyConnected of 8 only
  EXPECT_TRUE(notes("fc_plain.yaml", "    npus.1: [4, 8, 16]\n").empty());          // no per-NPU bandwidth gene
  // (TP derived: the base's degrees make 1,024, which npus 4 or 16 would not be)
  EXPECT_TRUE(notes("fc_none.yaml", bw + "    npus.1: [4, 16]\n    topology.1: [Ring, Switch]\n", "derived: {tp: auto}\n").empty());
  EXPECT_EQ(notes("fc_gene.yaml", bw + "    npus.3: [4, 16]\n    topology.3: [Switch, FullyConnected]\n", "derived: {tp: auto}\n").size(), 1u);
  const auto physical = psa::load_psa(write_psa("fc_physical.yaml", "base: configs/cosmic-system1-baseline.yaml\n"
                                                                      "parameters:\n  network:\n" + bw +
                                                                      "    npus.1: [4, 8, 16]\nobjectives: latency\n"),
                                      {"base.system.network.links_per_npu=physical"});
  EXPECT_TRUE(psa::space_notes(physical).empty());
  // Impossible constraints: the one no point meets alone is named; two that only contradict each other are said to.
  n = notes("impossible.yaml", "    npus.1: [4, 8, 16]\n", "constraints:\n  - \"network.npus.1 == 3\"\n  - \"network.npus.1 >= 4\"\n");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0], "no point meets every constraint; none meets, alone: network.npus.1 == 3");
  n = notes("contradict.yaml", "    npus.1: [4, 8, 16]\n", "constraints:\n  - \"network.npus.1 < 8\"\n  - \"network.npus.1 > 8\"\n");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("they contradict each other"), std::string::npos) << n[0];
  EXPECT_TRUE(notes("possible.yaml", "    npus.1: [4, 8, 16]\n", "constraints:\n  - \"network.npus.1 > 4\"\n").empty());
  // No degree derived, and dp x tp x pp x cp (8 x {2, 3} x 4 x 8 = 512 or 768) never the NPUs
  // (1,024, or 512 or 2,048 with dimension 1 of 4 or 16): said. Where one product is an NPU
  // count (4: 1,024; or 8 x 2 x 4 x 8 on 512 NPUs), or a degree is derived, not.
  const auto degrees = [](const std::string& name, const std::string& params, const std::string& more = "") {
    return psa::space_notes(psa::load_psa(write_psa(name, "base: configs/cosmic-system1-baseline.yaml\nparameters:\n" +
                                                              params + "objectives: latency\n" + more)));
  };
  n = degrees("mismatch.yaml", "  workload: {tp: [2, 3]}\n");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0], "dp x tp x pp x cp never equals the NPU count (1024): every point is PRODUCT_MISMATCH; derive one degree "
                  "from the others (derived: {dp: auto}, docs/psa.md)");
  n = degrees("mismatch_npus.yaml", "  workload: {tp: [2, 3]}\n  network:\n    npus.1: [16]\n");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("(2048)"), std::string::npos) << n[0];
  EXPECT_TRUE(degrees("match.yaml", "  workload: {tp: [3, 4]}\n").empty());
  EXPECT_TRUE(degrees("match_npus.yaml", "  workload: {tp: [2, 3]}\n  network:\n    npus.1: [4, 16]\n").empty());
  EXPECT_TRUE(degrees("derived.yaml", "  workload: {dp: [1, 2]}\n", "derived: {tp: auto}\n").empty());
  // The degree the fix derives is one no gene sets (here dp is searched: tp).
  n = degrees("mismatch_dp.yaml", "  workload: {dp: [3, 5]}\n");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find("(derived: {tp: auto}, docs/psa.md)"), std::string::npos) << n[0];
  // Many NPU counts: the list ends in "..." (4 dimensions of 2 to 64 NPUs, a degree of 3 x 1,024).
  n = degrees("mismatch_many.yaml", "  workload: {dp: [3]}\n  network:\n    npus: {values: [2, 4, 8, 16, 32, 64], per_dim: true}\n");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NE(n[0].find(", ...): every point is PRODUCT_MISMATCH"), std::string::npos) << n[0];
  // Three degrees over 680 values each (3 x 10^8 products): quick, as only the products that
  // divide an NPU count are kept (it took minutes when every product was), and silent, as
  // 1 x 128 x 1 x 8 is 1,024.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(degrees("wide.yaml", "  workload:\n    dp: {range: {min: 1, max: 680}}\n    tp: {range: {min: 1, max: 680}}\n"
                                   "    pp: {range: {min: 1, max: 680}}\n").empty());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
  // compute.memory_GB given the base's capacity in GiB (a DGX-H100's 80): 80 GB is 80e9 / 2^30 =
  // 74.51 GiB, and 80 GiB is 85.90 GB. A capacity in GB (85.9) or other values: no note.
  const auto memory = [](const std::string& name, const std::string& values) {
    return psa::space_notes(psa::load_psa(write_psa(name, "base: configs/mixtral-8x7b-h100.yaml\nparameters:\n  compute:\n"
                                                          "    memory_GB: " + values + "\nobjectives: latency\n")));
  };
  n = memory("mem_gib.yaml", "[64, 80, 96]");
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0], "compute.memory_GB is in GB (1e9 bytes): its value 80 is 74.51 GiB, less than the base's 80 GiB (85.9 GB; "
                  "the system presets give GiB)");
  EXPECT_TRUE(memory("mem_gb.yaml", "[64, 85.9, 96]").empty());
}

// `or` and `and` join comparisons (and binds tighter). Hand-computed: System 1's dimension 1
// (FullyConnected 8 in the base) with npus.1 and topology.1 searched.
TEST(Psa, ConstraintsJoinComparisonsWithOrAndAnd) {
  const auto ds = psa::load_psa(write_psa("or_and.yaml",
      "base: configs/cosmic-system1-baseline.yaml\n"
      "parameters:\n  workload: {dp: [1, 2, 4, 8, 16]}\n  network:\n    npus.1: [4, 8, 16]\n"
      "    topology.1: [Ring, Switch, FullyConnected]\n"
      "constraints:\n  - \"network.npus.1 == 8 or network.topology.1 != FullyConnected\"\n"
      "  - \"dp >= 2 and dp <= 8 or dp == 16 and network.npus.1 < 8\"\n"
      "objectives: latency\n"));
  const SpaceView& s = *ds.view;
  ASSERT_EQ(s.nconstraints, 2);
  const auto holds = [&](int32_t dp, int32_t npus, int32_t topology, int k, double& v) {
    const int32_t genome[] = {dp, npus, topology};  // value indices: dp 1..16, npus 4/8/16, Ring/Switch/FC
    v = 0;
    return constraint_holds(s, decode(s, genome), k, v);
  };
  double v = 0;
  EXPECT_TRUE(holds(0, 1, 2, 0, v));   // FullyConnected of 8
  EXPECT_TRUE(holds(0, 2, 0, 0, v));   // a Ring of 16
  EXPECT_FALSE(holds(0, 2, 2, 0, v));  // FullyConnected of 16: |16 - 8| = 8 or, FC != FC, 0 + 1: the smaller
  EXPECT_EQ(v, 1.0);
  EXPECT_TRUE(holds(2, 1, 0, 1, v));   // dp 4
  EXPECT_TRUE(holds(4, 0, 0, 1, v));   // dp 16 on 4 NPUs
  EXPECT_FALSE(holds(0, 1, 0, 1, v));  // dp 1, 8 NPUs: (|1 - 2| + 0) or (|1 - 16| + |8 - 8| + 1) = 1
  EXPECT_EQ(v, 1.0);
  EXPECT_FALSE(holds(4, 2, 0, 1, v));  // dp 16, 16 NPUs: (0 + |16 - 8|) or (0 + |16 - 8|) = 8
  EXPECT_EQ(v, 8.0);
  // Counted: dp in {2, 4, 8} with any NPUs, or dp 16 with 4: 3 x 3 + 1 = 10 of 15 (dp, npus)
  // pairs; topology: 3 with 8 NPUs, 2 (not FullyConnected) otherwise.
  EXPECT_EQ(psa::feasible_count(ds), u128(3 * (3 + 2 + 2) + 1 * 2));
  EXPECT_EQ(brute_force(ds), 3u * (3 + 2 + 2) + 2);
  // Whole words only; a missing comparison on either side is named.
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters:\n  workload: {dp: [1, 2]}\nconstraints:\n";
  EXPECT_NE(error_of(write_psa("or_word.yaml", head + "  - \"dp < 4 ordp > 1\"\nobjectives: latency\n")).find("unexpected 'ordp > 1'"),
            std::string::npos);
  EXPECT_NE(error_of(write_psa("or_half.yaml", head + "  - \"dp < 4 or dp\"\nobjectives: latency\n")).find("expected a comparison"),
            std::string::npos);
  // C's operators are named with the words to write; an unclosed parenthesis is said to be.
  for (const auto& [text, said] : {std::pair<const char*, const char*>{"dp < 4 && dp > 1", "'&&' is not an operator (write 'and')"},
                                   {"dp < 4 || dp > 1", "'||' is not an operator (write 'or')"},
                                   {"(dp < 4 or dp > 1", "expected ')'"},
                                   {"(dp < 4 && dp > 1) or dp == 2", "'&&' is not an operator (write 'and')"},
                                   {"2 * (dp == 1) > 0", "a comparison inside arithmetic"}})
    EXPECT_NE(error_of(write_psa("c_ops.yaml", head + "  - \"" + text + "\"\nobjectives: latency\n")).find(said),
              std::string::npos) << text;
}

// Conditions in parentheses: a parenthesis that holds a comparison groups conditions, one that
// does not is arithmetic. The same space as above, by hand.
TEST(Psa, ConstraintsGroupConditionsInParentheses) {
  const auto space = [](const std::string& name, const std::string& second) {
    return psa::load_psa(write_psa(name,
        "base: configs/cosmic-system1-baseline.yaml\n"
        "parameters:\n  workload: {dp: [1, 2, 4, 8, 16]}\n  network:\n    npus.1: [4, 8, 16]\n"
        "    topology.1: [Ring, Switch, FullyConnected]\n"
        "constraints:\n  - \"(network.npus.1 == 8) or (network.topology.1 != FullyConnected)\"\n"
        "  - \"" + second + "\"\nobjectives: latency\n"));
  };
  // The grouping `and` binds by anyway: the count above, 3 x (3 + 2 + 2) + 2.
  const auto same = space("group_same.yaml", "(dp >= 2 and dp <= 8) or ((dp == 16 and network.npus.1 < 8))");
  EXPECT_EQ(psa::feasible_count(same), u128(23));
  EXPECT_EQ(brute_force(same), 23u);
  // Another grouping: dp 2 to 16 on 4 NPUs, where the topology is Ring or Switch: 4 x 2.
  const auto other = space("group_other.yaml", "dp >= 2 and (dp <= 8 or dp == 16) and network.npus.1 < 8");
  EXPECT_EQ(psa::feasible_count(other), u128(8));
  EXPECT_EQ(brute_force(other), 8u);
  // The violation composes as without parentheses: dp 1 on 16 NPUs, a Ring: |1 - 2| + 0 + |16 - 8|.
  double v = 0;
  const int32_t genome[] = {0, 2, 0};
  EXPECT_FALSE(constraint_holds(*other.view, decode(*other.view, genome), 1, v));
  EXPECT_EQ(v, 9.0);
  // Arithmetic in parentheses, beside a condition in them: dp + 2 <= 6, dp 1, 2 or 4 (x 7 for the network).
  const auto arith = space("group_arith.yaml", "((dp + 2) * 2 <= 12)");
  EXPECT_EQ(psa::feasible_count(arith), u128(3 * 7));
  EXPECT_EQ(brute_force(arith), 21u);
}

TEST(Psa, DerivedDependenciesCountedExactly) {
  // Constraints that read derived values: tp (from dp, cp, pp and npus), the algorithm (from
  // the topology), the per-link bandwidth (per-NPU bandwidth / links of the topology).
  const std::string path = write_psa("derived.yaml",
      "base: configs/cosmic-system1-baseline.yaml\n"
      "parameters:\n"
      "  workload:\n    dp: {pow2: {min: 1, max: 64}}\n    cp: [1, 2, 4]\n    sharding: [none, zero3]\n"
      "  collective:\n    chunks: [2, 4]\n"
      "  network:\n    topology: {values: [Ring, Switch, FullyConnected], per_dim: true}\n"
      "    npus.3: [4, 8, 16]\n    npu_bandwidth_GBps.0: {range: {min: 50, max: 350, step: 100}}\n"
      "derived: {tp: auto, algorithm: follows_topology}\n"
      "constraints:\n"
      "  - \"workload.tp >= 4\"\n"
      "  - \"collective.all_reduce_algorithm.1 != direct\"\n"
      "  - \"network.bandwidth_GBps.0 <= 100\"\n"
      "  - \"network.topology.2 == Ring\"\n"
      "  - \"npus_total / (workload.dp * workload.cp * workload.pp) == workload.tp\"\n"
      "objectives: [latency, cost]\n");
  const auto ds = psa::load_psa(path);
  EXPECT_EQ(ds.objectives.size(), size_t(2));
  const uint64_t brute = brute_force(ds);
  EXPECT_GT(brute, 0u);
  EXPECT_EQ(psa::feasible_count(ds), u128(brute));
  // A constraint no gene affects holds or fails for the whole space.
  const auto none = psa::load_psa(write_psa("constant.yaml",
      "base: configs/cosmic-system1-baseline.yaml\nparameters:\n  collective:\n    chunks: [2, 4]\n"
      "constraints: [\"npus_total == 512\"]\nobjectives: memory\n"));
  EXPECT_EQ(psa::feasible_count(none), u128(0));
}

TEST(Psa, NetworkCostAndBandwidthTotalNames) {
  // network_cost and npu_bandwidth_total push kernels/cost.hpp's network_cost_usd and
  // npu_bandwidth_total(); they read the topology / NPUs / bandwidth genes, not dp or latency.
  auto space = [](const std::string& name, const std::string& constraints) {
    return psa::load_psa(write_psa(name,
        "base: configs/cosmic-system1-baseline.yaml\n"
        "parameters:\n"
        "  workload:\n    dp: [1, 2, 4, 8]\n"
        "  network:\n    topology: {values: [Ring, Switch, FullyConnected], per_dim: true}\n"
        "    npus.3: [4, 8, 16]\n    npu_bandwidth_GBps: {values: [50, 200], per_dim: true}\n"
        "    latency_ns.0: [100, 700]\n"
        "constraints:\n" + constraints + "objectives: latency\n"));
  };
  // The median network cost over the space, so the budget below splits it.
  const auto all = space("cost-all.yaml", "  - \"network_cost >= 0\"\n");
  const SpaceView& a = *all.view;
  std::vector<int32_t> genome(size_t(a.ngenes), 0);
  std::vector<double> costs;
  for (u128 i = 0, n = space_size(a); i < n; ++i) {
    unrank(a, i, genome.data());
    bool priced = true;
    costs.push_back(network_cost_usd(decode(a, genome.data()).net, priced));
  }
  std::sort(costs.begin(), costs.end());
  const double budget = costs[costs.size() / 2], bw_budget = 600;
  char text[256];
  std::snprintf(text, sizeof text, "  - \"network_cost <= %.17g\"\n  - \"npu_bandwidth_total <= %.17g\"\n"
                "  - \"sum(network.npu_bandwidth_GBps) <= %.17g\"\n", budget, bw_budget, bw_budget);
  const auto ds = space("cost-budget.yaml", text);
  const SpaceView& s = *ds.view;
  ASSERT_EQ(s.nconstraints, 3);
  uint64_t pass[2] = {0, 0};
  for (u128 i = 0, n = space_size(s); i < n; ++i) {
    unrank(s, i, genome.data());
    const Config c = decode(s, genome.data());
    bool priced = true;
    double v = 0;
    const bool cost_ok = constraint_holds(s, c, 0, v), bw_ok = constraint_holds(s, c, 1, v);
    ASSERT_EQ(cost_ok, network_cost_usd(c.net, priced) <= budget);
    ASSERT_EQ(bw_ok, npu_bandwidth_total(c) <= bw_budget);
    ASSERT_EQ(bw_ok, constraint_holds(s, c, 2, v));  // the study's earlier spelling, same doubles
    pass[0] += cost_ok;
    pass[1] += bw_ok;
  }
  EXPECT_GT(pass[0], 0u);
  EXPECT_LT(pass[0], uint64_t(space_size(s)));
  EXPECT_GT(pass[1], 0u);
  EXPECT_LT(pass[1], uint64_t(space_size(s)));
  EXPECT_EQ(psa::feasible_count(ds), u128(brute_force(ds)));
  // Read sets by gene name.
  auto names = [&](int k) {
    std::string out;
    for (int32_t g : psa::constraint_genes(s, k)) out += (out.empty() ? "" : " ") + ds.genes[size_t(g)].name;
    return out;
  };
  const std::string topo = "network.topology.0 network.topology.1 network.topology.2 network.topology.3";
  const std::string bw = "network.npu_bandwidth_GBps.0 network.npu_bandwidth_GBps.1 network.npu_bandwidth_GBps.2 "
                         "network.npu_bandwidth_GBps.3";
  EXPECT_EQ(names(0), topo + " network.npus.3 " + bw);
  EXPECT_EQ(names(1), topo + " " + bw);
  EXPECT_EQ(names(2), topo + " " + bw);
}

TEST(Psa, RankUnrankAtTheEdgesOf128Bits) {
  // 31 genes of 16 values and one of 15: 15 x 2^124 points, between 2^127 and 2^128.
  auto v = std::make_unique<SpaceView>();
  v->ngenes = 32;
  for (int g = 0; g < 32; ++g) v->gene[g] = Gene{Param::DP, -1, g == 31 ? 15 : 16, 0};
  const u128 size = space_size(*v);
  EXPECT_EQ(size, u128(15) << 124);
  const u128 two64 = u128(1) << 64, two127 = u128(1) << 127;
  for (u128 i : {u128(0), u128(1), two64 - 1, two64, two64 + 1, two127 - 1, two127, two127 + 1, size - 2, size - 1}) {
    int32_t genome[kMaxGenes];
    unrank(*v, i, genome);
    for (int g = 0; g < 32; ++g) ASSERT_LT(genome[g], v->gene[g].card);
    EXPECT_TRUE(rank(*v, genome) == i) << psa::to_string_u128(i);
  }
  int32_t last[kMaxGenes];
  unrank(*v, size - 1, last);
  for (int g = 0; g < 32; ++g) EXPECT_EQ(last[g], v->gene[g].card - 1);

  // The shipped full-stack space exceeds 2^64.
  const auto fs = psa::load_psa(test::data_path("psa/cosmic/fullstack-system1.yaml"));
  const u128 n = space_size(*fs.view);
  EXPECT_GT(n, two64);
  for (u128 i : {u128(0), u128(1), two64, n - 1}) {
    int32_t genome[kMaxGenes];
    unrank(*fs.view, i, genome);
    EXPECT_TRUE(rank(*fs.view, genome) == i) << psa::to_string_u128(i);
  }
}

TEST(Psa, U128Text) {
  const u128 max = ~u128(0);
  EXPECT_EQ(psa::to_string_u128(max), "340282366920938463463374607431768211455");
  EXPECT_EQ(psa::to_string_u128(0), "0");
  EXPECT_EQ(psa::with_commas("1234567"), "1,234,567");
  EXPECT_EQ(psa::with_commas("123"), "123");
  u128 back = 0;
  ASSERT_TRUE(psa::parse_u128("340282366920938463463374607431768211455", back));
  EXPECT_TRUE(back == max);
  ASSERT_TRUE(psa::parse_u128("76,859,228,160,000", back));
  EXPECT_TRUE(back == u128(76859228160000ull));
  EXPECT_FALSE(psa::parse_u128("340282366920938463463374607431768211456", back));
  EXPECT_FALSE(psa::parse_u128("12a", back));
  EXPECT_FALSE(psa::parse_u128("", back));
}

// A design space's base_text (a result file's base_config) written inline as the base gives the
// same base_text again: cosmic merge rebuilds the design space that way. Every shipped space,
// and one over a DGX preset (its `nodes` is expanded and dropped).
TEST(Psa, RecordedBaseReadsBackUnchanged) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(test::data_path("psa")))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  const std::string dgx_base = write_psa("dgx_base.yaml", "model: GPT-22B\nsystem: {preset: dgx-h100, nodes: 2}\n"
                                                          "workload: {tp: 8, dp: 2, global_batch: 64}\n");
  files.push_back(write_psa("dgx.yaml", "base: " + dgx_base + "\nparameters:\n  workload: {dp: [1, 2]}\n"
                                        "objectives: [latency]\n"));
  ASSERT_GT(files.size(), 10u);
  for (const auto& file : files) {
    const psa::DesignSpace ds = psa::load_psa(file);
    YAML::Node root = YAML::LoadFile(file);
    root["base"] = YAML::Load(ds.base_text);
    YAML::Emitter em;
    em << root;
    const std::string inline_file = write_psa("inline_base.yaml", std::string(em.c_str()) + "\n");
    EXPECT_EQ(psa::load_psa(inline_file).base_text, ds.base_text) << file;
  }
  EXPECT_EQ(psa::load_psa(files.back()).view->base.net.dim[1].npus, 2);
}

// Objective names: the serving ones and their aliases; `all` stays the six of the study.
TEST(Psa, ServingObjectivesAndAll) {
  const std::string head = "base: configs/cosmic-system1-chat.yaml\nparameters:\n  workload:\n    pp: [1, 2]\n";
  const psa::DesignSpace serve = psa::load_psa(write_psa("serve.yaml", head + "objectives: [ttft, per_output_token]\n"));
  EXPECT_EQ(serve.objectives, (std::vector<Objective>{Objective::FirstToken, Objective::PerOutputToken}));
  EXPECT_STREQ(psa::objective_name(Objective::FirstToken), "first_token");
  EXPECT_STREQ(psa::objective_name(Objective::PerOutputToken), "per_output_token");
  const psa::DesignSpace all = psa::load_psa(write_psa("all.yaml", head + "objectives: all\n"));
  EXPECT_EQ(all.objectives.size(), 6u);
  // Named before `all`, an objective is listed once, first; `all` twice is `all`.
  const psa::DesignSpace first = psa::load_psa(write_psa("first.yaml", head + "objectives: [tpot, memory, all, all]\n"));
  ASSERT_EQ(first.objectives.size(), 7u);
  EXPECT_EQ(first.objectives[0], Objective::PerOutputToken);
  EXPECT_EQ(first.objectives[1], Objective::Memory);
  EXPECT_EQ(first.objectives[2], Objective::Latency);
  EXPECT_NE(error_of(write_psa("typo.yaml", head + "objectives: [ttfb]\n")).find("first_token, per_output_token"),
            std::string::npos);
}

// Limits are upper bounds on objectives (by any of their names), in the order written; `cosmic
// space` lists them.
TEST(Psa, LimitsBoundObjectives) {
  const std::string head = "base: configs/cosmic-system1-chat.yaml\nparameters:\n  workload:\n    pp: [2, 4]\nobjectives: [cost]\n";
  const std::string path = write_psa("limits.yaml", head + "limits:\n  ttft: 0.25\n  memory: 6.0e10\n");
  const psa::DesignSpace ds = psa::load_psa(path);
  ASSERT_EQ(ds.view->nlimits, 2);
  EXPECT_EQ(ds.view->limit_obj[0], Objective::FirstToken);
  EXPECT_EQ(ds.view->limit_max[0], 0.25);
  EXPECT_EQ(ds.view->limit_obj[1], Objective::Memory);
  EXPECT_EQ(ds.view->limit_max[1], 6.0e10);
  EXPECT_EQ(psa::limit_text(*ds.view, 1), "memory <= 6e+10 bytes (55.88 GiB)");  // 6e10 / 2^30
  EXPECT_EQ(psa::limit_text(Objective::Throughput, 2e-4), "throughput <= 0.0002 s/token (5000 tokens/s)");
  EXPECT_EQ(psa::load_psa(path, {"limits.memory=7e10"}).view->limit_max[1], 7e10);
  EXPECT_EQ(psa::load_psa(write_psa("nolimits.yaml", head)).view->nlimits, 0);
  // The serving objectives limited in training mode are the latency: a note says so.
  const psa::DesignSpace training = psa::load_psa(path, {"base.workload.mode=training"});
  const std::vector<std::string> notes = psa::space_notes(training);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "first_token is the latency in training mode (base.workload.mode): a time to the first token belongs "
                      "to generate, serve and prefill");
  EXPECT_TRUE(psa::space_notes(ds).empty());
  EXPECT_TRUE(psa::space_notes(psa::load_psa(path, {"base.workload.mode=serve"})).empty());
  const test::CliRun r = test::run_cli("space " + path);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("limits:      first_token <= 0.25 s, memory <= 6e+10 bytes (55.88 GiB)\n"), std::string::npos) << r.out;
}

// A base written inline: its errors name the PSA file and line, or --set for a base.* edit.
TEST(Psa, InlineBaseErrorsNameTheirPlace) {
  const std::string text = "base:\n  model: GPT3-175B\n  system: cosmic-system1\n"
                           "  workload: {dp: 8, tp: 4, pp: 4, cp: 8, global_batch: BATCH}\n"
                           "parameters:\n  workload:\n    dp: [1, 2]\nobjectives: [latency]\n";
  const auto with = [&](const std::string& batch) {
    std::string t = text;
    return t.replace(t.find("BATCH"), 5, batch);
  };
  const std::string bad = write_psa("inline_bad.yaml", with("zz"));
  EXPECT_EQ(error_of(bad).rfind(bad + ":4:", 0), 0u) << error_of(bad);
  EXPECT_NE(error_of(bad).find("key 'base.workload.global_batch'"), std::string::npos) << error_of(bad);  // as the PSA writes it
  std::string with_extra = with("2048");
  with_extra.insert(with_extra.find("  workload:"), "  extra: 1\n");
  const std::string extra = write_psa("inline_extra.yaml", with_extra);
  EXPECT_EQ(error_of(extra), extra + ":4:3: unknown key 'base.extra' (expected one of: name, description, model, system, workload)");
  const std::string good = write_psa("inline_good.yaml", with("2048"));
  try {
    psa::load_psa(good, {"base.workload.global_batch=abc"});
    FAIL() << "expected an error";
  } catch (const psa::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set: key 'base.workload.global_batch'", 0), 0u) << e.what();
  }
  // A base file: the error says whose key it is (the user wrote base.workload.dp).
  const std::string file_base = write_psa("file_base.yaml", "base: configs/cosmic-system1-baseline.yaml\nparameters:\n"
                                                            "  workload:\n    pp: [1, 2]\nobjectives: [latency]\n");
  try {
    psa::load_psa(file_base, {"base.workload.dp=0"});
    FAIL() << "expected an error";
  } catch (const psa::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("--set: key 'workload.dp'", 0), 0u) << m;
    EXPECT_NE(m.find("(a key of the base configuration "), std::string::npos) << m;
    EXPECT_NE(m.find("cosmic-system1-baseline.yaml, set by --set base.KEY)"), std::string::npos) << m;
  }
  // A whole base given by --set: what it lacks is the --set's, not the PSA file's.
  EXPECT_EQ(error_of(file_base, {"base={model: GPT3-13B}"}),
            "--set base: key 'base.system': expected a preset name, a file or a mapping (required; the mapping has no 'system:')");
}

// --set base=... replaces the base whatever its place among the edits and whatever form either
// base has (a file for a mapping, a mapping for a file); base.system.preset=NAME swaps the
// preset of an inline base's system (written as a name alone) and keeps the rest.
TEST(Psa, SetReplacesOrEditsTheBaseInEitherForm) {
  const std::string inl = write_psa("inline_base_swap.yaml",
                                    "base:\n  model: GPT3-175B\n  system: cosmic-system1\n"
                                    "  workload: {dp: 8, tp: 4, pp: 4, cp: 8, global_batch: 2048}\n"
                                    "parameters:\n  workload:\n    dp: [1, 2]\nobjectives: [latency]\n");
  const auto from_file =
      psa::load_psa(inl, {"base.workload.global_batch=1024", "base=configs/cosmic-system2-baseline.yaml"});
  EXPECT_EQ(from_file.system_name, "cosmic-system2");
  EXPECT_EQ(from_file.view->base.work.global_batch, 1024);
  const std::string file_base = write_psa("file_base_swap.yaml", "base: configs/cosmic-system1-baseline.yaml\n"
                                                                 "parameters:\n  workload:\n    pp: [1, 2]\n"
                                                                 "objectives: [latency]\n");
  const auto from_map = psa::load_psa(
      file_base, {"base={model: GPT3-13B, system: cosmic-system1, workload: {dp: 1024, global_batch: 512}}"});
  EXPECT_EQ(from_map.model_name, "GPT3-13B");
  EXPECT_EQ(from_map.view->base.work.global_batch, 512);
  // A key of the configuration without base.: the error says where it belongs.
  try {
    psa::load_psa(file_base, {"workload.global_batch=512"});
    FAIL() << "expected an error";
  } catch (const psa::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("write --set base.workload.global_batch=512"), std::string::npos) << e.what();
  }
  const auto swapped = psa::load_psa(inl, {"base.system.preset=cosmic-system2"});
  EXPECT_EQ(swapped.system_name, "cosmic-system2");
  EXPECT_EQ(swapped.view->base.work.global_batch, 2048);
  EXPECT_EQ(swapped.base_text, psa::load_psa(inl, {"base.system=cosmic-system2"}).base_text);
  // An inline system that names its preset alone takes keys below it, in either order, and a
  // swapped preset keeps them.
  const std::string dgx = write_psa("inline_dgx.yaml", "base:\n  model: Llama-3.1-8B\n  system: dgx-h100\n"
                                                       "  workload: {dp: 64, global_batch: 64}\n"
                                                       "parameters:\n  workload:\n    pp: [1, 2]\nobjectives: [latency]\n");
  for (const auto& order : {std::vector<std::string>{"base.system.nodes=8", "base.system.preset=dgx-h200"},
                            std::vector<std::string>{"base.system.preset=dgx-h200", "base.system.nodes=8"}}) {
    const auto d = psa::load_psa(dgx, order);
    EXPECT_EQ(d.system_name, "dgx-h200") << order[0];
    EXPECT_EQ(d.view->base.net.dim[1].npus, 8) << order[0];
  }
}

// --set KEY=null removes a key: a searched parameter, so that a degree can be derived instead,
// from the command line; a key that is not there is an error, and an empty value still one.
TEST(Psa, SetNullRemovesAKey) {
  const std::string psa = write_psa("set_null.yaml", "base: configs/cosmic-system1-baseline.yaml\nparameters:\n"
                                                     "  workload: {dp: [4, 8, 16], cp: [4, 8]}\nderived: {tp: auto}\n"
                                                     "objectives: [latency]\n");
  const auto ds = psa::load_psa(psa, {"parameters.workload.cp=null", "derived.tp=none", "derived.cp=auto"});
  // Spaced around '=' (the value was read as ' null', refused as empty).
  EXPECT_EQ(psa::load_psa(psa, {"parameters.workload.cp = null", " derived.tp= none", "derived.cp =auto"}).genes.size(), 1u);
  ASSERT_EQ(ds.genes.size(), 1u);
  EXPECT_EQ(ds.genes[0].name, "workload.dp");
  EXPECT_EQ(ds.view->derived_degree, int(Param::CP));
  for (const auto& [set, says] : std::vector<std::pair<std::string, std::string>>{
           // an index into a list the file lacks (it read as the unknown key 'constraints.0')
           {"constraints.0=workload.dp >= 2", "there is no list 'constraints' to index; --set constraints=[...] gives the whole list"},
           {"parameters.workload.pp=null", "there is no key 'parameters.workload.pp' to remove"},
           {"parameters.workload.cp=", "expected a value after '=' (KEY=null removes KEY)"}}) {
    try {
      psa::load_psa(psa, {set});
      ADD_FAILURE() << set << " accepted";
    } catch (const psa::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}

// --set reaches a parameter's own dimension, a key with a dot in it (`npus.1`), whether the file
// has that key already or not; a list of the configuration (a base's network dims) is indexed.
TEST(Psa, SetReachesOneDimensionOfAParameter) {
  const std::string psa = write_psa("set_dim.yaml", "base: configs/cosmic-system1-baseline.yaml\nparameters:\n"
                                                    "  network:\n    npus.1: [4, 8]\nobjectives: [latency]\n");
  const auto ds = psa::load_psa(psa, {"parameters.network.npus.1=[2, 4, 8]", "parameters.network.latency_ns.0=[100, 700]",
                                      "base.system.network.dims.0.latency_ns=300"});
  std::map<std::string, std::vector<std::string>> labels;
  for (const auto& g : ds.genes) labels[g.name] = g.labels;
  EXPECT_EQ(labels["network.npus.1"], (std::vector<std::string>{"2", "4", "8"}));
  EXPECT_EQ(labels["network.latency_ns.0"], (std::vector<std::string>{"100", "700"}));
  EXPECT_EQ(labels.size(), 2u);
  EXPECT_EQ(ds.view->base.net.dim[0].latency_ns, 300);
  // An item of a list set wrong: the error names the edit, not the file's first line; so does one
  // of a list the base configuration reads whole (recompute_modules).
  for (const auto& [set, says] : std::vector<std::pair<std::string, std::string>>{
           {"parameters.network.npus.1.1=abc", "--set: key 'parameters.network.npus.1.values.1': expected an integer"},
           {"base.workload.recompute_modules.0=foo", "--set: key 'workload.recompute_modules.0': expected one of core_attn"}}) {
    std::vector<std::string> sets{set};
    if (set.rfind("base.", 0) == 0)
      sets = {"base.workload.recompute=selective", "base.workload.recompute_modules=[core_attn, layernorm]", set};
    try {
      psa::load_psa(psa, sets);
      ADD_FAILURE() << set << " accepted";
    } catch (const psa::ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(says, 0), 0u) << e.what();
    }
  }
  // A parameter written as a list has indices, not a spec's keys: said alike at the end of a
  // path and inside one.
  for (const char* set : {"parameters.network.npus.1.values=[2]", "parameters.network.npus.1.pow2.max=8",
                          "parameters.network.npus.1.2=16"}) {
    try {
      psa::load_psa(psa, {set});
      ADD_FAILURE() << set << " accepted";
    } catch (const psa::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'parameters.network.npus.1' is a list of 2 values, and '"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("; --set parameters.network.npus.1=[...] replaces the whole list"),
                std::string::npos)
          << e.what();
    }
  }
}

// A --set of the base that makes its file contradict itself: the fix named as a PSA's --set
// writes it (base.KEY), for a base file and for one written inline.
TEST(Psa, BaseContradictionsNameTheSetToAdd) {
  const std::string file = test::data_path("psa/dense/llama-405b-h100.yaml");
  EXPECT_NE(error_of(file, {"base.workload.schedule=1f1b"})
                .find("(base.workload.schedule is from --set: add --set base.workload.vpp=1)"),
            std::string::npos)
      << error_of(file, {"base.workload.schedule=1f1b"});
  EXPECT_EQ(error_of(file, {"base.workload.schedule=1f1b", "base.workload.vpp=1"}), "");
  const std::string inline_base = write_psa("inline_vpp.yaml",
      "base:\n  model: GPT3-175B\n  system: cosmic-system1\n"
      "  workload: {dp: 8, tp: 4, pp: 4, cp: 8, global_batch: 2048, schedule: interleaved, vpp: 2}\n"
      "parameters:\n  workload:\n    dp: [8]\nobjectives: [latency]\n");
  EXPECT_EQ(error_of(inline_base), "");
  EXPECT_NE(error_of(inline_base, {"base.workload.schedule=1f1b"})
                .find("(base.workload.schedule is from --set: add --set base.workload.vpp=1)"),
            std::string::npos)
      << error_of(inline_base, {"base.workload.schedule=1f1b"});
}

TEST(Psa, ErrorsNameFileLineAndKey) {
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters:\n  workload:\n";
  const std::string serving = "base: configs/cosmic-system1-chat.yaml\nparameters:\n  workload:\n";
  struct Case {
    const char* file;
    std::string text;
    std::vector<std::string> expect;
  };
  const Case cases[] = {
      {"unknown_key.yaml", head + "    dp: [1, 2]\n    foo: [1]\nobjectives: [latency]\n",
       {"unknown_key.yaml:5:5:", "unknown key 'parameters.workload.foo'"}},
      {"bad_value.yaml", head + "    dp: {values: [1, two]}\nobjectives: [latency]\n",
       {"bad_value.yaml:4:22:", "key 'parameters.workload.dp.values.1'", "got 'two'"}},
      {"bad_expr.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"workload.dp * <= 4\"\nobjectives: [latency]\n",
       {"bad_expr.yaml:6:5:", "key 'constraints.0'", "column 15"}},
      {"unknown_param.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"workload.dpp <= 4\"\nobjectives: [latency]\n",
       {"unknown_param.yaml:6:5:", "key 'constraints.0'", "unknown parameter 'workload.dpp'"}},
      {"bad_enum.yaml", head + "    sharding: {values: [none, zero9]}\nobjectives: [latency]\n",
       {"bad_enum.yaml:4:31:", "parameters.workload.sharding.values.1", "zero3"}},
      {"bad_objective.yaml", head + "    dp: [1, 2]\nobjectives: [latncy]\n",
       {"bad_objective.yaml:5:14:", "key 'objectives.0'", "runtime_x_bw"}},
      {"top_key.yaml", head + "    dp: [1, 2]\nobjectivs: [latency]\n", {"top_key.yaml:5:1:", "unknown key 'objectivs'"}},
      // A parameter without values: its own line (yaml-cpp places the missing value at the next token)
      {"bare_param.yaml", head + "    dp: [1, 2]\n    pp:\nobjectives: [latency]\n",
       {"bare_param.yaml:5:5:", "key 'parameters.workload.pp'", "got nothing"}},
      {"empty_values.yaml", head + "    dp: []\nobjectives: [latency]\n",
       {"empty_values.yaml:4:9:", "key 'parameters.workload.dp.values'", "expected a non-empty list, got an empty list"}},
      {"twice.yaml", head + "    dp: [1, 2, 2]\nobjectives: [latency]\n",
       {"twice.yaml:4:9:", "expected distinct values ('2' twice), got a list of 3 items"}},
      // yaml-cpp stops at 2,000 levels with the message "bad file".
      {"deep.yaml", head + "    dp: " + std::string(1500, '[') + std::string(1500, ']') + "\nobjectives: [latency]\n",
       {"deep.yaml:4:", "lists and mappings nested too deeply for the YAML reader"}},
      // 15 genes of 200 values, 16 of 4 and 4 of 3: 2^153 points, too many for 128 bits.
      {"huge.yaml",
                    "base: configs/cosmic-system1-baseline.yaml\n"
                    "parameters:\n"
                    "  workload:\n"
                    "    micro_batch: {range: {min: 1, max: 200}}\n"
                    "    global_batch: {range: {min: 2048, max: 2247}}\n"
                    "    vpp: {range: {min: 1, max: 200}}\n"
                    "  collective:\n"
                    "    chunks: {range: {min: 1, max: 200}}\n"
                    "    all_reduce_algorithm: {values: [ring, direct, halvingDoubling, doubleBinaryTree], per_dim: true}\n"
                    "    all_gather_algorithm: {values: [ring, direct, halvingDoubling, doubleBinaryTree], per_dim: true}\n"
                    "    reduce_scatter_algorithm: {values: [ring, direct, halvingDoubling, doubleBinaryTree], per_dim: true}\n"
                    "    all_to_all_algorithm: {values: [ring, direct, halvingDoubling, doubleBinaryTree], per_dim: true}\n"
                    "  network:\n"
                    "    npu_bandwidth_GBps: {range: {min: 1, max: 200}, per_dim: true}\n"
                    "    latency_ns: {range: {min: 1, max: 200}, per_dim: true}\n"
                    "    topology: {values: [Ring, Switch, FullyConnected], per_dim: true}\n"
                    "  compute:\n"
                    "    peak_tflops: {range: {min: 100, max: 299}}\n"
                    "    memory_bw_GBps: {range: {min: 1000, max: 1199}}\n"
                    "    memory_GB: {range: {min: 10, max: 209}}\n"
                    "objectives: [latency]\n"
                    "\n",
       {"huge.yaml:3:3:", "key 'parameters': the space has 2^128 points or more"}},
      {"tp_twice.yaml", head + "    tp: [1, 2]\nderived: {tp: auto}\nobjectives: [latency]\n",
       {"tp_twice.yaml:4:5:", "parameters.workload.tp", "derived"}},
      {"enum_number.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"workload.dp == Switch\"\nobjectives: [latency]\n",
       {"enum_number.yaml:6:5:", "an enumeration compared with a number", "column 16"}},
      {"enum_order.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"network.topology.0 < Switch\"\nobjectives: [latency]\n",
       {"enum_order.yaml:6:5:", "== or != only"}},
      {"enum_foreign.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"workload.sharding != Switch\"\nobjectives: [latency]\n",
       {"enum_foreign.yaml:6:5:", "'Switch' is not a value of that parameter", "zero3"}},
      // A word that is neither: a value misspelt where it meets an enumeration, else a parameter.
      {"enum_typo.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"network.topology.0 == Torus\"\nobjectives: [latency]\n",
       {"enum_typo.yaml:6:5:", "'Torus' is not a value of that parameter (one of Ring, Switch, FullyConnected)", "column 23"}},
      {"bw_clash.yaml", head + "    dp: [1, 2]\n  network:\n    bandwidth_GBps.0: [100, 200]\n"
                                "    npu_bandwidth_GBps: {values: [100, 200], per_dim: true}\nobjectives: [latency]\n",
       {"bw_clash.yaml:7:5:", "does not overlap bandwidth_GBps, given for dimension 0", "per link or per NPU, not both"}},
      // A name the parser splits at its last index: the part that is wrong.
      {"two_indices.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"network.topology.0.1 == Ring\"\nobjectives: [latency]\n",
       {"two_indices.yaml:6:5:", "'network.topology.0.1': one dimension index at most"}},
      {"total_index.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"npus_total.0 <= 3\"\nobjectives: [latency]\n",
       {"total_index.yaml:6:5:", "'npus_total' is a whole-network total, not a per-dimension parameter"}},
      // A parameter's spec: its own key, and whether it gave none of the forms or several.
      {"no_form.yaml", head + "    dp: {per_dim: false}\nobjectives: [latency]\n",
       {"no_form.yaml:4:9:", "key 'parameters.workload.dp': expected exactly one of values, range or pow2, got none of them"}},
      {"two_forms.yaml", head + "    dp: {values: [1], range: {min: 1, max: 2}}\nobjectives: [latency]\n",
       {"two_forms.yaml:4:9:", "key 'parameters.workload.dp': expected exactly one of values, range or pow2, got 2 of them"}},
      // An objective `all` gives already: the way to put it first.
      {"after_all.yaml", head + "    dp: [1, 2]\nobjectives: [all, latency]\n",
       {"after_all.yaml:5:19:", "expected distinct objectives, got 'latency' (all, before it, gives it: name it before all"}},
      {"bare_typo.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"dpp * 2 <= 8\"\nobjectives: [latency]\n",
       {"bare_typo.yaml:6:5:", "unknown parameter 'dpp'", "column 1"}},
      {"bare_typo2.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"workload.dp <= dpp\"\nobjectives: [latency]\n",
       {"bare_typo2.yaml:6:5:", "unknown parameter 'dpp'", "column 16"}},
      {"pow2_max.yaml", head + "    dp: {pow2: {min: 1, max: 1073741824}}\nobjectives: [latency]\n",
       {"pow2_max.yaml:4:", "key 'parameters.workload.dp.pow2.max'", "(33554432)"}},
      {"pow2_min.yaml", head + "    dp: {pow2: {min: 3, max: 64}}\nobjectives: [latency]\n",
       {"pow2_min.yaml:4:", "key 'parameters.workload.dp.pow2.min'", "a power of two (3 lies between 2 and 4)"}},
      {"pow2_max2.yaml", head + "    dp: {pow2: {min: 1, max: 100}}\nobjectives: [latency]\n",
       {"pow2_max2.yaml:4:", "key 'parameters.workload.dp.pow2.max'", "(100 lies between 64 and 128)"}},
      {"range_step.yaml", head + "    dp: {range: {min: 1, max: 2, step: 0.5}}\nobjectives: [latency]\n",
       {"range_step.yaml:4:", "key 'parameters.workload.dp.range.step'", "(1.5)"}},
      // Too many values: the count the step gives, the default step named as such.
      {"range_count.yaml", head + "    dp: {range: {min: 1, max: 1e18}}\nobjectives: [latency]\n",
       {"range_count.yaml:4:", "key 'parameters.workload.dp.range.step'", "(step 1, the default, gives 1e+18)"}},
      {"range_count2.yaml", head + "    dp: {range: {min: 0, max: 5000, step: 2}}\nobjectives: [latency]\n",
       {"range_count2.yaml:4:", "at most 2048 values (step 2 gives 2501)"}},
      {"stack_twice.yaml", head + "    dp: [1, 2]\n  workload:\n    pp: [4]\nobjectives: [latency]\n",
       {"stack_twice.yaml:5:3:", "key 'parameters.workload' is given twice (first on line 3)"}},
      // Hostile nesting is an error, not a stack overflow of the parser; 64 levels still parse.
      {"deep_parens.yaml",
       head + "    dp: [1, 2]\nconstraints:\n  - \"" + std::string(20000, '(') + "1" + std::string(20000, ')') +
           " > 0\"\nobjectives: [latency]\n",
       {"deep_parens.yaml:6:5:", "key 'constraints.0'", "nested more than 64 deep", "column 65"}},
      {"deep_signs.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"" + std::string(30000, '-') + "1 < 0\"\nobjectives: [latency]\n",
       {"deep_signs.yaml:6:5:", "nested more than 64 deep"}},
      {"limit_name.yaml", head + "    dp: [1, 2]\nlimits:\n  latncy: 2.5\nobjectives: [latency]\n",
       {"limit_name.yaml:6:3:", "key 'limits.latncy'", "an objective to limit (latency, throughput,", "usd_per_token; or", "tpot)"}},
      {"limit_zero.yaml", head + "    dp: [1, 2]\nlimits:\n  memory: 0\nobjectives: [latency]\n",
       {"limit_zero.yaml:6:11:", "key 'limits.memory'", "expected a positive upper bound in bytes per NPU"}},
      {"limit_negative.yaml", head + "    dp: [1, 2]\nlimits:\n  latency: -2\nobjectives: [latency]\n",
       {"limit_negative.yaml:6:12:", "expected a positive upper bound in the objective's units", "got '-2'"}},
      {"limit_text.yaml", head + "    dp: [1, 2]\nlimits:\n  cost: 5M\nobjectives: [latency]\n",
       {"limit_text.yaml:6:9:", "key 'limits.cost'", "got '5M'"}},
      {"limit_inf.yaml", head + "    dp: [1, 2]\nlimits:\n  cost: .inf\nobjectives: [latency]\n",
       {"limit_inf.yaml:6:9:", "key 'limits.cost'", "a positive upper bound"}},
      {"limit_twice.yaml", head + "    dp: [1, 2]\nlimits:\n  cost: 5.0e6\n  network_cost: 6.0e6\nobjectives: [latency]\n",
       {"limit_twice.yaml:7:3:", "key 'limits.network_cost'", "one limit per objective (cost has one already)"}},
      // Units a user may think in: GiB for memory, tokens per second for throughput.
      {"limit_gib.yaml", head + "    dp: [1, 2]\nlimits:\n  memory: 72\nobjectives: [latency]\n",
       {"limit_gib.yaml:6:11:", "key 'limits.memory'", "bytes per NPU (72 GiB: 7.73e10)", "got '72'"}},
      {"limit_npus.yaml", head + "    dp: [1, 2]\nlimits:\n  npus: 0.5\nobjectives: [latency]\n",
       {"limit_npus.yaml:6:9:", "key 'limits.npus'", "a number of NPUs, at least 1"}},
      {"limit_rate.yaml", head + "    dp: [1, 2]\nlimits:\n  throughput: 5000\nobjectives: [latency]\n",
       {"limit_rate.yaml:6:15:", "seconds per token (at least 5,000 tokens/s: 2e-4)", "got '5000'"}},
      // Serving latencies in milliseconds: over 100 s to the first token or 10 s a token (in a
      // serving mode: in training both are the iteration's time).
      {"limit_ms.yaml", serving + "    dp: [1, 2]\nlimits:\n  ttft: 500\nobjectives: [latency]\n",
       {"limit_ms.yaml:6:9:", "key 'limits.ttft'", "an upper bound in seconds (200 ms: 0.2)", "got '500'"}},
      {"limit_tpot_ms.yaml", serving + "    dp: [1, 2]\nlimits:\n  per_output_token: 50\nobjectives: [latency]\n",
       {"limit_tpot_ms.yaml:6:21:", "key 'limits.per_output_token'", "seconds (200 ms: 0.2)", "got '50'"}},
      {"limit_list.yaml", head + "    dp: [1, 2]\nlimits: [latency]\nobjectives: [latency]\n",
       {"limit_list.yaml:5:9:", "key 'limits'", "a mapping"}},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(write_psa(c.file, c.text));
    for (const auto& e : c.expect) EXPECT_NE(msg.find(e), std::string::npos) << c.file << ": " << msg.substr(0, 300);
  }
  EXPECT_EQ(error_of(write_psa("training_ttft.yaml", head + "    dp: [1, 2]\nlimits:\n  ttft: 500\nobjectives: [latency]\n")),
            "");
  EXPECT_EQ(error_of(write_psa("nest64.yaml", head + "    dp: [1, 2]\nconstraints:\n  - \"" + std::string(64, '(') +
                                                  "workload.dp" + std::string(64, ')') + " > 0\"\nobjectives: [latency]\n")),
            "");
  // The CLI prints the same message and exits 1.
  const test::CliRun r = test::run_cli("space " + write_psa("cli_bad.yaml", head + "    dp: {pow2: {min: 1}}\nobjectives: latency\n"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("cli_bad.yaml:4:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parameters.workload.dp.pow2.max"), std::string::npos) << r.out;
}

// A parameter's values may be {values: [...]}, a list, or one scalar (docs/psa.md), in the file
// or by --set, for every kind of value: integers, enums, booleans, reals.
TEST(Psa, ScalarListAndValuesSpecsAreTheSame) {
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters:\n";
  struct Case {
    std::string stack, key, value, label;
  };
  const Case cases[] = {{"workload", "pp", "2", "2"},
                        {"workload", "sharding", "zero3", "zero3"},
                        {"workload", "sequence_parallel", "true", "true"},
                        {"collective", "chunks", "4", "4"},
                        {"network", "latency_ns", "500", "500"}};
  for (const auto& c : cases) {
    const std::string gene = c.stack + "." + c.key;
    std::vector<psa::DesignSpace> forms;
    for (const std::string& spec : {c.value, "[" + c.value + "]", "{values: [" + c.value + "]}"})
      forms.push_back(psa::load_psa(
          write_psa("spec_" + c.key + ".yaml", head + "  " + c.stack + ":\n    " + c.key + ": " + spec + "\nobjectives: [latency]\n")));
    forms.push_back(psa::load_psa(write_psa("spec_set.yaml", head + "  workload:\n    dp: [1, 2]\nobjectives: [latency]\n"),
                                  {"parameters." + gene + "=" + c.value}));
    for (const auto& ds : forms) {
      const auto it = std::find_if(ds.genes.begin(), ds.genes.end(), [&](const psa::GeneInfo& g) {
        return g.name == gene || g.name.rfind(gene + ".", 0) == 0;
      });
      ASSERT_NE(it, ds.genes.end()) << gene;
      EXPECT_EQ(it->labels, std::vector<std::string>{c.label}) << gene;
    }
  }
}

// An enumeration value means the code of the parameter it is compared with: 'ring' is the Ring
// topology next to a topology and the ring algorithm next to an algorithm.
TEST(Psa, EnumerationValuesTakeTheirParametersCodes) {
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters:\n"
                           "  network: {topology.0: [Switch, FullyConnected, Ring]}\n"
                           "  collective: {all_reduce_algorithm.0: [direct, halvingDoubling, ring, doubleBinaryTree]}\n"
                           "objectives: [latency]\nconstraints:\n";
  const std::pair<std::string, uint64_t> cases[] = {{"network.topology.0 == ring", 4},
                                                    {"ring == network.topology.0", 4},
                                                    {"network.topology.0 != Ring", 8},
                                                    {"collective.all_reduce_algorithm.0 == ring", 3},
                                                    {"collective.all_reduce_algorithm.0 != doubleBinaryTree", 9},
                                                    {"(network.topology.0) == Switch", 4},
                                                    {"((Switch)) == network.topology.0", 4},
                                                    {"network.topology.0 == network.topology.0", 12},
                                                    {"network.topology.0 != network.topology.1", 8}};
  for (const auto& [expr, count] : cases) {
    const auto ds = psa::load_psa(write_psa("enum_codes.yaml", head + "  - \"" + expr + "\"\n"));
    EXPECT_EQ(brute_force(ds), count) << expr;
    EXPECT_EQ(psa::feasible_count(ds), u128(count)) << expr;
  }
  for (const char* bad : {"-network.topology.0 == Ring", "true == Switch", "network.topology.0 * 2 == 2",
                          "network.topology.0 == collective.all_reduce_algorithm.0", "sum(network.topology) == 1",
                          "Ring != Switch", "network.topology.0 == direct"})
    EXPECT_THROW(psa::load_psa(write_psa("enum_bad.yaml", head + "  - \"" + std::string(bad) + "\"\n")), psa::ConfigError) << bad;
}

// Constants in constraints are decimal numbers (a fuzz test found hex and infinities accepted,
// and the enumeration value 1f1b unreadable); pow2 includes fractions; value labels read back
// as the values they name.
TEST(Psa, NumbersAndLabels) {
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters:\n"
                           "  workload: {dp: [1, 2], schedule: [1f1b, gpipe]}\n"
                           "  network: {bandwidth_GBps.0: {pow2: {min: 0.25, max: 2}}, latency_ns.1: [1.00000000001, 1.00000000002],\n"
                           "            latency_ns.2: {range: {min: 0.1, max: 0.3, step: 0.1}}}\n"
                           "objectives: [latency]\nconstraints:\n";
  const auto ds = psa::load_psa(write_psa("numbers.yaml", head + "  - \"workload.schedule == 1f1b\"\n  - \"workload.dp < 1.5e0\"\n"
                                                                 "  - \"network.latency_ns.2 * 1e+1 <= 20e-1\"\n"));
  EXPECT_EQ(psa::feasible_count(ds), u128(16));  // 4 bandwidths x 2 latencies x 2 of the 3 latencies
  EXPECT_EQ(brute_force(ds), 16u);
  int labelled = 0;
  for (const auto& g : ds.genes) {
    if (g.name == "network.bandwidth_GBps.0") EXPECT_EQ(g.labels, (std::vector<std::string>{"0.25", "0.5", "1", "2"}));
    else if (g.name == "network.latency_ns.1") EXPECT_NE(g.labels[0], g.labels[1]);
    else if (g.name == "network.latency_ns.2") EXPECT_EQ(g.labels, (std::vector<std::string>{"0.1", "0.2", "0.3"}));
    else continue;
    ++labelled;
  }
  EXPECT_EQ(labelled, 3);
  for (const char* bad : {"workload.dp == 0x10", "workload.dp < 1e400", "workload.dp < 1.2.3", "workload.dp < 2e"}) {
    const std::string err = error_of(write_psa("numbers_bad.yaml", head + "  - \"" + std::string(bad) + "\"\n"));
    EXPECT_NE(err.find("numbers_bad.yaml:"), std::string::npos) << bad << ": " << err;
  }
}

// A per-NPU bandwidth is read back as per-link bandwidth x links: 29 / 7 x 7 on a FullyConnected
// dimension is 29.000000000000004, which comparisons take as 29 (within 1e-12).
TEST(Psa, ComparisonsTolerateRoundingOfTheReadBack) {
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters:\n"
                           "  network: {topology.0: [Ring, FullyConnected], npu_bandwidth_GBps.0: [29, 50]}\n"
                           "objectives: [latency]\nconstraints:\n";
  const std::pair<std::string, uint64_t> cases[] = {{"network.npu_bandwidth_GBps.0 == 29", 2},
                                                    {"network.npu_bandwidth_GBps.0 <= 29", 2},
                                                    {"network.npu_bandwidth_GBps.0 > 29", 2},
                                                    {"network.npu_bandwidth_GBps.0 != 29", 2},
                                                    {"network.npu_bandwidth_GBps.0 < 29", 0},
                                                    {"network.npu_bandwidth_GBps.0 >= 29.0001", 2}};
  for (const auto& [expr, count] : cases) {
    const auto ds = psa::load_psa(write_psa("tolerance.yaml", head + "  - \"" + expr + "\"\n"));
    EXPECT_EQ(brute_force(ds), count) << expr;
    EXPECT_EQ(psa::feasible_count(ds), u128(count)) << expr;
  }
}

// Arithmetic that overflows: an infinity is larger than every finite value (it was taken as
// equal to 0 within an infinite tolerance), infinity minus infinity a NaN that only != holds for.
TEST(Psa, OverflowComparesAsInfinity) {
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters:\n"
                           "  workload: {dp: [1, 2, 4, 8]}\nobjectives: [latency]\nconstraints:\n";
  const std::pair<std::string, uint64_t> cases[] = {{"workload.dp * 1e308 > 0", 4},        // 2e308 = inf > 0
                                                    {"0 - workload.dp * 1e308 < 0", 4},    // -inf < 0
                                                    {"workload.dp * 1e308 <= 1e308", 1},   // dp 1 only
                                                    {"workload.dp * 1e308 == 1e308 * 2", 3},  // inf == inf
                                                    {"1e308 * 10 - 1e308 * 10 != 0", 4},   // NaN != 0
                                                    {"1e308 * 10 - 1e308 * 10 == 0", 0}};
  for (const auto& [expr, count] : cases) {
    const auto ds = psa::load_psa(write_psa("overflow.yaml", head + "  - \"" + expr + "\"\n"));
    EXPECT_EQ(brute_force(ds), count) << expr;
    EXPECT_EQ(psa::feasible_count(ds), u128(count)) << expr;
  }
}

TEST(Psa, RefusesComponentsTooLargeToEnumerate) {
  const auto ds = psa::load_psa(write_psa("huge.yaml",
      "base: configs/cosmic-system1-baseline.yaml\nparameters:\n  network:\n"
      "    latency_ns: {range: {min: 1, max: 1000}, per_dim: true}\n"
      "constraints: [\"sum(network.latency_ns) <= 2000\"]\nobjectives: latency\n"));
  try {
    psa::feasible_count(ds);
    FAIL() << "expected an error";
  } catch (const psa::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot count"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cosmic
