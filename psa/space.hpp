// PSA (Parameter Set Architecture) files -> design spaces.
//
// A PSA file declares the base configuration, the parameters to search (by stack), derived
// parameters, constraints and objectives; load_psa() turns it into a DesignSpace whose
// SpaceView (kernels/space.hpp) the evaluators decode genomes with. Schema: docs/psa.md.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/space.hpp"

namespace YAML {
class Node;
}

namespace cosmic::psa {

struct GeneInfo {
  std::string name;                 // e.g. "workload.dp", "network.topology.1"
  std::string stack;                // workload, collective, network, compute
  std::vector<std::string> labels;  // human-readable value of each index ("Ring", "8", "187.5")
};

// One agent's entry of a PSA file's `agent:` mapping: its hyperparameters as "<agent>.<key>" ->
// text, and where each was written ("file:line:column"), for error messages.
struct AgentSection {
  std::string name, where;
  std::map<std::string, std::string> params, where_of;
};

struct DesignSpace {
  std::string file;                 // the PSA file
  std::string text;                 // its full text (recorded in result files)
  std::vector<std::string> sets;    // the --set KEY=VALUE edits applied to it, as given (recorded too)
  std::string base_text;            // the base configuration it resolves to (presets expanded), as YAML
  std::string edited_text;          // the PSA tree with the --set edits applied, as YAML (before presets are
                                    // expanded): two loads with equal edited_text and base_text are one space
  std::string name;
  std::string model_name, system_name;
  std::unique_ptr<SpaceView> view;  // ~20 KB: kept on the heap
  std::vector<GeneInfo> genes;      // one per SpaceView gene, same order
  std::vector<Objective> objectives;  // one or more; several = Pareto front
  std::string objectives_at;          // where the file gives them (file:line:column), for errors
  std::vector<std::string> constraint_text;  // as written, for reports
  std::vector<std::string> constraint_at;    // where each is written (file:line:column), for errors
  std::vector<AgentSection> agent_sections;  // the `agent:` mapping, in file order
  std::vector<std::string> device_systems;   // a compute.device gene's NPU types: each resolved system, as YAML
};

// Loads a PSA file, with `sets` (--set KEY=VALUE: a key of the PSA file, or base.KEY of its base
// configuration) applied in psa::application_order; errors (psa::ConfigError) name file, line
// and key.
DesignSpace load_psa(const std::string& path, const std::vector<std::string>& sets = {});
// Replaces the values of a PSA tree's compute.device gene by `systems` (DesignSpace::device_systems),
// inline, each named by its value's label: the same space, without the preset or system files
// (a result file's recorded space, a study's copy of a PSA file).
void inline_devices(YAML::Node root, const std::vector<std::string>& systems);
bool has_device_gene(const YAML::Node& root);  // a PSA tree searches parameters.compute.device

// The genes constraint k of `s` reads, ascending: gene g is listed when its value can change a
// value constraint k's program pushes, directly or through decode()'s derived parameters (a
// derived TP reads the DP, CP, PP and npus genes; per-NPU bandwidth, network_cost and
// npu_bandwidth_total read topology genes; algorithms that follow the topology read topology
// genes). Genes not listed cannot change whether constraint k holds. The one rule set behind
// sweep skipping (make_sweep_const, host/sweep.cpp) and feasible_count().
std::vector<int32_t> constraint_genes(const SpaceView& s, int32_t k);
// How many leading genes a sweep may set again alone when only they changed (reapply_genome in
// kernels/space.hpp): genes no other gene's setting or derived parameter writes over, TP aside
// (derived again at every step), before the first per-NPU bandwidth (divided by the topology's
// links once set) and the first algorithm that follows the topology. By the same write sets as
// constraint_genes.
int32_t plain_genes(const SpaceView& s);

// Number of points whose genome satisfies every constraint (not the model's memory check),
// exact, computed without visiting every raw point where the constraints allow it.
u128 feasible_count(const DesignSpace& space);
// What a user should know of a space before sweeping it, one sentence each: per-NPU bandwidth
// on FullyConnected dimensions of other than 8 NPUs under the study's link count; with no
// feasible point (`feasible`, feasible_count()'s, when given), the constraints no point meets
// alone.
std::vector<std::string> space_notes(const DesignSpace& space, const u128* feasible = nullptr);

// True for a gene no result of the space depends on: the scheduling policy (one collective is in
// flight at a time); unless the space's context parallelism may run DeepSpeed-Ulysses style
// (cp_style alltoall in the base or searched), the all-to-all algorithm (the only all-to-all the
// model has); in an inference space, the training-only schedule, vpp, sharding and recompute.
// Such a space holds every result several times; `cosmic space` says so.
bool gene_has_no_effect(const DesignSpace& space, size_t gene);
// The genes a sweep folds: those with more than one value that no result depends on
// (gene_has_no_effect) and no constraint reads. Every point then has the results and constraint
// verdicts of its twin with these genes at their first value, so a sweep visits only the twins
// and each stands for fold_copies() points of the space.
std::vector<int32_t> foldable_genes(const DesignSpace& space);
// The product of the genes' cardinalities.
uint64_t fold_copies(const DesignSpace& space, const std::vector<int32_t>& genes);
// A copy of `space` in which the named genes keep their first value only; a name that is not a
// foldable gene of the space is an error (std::runtime_error).
DesignSpace fold_genes(const DesignSpace& space, const std::vector<std::string>& names);

// The configuration of one point of the space (a genome) as a YAML file `cosmic eval` reads: the
// base configuration, presets expanded, with the point's workload layout and settings, network
// and compute genes written in, derived parameters included (TP, per-link bandwidths, algorithms
// that follow the topology). It reads back as decode()'s configuration, bit for bit. `comment`,
// when given, opens the file as a YAML comment.
std::string point_config(const DesignSpace& space, const int32_t* genome, const std::string& comment = "");

// A parallel degree's name, "dp", "tp", "pp" or "cp" (Param::DP .. Param::CP), and the rule that
// derives it when the space does (SpaceView::derived_degree): "tp = NPUs / (dp x cp x pp)".
std::string degree_name(Param p);
std::string derived_rule(Param p);

// The name of an objective as PSA files and reports write it (latency, runtime_x_bw, ...).
const char* objective_name(Objective o);
// The objective of that name (objective_name's, as result files write them), if any.
std::optional<Objective> objective_named(const std::string& name);
// Whether a PSA file's `objectives:` may name `word` (any spelling it takes, or all), and the
// list of them for messages.
bool is_objective_word(const std::string& word);
std::string objective_choices();
// An objective's units as result files write them ("s", "s/token", "bytes", "USD", ...).
const char* objective_units(Objective o);
// Limit k of a space as text, with units: "latency <= 2.5 s", "memory <= 7.73e+10 bytes (72 GiB)".
std::string limit_text(const SpaceView& s, int32_t k);
std::string limit_text(Objective o, double max);

std::string to_string_u128(u128 v);          // decimal
std::string with_commas(const std::string& decimal);
bool parse_u128(const std::string& text, u128& out);

}  // namespace cosmic::psa
