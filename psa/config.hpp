// Configuration files: YAML -> cosmic::Config.
//
// A configuration names (or inlines) a model and a system and gives the workload:
//   model: GPT3-175B              # preset data/models/GPT3-175B.yaml, a path, or a mapping
//   system: cosmic-system1        # preset, path, or a mapping (optionally `preset:` + overrides)
//   workload: {dp: 8, pp: 4, ...}
// Unknown keys are errors; every error names the file, line, key and what was expected.
// The full schema is in docs/config.md.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "kernels/types.hpp"

namespace cosmic::psa {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where each part of a merged YAML tree came from, for error messages.
struct Sources {
  std::string config_file;
  std::map<std::string, std::string> section_file;   // "model" -> data/models/X.yaml
  std::map<std::string, std::string> override_from;  // "workload.dp" -> "--set" or a file
  std::string set_prefix;  // what --set writes before these keys ("base." for a PSA's base)
  std::string edit_label = "--set";  // the override_from of an edit, which has no line (a study's: "set")
  std::string file_of(const std::string& key_path) const;
};

// The data directory holding models/, systems/, configs/ (env COSMIC_DATA_DIR, else the
// source tree's data/ as configured at build time).
std::string data_dir();

// Reads a YAML file (UTF-8); a syntax error, a key given twice in one mapping, a byte that is
// not UTF-8 or a directory becomes a ConfigError naming file and line. `text_out`, when given,
// receives the file's text as parsed.
YAML::Node load_yaml_file(const std::string& path, std::string* text_out = nullptr);

// A model's or system's `name:`, or "inline" without one.
std::string node_name(const YAML::Node& model_or_system);

// Finds a preset: an existing path (relative to `relative_to`'s folder or the working
// directory), else data_dir()/<kind>/<name>.yaml.
std::string find_preset(const std::string& kind, const std::string& name, const std::string& relative_to);
// The file `name` names: relative to the folder of `next_to` (a PSA or study file), the working
// directory, then the data directory (so `configs/cosmic-system1-baseline.yaml` works from
// anywhere); "" where none is a regular file.
std::string find_file(const std::string& name, const std::string& next_to);

// `text` without the spaces and tabs at its ends.
std::string trim(std::string text);

// Applies `key.path=value` (value parsed as YAML) onto a tree; sequence items by index. The
// edit as application_order gives it (no spaces around the key and the value).
void apply_set(YAML::Node root, const std::string& assignment, Sources& sources);

// --set edits that choose what the others edit, applied first whatever their place:
// `base=...` replaces a PSA's base configuration; `model=`, `system=`, `model.preset=` and
// `system.preset=` (also after `base.`) choose a preset, before presets are expanded.
bool replaces_base(const std::string& set);
bool picks_preset(const std::string& set);
// `sets` in the order they apply: those replacing the base, then those picking presets, then
// the rest, each group in its given order; each trimmed around its key and value (`model = NAME`).
std::vector<std::string> application_order(const std::vector<std::string>& sets);
// A file's whole text ("" when it cannot be read).
std::string read_text(const std::string& path);

// The text of an input file (a configuration, design space or CSV), or an error naming it where
// it is a directory, cannot be opened or holds more than `max_bytes` (what /dev/zero or a wrong
// file would otherwise fill memory with; pipes such as <(...) are read as files).
std::string read_input(const std::string& path, const char* expected, size_t max_bytes = size_t(64) << 20);

struct LoadedConfig {
  Config config;
  std::string model_name;
  std::string system_name;
  YAML::Node resolved;  // the merged tree (presets expanded, --set applied)
  Sources sources;
};

// Loads a configuration file, expands presets, applies --set assignments, converts strictly.
// `set_prefix`: Sources::set_prefix, for the fixes messages suggest.
LoadedConfig load_config(const std::string& path, const std::vector<std::string>& sets = {},
                         const std::string& set_prefix = "");

// Converts an already resolved tree (with model, system, workload mappings).
Config convert_config(const YAML::Node& root, const Sources& sources);

// Resolves the `model` and `system` entries of a configuration tree in place.
void resolve_presets(YAML::Node root, Sources& sources);

}  // namespace cosmic::psa
