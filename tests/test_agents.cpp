// Search agents (agents/), the population evaluator (host/population.*) and the search loop
// (host/search.*): hyperparameter checks, determinism, resume, finding known optima,
// non-dominated sorting against a brute-force reference.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "agents/aco.hpp"
#include "agents/common.hpp"
#include "agents/factory.hpp"
#include "agents/ga.hpp"
#include "agents/nsga2.hpp"
#include "agents/rng.hpp"
#include "host/backend.hpp"
#include "host/h5.hpp"
#include "host/population.hpp"
#include "host/search.hpp"
#include "space_fixtures.hpp"
#include "test_util.hpp"

namespace cosmic {
namespace {

using agents::Params;
using agents::Population;
using agents::Scores;

const char* const kAgents[] = {"rw", "ga", "aco", "bo", "nsga2"};

// dp x pp x cp x sharding x chunks x bw(dim 3): 7 x 3 x 4 x 2 x 4 x 10 = 6,720 points, with a
// constraint (dp cp pp <= NPUs) and memory-infeasible points.
psa::DesignSpace tiny_space(std::vector<Objective> objectives = {Objective::Latency}) {
  test::ViewBuilder b(test::system1_base());
  std::vector<double> bw;
  for (int x = 50; x <= 500; x += 50) bw.push_back(x);
  b.gene("workload.dp", Param::DP, -1, test::powers_of_two(0, 6))
      .gene("workload.pp", Param::PP, -1, {1, 2, 4})
      .gene("workload.cp", Param::CP, -1, test::powers_of_two(0, 3))
      .gene("workload.sharding", Param::Sharding, -1, {0, 3})
      .gene("collective.chunks", Param::Chunks, -1, {2, 4, 8, 16})
      .gene("network.bandwidth_per_npu.3", Param::NpuBw, 3, bw);
  b.view().derived_degree = int8_t(Param::TP);
  b.constraint({test::push_param(Param::DP), test::push_param(Param::CP), test::op(Op::Mul),
                test::push_param(Param::PP), test::op(Op::Mul), Instr{Op::PushNpusTotal, -1, 0}, test::op(Op::Le)});
  return b.build("tiny (built in code)", std::move(objectives));
}

std::vector<int32_t> cards(const SpaceView& v) {
  std::vector<int32_t> c;
  for (int32_t g = 0; g < v.ngenes; ++g) c.push_back(v.gene[g].card);
  return c;
}

// Scores made up from a population's genes, for agents whose genomes no space decodes: each
// objective a sum over the genes, every seventh individual infeasible.
Scores made_up_scores(const Population& pop, int32_t nobj) {
  Scores s;
  s.resize(nobj, pop.size);
  for (size_t i = 0; i < pop.size; ++i) {
    for (int32_t j = 0; j < nobj; ++j) {
      double x = 0;
      for (int32_t g = 0; g < pop.ngenes; ++g) x += double(pop.at(i, g) * (g + 1 + j) % 97);
      s.obj[size_t(j) * pop.size + i] = x;
    }
    s.violation[i] = i % 7 == 0 ? double(i % 5) + 0.5 : 0;
  }
  return s;
}

// Every genome of a space, in index order.
Population whole_space(const SpaceView& v) {
  const size_t n = size_t(space_size(v));
  Population pop;
  pop.resize(v.ngenes, n);
  std::vector<int32_t> genome(size_t(v.ngenes));
  for (size_t i = 0; i < n; ++i) {
    unrank(v, u128(i), genome.data());
    for (int32_t g = 0; g < v.ngenes; ++g) pop.at(i, g) = genome[size_t(g)];
  }
  return pop;
}

// Every genome of the space, evaluated: the true optimum of objective 0, and in `at_best` how
// many genomes reach it.
double brute_force_best(const psa::DesignSpace& ds, size_t* at_best = nullptr) {
  const SpaceView& v = *ds.view;
  const size_t n = size_t(space_size(v));
  const Population pop = whole_space(v);
  Scores s;
  make_cpu_population_evaluator(v, ds.objectives)->evaluate(pop, s, nullptr);
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i)
    if (s.feasible(i)) best = std::min(best, s.at(i, 0));
  if (at_best) {
    *at_best = 0;
    for (size_t i = 0; i < n; ++i) *at_best += s.feasible(i) && s.at(i, 0) == best;
  }
  return best;
}

// Runs an agent for `gens` generations; returns every genome asked (the history).
std::vector<int32_t> history(const std::string& name, const psa::DesignSpace& ds, const Params& p, uint64_t seed,
                             int gens) {
  auto made = agents::make_agent(name, cards(*ds.view), int32_t(ds.objectives.size()), p, seed);
  auto eval = make_cpu_population_evaluator(*ds.view, ds.objectives);
  Population pop;
  pop.resize(ds.view->ngenes, made.population);
  Scores s;
  std::vector<int32_t> all;
  for (int k = 0; k < gens; ++k) {
    made.agent->ask(pop);
    eval->evaluate(pop, s, nullptr);
    made.agent->tell(pop, s);
    all.insert(all.end(), pop.genes.begin(), pop.genes.end());
  }
  return all;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("cosmic_test_agents_" + name)).string();
}

// ---------------------------------------------------------------------------------------------
TEST(AgentParams, BadHyperparametersAreRefusedWithAClearMessage) {
  const std::vector<int32_t> card{4, 3};
  struct Case {
    const char* agent;
    const char* key;
    const char* value;
    const char* message;
  };
  const Case cases[] = {
      {"ga", "ga.mutation_rate", "2", "ga.mutation_rate: expected auto or a number in [0, 1], got '2'"},
      {"ga", "ga.population", "1", "ga.population: expected an integer in [2, 100000000], got '1'"},
      {"ga", "ga.tournament", "two", "ga.tournament: expected an integer in [1, 64], got 'two'"},
      {"ga", "ga.crossover_rate", "-0.1", "ga.crossover_rate: expected a number in [0, 1], got '-0.1'"},
      {"rw", "rw.population", "0", "rw.population: expected an integer in [1, 100000000], got '0'"},
      {"aco", "aco.greediness", "1.5", "aco.greediness: expected a number in [0, 1], got '1.5'"},
      {"aco", "aco.evaporation", "nan", "aco.evaporation: expected a number in [0, 1], got 'nan'"},
      {"bo", "bo.gamma", "0", "bo.gamma: expected a number in [1e-06, 1], got '0'"},
      {"bo", "bo.candidates", "2.5", "bo.candidates: expected an integer in [1, 100000], got '2.5'"},
      {"nsga2", "nsga2.mutation_rate", "x", "nsga2.mutation_rate: expected auto or a number in [0, 1], got 'x'"},
      {"ga", "ga.mutation_rate", "1e999", "ga.mutation_rate: expected auto or a number in [0, 1], got '1e999'"},
      {"ga", "ga.population", "0x10", "ga.population: expected an integer in [2, 100000000], got '0x10'"},  // decimal only
      {"ga", "ga.crossover_rate", "0x1p-1", "ga.crossover_rate: expected a number in [0, 1], got '0x1p-1'"},
  };
  // Values that underflow (strtod's ERANGE) are in range: 1e-310 is a subnormal, 1e-400 is 0.
  for (const char* tiny : {"1e-310", "4.9e-324", "1e-400"})
    EXPECT_NO_THROW(agents::make_agent("ga", card, 2, Params{{"ga.mutation_rate", tiny}}, 1)) << tiny;
  for (const Case& c : cases) {
    Params p{{c.key, c.value}};
    try {
      agents::make_agent(c.agent, card, 2, p, 1);
      ADD_FAILURE() << c.key << "=" << c.value << " accepted";
    } catch (const agents::ParamError& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
  for (const char* a : kAgents) {  // misspelled key
    Params p{{std::string(a) + ".populaton", "8"}};
    try {
      agents::make_agent(a, card, 2, p, 1);
      ADD_FAILURE() << a << ": unknown key accepted";
    } catch (const agents::ParamError& e) {
      EXPECT_NE(std::string(e.what()).find("unknown hyperparameter"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(agents::make_agent("sa", card, 1, {}, 1), agents::ParamError);
  Params p;
  agents::add_param(p, "ga", "mutation_rate=0.25");
  EXPECT_EQ(p.at("ga.mutation_rate"), "0.25");
  EXPECT_THROW(agents::add_param(p, "ga", "mutation_rate"), agents::ParamError);
  // Spaces around a key or value are dropped (`tournament= 3` was kept as ' 3'); a blank value is
  // refused here, and one that reaches the reader (a PSA's "") is quoted in its error.
  agents::add_param(p, "ga", " tournament = 3 ");
  EXPECT_EQ(p.at("ga.tournament"), "3");
  p.erase("ga.tournament");
  EXPECT_THROW(agents::add_param(p, "ga", "tournament= "), agents::ParamError);
  try {
    agents::make_agent("ga", card, 1, {{"ga.mutation_rate", ""}}, 1);
    ADD_FAILURE() << "a blank mutation rate accepted";
  } catch (const agents::ParamError& e) {
    EXPECT_EQ(std::string(e.what()), "ga.mutation_rate: expected auto or a number in [0, 1], got ''");
  }
  // auto in any case, as a PSA file's choices; it records as auto.
  agents::Params effective;
  agents::GaParams::from({{"ga.mutation_rate", "AUTO"}}, &effective);
  EXPECT_EQ(effective.at("ga.mutation_rate"), "auto");
  EXPECT_THROW(agents::GaParams::from({{"ga.mutation_rate", "autos"}}), agents::ParamError);
  try {  // twice: refused, not the last one kept
    agents::add_param(p, "ga", "ga.mutation_rate=0.5");
    ADD_FAILURE() << "a key given twice accepted";
  } catch (const agents::ParamError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--param ga.mutation_rate given twice (ga.mutation_rate=0.25 and ga.mutation_rate=0.5): give it once");
  }
  // --param keys of another agent (or a misspelt one) would be recorded and never read: refused.
  for (const char* kv : {"aco.greediness=0.3", "nsga.mutation_rate=0.5", "xx.foo=1"}) {
    try {
      agents::add_param(p, "ga", kv);
      ADD_FAILURE() << kv << " accepted";
    } catch (const agents::ParamError& e) {
      EXPECT_NE(std::string(e.what()).find("runs agent ga"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(p.size(), 1u);
  p["aco.greediness"] = "0.3";  // a PSA file may configure several agents
  EXPECT_NO_THROW(agents::make_agent("ga", card, 1, p, 1));  // the others' keys are ignored
}

// The PSA file's `agent:` mapping: the searched agent's entries are read; every agent it names is
// checked, and errors name the file, line and key.
TEST(AgentParams, PsaAgentSection) {
  const std::string head = "base: configs/cosmic-system1-baseline.yaml\nparameters: {workload: {dp: [4, 8]}}\nobjectives: latency\n";
  auto psa = [&](const std::string& name, const std::string& agent_section) {
    const std::string path = ::testing::TempDir() + name;
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs((head + agent_section).c_str(), f);
    std::fclose(f);
    return path;
  };
  const psa::DesignSpace ds = psa::load_psa(psa("agents_ok.yaml", "agent:\n  ga: {population: 64, mutation_rate: 0.1}\n  aco: {greediness: 0.2}\n"));
  const Params p = psa_agent_params(ds, "ga");
  EXPECT_EQ(p, (Params{{"ga.population", "64"}, {"ga.mutation_rate", "0.1"}}));
  EXPECT_EQ(psa_agent_params(ds, "aco"), (Params{{"aco.greediness", "0.2"}}));
  EXPECT_TRUE(psa_agent_params(psa::load_psa(psa("agents_none.yaml", "")), "ga").empty());
  // `cosmic space` shows them.
  const std::string ok = psa("agents_ok.yaml", "agent:\n  ga: {population: 64, mutation_rate: 0.1}\n  aco: {greediness: 0.2}\n");
  const test::CliRun shown = test::run_cli("space " + ok);
  EXPECT_NE(shown.out.find("\nagent:       ga mutation_rate=0.1 population=64\n             aco greediness=0.2\n"),
            std::string::npos) << shown.out;
  const auto j = nlohmann::json::parse(test::run_cli("space " + ok + " --json").out);
  EXPECT_EQ(j["agent"]["ga"]["population"], "64");
  EXPECT_EQ(j["agent"]["aco"]["greediness"], "0.2");
  // Shapes: refused when the file is loaded.
  for (const std::string bad : {"agent: [ga]\n", "agent: {ga: 3}\n", "agent: {ga: {population: [1, 2]}}\n"}) {
    const std::string path = psa("agents_shape.yaml", bad);
    try {
      psa::load_psa(path);
      ADD_FAILURE() << bad;
    } catch (const psa::ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ":4:", 0), 0u) << e.what();
    }
  }
  // Names and values: refused by the search, for any agent named, at the key's line.
  const std::pair<std::string, std::string> cases[] = {
      {"agent:\n  gaa: {population: 10}\n", ":5:3: agent: unknown agent 'gaa'"},
      {"agent:\n  aco: {greediness: 0.2}\n  ga:\n    population: 0\n", ":7:5: agent: ga.population: expected an integer"},
      {"agent:\n  bo: {bogus: 1}\n", ":5:8: agent: bo.bogus: unknown hyperparameter"}};
  for (const auto& [section, says] : cases) {
    const std::string path = psa("agents_bad.yaml", section);
    const psa::DesignSpace bad = psa::load_psa(path);
    try {
      psa_agent_params(bad, "ga");
      ADD_FAILURE() << section;
    } catch (const psa::ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + says, 0), 0u) << e.what();
    }
  }
  // The command line's values win over the file's, a bad one in the file included; a bad one
  // given is the command line's error.
  const psa::DesignSpace zero = psa::load_psa(psa("agents_zero.yaml", "agent:\n  ga: {population: 0, tournament: 3}\n"));
  EXPECT_EQ(psa_agent_params(zero, "ga", {{"ga.population", "8"}}), (Params{{"ga.population", "8"}, {"ga.tournament", "3"}}));
  EXPECT_THROW(psa_agent_params(zero, "ga"), psa::ConfigError);
  EXPECT_THROW(psa_agent_params(zero, "ga", {{"ga.population", "8"}, {"ga.tournament", "0"}}), agents::ParamError);
}

TEST(Agents, SameSeedSameHistoryDifferentSeedDifferent) {
  const auto ds = tiny_space({Objective::Latency, Objective::Cost});
  for (const char* a : kAgents) {
    const Params p{{std::string(a) + ".population", "64"}};
    const auto h1 = history(a, ds, p, 7, 6), h2 = history(a, ds, p, 7, 6), h3 = history(a, ds, p, 8, 6);
    EXPECT_EQ(h1, h2) << a;
    EXPECT_NE(h1, h3) << a;
  }
}

TEST(Agents, HistoryDoesNotDependOnTheThreadCount) {
  const auto ds = tiny_space({Objective::Latency, Objective::Cost});
  const int threads = omp_get_max_threads();
  // Populations large enough for the parallel paths (blocks of children or ants from 4,096,
  // sorts and selections from 32,768), on 1, 2 and 3 threads. BO, for small populations, has no
  // parallel path (a smaller population would run every agent on one thread whatever the count).
  for (const char* a : {"rw", "ga", "aco", "nsga2"}) {
    const Params p{{std::string(a) + ".population", "40000"}};
    omp_set_num_threads(1);
    const auto h1 = history(a, ds, p, 7, 3);
    for (int t : {2, 3}) {
      omp_set_num_threads(t);
      EXPECT_EQ(history(a, ds, p, 7, 3), h1) << a << " on " << t << " threads";
    }
  }
  omp_set_num_threads(threads);
}

// BO's ask() asks the run whether to stop (a signal, the time limit: Agent::stop_when()): yes, it throws
// Interrupted and leaves the agent as it was, so that the next ask() asks what an agent never
// interrupted asks (a search then stops as before the generation and resumes to the same file).
TEST(Agents, BoAskStopsOnTheRunsFlagAndChangesNothing) {
  const auto ds = tiny_space({Objective::Latency});
  const Params p{{"bo.population", "3000"}, {"bo.startup", "16"}};
  auto stopped = agents::make_agent("bo", cards(*ds.view), 1, p, 5), plain = agents::make_agent("bo", cards(*ds.view), 1, p, 5);
  auto eval = make_cpu_population_evaluator(*ds.view, ds.objectives);
  Population a, b;
  a.resize(ds.view->ngenes, 3000);
  b.resize(ds.view->ngenes, 3000);
  Scores s;
  bool stop = false;
  stopped.agent->stop_when([&] { return stop; });
  for (int gen = 0; gen < 3; ++gen) {  // the first generation is the startup's uniform draws
    if (gen > 0) {
      stop = true;
      EXPECT_THROW(stopped.agent->ask(a), agents::Interrupted) << "generation " << gen;
      EXPECT_THROW(stopped.agent->tell(a, s), std::invalid_argument);  // no ask() to tell
      stop = false;
    }
    stopped.agent->ask(a);
    plain.agent->ask(b);
    ASSERT_EQ(a.genes, b.genes) << "generation " << gen;
    eval->evaluate(a, s, nullptr);
    stopped.agent->tell(a, s);
    plain.agent->tell(b, s);
  }
}

TEST(Agents, MutationRespectsCardinalities) {
  const std::vector<int32_t> card{1, 2, 3, 7, 2048};
  auto made = agents::make_agent("ga", card, 1, {{"ga.population", "500"}, {"ga.mutation_rate", "1"}}, 5);
  Population pop;
  pop.resize(int32_t(card.size()), made.population);
  Scores s;
  agents::Rng r(1);
  for (int gen = 0; gen < 4; ++gen) {
    made.agent->ask(pop);
    for (size_t i = 0; i < pop.size; ++i)
      for (int32_t g = 0; g < pop.ngenes; ++g) ASSERT_TRUE(pop.at(i, g) >= 0 && pop.at(i, g) < card[size_t(g)]);
    s.resize(1, pop.size);
    for (size_t i = 0; i < pop.size; ++i) s.obj[i] = r.uniform();
    made.agent->tell(pop, s);
  }
}

// mutate() reads the geometric skip from a table instead of computing the logarithm: it must
// give the formula's skip (capped at the genome's length) for every draw, checked on random
// draws, on every draw within 64 of where the skip steps up (the inverse of the formula) and
// either side of the edges of the table's slices.
TEST(Agents, MutationSkipsEqualTheGeometricFormula) {
  agents::Rng r(3);
  for (double rate : {1.0 / 36, 0.01, 0.3, 0.9, 1e-7})
    for (size_t ng : {size_t(1), size_t(5), size_t(36), size_t(100)}) {
      const agents::MutationSkips skips(rate, ng);
      const double log_keep = std::log1p(-rate);
      const auto expected = [&](uint64_t x) {
        return int32_t(std::min(double(ng), agents::MutationSkips::formula(x, log_keep)));
      };
      for (int i = 0; i < 100000; ++i) {
        const uint64_t x = r.next() >> 11;
        ASSERT_EQ(skips.skip(x), expected(x)) << "rate " << rate << " ng " << ng << " draw " << x;
      }
      for (size_t k = 1; k <= ng; ++k) {
        const double step = -std::expm1(double(k) * log_keep) * 0x1.0p53;
        if (step >= 0x1.0p53 - 64) break;
        for (uint64_t x = uint64_t(std::max(64.0, step)) - 64; x < uint64_t(step) + 64; ++x)
          ASSERT_EQ(skips.skip(x), expected(x)) << "rate " << rate << " ng " << ng << " draw " << x;
      }
      for (uint64_t slice = 1; slice < 1024; ++slice)  // either side of the look-up table's slices
        for (uint64_t x : {(slice << 43) - 1, slice << 43})
          ASSERT_EQ(skips.skip(x), expected(x)) << "rate " << rate << " ng " << ng << " draw " << x;
      EXPECT_EQ(skips.skip(0), 0);
      const uint64_t last = (uint64_t(1) << 53) - 1;
      EXPECT_EQ(skips.skip(last), expected(last));
    }
}

// The hyperparameters a run records as effective: every key with its value, the defaults as
// docs/agents.md's table gives them, a given value as it reads back.
TEST(Agents, EffectiveHyperparametersAreTheDocumentedDefaults) {
  const std::map<std::string, Params> documented = {
      {"rw", {{"rw.population", "4096"}}},
      {"ga", {{"ga.population", "4096"}, {"ga.tournament", "2"}, {"ga.crossover_rate", "0.9"},
              {"ga.mutation_rate", "auto"}, {"ga.elite_fraction", "0.01"}}},
      {"aco", {{"aco.population", "1024"}, {"aco.greediness", "0.5"}, {"aco.evaporation", "0.1"},
               {"aco.local", "0.1"}, {"aco.elite_fraction", "0.01"}}},
      {"bo", {{"bo.population", "16"}, {"bo.startup", "64"}, {"bo.gamma", "0.15"}, {"bo.candidates", "24"},
              {"bo.prior_weight", "1"}}},
      {"nsga2", {{"nsga2.population", "4096"}, {"nsga2.crossover_rate", "0.9"}, {"nsga2.mutation_rate", "auto"}}},
  };
  for (const auto& [agent, want] : documented) {
    Params effective;
    agents::check_params(agent, {}, &effective);
    EXPECT_EQ(effective, want) << agent;
  }
  Params effective;
  agents::check_params("ga", {{"ga.mutation_rate", "6.25e-2"}, {"ga.population", "2e3"}}, &effective);
  EXPECT_EQ(effective.at("ga.mutation_rate"), "0.0625");
  EXPECT_EQ(effective.at("ga.population"), "2000");
}

// ACO's roulette reads the value drawn from a table of the draws at which each cumulative
// pheromone sum is reached: it must give what comparing the sums one by one gives (the first
// value whose cumulative sum exceeds u x total), for random draws, every draw within 64 of each
// sum and either side of the table's 256 slices; on pheromone tables that are uniform, random,
// one value far above the floor, and of 1 to 2,047 values.
TEST(Agents, AcoRouletteTableEqualsTheCumulativeSums) {
  agents::Rng r(11);
  const auto check = [&](const std::vector<double>& tau) {
    const int32_t card = int32_t(tau.size());
    const agents::DrawCounter table = agents::Aco::roulette_table(tau.data(), card);
    std::vector<double> cum(tau.size());
    double total = 0;
    for (size_t v = 0; v < tau.size(); ++v) cum[v] = total += tau[v];
    const auto expected = [&](uint64_t x) {
      const double at = double(x) * 0x1.0p-53 * total;
      int32_t v = 0;
      while (v + 1 < card && cum[size_t(v)] <= at) ++v;
      return v;
    };
    const auto at = [&](uint64_t x) {
      ASSERT_EQ(table.count(x), expected(x)) << "card " << card << " draw " << x;
    };
    for (int i = 0; i < 20000; ++i) at(r.next() >> 11);
    for (int32_t v = 0; v + 1 < card; ++v) {
      const double step = cum[size_t(v)] / total * 0x1.0p53;
      for (uint64_t x = uint64_t(std::max(64.0, step)) - 64; x < std::min(uint64_t(step) + 64, uint64_t(1) << 53); ++x)
        at(x);
    }
    for (uint64_t slice = 1; slice < 256; ++slice)
      for (uint64_t x : {(slice << 45) - 1, slice << 45}) at(x);
    at(0);
    at((uint64_t(1) << 53) - 1);
  };
  for (int32_t card : {1, 2, 3, 8, 36, 256, 2047}) {
    check(std::vector<double>(size_t(card), 1.0 / card));  // the first generation: all tied
    std::vector<double> tau(static_cast<size_t>(card));
    for (double& t : tau) t = r.uniform() + 1e-3;
    check(tau);
    std::fill(tau.begin(), tau.end(), 0.01 / card);  // the floor, and one value above it
    tau[size_t(r.below(uint64_t(card)))] = 0.9;
    check(tau);
  }
}

// first_k (elitism, ACO's elite, BO's split) against a whole sort of the indices under
// stands_before, with many ties (so the index decides) and infeasible points among them. From
// 32,768 points the search is split over the threads: 1, 2, 3, 5 and 8 of them (with 5 and 8
// and k = n / 4 a part is smaller than k, and the parts' winners are gathered in place). The
// second set of values has negatives, zeros of both signs (equal, as < takes them) and
// neighbours one bit apart.
TEST(Agents, FirstKEqualsTheStartOfAFullSort) {
  agents::Rng r(5);
  const int threads_before = omp_get_max_threads();
  const auto coarse = [&] { return double(r.below(50)) * 0.5; };
  const auto close = [&] {
    const double v[] = {-0.0, 0.0, -1.5, 3.0, std::nextafter(3.0, 4.0), std::nextafter(std::nextafter(3.0, 4.0), 4.0), 1e300};
    return v[r.below(7)];
  };
  for (const auto& value : {std::function<double()>(coarse), std::function<double()>(close)})
    for (size_t n : {1, 2, 7, 1000, 30000, 32768, 32769, 70001}) {
      std::vector<agents::Standing> f(n);
      for (auto& s : f) s = {value(), int32_t(r.below(4) == 0)};
      std::vector<size_t> order(n);
      std::iota(order.begin(), order.end(), size_t(0));
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return agents::stands_before(f.data(), a, b); });
      for (size_t k : {size_t(0), size_t(1), size_t(3), n / 100, n / 4, n / 3, n, n + 5}) {
        const size_t m = std::min(k, n);
        const std::vector<size_t> first(order.begin(), order.begin() + ptrdiff_t(m));
        const std::vector<size_t> last(order.rbegin(), order.rbegin() + ptrdiff_t(m));
        for (int threads : {1, 2, 3, 5, 8}) {
          omp_set_num_threads(threads);
          EXPECT_EQ(agents::first_k(f, k), first) << "n " << n << " k " << k << " threads " << threads;
          EXPECT_EQ(agents::first_k(f, k, /*last=*/true), last) << "n " << n << " k " << k << " threads " << threads;
        }
      }
    }
  omp_set_num_threads(threads_before);
}

// tell() takes the population the last ask() filled: GA and NSGA-II keep the children they bred
// as the next parents. Every agent refuses a tell() without a matching ask() (at the first
// generation and at a later one, a second tell() for one ask()) and scores of another size, and
// a refused call leaves it as it was: its next ask() is a fresh agent's after the same valid
// calls.
TEST(Agents, TellWithoutAskIsRefused) {
  for (const char* name : {"rw", "ga", "aco", "bo", "nsga2"}) {
    const agents::Params params = {{std::string(name) + ".population", "8"}};
    auto made = agents::make_agent(name, {3, 4}, 1, params, 1);
    auto twin = agents::make_agent(name, {3, 4}, 1, params, 1);
    Population pop, twin_pop;
    pop.resize(2, 8);
    twin_pop.resize(2, 8);
    Scores s, short_s;
    s.resize(1, 8);
    short_s.resize(1, 7);
    const auto score = [&](const Population& p) {  // objective: the sum of the genes
      for (size_t i = 0; i < 8; ++i) s.obj[i] = double(p.at(i, 0) + p.at(i, 1));
    };
    EXPECT_THROW(made.agent->tell(pop, s), std::invalid_argument) << name;
    for (int gen = 0; gen < 3; ++gen) {
      made.agent->ask(pop);
      twin.agent->ask(twin_pop);
      EXPECT_EQ(pop.genes, twin_pop.genes) << name << " generation " << gen;
      EXPECT_THROW(made.agent->tell(pop, short_s), std::invalid_argument) << name;
      // NSGA-II is made for one objective; the GA keeps its parents' scores for elitism, and
      // from its second generation they have one.
      if (std::string(name) == "nsga2" || (std::string(name) == "ga" && gen > 0)) {
        Scores two;
        two.resize(2, 8);
        EXPECT_THROW(made.agent->tell(pop, two), std::invalid_argument) << name;
      }
      score(pop);
      made.agent->tell(pop, s);
      twin.agent->tell(twin_pop, s);
      EXPECT_THROW(made.agent->tell(pop, s), std::invalid_argument) << name << " generation " << gen;
    }
  }
}

// Parents are kept one byte per gene when every cardinality is <= 256, else four: both stores
// must hold the same genomes and breed the same children from them.
// 21 genes: one-byte genes are crossed, and written to the population, eight at a time, so this
// covers two words and a tail.
TEST(Agents, NarrowAndWideParentRowsBreedTheSameChildren) {
  std::vector<int32_t> card{3, 256, 7, 2, 40, 5, 9, 2, 2, 17, 3, 4, 100, 6, 2, 2, 3, 11, 8, 5, 40};
  std::vector<int32_t> wide_card = card;
  wide_card.back() = 1000;  // one gene over 256: four bytes a gene
  const size_t n = 5000;
  Population parents;
  parents.resize(int32_t(card.size()), n);
  agents::random_population(parents, card, 9, 0);
  agents::ParentRows narrow(card), wide(wide_card);
  narrow.resize(n);
  wide.resize(n);
  std::vector<int32_t> a(card.size()), b(card.size());
  for (size_t i = 0; i < n; ++i) {
    for (size_t g = 0; g < card.size(); ++g) a[g] = parents.at(i, int32_t(g));
    narrow.set(i, a.data());
    wide.set(i, a.data());
  }
  for (size_t i = 0; i < n; ++i) {
    narrow.get(i, a.data());
    wide.get(i, b.data());
    for (size_t g = 0; g < card.size(); ++g) {
      ASSERT_EQ(a[g], parents.at(i, int32_t(g)));
      ASSERT_EQ(b[g], parents.at(i, int32_t(g)));
    }
  }
  std::vector<agents::Standing> standing(n);
  for (size_t i = 0; i < n; ++i) standing[i] = {double(i % 17), int32_t(i % 5 == 0)};
  agents::Breeding br(narrow, standing, 3, 0.9, 0.2);
  Population from_narrow, from_wide;
  from_narrow.resize(int32_t(card.size()), 6003);  // the last block: 115 children, not a multiple of 8
  from_wide.resize(int32_t(card.size()), 6003);
  agents::breed(from_narrow, card, 4, 1, br);
  br.rows = &wide;
  agents::breed(from_wide, card, 4, 1, br);
  EXPECT_EQ(from_narrow.genes, from_wide.genes);
  EXPECT_NE(from_narrow.genes, std::vector<int32_t>(from_narrow.genes.size(), 0));
}

// byte_masks() against its definition, for every byte.
TEST(Breeding, ByteMasksSetTheBytesOfTheSetBits) {
  for (uint64_t bits = 0; bits < 256; ++bits) {
    uint64_t want = 0;
    for (int j = 0; j < 8; ++j)
      if (bits >> j & 1) want |= uint64_t(0xff) << (8 * j);
    ASSERT_EQ(agents::byte_masks(bits), want) << bits;
  }
}

// breed_child()'s view of a breeding with parents (b.parents() > 0), of the host's rows and
// records, `skips` made for b.mutation_rate (the CUDA evaluator builds its own from what it
// copied: BreedPacking::view).
template <class Gene, class Record>
agents::BreedView<Gene, Record> breed_view(const agents::Breeding& b, const Gene* rows, const Record* records,
                                           const int32_t* card, int32_t ngenes, agents::SkipView skips, uint64_t seed,
                                           uint64_t gen) {
  return {rows, records, uint64_t(b.parents()), card, ngenes, int32_t(std::max<int64_t>(1, b.tournament)),
          b.crossover_rate, skips, seed, gen};
}

// breed_child(), one child at a time as a CUDA thread makes it, gives the children breed() makes
// in blocks on the CPU threads: GA's and NSGA-II's records, one- and four-byte genes, tournaments
// of 1 to 5, crossover never / sometimes / always, mutation never / auto / often / always.
TEST(Breeding, OneChildAtATimeEqualsTheBlocks) {
  const std::vector<int32_t> narrow_card{3, 256, 7, 2, 40, 5, 9, 2, 2, 17, 3, 4, 100, 6, 2, 1, 3, 11, 8, 5, 40};
  std::vector<int32_t> wide_card = narrow_card;
  wide_card.back() = 1000;
  const size_t nparents = 3000, nchildren = 4500;  // 4,500: blocks on several threads, a short last block
  std::vector<agents::Standing> standing(nparents);
  std::vector<agents::Crowded> crowded(nparents);
  for (size_t i = 0; i < nparents; ++i) {
    standing[i] = {double(i % 17), int32_t(i % 5 == 0)};
    crowded[i] = {int32_t(i % 7), double(i % 11)};
  }
  for (const std::vector<int32_t>* card : {&narrow_card, static_cast<const std::vector<int32_t>*>(&wide_card)}) {
    const int32_t ng = int32_t(card->size());
    Population parents;
    parents.resize(ng, nparents);
    agents::random_population(parents, *card, 9, 0);
    agents::ParentRows rows(*card);
    rows.resize(nparents);
    std::vector<int32_t> row(static_cast<size_t>(ng));
    for (size_t i = 0; i < nparents; ++i) {
      for (int32_t g = 0; g < ng; ++g) row[size_t(g)] = parents.at(i, g);
      rows.set(i, row.data());
    }
    for (int64_t t : {1, 2, 5})
      for (double cross : {0.0, 0.6, 1.0})
        for (double mut : {0.0, 1.0 / ng, 0.3, 1.0}) {
          const bool crowding = t == 2 && cross > 0;
          const agents::Breeding b = crowding ? agents::Breeding(rows, crowded, t, cross, mut)
                                              : agents::Breeding(rows, standing, t, cross, mut);
          Population blocks;
          blocks.resize(ng, nchildren);
          agents::ParentRows block_rows(*card);
          agents::breed(blocks, *card, 5, 3, b, &block_rows);
          const agents::MutationSkips skips(mut, card->size());
          rows.visit([&](const auto* parent_rows) {
            using Gene = std::remove_const_t<std::remove_pointer_t<decltype(parent_rows)>>;
            b.visit_records([&](const auto* records) {
              const auto v = breed_view(b, parent_rows, records, card->data(), ng, skips.view(), 5, 3);
              std::vector<Gene> child(static_cast<size_t>(ng));
              std::vector<int32_t> from_rows(static_cast<size_t>(ng));
              for (size_t i = 0; i < nchildren; ++i) {
                agents::breed_child(v, i, child.data());
                block_rows.get(i, from_rows.data());
                for (int32_t g = 0; g < ng; ++g) {
                  ASSERT_EQ(int32_t(child[size_t(g)]), blocks.at(i, g))
                      << "child " << i << " gene " << g << ", tournament " << t << ", crossover " << cross
                      << ", mutation " << mut << ", " << sizeof(Gene) << "-byte genes";
                  ASSERT_EQ(int32_t(child[size_t(g)]), from_rows[size_t(g)]);
                }
              }
            });
          });
          if (mut > 0) EXPECT_NE(blocks.genes, std::vector<int32_t>(blocks.genes.size(), 0));
        }
  }
}

// The CUDA evaluator's breeding without the device: the agent's task flattened (breed_plan()),
// packed into one buffer as it is copied to the device (BreedPacking), and each child made by
// breed_child() from the packed buffer gives the children the agent's ask() gives. GA with
// one-byte genes, NSGA-II with four-byte genes (made-up scores).
TEST(Breeding, PackedForTheDeviceBreedsAsAsk) {
  std::vector<int32_t> card{3, 256, 7, 2, 40, 5, 9, 2, 2, 17, 3, 4, 100, 6, 2, 1, 3, 11, 8, 5, 40};
  for (const char* name : {"ga", "nsga2"}) {
    if (std::string(name) == "nsga2") card.back() = 1000;
    const int32_t nobj = std::string(name) == "ga" ? 1 : 2, ng = int32_t(card.size());
    const size_t n = 3001;
    const Params params{{std::string(name) + ".population", std::to_string(n)}};
    auto packed = agents::make_agent(name, card, nobj, params, 11).agent;
    auto asked = agents::make_agent(name, card, nobj, params, 11).agent;
    Population a, b;
    a.resize(ng, n);
    b.resize(ng, n);
    for (int gen = 0; gen < 3; ++gen) {
      agents::BreedTask task;
      if (packed->breeding(task)) {
        const agents::MutationSkips skips(task.breeding.mutation_rate, card.size());
        const BreedPlan plan = breed_plan(task, skips, n);
        const BreedPacking at(plan);
        for (size_t offset : {at.records, at.rows, at.skip_first, at.card, at.skip_slices, at.bytes})
          EXPECT_EQ(offset % 16, 0u);
        std::vector<uint64_t> buffer(at.bytes / 8);
        const char* base = reinterpret_cast<const char*>(buffer.data());
        at.pack(plan, reinterpret_cast<char*>(buffer.data()));
        const auto make = [&](auto gene, auto record) {
          const auto v = at.view<decltype(gene), decltype(record)>(plan, base);
          std::vector<decltype(gene)> child(card.size());
          for (size_t i = 0; i < n; ++i) {
            agents::breed_child(v, i, child.data());
            for (int32_t g = 0; g < ng; ++g) a.at(i, g) = int32_t(child[size_t(g)]);
          }
        };
        ASSERT_EQ(plan.gene_bytes, std::string(name) == "ga" ? 1u : 4u);
        ASSERT_EQ(plan.crowded, std::string(name) == "nsga2");
        if (plan.gene_bytes == 1) plan.crowded ? make(uint8_t{}, agents::Crowded{}) : make(uint8_t{}, agents::Standing{});
        else plan.crowded ? make(int32_t{}, agents::Crowded{}) : make(int32_t{}, agents::Standing{});
        // The children's rows, as the device copies them back: from the genes.
        task.children->visit([&](auto* rows) {
          for (size_t i = 0; i < n; ++i)
            for (int32_t g = 0; g < ng; ++g) rows[i * size_t(ng) + size_t(g)] = a.at(i, g);
        });
        packed->bred(a);
      } else {
        packed->ask(a);
      }
      asked->ask(b);
      ASSERT_EQ(a.genes, b.genes) << name << " generation " << gen;
      const Scores s = made_up_scores(a, nobj);
      packed->tell(a, s);
      asked->tell(b, s);
    }
  }
}

// Random genomes are made one byte a gene when every gene fits (and reach the population through
// the byte transpose): the same genomes as made four bytes a gene.
TEST(Agents, RandomGenomesInBytesEqualThoseInInts) {
  const std::vector<int32_t> card{3, 256, 7, 2, 40, 5, 9, 2, 2, 17, 3, 4, 100, 6, 2, 2, 3, 11, 8, 5, 1};
  Population bytes, ints;
  bytes.resize(int32_t(card.size()), 1003);
  ints.resize(int32_t(card.size()), 1003);
  agents::random_population(bytes, card, 8, 2);
  agents::breed_from(ints, card, 8, 2, agents::Breeding{}, static_cast<const int32_t*>(nullptr),
                     static_cast<const agents::Standing*>(nullptr), nullptr);
  EXPECT_EQ(bytes.genes, ints.genes);
  EXPECT_GT(*std::max_element(bytes.genes.begin(), bytes.genes.end()), 200);
}

// runtime_x_bw on the tiny space has one optimal genome of 6,720, so a budget of a quarter of the
// space (1,680 evaluations) finds it by uniform sampling with probability 1 - (1 - 1/6720)^1680
// = 1 - e^-0.25 = 22%, and on all three seeds with 1%: the agents that select (ga, aco, bo,
// nsga2) must find it on each. rw is uniform sampling, with nothing to select, so it gets
// several times the space (60,000: it misses with probability e^(-60000/6720) = e^-8.9 = 1e-4);
// its case checks only that its samples reach that point.
TEST(Agents, EachAgentFindsTheOptimumOfASmallSpace) {
  const auto ds = tiny_space({Objective::RuntimeXBw});
  ASSERT_TRUE(space_size(*ds.view) == 6720);
  size_t at_best = 0;
  const double best = brute_force_best(ds, &at_best);
  ASSERT_TRUE(std::isfinite(best));
  ASSERT_EQ(at_best, 1u);
  struct Case {
    const char* agent;
    uint64_t budget;
    Params params;
    std::vector<uint64_t> seeds;
  };
  const Case cases[] = {
      {"rw", 60000, {{"rw.population", "1000"}}, {11}},
      {"ga", 1680, {{"ga.population", "50"}}, {11, 12, 13}},
      {"aco", 1680, {{"aco.population", "100"}}, {11, 12, 13}},
      {"bo", 1680, {{"bo.population", "16"}}, {11, 12, 13}},
      {"nsga2", 1680, {{"nsga2.population", "50"}}, {11, 12, 13}},
  };
  for (const Case& c : cases)
    for (uint64_t seed : c.seeds) {
      SearchOptions o;
      o.agent = c.agent;
      o.params = c.params;
      o.seed = seed;
      o.budget = c.budget;
      o.backend = "cpu";
      o.quiet = true;
      o.out = temp_path(std::string("opt_") + c.agent + ".h5");
      SearchSummary sum;
      ASSERT_EQ(run_search(ds, o, &sum), 0);
      EXPECT_EQ(sum.best_objective, best) << c.agent << " seed " << seed << ": best " << sum.best_objective
                                          << " vs optimum " << best;
      EXPECT_EQ(sum.evaluations, c.budget);
      std::filesystem::remove(o.out);
    }
}

// A search file's time breakdown (docs/results-format.md): present, non-negative, and the three
// phases of the loop's thread fit in the wall time.
void expect_times(const std::string& path, const SearchSummary& sum) {
  h5::Handle f = h5::open_file(path, false);
  const double wall = h5::attr_double(f.id(), "wall_time_s");
  double phases = 0;
  for (const char* k : {"eval_s", "agent_s", "write_s", "writer_s"}) {
    ASSERT_TRUE(h5::has_attr(f.id(), k)) << path << ": no " << k;
    EXPECT_GE(h5::attr_double(f.id(), k), 0.0) << k;
    if (std::string(k) != "writer_s") phases += h5::attr_double(f.id(), k);
  }
  EXPECT_GT(wall, 0.0);
  EXPECT_LE(phases, wall) << path;
  EXPECT_EQ(sum.wall_s, wall);
  EXPECT_EQ(sum.eval_s, h5::attr_double(f.id(), "eval_s"));
  EXPECT_EQ(sum.write_s, h5::attr_double(f.id(), "write_s"));
  // The per-generation columns hold the same evaluator and agent times (this session's and earlier ones').
  h5::Handle g = h5::group(f.id(), "generations", false);
  double ev = 0, ag = 0;
  for (double x : h5::read_column<double>(g.id(), "eval_s")) ev += x;
  for (double x : h5::read_column<double>(g.id(), "agent_s")) ag += x;
  EXPECT_NEAR(ev, sum.eval_s, 1e-9 * std::max(1.0, ev));
  EXPECT_NEAR(ag, sum.agent_s, 1e-9 * std::max(1.0, ag));
}

// The columns of /evaluated a search writes (genes, objectives, the rest) as doubles, for
// comparing files.
std::map<std::string, std::vector<double>> evaluated_columns(const std::string& path, const psa::DesignSpace& ds) {
  std::map<std::string, std::vector<double>> cols;
  h5::Handle f = h5::open_file(path, false);
  if (!h5::exists(f.id(), "evaluated")) return cols;
  h5::Handle e = h5::group(f.id(), "evaluated", false);
  const auto as_double = [](const auto& v) { return std::vector<double>(v.begin(), v.end()); };
  for (const auto& g : ds.genes) cols[g.name] = as_double(h5::read_column<int16_t>(e.id(), g.name));
  for (Objective ob : ds.objectives) cols[psa::objective_name(ob)] = h5::read_column<double>(e.id(), psa::objective_name(ob));
  for (const char* c : {"violation", "time_s", "memory_bytes", "network_cost_usd", "tokens_per_s", "mfu", "first_token_s"})
    cols[c] = h5::read_column<double>(e.id(), c);
  cols["reason"] = as_double(h5::read_column<int32_t>(e.id(), "reason"));
  cols["generation"] = as_double(h5::read_column<int64_t>(e.id(), "generation"));
  return cols;
}

// A quiet search on the CPU with `agent` at `population` ("<agent>.population").
SearchOptions cpu_search(const std::string& agent, const std::string& population, uint64_t seed, uint64_t budget) {
  SearchOptions o;
  o.agent = agent;
  o.params = {{agent + ".population", population}};
  o.seed = seed;
  o.budget = budget;
  o.backend = "cpu";
  o.quiet = true;
  return o;
}

// The fastest point within a memory limit below what the fastest points take (0.8 x the least
// of them): a limit on a result that is not the objective. Its optimum, from every genome
// evaluated without the limit, is slower than the unlimited one (the limit binds); the evaluator
// under the limit finds it, and so do the agents, whose infeasible points rank by their excess
// over the limit.
TEST(Agents, FindTheOptimumUnderALimit) {
  psa::DesignSpace ds = tiny_space({Objective::Latency});
  SpaceView& v = *ds.view;
  const size_t n = size_t(space_size(v));
  const Population pop = whole_space(v);
  Scores s;
  PopulationMetrics m;
  make_cpu_population_evaluator(v, ds.objectives)->evaluate(pop, s, &m);
  const double* time_s = m.metric(0);
  const double* memory_bytes = m.metric(1);
  double fastest = INFINITY, its_memory = INFINITY, fastest_within = INFINITY;
  for (size_t i = 0; i < n; ++i)
    if (s.feasible(i)) fastest = std::min(fastest, time_s[i]);
  for (size_t i = 0; i < n; ++i)
    if (s.feasible(i) && time_s[i] == fastest) its_memory = std::min(its_memory, memory_bytes[i]);
  for (size_t i = 0; i < n; ++i)
    if (s.feasible(i) && memory_bytes[i] <= 0.8 * its_memory) fastest_within = std::min(fastest_within, time_s[i]);
  ASSERT_GT(fastest_within, fastest);
  ASSERT_LT(fastest_within, INFINITY);
  v.nlimits = 1;
  v.limit_obj[0] = Objective::Memory;
  v.limit_max[0] = 0.8 * its_memory;
  ASSERT_EQ(brute_force_best(ds), fastest_within);
  for (const char* agent : {"ga", "aco", "bo"})
    for (uint64_t seed : {11, 12, 13}) {
      SearchOptions o = cpu_search(agent, agent == std::string("bo") ? "16" : "50", seed, 1680);
      o.out = temp_path(std::string("limit_") + agent + ".h5");
      SearchSummary sum;
      ASSERT_EQ(run_search(ds, o, &sum), 0);
      EXPECT_EQ(sum.best_objective, fastest_within) << agent << " seed " << seed;
      {  // the file records the limit in force, exactly
        h5::Handle f = h5::open_file(o.out, false);
        const std::vector<std::string> limits = h5::attr_strings(f.id(), "limits");
        ASSERT_EQ(limits.size(), 1u);
        EXPECT_EQ(limits[0].substr(0, 10), "memory <= ");
        EXPECT_EQ(std::stod(limits[0].substr(10)), 0.8 * its_memory);
      }
      std::filesystem::remove(o.out);
    }
}

// Changes row `row` of a gene column of /evaluated (0 <-> 1): damage a resume must notice.
void flip_evaluated_gene(hid_t file, const std::string& gene, size_t row) {
  h5::Handle e = h5::group(file, "evaluated", false);
  std::vector<int16_t> col = h5::read_column<int16_t>(e.id(), gene);
  int16_t& v = col.at(row);
  v = int16_t(v == 0 ? 1 : 0);
  h5::write_column(e.id(), gene, col);
}

// A search (resumed, say) that ended where `want` did: evaluations, best point, best-so-far curve.
void expect_same_search(const SearchSummary& got, const SearchSummary& want) {
  EXPECT_EQ(got.evaluations, want.evaluations);
  EXPECT_EQ(got.best_objective, want.best_objective);
  EXPECT_EQ(got.best_genome, want.best_genome);
  EXPECT_EQ(got.best_curve, want.best_curve);
  EXPECT_EQ(got.evaluations_curve, want.evaluations_curve);
}

// Options that resume the search in `out` on the CPU, quietly.
SearchOptions resume_options(const std::string& out) {
  SearchOptions o;
  o.out = out;
  o.resume = true;
  o.quiet = true;
  o.backend = "cpu";
  return o;
}

// `o` run into `file` as a session interrupted after `gens` generations (exit status 130);
// returns its options, for a resume of that file.
SearchOptions interrupted(const psa::DesignSpace& ds, SearchOptions o, const std::string& file, uint64_t gens) {
  o.out = temp_path(file);
  o.stop_after_generations = gens;
  EXPECT_EQ(run_search(ds, o, nullptr), 130);
  return o;
}

// Seeds take all 64 bits: a resume reads back 2^63 + 5, not 2^63 - 1 (an int64 read clamps).
TEST(Agents, ResumeKeepsSeedsAbove2To63) {
  const auto ds = tiny_space({Objective::Latency});
  SearchOptions o = cpu_search("ga", "50", (uint64_t(1) << 63) + 5, 300);
  o.out = temp_path("full_bigseed.h5");
  SearchSummary full;
  ASSERT_EQ(run_search(ds, o, &full), 0);
  const SearchOptions part = interrupted(ds, o, "part_bigseed.h5", 2);
  SearchSummary s2;
  ASSERT_EQ(run_search(ds, resume_options(part.out), &s2), 0);
  EXPECT_EQ(s2.best_curve, full.best_curve);
  EXPECT_EQ(evaluated_columns(part.out, ds), evaluated_columns(o.out, ds));
  h5::Handle f = h5::open_file(part.out, false);
  EXPECT_EQ(h5::attr_uint(f.id(), "seed"), (uint64_t(1) << 63) + 5);
}

// Stopping rules: --target stops the session at the first generation whose best is at or below
// it (the optimum here), --stall after that many generations without a better best; each leaves
// the uninterrupted run's first generations, and --resume without the rule runs on to it.
TEST(Agents, TargetAndStallStopTheSession) {
  const auto ds = tiny_space({Objective::Latency});
  const double optimum = brute_force_best(ds);
  SearchOptions o = cpu_search("ga", "20", 3, 2000);
  o.out = temp_path("rules_full.h5");
  SearchSummary full;
  ASSERT_EQ(run_search(ds, o, &full), 0);
  ASSERT_EQ(full.best_objective, optimum);
  const size_t reached = size_t(std::find(full.best_curve.begin(), full.best_curve.end(), optimum) - full.best_curve.begin());
  ASSERT_LT(reached + 3, full.best_curve.size());  // found before the budget's end: the rules have something to stop
  SearchOptions t = o;
  t.out = temp_path("rules_target.h5");
  t.target_set = true;
  t.target = optimum;
  SearchSummary at;
  ASSERT_EQ(run_search(ds, t, &at), 0);
  EXPECT_EQ(at.stopped, "target");
  EXPECT_EQ(at.best_curve, std::vector<double>(full.best_curve.begin(), full.best_curve.begin() + ptrdiff_t(reached + 1)));
  {
    h5::Handle f = h5::open_file(t.out, false);
    EXPECT_EQ(h5::attr_string(f.id(), "stopped"), "target");
    EXPECT_EQ(h5::attr_int(f.id(), "complete"), 0);
  }
  SearchSummary rest;
  ASSERT_EQ(run_search(ds, resume_options(t.out), &rest), 0);
  expect_same_search(rest, full);
  SearchOptions s = o;
  s.out = temp_path("rules_stall.h5");
  s.stall = 3;
  SearchSummary st;
  ASSERT_EQ(run_search(ds, s, &st), 0);
  EXPECT_EQ(st.stopped, "stall");
  ASSERT_GE(st.best_curve.size(), 4u);
  const size_t n = st.best_curve.size();
  EXPECT_EQ(st.best_curve[n - 1], st.best_curve[n - 4]);  // three generations without a better best
  EXPECT_EQ(st.best_curve, std::vector<double>(full.best_curve.begin(), full.best_curve.begin() + ptrdiff_t(n)));
  for (const auto& f : {o.out, t.out, s.out}) std::filesystem::remove(f);
}

// Interrupted twice and resumed, a search gives the file of an uninterrupted run, for every agent
// and every --keep, from the checkpoint each session leaves as it stops (the agent's state, not
// run again; with rows written every generation, flush_s 0, it holds those past the last whole
// chunk again) or without one (every generation run again). Before the last session a kill
// between the two writes of a batch is mimicked: /evaluated holds rows of a generation that
// /generations does not list; the resume drops them.
TEST(Agents, ResumeEqualsUninterrupted) {
  const auto ds1 = tiny_space({Objective::Latency});
  const auto ds2 = tiny_space({Objective::Latency, Objective::Cost});
  for (auto [checkpoint_s, flush_s] : {std::pair{10.0, 1.0}, {10.0, 0.0}, {-1.0, 1.0}})
  for (const char* keep : {"all", "feasible", "none"})
    for (const char* a : kAgents) {
      SCOPED_TRACE(std::string(a) + ", --keep " + keep + (checkpoint_s < 0 ? ", replayed" : ", from checkpoints") +
                   ", flush_s " + std::to_string(flush_s));
      const auto& ds = std::string(a) == "nsga2" ? ds2 : ds1;
      SearchOptions o = cpu_search(a, "50", 5, 420);  // 8 full generations and a partial one
      o.keep = keep;
      o.out = temp_path(std::string("full_") + a + ".h5");
      SearchSummary full;
      ASSERT_EQ(run_search(ds, o, &full), 0);

      SearchOptions part = o;
      part.out = temp_path(std::string("part_") + a + ".h5");
      part.stop_after_generations = 3;
      part.flush_s = flush_s;
      SearchSummary s1;
      EXPECT_EQ(run_search(ds, part, &s1), 130);
      EXPECT_EQ(s1.evaluations, 150u);
      {
        h5::Handle f = h5::open_file(part.out, false);
        EXPECT_EQ(h5::attr_int(f.id(), "complete"), 0);
      }
      SearchOptions res = resume_options(part.out);
      res.keep = "none";  // ignored: the file's own --keep applies
      res.stop_after_generations = 2;  // interrupted a second time
      res.checkpoint_s = checkpoint_s;
      res.flush_s = flush_s;
      SearchSummary s2;
      EXPECT_EQ(run_search(ds, res, &s2), 130);
      EXPECT_EQ(s2.checkpoint_generations, checkpoint_s < 0 ? 0u : 3u);
      if (std::string(keep) != "none") {  // a kill after /evaluated got the next rows, before /generations did
        h5::Handle f = h5::open_file(part.out, true);
        h5::Handle e = h5::group(f.id(), "evaluated", false);
        for (const auto& g : ds.genes) h5::append_column(e.id(), g.name, std::vector<int16_t>(7, 0));
        for (Objective ob : ds.objectives) h5::append_column(e.id(), psa::objective_name(ob), std::vector<double>(7, 1.0));
        for (const char* c : {"violation", "time_s", "memory_bytes", "network_cost_usd", "tokens_per_s", "mfu", "first_token_s"})
          h5::append_column(e.id(), c, std::vector<double>(7, 0.0));
        h5::append_column(e.id(), "reason", std::vector<int32_t>(7, 0));
        h5::append_column(e.id(), "generation", std::vector<int64_t>(7, 5));
      }
      res.stop_after_generations = 0;
      SearchSummary s3;
      ASSERT_EQ(run_search(ds, res, &s3), 0);
      EXPECT_EQ(s3.checkpoint_generations, checkpoint_s < 0 ? 0u : 5u);
      expect_same_search(s3, full);
      const auto full_rows = evaluated_columns(o.out, ds);
      EXPECT_EQ(evaluated_columns(part.out, ds), full_rows);
      EXPECT_EQ(full_rows.empty(), std::string(keep) == "none");
      h5::Handle f2 = h5::open_file(part.out, false);
      EXPECT_EQ(h5::attr_int(f2.id(), "complete"), 1);
      EXPECT_EQ(h5::attr_string(f2.id(), "stopped"), "budget");
      EXPECT_EQ(h5::attr_string(f2.id(), "keep"), keep);
      expect_times(o.out, full);
      expect_times(part.out, s3);  // summed over the three sessions
      EXPECT_GE(s3.eval_s, s2.eval_s);
      EXPECT_GE(s3.wall_s, s2.wall_s);
      std::filesystem::remove(o.out);
      std::filesystem::remove(part.out);
    }
}

// A search resumed with a larger budget gives the file of a search run with that budget from the
// start: complete (its short last generation made again in full) or stopped early, for every
// agent. A smaller budget is refused; a complete search resumed without one is left as it is.
TEST(Agents, ResumeWithALargerBudgetEqualsTheLargerRun) {
  const auto ds1 = tiny_space({Objective::Latency});
  const auto ds2 = tiny_space({Objective::Latency, Objective::Cost});
  for (const char* a : kAgents)
    for (uint64_t first : {uint64_t(230), uint64_t(200)}) {  // 4 generations of 50 and a short fifth; 4 exactly
      SCOPED_TRACE(std::string(a) + ", first budget " + std::to_string(first));
      const auto& ds = std::string(a) == "nsga2" ? ds2 : ds1;
      SearchOptions o = cpu_search(a, "50", 5, 420);
      o.out = temp_path(std::string("larger_") + a + ".h5");
      SearchSummary full;
      ASSERT_EQ(run_search(ds, o, &full), 0);

      SearchOptions small = o;
      small.budget = first;
      small.out = temp_path(std::string("smaller_") + a + ".h5");
      SearchSummary s1;
      ASSERT_EQ(run_search(ds, small, &s1), 0);
      EXPECT_EQ(s1.evaluations, first);
      SearchOptions res = resume_options(small.out);
      EXPECT_EQ(run_search(ds, res, nullptr), 0);  // complete: nothing to do
      res.budget = first - 1;
      EXPECT_THROW(run_search(ds, res, nullptr), std::runtime_error);
      res.budget = 420;
      res.stop_after_generations = 2;  // and interrupted on the way
      EXPECT_EQ(run_search(ds, res, nullptr), 130);
      res.budget = 0;  // the file's budget is now the larger one
      res.stop_after_generations = 0;
      SearchSummary s2;
      ASSERT_EQ(run_search(ds, res, &s2), 0);
      expect_same_search(s2, full);
      EXPECT_EQ(evaluated_columns(small.out, ds), evaluated_columns(o.out, ds));
      h5::Handle f = h5::open_file(small.out, false);
      EXPECT_EQ(h5::attr_uint(f.id(), "budget"), 420u);
      EXPECT_EQ(h5::attr_int(f.id(), "complete"), 1);
      std::filesystem::remove(o.out);
      std::filesystem::remove(small.out);
    }
}

// Files as a kill can leave them, resumed to the uninterrupted run's file:
//  - /evaluated has rows but /generations none yet (a population over a chunk, killed before
//    its first generation was recorded): the rows are dropped, the search starts over;
//  - /generations' columns of different lengths, or one missing (killed while appending them):
//    the generations all hold count;
//  - the budget's short last generation recorded, the file not yet marked complete;
//  - rows of /evaluated changed, or a column shorter than the others, past its whole chunks
//    (here: the file is shorter than a chunk): those rows are written again from the replay.
TEST(Agents, ResumeRepairsAKilledFile) {
  const auto ds = tiny_space({Objective::Latency});
  for (const char* keep : {"all", "feasible"}) {
    SCOPED_TRACE(std::string("--keep ") + keep);
    SearchOptions o = cpu_search("ga", "50", 6, 420);
    o.keep = keep;
    o.out = temp_path("killed_full.h5");
    SearchSummary full;
    ASSERT_EQ(run_search(ds, o, &full), 0);
    const auto full_rows = evaluated_columns(o.out, ds);
    const auto damage = [&](int how) {  // a stopped (or finished) run's file, damaged as `how` says
      SearchOptions part = o;
      part.out = temp_path("killed_part.h5");
      part.stop_after_generations = how == 2 ? 0 : 3;
      run_search(ds, part, nullptr);
      h5::Handle f = h5::open_file(part.out, true);
      h5::Handle g = h5::group(f.id(), "generations", false);
      if (how == 0)
        for (const auto& c : h5::member_names(g.id())) h5::resize_column(g.id(), c, 0);
      if (how == 1) h5::resize_column(g.id(), "eval_s", 2);
      if (how == 2) h5::set_attr(f.id(), "complete", int64_t(0));
      if (how == 4) H5Ldelete(g.id(), "infeasible", H5P_DEFAULT);  // the first write of /generations cut short
      if (how == 5) {
        h5::Handle e = h5::group(f.id(), "evaluated", false);
        h5::resize_column(e.id(), "violation", 20);
      }
      if (how == 3)
        flip_evaluated_gene(f.id(), ds.genes[0].name,
                            h5::column_size(h5::group(f.id(), "evaluated", false).id(), ds.genes[0].name) / 2);
      return part.out;
    };
    for (int how : {0, 1, 2, 3, 4, 5}) {
      SCOPED_TRACE("damage " + std::to_string(how));
      SearchOptions res = resume_options(damage(how));
      SearchSummary sum;
      ASSERT_EQ(run_search(ds, res, &sum), 0);
      EXPECT_EQ(sum.best_curve, full.best_curve);
      EXPECT_EQ(evaluated_columns(res.out, ds), full_rows);
      h5::Handle f = h5::open_file(res.out, false);
      EXPECT_EQ(h5::attr_int(f.id(), "complete"), 1);
      h5::Handle g = h5::group(f.id(), "generations", false);
      for (const auto& c : h5::member_names(g.id())) EXPECT_EQ(h5::column_size(g.id(), c), 9u) << c;
      // The committed-rows counter covers every row of the repaired file.
      EXPECT_EQ(h5::attr_uint(f.id(), "evaluated_rows"),
                h5::column_size(h5::group(f.id(), "evaluated", false).id(), "violation"));
      std::filesystem::remove(res.out);
    }
    std::filesystem::remove(o.out);
  }
}

// Without a checkpoint to start from, the replay checks /evaluated's whole chunks, reading their
// genes 2^18 rows at a time: a file longer than that resumes to the uninterrupted run's rows; a
// changed row in a whole chunk is refused and the file left as it was; one past the whole chunks
// is written again; a column missing far more rows than a kill leaves is refused. From a
// checkpoint (after the 14th generation here) the rows past its whole chunks are written again.
TEST(Agents, ResumeReadsLongFilesInWindows) {
  const auto ds = tiny_space({Objective::Latency});
  SearchOptions o = cpu_search("ga", "20000", 2, 300000);
  o.out = temp_path("long_full.h5");
  ASSERT_EQ(run_search(ds, o, nullptr), 0);
  for (size_t damaged_row : {size_t(0), size_t(270000), size_t(279000)})  // 0: none
    for (double checkpoint_s : {-1.0, 10.0}) {
    if (damaged_row == 270000 && checkpoint_s >= 0) continue;  // before the checkpoint: not read again
    SCOPED_TRACE(std::to_string(damaged_row) + (checkpoint_s < 0 ? ", replayed" : ", from the checkpoint"));
    const SearchOptions part = interrupted(ds, o, "long_part.h5", 14);  // 280,000 rows: 17 whole chunks (278,528) and a part
    if (damaged_row > 0) flip_evaluated_gene(h5::open_file(part.out, true).id(), ds.genes[1].name, damaged_row);
    SearchOptions res = resume_options(part.out);
    res.checkpoint_s = checkpoint_s;
    SearchSummary sum;
    if (damaged_row == 270000) {
      try {
        run_search(ds, res, nullptr);
        ADD_FAILURE() << "a damaged /evaluated was resumed";
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("differs from its rows in /evaluated"), std::string::npos) << e.what();
      }
      h5::Handle f = h5::open_file(part.out, false);  // left as it was
      EXPECT_EQ(h5::column_size(h5::group(f.id(), "evaluated", false).id(), "violation"), 280000u);
    } else {
      ASSERT_EQ(run_search(ds, res, &sum), 0);
      EXPECT_EQ(sum.checkpoint_generations, checkpoint_s < 0 ? 0u : 14u);
      EXPECT_EQ(evaluated_columns(res.out, ds), evaluated_columns(o.out, ds));
    }
    std::filesystem::remove(part.out);
  }
  // A column far shorter than a kill leaves (100,000 of 280,000 rows) is refused, not rebuilt.
  const SearchOptions part = interrupted(ds, o, "long_part.h5", 14);
  {
    h5::Handle f = h5::open_file(part.out, true);
    h5::resize_column(h5::group(f.id(), "evaluated", false).id(), "violation", 100000);
  }
  SearchOptions res = resume_options(part.out);
  try {
    run_search(ds, res, nullptr);
    ADD_FAILURE() << "a file lacking 180,000 rows was resumed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/evaluated lacks 180000 of the rows"), std::string::npos) << e.what();
  }
  std::filesystem::remove(part.out);
  std::filesystem::remove(o.out);
}

// A checkpoint older than the file's last generation (a session killed before it wrote its
// own): the resume starts from it and runs the later generations again, keeping the file's
// whole chunks of /evaluated (so that another kill during the session leaves them) and checking
// the generations run again against them: a row changed there is refused; otherwise the search
// ends as the uninterrupted run.
TEST(Agents, ResumeFromAnOlderCheckpointKeepsAndChecksTheFilesRows) {
  const auto ds = tiny_space({Objective::Latency});
  SearchOptions o = cpu_search("ga", "20000", 2, 300000);
  o.out = temp_path("older_full.h5");
  SearchSummary full;
  ASSERT_EQ(run_search(ds, o, &full), 0);
  const SearchOptions part = interrupted(ds, o, "older_part.h5", 2);  // its checkpoint: after generation 2
  SearchOptions on = resume_options(part.out);
  on.checkpoint_s = -1;  // writes none, as a session killed before its first
  on.stop_after_generations = 6;
  EXPECT_EQ(run_search(ds, on, nullptr), 130);  // 8 generations, 160,000 rows: 9 whole chunks
  const std::string damaged = temp_path("older_damaged.h5");
  std::filesystem::copy_file(part.out, damaged, std::filesystem::copy_options::overwrite_existing);
  flip_evaluated_gene(h5::open_file(damaged, true).id(), ds.genes[1].name, 100000);  // generation 5's
  try {
    run_search(ds, resume_options(damaged), nullptr);
    ADD_FAILURE() << "a changed row after the checkpoint was resumed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("differs from its rows in /evaluated"), std::string::npos) << e.what();
  }
  SearchOptions res = resume_options(part.out);
  res.stop_after_generations = 1;
  SearchSummary s3, s4;
  EXPECT_EQ(run_search(ds, res, &s3), 130);
  EXPECT_EQ(s3.checkpoint_generations, 2u);
  ASSERT_EQ(run_search(ds, resume_options(part.out), &s4), 0);
  EXPECT_EQ(s4.checkpoint_generations, 9u);  // the one the last session wrote as it stopped
  expect_same_search(s4, full);
  EXPECT_EQ(evaluated_columns(part.out, ds), evaluated_columns(o.out, ds));
  for (const auto& f : {o.out, part.out, damaged}) std::filesystem::remove(f);
}

// A checkpoint changed after it was written (one byte, in the parents' genes or anywhere) is not
// used: its hash does not match, and the generations are run again, to the uninterrupted
// search's result. Before the hash, its rows and genomes were taken as they read: a gene out of
// range was bred from and scored, a NaN objective written back.
TEST(Agents, ResumeSkipsAChangedCheckpoint) {
  const auto ds = tiny_space({Objective::Latency});
  SearchOptions o = cpu_search("ga", "200", 2, 2000);
  o.out = temp_path("cp_full.h5");
  SearchSummary full;
  ASSERT_EQ(run_search(ds, o, &full), 0);
  const SearchOptions part = interrupted(ds, o, "cp_part.h5", 4);
  SearchSummary intact;
  const std::string copy = temp_path("cp_intact.h5");
  std::filesystem::copy_file(part.out, copy, std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(run_search(ds, resume_options(copy), &intact), 0);
  EXPECT_EQ(intact.checkpoint_generations, 4u);
  for (const double at : {0.1, 0.5, 0.99}) {
    std::filesystem::copy_file(part.out, copy, std::filesystem::copy_options::overwrite_existing);
    {
      h5::Handle f = h5::open_file(copy, true);
      h5::Handle g = h5::group(f.id(), "checkpoint", false);
      const std::string slot = h5::attr_string(g.id(), "current");
      std::vector<int8_t> bytes = h5::read_column<int8_t>(g.id(), slot);
      bytes.at(size_t(at * double(bytes.size()))) ^= 0x40;
      h5::overwrite_column(g.id(), slot, bytes, h5::ColumnFormat{size_t(1) << 20, 0, false});
    }
    SearchSummary s;
    ASSERT_EQ(run_search(ds, resume_options(copy), &s), 0) << at;
    EXPECT_NE(s.checkpoint_generations, 4u) << at;  // not from the changed one
    expect_same_search(s, full);
    EXPECT_EQ(evaluated_columns(copy, ds), evaluated_columns(o.out, ds)) << at;
  }
  for (const auto& f : {o.out, part.out, copy}) std::filesystem::remove(f);
}

// --keep feasible writes the feasible rows of --keep all, in the same order; --keep none no
// /evaluated. The search itself and the rest of the file do not change.
TEST(Search, KeepChoosesTheEvaluatedRows) {
  const auto ds = tiny_space({Objective::Latency, Objective::Cost});
  std::map<std::string, std::string> files;
  std::map<std::string, SearchSummary> sums;
  for (const char* keep : {"all", "feasible", "none"}) {
    SearchOptions o = cpu_search("nsga2", "300", 8, 20000);
    o.keep = keep;
    o.out = files[keep] = temp_path(std::string("keep_") + keep + ".h5");
    ASSERT_EQ(run_search(ds, o, &sums[keep]), 0);
  }
  const auto all = evaluated_columns(files["all"], ds), feasible = evaluated_columns(files["feasible"], ds);
  ASSERT_EQ(all.at("violation").size(), 20000u);
  std::map<std::string, std::vector<double>> expected;
  for (const auto& [name, col] : all)
    for (size_t i = 0; i < col.size(); ++i)
      if (all.at("violation")[i] == 0) expected[name].push_back(col[i]);
  ASSERT_EQ(expected.at("violation").size(), sums["all"].feasible);
  ASSERT_GT(sums["all"].feasible, 0u);
  ASSERT_LT(sums["all"].feasible, 20000u);
  EXPECT_EQ(feasible, expected);
  EXPECT_TRUE(evaluated_columns(files["none"], ds).empty());
  for (const char* keep : {"feasible", "none"}) {
    EXPECT_EQ(sums[keep].best_curve, sums["all"].best_curve) << keep;
    EXPECT_EQ(sums[keep].best_genome, sums["all"].best_genome) << keep;
    h5::Handle a = h5::open_file(files["all"], false), k = h5::open_file(files[keep], false);
    h5::Handle ga = h5::group(a.id(), "generations", false), gk = h5::group(k.id(), "generations", false);
    for (const char* c : {"evaluations", "infeasible"})
      EXPECT_EQ(h5::read_column<uint64_t>(ga.id(), c), h5::read_column<uint64_t>(gk.id(), c)) << keep << " " << c;
    h5::Handle pa = h5::group(a.id(), "pareto", false), pk = h5::group(k.id(), "pareto", false);
    EXPECT_EQ(h5::read_column<uint64_t>(pa.id(), "evaluation"), h5::read_column<uint64_t>(pk.id(), "evaluation")) << keep;
  }
  SearchOptions bad;
  bad.budget = 10;
  bad.keep = "some";
  bad.out = temp_path("keep_bad.h5");
  try {
    run_search(ds, bad, nullptr);
    ADD_FAILURE() << "--keep some accepted";
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "search: --keep expects all, feasible or none, got 'some'");
  }
  EXPECT_FALSE(std::filesystem::exists(bad.out));
  // A resumed file's keep attribute is checked too, and the error names the file.
  const std::string odd = temp_path("keep_bad_attr.h5");
  std::filesystem::copy_file(files["none"], odd, std::filesystem::copy_options::overwrite_existing);
  {
    h5::Handle f = h5::open_file(odd, true);
    h5::set_attr(f.id(), "complete", int64_t(0));
    h5::set_attr(f.id(), "keep", std::string("some"));
  }
  try {
    run_search(ds, resume_options(odd), nullptr);
    ADD_FAILURE() << "keep attribute 'some' accepted";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()), odd + ": the keep attribute expects all, feasible or none, got 'some'");
  }
  std::filesystem::remove(odd);
  for (const auto& [keep, f] : files) std::filesystem::remove(f);
}

TEST(Search, FileLayout) {
  const auto ds = tiny_space({Objective::Latency, Objective::Cost});
  SearchOptions o;
  o.agent = "nsga2";
  o.params = {{"nsga2.population", "100"}};
  o.budget = 1000;
  o.backend = "cpu";
  o.quiet = true;
  o.out = temp_path("layout.h5");
  SearchSummary sum;
  ASSERT_EQ(run_search(ds, o, &sum), 0);
  h5::Handle f = h5::open_file(o.out, false);
  EXPECT_EQ(h5::attr_string(f.id(), "agent"), "nsga2");
  EXPECT_EQ(h5::attr_int(f.id(), "evaluated_count"), 1000);
  h5::Handle g = h5::group(f.id(), "generations", false);
  const auto best = h5::read_column<double>(g.id(), "best_objective");
  ASSERT_EQ(best.size(), 10u);
  for (size_t k = 1; k < best.size(); ++k) EXPECT_LE(best[k], best[k - 1]);
  EXPECT_EQ(h5::read_column<uint64_t>(g.id(), "evaluations").back(), 1000u);
  const auto infeasible = h5::read_column<uint64_t>(g.id(), "infeasible");
  uint64_t total = 0;
  for (auto x : infeasible) total += x;
  EXPECT_EQ(total, 1000u - uint64_t(h5::attr_int(f.id(), "feasible_count")));
  expect_times(o.out, sum);
  h5::Handle b = h5::group(f.id(), "best", false);
  const auto labels = h5::read_strings(b.id(), "value");
  EXPECT_EQ(labels.size(), ds.genes.size());
  EXPECT_EQ(h5::attr_double(b.id(), "latency"), sum.best_objective);
  h5::Handle p = h5::group(f.id(), "pareto", false);
  const auto lat = h5::read_column<double>(p.id(), "latency"), cost = h5::read_column<double>(p.id(), "cost");
  ASSERT_FALSE(lat.empty());
  for (size_t i = 0; i < lat.size(); ++i)
    for (size_t j = 0; j < lat.size(); ++j)
      if (i != j) EXPECT_FALSE(lat[i] <= lat[j] && cost[i] <= cost[j]) << "front point dominated";
  // ...and it is the whole front of the evaluated points: every feasible point of /evaluated that
  // no other dominates has its objectives on it (one point per objective vector).
  h5::Handle e = h5::group(f.id(), "evaluated", false);
  const auto e_lat = h5::read_column<double>(e.id(), "latency"), e_cost = h5::read_column<double>(e.id(), "cost");
  const auto e_violation = h5::read_column<double>(e.id(), "violation");
  std::set<std::pair<double, double>> front, listed;
  for (size_t i = 0; i < e_lat.size(); ++i) {
    if (e_violation[i] != 0) continue;
    bool dominated = false;
    for (size_t j = 0; j < e_lat.size() && !dominated; ++j)
      dominated = e_violation[j] == 0 && e_lat[j] <= e_lat[i] && e_cost[j] <= e_cost[i] &&
                  (e_lat[j] < e_lat[i] || e_cost[j] < e_cost[i]);
    if (!dominated) front.insert({e_lat[i], e_cost[i]});
  }
  for (size_t i = 0; i < lat.size(); ++i) listed.insert({lat[i], cost[i]});
  EXPECT_EQ(listed, front);
  EXPECT_EQ(listed.size(), lat.size());
  std::filesystem::remove(o.out);
}

// Rows are written in batches on a background thread: the rows up to a chunk boundary (16,384
// rows) once one is reached, or everything pending after flush_s seconds without one. How the
// rows were split must not show in the file. Writing every generation (flush_s = 0; with 300
// rows per generation most writes end inside a chunk) gives the same datasets as writing only
// whole chunks.
TEST(Search, FileDoesNotDependOnWriteTiming) {
  const auto ds = tiny_space({Objective::Latency, Objective::Cost});
  std::vector<std::string> files;
  std::vector<uint64_t> batches;
  for (double flush_s : {0.0, 1e9}) {
    SearchOptions o;
    o.agent = "nsga2";
    o.params = {{"nsga2.population", "300"}};
    o.seed = 4;
    // 133 generations and a partial one. With flush_s = 1e9 only whole chunks are written
    // before the end: after generations 55 and 110 (16,500 and 33,000 rows) the pending rows
    // reach a chunk boundary, and the rows up to it go out (two batches of exactly 16,384 rows,
    // each ending inside a generation); the last 7,232 rows go out at the end.
    o.budget = 40000;
    o.backend = "cpu";
    o.quiet = true;
    o.flush_s = flush_s;
    o.out = temp_path("timing" + std::to_string(files.size()) + ".h5");
    SearchSummary sum;
    ASSERT_EQ(run_search(ds, o, &sum), 0);
    files.push_back(o.out);
    batches.push_back(sum.write_batches);
  }
  EXPECT_GE(batches[0], 134u);  // a batch a generation (and the last, empty one)
  EXPECT_EQ(batches[1], 3u);    // two of 16,384 rows, then the rest
  h5::Handle f0 = h5::open_file(files[0], false), f1 = h5::open_file(files[1], false);
  h5::Handle e0 = h5::group(f0.id(), "evaluated", false), e1 = h5::group(f1.id(), "evaluated", false);
  for (const auto& g : ds.genes)
    EXPECT_EQ(h5::read_column<int16_t>(e0.id(), g.name), h5::read_column<int16_t>(e1.id(), g.name)) << g.name;
  for (const char* c : {"latency", "cost", "violation", "time_s", "memory_bytes", "network_cost_usd", "tokens_per_s", "mfu", "first_token_s"})
    EXPECT_EQ(h5::read_column<double>(e0.id(), c), h5::read_column<double>(e1.id(), c)) << c;
  EXPECT_EQ(h5::read_column<int32_t>(e0.id(), "reason"), h5::read_column<int32_t>(e1.id(), "reason"));
  EXPECT_EQ(h5::read_column<int64_t>(e0.id(), "generation"), h5::read_column<int64_t>(e1.id(), "generation"));
  EXPECT_EQ(h5::column_size(e0.id(), "latency"), 40000u);
  h5::Handle g0 = h5::group(f0.id(), "generations", false), g1 = h5::group(f1.id(), "generations", false);
  for (const char* c : {"best_objective", "generation_best"})
    EXPECT_EQ(h5::read_column<double>(g0.id(), c), h5::read_column<double>(g1.id(), c)) << c;
  for (const char* c : {"evaluations", "size", "infeasible"})
    EXPECT_EQ(h5::read_column<uint64_t>(g0.id(), c), h5::read_column<uint64_t>(g1.id(), c)) << c;
  h5::Handle p0 = h5::group(f0.id(), "pareto", false), p1 = h5::group(f1.id(), "pareto", false);
  EXPECT_EQ(h5::read_column<uint64_t>(p0.id(), "evaluation"), h5::read_column<uint64_t>(p1.id(), "evaluation"));
  EXPECT_EQ(h5::attr_int(f0.id(), "generations"), h5::attr_int(f1.id(), "generations"));
  for (const auto& f : files) std::filesystem::remove(f);
}

// ---------------------------------------------------------------------------------------------
std::vector<int32_t> reference_ranks(const std::vector<double>& obj, size_t n, int32_t m) {
  auto dom = [&](size_t a, size_t b) {
    bool strict = false;
    for (int32_t j = 0; j < m; ++j) {
      if (obj[size_t(j) * n + a] > obj[size_t(j) * n + b]) return false;
      if (obj[size_t(j) * n + a] < obj[size_t(j) * n + b]) strict = true;
    }
    return strict;
  };
  std::vector<int32_t> rank(n, -1);
  size_t left = n;
  for (int32_t r = 0; left > 0; ++r) {
    std::vector<size_t> front;
    for (size_t i = 0; i < n; ++i) {
      if (rank[i] >= 0) continue;
      bool dominated = false;
      for (size_t j = 0; j < n && !dominated; ++j) dominated = rank[j] < 0 && dom(j, i);
      if (!dominated) front.push_back(i);
    }
    for (size_t i : front) rank[i] = r;
    left -= front.size();
  }
  return rank;
}

TEST(Nsga2, NondominatedSortMatchesBruteForce) {
  agents::Rng r(42);
  for (int32_t m : {1, 2, 3, 4, 5, 6}) {
    for (int trial = 0; trial < 20; ++trial) {
      const size_t n = 1 + size_t(r.below(300));
      const bool ties = trial % 2 == 0;  // integer-valued objectives: many ties and duplicates
      std::vector<double> obj(size_t(m) * n);
      for (double& x : obj) x = ties ? double(r.below(6)) - 2 : r.uniform() - 0.5;  // signs mixed
      if (ties) obj[0] = -0.0;  // equal to 0.0 for the ranks

      EXPECT_EQ(agents::nondominated_sort(obj.data(), n, m, n), reference_ranks(obj, n, m)) << m << " " << trial;
    }
  }
  // Two objectives, the first with two values: points of equal first objective come in runs of
  // about 1,250, which are sorted by the second with the radix sort (from 1,024 records).
  const size_t n = 2500;
  std::vector<double> obj(2 * n);
  for (size_t i = 0; i < n; ++i) {
    obj[i] = double(r.below(2));
    obj[n + i] = i % 7 == 0 ? -0.0 : double(r.below(10)) - 4;
  }
  EXPECT_EQ(agents::nondominated_sort(obj.data(), n, 2, n), reference_ranks(obj, n, 2));
}

// Four and more objectives at 8,192 points and more sort in blocks of 256 on several threads
// (each point's fronts before its block in parallel, then the block's own dominators in order):
// the ranks equal one thread's and a reference's (points in lexicographic order, each one more
// than the highest rank of the points before it that dominate it; quadratic), with ties and
// duplicates and without.
TEST(Nsga2, ManyObjectiveSortOnThreadsMatchesOneThread) {
  agents::Rng r(17);
  const int threads = omp_get_max_threads();
  for (int32_t m : {4, 5}) {
    for (bool ties : {true, false}) {
      const size_t n = 9000;
      std::vector<double> obj(size_t(m) * n);
      for (double& x : obj) x = ties ? double(r.below(7)) : r.uniform();
      const auto at = [&](size_t i, int32_t j) { return obj[size_t(j) * n + i]; };
      std::vector<size_t> lex(n);
      std::iota(lex.begin(), lex.end(), size_t(0));
      std::sort(lex.begin(), lex.end(), [&](size_t a, size_t b) {
        for (int32_t j = 0; j < m; ++j)
          if (at(a, j) != at(b, j)) return at(a, j) < at(b, j);
        return a < b;
      });
      std::vector<int32_t> want(n, 0);
      for (size_t k = 0; k < n; ++k)
        for (size_t e = 0; e < k; ++e) {
          bool below = true, strict = false;
          for (int32_t j = 0; j < m && below; ++j) {
            below = at(lex[e], j) <= at(lex[k], j);
            strict = strict || at(lex[e], j) < at(lex[k], j);
          }
          if (below && strict) want[lex[k]] = std::max(want[lex[k]], want[lex[e]] + 1);
        }
      omp_set_num_threads(1);
      const std::vector<int32_t> one = agents::nondominated_sort(obj.data(), n, m, n);
      omp_set_num_threads(3);
      const std::vector<int32_t> three = agents::nondominated_sort(obj.data(), n, m, n);
      omp_set_num_threads(threads);
      EXPECT_EQ(one, want) << m << " objectives, ties " << ties;
      EXPECT_EQ(three, want) << m << " objectives, ties " << ties;
      EXPECT_GT(*std::max_element(want.begin(), want.end()), 5);
    }
  }
}

// Four to six objectives, where each front is a list of its latest points and k-d trees of 32,
// 64, 128, ... points: populations of 1,500 to 2,500 put fronts through several trees, against
// the brute force. Objectives of units a billion times apart (as bytes and seconds), with many
// ties and repeated points in some trials, a constant objective in others; fronts that are long
// (objectives that trade off: a point's sum is about constant, hundreds of points a front) or many (a chain with noise:
// past 64 fronts a point is first tested against the last front).
TEST(Nsga2, ManyObjectivesRankAsTheBruteForce) {
  agents::Rng r(77);
  for (int trial = 0; trial < 8; ++trial) {
    const int32_t m = 4 + trial % 3;
    const size_t n = 1500 + 500 * size_t(trial % 3);
    std::vector<double> obj(size_t(m) * n);
    for (size_t i = 0; i < n; ++i) {
      double sum = 0;
      for (int32_t j = 0; j < m; ++j) {
        double x = trial % 4 == 0 ? double(r.below(5)) : r.uniform();
        if (trial % 4 == 1 && j == m - 1) x = 1 - sum / (m - 1) + 0.05 * x;  // trades off, give or take
        if (trial % 4 == 2) x = double(i) / 40 + 3 * x;           // a noisy chain: many fronts
        if (trial % 4 == 3 && j == 1) x = 7;                      // a constant objective
        sum += x;
        obj[size_t(j) * n + i] = x * (j % 2 == 0 ? 1e9 : 1e-3);
      }
    }
    const std::vector<int32_t> ranks = agents::nondominated_sort(obj.data(), n, m, n);
    EXPECT_EQ(ranks, reference_ranks(obj, n, m)) << m << " " << trial;
    if (trial % 4 == 1) {  // long fronts: one of more than 512 points (a tree of 512 and more)
      std::vector<size_t> size(n, 0);
      for (int32_t k : ranks) ++size[size_t(k)];
      EXPECT_GT(*std::max_element(size.begin(), size.end()), 512u) << trial;
    } else {
      EXPECT_GT(*std::max_element(ranks.begin(), ranks.end()), trial % 4 == 2 ? 64 : 2) << trial;
    }
  }
}

// Three objectives (fronts as staircases) against four or more (fronts as k-d trees), which a
// fourth objective, the sum of the second and third, sends them through without changing who
// dominates whom (and a fifth and sixth, copies of the first and of the third, neither; the sort
// leaves out the copy of the first): the same ranks, on sizes and values
// that make many fronts, long fronts, ties in every objective and duplicates, and staircases
// longer than the 256 steps kept in an array (trials 8 and 9: f2 falls and f3 rises with f1,
// give or take some noise, so most of a front's points are steps, each before the last), and
// thousands of fronts (trials 10 and 11).
TEST(Nsga2, ThreeObjectivesRankAsFourOrMore) {
  agents::Rng r(31);
  for (int trial = 0; trial < 12; ++trial) {
    const size_t n = trial < 4 ? 600 : 6000;
    const uint64_t values = trial % 2 == 0 && trial < 8 ? 8 : 0;  // 0: continuous
    std::vector<double> obj(4 * n);
    for (size_t i = 0; i < 3 * n; ++i) obj[i] = values ? double(r.below(values)) - 3 : r.uniform();
    if (trial % 4 == 3)  // a correlated population: f3 rises with f1, many points per front
      for (size_t i = 0; i < n; ++i) obj[2 * n + i] = obj[i] + 0.1 * obj[n + i];
    if (trial >= 8)
      for (size_t i = 0; i < n; ++i) {
        obj[n + i] = -obj[i] + (trial == 8 ? 0.02 : 0.002) * obj[n + i];
        obj[2 * n + i] = obj[i] + 0.02 * obj[2 * n + i];
      }
    // Thousands of fronts (past the sort's 1,024, where it first asks whether the last front
    // dominates a group of points): a chain, each point dominating the next (trial 10, with
    // repeats; the second and third objectives step more often than the first, so that the sort
    // keeps them), and a noisy one whose neighbours are often incomparable (11).
    if (trial >= 10)
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < 3; ++j)
          obj[j * n + i] = trial == 10 ? double(i / (8 >> j)) : double(i) / 3 + 0.9 * obj[j * n + i];
    if (values) obj[0] = -0.0, obj[1] = 0.0;
    for (size_t i = 0; i < n; ++i) obj[3 * n + i] = obj[n + i] + obj[2 * n + i];
    const std::vector<int32_t> three = agents::nondominated_sort(obj.data(), n, 3, n);
    EXPECT_EQ(three, agents::nondominated_sort(obj.data(), n, 4, n)) << trial;
    std::vector<double> six = obj;
    six.insert(six.end(), obj.begin(), obj.begin() + ptrdiff_t(n));
    six.insert(six.end(), obj.begin() + ptrdiff_t(2 * n), obj.begin() + ptrdiff_t(3 * n));
    EXPECT_EQ(three, agents::nondominated_sort(six.data(), n, 6, n)) << trial;
    EXPECT_GT(*std::max_element(three.begin(), three.end()), 3) << trial;  // several fronts
    if (n <= 600) EXPECT_EQ(three, reference_ranks(obj, n, 3)) << trial;
  }
}

// The parents an agent keeps, from its saved state (GA and NSGA-II save the generation, the
// parents' rows and then their scores).
Scores saved_parents(const agents::Agent& a, const std::vector<int32_t>& card) {
  agents::StateWriter w;
  a.save(w);
  agents::StateReader r(w.bytes().data(), w.bytes().size());
  r.get<uint64_t>();
  agents::ParentRows rows(card);
  rows.load(r);
  Scores s;
  s.load(r);
  return s;
}

// BO's surrogate asks points it has not evaluated: after the uniform start-up, no asked genome
// is one of the history or another of its batch (on a space of 1,000 points, of which the run
// asks 220, the draws from l find new ones).
TEST(Bo, AsksNoPointTwice) {
  const std::vector<int32_t> card = {10, 10, 10};
  auto made = agents::make_agent("bo", card, 1, {{"bo.population", "10"}, {"bo.startup", "20"}}, 4);
  Population pop;
  pop.resize(3, 10);
  Scores s;
  s.resize(1, 10);
  std::set<std::vector<int32_t>> seen;
  for (int gen = 0; gen < 22; ++gen) {
    made.agent->ask(pop);
    for (size_t i = 0; i < 10; ++i) {
      const std::vector<int32_t> x = {pop.at(i, 0), pop.at(i, 1), pop.at(i, 2)};
      if (gen >= 2) EXPECT_EQ(seen.count(x), 0u) << "generation " << gen << ", point " << i;
      seen.insert(x);
      s.obj[i] = double((x[0] - 3) * (x[0] - 3) + (x[1] - 7) * (x[1] - 7) + x[2]);  // best at (3, 7, 0)
    }
    made.agent->tell(pop, s);
  }
}

// Elitism: the best parents replace the worst children when better. Generation 0 scores 0..19;
// every later child is worse than all of them, so with elite_fraction 0.1 the parents keep the
// two best of generation 0 (0 and 1) for good; without elitism they are all children.
TEST(Ga, ElitesSurviveWorseChildren) {
  const std::vector<int32_t> card = {5, 7, 3, 9};
  for (const char* fraction : {"0.1", "0"}) {
    agents::Ga ga(card, agents::GaParams::from({{"ga.population", "20"}, {"ga.elite_fraction", fraction}}), 3);
    Population pop;
    pop.resize(4, 20);
    Scores s;
    s.resize(1, 20);
    for (int gen = 0; gen < 5; ++gen) {
      ga.ask(pop);
      for (size_t i = 0; i < 20; ++i) s.obj[i] = gen == 0 ? double(i) : 1000.0 + gen * 100 + double(i);
      ga.tell(pop, s);
      std::vector<double> kept = saved_parents(ga, card).obj;
      std::sort(kept.begin(), kept.end());
      if (std::string(fraction) == "0.1") {
        EXPECT_EQ(kept[0], 0.0) << gen;
        EXPECT_EQ(kept[1], 1.0) << gen;
        EXPECT_GT(kept[2], gen == 0 ? 1.0 : 1000.0) << gen;
      } else {
        EXPECT_EQ(kept[0], gen == 0 ? 0.0 : 1000.0 + gen * 100) << gen;
      }
    }
  }
}

// NSGA-II's survivors against a brute force: the best P of parents and children (parents first)
// by constrained rank (pairwise domination, feasible first, then by violation), crowding
// distance within a front (larger first) and index, on 2-4 objectives with ties (values of 4
// levels) and without (1,000 levels), a quarter of each generation infeasible.
TEST(Nsga2, SurvivorsAreTheBestByRankAndCrowding) {
  const std::vector<int32_t> card = {5, 7, 3, 9};
  for (int nobj = 2; nobj <= 4; ++nobj)
    for (int trial = 0; trial < 12; ++trial) {
      const size_t P = 10 + size_t(trial) * 3;
      agents::Nsga2 agent(card, nobj, agents::Nsga2Params::from({{"nsga2.population", std::to_string(P)}}), 100 + trial);
      Population pop;
      pop.resize(4, P);
      agents::Rng rng(uint64_t(trial * 7 + nobj));
      Scores parents;
      for (int gen = 0; gen < 3; ++gen) {
        agent.ask(pop);
        Scores s;
        s.resize(nobj, P);
        for (double& x : s.obj) x = double(rng.below(trial % 2 ? 4 : 1000));
        for (size_t i = 0; i < P; ++i)
          if (rng.below(4) == 0) {
            s.violation[i] = 1 + double(rng.below(3));
            for (int j = 0; j < nobj; ++j) s.obj[size_t(j) * P + i] = INFINITY;
          }
        agent.tell(pop, s);
        const Scores got = saved_parents(agent, card);
        if (gen > 0) {
          Scores all;
          all.resize(nobj, 2 * P);
          for (size_t i = 0; i < P; ++i) {
            agents::copy_scores(parents, i, all, i);
            agents::copy_scores(s, i, all, P + i);
          }
          const auto dominates = [&](size_t a, size_t b) {
            if (all.feasible(a) != all.feasible(b)) return all.feasible(a);
            if (!all.feasible(a)) return all.violation[a] < all.violation[b];
            bool strict = false;
            for (int j = 0; j < nobj; ++j) {
              if (all.at(a, j) > all.at(b, j)) return false;
              strict = strict || all.at(a, j) < all.at(b, j);
            }
            return strict;
          };
          std::vector<int> rank(2 * P, -1);
          for (int r = 0, left = int(2 * P); left > 0; ++r) {
            std::vector<size_t> front;
            for (size_t i = 0; i < 2 * P; ++i) {
              bool dominated = false;
              for (size_t j = 0; j < 2 * P && !dominated && rank[i] < 0; ++j) dominated = rank[j] < 0 && dominates(j, i);
              if (rank[i] < 0 && !dominated) front.push_back(i);
            }
            for (size_t i : front) rank[i] = r;
            left -= int(front.size());
          }
          std::vector<double> dist(2 * P, 0.0);
          for (int f = 0; f <= *std::max_element(rank.begin(), rank.end()); ++f) {
            std::vector<size_t> members;
            for (size_t i = 0; i < 2 * P; ++i)
              if (rank[i] == f) members.push_back(i);
            if (members.empty() || !all.feasible(members[0])) continue;
            const std::vector<double> d = agents::crowding_distance(all.obj.data(), 2 * P, nobj, members);
            for (size_t k = 0; k < members.size(); ++k) dist[members[k]] = d[k];
          }
          std::vector<size_t> order(2 * P);
          std::iota(order.begin(), order.end(), size_t(0));
          std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            if (rank[a] != rank[b]) return rank[a] < rank[b];
            if (dist[a] != dist[b]) return dist[a] > dist[b];
            return a < b;
          });
          std::vector<size_t> keep(order.begin(), order.begin() + ptrdiff_t(P));
          std::sort(keep.begin(), keep.end());
          Scores want;
          want.resize(nobj, P);
          for (size_t k = 0; k < P; ++k) agents::copy_scores(all, keep[k], want, k);
          EXPECT_EQ(got.obj, want.obj) << nobj << " objectives, trial " << trial << ", generation " << gen;
          EXPECT_EQ(got.violation, want.violation) << nobj << " objectives, trial " << trial << ", generation " << gen;
        }
        parents = got;
      }
    }
}

// An objective that is a non-decreasing function of the first over the points (a multiple of it,
// with steps, a constant) decides nothing, and the sort leaves it out: six objectives of which
// three are such rank as the other three, and as the brute force. Where one of them breaks the
// rule it is kept, and the ranks change, to the brute force's: when it falls as the first rises,
// and when it differs between points of equal first objective. (The second breaking rises along
// the order the sort goes through, by the second and third objectives where the first is equal:
// only the test of equal first objectives sees it. It makes a point of two otherwise equal ones
// dominate the other.)
TEST(Nsga2, ObjectivesThatFollowTheFirstAreLeftOut) {
  agents::Rng r(5);
  const size_t n = 800;
  std::vector<double> obj(6 * n);
  for (size_t i = 0; i < n; ++i) {
    const double f0 = double(r.below(50));  // ties: about 16 points a value
    obj[i] = f0;
    obj[n + i] = double(r.below(3));  // equal points: about 1 in 600
    obj[2 * n + i] = double(r.below(4));
    obj[3 * n + i] = 2 * f0 + 1;
    obj[4 * n + i] = 5;
    obj[5 * n + i] = std::floor(f0 / 10) + 2 * f0;
  }
  const std::vector<int32_t> three = agents::nondominated_sort(obj.data(), n, 3, n);
  EXPECT_EQ(three, reference_ranks(obj, n, 3));
  EXPECT_EQ(agents::nondominated_sort(obj.data(), n, 6, n), three);
  EXPECT_EQ(reference_ranks(obj, n, 6), three);
  for (int broken = 0; broken < 2; ++broken) {
    std::vector<double> b = obj;
    for (size_t i = 0; i < n; ++i) {
      if (broken == 0) b[3 * n + i] = -b[i];                     // falls as the first rises
      if (broken == 1) b[5 * n + i] += 0.1 * (4 * b[n + i] + b[2 * n + i]) + 0.01 * double(i % 2);
    }
    const std::vector<int32_t> ranks = agents::nondominated_sort(b.data(), n, 6, n);
    EXPECT_EQ(ranks, reference_ranks(b, n, 6)) << broken;
    EXPECT_NE(ranks, three) << broken;
  }
  // Every objective a function of the first: the dense rank of the first.
  std::vector<double> same(obj.begin(), obj.begin() + ptrdiff_t(n));
  same.insert(same.end(), obj.begin() + ptrdiff_t(3 * n), obj.end());
  const std::vector<int32_t> ranks = agents::nondominated_sort(same.data(), n, 4, n);
  EXPECT_EQ(ranks, reference_ranks(same, n, 4));
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(ranks[i], int32_t(obj[i])) << i;  // all 50 values occur
}

// Large populations take the radix sort (1,024 points and more): one objective gives the dense
// rank of the values, and crowding distances equal a comparison-sort computation.
TEST(Nsga2, LargePopulationsRankAndCrowdExactly) {
  agents::Rng r(3);
  const size_t n = 5000;
  std::vector<double> obj(2 * n);
  for (size_t i = 0; i < 2 * n; ++i) obj[i] = i % 3 == 0 ? double(r.below(50)) - 25 : r.uniform() - 0.5;
  obj[7] = -0.0;
  obj[8] = 0.0;
  std::vector<double> distinct(obj.begin(), obj.begin() + ptrdiff_t(n));
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const std::vector<int32_t> rank = agents::nondominated_sort(obj.data(), n, 1, n);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(rank[i], std::lower_bound(distinct.begin(), distinct.end(), obj[i]) - distinct.begin()) << i;
  std::vector<size_t> front;
  for (size_t i = 0; i < n; i += 2) front.push_back(i);
  const std::vector<double> d = agents::crowding_distance(obj.data(), n, 2, front);
  std::vector<double> want(front.size(), 0.0);
  for (int32_t j = 0; j < 2; ++j) {
    const double* f = obj.data() + size_t(j) * n;
    std::vector<size_t> pos(front.size());
    std::iota(pos.begin(), pos.end(), size_t(0));
    std::sort(pos.begin(), pos.end(), [&](size_t a, size_t b) {
      return f[front[a]] != f[front[b]] ? f[front[a]] < f[front[b]] : a < b;
    });
    const double lo = f[front[pos.front()]], hi = f[front[pos.back()]];
    want[pos.front()] = want[pos.back()] = INFINITY;
    for (size_t k = 1; k + 1 < pos.size(); ++k) want[pos[k]] += (f[front[pos[k + 1]]] - f[front[pos[k - 1]]]) / (hi - lo);
  }
  EXPECT_EQ(d, want);
}

// From 32,768 points the radix sort runs on the OpenMP threads: one objective still gives the
// dense rank of the values, and two objectives (the first with many ties, so the tie runs are
// sorted by the second) give the same ranks on 1, 2, 3 and 8 threads.
TEST(Nsga2, RadixSortOnThreadsGivesTheSameOrder) {
  agents::Rng r(9);
  const size_t n = 40000;
  std::vector<double> obj(2 * n);
  for (size_t i = 0; i < n; ++i) obj[i] = double(r.below(500)) - 250;  // f1: ties
  for (size_t i = n; i < 2 * n; ++i) obj[i] = r.uniform() - 0.5;
  std::vector<double> distinct(obj.begin(), obj.begin() + ptrdiff_t(n));
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const int threads_before = omp_get_max_threads();
  std::vector<int32_t> first;
  for (int threads : {1, 2, 3, 8}) {
    omp_set_num_threads(threads);
    const std::vector<int32_t> dense = agents::nondominated_sort(obj.data(), n, 1, n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(dense[i], std::lower_bound(distinct.begin(), distinct.end(), obj[i]) - distinct.begin()) << i;
    const std::vector<int32_t> two = agents::nondominated_sort(obj.data(), n, 2, n);
    if (first.empty()) first = two;
    EXPECT_EQ(two, first) << threads << " threads";
  }
  omp_set_num_threads(threads_before);
  EXPECT_GT(*std::max_element(first.begin(), first.end()), 10);  // many fronts: the order mattered
  // Against an independent two-objective sort (the brute force is too slow at this size): in
  // lexicographic order of (f1, f2) every earlier point q has q.f1 <= p.f1, so a front dominates
  // p when its least f2 is below p's, or equal to it with a smaller f1 (the first point to reach
  // that least f2 has the smallest f1 of them); p goes to the first front that does not.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return obj[a] != obj[b] ? obj[a] < obj[b] : obj[n + a] < obj[n + b];
  });
  std::vector<double> least_f2, f1_at_least;  // per front
  std::vector<int32_t> want(n);
  for (size_t p : order) {
    const double f1 = obj[p], f2 = obj[n + p];
    size_t k = 0;
    while (k < least_f2.size() && (least_f2[k] < f2 || (least_f2[k] == f2 && f1_at_least[k] < f1))) ++k;
    if (k == least_f2.size()) {
      least_f2.push_back(f2);
      f1_at_least.push_back(f1);
    } else if (f2 < least_f2[k]) {
      least_f2[k] = f2;
      f1_at_least[k] = f1;
    }
    want[p] = int32_t(k);
  }
  EXPECT_EQ(first, want);
}

// Two objectives: the order nondominated_sort reports is the lexicographic one, and crowding
// distances computed from it without sorting (crowding_distance_lex2) equal crowding_distance's
// bit for bit, on every front, with duplicates, ties and fronts of 1 and 2 points.
TEST(Nsga2, CrowdingFromTheLexicographicOrderEqualsTheSortedOne) {
  agents::Rng r(17);
  for (int trial = 0; trial < 12; ++trial) {
    const size_t n = trial < 6 ? 1 + size_t(r.below(400)) : 3000;  // 3,000: runs and fronts over 1,024
    const uint64_t values = trial % 3 == 0 ? 4 : trial % 3 == 1 ? 40 : 0;  // 0: continuous
    std::vector<double> obj(2 * n);
    for (double& x : obj) x = values ? double(r.below(values)) : r.uniform();
    if (values && n > 1) obj[0] = -0.0, obj[1] = 0.0;  // equal to each other for the order
    std::vector<size_t> order;
    const std::vector<int32_t> rank = agents::nondominated_sort(obj.data(), n, 2, n, &order);
    std::vector<size_t> lex(n);
    std::iota(lex.begin(), lex.end(), size_t(0));
    std::sort(lex.begin(), lex.end(), [&](size_t a, size_t b) {
      return std::make_tuple(obj[a], obj[n + a], a) < std::make_tuple(obj[b], obj[n + b], b);
    });
    ASSERT_EQ(order, lex) << trial;
    // constrained_ranks reports the feasible points in the same order, in their own indices.
    Scores sc;
    sc.resize(2, n);
    sc.obj = obj;
    for (size_t i = 0; i < n; i += 3) sc.violation[i] = 1.0 + double(i % 7);
    agents::RankOrders orders;
    agents::constrained_ranks(sc, SIZE_MAX, &orders);
    std::vector<size_t> feasible_lex;
    for (size_t i : lex)
      if (i % 3 != 0) feasible_lex.push_back(i);
    ASSERT_EQ(orders.feasible, feasible_lex) << trial;
    const int32_t fronts = *std::max_element(rank.begin(), rank.end()) + 1;
    for (int32_t f = 0; f < fronts; ++f) {
      std::vector<size_t> by_index, by_lex;
      for (size_t i = 0; i < n; ++i)
        if (rank[i] == f) by_index.push_back(i);
      for (size_t i : lex)
        if (rank[i] == f) by_lex.push_back(i);
      const std::vector<double> want = agents::crowding_distance(obj.data(), n, 2, by_index);
      std::vector<double> f1, f2;
      for (size_t i : by_lex) f1.push_back(obj[i]), f2.push_back(obj[n + i]);
      const std::vector<double> got = agents::crowding_distance_lex2(f1.data(), f2.data(), by_lex.size());
      for (size_t k = 0; k < by_lex.size(); ++k) {
        const size_t at = size_t(std::lower_bound(by_index.begin(), by_index.end(), by_lex[k]) - by_index.begin());
        ASSERT_EQ(std::memcmp(&got[k], &want[at], sizeof(double)), 0) << trial << " front " << f << " point " << by_lex[k];
      }
    }
  }
}

// A generation sorts only its children: with the orders of the first points (the parents) given,
// constrained_ranks gives the ranks and orders of a sort of everything, for any number of
// objectives, with ties and duplicates across the two parts; orders that do not fit the points
// (a reduced call's, without the infeasible ones) are sorted again.
TEST(Nsga2, RanksFromTheParentsOrdersEqualAFullSort) {
  agents::Rng r(23);
  for (int trial = 0; trial < 24; ++trial) {
    const int32_t nobj = 1 + trial % 3;
    const size_t n = trial < 12 ? 2 + size_t(r.below(300)) : 4000;  // 4,000: the radix sort
    const uint64_t values = trial % 2 == 0 ? 5 : 0;                  // 0: continuous
    Scores sc;
    sc.resize(nobj, n);
    for (double& x : sc.obj) x = values ? double(r.below(values)) : r.uniform();
    for (size_t i = 0; i < n; ++i)
      if (r.below(4) == 0) sc.violation[i] = values ? 1.0 + double(r.below(3)) : r.uniform() + 0.5;
    agents::RankOrders all;
    const std::vector<int32_t> want = agents::constrained_ranks(sc, SIZE_MAX, &all);
    const size_t m = size_t(r.below(n + 1));  // the parents: points 0 .. m - 1
    Scores parents;
    parents.resize(nobj, m);
    for (size_t i = 0; i < m; ++i) agents::copy_scores(sc, i, parents, i);
    agents::RankOrders orders;
    agents::constrained_ranks(parents, SIZE_MAX, &orders);
    ASSERT_EQ(orders.of, m);
    EXPECT_EQ(agents::constrained_ranks(sc, SIZE_MAX, &orders), want) << trial;
    EXPECT_EQ(orders.of, n);
    EXPECT_EQ(orders.feasible, all.feasible) << trial;
    EXPECT_EQ(orders.infeasible, all.infeasible) << trial;
    // A reduced call (`needed` reached by the feasible points) leaves no infeasible order.
    agents::RankOrders reduced;
    agents::constrained_ranks(parents, 0, &reduced);
    EXPECT_TRUE(reduced.infeasible.empty());
    EXPECT_EQ(agents::constrained_ranks(sc, SIZE_MAX, &reduced), want) << trial;
    EXPECT_EQ(reduced.infeasible, all.infeasible) << trial;
  }
}

TEST(Nsga2, ConstrainedRanksPutInfeasibleLastByViolation) {
  Scores s;
  s.resize(2, 5);
  s.obj = {1, 2, 3, 0, 0, /**/ 3, 2, 1, 0, 0};
  s.violation = {0, 0, 0, 0.5, 0.2};
  EXPECT_EQ(agents::constrained_ranks(s), (std::vector<int32_t>{0, 0, 0, 2, 1}));
}

TEST(Nsga2, CrowdingDistanceByHand) {
  // Front of 4 points, f1 = 0, 1, 3, 4 and f2 = 4, 3, 1, 0 (both ranges 4).
  const std::vector<double> obj{0, 1, 3, 4, /**/ 4, 3, 1, 0};
  const auto d = agents::crowding_distance(obj.data(), 4, 2, {0, 1, 2, 3});
  EXPECT_TRUE(std::isinf(d[0]));
  EXPECT_TRUE(std::isinf(d[3]));
  EXPECT_DOUBLE_EQ(d[1], (3.0 - 0.0) / 4 + (4.0 - 1.0) / 4);  // 1.5
  EXPECT_DOUBLE_EQ(d[2], (4.0 - 1.0) / 4 + (3.0 - 0.0) / 4);  // 1.5
  const auto d2 = agents::crowding_distance(obj.data(), 4, 2, {0, 1, 2});  // f1 0,1,3; f2 4,3,1
  EXPECT_DOUBLE_EQ(d2[1], 3.0 / 3 + 3.0 / 3);
}

TEST(Aco, PheromoneStaysPositiveAndFollowsTheBest) {
  auto made = agents::make_agent("aco", {3, 3}, 1, {{"aco.population", "30"}}, 2);
  Population pop;
  pop.resize(2, 30);
  Scores s;
  for (int gen = 0; gen < 30; ++gen) {
    made.agent->ask(pop);
    s.resize(1, 30);
    for (size_t i = 0; i < 30; ++i) s.obj[i] = std::abs(pop.at(i, 0) - 2) + std::abs(pop.at(i, 1) - 1);
    made.agent->tell(pop, s);
  }
  const auto& tau = static_cast<agents::Aco&>(*made.agent).pheromone();
  for (double t : tau) EXPECT_GT(t, 0);
  EXPECT_GT(tau[2], tau[0]);
  EXPECT_GT(tau[3 + 1], tau[3 + 0]);
}

// The construction of aco.hpp written out the plain way: ant i of generation gen draws from
// Rng(stream_seed(seed, gen, i)), one uniform() per gene, and takes the first value whose
// cumulative weight exceeds uniform() x (the weights' sum), the weight of value v being
// (1 - q0) tau_v / sum(tau), plus q0 / (values sharing it) where tau_v is the highest. Its ants
// must be these, in the first generation (every value tied) and later. Then the law itself: the
// ants' share of each value is that weight, so a q0 share of them (and a (1 - q0) tau / sum
// share more) takes the best value.
TEST(Aco, AntsAreBuiltAsDocumented) {
  const std::vector<int32_t> card = {3, 1, 5, 2, 7, 4, 10};
  const auto weights = [&](const std::vector<double>& tau, size_t at, int32_t c, double q0) {
    const double* t = &tau[at];
    const double mx = *std::max_element(t, t + c);
    const double sum = std::accumulate(t, t + c, 0.0);
    const auto ties = std::count(t, t + c, mx);
    std::vector<double> w(static_cast<size_t>(c));
    for (int32_t v = 0; v < c; ++v) w[size_t(v)] = (1 - q0) * (t[v] / sum) + (t[v] == mx ? q0 / double(ties) : 0.0);
    return w;
  };
  const auto scores = [](const Population& pop, Scores& s) {
    s.resize(1, pop.size);
    for (size_t i = 0; i < pop.size; ++i) s.obj[i] = std::abs(pop.at(i, 4) - 5) + pop.at(i, 6) + 0.1 * pop.at(i, 0);
  };
  for (double q0 : {0.0, 0.3, 0.5, 0.9, 1.0}) {
    const uint64_t seed = 11;
    agents::Aco aco(card, agents::AcoParams::from({{"aco.population", "257"}, {"aco.greediness", std::to_string(q0)}}),
                    seed);
    Population pop;
    pop.resize(int32_t(card.size()), 257);
    Scores s;
    for (uint64_t gen = 0; gen < 6; ++gen) {
      const std::vector<double> tau = aco.pheromone();
      aco.ask(pop);
      for (size_t i = 0; i < pop.size; ++i) {
        agents::Rng r(agents::stream_seed(seed, gen, i));
        size_t at = 0;
        for (size_t g = 0; g < card.size(); ++g) {
          const std::vector<double> w = weights(tau, at, card[g], q0);
          at += size_t(card[g]);
          const double x = r.uniform() * std::accumulate(w.begin(), w.end(), 0.0);
          int32_t want = 0;
          double c = w[0];
          while (want + 1 < card[g] && c <= x) c += w[size_t(++want)];
          ASSERT_EQ(pop.at(i, int32_t(g)), want) << "q0 " << q0 << " generation " << gen << " ant " << i << " gene " << g;
        }
      }
      scores(pop, s);
      aco.tell(pop, s);
    }
  }
  // The law, on a colony that has learnt something (gene 4's best value stands out): 10^5 ants,
  // each value's share within 5 standard deviations of its weight.
  const double q0 = 0.7;
  const size_t n = 100000;
  agents::Aco aco(card, agents::AcoParams::from({{"aco.population", std::to_string(n)}, {"aco.greediness", "0.7"}}), 5);
  Population pop;
  pop.resize(int32_t(card.size()), n);
  Scores s;
  for (int gen = 0; gen < 3; ++gen) {
    aco.ask(pop);
    scores(pop, s);
    aco.tell(pop, s);
  }
  const std::vector<double> tau = aco.pheromone();
  aco.ask(pop);
  size_t at = 0;
  for (size_t g = 0; g < card.size(); ++g) {
    const std::vector<double> w = weights(tau, at, card[g], q0);
    at += size_t(card[g]);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    for (int32_t v = 0; v < card[g]; ++v) {
      const double p = w[size_t(v)] / total;
      size_t hits = 0;
      for (size_t i = 0; i < n; ++i) hits += pop.at(i, int32_t(g)) == v;
      EXPECT_NEAR(double(hits) / double(n), p, 5 * std::sqrt(p * (1 - p) / double(n)) + 1e-12) << "gene " << g << " value " << v;
    }
  }
  // ACS's rule itself: gene 4's value of highest pheromone (5, alone at the top) is taken by at
  // least the greedy share of the ants, q0, plus its share of the others' roulette.
  const double* t4 = &tau[3 + 1 + 5 + 2];
  ASSERT_EQ(std::max_element(t4, t4 + 7) - t4, 5);
  ASSERT_EQ(std::count(t4, t4 + 7, t4[5]), 1);
  size_t fives = 0;
  for (size_t i = 0; i < n; ++i) fives += pop.at(i, 4) == 5;
  EXPECT_GT(double(fives) / double(n), q0 + (1 - q0) * t4[5] / std::accumulate(t4, t4 + 7, 0.0) - 0.01);
}

// ---------------------------------------------------------------------------------------------
TEST(PopulationEvaluator, CpuEqualsScalarEvaluate) {
  const auto ds = test::small_system1({Objective::Latency, Objective::Cost, Objective::RuntimeXBw});
  const SpaceView& v = *ds.view;
  const size_t n = 3000;
  Population pop;
  pop.resize(v.ngenes, n);
  agents::random_population(pop, cards(v), 9, 0);
  Scores s;
  PopulationMetrics m;
  make_cpu_population_evaluator(v, ds.objectives)->evaluate(pop, s, &m);
  size_t feasible = 0, constraint = 0, oom = 0;
  for (size_t i = 0; i < n; ++i) {
    int32_t genome[kMaxGenes];
    for (int32_t g = 0; g < v.ngenes; ++g) genome[g] = pop.at(i, g);
    const Config c = decode(v, genome);
    double viol = 0;
    if (!check_constraints(v, c, viol)) {
      EXPECT_EQ(s.reason[i], -1);
      EXPECT_GT(s.violation[i], 2);
      EXPECT_LT(s.violation[i], 3);
      ++constraint;
      continue;
    }
    const Result res = evaluate(c);
    EXPECT_EQ(s.reason[i], int32_t(res.reason));
    EXPECT_EQ(m.metric(0)[i], res.time_s);
    EXPECT_EQ(m.metric(1)[i], res.memory_bytes);
    EXPECT_EQ(m.metric(5)[i], res.first_token_s);
    if (res.reason == Reason::Ok) {
      ++feasible;
      EXPECT_EQ(s.violation[i], 0);
      for (int32_t j = 0; j < 3; ++j) EXPECT_EQ(s.at(i, j), objective_value(ds.objectives[size_t(j)], c, res));
    } else if (res.reason == Reason::OutOfMemory) {
      ++oom;
      const double x = (res.memory_bytes - c.compute.mem_capacity_bytes) / c.compute.mem_capacity_bytes;
      EXPECT_DOUBLE_EQ(s.violation[i], x / (1 + x));
    } else {
      EXPECT_DOUBLE_EQ(s.violation[i], 1 + int32_t(res.reason) / 100.0);
    }
  }
  EXPECT_GT(feasible, 0u);
  EXPECT_GT(constraint, 0u);
  EXPECT_GT(oom, 0u);
}

// The median time of a population's feasible individuals (a limit that cuts about half of them).
double median_feasible_time(const Scores& s, const PopulationMetrics& m) {
  std::vector<double> t;
  for (size_t i = 0; i < s.size; ++i)
    if (s.feasible(i)) t.push_back(m.metric(0)[i]);
  std::nth_element(t.begin(), t.begin() + ptrdiff_t(t.size() / 2), t.end());
  return t.empty() ? 1.0 : t[t.size() / 2];
}

// Under limits (latency at the median, memory at 20 GB), a point the model finds feasible but
// over a limit is LIMIT_EXCEEDED with violation x / (1 + x), x its relative excess summed over the
// limits (by hand here); an out-of-memory point adds that excess to its own; the rest as without.
TEST(PopulationEvaluator, LimitsRankByTheirExcess) {
  psa::DesignSpace ds = test::small_system1();
  SpaceView& v = *ds.view;
  const size_t n = 3000;
  Population pop;
  pop.resize(v.ngenes, n);
  agents::random_population(pop, cards(v), 9, 0);
  Scores free, s;
  PopulationMetrics m;
  make_cpu_population_evaluator(v, ds.objectives)->evaluate(pop, free, &m);
  const double t_max = median_feasible_time(free, m), mem_max = 2.0e10;
  v.nlimits = 2;
  v.limit_obj[0] = Objective::Latency;
  v.limit_max[0] = t_max;
  v.limit_obj[1] = Objective::Memory;
  v.limit_max[1] = mem_max;
  make_cpu_population_evaluator(v, ds.objectives)->evaluate(pop, s, &m);
  size_t kept = 0, over = 0, oom_over = 0;
  for (size_t i = 0; i < n; ++i) {
    const double t = m.metric(0)[i], mem = m.metric(1)[i];
    const double x = (t > t_max ? (t - t_max) / t_max : 0) + (mem > mem_max ? (mem - mem_max) / mem_max : 0);
    if (free.reason[i] == int32_t(Reason::Ok)) {
      if (x > 0) {
        ++over;
        EXPECT_EQ(s.reason[i], int32_t(Reason::LimitExceeded));
        EXPECT_DOUBLE_EQ(s.violation[i], x / (1 + x));
        EXPECT_EQ(s.at(i, 0), INFINITY);
      } else {
        ++kept;
        EXPECT_EQ(s.reason[i], 0);
        EXPECT_EQ(s.at(i, 0), free.at(i, 0));
      }
    } else if (free.reason[i] == int32_t(Reason::OutOfMemory)) {
      EXPECT_EQ(s.reason[i], free.reason[i]);
      const double cap = v.base.compute.mem_capacity_bytes;
      const double y = (mem - cap) / cap + x;
      oom_over += t > t_max;
      EXPECT_DOUBLE_EQ(s.violation[i], y / (1 + y));
    } else {
      EXPECT_EQ(s.reason[i], free.reason[i]);
      EXPECT_EQ(s.violation[i], free.violation[i]);
    }
  }
  EXPECT_GT(kept, 0u);
  EXPECT_GT(over, 0u);
  EXPECT_GT(oom_over, 0u);
}

// CPU and CUDA evaluators agree on random individuals of the full-stack space, on the physical
// convention and on the ASTRA-sim one (the kernel's general Conventions::Any form), bit for bit:
// no FMA contraction on either side and no libm function that rounds (astra::log2_int).
// The same scores, reasons and metrics, bit for bit, from one evaluator of each backend used for
// populations of several sizes (the CUDA one keeps its buffers and lays outputs out per size).
TEST(PopulationEvaluator, CudaMatchesCpu) {
  const CudaDevice dev = cuda_device();
  if (!dev.available) GTEST_SKIP() << "no CUDA device: " << dev.why;
  const std::string moe = std::string(COSMIC_DATA_DIR) + "/psa/moe/mixtral-h100.yaml";
  for (int astra = 0; astra < 4; ++astra) {  // 3: serving (generate: first_token_s), mixture of experts
    psa::DesignSpace ds = astra == 1   ? test::with_astra_sim(test::system1_fullstack())
                          : astra == 3 ? psa::load_psa(moe, {"base.workload.mode=generate", "base.workload.output_tokens=64",
                                                             "base.workload.prompt_tokens=512"})
                                       : test::system1_fullstack();
    SCOPED_TRACE(ds.name + (astra == 2 ? ", limited" : ""));
    SpaceView& v = *ds.view;
    if (astra == 2) {  // limits: latency at the median of feasible points, and the network cost
      Population pop;
      pop.resize(v.ngenes, 20000);
      agents::random_population(pop, cards(v), 3, 20000);
      Scores s;
      PopulationMetrics m;
      make_cpu_population_evaluator(v, ds.objectives)->evaluate(pop, s, &m);
      v.nlimits = 2;
      v.limit_obj[0] = Objective::Latency;
      v.limit_max[0] = median_feasible_time(s, m);
      v.limit_obj[1] = Objective::Cost;
      v.limit_max[1] = 2.0e7;
    }
    auto cpu = make_cpu_population_evaluator(v, ds.objectives);
    auto cuda = make_cuda_population_evaluator(v, ds.objectives);
    size_t feasible = 0;
    for (size_t n : {size_t(20000), size_t(7), size_t(30000)}) {
      Population pop;
      pop.resize(v.ngenes, n);
      agents::random_population(pop, cards(v), 3, n);
      Scores a, b;
      PopulationMetrics ma, mb;
      cpu->evaluate(pop, a, &ma);
      cuda->evaluate(pop, b, &mb);
      EXPECT_EQ(a.reason, b.reason) << n;
      EXPECT_EQ(a.violation, b.violation) << n;
      EXPECT_EQ(a.obj, b.obj) << n;
      EXPECT_EQ(ma.col, mb.col) << n;
      for (size_t i = 0; i < n; ++i) feasible += a.feasible(i);
    }
    EXPECT_GT(feasible, 0u);
  }
}

// GA's and NSGA-II's children bred on the device (PopulationEvaluator::breed(), one child per
// thread) equal those the agent's ask() breeds on the CPU threads, genes and rows (the agents'
// saved states compared, parents included), for one- and four-byte genes and both kinds of
// tournament record; and the device's evaluation of the genes it bred (not copied up again)
// equals the CPU's. Scores for the four-byte cases, whose genes the space cannot decode, are
// made up from the genes. A population of another size than the agent's is refused.
TEST(PopulationEvaluator, CudaBreedsAsTheHost) {
  const CudaDevice dev = cuda_device();
  if (!dev.available) GTEST_SKIP() << "no CUDA device: " << dev.why;
  const psa::DesignSpace ds = test::system1_fullstack();
  const SpaceView& v = *ds.view;
  const std::vector<Objective> two{Objective::RuntimeXBw, Objective::RuntimeXCost};
  struct Case {
    std::string agent;
    Params params;
    bool wide;
  };
  for (const Case& c : {Case{"ga", {{"ga.population", "20000"}}, false},
                        Case{"ga", {{"ga.population", "5003"}, {"ga.tournament", "3"}, {"ga.mutation_rate", "0.2"}}, true},
                        Case{"nsga2", {{"nsga2.population", "20000"}}, false},
                        Case{"nsga2", {{"nsga2.population", "4099"}, {"nsga2.crossover_rate", "1"}}, true}}) {
    SCOPED_TRACE(c.agent + (c.wide ? ", four-byte genes" : ""));
    std::vector<int32_t> card = cards(v);
    if (c.wide) card.back() = 1000;
    const std::vector<Objective>& objectives = c.agent == "nsga2" ? two : ds.objectives;
    const int32_t nobj = int32_t(objectives.size());
    auto host = agents::make_agent(c.agent, card, nobj, c.params, 7).agent;
    auto device = agents::make_agent(c.agent, card, nobj, c.params, 7).agent;
    auto cpu = make_cpu_population_evaluator(v, objectives);
    auto cuda = make_cuda_population_evaluator(v, objectives);
    const size_t n = size_t(std::stoll(c.params.at(c.agent + ".population")));
    Population a, b;
    a.resize(v.ngenes, n);
    b.resize(v.ngenes, n);
    int bred = 0;
    for (int gen = 0; gen < 4; ++gen) {
      host->ask(a);
      agents::BreedTask task;
      if (device->breeding(task)) {
        Population other;
        other.resize(v.ngenes, n + 1);
        EXPECT_THROW(cuda->breed(task, other), std::invalid_argument);
        ASSERT_TRUE(cuda->breed(task, b));
        device->bred(b);
        ++bred;
      } else {
        device->ask(b);
      }
      ASSERT_EQ(a.genes, b.genes) << "generation " << gen;
      Scores s, t;
      if (c.wide) {
        s = made_up_scores(a, nobj);
      } else {
        PopulationMetrics ma, mb;
        cpu->evaluate(a, s, &ma);
        cuda->evaluate(b, t, &mb);  // the genes bred there
        EXPECT_EQ(s.reason, t.reason);
        EXPECT_EQ(s.violation, t.violation);
        EXPECT_EQ(s.obj, t.obj);
        EXPECT_EQ(ma.col, mb.col);
      }
      host->tell(a, s);
      device->tell(b, s);
      agents::StateWriter wa, wb;
      host->save(wa);
      device->save(wb);
      ASSERT_EQ(wa.bytes(), wb.bytes()) << "generation " << gen;
    }
    EXPECT_EQ(bred, 3);
  }
}

TEST(PopulationEvaluator, CudaHostHelpers) {
  Population pop;
  pop.resize(3, 50000);
  for (size_t k = 0; k < pop.genes.size(); ++k) pop.genes[k] = int32_t(k % 2048);
  std::vector<uint16_t> narrow(pop.genes.size());
  narrow_genes(pop, narrow.data());
  for (size_t k = 0; k < pop.genes.size(); ++k) ASSERT_EQ(narrow[k], pop.genes[k]) << k;
  Population back;
  back.resize(3, 50000);
  widen_genes(narrow.data(), back);
  EXPECT_EQ(back.genes, pop.genes);
  // Several parts and a short last one.
  std::vector<char> from(3 * (size_t(1) << 18) + 12345), to(from.size() + 1, 'x');
  for (size_t k = 0; k < from.size(); ++k) from[k] = char(k * 7 + 1);
  copy_parallel(from.data(), to.data(), from.size());
  EXPECT_TRUE(std::equal(from.begin(), from.end(), to.begin()));
  EXPECT_EQ(to.back(), 'x');
}

TEST(PopulationEvaluator, CudaBackendRefusedWithoutDevice) {
  if (cuda_device().available) GTEST_SKIP() << "a CUDA device is present";
  const auto ds = tiny_space();
  EXPECT_THROW(make_population_evaluator("cuda", *ds.view, ds.objectives), std::runtime_error);
  EXPECT_EQ(make_population_evaluator("auto", *ds.view, ds.objectives)->name(), "cpu");
}

// A run killed while HDF5 flushed can leave metadata past the end of allocation its superblock
// records (a kill stress met it once in 430 early kills): HDF5 refuses the file. --resume moves
// the end to the file's size and goes on, to the file of the run with that budget; reading
// says what is wrong and what repairs it. A file that stays unreadable is left as it was.
TEST(SearchCli, ResumeRepairsASuperblockShortOfTheFile) {
  const std::string psa = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/workload-system1.yaml";
  const std::string out = temp_path("short_end.h5"), fresh = temp_path("short_end_fresh.h5");
  const std::string run = "search " + psa + " --agent ga --population 50 --seed 3 -q ";
  std::filesystem::remove(out);  // (a damaged file is not written over)
  ASSERT_EQ(test::run_cli(run + "--budget 300 -o " + out).status, 0);
  ASSERT_EQ(test::run_cli(run + "--budget 400 -o " + fresh).status, 0);
  const auto set_end = [](const std::string& path, uint64_t end) {  // superblock version 0: the end at byte 40
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(40);
    for (int k = 0; k < 8; ++k) io.put(char(end >> (8 * k)));
  };
  set_end(out, 256);  // short of the root group's heap
  test::CliRun r = test::run_cli("show " + out);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("its superblock records less of the file than it holds, as a run killed while HDF5 wrote leaves "
                       "it; --resume tries to repair that"),
            std::string::npos)
      << r.out;
  r = test::run_cli("search --resume --budget 400 -q -o " + out);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("cosmic: repaired " + out + ": its superblock recorded less of the file than it holds"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(evaluated_columns(out, psa::load_psa(psa)), evaluated_columns(fresh, psa::load_psa(psa)));
  // Cut short, the file does not open with any end: the resume fails and changes no byte.
  const auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::filesystem::resize_file(out, 200);
  set_end(out, 100);
  const std::string cut = bytes(out);
  r = test::run_cli("search --resume -q -o " + out);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(out + ": the file is damaged: HDF5 cannot open it, not even with the end its superblock records moved"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(bytes(out), cut);
  std::filesystem::remove(out);
}

// --stall G stops G generations after the one that found the best, by the feasibility rules:
// while nothing is feasible a lower violation is a better best too. On a space with one
// feasible point in 600, GA of 4 spends generations closing in on it; a stall that counted only
// feasible bests stopped those searches at generation G whatever they had found.
TEST(SearchCli, StallCountsFromTheBestByTheFeasibilityRules) {
  const std::string psa = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/workload-system1.yaml";
  const std::string out = temp_path("stall_rules.h5");
  int stalled = 0;
  for (int seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const test::CliRun r = test::run_cli(
        "search " + psa + " --set 'constraints=[\"workload.dp == 64\", \"workload.cp == 2\"]' --agent ga "
        "--population 4 --budget 400 --stall 10 -q --seed " + std::to_string(seed) + " -o " + out);
    ASSERT_EQ(r.status, 0) << r.out;
    h5::Handle f = h5::open_file(out, false);
    if (!h5::has_attr(f.id(), "stopped") || h5::attr_string(f.id(), "stopped") != "stall") continue;
    ++stalled;
    h5::Handle gg = h5::group(f.id(), "generations", false);
    const auto evals = h5::read_column<uint64_t>(gg.id(), "evaluations");
    h5::Handle best = h5::group(f.id(), "best", false);
    const uint64_t found = h5::attr_uint(best.id(), "found_at_evaluation");
    const size_t found_in = size_t(std::lower_bound(evals.begin(), evals.end(), found) - evals.begin()) + 1;
    EXPECT_EQ(found_in + 10, evals.size());
  }
  EXPECT_GT(stalled, 2);
  std::filesystem::remove(out);
}

// A search that finds nothing feasible says so, with what its least infeasible point broke; one
// that finds a feasible point does not.
TEST(SearchCli, SaysWhenNothingFeasibleWasFound) {
  const std::string psa = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/workload-system1.yaml";
  const std::string run = "search " + psa + " --agent ga --budget 200 --population 100 --seed 1 --backend cpu -o ";
  const std::string said = "search: no feasible point in 200 evaluations; /best is the least infeasible (CONSTRAINT)";
  const test::CliRun none = test::run_cli(run + temp_path("none.h5") + " --set 'constraints=[\"workload.dp > 1000000\"]'");
  EXPECT_EQ(none.status, 0) << none.out;
  EXPECT_NE(none.out.find(said), std::string::npos) << none.out;
  const test::CliRun some = test::run_cli(run + temp_path("some.h5"));
  EXPECT_EQ(some.status, 0) << some.out;
  EXPECT_EQ(some.out.find("no feasible point"), std::string::npos) << some.out;
}

// A search the memory cannot hold is refused before a file is made, with the estimate: a GA of
// 10^8 on the System 1 full-stack space (35 genes) holds (162 + 8 x 35) = 442 bytes an
// individual (docs/agents.md, "Memory"), 44.2 GB, under a `ulimit -v` of 4 GiB; without the
// limit a population of 10^4 runs. BO also holds its history: population 16, budget 10^8, 35
// genes: 16 x 442 + 10^8 x (116 + 14 x 35) = 60.6 GB.
TEST(SearchCli, RefusesASearchTheMemoryCannotHold) {
#if defined(__SANITIZE_ADDRESS__)  // (g++ defines it under -fsanitize=address)
  GTEST_SKIP() << "AddressSanitizer cannot map its shadow memory under the test's ulimit -v of 4 GiB";
#endif
  const std::string psa = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/fullstack-system1.yaml";
  const std::string run = "search " + psa + " --keep none --backend cpu -q --seed 1";
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  rlimit limited = old;
  limited.rlim_cur = rlim_t(4) << 30;
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < limited.rlim_cur) limited.rlim_cur = old.rlim_max;
  const std::string big = temp_path("too_big.h5"), bo = temp_path("bo_too_big.h5"), small = temp_path("fits.h5");
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limited), 0);
  const test::CliRun refused = test::run_cli(run + " --agent ga --population 1e8 --budget 2e8 -o " + big);  // 10^8, 2 x 10^8
  const test::CliRun bo_refused = test::run_cli(run + " --agent bo --budget 1e8 -o " + bo);
  setrlimit(RLIMIT_AS, &old);
  const test::CliRun fits = test::run_cli(run + " --agent ga --population 10000 --budget 20000 -o " + small);
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.out.find("this search (ga, population 100000000, 35 genes, --keep none, cpu) needs about 44.2GB"),
            std::string::npos)
      << refused.out;
  EXPECT_NE(refused.out.find("a smaller --population"), std::string::npos) << refused.out;
  EXPECT_EQ(bo_refused.status, 1) << bo_refused.out;
  EXPECT_NE(bo_refused.out.find("(bo, population 16, budget 100000000, 35 genes, --keep none, cpu) needs about 60.6GB"),
            std::string::npos)
      << bo_refused.out;
  for (const std::string& f : {big, bo}) {
    EXPECT_FALSE(std::filesystem::exists(f));
    EXPECT_FALSE(std::filesystem::exists(f + ".partial"));
  }
  EXPECT_EQ(fits.status, 0) << fits.out;
}

// A space no larger than the budget gets a note that a sweep would be exact; a larger one not.
TEST(SearchCli, NotesASpaceTheBudgetCouldSweep) {
  const std::string psa = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/workload-system1.yaml";  // 600 points
  const std::string run = "search " + psa + " --agent rw --population 100 --seed 1 --backend cpu -o ";
  const std::string note = "search: note: the space holds 600 points, no more than the budget: `cosmic sweep`";
  const test::CliRun whole = test::run_cli(run + temp_path("sweepable.h5") + " --budget 600");
  EXPECT_EQ(whole.status, 0) << whole.out;
  EXPECT_NE(whole.out.find(note), std::string::npos) << whole.out;
  const test::CliRun part = test::run_cli(run + temp_path("searched.h5") + " --budget 599");
  EXPECT_EQ(part.status, 0) << part.out;
  EXPECT_EQ(part.out.find("search: note: the space holds"), std::string::npos) << part.out;
}

// ---------------------------------------------------------------------------------------------
TEST(SearchCli, RunsAndRefusesBadInput) {
  const std::string psa = std::string(COSMIC_DATA_DIR) + "/psa/cosmic/workload-system1.yaml";
  ASSERT_TRUE(std::filesystem::exists(psa)) << psa << " not present (shipped with cosmic)";
  const std::string out = temp_path("cli.h5");
  test::CliRun r = test::run_cli("search " + psa + " --agent ga --budget 1000 --population 100 --seed 3 --backend cpu -o " + out);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("1k/1k evaluations"), std::string::npos) << r.out;
  r = test::run_cli("search " + psa + " --agent ga --budget 100 --param mutation_rate=2 -o " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("ga.mutation_rate: expected auto or a number in [0, 1], got '2'"), std::string::npos) << r.out;
  r = test::run_cli("search " + psa + " --agent sa --budget 100 -o " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown agent 'sa'"), std::string::npos) << r.out;
  // A misspelt agent on a space of two objectives: the name is refused before any note on it.
  r = test::run_cli("search " + psa + " --agent nsga --budget 100 --set objectives=[latency,memory] -o " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown agent 'nsga'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("optimises the first objective"), std::string::npos) << r.out;
  for (const char* bad : {"--target nan", "--target inf", "--checkpoint -1", "--stall -2"}) {
    r = test::run_cli("search " + psa + " --agent ga --budget 100 " + bad + " -o " + out);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
  }
  r = test::run_cli("search " + psa + " --agent ga --budget 100 --target nan -o " + out);
  EXPECT_NE(r.out.find("--target: cannot read 'nan' as its value"), std::string::npos) << r.out;
  r = test::run_cli("search " + psa + " --agent ga --budget 100 --keep some -o " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--keep expects all, feasible or none"), std::string::npos) << r.out;
  r = test::run_cli("search " + psa + " --agent ga --budget 100 --breed gpu -o " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--breed expects host or device"), std::string::npos) << r.out;
  // Breeding on the device needs the CUDA evaluator: with the CPU's, a note, and the file says
  // where the children were bred.
  for (const char* breed : {"host", "device"}) {
    r = test::run_cli("search " + psa + " --agent ga --budget 100 --backend cpu --breed " + breed + " -o " + out);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out.find("--breed device needs the CUDA evaluator; breeding on the host") != std::string::npos,
              std::string(breed) == "device") << r.out;
    EXPECT_EQ(h5::attr_string(h5::open_file(out, false).id(), "breeding"), "host");
  }
  r = test::run_cli("search " + psa + " --agent ga --budget 100 --population 5 --param population=7 -o " + out);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--population and --param population both set the population"), std::string::npos) << r.out;
  r = test::run_cli("search " + psa + " --agent rw --budget 100 --population 50 -q -o " + out);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = test::run_cli("search " + psa + " --agent rw --budget 100 -q -o " + out);  // a default cut: a note
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  // A population asked for beyond the budget is one generation of random genomes: a warning,
  // --quiet or not. The default population of a generational agent is cut to a tenth of the
  // budget instead, for ten generations: a note, which --quiet silences.
  r = test::run_cli("search " + psa + " --agent ga --budget 100 --population 500 -q -o " + out);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "search: population 500 is more than the budget: 100 instead, so the search is one "
                   "generation of random genomes\n");
  r = test::run_cli("search " + psa + " --agent ga --budget 100 -q -o " + out);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  for (const char* agent : {"ga", "nsga2", "aco"}) {
    r = test::run_cli("search " + psa + " --agent " + agent + " --budget 100 -o " + out);
    EXPECT_NE(r.out.find("is more than a tenth of the budget: 10 instead, 10 generations\n"), std::string::npos) << r.out;
    h5::Handle f = h5::open_file(out, false);
    EXPECT_EQ(h5::attr_uint(f.id(), "population"), 10u) << agent;
    EXPECT_EQ(h5::attr_uint(f.id(), "generations"), 10u) << agent;
  }
  // Under 20 evaluations the GA's least population, 2, makes fewer generations, and the note says
  // how many; a budget of 1 is one generation of one of them.
  r = test::run_cli("search " + psa + " --agent ga --budget 15 -o " + out);
  EXPECT_NE(r.out.find("is more than a tenth of the budget: 2 instead, 8 generations\n"), std::string::npos) << r.out;
  r = test::run_cli("search " + psa + " --agent ga --budget 1 --population 5 -q -o " + out);
  EXPECT_EQ(r.out, "search: population 5 is more than the budget: 2 instead (the least ga pairs parents with), so the "
                   "search is one generation of random genomes\n");
  // --resume continues the search as started: the command that started it, --resume added, is
  // fine (a hyperparameter as written or at its default value); an option that says otherwise
  // is refused, not ignored.
  const std::string started = "search " + psa + " --agent ga --budget 300 --population 100 --seed 3 --param mutation_rate=0.1 -o " + out;
  ASSERT_EQ(test::run_cli(started + " -q").status, 0);
  r = test::run_cli(started + " --resume --budget 350 -q");
  EXPECT_EQ(r.status, 0) << r.out;
  r = test::run_cli("search " + psa + " --resume --budget 400 --param mutation_rate=0.10 --param tournament=2 -q -o " + out);
  EXPECT_EQ(r.status, 0) << r.out;
  for (const auto& [option, says] : std::vector<std::pair<std::string, std::string>>{
           {"--agent aco", "--agent: " + out + " is a search of agent ga"},
           {"--seed 4", "--seed: " + out + " is a search of seed 3"},
           {"--population 50", "--population: " + out + " is a search of population 100"},
           {"--param tournament=3", "--param: " + out + "'s search ran with ga.tournament=2"},
           {"--keep none", "--keep: " + out + " is a search of --keep all"},
           {"--set objectives=[memory]", "--set: " + out + " was written with no --set edits"}}) {
    r = test::run_cli("search " + psa + " --resume --budget 500 -o " + out + " " + option);
    EXPECT_EQ(r.status, 2) << option;
    EXPECT_NE(r.out.find(says + "; --resume continues the search as it was started (leave the option out)"), std::string::npos)
        << option << ": " << r.out;
  }
  {
    h5::Handle f = h5::open_file(out, false);
    EXPECT_EQ(h5::attr_uint(f.id(), "evaluated_count"), 400u);  // the refused resumes changed nothing
  }
  // --set edits given again are the file's when they make the same space: in another order, spaced
  // otherwise or given twice, with the PSA file named or left out (then the file's own). Another
  // value, a missing edit or a number written otherwise is refused.
  const std::string edited = "search " + psa + " --agent ga --budget 300 --population 100 --seed 3 -q -o " + out +
                             " --set base.workload.global_batch=1024 --set 'objectives=[latency,memory]'";
  ASSERT_EQ(test::run_cli(edited).status, 0);
  for (const std::string& again : {"--set 'objectives=[ latency, memory ]' --set base.workload.global_batch=1024",
                                   "--set objectives=[latency,memory] --set base.workload.global_batch=1024 "
                                   "--set base.workload.global_batch=1024"})
    for (const std::string& named : {psa + " ", std::string()}) {
      r = test::run_cli("search " + named + "--resume -q -o " + out + " " + again);
      EXPECT_EQ(r.status, 0) << named << again << ": " << r.out;
    }
  for (const std::string& other : {"--set 'objectives=[latency,memory]' --set base.workload.global_batch=2048",
                                   "--set 'objectives=[latency,memory]'",
                                   "--set 'objectives=[latency,memory]' --set base.workload.global_batch=1024.0"}) {
    r = test::run_cli("search " + psa + " --resume -q -o " + out + " " + other);
    EXPECT_EQ(r.status, 2) << other;
    EXPECT_NE(r.out.find("--set: " + out + " was written with other --set edits"), std::string::npos) << other << ": " << r.out;
  }
  // A population the budget cut is the same search when given again.
  const std::string cut = "search " + psa + " --agent ga --budget 60 --population 1000 --seed 3 -q -o " + out;
  ASSERT_EQ(test::run_cli(cut).status, 0);
  r = test::run_cli(cut + " --resume --budget 120");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(test::run_cli(cut + " --resume --budget 180 --population 999").status, 2);
  // A default population cut to a tenth of the first budget stays cut when a resume raises the
  // budget: a note says so, and the file is that of the search with this population and budget.
  const std::string tenth = temp_path("tenth.h5"), fresh = temp_path("tenth-fresh.h5");
  ASSERT_EQ(test::run_cli("search " + psa + " --agent ga --budget 100 --seed 3 -q -o " + tenth).status, 0);
  r = test::run_cli("search --resume --budget 200 -o " + tenth);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("search: note: the population is 10, which the first budget cut from 4096; the continuation keeps "
                       "it (the search with --population 10 and this budget)\n"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(test::run_cli("search " + psa + " --agent ga --budget 200 --population 10 --seed 3 -q -o " + fresh).status, 0);
  EXPECT_EQ(evaluated_columns(tenth, psa::load_psa(psa)), evaluated_columns(fresh, psa::load_psa(psa)));
  // Nothing feasible (1 GB per NPU): the progress line says so, not "best inf".
  const std::string tiny = temp_path("tiny-memory.yaml");
  std::ofstream(tiny) << "name: tiny\nbase:\n  model: GPT3-175B\n  system: {preset: cosmic-system1, compute: {memory_GB: 1}}\n"
                         "  workload: {global_batch: 2048, dp: 8, pp: 4, cp: 8, tp: 4}\n"
                         "parameters:\n  workload: {dp: {pow2: {min: 1, max: 512}}}\nderived: {tp: auto}\n"
                         "objectives: [runtime_x_bw]\n";
  r = test::run_cli("search " + tiny + " --agent rw --budget 20 --population 10 -o " + out);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("20/20 evaluations, best none feasible"), std::string::npos) << r.out;
  // A population above the budget is cut to it (it was bred and held whole: 10^8 genomes for 10
  // evaluations), and the file records the population the search ran with. That changes the
  // search asked for: a warning, which --quiet does not silence.
  for (const char* agent : {"rw", "ga", "aco", "bo", "nsga2"}) {
    r = test::run_cli("search " + psa + " --agent " + agent + " --budget 10 --population 1000000 --quiet -o " + out);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("population 1000000 is more than the budget: 10 instead"), std::string::npos) << r.out;
    h5::Handle f = h5::open_file(out, false);
    EXPECT_EQ(h5::attr_uint(f.id(), "population"), 10u) << agent;
    EXPECT_EQ(h5::attr_uint(f.id(), "evaluated_count"), 10u) << agent;
  }
  // --resume takes the population asked as the same search, given as --population or --param
  // (the second was refused: the file ran with 10).
  for (const char* same : {"--population 1000000", "--param population=1000000"}) {
    r = test::run_cli("search --resume -o " + out + " --budget 20 -q " + same);
    EXPECT_EQ(r.status, 0) << same << ": " << r.out;
  }
  EXPECT_EQ(test::run_cli("search --resume -o " + out + " --budget 30 -q --param population=11").status, 2);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace cosmic
