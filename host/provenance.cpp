#include "host/provenance.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "host/h5.hpp"
#include "kernels/model.hpp"
#include "psa/config.hpp"
#include "psa/names.hpp"

#ifndef COSMIC_VERSION
#define COSMIC_VERSION "0.0.0"
#endif

namespace cosmic {

namespace {
std::string g_command_line;  // the command that made the file (set_command_line)
}  // namespace

void set_command_line(int argc, const char* const* argv) {
  g_command_line.clear();
  for (int i = 0; i < argc; ++i) {  // an argument with a space or a quote in single quotes, as a shell reads it
    std::string a = argv[i];
    if (a.empty() || a.find_first_of(" \t'\"\\$") != std::string::npos) {
      std::string q = "'";
      for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      a = q + "'";
    }
    g_command_line += (i ? " " : "") + a;
  }
}

void write_run_header(hid_t file, const std::string& kind, int64_t format_version, const std::string& psa_text,
                      const std::string& psa_file, const psa::DesignSpace& ds) {
  h5::set_attr(file, "kind", kind);
  h5::set_attr(file, "format_version", format_version);
  h5::set_attr(file, "tool_version", std::string(COSMIC_VERSION));
  h5::set_attr(file, "psa", psa_text);
  h5::set_attr(file, "psa_file", psa_file);
  // When, where and by what command (as typed; the run's settings are the file's other
  // attributes): what a reader needs to tell runs apart.
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  h5::set_attr(file, "created", std::string(when));
  h5::set_attr(file, "host", std::string(host));
  if (!g_command_line.empty()) h5::set_attr(file, "command_line", g_command_line);
  h5::set_attr(file, "model_revision", kModelRevision);
  h5::set_attr(file, "base_config", ds.base_text);
  if (!ds.sets.empty()) h5::set_attr(file, "psa_sets", ds.sets);
  if (!ds.device_systems.empty()) h5::set_attr(file, "device_systems", ds.device_systems);
  // The limits in force (the PSA text as edited by --set): "objective <= value", exact.
  std::vector<std::string> limits;
  for (int32_t k = 0; k < ds.view->nlimits; ++k) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", ds.view->limit_max[k]);
    limits.push_back(std::string(psa::objective_name(ds.view->limit_obj[k])) + " <= " + buf);
  }
  if (!limits.empty()) h5::set_attr(file, "limits", limits);
  h5::set_attr(file, "space_name", ds.name);
}

std::string first_difference(const std::string& a, const std::string& b, const std::string& where_a,
                             const std::string& where_b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = bool(std::getline(sa, la)), hb = bool(std::getline(sb, lb));
    if (!ha && !hb) return "";
    if (!ha) la = "(end)";
    if (!hb) lb = "(end)";
    if (la != lb) {
      const auto trim = [](const std::string& x) { return x.substr(std::min(x.size(), x.find_first_not_of(' '))); };
      return "line " + std::to_string(line) + ": '" + trim(la) + "' " + where_a + ", '" + trim(lb) + "' " + where_b;
    }
  }
}

Provenance read_provenance(hid_t file) {
  Provenance p;
  if (h5::has_attr(file, "model_revision")) p.model_revision = h5::attr_int(file, "model_revision");
  if (h5::has_attr(file, "base_config")) p.base_config = h5::attr_string(file, "base_config");
  if (h5::has_attr(file, "psa_sets")) p.psa_sets = h5::attr_strings(file, "psa_sets");
  if (h5::has_attr(file, "device_systems")) p.device_systems = h5::attr_strings(file, "device_systems");
  return p;
}

psa::DesignSpace recorded_space(const std::string& psa_text, const std::string& psa_file, const Provenance& prov,
                                const std::vector<std::string>& folded) {
  YAML::Node root = YAML::Load(psa_text);
  root["base"] = YAML::Load(prov.base_config);
  // The edits applied here, before the NPU types it used are written inline (an edit of the
  // device gene would otherwise name today's files again); the base's are in the recorded base.
  psa::Sources src;
  src.config_file = psa_file;
  for (const std::string& e : psa::application_order(prov.psa_sets))
    if (e.rfind("base.", 0) != 0 && !psa::replaces_base(e)) psa::apply_set(root, e, src);
  psa::inline_devices(root, prov.device_systems);
  if (!root["name"]) root["name"] = std::filesystem::path(psa_file).stem().string();  // the default, not the temporary's
  YAML::Emitter em;
  em << root;
  std::string tmp = "/tmp/cosmic-space-XXXXXX.yaml";
  const int fd = mkstemps(tmp.data(), 5);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file");
  close(fd);
  { std::ofstream(tmp) << em.c_str() << "\n"; }
  psa::DesignSpace ds;
  try {
    ds = psa::load_psa(tmp);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  std::remove(tmp.c_str());
  ds = psa::fold_genes(ds, folded);
  ds.file = psa_file;
  ds.sets = prov.psa_sets;
  if (ds.base_text != prov.base_config)  // the inline base must read back as itself
    throw std::runtime_error("its recorded base configuration does not read back unchanged (" +
                             first_difference(ds.base_text, prov.base_config, "read back", "recorded") + ")");
  return ds;
}

namespace {
// Before a resume reads `out`: a file a kill left with its superblock short of its data is
// repaired (h5::repair_end_of_allocation), and said so.
void repair_for_resume(const std::string& out) {
  if (h5::repair_end_of_allocation(out))
    std::cerr << "cosmic: repaired " << out << ": its superblock recorded less of the file than it holds (a run killed "
                                               "while HDF5 wrote it); it is resumed from there\n";
  else if (!h5::is_being_written(out) && h5::end_short_of_file(out))
    throw std::runtime_error(out + ": the file is damaged: HDF5 cannot open it, not even with the end its superblock "
                                   "records moved to the file's end (a run killed while HDF5 wrote it); start the run again");
  h5::check_readable(out);
}
}  // namespace

psa::DesignSpace load_run_psa(const std::string& psa_file, const std::vector<std::string>& sets,
                              const std::string& out, bool resume) {
  if (!resume) return psa::load_psa(psa_file, sets);
  repair_for_resume(out);
  std::vector<std::string> recorded;
  std::string recorded_text;
  try {
    h5::Handle f = h5::open_file(out, false);
    recorded = read_provenance(f.id()).psa_sets;
    if (h5::has_attr(f.id(), "psa")) recorded_text = h5::attr_string(f.id(), "psa");
  } catch (const std::exception&) {
    return psa::load_psa(psa_file);  // the run says why it cannot resume `out`
  }
  if (recorded.empty()) return psa::load_psa(psa_file);
  const std::string text = psa::read_text(psa_file);  // "" unreadable: load_psa says why
  if (!text.empty() && text != recorded_text)
    throw std::runtime_error(out + " was written for a different PSA text than " + psa_file + "'s");
  try {
    return psa::load_psa(psa_file, recorded);
  } catch (const psa::ConfigError& e) {
    psa::load_psa(psa_file);  // an error of the PSA or its base themselves: reported as such
    throw psa::ConfigError(out + " was written with " + sets_text(recorded) + ", which --resume applies to " + psa_file +
                           " again (a relative path in them is looked up again: next to the PSA file, then from "
                           "the working directory); they fail: " + e.what());
  }
}

psa::DesignSpace file_space(hid_t f, const std::string& file) {
  for (const char* attr : {"psa", "base_config"})
    if (!h5::has_attr(f, attr))
      throw std::runtime_error(file + ": no " + attr + " attribute (not a cosmic result file, or written before it was recorded)");
  const std::vector<std::string> folded =
      h5::has_attr(f, "folded_genes") ? h5::attr_strings(f, "folded_genes") : std::vector<std::string>{};
  const std::string psa_file = h5::has_attr(f, "psa_file") ? h5::attr_string(f, "psa_file") : "psa.yaml";
  return recorded_space(h5::attr_string(f, "psa"), psa_file, read_provenance(f), folded);
}

psa::DesignSpace resumed_space(const std::string& out, const std::string& kind) {
  repair_for_resume(out);
  h5::Handle f = h5::open_file(out, false);
  if (h5::result_kind(f.id()) != kind ||
      !h5::has_attr(f.id(), "tool_version"))
    throw std::runtime_error(out + ": not a cosmic " + kind + " file");
  try {
    const std::string text = h5::has_attr(f.id(), "psa") ? h5::attr_string(f.id(), "psa") : "";
    if (text.empty() || !h5::has_attr(f.id(), "base_config"))
      throw std::runtime_error("it lacks the psa or base_config attribute (written before they were recorded)");
    const std::string psa_file = h5::has_attr(f.id(), "psa_file") ? h5::attr_string(f.id(), "psa_file") : "psa.yaml";
    psa::DesignSpace ds = recorded_space(text, psa_file, read_provenance(f.id()), {});
    ds.text = text;
    return ds;
  } catch (const std::runtime_error& e) {  // recorded_space's own messages do not name the file
    const std::string what = e.what();
    throw std::runtime_error(what.rfind(out, 0) == 0 ? what : out + ": the space it recorded: " + what);
  }
}

const char* column_units(const std::string& name) {
  static const std::pair<const char*, const char*> metrics[] = {
      {"time_s", "s"},        {"first_token_s", "s"}, {"memory_bytes", "bytes"}, {"network_cost_usd", "USD"},
      {"tokens_per_s", "tokens/s"}, {"mfu", "fraction of peak"}, {"wall_s", "s"}, {"agent_s", "s"}, {"eval_s", "s"}};
  for (const auto& [column, units] : metrics)
    if (name == column) return units;
  const auto o = psa::objective_named(name);
  return o ? psa::objective_units(*o) : nullptr;
}

std::string gene_column(const psa::DesignSpace& ds, int32_t g) {
  return size_t(g) < ds.genes.size() && !ds.genes[size_t(g)].name.empty() ? ds.genes[size_t(g)].name
                                                                          : "gene_" + std::to_string(g);
}

void write_gene_labels(hid_t file, const psa::DesignSpace& ds) {
  h5::Handle genes = h5::group(file, "genes", true);
  std::vector<std::string> names;
  for (int32_t g = 0; g < ds.view->ngenes; ++g) {
    names.push_back(gene_column(ds, g));
    std::vector<std::string> labels;
    if (size_t(g) < ds.genes.size()) labels = ds.genes[size_t(g)].labels;
    if (int32_t(labels.size()) != ds.view->gene[g].card) {
      labels.clear();
      for (int32_t v = 0; v < ds.view->gene[g].card; ++v) {
        std::ostringstream os;
        os << ds.view->values[ds.view->gene[g].offset + v];
        labels.push_back(os.str());
      }
    }
    h5::write_strings(genes.id(), names.back(), labels);
  }
  h5::set_attr(genes.id(), "gene_names", names);
  label_dimensions(file);
}

void label_dimensions(hid_t file) {
  h5::Handle genes = h5::group(file, "genes", false);
  for (const std::string& name : h5::member_names(genes.id())) h5::make_scale(genes.id(), name);
}

std::string index_space(const std::vector<std::string>& folded_genes) { return folded_genes.empty() ? "psa" : "folded"; }

void reason_codes(std::vector<int32_t>& code, std::vector<std::string>& name) {
  code.clear();
  name.clear();
  for (int32_t r = -1; r < kNumReasons; ++r) {
    code.push_back(r);
    name.push_back(names::reason_code_name(r));
  }
}

std::string sets_text(const std::vector<std::string>& sets) {
  if (sets.empty()) return "no --set";
  std::string s;
  for (const auto& x : sets) s += (s.empty() ? "--set " : ", --set ") + x;
  return s;
}

std::string revision_mismatch(const Provenance& p) {
  const std::string again = ": its results come from another model; start the run again";
  if (p.model_revision < 0)
    return "it was written by an older cosmic, which did not record its model revision (this one has " +
           std::to_string(kModelRevision) + ")" + again;
  if (p.model_revision != kModelRevision)
    return "it was written with model revision " + std::to_string(p.model_revision) + ", this cosmic has " +
           std::to_string(kModelRevision) + " (kernels/model.hpp)" + again;
  return "";
}

std::string provenance_mismatch(const Provenance& p, const psa::DesignSpace& ds) {
  if (std::string why = revision_mismatch(p); !why.empty()) return why;
  if (p.psa_sets != ds.sets)
    return "it was written with " + sets_text(p.psa_sets) + " and the PSA is loaded now with " + sets_text(ds.sets);
  if (p.base_config != ds.base_text)
    return "the PSA's base configuration (its base file or the presets it names) changed since the file was written (" +
           first_difference(ds.base_text, p.base_config, "now", "in the file") +
           "); the file's attribute base_config holds the one it used";
  for (size_t k = 0; k < p.device_systems.size() && k < ds.device_systems.size(); ++k)
    if (p.device_systems[k] != ds.device_systems[k])
      return "NPU type " + std::to_string(k) + " of its compute.device gene (the system its value names) changed since the "
             "file was written (" + first_difference(ds.device_systems[k], p.device_systems[k], "now", "in the file") +
             "); the file's attribute device_systems holds the ones it used";
  return "";
}

}  // namespace cosmic
