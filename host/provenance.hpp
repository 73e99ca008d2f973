// What a result file's numbers depend on besides its PSA text and run settings: the model's
// revision (kModelRevision), the --set edits the PSA was loaded with, and the base configuration
// it resolved to (its base file and presets may change after the run). Sweep and search files
// record them; --resume, cosmic merge and a study's reuse of a finished run require them to match.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "psa/space.hpp"

namespace cosmic {

struct Provenance {
  int64_t model_revision = -1;  // -1: not recorded (a file of an older cosmic)
  std::string base_config;
  std::vector<std::string> psa_sets;  // --set edits (attribute psa_sets, absent when none)
  std::vector<std::string> device_systems;  // a compute.device gene's NPU types (attribute device_systems)
};

// The command line a file's provenance records (main() sets it: `cosmic sweep ...`).
void set_command_line(int argc, const char* const* argv);
// Writes a result file's header: the attributes kind, format_version, tool_version, psa (the
// text, `psa_text`), psa_file, then created (UTC), host, command_line, model_revision,
// base_config, psa_sets and limits (this run's, this build's, ds's), then space_name.
void write_run_header(hid_t file, const std::string& kind, int64_t format_version, const std::string& psa_text,
                      const std::string& psa_file, const psa::DesignSpace& ds);
Provenance read_provenance(hid_t file);
// The PSA file of a sweep or search into `out`, loaded with the --set edits `sets`; with `resume`,
// with the edits `out` recorded instead (an error in them says they are the file's, and a PSA
// whose text is not the one the file recorded is refused before they are applied). A file that
// cannot be read is left for the run to report.
psa::DesignSpace load_run_psa(const std::string& psa_file, const std::vector<std::string>& sets,
                              const std::string& out, bool resume);
// The design space a result file was run over, from what it recorded (its PSA text and file
// name, provenance and folded genes), so that neither the PSA file nor its base is needed: the
// recorded base written inline, the other --set edits applied, the genes folded. Throws
// (std::runtime_error, psa::ConfigError) when that does not rebuild the recorded base.
psa::DesignSpace recorded_space(const std::string& psa_text, const std::string& psa_file, const Provenance& prov,
                                const std::vector<std::string>& folded);
// The space a sweep or search file (`kind`) recorded, for `--resume -o FILE` without the PSA
// file: its PSA text (which the resume compares with the file's) over the recorded base
// configuration, with the --set edits it recorded, no gene folded (a sweep folds its own).
psa::DesignSpace resumed_space(const std::string& out, const std::string& kind);
// The units of a result file's column by its name (docs/results-format.md): a metric's
// (time_s: "s", ...) or an objective's (psa::objective_units); null for others (genes, reason).
const char* column_units(const std::string& name);
// The column name of gene g in a result file's tables: its PSA name ("gene_g" for an unnamed one).
std::string gene_column(const psa::DesignSpace& ds, int32_t g);
// Writes group /genes: one string dataset per gene of ds's view, named by gene_column, holding
// the label of each value index, and attribute gene_names (the genes in genome order). Each
// dataset is a dimension scale of its own (label_dimensions).
void write_gene_labels(hid_t file, const psa::DesignSpace& ds);
// Makes each dataset of /genes a dimension of its own, its labels the coordinate (xarray opens
// /genes with one dimension per gene, named after it); for files of an earlier format, resumed.
void label_dimensions(hid_t file);
// The rows of /reasons: code -1, CONSTRAINT (a PSA constraint violated), then the model's
// reasons 0 .. kNumReasons - 1 with their names.
void reason_codes(std::vector<int32_t>& code, std::vector<std::string>& name);
// The space the point indices of a file are in (its `index` columns, /best's space_index), as
// its root attribute index_space records it: "psa", the PSA's whole space (searches, and sweeps
// that fold no gene), or "folded", the PSA's space with the genes `folded_genes` names taken at
// their first value only (a sweep that folds genes).
std::string index_space(const std::vector<std::string>& folded_genes);

// The space of result file `f` (named `file` in messages; a sweep's folded as it swept it),
// rebuilt from what it recorded: recorded_space() of its attributes.
psa::DesignSpace file_space(hid_t f, const std::string& file);

// "--set A, --set B", or "no --set".
std::string sets_text(const std::vector<std::string>& sets);

// Empty when `p` is this model revision's (and, provenance_mismatch, with the base configuration
// `ds` resolves to now); else why not, as a sentence to follow "FILE: ".
std::string revision_mismatch(const Provenance& p);
std::string provenance_mismatch(const Provenance& p, const psa::DesignSpace& ds);

// The first line where two texts differ (1-based) and the two lines, labelled: "line 12:
// 'global_batch: 1024' now, 'global_batch: 2048' in the file"; empty when they are equal.
std::string first_difference(const std::string& a, const std::string& b, const std::string& where_a,
                             const std::string& where_b);

}  // namespace cosmic
