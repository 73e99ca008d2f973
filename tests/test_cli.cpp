// The `cosmic` binary end to end: `eval --json` on the shipped study configurations gives the
// LIBRA network costs of cosmic-study.md §4, and bad input fails with a clear message.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace cosmic {
namespace {

struct CliRun {
  int status;
  std::string out;
};

CliRun run(const std::string& args) {
  const std::string cmd = std::string(COSMIC_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CliRun r{-1, ""};
  if (!p) return r;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(Cli, StudyNetworkCosts) {
  const std::pair<const char*, double> cases[] = {{"configs/cosmic-system1-baseline.yaml", 8775680.0},
                                                  {"configs/cosmic-system2-baseline.yaml", 8596479.0},
                                                  {"configs/cosmic-system3-baseline.yaml", 2693120.0}};
  for (const auto& [cfg, usd] : cases) {
    const CliRun r = run("eval " + test::data_path(cfg) + " --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["network_cost_usd"].get<double>(), usd, 0.5) << cfg;
    EXPECT_GT(j["time_s"].get<double>(), 0) << cfg;
    EXPECT_TRUE(j.contains("time_breakdown_s"));
    EXPECT_TRUE(j.contains("memory_breakdown_bytes"));
  }
}

TEST(Cli, TextReportAndHelp) {
  const CliRun r = run("eval " + test::data_path("configs/cosmic-system2-baseline.yaml"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("time per iteration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("network cost"), std::string::npos) << r.out;
  EXPECT_EQ(run("eval --help").status, 0);
  EXPECT_EQ(run("--help").status, 0);
  EXPECT_EQ(run("frobnicate").status, 2);
}

TEST(Cli, SetTakesYamlLists) {
  // A --set value may be a YAML list with commas; placing DP innermost changes the time.
  const std::string cfg = test::data_path("configs/cosmic-system1-baseline.yaml");
  const CliRun moved = run("eval " + cfg + " --json --set 'system.network.placement=[dp,tp,cp,pp]'");
  const CliRun base = run("eval " + cfg + " --json");
  ASSERT_EQ(moved.status, 0) << moved.out;
  EXPECT_NE(nlohmann::json::parse(moved.out)["time_s"], nlohmann::json::parse(base.out)["time_s"]);
}

TEST(Cli, InfeasibleIsAResultNotACrash) {
  const CliRun r = run("eval " + test::data_path("configs/cosmic-system1-baseline.yaml") + " --set workload.dp=3 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reason"], "PRODUCT_MISMATCH");
  EXPECT_FALSE(j["feasible"].get<bool>());
}

TEST(Cli, BadInputFailsWithMessage) {
  CliRun r = run("eval /nonexistent.yaml");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent.yaml: cannot open file"), std::string::npos) << r.out;
  r = run("eval " + test::data_path("configs/cosmic-system1-baseline.yaml") + " --set workload.nonsense=1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("workload.nonsense"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cosmic
