// `cosmic validate` against the shipped dev sets: the accuracy targets, and a guard that keeps
// the summary from regressing (current figures: docs/validation.md).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

#include "host/csv.hpp"
#include "host/validate.hpp"
#include "kernels/model.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

TEST(Validate, GroundTruthAccuracy) {
  const ValidationReport r = validate_file(test::data_path("validation/groundtruth-dev.csv"));
  ASSERT_EQ(r.kind, "training");
  EXPECT_EQ(r.rows.size(), 52u);
  // Regression guard (median / max / mean measured 3.49 / 19.43 / 4.41 when the constants were
  // set, 3.91 / 19.86 / 4.38 since the model changes of 2026-12-01, docs/validation.md), tighter
  // than the validation issue's targets (median <= 10%, max <= 25%).
  EXPECT_LE(r.median_abs_pct, 4.0);
  EXPECT_LE(r.max_abs_pct, 21.0);
  EXPECT_LE(r.mean_abs_pct, 5.0);
  double korthikanti = 0;
  int n5 = 0;
  for (const auto& row : r.rows) {
    const int id = std::stoi(row.row_id);
    if (id >= 23 && id <= 30) { korthikanti += std::fabs(row.error_pct); ++n5; }
    if (id >= 33 && id <= 37) EXPECT_LE(std::fabs(row.error_pct), 10.0) << "per-layer row " << id;
    EXPECT_TRUE(std::isfinite(row.predicted_s) && row.predicted_s > 0);
  }
  ASSERT_EQ(n5, 8);
  EXPECT_LE(korthikanti / n5, 5.0) << "Korthikanti Table 5 mean absolute error";
  // Rows without a model shape are listed, not dropped.
  std::set<std::string> skipped;
  for (const auto& [id, why] : r.skipped) {
    skipped.insert(id);
    EXPECT_FALSE(why.empty());
  }
  EXPECT_EQ(skipped, (std::set<std::string>{"122", "128", "129"}));
}

TEST(Validate, AstraSimCollectives) {
  const ValidationReport r = validate_file(test::data_path("validation/astrasim-collectives-dev.csv"));
  ASSERT_EQ(r.kind, "collectives");
  EXPECT_EQ(r.rows.size(), 77u);
  EXPECT_EQ(r.skipped.size(), 6u);  // double-binary-tree all-reduces: listed as unmodelled
  int exact[2] = {0, 0}, rows[2] = {0, 0};  // [unaware, aware]
  for (const auto& row : r.rows) {
    const bool aware = row.label.find(" aware") != std::string::npos;
    EXPECT_LE(std::fabs(row.error_pct), aware ? 5.0 : 1.0) << row.label;
    ++rows[aware];
    exact[aware] += std::fabs(row.predicted_s - row.measured_s) < 0.5e-9;
  }
  EXPECT_EQ(rows[0], 46);
  EXPECT_EQ(rows[1], 31);
  // Regression guard on exactness to the ns (docs/astrasim-mode.md).
  EXPECT_GE(exact[0], 39);
  EXPECT_GE(exact[1], 30);
}

TEST(Validate, JsonShape) {
  const auto j = to_json(validate_file(test::data_path("validation/groundtruth-dev.csv")));
  ASSERT_TRUE(j["rows"].is_array());
  for (const char* k : {"row_id", "predicted_s", "measured_s", "error_pct"}) EXPECT_TRUE(j["rows"][0].contains(k)) << k;
  for (const char* k : {"n", "mean_abs_pct", "median_abs_pct", "max_abs_pct", "skipped"})
    EXPECT_TRUE(j["summary"].contains(k)) << k;
}

// Writes `text` to a CSV file in the test folder; returns its path.
std::string write_csv(const std::string& name, const char* text) {
  const std::string path = ::testing::TempDir() + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text, f);
  std::fclose(f);
  return path;
}

// The error validate_file gives for a file ("" when it gives none).
std::string error_of(const std::string& path) {
  try {
    validate_file(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Validate, MissingColumnsAndBadValues) {
  // A collective CSV without `mode`: the error names the file and the column.
  const std::string a = write_csv("no_mode.csv",
                                  "collective,topology,npus_per_dim,bandwidth_GBps_per_link,latency_ns,algorithm,multidim,"
                                  "splits,active_chunks,endpoint_delay_ns,local_mem_bw_GBps,size_bytes,time_ns\n"
                                  "all_reduce,Ring,8,50,500,ring,localBWAware,4,1,10,1600,1073741824,36790164\n");
  EXPECT_NE(error_of(a).find(a), std::string::npos) << error_of(a);
  EXPECT_NE(error_of(a).find("mode"), std::string::npos) << error_of(a);
  // Without time_ns it is still a collective CSV (it has every other column of one), and the
  // error names that column only.
  const std::string c = write_csv("no_time.csv",
                                  "collective,topology,npus_per_dim,bandwidth_GBps_per_link,latency_ns,algorithm,multidim,"
                                  "splits,active_chunks,endpoint_delay_ns,local_mem_bw_GBps,size_bytes,mode\n"
                                  "all_reduce,Ring,8,50,500,ring,localBWAware,4,1,10,1600,1073741824,unaware\n");
  EXPECT_NE(error_of(c).find("collective-timing CSV without the column(s) time_ns ("), std::string::npos) << error_of(c);
  // Zero NPUs or a zero measured time: the row is listed as skipped, not predicted as -100% or inf.
  const ValidationReport r = validate_file(
      write_csv("bad_values.csv",
                "collective,topology,npus_per_dim,bandwidth_GBps_per_link,latency_ns,algorithm,multidim,splits,"
                "active_chunks,endpoint_delay_ns,local_mem_bw_GBps,size_bytes,mode,time_ns\n"
                "all_reduce,Ring,0,50,500,ring,localBWAware,4,1,10,1600,1073741824,unaware,36790164\n"
                "all_reduce,Ring,8,50,500,ring,localBWAware,4,1,10,1600,1073741824,unaware,0\n"
                "all_reduce,Ring,8,50,500,ring,localBWAware,4,1,10,1600,1.5,unaware,36790164\n"));
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.skipped.size(), 3u);
  EXPECT_EQ(r.skipped[2].second, "size_bytes '1.5' is not an integer");
  // No row modelled: no error figures (not a perfect 0%).
  EXPECT_TRUE(to_json(r)["summary"]["median_abs_pct"].is_null());
  EXPECT_NE(to_text(r).find("absolute error: none (no row modelled)"), std::string::npos) << to_text(r);
}

// Writes `t` with its first row only, every field quoted, after replacing one column's text.
std::string one_row_with(const CsvTable& t, const std::string& column, const std::string& text, const std::string& name) {
  std::string out;
  auto quoted = [](const std::string& f) {
    std::string q = "\"";
    for (char ch : f) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  for (size_t c = 0; c < t.header.size(); ++c) out += (c ? "," : "") + quoted(t.header[c]);
  out += "\n";
  for (size_t c = 0; c < t.header.size(); ++c) {
    const std::string& h = t.header[c];
    out += (c ? "," : "") + quoted(h == column ? text : t.rows[0].at(h));
  }
  return write_csv(name, (out + "\n").c_str());
}

// The row `id` of the shipped dev set, alone.
CsvTable dev_row(const std::string& id) {
  CsvTable gt = read_csv(test::data_path("validation/groundtruth-dev.csv"));
  for (const auto& row : gt.rows)
    if (row.at("row_id") == id) {
      gt.rows = {row};
      return gt;
    }
  ADD_FAILURE() << "no row " << id;
  return gt;
}

// A row's params_billion checks the model its columns make. Llama 3.1 8B (row 85: 32 layers,
// h 4096, ffn 14336, 32 heads, 8 KV heads, vocabulary 128256) as SwiGLU, untied: 8.03 B against
// the row's 8.0. Without SwiGLU in arch_family the MLP is GELU's two matrices and the embedding
// tied: a layer 4096^2 (2 + 2 x 8/32) + 2 x 4096 x 14336 + 2 x 4096 = 159.39 M, x 32 plus
// 128256 x 4096 = 5.63 B, 30% short, so the row is skipped with a hint rather than timed as
// that model (a user's row marked "llama" was scored at -19.6% without a word).
TEST(Validate, ParameterCountChecksTheModel) {
  const CsvTable row = dev_row("85");
  for (const char* text : {"8.0", "8.8", "7.4", ""})  // within 10%, or not given: modelled
    EXPECT_EQ(validate_file(one_row_with(row, "params_billion", text, "gt_p.csv")).rows.size(), 1u) << text;
  const ValidationReport far = validate_file(one_row_with(row, "params_billion", "70", "gt_p70.csv"));
  ASSERT_EQ(far.skipped.size(), 1u);
  EXPECT_NE(far.skipped[0].second.find("8.03 B parameters"), std::string::npos) << far.skipped[0].second;
  EXPECT_NE(far.skipped[0].second.find("params_billion '70'"), std::string::npos) << far.skipped[0].second;
  EXPECT_EQ(far.skipped[0].second.find("SwiGLU"), std::string::npos) << far.skipped[0].second;  // it says SwiGLU
  // No hint where SwiGLU cannot explain the gap: a model larger than its count (GELU's 5.63 B
  // against 5), or a row that names its MLP (GELU, against 8.0).
  CsvTable llama = row;
  llama.rows[0]["arch_family"] = "llama";
  const ValidationReport larger = validate_file(one_row_with(llama, "params_billion", "5", "gt_5.csv"));
  llama.rows[0]["arch_family"] = "llama (GELU)";
  const ValidationReport named = validate_file(one_row_with(llama, "params_billion", "8.0", "gt_gelu.csv"));
  for (const ValidationReport* r : {&larger, &named}) {
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_NE(r->skipped[0].second.find("5.63 B parameters"), std::string::npos) << r->skipped[0].second;
    EXPECT_EQ(r->skipped[0].second.find("SwiGLU"), std::string::npos) << r->skipped[0].second;
  }
  const ValidationReport gelu = validate_file(one_row_with(row, "arch_family", "llama", "gt_llama.csv"));
  ASSERT_EQ(gelu.skipped.size(), 1u);
  EXPECT_NE(gelu.skipped[0].second.find("5.63 B parameters"), std::string::npos) << gelu.skipped[0].second;
  EXPECT_NE(gelu.skipped[0].second.find("does not say SwiGLU"), std::string::npos) << gelu.skipped[0].second;
}

// A row whose layout the model finds out of memory is compared all the same (the run was
// measured: the memory count is what is off) and marked: in the text with a star and its memory
// against the capacity, in JSON with out_of_memory and a count in the summary. Row 85 on an
// A100 of 40 GB (a 40 GiB capacity, docs/validation.md) does not fit; on its H100 it does.
TEST(Validate, OutOfMemoryRowsAreMarked) {
  const CsvTable row = dev_row("85");
  const ValidationReport fits = validate_file(one_row_with(row, "row_id", "85", "gt_fit.csv"));
  const ValidationReport over = validate_file(one_row_with(row, "gpu_type", "A100 40GB", "gt_a100.csv"));
  ASSERT_EQ(fits.rows.size(), 1u);
  ASSERT_EQ(over.rows.size(), 1u);
  EXPECT_FALSE(fits.rows[0].out_of_memory);
  EXPECT_EQ(fits.out_of_memory, 0u);
  EXPECT_EQ(to_text(fits).find("out of memory"), std::string::npos);
  EXPECT_TRUE(over.rows[0].out_of_memory);
  EXPECT_EQ(over.out_of_memory, 1u);
  EXPECT_EQ(over.rows[0].capacity_GiB, 40.0);
  EXPECT_GT(over.rows[0].memory_GiB, 40.0);
  const std::string text = to_text(over);
  EXPECT_NE(text.find("%  *\n"), std::string::npos) << text;
  char line[64];
  std::snprintf(line, sizeof line, "  row 85: %.2f GiB of 40.00 GiB\n", over.rows[0].memory_GiB);
  EXPECT_NE(text.find(line), std::string::npos) << text;
  const auto j = to_json(over);
  EXPECT_EQ(j["summary"]["out_of_memory"], 1);
  EXPECT_EQ(j["rows"][0]["out_of_memory"], true);
  EXPECT_EQ(j["rows"][0]["capacity_GiB"], 40.0);
  // The shipped set: a row is marked exactly when its memory exceeds its capacity.
  const ValidationReport dev = validate_file(test::data_path("validation/groundtruth-dev.csv"));
  size_t marked = 0;
  for (const auto& v : dev.rows) {
    EXPECT_EQ(v.out_of_memory, v.memory_GiB > v.capacity_GiB) << v.row_id;
    EXPECT_GT(v.capacity_GiB, 0) << v.row_id;
    marked += v.out_of_memory;
  }
  EXPECT_EQ(dev.out_of_memory, marked);
}

// A cell that holds something the reader does not know skips the row with the reason, instead of
// being read as a default (recompute 'sometimes' as none, precision 'int3' as fp16) or, for a
// measured time of nan, falling back to the derived one.
TEST(Validate, UnknownWordsAndNonNumbersSkipTheRow) {
  const CsvTable gt = read_csv(test::data_path("validation/groundtruth-dev.csv"));
  ASSERT_EQ(validate_file(one_row_with(gt, "row_id", gt.rows[0].at("row_id"), "gt_ok.csv")).rows.size(), 1u);
  const std::pair<const char*, const char*> bad[] = {
      {"activation_recompute", "sometimes"}, {"precision", "int3"},   {"sequence_parallel", "perhaps"},
      {"optimizer_sharding", "zero9"},       {"measured_iteration_time_s", "nan"}, {"tp", "abc"},
      {"num_layers", "1e400"}, {"gpus_per_node", "0"}, {"num_gpus", "33.5"},
      // optional columns read with a default when blank, not when they hold something else; and
      // counts that would overflow the 32-bit fields they go into
      {"vpp_chunks", "abc"}, {"vpp_chunks", "2147483648"}, {"num_kv_heads", "abc"}, {"vocab_size", "inf"},
      {"gpus_per_node", "1e308"}, {"num_gpus", "2147483648"}};
  for (const auto& [column, text] : bad) {
    const ValidationReport r = validate_file(one_row_with(gt, column, text, "gt_bad.csv"));
    EXPECT_TRUE(r.rows.empty()) << column;
    ASSERT_EQ(r.skipped.size(), 1u) << column;
    EXPECT_NE(r.skipped[0].second.find(std::string(column) + " '" + text + "'"), std::string::npos) << r.skipped[0].second;
  }
  // A count written as a whole decimal is that count (num_kv_heads '8.0' was refused later as
  // not an integer, under the model's key and with the row named twice).
  const ValidationReport as_int = validate_file(one_row_with(gt, "num_kv_heads", gt.rows[0].at("num_heads"), "gt_int.csv"));
  const ValidationReport as_dec = validate_file(one_row_with(gt, "num_kv_heads", gt.rows[0].at("num_heads") + ".0", "gt_dec.csv"));
  ASSERT_EQ(as_int.rows.size(), 1u);
  ASSERT_EQ(as_dec.rows.size(), 1u);
  EXPECT_EQ(as_dec.rows[0].predicted_s, as_int.rows[0].predicted_s);
  const ValidationReport over = validate_file(one_row_with(gt, "num_kv_heads", "100000", "gt_over.csv"));
  ASSERT_EQ(over.skipped.size(), 1u);
  EXPECT_EQ(over.skipped[0].second.rfind("key 'model.kv_heads'", 0), 0u) << over.skipped[0].second;  // the row named once
  // A measured time no run takes (1e308 s printed an error of -inf%).
  const ValidationReport huge = validate_file(one_row_with(gt, "measured_iteration_time_s", "1e308", "gt_huge.csv"));
  EXPECT_TRUE(huge.rows.empty());
  ASSERT_EQ(huge.skipped.size(), 1u);
  EXPECT_EQ(huge.skipped[0].second, "measured_iteration_time_s gives 1e+308 s an iteration, not a time above 0 and at most 1e9 s");
  // A UTF-8 byte-order mark before the header (as spreadsheets write) is not part of row_id.
  const std::string plain = one_row_with(gt, "row_id", gt.rows[0].at("row_id"), "gt_plain.csv");
  std::ifstream in(plain);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(validate_file(write_csv("gt_bom.csv", ("\xEF\xBB\xBF" + text).c_str())).rows.size(), 1u);
  const CsvTable as = read_csv(test::data_path("validation/astrasim-collectives-dev.csv"));
  ASSERT_EQ(validate_file(one_row_with(as, "mode", as.rows[0].at("mode"), "as_ok.csv")).rows.size(), 1u);
  for (const auto& [column, text] : {std::pair<const char*, const char*>{"mode", "whatever"}, {"latency_ns", "-5"},
                                     {"collective", "all_whatever"}, {"multidim", "sideways"}, {"algorithm", "ring,ring"}}) {
    const ValidationReport r = validate_file(one_row_with(as, column, text, "as_bad.csv"));
    EXPECT_TRUE(r.rows.empty()) << column;
    ASSERT_EQ(r.skipped.size(), 1u) << column;
    EXPECT_NE(r.skipped[0].second.find(text), std::string::npos) << r.skipped[0].second;  // the reason quotes it
  }
  // Numbers outside what configuration files accept (a bandwidth of 1e-300 GB/s predicted inf
  // before) skip the row, naming the column and the value.
  const std::pair<const char*, const char*> out_of_range[] = {
      {"bandwidth_GBps_per_link", "1e-300"}, {"npus_per_dim", "8.5"}, {"splits", "0"}, {"size_bytes", "1e300"},
      {"local_mem_bw_GBps", "abc"}};
  for (const auto& [column, text] : out_of_range) {
    const ValidationReport r = validate_file(one_row_with(as, column, text, "as_range.csv"));
    EXPECT_TRUE(r.rows.empty()) << column;
    ASSERT_EQ(r.skipped.size(), 1u) << column;
    EXPECT_EQ(r.skipped[0].second.rfind(column, 0), 0u) << r.skipped[0].second;
    EXPECT_NE(r.skipped[0].second.find(text), std::string::npos) << r.skipped[0].second;
  }
}

// The command: the shipped dev set's summary (docs/validation.md's figures), exit 0; a file none
// of whose rows can be modelled (only a header, or every row skipped) exits 1 after its report.
TEST(Validate, CommandExitsOneWhenNoRowIsModelled) {
  const auto ok = test::run_cli("validate " + test::data_path("validation/groundtruth-dev.csv"));
  EXPECT_EQ(ok.status, 0);
  EXPECT_NE(ok.out.find("rows modelled: 52, skipped: 3\n"), std::string::npos) << ok.out;
  const CsvTable gt = read_csv(test::data_path("validation/groundtruth-dev.csv"));
  std::string header;
  for (const std::string& h : gt.header) header += (header.empty() ? "" : ",") + h;
  for (const std::string& file : {write_csv("gt_header.csv", (header + "\n").c_str()),
                                  one_row_with(gt, "tp", "abc", "gt_none_modelled.csv")}) {
    const auto r = test::run_cli("validate " + file);
    EXPECT_EQ(r.status, 1) << file;
    EXPECT_NE(r.out.find("rows modelled: 0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cosmic validate: no row of " + file + " could be modelled"), std::string::npos) << r.out;
  }
}

// A row without an iteration time is compared by its throughput per GPU, where it has one: the
// first dev row (GPT-1.7B on 32 GPUs, global batch 512 of 2,048 tokens) at 9,288 tokens/s per GPU
// took 512 x 2,048 / (9,288 x 32) = 1,048,576 / 297,216 s. Without either it is skipped, saying
// which columns it looked for.
TEST(Validate, ThroughputStandsInForAMissingTime) {
  CsvTable gt = read_csv(test::data_path("validation/groundtruth-dev.csv"));
  const ValidationReport timed = validate_file(one_row_with(gt, "row_id", gt.rows[0].at("row_id"), "gt_timed.csv"));
  ASSERT_EQ(timed.rows.size(), 1u);
  gt.rows[0]["measured_iteration_time_s"] = gt.rows[0]["derived_iteration_time_s"] = gt.rows[0]["derived_tokens_per_s_per_gpu"] = "";
  const ValidationReport r = validate_file(one_row_with(gt, "measured_tokens_per_s_per_gpu", "9288", "gt_tokens.csv"));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(r.rows[0].measured_s, 1048576.0 / 297216.0, 1e-12);
  EXPECT_EQ(r.rows[0].predicted_s, timed.rows[0].predicted_s);
  EXPECT_EQ(r.rows[0].measured_from.rfind("measured_tokens_per_s_per_gpu (", 0), 0u) << r.rows[0].measured_from;
  const ValidationReport none = validate_file(one_row_with(gt, "measured_tokens_per_s_per_gpu", "", "gt_none.csv"));
  ASSERT_EQ(none.skipped.size(), 1u);
  EXPECT_NE(none.skipped[0].second.find("nor tokens/s per GPU"), std::string::npos) << none.skipped[0].second;
}

// The columns' other spellings map to the configuration the model is given; rows the model cannot
// describe (mixture-of-experts) are listed with the reason instead of being scored as dense models.
TEST(Validate, RowsMapToTheirConfiguration) {
  const CsvTable gt = read_csv(test::data_path("validation/groundtruth-dev.csv"));
  auto row_of = [&](const char* id) {
    for (const auto& r : gt.rows)
      if (r.at("row_id") == id) return r;
    ADD_FAILURE() << "no row " << id;
    return gt.rows[0];
  };
  // Row 7: GPT-145.6B on 1536 A100s, tp 8 pp 8 dp 24, micro-batch 2, global batch 2304
  // (4,718,592 tokens of 2048, 48 micro-batches per DP rank), no sharding, sequence parallelism off.
  const auto row7 = row_of("7");
  auto config = [](std::map<std::string, std::string> row, std::initializer_list<std::pair<const char*, const char*>> set,
                   std::string* why_out = nullptr) {
    for (const auto& [k, v] : set) row[k] = v;
    Config c;
    std::string why;
    const bool ok = groundtruth_config(row, c, why);
    if (why_out) *why_out = why;
    EXPECT_EQ(ok, why.empty()) << why;
    return std::make_pair(ok, c);
  };
  const auto [ok7, c7] = config(row7, {});
  ASSERT_TRUE(ok7);
  EXPECT_EQ(c7.work.dp, 24);
  EXPECT_EQ(c7.work.global_batch, 2304);
  EXPECT_EQ(c7.work.sharding, Sharding::None);
  EXPECT_FALSE(c7.work.seq_parallel);
  EXPECT_EQ(c7.compute.mem_capacity_bytes, 80.0 * (1 << 30));
  // A blank dp is num_gpus / (tp pp cp); a blank global batch comes from the tokens, else from
  // the micro-batches per DP rank.
  EXPECT_EQ(config(row7, {{"dp", ""}}).second.work.dp, 24);
  EXPECT_EQ(config(row7, {{"global_batch_size", ""}}).second.work.global_batch, 2304);
  EXPECT_EQ(config(row7, {{"global_batch_size", ""}, {"global_batch_tokens", ""}}).second.work.global_batch, 2304);
  EXPECT_EQ(config(row7, {{"global_batch_size", ""}, {"global_batch_tokens", "1000000"}}).second.work.global_batch, 2304)
      << "tokens / seq_len not whole: from the micro-batches";
  std::string why;
  EXPECT_FALSE(config(row7, {{"global_batch_size", ""}, {"global_batch_tokens", ""}, {"num_microbatches_per_dp_rank", ""}},
                      &why).first);
  EXPECT_NE(why.find("global batch not given"), std::string::npos) << why;
  EXPECT_FALSE(config(row7, {{"dp", ""}, {"num_gpus", "1544"}, {"gpus_per_node", "8"}}, &why).first);
  EXPECT_NE(why.find("dp is blank"), std::string::npos) << why;
  // ZeRO stages and FSDP in the sharding column.
  const std::pair<const char*, Sharding> shardings[] = {
      {"", Sharding::None}, {"none", Sharding::None}, {"distributed optimizer", Sharding::Zero1},
      {"ZeRO-1", Sharding::Zero1}, {"zero stage 2", Sharding::Zero2}, {"ZeRO-3 (DeepSpeed)", Sharding::Zero3},
      {"zero3", Sharding::Zero3}, {"FSDP (full shard)", Sharding::Zero3}, {"DeepSpeed ZeRO-2", Sharding::Zero2},
      {"ZeRO (stage 2)", Sharding::Zero2}, {"Distributed Data Parallel (no sharding)", Sharding::None},
      {"DDP", Sharding::None}, {"no", Sharding::None}};
  for (const auto& [text, want] : shardings) EXPECT_EQ(config(row7, {{"optimizer_sharding", text}}).second.work.sharding, want) << text;
  for (const char* text : {"zero", "zero-4", "zero-12", "zeroes", "ZeRO++ (stage 3)", "ZeRO-3 offload", "FSDP (HYBRID_SHARD)"}) {
    EXPECT_FALSE(config(row7, {{"optimizer_sharding", text}}, &why).first) << text;
    EXPECT_NE(why.find(std::string("optimizer_sharding '") + text + "'"), std::string::npos) << why;
  }
  // Sequence parallelism: stated on or off, else the recipes' default (on with tp > 1).
  for (const char* on : {"yes", "True", "on", "likely", "not stated", ""})
    EXPECT_TRUE(config(row7, {{"sequence_parallel", on}}).second.work.seq_parallel) << on;
  for (const char* off : {"no", "false", "off"}) EXPECT_FALSE(config(row7, {{"sequence_parallel", off}}).second.work.seq_parallel) << off;
  for (const char* other : {"only with TP", "unknown", "not used"}) EXPECT_FALSE(config(row7, {{"sequence_parallel", other}}).first) << other;
  EXPECT_FALSE(config(row7, {{"sequence_parallel", "likely"}, {"tp", "1"}, {"dp", "192"}}).second.work.seq_parallel);
  // The precision word anywhere in the cell.
  EXPECT_EQ(config(row7, {{"precision", "mixed (BF16)"}}).second.model.dtype_bytes, 2);
  EXPECT_EQ(config(row7, {{"precision", "FP8 hybrid"}}).second.model.dtype_bytes, 1);
  EXPECT_EQ(config(row7, {{"precision", "BF16 (FP8 disabled)"}}).second.model.dtype_bytes, 2);  // the first named
  // GPU types: the A100 40 GB's memory; H200, H800 and B200 rows on their presets; none for GH200, GB200.
  for (const char* a100_40 : {"A100-SXM4-40GB", "A100 40 GB"}) {
    const auto a40 = config(row7, {{"gpu_type", a100_40}}).second;
    EXPECT_EQ(a40.compute.mem_capacity_bytes, 40.0 * (1 << 30)) << a100_40;
    EXPECT_EQ(a40.compute.mem_bw_GBps, 1555) << a100_40;
  }
  const auto h200 = config(row7, {{"gpu_type", "H200-SXM-141GB"}}).second;
  EXPECT_EQ(h200.compute.mem_capacity_bytes, 140.0 * (1 << 30));
  EXPECT_EQ(h200.compute.mem_bw_GBps, 4800);
  EXPECT_TRUE(h200.work.flash_attention);
  EXPECT_FALSE(c7.work.flash_attention);
  const auto b200 = config(row7, {{"gpu_type", "B200 SXM 180GB"}}).second;  // the dgx-b200 preset: 179 GiB
  EXPECT_EQ(b200.compute.mem_capacity_bytes, 179.0 * (1 << 30));
  EXPECT_EQ(b200.compute.mem_bw_GBps, 8000);
  // H800: the H100's chip on the dgx-h800 preset, with the row's NVLink figure.
  const auto h800 = config(row7, {{"gpu_type", "H800 SXM5"}, {"intra_node_bw_GBps_per_dir", "200"}}, &why);
  ASSERT_TRUE(h800.first) << why;
  EXPECT_EQ(h800.second.compute.mem_capacity_bytes, 80.0 * (1 << 30));
  EXPECT_EQ(h800.second.compute.mem_bw_GBps, 3350);
  EXPECT_EQ(h800.second.net.dim[0].link_bw_GBps, 200);
  EXPECT_TRUE(h800.second.work.flash_attention);
  for (const char* unmapped : {"GH200", "GB200"}) {
    EXPECT_FALSE(config(row7, {{"gpu_type", unmapped}}, &why).first) << unmapped;
    EXPECT_NE(why.find(std::string("no system preset for gpu_type '") + unmapped + "'"), std::string::npos) << why;
  }
  // Mixture-of-experts rows: modelled with the experts per layer and top-k that arch_family gives,
  // else listed, not scored as the dense model of their shape.
  for (const auto& [column, text] : {std::pair<const char*, const char*>{"ep", "8"},
                                     {"arch_family", "Mixtral (MoE, GQA, SwiGLU)"},
                                     {"model_name", "Mixtral 8x7B"}}) {
    const ValidationReport r = validate_file(one_row_with(gt, column, text, "gt_moe.csv"));
    EXPECT_TRUE(r.rows.empty()) << column;
    ASSERT_EQ(r.skipped.size(), 1u) << column;
    EXPECT_NE(r.skipped[0].second.find("without the experts per layer and top-k"), std::string::npos) << r.skipped[0].second;
  }
  // Row 92: Llama 3.1 8B on 32 GPUs, dp 16: made an 8-expert top-2 model with ep 8 (its
  // params_billion, 8.0, blanked: the mixtures below have more).
  auto row92 = row_of("92");
  row92["params_billion"] = "";
  const auto [moe_ok, moe] = config(row92, {{"arch_family", "MoE (GQA, SwiGLU, 8 experts, top-2)"}, {"ep", "8"}});
  ASSERT_TRUE(moe_ok);
  EXPECT_EQ(moe.model.experts, 8);
  EXPECT_EQ(moe.model.top_k, 2);
  EXPECT_EQ(moe.work.ep, 8);
  EXPECT_GT(evaluate(moe).ep_comm_s, 0.0);  // timed (8 experts of Llama 8B's MLP do not fit: OUT_OF_MEMORY)
  EXPECT_EQ(config(row92, {{"arch_family", "Mixtral-style 16-expert MoE, top 4"}}).second.model.top_k, 4);
  EXPECT_EQ(config(row92, {{"arch_family", "Mixtral-style 16-expert MoE, top 4"}}).second.model.experts, 16);
  const auto named_first = config(row92, {{"arch_family", "Mixture-of-Experts (8 experts, top_k: 2)"}}).second;
  EXPECT_EQ(named_first.model.experts, 8);  // the "Experts" of the name has no number: the next does
  EXPECT_EQ(named_first.model.top_k, 2);
  EXPECT_EQ(config(row7, {{"model_name", "Homoeomorphic GPT"}}).second.model.experts, 0);  // "moe" inside a word
  // Shared experts by their count; routed experts named as such.
  const auto shared = config(row92, {{"arch_family", "DeepSeekMoE (64 routed experts, 2 shared experts, top-6)"}}).second;
  EXPECT_EQ(shared.model.experts, 64);
  EXPECT_EQ(shared.model.top_k, 6);
  EXPECT_EQ(shared.model.shared_experts, 2);
  EXPECT_EQ(config(row92, {{"arch_family", "MoE, 8 experts, top-2"}}).second.model.shared_experts, 0);
  EXPECT_FALSE(config(row92, {{"arch_family", "MoE, 8 experts, top-2, a shared expert"}}, &why).first);
  EXPECT_NE(why.find("names shared experts without their count"), std::string::npos) << why;
  EXPECT_EQ(validate_file(one_row_with(gt, "ep", "1", "gt_ep1.csv")).rows.size(), 1u);
}

// Line ends as other tools write them (LF, CR LF, a lone CR) read alike; a column named twice
// and a NUL byte (a UTF-16 file holds one in every other byte) are errors naming file and line.
TEST(Validate, CsvLineEndsTwiceNamedColumnsAndNulBytes) {
  const std::string header =
      "collective,topology,npus_per_dim,bandwidth_GBps_per_link,latency_ns,algorithm,multidim,splits,"
      "active_chunks,endpoint_delay_ns,local_mem_bw_GBps,size_bytes,mode,time_ns";
  const std::string row = "all_reduce,Ring,8,50,500,ring,localBWAware,4,1,10,1600,1073741824,unaware,36790164";
  const ValidationReport lf = validate_file(write_csv("lf.csv", (header + "\n" + row + "\n" + row + "\n").c_str()));
  ASSERT_EQ(lf.rows.size(), 2u);
  for (const char* end : {"\r\n", "\r"}) {
    const ValidationReport r = validate_file(write_csv("ends.csv", (header + end + row + end + row).c_str()));
    ASSERT_EQ(r.rows.size(), 2u) << (end[1] ? "CR LF" : "CR");
    EXPECT_EQ(r.rows[1].predicted_s, lf.rows[1].predicted_s);
  }
  // Spaces after the commas of the header, as a spreadsheet may write them, are not in the names.
  std::string spaced = header;
  for (size_t at = spaced.find(','); at != std::string::npos; at = spaced.find(',', at + 2)) spaced.insert(at + 1, " ");
  EXPECT_EQ(validate_file(write_csv("spaced.csv", (spaced + "\n" + row + "\n").c_str())).rows.size(), 1u);
  // Unnamed columns (a spreadsheet's trailing commas) are no duplicates; a line break in quotes,
  // a lone CR too, counts for the lines errors name.
  EXPECT_EQ(validate_file(write_csv("unnamed.csv", (header + ",,\n" + row + ",,\n").c_str())).rows.size(), 1u);
  const std::string cr = write_csv("cr_quoted.csv", (header + ",note\r" + row + ",\"a\rb\"\r" + row + "\r").c_str());
  EXPECT_NE(error_of(cr).find(cr + ":4: expected 15 fields"), std::string::npos) << error_of(cr);
  const std::string twice = write_csv("twice.csv", (header + ",latency_ns\n" + row + ",1\n").c_str());
  EXPECT_NE(error_of(twice).find(twice + ":1: column 15, 'latency_ns', is given twice (first as column 5)"),
            std::string::npos)
      << error_of(twice);
  const std::string nul = ::testing::TempDir() + "nul.csv";
  const std::string text = header + "\n" + row.substr(0, 10) + std::string(1, '\0') + row.substr(10) + "\n";
  std::FILE* f = std::fopen(nul.c_str(), "wb");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  EXPECT_NE(error_of(nul).find(nul + ":2: a NUL byte"), std::string::npos) << error_of(nul);
}

// An error of a measured time near 0 prints in %g: the table keeps one line a row.
TEST(Validate, HugeErrorsKeepTheTableShape) {
  ValidationReport r;
  r.kind = "collectives";
  ValidationRow v;
  v.row_id = "4";
  v.label = "all_reduce";
  v.predicted_s = 3.3;
  v.measured_s = 1e-300;
  v.error_pct = 3.3e302;
  r.rows = {v, v};
  r.rows[1].row_id = "5";
  r.rows[1].error_pct = -6.4321;
  r.mean_abs_pct = r.max_abs_pct = 3.3e302;
  r.median_abs_pct = 6.4321;
  const std::string text = to_text(r);
  EXPECT_NE(text.find(" +3.3e+302%\n5 "), std::string::npos) << text;
  EXPECT_NE(text.find("    -6.43%\n"), std::string::npos) << text;
  EXPECT_NE(text.find("absolute error: mean 3.3e+302%, median 6.43%, max 3.3e+302%\n"), std::string::npos) << text;
}

TEST(Validate, RejectsOtherCsv) {
  EXPECT_NE(error_of(test::data_path("models/GPT-22B.yaml")).find("ground-truth CSV without the column(s) row_id"),
            std::string::npos)
      << error_of(test::data_path("models/GPT-22B.yaml"));
  const std::string yaml = test::data_path("configs/cosmic-system1-baseline.yaml");  // rows of other widths
  EXPECT_NE(error_of(yaml).find("(is it a CSV file?)"), std::string::npos) << error_of(yaml);
  EXPECT_NE(error_of(::testing::TempDir()).find("is a directory, expected a CSV file"), std::string::npos)
      << error_of(::testing::TempDir());
  // Runs are named by row_id (--row): a second row of the same id is an error naming both lines.
  const CsvTable gt = read_csv(test::data_path("validation/groundtruth-dev.csv"));
  std::string text;
  {
    std::FILE* f = std::fopen(one_row_with(gt, "row_id", "7", "gt_dup.csv").c_str(), "r");
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
  }
  const std::string row = text.substr(text.find('\n') + 1);
  const std::string dup = write_csv("gt_dup2.csv", (text + row).c_str());
  EXPECT_NE(error_of(dup).find(dup + ":3: row_id '7' is given twice (first on line 2)"), std::string::npos) << error_of(dup);
  const std::string blank = one_row_with(gt, "row_id", "", "gt_blank.csv");
  EXPECT_NE(error_of(blank).find(blank + ":2: row_id is blank"), std::string::npos) << error_of(blank);
}

}  // namespace
}  // namespace cosmic
