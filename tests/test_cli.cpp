// The `cosmic` binary end to end: `eval --json` on the shipped study configurations gives the
// LIBRA network costs of shared/reference/cosmic-study.md §4, and bad input fails with a clear message.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace cosmic {
namespace {

TEST(Cli, StudyNetworkCosts) {
  const std::pair<const char*, double> cases[] = {{"configs/cosmic-system1-baseline.yaml", 8775680.0},
                                                  {"configs/cosmic-system2-baseline.yaml", 8596479.0},
                                                  {"configs/cosmic-system3-baseline.yaml", 2693120.0}};
  for (const auto& [cfg, usd] : cases) {
    const test::CliRun r = test::run_cli("eval " + test::data_path(cfg) + " --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["network_cost_usd"].get<double>(), usd, 0.5) << cfg;
    EXPECT_GT(j["time_s"].get<double>(), 0) << cfg;
    EXPECT_TRUE(j.contains("time_breakdown_s"));
    EXPECT_TRUE(j.contains("memory_breakdown_bytes"));
  }
}

TEST(Cli, TextReportAndHelp) {
  const test::CliRun r = test::run_cli("eval " + test::data_path("configs/cosmic-system2-baseline.yaml"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("time per iteration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("network cost"), std::string::npos) << r.out;
  EXPECT_EQ(test::run_cli("eval --help").status, 0);
  EXPECT_EQ(test::run_cli("--help").status, 0);
  EXPECT_EQ(test::run_cli("frobnicate").status, 2);
}

TEST(Cli, SetTakesYamlLists) {
  // A --set value may be a YAML list with commas; placing DP innermost changes the time.
  const std::string cfg = test::data_path("configs/cosmic-system1-baseline.yaml");
  const test::CliRun moved = test::run_cli("eval " + cfg + " --json --set 'system.network.placement=[dp,tp,cp,pp]'");
  const test::CliRun base = test::run_cli("eval " + cfg + " --json");
  ASSERT_EQ(moved.status, 0) << moved.out;
  EXPECT_NE(nlohmann::json::parse(moved.out)["time_s"], nlohmann::json::parse(base.out)["time_s"]);
}

TEST(Cli, InfeasibleIsAResultNotACrash) {
  const test::CliRun r = test::run_cli("eval " + test::data_path("configs/cosmic-system1-baseline.yaml") + " --set workload.dp=3 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reason"], "PRODUCT_MISMATCH");
  EXPECT_FALSE(j["feasible"].get<bool>());
}

TEST(Cli, BadInputFailsWithMessage) {
  test::CliRun r = test::run_cli("eval /nonexistent.yaml");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent.yaml: cannot open file"), std::string::npos) << r.out;
  r = test::run_cli("eval " + test::data_path("configs/cosmic-system1-baseline.yaml") + " --set workload.nonsense=1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("workload.nonsense"), std::string::npos) << r.out;
  // A second file is not silently ignored.
  const std::string cfg = test::data_path("configs/cosmic-system1-baseline.yaml");
  for (const std::string cmd : {"eval " + cfg + " " + cfg, "space " + test::data_path("psa/cosmic/workload-system1.yaml") + " x.yaml"}) {
    r = test::run_cli(cmd);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.out.find("unexpected argument"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace cosmic
