// Configuration files: presets, --set overrides, and errors that name file, line and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <vector>

#include "kernels/model.hpp"
#include "psa/config.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

namespace fs = std::filesystem;

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path, const std::vector<std::string>& sets = {}) {
  try {
    psa::load_config(path, sets);
  } catch (const psa::ConfigError& e) {
    return e.what();
  }
  return "";
}

// A file that is not UTF-8 is refused at the first bad byte, by line and column (a stray byte
// in a name would otherwise break every JSON output later); UTF-8 beyond ASCII is text.
TEST(Config, NonUtf8BytesAreRefusedWithTheirPlace) {
  const std::string ok = "model: GPT3-175B  # \u00e9 \u4e2d \U0001F600\n";
  EXPECT_EQ(error_of(write_temp("utf8.yaml", "name: caf\xc3\xa9\n" + ok)).find("UTF-8"), std::string::npos);
  for (const auto& [bytes, column] : {std::pair<std::string, int>{"w\xff\xfe", 8}, {"\xc0\xaf", 7},  // 0xFF; overlong '/'
                                      {"ab\xed\xa0\x80", 9}, {"x\xe2\x82", 8}}) {           // surrogate; cut short
    const std::string e = error_of(write_temp("latin.yaml", ok + "name: " + bytes + "\n"));
    EXPECT_NE(e.find("latin.yaml:2:" + std::to_string(column) + ": byte 0x"), std::string::npos) << e;
    EXPECT_NE(e.find("is not UTF-8"), std::string::npos) << e;
  }
  const std::string e = error_of(test::data_path("configs/cosmic-system1-baseline.yaml"), {"name=ab\xff"});
  EXPECT_NE(e.find("--set name:1:8: byte 0xFF is not UTF-8"), std::string::npos) << e;
}

TEST(Config, StudyBaselineLoads) {
  const auto lc = psa::load_config(test::data_path("configs/cosmic-system1-baseline.yaml"));
  const Config& c = lc.config;
  EXPECT_EQ(lc.model_name, "GPT3-175B");
  EXPECT_EQ(lc.system_name, "cosmic-system1");
  EXPECT_EQ(c.model.layers, 96);
  EXPECT_EQ(c.model.hidden, 12288);
  EXPECT_EQ(c.net.ndims, 4);
  EXPECT_EQ(c.net.dim[1].topology, Topology::FullyConnected);
  EXPECT_EQ(c.net.dim[1].algo[int(Coll::AllReduce)], Algo::Direct);
  EXPECT_DOUBLE_EQ(c.net.dim[0].link_bw_GBps, 187.5);
  EXPECT_DOUBLE_EQ(c.compute.peak_tflops[1], 10);
  EXPECT_EQ(c.work.dp * c.work.tp * c.work.pp * c.work.cp, 1024);
  EXPECT_EQ(c.work.sharding, Sharding::Zero3);
}

// A link's bandwidth may be as small as a design space's smallest per-NPU bandwidth (1e-9 GB/s)
// over a FullyConnected dimension's links, which `cosmic show --config` writes per link: a best
// point a sweep reported was refused by eval (1e-9 / 7 below the old floor of 1e-9).
TEST(Config, ALinkBandwidthAsSmallAsADesignSpaceMakes) {
  const std::string base = test::data_path("configs/cosmic-system1-baseline.yaml");
  EXPECT_EQ(psa::load_config(base, {"system.network.dims.1.bandwidth_GBps=1.4285714285714285e-10"}).config.net.dim[1].link_bw_GBps,
            1.4285714285714285e-10);
  EXPECT_NE(error_of(base, {"system.network.dims.1.bandwidth_GBps=0"}).find("expected a number in [1e-20, 1e+12]"), std::string::npos)
      << error_of(base, {"system.network.dims.1.bandwidth_GBps=0"});
}

TEST(Config, SetOverridesAnyKey) {
  const auto lc = psa::load_config(test::data_path("configs/cosmic-system1-baseline.yaml"),
                                   {"workload.dp=16", "workload.cp=4", "model.layers=48",
                                    "system.network.dims.3.bandwidth_GBps=200", "system.network.dims.0.algorithm=direct"});
  EXPECT_EQ(lc.config.work.dp, 16);
  EXPECT_EQ(lc.config.work.cp, 4);
  EXPECT_EQ(lc.config.model.layers, 48);
  EXPECT_DOUBLE_EQ(lc.config.net.dim[3].link_bw_GBps, 200);
  EXPECT_EQ(lc.config.net.dim[0].algo[int(Coll::AllGather)], Algo::Direct);
  EXPECT_NE(error_of(test::data_path("configs/cosmic-system1-baseline.yaml"), {"workload.dp=lots"}).find("--set"),
            std::string::npos);
  EXPECT_NE(error_of(test::data_path("configs/cosmic-system1-baseline.yaml"), {"workload.dp="}).find("expected a value"),
            std::string::npos);
  // --set model=PRESET picks another preset, as if the file named it; base.model=... in a PSA
  // whose base is a file goes the same way.
  const auto other = psa::load_config(test::data_path("configs/cosmic-system1-baseline.yaml"), {"model=GPT3-13B", "model.layers=20"});
  EXPECT_EQ(other.model_name, "GPT3-13B");
  EXPECT_EQ(other.config.model.hidden, 5140);
  EXPECT_EQ(other.config.model.layers, 20);
  // A mapping that --set itself made (a misspelt section): the error names --set, not the preset.
  const std::string e = error_of(test::data_path("configs/cosmic-system1-baseline.yaml"), {"system.calibraton.x=1"});
  EXPECT_EQ(e.rfind("--set: unknown key 'system.calibraton'", 0), 0u) << e;
}

// model.dropout follows the MLP unless given: GPT's recipes train with dropout, Llama's without.
TEST(Config, DropoutDefaultsByMlpAndCanBeSet) {
  const std::string base = test::data_path("configs/cosmic-system1-baseline.yaml");
  EXPECT_TRUE(psa::load_config(base, {"model=GPT3-13B"}).config.model.dropout);
  EXPECT_FALSE(psa::load_config(base, {"model=Llama-3.1-8B"}).config.model.dropout);
  EXPECT_TRUE(psa::load_config(base, {"model=Llama-3.1-8B", "model.dropout=true"}).config.model.dropout);
  EXPECT_FALSE(psa::load_config(base, {"model=GPT3-13B", "model.dropout=false"}).config.model.dropout);
  EXPECT_NE(error_of(base, {"model.dropout=0.1"}).find("key 'model.dropout'"), std::string::npos) << error_of(base, {"model.dropout=0.1"});
}

TEST(Config, SetPresetKeepsTheSectionsOtherKeys) {
  // --set system.preset=NAME swaps the preset and keeps what the file wrote next to it (nodes);
  // on a section that names its preset alone it reads as {preset: NAME}. An unknown name is
  // blamed on --set, and one written in the file on the file's line and column of the name.
  const std::string p = write_temp("preset_swap.yaml",
                                   "model: Llama-3.1-70B\nsystem: {preset: dgx-h100, nodes: 64}\n"
                                   "workload: {tp: 8, pp: 2, dp: 32, global_batch: 512}\n");
  const auto h200 = psa::load_config(p, {"system.preset=dgx-h200"});
  EXPECT_EQ(h200.system_name, "dgx-h200");
  EXPECT_EQ(h200.config.net.dim[1].npus, 64);
  EXPECT_DOUBLE_EQ(h200.config.compute.mem_capacity_bytes, 140.0 * (1 << 30));  // the H200 preset: 140 GiB
  const std::string q = write_temp("preset_scalar.yaml",
                                   "model: Llama-3.1-70B\nsystem: dgx-h100\nworkload: {tp: 8, dp: 4, global_batch: 64}\n");
  const auto small = psa::load_config(q, {"model.preset=Llama-3.1-8B", "system.preset=dgx-a100"});
  EXPECT_EQ(small.model_name, "Llama-3.1-8B");
  EXPECT_EQ(small.config.model.layers, 32);
  EXPECT_EQ(small.system_name, "dgx-a100");
  std::string e = error_of(p, {"system.preset=dgx-h900"});
  EXPECT_EQ(e.rfind("--set: key 'system.preset': no system preset or file named 'dgx-h900'", 0), 0u) << e;
  const std::string r = write_temp("preset_unknown.yaml",
                                   "model: Llama-3.1-70B\nsystem: {preset: dgx-h900, nodes: 64}\n"
                                   "workload: {tp: 8, pp: 2, dp: 32, global_batch: 512}\n");
  e = error_of(r);
  EXPECT_EQ(e.rfind(r + ":2:18: key 'system.preset': no system preset", 0), 0u) << e;
  // A system written out in full has no preset to swap (its keys would hide the preset's).
  const std::string full = write_temp("preset_none.yaml",
                                      "model: Llama-3.1-8B\nsystem:\n  compute: {peak_tflops: {bf16: 989}, memory_GiB: 80}\n"
                                      "  network: {dims: [{topology: Switch, npus: 8, bandwidth_GBps: 450}]}\n"
                                      "workload: {dp: 8, global_batch: 64}\n");
  e = error_of(full, {"system.preset=dgx-b200"});
  EXPECT_NE(e.find("'system' (at " + full + ":3:3) names no preset to swap"), std::string::npos) << e;
  // A configuration without a system: system.preset=NAME gives it one.
  const std::string none = write_temp("preset_absent.yaml", "model: Llama-3.1-8B\nworkload: {dp: 32, global_batch: 64}\n");
  EXPECT_EQ(psa::load_config(none, {"system.preset=dgx-h200"}).system_name, "dgx-h200");
}

TEST(Config, NodesParameterisesASystem) {
  const std::string p = write_temp("nodes.yaml",
                                   "model: GPT-22B\nsystem: {preset: dgx-a100, nodes: 16}\n"
                                   "workload: {tp: 8, dp: 16, global_batch: 64}\n");
  const auto lc = psa::load_config(p);
  EXPECT_EQ(lc.config.net.dim[1].npus, 16);
  const auto lc2 = psa::load_config(p, {"system.nodes=2", "workload.dp=2"});
  EXPECT_EQ(lc2.config.net.dim[1].npus, 2);
  // A system none of whose dimensions takes `nodes`: refused rather than ignored.
  const std::string q = write_temp("nodes_unused.yaml",
                                   "model: GPT3-175B\nsystem: {preset: cosmic-system1, nodes: 4}\n"
                                   "workload: {dp: 8, tp: 4, pp: 4, cp: 8}\n");
  const std::string e = error_of(q);
  EXPECT_EQ(e.rfind(q + ":2:", 0), 0u) << e;
  EXPECT_NE(e.find("key 'system.nodes': no network dimension of this system has 'npus: nodes'"), std::string::npos) << e;
  // A DGX preset's own nodes (4) with the user's dimensions in place of the preset's: accepted.
  const std::string own = write_temp("nodes_preset.yaml",
                                     "model: GPT-22B\nsystem:\n  preset: dgx-a100\n  network:\n    dims:\n"
                                     "      - {topology: Switch, npus: 8, bandwidth_GBps: 300}\n"
                                     "      - {topology: Switch, npus: 2, bandwidth_GBps: 25}\n"
                                     "workload: {tp: 8, dp: 2, global_batch: 64}\n");
  EXPECT_EQ(psa::load_config(own).config.net.dim[1].npus, 2);
  const std::string plain = write_temp("nodes_plain.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload: {tp: 8, dp: 4}\n");
  EXPECT_EQ(psa::load_config(plain, {"system.network.dims.1.npus=2", "workload.dp=2"}).config.net.dim[1].npus, 2);
  // The file's nodes with a --set of the nodes dimension's npus: the message names the --set
  // (the file alone is fine) and the key to set instead.
  const std::string e2 = error_of(p, {"system.network.dims.1.npus=2", "workload.dp=2"});
  EXPECT_EQ(e2.rfind(p + ":2:", 0), 0u) << e2;
  EXPECT_NE(e2.find("(--set gave system.network.dims.1.npus a number)"), std::string::npos) << e2;
  EXPECT_NE(e2.find("set system.nodes instead"), std::string::npos) << e2;
  EXPECT_EQ(error_of(q).find("--set gave"), std::string::npos);
  // A system file of the user's own whose dimensions do not use its own nodes: refused too, at
  // the system file's line (it had been taken for a preset's harmless default).
  const std::string sys = write_temp("own_system.yaml",
                                     "name: mine\nnodes: 32\ncompute: {peak_tflops: 1000, memory_bw_GBps: 3000, memory_GiB: 80}\n"
                                     "network:\n  dims:\n    - {topology: Switch, npus: 4, bandwidth_GBps: 400}\n"
                                     "    - {topology: Switch, npus: 64, bandwidth_GBps: 50}\n");
  const std::string uses = write_temp("uses_own_system.yaml", "model: GPT-22B\nsystem: " + sys + "\nworkload: {tp: 4, dp: 64}\n");
  const std::string e3 = error_of(uses);
  EXPECT_EQ(e3.rfind(sys + ":2:", 0), 0u) << e3;
  EXPECT_NE(e3.find("no network dimension of this system has 'npus: nodes'"), std::string::npos) << e3;
}

TEST(Config, UnknownKeyNamesFileLineAndKey) {
  const std::string p = write_temp("unknown.yaml",
                                   "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp: 8\n  dq: 4\n");
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p + ":5:"), std::string::npos) << e;
  EXPECT_NE(e.find("workload.dq"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of"), std::string::npos) << e;
}

// A head is hidden / heads wide unless head_dim says otherwise: a width that does not divide is
// refused at its line, and accepted with head_dim (GPT-3 13B: 5,140 wide, 40 heads of 128).
TEST(Config, HiddenDividesIntoHeadsUnlessHeadDimIsGiven) {
  const std::string odd = write_temp("odd_hidden.yaml", "model: {preset: Llama-3.1-8B, hidden: 4095}\nsystem: dgx-h100\nworkload: {}\n");
  EXPECT_EQ(error_of(odd), odd + ":1:39: key 'model.hidden': expected a multiple of heads (32), or head_dim given, got '4095'");
  const auto gpt = psa::load_config(test::data_path("configs/cosmic-system1-baseline.yaml"), {"model=GPT3-13B"});
  EXPECT_EQ(gpt.config.model.hidden, 5140);
  EXPECT_EQ(gpt.config.model.head_dim, 128);
}

// A misspelt model or system key is named as unknown (not reported as a missing `model:`); a
// key without a value gets its line; a missing one says the file lacks it.
TEST(Config, MissingOrMisspeltModelAndSystemAreNamed) {
  const std::string typo = write_temp("modle.yaml", "modle: GPT3-13B\nsystem: dgx-h100\nworkload: {}\n");
  EXPECT_EQ(error_of(typo), typo + ":1:1: unknown key 'modle' (expected one of: name, description, model, system, workload)");
  // A YAML merge key is read as a key, and named so.
  const std::string merged = write_temp("merge_key.yaml", "model: GPT3-13B\nsystem: dgx-h100\nworkload: {<<: {dp: 2}}\n");
  EXPECT_NE(error_of(merged).find(merged + ":3:12: unknown key 'workload.<<' (expected one of: mode,"), std::string::npos)
      << error_of(merged);
  EXPECT_NE(error_of(merged).find("; YAML merge keys are not read: write the keys out"), std::string::npos) << error_of(merged);
  const std::string empty = write_temp("no_system.yaml", "model: GPT3-13B\nsystem:\nworkload: {}\n");
  EXPECT_EQ(error_of(empty), empty + ":2:1: key 'system': expected a preset name, a file or a mapping (required, got nothing)");
  // One's own system file named without its .yaml, as presets are: the file meant is named.
  const std::string own = write_temp("own_sys.yaml", "name: own\ncompute: {peak_tflops: 100, memory_bw_GBps: 1000, memory_GiB: 40}\n"
                                                     "network:\n  dims: [{topology: Switch, npus: 8, bandwidth_GBps: 100}]\n");
  const std::string bare = write_temp("bare_system.yaml", "model: GPT3-13B\nsystem: own_sys\nworkload: {tp: 8}\n");
  EXPECT_NE(error_of(bare).find("; a file is named with its extension: " + own + ")"), std::string::npos) << error_of(bare);
  EXPECT_EQ(error_of(bare, {"system=" + own}), "");
  // Names and descriptions are text.
  const std::string listed = write_temp("listed_name.yaml", "name: [1, 2]\nmodel: GPT3-13B\nsystem: dgx-h100\nworkload: {}\n");
  EXPECT_EQ(error_of(listed), listed + ":1:7: key 'name': expected a string, got a list of 2 items");
  const std::string mapped = write_temp("mapped_name.yaml", "model: {preset: GPT3-13B, name: {a: 1}}\nsystem: dgx-h100\n"
                                                            "workload: {}\n");
  EXPECT_EQ(error_of(mapped), mapped + ":1:33: key 'model.name': expected a string, got a mapping");
  const std::string missing = write_temp("missing_system.yaml", "model: GPT3-13B\nworkload: {}\n");
  EXPECT_EQ(error_of(missing),
            missing + ": key 'system': expected a preset name, a file or a mapping (required; the file has no 'system:')");
}

// --set key paths are written out (no empty name, no index with a leading zero), a list's item is
// not removed alone, and values of the wrong shape say what the key takes.
TEST(Config, SetRefusesMalformedPathsAndShapes) {
  const std::string p = test::data_path("configs/cosmic-system1-baseline.yaml");
  const std::pair<const char*, const char*> cases[] = {
      {"workload.dp.=4", "--set workload.dp.=4: the key path 'workload.dp.' has an empty name (a dot at an end, or two)"},
      {"workload..dp=4", "--set workload..dp=4: the key path 'workload..dp' has an empty name"},
      {"system.network.dims.01.npus=4", "'01' in the key path: an index is written without leading zeros"},
      {"system.network.dims.1=null", "'system.network.dims' is a list, whose items are not removed one by one; --set "
                                     "system.network.dims=[...] replaces the whole list"},
      {"system.compute.peak_tflops=[1]", "expected a number or a mapping {fp32, fp16, bf16, fp8}, got a list of 1 item"},
      {"system.calibration.grad_bytes=0", "key 'system.calibration.grad_bytes': expected a number in [1, 16], got '0'"},
      {"system.calibration.ep_overlap=1.5", "key 'system.calibration.ep_overlap': expected a number in [0, 1], got '1.5'"},
      {"system.compute.peak_tflops=0x10", "expected a number in [1e-12, 1e+12], written in decimal, got '0x10'"}};
  for (const auto& [set, says] : cases) {
    const std::string e = error_of(p, {set});
    EXPECT_NE(e.find(says), std::string::npos) << set << ": " << e;
  }
  // A latency too small for a double reads as what it rounds to (it was refused as out of range).
  EXPECT_EQ(psa::load_config(p, {"system.network.dims.1.latency_ns=5e-324"}).config.net.dim[1].latency_ns, 5e-324);
}

TEST(Config, BadValueNamesWhatWasExpected) {
  const std::string p = write_temp("badvalue.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp: eight\n");
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p + ":4:"), std::string::npos) << e;
  EXPECT_NE(e.find("workload.tp"), std::string::npos) << e;
  EXPECT_NE(e.find("expected an integer"), std::string::npos) << e;
  EXPECT_NE(e.find("eight"), std::string::npos) << e;
  const std::string q = write_temp("badenum.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload: {schedule: zigzag}\n");
  EXPECT_NE(error_of(q).find("one of 1f1b, gpipe, interleaved"), std::string::npos) << error_of(q);
}

// recompute_modules: a list, one name, or names joined by commas (as --set gives them), with
// selective recompute only; mla_up_proj only in an MLA model. fp8_cache with FP8 GEMMs only.
TEST(Config, RecomputeModulesAndFp8Cache) {
  const std::string p = write_temp("recmods.yaml", "model: DeepSeek-V3\nsystem: {preset: dgx-h800, nodes: 2}\nworkload:\n"
                                                   "  ep: 16\n  recompute: selective\n  recompute_modules: [layernorm, mla_up_proj]\n"
                                                   "  precision: fp8\n  fp8_cache: true\n");
  const Workload w = psa::load_config(p).config.work;
  EXPECT_EQ(w.recompute_modules, kRecomputeLayerNorm | kRecomputeMlaUpProj);
  EXPECT_TRUE(w.fp8_cache);
  EXPECT_EQ(psa::load_config(p, {"workload.recompute_modules=mlp_act, core_attn"}).config.work.recompute_modules,
            kRecomputeMlpAct | kRecomputeCoreAttn);
  EXPECT_EQ(psa::load_config(p, {"workload.recompute_modules=LayerNorm"}).config.work.recompute_modules, kRecomputeLayerNorm);
  // Without the key, selective recompute drops the attention scores, as before revision 16.
  const std::string q = write_temp("recmods2.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp: 8\n  recompute: selective\n");
  EXPECT_EQ(psa::load_config(q).config.work.recompute_modules, kRecomputeCoreAttn);
  EXPECT_FALSE(psa::load_config(q).config.work.fp8_cache);
  EXPECT_EQ(error_of(p, {"workload.recompute_modules=layernorm,attention"}),
            "--set: key 'workload.recompute_modules': expected a list of core_attn, layernorm, mla_up_proj, mlp_act, got "
            "'layernorm,attention'");
  EXPECT_EQ(error_of(p, {"workload.recompute=none"}),
            p + ":6:22: key 'workload.recompute_modules': expected absent unless recompute is selective, got a list of 2 "
                "items (workload.recompute is from --set: add --set workload.recompute_modules=null)");
  EXPECT_EQ(error_of(p, {"workload.recompute=full", "workload.recompute_modules=null"}), "");
  EXPECT_NE(error_of(p, {"workload.precision=bf16"})
                .find(p + ":8:14: key 'workload.fp8_cache': expected false unless precision is fp8, got 'true'"),
            std::string::npos)
      << error_of(p, {"workload.precision=bf16"});
  EXPECT_TRUE(psa::load_config(p, {"workload.fp8_dispatch=true"}).config.work.fp8_dispatch);
  EXPECT_EQ(error_of(p, {"workload.fp8_cache=false", "workload.precision=bf16", "workload.fp8_dispatch=true"}),
            "--set: key 'workload.fp8_dispatch': expected false unless precision is fp8, got 'true'");
  EXPECT_EQ(error_of(q, {"workload.recompute_modules=mla_up_proj"}),
            "--set: key 'workload.recompute_modules': expected no mla_up_proj in a model without multi-head latent "
            "attention (kv_lora_rank: 0), got 'mla_up_proj'");
  // A list's entry that is no module is named where it stands.
  const std::string r = write_temp("recmods3.yaml", "model: DeepSeek-V3\nsystem: {preset: dgx-h800, nodes: 2}\nworkload:\n"
                                                    "  ep: 16\n  recompute: selective\n  recompute_modules: [layernorm, attention]\n");
  EXPECT_EQ(error_of(r), r + ":6:34: key 'workload.recompute_modules.1': expected one of core_attn, layernorm, mla_up_proj, "
                             "mlp_act, got 'attention'");
  EXPECT_EQ(psa::load_config(p, {"workload.recompute_modules=layernorm,\tmlp_act"}).config.work.recompute_modules,
            kRecomputeLayerNorm | kRecomputeMlpAct);
  EXPECT_NE(error_of(q, {"workload.precision=fp8", "workload.fp8_dispatch=true"}).find("false in a dense model"), std::string::npos);
  for (const char* empty : {"workload.recompute_modules=[]", "workload.recompute_modules=layernorm,"})
    EXPECT_NE(error_of(q, {empty}).find("expected a list of"), std::string::npos) << empty;
}

// recompute_layers is read with full recompute only (like vpp with the interleaved schedule).
TEST(Config, RecomputeLayersNeedFullRecompute) {
  const std::string p = write_temp("reclayers.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp: 8\n  recompute: selective\n  recompute_layers: 4\n");
  EXPECT_NE(error_of(p).find(p + ":6:21: key 'workload.recompute_layers': expected 0 unless recompute is full, got '4'"),
            std::string::npos)
      << error_of(p);
  EXPECT_EQ(psa::load_config(p, {"workload.recompute=full"}).config.work.recompute_layers, 4);
  EXPECT_NE(error_of(p, {"workload.recompute=full", "workload.recompute_layers=-1"}).find("an integer in [0,"), std::string::npos);
  // A file that fits, made not to by a --set of the other key: the file's line, and the --set
  // it needs too (a what-if without recompute on a config that recomputes some layers); the
  // same for vpp and the schedule. Where the key itself is from --set, no such note.
  const std::string q = write_temp("reclayers2.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp: 8\n  recompute: full\n"
                                                      "  recompute_layers: 4\n  schedule: interleaved\n  vpp: 2\n  pp: 2\n  "
                                                      "global_batch: 8\n");
  EXPECT_EQ(error_of(q), "");
  EXPECT_EQ(error_of(q, {"workload.recompute=none"}),
            q + ":6:21: key 'workload.recompute_layers': expected 0 unless recompute is full, got '4' (workload.recompute "
                "is from --set: add --set workload.recompute_layers=0)");
  EXPECT_EQ(error_of(q, {"workload.recompute=none", "workload.recompute_layers=0"}), "");
  EXPECT_EQ(error_of(q, {"workload.schedule=1f1b"}),
            q + ":8:8: key 'workload.vpp': expected 1 unless schedule is interleaved, got '2' (workload.schedule is from "
                "--set: add --set workload.vpp=1)");
  EXPECT_EQ(error_of(q, {"workload.recompute=none", "workload.recompute_layers=2"}),
            "--set: key 'workload.recompute_layers': expected 0 unless recompute is full, got '2'");
}

// cosmic has one 16-bit peak: an fp16 peak that differs from the bf16 one is refused, not
// silently replaced by it.
TEST(Config, DifferentFp16AndBf16PeaksAreRefused) {
  const std::string p = write_temp("peaks.yaml",
                                   "model: GPT-22B\nsystem:\n  preset: cosmic-system1\n  compute:\n"
                                   "    peak_tflops: {fp16: 100, bf16: 989}\nworkload: {dp: 1024}\n");
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p + ":5:"), std::string::npos) << e;
  EXPECT_NE(e.find("system.compute.peak_tflops.fp16"), std::string::npos) << e;
  EXPECT_NE(e.find("one 16-bit peak"), std::string::npos) << e;
  EXPECT_EQ(error_of(p, {"system.compute.peak_tflops.fp16=989"}), "");
}

// fp32 training: fp32 gradients and no master copy (4 + 4 + 8 bytes of model state per
// parameter); mixed precision's defaults are 2 + 2 + 12; a calibration's own values win.
TEST(Config, Fp32TrainingDefaultsToFp32GradientsAndNoMasterCopy) {
  const std::string p = write_temp("fp32.yaml",
                                   "model: GPT-22B\nsystem:\n  preset: cosmic-system1\n  compute:\n"
                                   "    peak_tflops: {fp32: 5, fp16: 10}\nworkload: {dp: 1024}\n");
  const Config mixed = psa::load_config(p, {}).config;
  EXPECT_EQ(mixed.cal.grad_bytes, 2);
  EXPECT_EQ(mixed.cal.master_bytes, 12);
  const Config fp32 = psa::load_config(p, {"model.dtype=fp32"}).config;
  EXPECT_EQ(fp32.model.dtype_bytes, 4);
  EXPECT_EQ(fp32.cal.grad_bytes, 4);
  EXPECT_EQ(fp32.cal.master_bytes, 8);
  EXPECT_EQ(psa::load_config(p, {"workload.precision=fp32"}).config.cal.grad_bytes, 4);
  const Config own = psa::load_config(p, {"model.dtype=fp32", "system.calibration.master_bytes=12"}).config;
  EXPECT_EQ(own.cal.grad_bytes, 4);
  EXPECT_EQ(own.cal.master_bytes, 12);
  // The GPU presets calibrate fp32 gradients for mixed precision, and leave the master copy to
  // the precision: 12 bytes mixed, 8 in fp32 (where they set 12, fp32 counted 4 + 4 + 12).
  for (const char* preset : {"dgx-a100", "dgx-h100", "dgx-h200", "dgx-h800", "dgx-b200", "gb200-nvl72"}) {
    const std::string q = write_temp("fp32-preset.yaml", std::string("model: LLaMA-7B\nsystem: ") + preset +
                                                             "\nworkload: {dp: 8, precision: fp32}\n");
    const Config c = psa::load_config(q, {"system.compute.peak_tflops.fp32=60"}).config;
    EXPECT_EQ(c.cal.master_bytes, 8) << preset;
    EXPECT_EQ(c.cal.grad_bytes, 4) << preset;
    EXPECT_EQ(psa::load_config(q, {"workload.precision=bf16"}).config.cal.master_bytes, 12) << preset;
  }
}

// Context parallelism's style: all-gather (the default, Megatron-LM) or all-to-all
// (DeepSpeed-Ulysses, also spelt ulysses).
TEST(Config, ContextParallelStyle) {
  const std::string p = write_temp("cpstyle.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload: {tp: 8}\n");
  EXPECT_EQ(psa::load_config(p, {}).config.work.cp_style, CpStyle::AllGather);
  EXPECT_EQ(psa::load_config(p, {"workload.cp_style=ulysses"}).config.work.cp_style, CpStyle::AllToAll);
  EXPECT_EQ(psa::load_config(p, {"workload.cp_style=alltoall"}).config.work.cp_style, CpStyle::AllToAll);
  EXPECT_NE(error_of(p, {"workload.cp_style=ring"}).find("one of allgather, alltoall"), std::string::npos)
      << error_of(p, {"workload.cp_style=ring"});
}

// A preset's memory in one unit gives way to an override in the other (file or --set); one
// mapping that writes both is refused.
TEST(Config, MemoryInEitherUnitReplacesThePresets) {
  const std::string p = write_temp("mem.yaml", "model: GPT-22B\nsystem: {preset: dgx-h100, nodes: 1, compute: {memory_GB: 100}}\n"
                                               "workload: {tp: 8}\n");
  EXPECT_EQ(psa::load_config(p, {}).config.compute.mem_capacity_bytes, 100e9);
  EXPECT_EQ(psa::load_config(p, {"system.compute.memory_GiB=40"}).config.compute.mem_capacity_bytes, 40.0 * (1 << 30));
  const std::string both = write_temp("mem2.yaml", "model: GPT-22B\nsystem: {preset: dgx-h100, nodes: 1, compute: "
                                                   "{memory_GB: 100, memory_GiB: 90}}\nworkload: {tp: 8}\n");
  EXPECT_NE(error_of(both).find("exactly one of memory_GiB or memory_GB"), std::string::npos) << error_of(both);
  // The same for the 16-bit peak: the A100 preset gives it as fp16 (312), an override as bf16
  // replaces it (it was refused, blaming the preset file); both in one mapping, unequal, are not.
  const std::string a100 = write_temp("a100.yaml", "model: GPT-22B\nsystem: {preset: dgx-a100, nodes: 1}\nworkload: {tp: 8}\n");
  EXPECT_EQ(psa::load_config(a100, {}).config.compute.peak_tflops[1], 312.0);
  EXPECT_EQ(psa::load_config(a100, {"system.compute.peak_tflops.bf16=300"}).config.compute.peak_tflops[1], 300.0);
  // A peak given is positive: 0 is refused where it is written (it was blamed on the model's dtype).
  EXPECT_NE(error_of(a100, {"system.compute.peak_tflops.bf16=0"})
                .find("--set: key 'system.compute.peak_tflops.bf16': expected a number in [1e-12, 1e+12], got '0'"),
            std::string::npos)
      << error_of(a100, {"system.compute.peak_tflops.bf16=0"});
  EXPECT_NE(error_of(a100, {"system.compute.peak_tflops={fp16: 300, bf16: 290}"}).find("the bf16 peak"), std::string::npos)
      << error_of(a100, {"system.compute.peak_tflops={fp16: 300, bf16: 290}"});
}

// Mixture of experts: the Mixtral preset's experts and top-k, the workload's ep; top_k defaults
// to 2 with experts; bad values name their key.
TEST(Config, MixtureOfExpertsKeys) {
  const auto lc = psa::load_config(test::data_path("configs/mixtral-8x7b-h100.yaml"));
  EXPECT_EQ(lc.config.model.experts, 8);
  EXPECT_EQ(lc.config.model.top_k, 2);
  EXPECT_EQ(lc.config.work.ep, 8);
  EXPECT_EQ(lc.config.work.etp, 0);  // not folded unless given
  const auto folded = psa::load_config(test::data_path("configs/mixtral-8x7b-h100.yaml"),
                                       {"workload.etp=1", "system.calibration.ep_overlap=0.5", "workload.ep_dispatch=dedup"});
  EXPECT_EQ(folded.config.work.etp, 1);
  EXPECT_EQ(folded.config.work.ep_dispatch, EpDispatch::NodeDedup);
  EXPECT_EQ(lc.config.work.ep_dispatch, EpDispatch::AllToAll);  // the default
  EXPECT_EQ(folded.config.cal.ep_overlap, 0.5);
  const std::string p = write_temp("moe.yaml", "model: {preset: GPT-22B, experts: 4}\nsystem: dgx-a100\nworkload: {tp: 8}\n");
  EXPECT_EQ(psa::load_config(p, {}).config.model.top_k, 2);
  EXPECT_EQ(psa::load_config(p, {}).config.work.ep, 1);
  EXPECT_EQ(psa::load_config(p, {"model.shared_experts=2"}).config.model.shared_experts, 2);
  // head_dim 0 is the default width (a preset's own may be reset with --set).
  const std::string q = test::data_path("configs/qwen3-235b-a22b-h100.yaml");
  EXPECT_EQ(psa::load_config(q).config.model.head_dim, 128);
  EXPECT_EQ(psa::load_config(q, {"model.head_dim=0"}).config.model.head_dim, 0);
  const std::pair<const char*, const char*> bad[] = {{"model.experts=1", "0 (a dense model) or at least 2"},
                                                     {"model.top_k=5", "at most experts (4)"},
                                                     {"workload.ep=0", "an integer in [1,"},
                                                     {"model.head_dim=-1", "an integer in [0, 65536]"}};
  for (const auto& [set, want] : bad) {
    const std::string e = error_of(p, {set});
    EXPECT_NE(e.find(want), std::string::npos) << e;
    EXPECT_NE(e.find(std::string(set).substr(0, std::string(set).find('='))), std::string::npos) << e;
  }
  // Dense layers among the experts: a mixture's only, and leaving an expert layer.
  const std::string mixtral = write_temp("mixtral.yaml", "model: Mixtral-8x7B\nsystem: dgx-a100\nworkload: {tp: 8}\n");
  const Config alternating = psa::load_config(mixtral, {"model.moe_layer_step=2", "model.dense_ffn=4096"}).config;
  EXPECT_EQ(alternating.model.moe_layer_step, 2);
  EXPECT_EQ(alternating.model.dense_ffn, 4096);
  EXPECT_EQ(psa::load_config(mixtral, {"model.first_dense_layers=3"}).config.model.first_dense_layers, 3);
  const std::pair<std::vector<std::string>, const char*> placements[] = {
      {{"model.first_dense_layers=32"}, "key 'model.first_dense_layers': expected an integer in [0, 31]"},
      {{"model.moe_layer_step=0"}, "key 'model.moe_layer_step': expected an integer in [1, 32]"},
      {{"model.first_dense_layers=20", "model.moe_layer_step=20"},
       "key 'model.moe_layer_step': expected a step that leaves an expert layer after the first_dense_layers (20) of 32"},
      {{"model.experts=0", "model.dense_ffn=4096"}, "key 'model.dense_ffn': expected absent in a dense model"},
      {{"model.dense_ffn=4096"}, "key 'model.dense_ffn': expected absent where every layer holds experts"}};
  EXPECT_EQ(psa::load_config(mixtral, {"model.moe_layer_step=2", "model.dense_ffn=0"}).config.model.dense_ffn, 0);  // ffn
  // Multi-head latent attention: its widths only with kv_lora_rank, every head its own keys, no biases.
  const Config v3 = psa::load_config(mixtral, {"model=DeepSeek-V3"}).config;
  EXPECT_EQ(v3.model.kv_lora_rank, 512);
  EXPECT_EQ(v3.model.rope_head_dim, 64);
  const std::pair<std::vector<std::string>, const char*> latent[] = {
      {{"model.rope_head_dim=64"}, "key 'model.rope_head_dim': expected absent without kv_lora_rank"},
      {{"model.kv_lora_rank=512"}, "key 'model.kv_heads': expected heads (32) with kv_lora_rank"},
      {{"model=DeepSeek-V3", "model.biases=true"}, "key 'model.biases': expected false with kv_lora_rank"}};
  for (const auto& [sets, want] : latent) {
    const std::string e = error_of(mixtral, sets);
    EXPECT_NE(e.find(want), std::string::npos) << e;
  }
  // Group-limited routing: both keys, a mixture's, groups dividing the experts and holding top_k.
  EXPECT_EQ(v3.model.expert_groups, 8);
  EXPECT_EQ(v3.model.groups_per_token, 4);
  const std::pair<std::vector<std::string>, const char*> grouped[] = {
      {{"model.expert_groups=4"}, "key 'model.expert_groups': expected given with groups_per_token"},
      {{"model.expert_groups=3", "model.groups_per_token=1"}, "key 'model.expert_groups': expected a divisor of experts (8)"},
      {{"model.expert_groups=4", "model.groups_per_token=5"}, "key 'model.groups_per_token': expected at most expert_groups (4)"},
      {{"model.expert_groups=8", "model.groups_per_token=1"},
       "key 'model.groups_per_token': expected enough groups for top_k (2) experts: 1 groups of 1 hold fewer"},
      {{"model.experts=0", "model.expert_groups=1", "model.groups_per_token=1"},
       "key 'model.expert_groups': expected absent in a dense model"},
      {{"model.experts=0", "workload.overlap_ep_comm=true"},
       "key 'workload.overlap_ep_comm': expected false in a dense model (experts: 0): it has no all-to-alls"}};
  for (const auto& [sets, want] : grouped) {
    const std::string e = error_of(mixtral, sets);
    EXPECT_NE(e.find(want), std::string::npos) << e;
  }
  for (const auto& [sets, want] : placements) {
    const std::string e = error_of(mixtral, sets);
    EXPECT_NE(e.find(want), std::string::npos) << e;
  }
  const std::string dense = write_temp("dense_shared.yaml", "model: {preset: GPT-22B, shared_experts: 1}\nsystem: dgx-a100\n"
                                                            "workload: {tp: 8}\n");
  EXPECT_NE(error_of(dense).find("key 'model.shared_experts': expected 0 in a dense model"), std::string::npos)
      << error_of(dense);
  const std::string dense_top_k = write_temp("dense_top_k.yaml", "model: {preset: GPT-22B, top_k: 2}\nsystem: dgx-a100\n");
  EXPECT_NE(error_of(dense_top_k).find("key 'model.top_k': expected only with experts"), std::string::npos)
      << error_of(dense_top_k);
  EXPECT_EQ(psa::load_config(mixtral, {"model.experts=0"}).config.model.experts, 0);  // a dense variant
}

TEST(Config, ErrorsInsidePresetsNameThePresetFile) {
  const std::string model = write_temp("badmodel.yaml", "name: broken\nlayers: 4\nhidden: 64\nffn: 256\nheads: 4\n"
                                                        "seq: 128\nvocab: 100\nmlp: relu\n");
  const std::string p = write_temp("usesbad.yaml", "model: " + model + "\nsystem: dgx-a100\nworkload: {}\n");
  const std::string e = error_of(p);
  EXPECT_NE(e.find(model + ":8:"), std::string::npos) << e;
  EXPECT_NE(e.find("model.mlp"), std::string::npos) << e;
}

// Overrides written next to `preset:` are errors of the file that writes them, at their line,
// not of the preset's file.
TEST(Config, ErrorsInPresetOverridesNameTheirOwnFileAndLine) {
  const std::string value = write_temp(
      "override1.yaml", "model: GPT-22B\nsystem: {preset: dgx-a100, compute: {peak_tflops: 1e-300}}\nworkload: {}\n");
  std::string e = error_of(value);
  EXPECT_EQ(e.rfind(value + ":2:", 0), 0u) << e;
  EXPECT_NE(e.find("system.compute.peak_tflops"), std::string::npos) << e;
  const std::string key = write_temp("override2.yaml",
                                     "model: GPT-22B\nsystem:\n  preset: dgx-a100\n  compute: {bogus: 3}\nworkload: {}\n");
  e = error_of(key);
  EXPECT_EQ(e.rfind(key + ":4:", 0), 0u) << e;
  EXPECT_NE(e.find("unknown key 'system.compute.bogus'"), std::string::npos) << e;
  const std::string model = write_temp("override3.yaml",
                                       "model: {preset: GPT-22B, layers: 0}\nsystem: dgx-a100\nworkload: {}\n");
  e = error_of(model);
  EXPECT_EQ(e.rfind(model + ":1:", 0), 0u) << e;
  EXPECT_NE(e.find("model.layers"), std::string::npos) << e;
}

// A precision the system has no peak for is an error of the key that chose it (--set, the
// workload or the model), naming where the system's peaks are; without one, of the peaks.
TEST(Config, PrecisionWithoutAPeakNamesTheKeyThatChoseIt) {
  const std::string base = test::data_path("configs/cosmic-system1-baseline.yaml");  // bf16 / fp16 peaks only
  std::string e = error_of(base, {"workload.precision=fp8"});
  EXPECT_EQ(e.rfind("--set: key 'workload.precision'", 0), 0u) << e;
  EXPECT_NE(e.find("cosmic-system1.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("gives no fp8 peak"), std::string::npos) << e;
  const std::string model = write_temp("dtype8.yaml", "model: {preset: GPT3-13B, dtype: fp8}\nsystem: cosmic-system1\nworkload: {}\n");
  e = error_of(model);
  EXPECT_EQ(e.rfind(model + ":1:", 0), 0u) << e;
  EXPECT_NE(e.find("key 'model.dtype'"), std::string::npos) << e;
  const std::string peaks = write_temp("fp32only.yaml",
                                       "model: {layers: 2, hidden: 64, ffn: 256, heads: 4, seq: 128, vocab: 100}\n"
                                       "system:\n  compute: {peak_tflops: {fp32: 19.5}, memory_bw_GBps: 1000, memory_GiB: 80}\n"
                                       "  network: {dims: [{topology: Ring, npus: 8, bandwidth_GBps: 100}]}\n"
                                       "workload: {dp: 8}\n");
  e = error_of(peaks);
  EXPECT_NE(e.find("key 'system.compute.peak_tflops'"), std::string::npos) << e;
  EXPECT_NE(e.find("16-bit"), std::string::npos) << e;
  EXPECT_EQ(error_of(peaks, {"workload.precision=fp32"}), "") << "fp32 has its peak";
}

TEST(Config, MalformedYamlNamesFileAndLine) {
  const std::string p = write_temp("malformed.yaml", "model: GPT-22B\nsystem: [dgx-a100\nworkload: {}\n");
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p + ":"), std::string::npos) << e;
  EXPECT_NE(e.find("YAML syntax error"), std::string::npos) << e;
  // `{tp:8}` is one key without a value in YAML (a colon ends a key before a space only): said,
  // with the fix, in a file and in a --set.
  const std::string colon = write_temp("colon.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload: {tp:8}\n");
  EXPECT_EQ(error_of(colon), colon + ":3:12: key 'workload.tp:8' has no value: YAML needs a space after a key's colon "
                                     "(write 'tp: 8')");
  const std::string spaced = write_temp("colon_ok.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload: {tp: 8}\n");
  EXPECT_EQ(error_of(spaced), "");
  EXPECT_NE(error_of(spaced, {"workload={tp:4}"}).find("has no value: YAML needs a space after a key's colon (write 'tp: 4')"),
            std::string::npos)
      << error_of(spaced, {"workload={tp:4}"});
  // A second document was ignored; now it is named.
  const std::string two = write_temp("two_docs.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload: {}\n---\nworkload: {dp: 2}\n");
  EXPECT_NE(error_of(two).find(two + ":5: a second YAML document"), std::string::npos) << error_of(two);
  const std::string tab = write_temp("tab.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp: 8\n \tdp: 1\n");
  EXPECT_NE(error_of(tab).find("(line 5 is indented with a tab; YAML indents with spaces)"), std::string::npos) << error_of(tab);
  // Without a marker, a first key indented further than the next reads as two documents too.
  const std::string indented = write_temp("indented.yaml", " name: x\nmodel: GPT-22B\nsystem: dgx-a100\nworkload: {}\n");
  EXPECT_NE(error_of(indented).find(indented + ":2: indented less than the file's first key"), std::string::npos)
      << error_of(indented);
}

// What yaml-cpp reads without a word: a quoted string left open (to the end of the file, or on
// into the next lines), a tag, a NUL byte (read as an escape). Each is refused with its place; a
// quoted string continued on lines indented further, and quotes inside quotes, are text.
TEST(Config, OpenQuotesTagsAndControlBytesAreRefused) {
  const std::string head = "model: GPT-22B\nsystem: dgx-a100\nworkload: {tp: 8}\n";
  const std::pair<std::string, std::string> bad[] = {
      {head + "name: \"x\n", ":4:7: key 'name': a quoted string that is not closed; expected its closing \" (the file ends inside it)"},
      {head + "name: 'x\n", ":4:7: key 'name': a quoted string that is not closed; expected its closing '"},
      {"name: \"x\n" + head, ":1:7: key 'name': a quoted string that is not closed; expected its closing \" before line 2"},
      {head + "description: \"a \\\" b\n", ":4:14: key 'description': a quoted string that is not closed"},
      {"model: GPT-22B\nsystem: dgx-a100\nworkload: {tp: !foo 8}\n", ":3:16: key 'workload.tp': a YAML tag (!foo) is not read here"},
      {"model: GPT-22B\nsystem: dgx-a100\nworkload: {tp: !!binary 8}\n", ":3:16: key 'workload.tp': a YAML tag (!!binary)"},
      {"model: GPT-22B\nsystem: dgx-a100\n!!str workload: {tp: 8}\n", ":3:1: key 'workload': a YAML tag"},
      {head + std::string("name: a\0b\n", 10), ":4:8: byte 0x00 is a control character, not text"},
  };
  for (const auto& [text, says] : bad) {
    const std::string p = write_temp("quotes.yaml", text);
    EXPECT_NE(error_of(p).find(p + says), std::string::npos) << error_of(p);
  }
  const std::string ok =
      write_temp("quotes_ok.yaml", head + "name: \"a \\\" b 'c'\"\ndescription: 'it''s \"one\"\n  and two'\n");
  EXPECT_EQ(error_of(ok), "");
  EXPECT_NE(error_of(ok, {"workload.dp=!foo 1"}).find("a YAML tag (!foo)"), std::string::npos);
}

// Null or empty values of keys that are read only when given are errors, not "not given".
TEST(Config, EmptyValuesAreNotAbsentOnes) {
  const std::string nodes = write_temp("nodes_null.yaml", "model: GPT-22B\nsystem: {preset: dgx-a100, nodes: ~}\nworkload: {tp: 8}\n");
  const std::string base = test::data_path("configs/cosmic-system1-baseline.yaml");
  // A key written without a value is named at its own line, not at the next token's.
  const std::string bare = write_temp("bare_key.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp:\n  pp: 1\n");
  const std::string bare_end = write_temp("bare_end.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  pp: 1\n  tp:");
  const std::tuple<std::string, std::string, std::string> cases[] = {
      {nodes, "", nodes + ":2:35: key 'system.nodes': expected an integer in [1, 16777216], got nothing"},
      {bare, "", bare + ":4:3: key 'workload.tp': expected a value, got nothing"},
      {bare_end, "", bare_end + ":5:3: key 'workload.tp': expected a value, got nothing"},
      {base, "workload.precision=''", "key 'workload.precision': expected one of fp32, fp16, bf16, fp8, got ''"},
      {base, "model.dtype=''", "key 'model.dtype': expected one of"},
      {base, "model.params_billion=[1]", "key 'model.params_billion': expected a number"},
      {base, "model=null", "--set: key 'model': expected a preset name, a file or a mapping (required; --set model=null removed it)"},
  };
  for (const auto& [path, set, says] : cases) {
    const std::string e = set.empty() ? error_of(path) : error_of(path, {set});
    EXPECT_NE(e.find(says), std::string::npos) << e;
  }
}

TEST(Config, UnexpectedShapesAreErrorsNotCrashes) {
  // Shapes the strict reader does not foresee still come back as ConfigError with a place.
  const std::string preset_map = write_temp("shape1.yaml", "model: {preset: {a: 1}}\nsystem: dgx-a100\nworkload: {}\n");
  EXPECT_NE(error_of(preset_map).find(preset_map + ":1:17: key 'model.preset': expected a preset name or a file, got a mapping"),
            std::string::npos)
      << error_of(preset_map);
  const std::string base = test::data_path("configs/cosmic-system1-baseline.yaml");
  EXPECT_NE(error_of(base, {"system={preset: [a]}"}).find("--set: key 'system.preset': expected a preset name or a "
                                                           "file, got a list of 1 item"),
            std::string::npos)
      << error_of(base, {"system={preset: [a]}"});
  // A key without a value is an error at its place, in the file or next to a preset (whose own
  // key has another line), not a default.
  const std::string empty = write_temp("shape_null.yaml", "model: GPT-22B\nsystem: {preset: dgx-a100, compute: "
                                                          "{peak_tflops: {bf16: }}}\nworkload: {dp: ~}\n");
  EXPECT_EQ(error_of(empty).rfind(empty + ":2:", 0), 0u) << error_of(empty);
  EXPECT_NE(error_of(empty).find("key 'system.compute.peak_tflops.bf16': expected a value, got nothing"), std::string::npos)
      << error_of(empty);
  // NPUs beyond the model's range (the count saturated and was printed as 2^31 + 1).
  const std::string big = write_temp("shape_big.yaml",
                                     "model: GPT-22B\nsystem:\n  compute: {peak_tflops: 100, memory_bw_GBps: 1000, "
                                     "memory_GiB: 80}\n  network: {dims: [{topology: Ring, npus: 65536, bandwidth_GBps: 1}, "
                                     "{topology: Ring, npus: 65536, bandwidth_GBps: 1}]}\nworkload: {}\n");
  EXPECT_NE(error_of(big).find(big + ":4:19: key 'system.network.dims': expected dimensions of at most 2147483648 NPUs"),
            std::string::npos)
      << error_of(big);
  // A configuration without a workload is an error (it read as every default, dp = tp = 1).
  const std::string no_work = write_temp("shape_nowork.yaml", "model: GPT-22B\nsystem: dgx-a100\n");
  EXPECT_NE(error_of(no_work).find(no_work + ":1:1: key 'workload': expected a mapping (required"), std::string::npos)
      << error_of(no_work);
  const std::string empty_dp = write_temp("shape_null2.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload: {dp: ~}\n");
  EXPECT_NE(error_of(empty_dp).find(empty_dp + ":3:16: key 'workload.dp': expected a value"), std::string::npos)
      << error_of(empty_dp);
  const std::string dims = write_temp(
      "shape2.yaml", "model: GPT-22B\nsystem: {preset: dgx-a100, nodes: 2, network: {dims: [5]}}\nworkload: {}\n");
  EXPECT_EQ(error_of(dims).rfind(dims + ":2:", 0), 0u) << error_of(dims);
  EXPECT_NE(error_of(dims).find("key 'system.network.dims.0': expected a mapping, got '5'"), std::string::npos)
      << error_of(dims);
  // --set into a scalar: the error names the --set, the file and line of that scalar (dp: 4 is
  // on line 5) and the key that could not be set.
  const std::string scalar = write_temp("shape3.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  tp: 8\n  dp: 4\n");
  const std::string e = error_of(scalar, {"workload.dp.x=1"});
  EXPECT_EQ(e.rfind("--set workload.dp.x=1: 'workload.dp' is a value ('4', at " + scalar + ":5:", 0), 0u) << e;
  EXPECT_NE(e.find("not a mapping with a key 'x'"), std::string::npos) << e;
}

// A model or system written inline needs no name (config.md: `name` is information only).
TEST(Config, InlineModelAndSystemNeedNoName) {
  const std::string p = write_temp(
      "inline.yaml",
      "model: {layers: 40, hidden: 5120, ffn: 20480, heads: 40, seq: 2048, vocab: 50257}\n"
      "system: {compute: {peak_tflops: {fp16: 100}, memory_bw_GBps: 1000, memory_GiB: 80},\n"
      "         network: {dims: [{topology: Switch, npus: 8, bandwidth_GBps: 100, latency_ns: 500}]}}\n"
      "workload: {dp: 8, global_batch: 64}\n");
  const auto lc = psa::load_config(p);
  EXPECT_EQ(lc.model_name, "inline");
  EXPECT_EQ(lc.system_name, "inline");
  EXPECT_EQ(lc.config.model.layers, 40);
  EXPECT_EQ(lc.config.net.dim[0].npus, 8);
}

// yaml-cpp keeps the first of two equal keys; cosmic refuses the file instead of dropping one.
TEST(Config, KeysGivenTwiceAreErrors) {
  const std::string p = write_temp("twice.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  dp: 8\n  tp: 2\n  dp: 16\n");
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p + ":6:3: key 'workload.dp' is given twice (first on line 4)"), std::string::npos) << e;
  const std::string dir = error_of(::testing::TempDir());
  EXPECT_NE(dir.find("is a directory"), std::string::npos) << dir;
  // A list as a key (YAML allows it) is named where it is, not "unexpected structure".
  const std::string listed = write_temp("listkey.yaml", "model: GPT-22B\nsystem: dgx-a100\nworkload:\n  ? [dp, tp]\n  : 8\n");
  EXPECT_EQ(error_of(listed), listed + ":4:5: a list or mapping as a key under 'workload'; expected a key name");
  // No dimensions over a preset whose dimensions use `nodes`: the dimensions are at fault, not `nodes`.
  const std::string nodes = write_temp("nodes.yaml", "model: GPT-22B\nsystem: {preset: dgx-a100, nodes: 2}\nworkload: {tp: 8}\n");
  EXPECT_NE(error_of(nodes, {"system.network.dims=[]"}).find("key 'system.network.dims': expected a list of 1 to 8 dimensions"),
            std::string::npos)
      << error_of(nodes, {"system.network.dims=[]"});
  // An endless input (or a huge wrong file) is refused after 64 MiB, not read until memory runs out.
  EXPECT_EQ(error_of("/dev/zero"), "/dev/zero: more than 64 MiB, expected a YAML file");
}

TEST(Config, UnknownPresetListsTheKnownOnes) {
  const std::string p = write_temp("nopreset.yaml", "model: GPT-9000\nsystem: dgx-a100\nworkload: {}\n");
  const std::string e = error_of(p);
  EXPECT_NE(e.find("GPT-9000"), std::string::npos) << e;
  EXPECT_NE(e.find("GPT3-175B"), std::string::npos) << e;
}

// The .yaml files of one data/ folder, sorted.
std::vector<fs::path> shipped(const std::string& kind) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(test::data_path(kind)))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Each model preset that gives its authors' parameter count (params_billion) counts as many
// in the model (kernels/model.hpp model_params), within 2% (what a preset leaves out: some
// biases, a final norm; the presets' comments say which); a mixture's active parameters
// (active_params_billion, given to 2 or 3 digits) within 3%.
TEST(Config, ModelPresetsCountTheirPublishedParameters) {
  int checked = 0;
  for (const fs::path& p : shipped("models")) {
    std::ifstream in(p);
    std::string line;
    double published = 0, active = 0;
    while (std::getline(in, line)) {
      if (line.rfind("params_billion:", 0) == 0) published = std::stod(line.substr(15)) * 1e9;
      if (line.rfind("active_params_billion:", 0) == 0) active = std::stod(line.substr(22)) * 1e9;
    }
    if (published == 0) continue;
    ++checked;
    const ModelSpec m = psa::load_config(write_temp("params.yaml", "model: " + p.stem().string() +
                                                                         "\nsystem: dgx-a100\nworkload: {}\n"))
                            .config.model;
    EXPECT_NEAR(model_params(m) / published, 1.0, 0.02) << p.stem() << ": " << model_params(m) / 1e9 << " B";
    EXPECT_EQ(active > 0, m.experts > 0) << p.stem() << ": active_params_billion given for a mixture, and only there";
    if (active > 0)
      EXPECT_NEAR(active_params(m) / active, 1.0, 0.03) << p.stem() << ": " << active_params(m) / 1e9 << " B active";
  }
  EXPECT_GE(checked, 6);  // the mixtures of experts and Qwen3-32B
}

// The cluster presets run collectives as NCCL does: rings, and all-to-alls (expert parallelism,
// Ulysses) point to point.
TEST(Config, ClusterPresetsSendAllToAllsDirect) {
  for (const char* preset : {"dgx-a100", "dgx-h100", "dgx-h200", "dgx-h800", "dgx-b200", "gb200-nvl72"}) {
    const Config c = psa::load_config(write_temp(std::string("a2a-") + preset + ".yaml",
                                                 std::string("model: GPT-22B\nsystem: ") + preset + "\nworkload: {}\n"))
                         .config;
    ASSERT_EQ(c.net.ndims, 2) << preset;
    for (int d = 0; d < c.net.ndims; ++d) {
      const NetDim& dim = c.net.dim[d];
      EXPECT_EQ(dim.algo[int(Coll::AllToAll)], Algo::Direct) << preset << " dim " << d;
      for (Coll other : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter})
        EXPECT_EQ(dim.algo[int(other)], Algo::Ring) << preset << " dim " << d;
    }
  }
  // `algorithm` set over the preset means every collective, the all-to-all too; `algorithms`
  // given with it in the same override still name their own.
  const std::string p = write_temp("a2a-set.yaml", "model: GPT-22B\nsystem: dgx-h100\nworkload: {}\n");
  const Config ring = psa::load_config(p, {"system.network.dims.1.algorithm=ring"}).config;
  for (int k = 0; k < kNumColls; ++k) EXPECT_EQ(ring.net.dim[1].algo[k], Algo::Ring) << k;
  EXPECT_EQ(ring.net.dim[0].algo[int(Coll::AllToAll)], Algo::Direct);  // the other dimension keeps the preset's
  const std::string both = write_temp("a2a-both.yaml", "model: GPT-22B\nsystem:\n  preset: dgx-h100\n  network:\n    dims:\n"
                                                       "      - {topology: Switch, npus: 8, bandwidth_GBps: 450, algorithm: "
                                                       "ring, algorithms: {all_to_all: halvingDoubling}}\n"
                                                       "      - {topology: Switch, npus: 4, bandwidth_GBps: 50}\nworkload: {}\n");
  EXPECT_EQ(psa::load_config(both).config.net.dim[0].algo[int(Coll::AllToAll)], Algo::HalvingDoubling);
}

// network.prices: a tier's keys replace LIBRA's one by one; the others stay; mistakes are named.
TEST(Config, NetworkPricesReplaceLibrasPerTier) {
  const std::string p = write_temp("prices.yaml", "model: GPT-22B\nsystem:\n  preset: dgx-h100\n  network:\n"
                                                  "    prices: {pod: {nic: 50}, chiplet: {switch: 1.5, link: 3}}\nworkload: {}\n");
  const Config c = psa::load_config(p).config;
  const Network libra;
  EXPECT_EQ(c.net.price[3].nic_usd_per_GBps, 50);
  EXPECT_EQ(c.net.price[3].link_usd_per_GBps, libra.price[3].link_usd_per_GBps);  // 7.8
  EXPECT_EQ(c.net.price[3].switch_usd_per_GBps, libra.price[3].switch_usd_per_GBps);
  EXPECT_EQ(c.net.price[0].switch_usd_per_GBps, 1.5);
  EXPECT_EQ(c.net.price[0].link_usd_per_GBps, 3);
  EXPECT_EQ(c.net.price[2].link_usd_per_GBps, 4);
  EXPECT_EQ(c.net.price[0].nic_usd_per_GBps, 0);
  EXPECT_NE(error_of(p, {"system.network.prices.rack.link=1"}).find("unknown key 'system.network.prices.rack'"), std::string::npos)
      << error_of(p, {"system.network.prices.rack.link=1"});
  EXPECT_NE(error_of(p, {"system.network.prices.pod.nic=-1"}).find("system.network.prices.pod.nic': expected a number in [0"),
            std::string::npos)
      << error_of(p, {"system.network.prices.pod.nic=-1"});
}

TEST(Config, EveryShippedPresetLoads) {
  const auto configs = shipped("configs"), models = shipped("models"), systems = shipped("systems");
  ASSERT_GT(configs.size(), 0u);
  ASSERT_GT(models.size(), 0u);
  ASSERT_GT(systems.size(), 0u);
  // A shipped configuration's parallel layout covers its system's NPUs.
  for (const auto& f : configs) {
    const Config c = psa::load_config(f.string()).config;
    EXPECT_EQ(int64_t(c.work.dp) * c.work.tp * c.work.pp * c.work.cp, total_npus(c.net)) << f;
  }
  // Each model with a shipped system, each system with a shipped model; a preset's name is its
  // file name (presets are found by it).
  for (const auto& f : models) {
    const auto lc = psa::load_config(write_temp("model-" + f.stem().string() + ".yaml",
                                                "model: " + f.string() + "\nsystem: dgx-a100\nworkload: {}\n"));
    const ModelSpec& m = lc.config.model;
    EXPECT_EQ(lc.model_name, f.stem().string());
    EXPECT_GT(m.layers, 0) << f;
    EXPECT_GT(m.hidden, 0) << f;
    EXPECT_GT(m.ffn, 0) << f;
    EXPECT_GT(m.seq, 0) << f;
    EXPECT_GT(m.vocab, 0) << f;
    EXPECT_EQ(m.heads % m.kv_heads, 0) << f;
  }
  for (const auto& f : systems) {
    const auto lc = psa::load_config(write_temp("system-" + f.stem().string() + ".yaml",
                                                "model: GPT-22B\nsystem: " + f.string() + "\nworkload: {}\n"));
    const Config& c = lc.config;
    EXPECT_EQ(lc.system_name, f.stem().string());
    EXPECT_GT(c.net.ndims, 0) << f;
    EXPECT_GT(total_npus(c.net), 1) << f;
    EXPECT_GT(c.compute.peak_tflops[peak_index(c.model.dtype_bytes)], 0) << f;
    EXPECT_GT(c.compute.mem_bw_GBps, 0) << f;
    EXPECT_GT(c.compute.mem_capacity_bytes, 0) << f;
  }
}

}  // namespace
}  // namespace cosmic
