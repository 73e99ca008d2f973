#include "psa/config.hpp"
#include "psa/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <yaml-cpp/depthguard.h>

#include "kernels/model.hpp"
#include "psa/names.hpp"

#ifndef COSMIC_DATA_DIR
#define COSMIC_DATA_DIR "data"
#endif

namespace fs = std::filesystem;

namespace cosmic::psa {

std::string Sources::file_of(const std::string& key_path) const {
  // The longest overridden prefix wins; else the section's preset file; else the config file.
  std::string p = key_path;
  while (true) {
    auto it = override_from.find(p);
    if (it != override_from.end()) return it->second;
    auto dot = p.rfind('.');
    if (dot == std::string::npos) break;
    p.resize(dot);
  }
  auto it = section_file.find(p);
  return it != section_file.end() ? it->second : config_file;
}

std::string data_dir() {
  if (const char* env = std::getenv("COSMIC_DATA_DIR"); env && *env) return env;
  return COSMIC_DATA_DIR;
}

namespace {

[[noreturn]] void fail_at(const std::string& path, const YAML::Node& n, const std::string& key_path,
                          const std::string& what) {
  std::ostringstream os;
  os << path << ":" << n.Mark().line + 1 << ":" << n.Mark().column + 1 << ": "
     << (key_path.empty() ? "" : "key '" + key_path + "': ") << what;
  throw ConfigError(os.str());
}

// What yaml-cpp reads without a word but no cosmic file means: a tag (`!foo 8`, `!!binary 4`:
// the tag is dropped and the value read plain), and a quoted string whose closing quote is
// missing (at the end of the file, yaml-cpp 0.7-0.8 read it to there; elsewhere it runs on to the
// next quote, taking the lines between into the string). A quoted string may go on to more
// lines only if they are indented further than the line it starts on (YAML's rule for a value
// inside a mapping or list).
void check_node(const YAML::Node& n, const std::string& path, const std::string& text, const std::string& key_path) {
  const std::string& tag = n.Tag();
  const std::string core = "tag:yaml.org,2002:";  // as `!!` writes it
  if (!tag.empty() && tag != "?" && tag != "!")
    fail_at(path, n, key_path,
            "a YAML tag (" + (tag.rfind(core, 0) == 0 ? "!!" + tag.substr(core.size()) : tag) +
                ") is not read here; expected the value without it");
  const size_t at = size_t(n.Mark().pos);
  if (tag != "!" || !n.IsScalar() || n.Mark().pos < 0 || at >= text.size()) return;
  const char quote = text[at];
  if (quote != '"' && quote != '\'') return;
  size_t indent = at;
  while (indent > 0 && text[indent - 1] != '\n') --indent;
  const size_t first = indent;
  while (indent < at && text[indent] == ' ') ++indent;
  indent -= first;
  int line = n.Mark().line + 1;
  const std::string missing = std::string("a quoted string that is not closed; expected its closing ") + quote;
  for (size_t i = at + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && quote == '"') {
      ++i;
    } else if (c == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') ++i;  // '' is a quote inside
      else return;
    } else if (c == '\n') {
      ++line;
      size_t k = i + 1, spaces = 0;
      while (k < text.size() && text[k] == ' ') ++k, ++spaces;
      const bool blank = k >= text.size() || text[k] == '\n' || text[k] == '\r';
      if (!blank && spaces <= indent)
        fail_at(path, n, key_path, missing + " before line " + std::to_string(line) +
                                       " (a string goes on to the next lines only where they are indented further)");
    }
  }
  fail_at(path, n, key_path, missing + " (the file ends inside it)");
}

// yaml-cpp keeps every pair of a mapping and looks keys up by the first: a key written twice would
// be dropped without a word. Every mapping's keys must be distinct. A collection that aliases
// repeat is checked once (`seen`, by where it starts in the file: nested aliases would otherwise
// multiply the walk). Every node passes check_node.
void check_unique_keys(const YAML::Node& n, const std::string& path, const std::string& text, const std::string& key_path,
                       std::set<std::pair<int, int>>& seen) {
  check_node(n, path, text, key_path);
  if (!n.IsSequence() && !n.IsMap()) return;
  if (n.Mark().line >= 0 && !seen.insert({n.Mark().line, n.Mark().column}).second) return;
  if (n.IsSequence())
    for (size_t i = 0; i < n.size(); ++i)
      check_unique_keys(n[i], path, text, key_path + (key_path.empty() ? "" : ".") + std::to_string(i), seen);
  if (!n.IsMap()) return;
  std::map<std::string, int> first_line;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar())  // `? [a, b] : 1`, which yaml-cpp reads and no key of ours is
      fail_at(path, it->first, "",
              "a list or mapping as a key" + (key_path.empty() ? "" : " under '" + key_path + "'") + "; expected a key name");
    const std::string key = it->first.Scalar();
    const std::string kp = key_path + (key_path.empty() ? "" : ".") + key;
    check_node(it->first, path, text, kp);
    // `{ttft:0.3}`: in YAML a colon ends a key only before a space, so this is one key without a
    // value (no key of ours holds a colon).
    const size_t colon = key.find(':');
    if (colon != std::string::npos && colon + 1 < key.size() && it->second.IsNull())
      fail_at(path, it->first, "",
              "key '" + kp + "' has no value: YAML needs a space after a key's colon (write '" + key.substr(0, colon) +
                  ": " + key.substr(colon + 1) + "')");
    if (!key.empty()) {
      const auto [at, fresh] = first_line.emplace(key, it->first.Mark().line + 1);
      if (!fresh)
        fail_at(path, it->first, "",
                "key '" + kp + "' is given twice (first on line " + std::to_string(at->second) + "); expected each key once");
    }
    check_unique_keys(it->second, path, text, kp, seen);
  }
}

void check_tree(const YAML::Node& n, const std::string& path, const std::string& text) {
  std::set<std::pair<int, int>> seen;
  check_unique_keys(n, path, text, "", seen);
}

}  // namespace

std::string node_name(const YAML::Node& n) {
  return n.IsMap() && n["name"] && n["name"].IsScalar() ? n["name"].Scalar() : std::string("inline");
}

namespace {

// Throws, naming the line and column, where `text` is not UTF-8 (RFC 3629: no overlong forms,
// surrogates or code points above U+10FFFF). YAML files are read as UTF-8; other bytes would pass
// the YAML parser and break the JSON that results and `--json` are written as.
void check_utf8(const std::string& text, const std::string& path) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    const auto byte = [&](size_t k) { return k < text.size() ? uint8_t(text[k]) : uint8_t(0); };
    const uint8_t c = byte(i);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
    for (size_t k = 1; k < len; ++k) {
      if ((byte(i + k) >> 6) != 0x2) len = 0;
      cp = cp << 6 | (byte(i + k) & 0x3f);
    }
    static constexpr uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    const bool control = c == 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r');
    if (len == 0 || control || cp < kLeast[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", unsigned(c));
      throw ConfigError(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": byte " + hex +
                        (control ? " is a control character, not text" : " is not UTF-8 text (YAML files are read as UTF-8)"));
    }
    if (c == '\n') line += 1, column = 1;
    else column += 1;
    i += len;
  }
}

}  // namespace

std::string read_input(const std::string& path, const char* expected, size_t max_bytes) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw ConfigError(path + ": is a directory, expected " + expected);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open file");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > max_bytes)
      throw ConfigError(path + ": more than " + std::to_string(max_bytes >> 20) + " MiB, expected " + expected);
  }
  return text;
}

YAML::Node load_yaml_file(const std::string& path, std::string* text_out) {
  const std::string text = read_input(path, "a YAML file");
  check_utf8(text, path);
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    // A second document ("---") would be ignored: more likely a mistake than an intent. Without
    // a marker, yaml-cpp starts one where a line is indented less than the first key.
    if (docs.size() > 1) {
      const bool marked = text.rfind("---", 0) == 0 || text.find("\n---") != std::string::npos ||
                          text.rfind("...", 0) == 0 || text.find("\n...") != std::string::npos;
      throw ConfigError(path + ":" + std::to_string(docs[1].Mark().line + 1) +
                        (marked ? ": a second YAML document ('---'); a file holds one"
                                : ": indented less than the file's first key; expected the top-level keys in one column"));
    }
    YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
    check_tree(root, path, text);
    if (text_out) *text_out = text;
    return root;
  } catch (const YAML::DeepRecursion& e) {  // its message is only "bad file"
    std::ostringstream os;
    os << path << ":" << e.mark.line + 1 << ":" << e.mark.column + 1
       << ": lists and mappings nested too deeply for the YAML reader (no cosmic file nests more than a few levels)";
    throw ConfigError(os.str());
  } catch (const YAML::Exception& e) {
    std::ostringstream os;
    os << path << ":" << e.mark.line + 1 << ":" << e.mark.column + 1 << ": YAML syntax error: " << e.msg;
    // yaml-cpp's message for a tab that indents a line ("illegal map value") does not say so.
    std::istringstream lines(text);
    std::string line;
    for (int n = 0; std::getline(lines, line) && n <= e.mark.line; ++n) {
      const size_t content = line.find_first_not_of(" \t");
      if (n + 1 >= e.mark.line && content != std::string::npos && line.find('\t') < content)
        os << " (line " << n + 1 << " is indented with a tab; YAML indents with spaces)";
    }
    throw ConfigError(os.str());
  }
}

namespace {
bool is_file(const fs::path& p) {
  std::error_code ec;  // (a name too long: not found)
  return fs::is_regular_file(p, ec);
}
}  // namespace

std::string find_file(const std::string& name, const std::string& next_to) {
  for (const fs::path& p : {fs::path(next_to).parent_path() / name, fs::path(name), fs::path(data_dir()) / name})
    if (is_file(p)) return p.string();
  return "";
}

std::string find_preset(const std::string& kind, const std::string& name, const std::string& relative_to) {
  std::vector<fs::path> tries;
  if (!relative_to.empty()) tries.push_back(fs::path(relative_to).parent_path() / name);
  tries.push_back(fs::path(name));
  tries.push_back(fs::path(data_dir()) / kind / (name + ".yaml"));
  for (const auto& p : tries)
    if (is_file(p)) return p.string();
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(data_dir()) / kind, ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::string known;
  for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
  // A file of one's own named like a preset, without its .yaml: say which file was meant.
  std::string meant;
  for (size_t i = 0; i + 1 < tries.size() && meant.empty(); ++i)
    if (is_file(tries[i].string() + ".yaml")) meant = "; a file is named with its extension: " + tries[i].string() + ".yaml";
  const fs::path folder = fs::path(data_dir()) / kind;
  throw ConfigError("no " + kind.substr(0, kind.size() - 1) + " preset or file named '" + name + "' (" +
                    (fs::is_directory(folder, ec) ? "presets in " + folder.string() + ": " + known
                                                  : "no preset folder " + folder.string() +
                                                        ": set COSMIC_DATA_DIR to the data/ folder of cosmic's source") +
                    meant + ")");
}

std::string where(const Sources& src, const std::string& key_path, const YAML::Node& node) {
  std::string file = src.file_of(key_path);
  std::ostringstream os;
  os << file;
  // An edit, --set on the command line or a study's `set:` (host/study.cpp), has no line.
  if (file != src.edit_label && node.IsDefined() && node.Mark().line >= 0)
    os << ":" << node.Mark().line + 1 << ":" << node.Mark().column + 1;
  return os.str();
}

std::string node_text(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsMap()) return n.size() == 0 ? "an empty mapping" : "a mapping";
  if (n.IsSequence())
    return n.size() == 0 ? "an empty list" : "a list of " + std::to_string(n.size()) + (n.size() == 1 ? " item" : " items");
  return "nothing";
}

namespace {

// Keys that say the same thing in other units or names: writing one over a preset replaces the
// other (`--set system.compute.memory_GiB=141` on a preset that gives memory_GB; bf16 over the
// A100 preset's fp16 peak, cosmic's one 16-bit peak), unless the writer `over` gives both, which
// the reader then refuses.
// Setting `algorithm` (every collective of a dimension) drops the per-collective `algorithms`
// it was given with (a preset's all-to-all), unless the same override gives them too.
void set_replacing_alternative(YAML::Node map, const std::string& key, const YAML::Node& value,
                               const YAML::Node& over = YAML::Node()) {
  for (const auto& [a, b] : {std::pair<const char*, const char*>{"memory_GiB", "memory_GB"}, {"memory_GB", "memory_GiB"},
                             {"fp16", "bf16"}, {"bf16", "fp16"}, {"algorithm", "algorithms"}})
    if (key == a && !(over.IsMap() && over[b])) map.remove(b);
  map[key] = value;
}

// Writes `over` onto `base`, mapping by mapping, recording where each value came from; the key
// `preset` of the top mapping (the preset's name) is not merged.
void merge_into(YAML::Node base, const YAML::Node& over, const std::string& path, const std::string& label,
                Sources& src, bool top = true) {
  for (auto it = over.begin(); it != over.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (top && key == "preset") continue;
    const std::string kp = path + "." + key;
    if (it->second.IsMap() && base[key].IsMap()) {
      merge_into(base[key], it->second, kp, label, src, false);
    } else {
      set_replacing_alternative(base, key, it->second, over);
      src.override_from[kp] = label;
    }
  }
}


constexpr int64_t kBig = int64_t(1) << 40;

int32_t dtype_bytes_of(const Section& s, const char* key, int32_t def) {
  if (!s.has(key)) return def;
  const std::string t = s.text(key, "");
  if (names::iequal(t, "fp32")) return 4;
  if (names::iequal(t, "fp16") || names::iequal(t, "bf16")) return 2;
  if (names::iequal(t, "fp8")) return 1;
  s.fail(key, "one of fp32, fp16, bf16, fp8");
}

ModelSpec convert_model(const Section& s) {
  s.check_keys({"name", "description", "source", "params_billion", "active_params_billion", "layers", "hidden", "ffn", "heads", "kv_heads", "seq",
                "vocab", "mlp", "dtype", "tied_embeddings", "biases", "dropout", "experts", "top_k", "shared_experts", "head_dim",
                "first_dense_layers", "moe_layer_step", "dense_ffn", "kv_lora_rank", "q_lora_rank", "rope_head_dim",
                "v_head_dim", "expert_groups", "groups_per_token"});
  // Information only (a test compares them with the model's count), but numbers.
  for (const char* k : {"params_billion", "active_params_billion"}) s.number(k, 0, 0, 1e9);
  for (const char* k : {"layers", "hidden", "ffn", "heads", "seq", "vocab"})
    if (!s.has(k)) s.fail(k, "a positive integer (required)");
  ModelSpec m;
  m.layers = int32_t(s.integer("layers", 0, 1, 1 << 20));
  m.hidden = int32_t(s.integer("hidden", 0, 1, 1 << 24));
  m.ffn = int32_t(s.integer("ffn", 0, 1, 1 << 26));
  m.heads = int32_t(s.integer("heads", 0, 1, 1 << 16));
  m.kv_heads = int32_t(s.integer("kv_heads", m.heads, 1, m.heads));
  m.head_dim = int32_t(s.integer("head_dim", 0, 0, 1 << 16));  // 0 or absent: hidden / heads
  m.seq = int32_t(s.integer("seq", 0, 1, 1 << 26));
  m.vocab = int32_t(s.integer("vocab", 0, 1, 1 << 26));
  m.mlp = s.choice("mlp", Mlp::Gelu, names::kMlp);
  m.dtype_bytes = dtype_bytes_of(s, "dtype", 2);
  m.tied_embeddings = s.boolean("tied_embeddings", m.mlp == Mlp::Gelu);
  m.biases = s.boolean("biases", m.mlp == Mlp::Gelu);
  m.dropout = s.boolean("dropout", m.mlp == Mlp::Gelu);
  if (m.heads % m.kv_heads != 0) s.fail("kv_heads", "a divisor of heads (" + std::to_string(m.heads) + ")");
  if (m.head_dim == 0 && m.hidden % m.heads != 0)  // a head is hidden / heads wide: a whole number
    s.fail("hidden", "a multiple of heads (" + std::to_string(m.heads) + "), or head_dim given");
  // Mixture of experts: 0 experts is a dense model; top_k is read only with experts. A top_k
  // without any experts key is a mixture whose experts were left out (`experts: 0` written, as in
  // a dense variant of a mixture's preset, drops it).
  m.experts = int32_t(s.integer("experts", 0, 0, 1 << 20));
  if (m.experts == 1) s.fail("experts", "0 (a dense model) or at least 2");
  m.top_k = int32_t(s.integer("top_k", m.experts > 0 ? 2 : 1, 1, 1 << 20));
  if (s.has("top_k") && !s.has("experts"))
    s.fail("top_k", "only with experts (a mixture's number of experts; `experts: 0` for a dense model)");
  if (m.experts > 0 && m.top_k > m.experts) s.fail("top_k", "at most experts (" + std::to_string(m.experts) + ")");
  m.shared_experts = int32_t(s.integer("shared_experts", 0, 0, 1 << 20));
  if (m.shared_experts > 0 && m.experts == 0) s.fail("shared_experts", "0 in a dense model (experts: 0)");
  // Group-limited routing (kernels/model.hpp node_dedup_scale).
  m.expert_groups = int32_t(s.integer("expert_groups", 0, 1, 1 << 20));
  m.groups_per_token = int32_t(s.integer("groups_per_token", 0, 1, 1 << 20));
  for (const char* k : {"expert_groups", "groups_per_token"})
    if (s.has(k) && m.experts == 0) s.fail(k, "absent in a dense model (experts: 0): it limits a token's experts to groups");
  if (s.has("expert_groups") != s.has("groups_per_token"))
    s.fail(s.has("expert_groups") ? "expert_groups" : "groups_per_token",
           "given with " + std::string(s.has("expert_groups") ? "groups_per_token" : "expert_groups") +
               " (group-limited routing takes both)");
  if (m.expert_groups > 0 && m.experts % m.expert_groups != 0)
    s.fail("expert_groups", "a divisor of experts (" + std::to_string(m.experts) + ")");
  if (m.groups_per_token > m.expert_groups) s.fail("groups_per_token", "at most expert_groups (" + std::to_string(m.expert_groups) + ")");
  if (m.expert_groups > 0 && m.top_k > int64_t(m.groups_per_token) * (m.experts / m.expert_groups))
    s.fail("groups_per_token", "enough groups for top_k (" + std::to_string(m.top_k) + ") experts: " +
                                   std::to_string(m.groups_per_token) + " groups of " +
                                   std::to_string(m.experts / m.expert_groups) + " hold fewer");
  // Dense layers among the expert layers (kernels/model.hpp has_dense_layers).
  m.first_dense_layers = int32_t(s.integer("first_dense_layers", 0, 0, m.layers - 1));
  m.moe_layer_step = int32_t(s.integer("moe_layer_step", 1, 1, m.layers));
  m.dense_ffn = int32_t(s.integer("dense_ffn", 0, 0, 1 << 26));  // 0: ffn
  for (const char* k : {"first_dense_layers", "moe_layer_step", "dense_ffn"})
    if (s.has(k) && m.experts == 0) s.fail(k, "absent in a dense model (experts: 0): it places a mixture's dense layers");
  if (m.experts > 0 && moe_layers_below(m, m.layers) < 1)
    s.fail("moe_layer_step", "a step that leaves an expert layer after the first_dense_layers (" +
                                 std::to_string(m.first_dense_layers) + ") of " + std::to_string(m.layers));
  if (m.dense_ffn > 0 && !has_dense_layers(m))
    s.fail("dense_ffn", "absent where every layer holds experts (first_dense_layers or moe_layer_step places dense layers)");
  // Multi-head latent attention (kernels/model.hpp mla).
  m.kv_lora_rank = int32_t(s.integer("kv_lora_rank", 0, 0, 1 << 20));
  m.q_lora_rank = int32_t(s.integer("q_lora_rank", 0, 0, 1 << 20));
  m.rope_head_dim = int32_t(s.integer("rope_head_dim", 0, 0, 1 << 16));
  m.v_head_dim = int32_t(s.integer("v_head_dim", 0, 0, 1 << 16));
  for (const char* k : {"q_lora_rank", "rope_head_dim", "v_head_dim"})
    if (s.has(k) && m.kv_lora_rank == 0) s.fail(k, "absent without kv_lora_rank (multi-head latent attention)");
  if (m.kv_lora_rank > 0 && m.kv_heads != m.heads)
    s.fail("kv_heads", "heads (" + std::to_string(m.heads) + ") with kv_lora_rank: in multi-head latent attention every "
                       "head has its own keys and values");
  if (m.kv_lora_rank > 0 && m.biases) s.fail("biases", "false with kv_lora_rank (multi-head latent attention has none here)");
  return m;
}

// workload.recompute_modules: what selective recompute drops, a list of names (or one, or names
// joined by commas, as --set gives them), read with recompute selective only.
uint8_t recompute_modules_of(const Section& s, Recompute recompute, const ModelSpec& model) {
  const char* key = "recompute_modules";
  if (recompute != Recompute::Selective)
    s.fail_against(key, "recompute", "absent unless recompute is selective", "null");
  const std::string expected = "a list of " + names::choices(names::kRecomputeModule);
  const YAML::Node n = s.raw(key);
  // Each name with the node it came from: a list's entry (named in an error), or the scalar
  // holding names joined by commas.
  std::vector<std::pair<std::string, YAML::Node>> words;
  if (n.IsSequence())
    for (const auto& x : n) words.emplace_back(x.IsScalar() ? x.Scalar() : "", x);
  else if (n.IsScalar())
    for (size_t at = 0, comma; at <= n.Scalar().size(); at = comma + 1) {
      comma = std::min(n.Scalar().find(',', at), n.Scalar().size());
      words.emplace_back(n.Scalar().substr(at, comma - at), n);
    }
  uint8_t bits = 0;
  size_t item = 0;
  for (const auto& [word, node] : words) {
    const auto v = names::parse(names::kRecomputeModule, trim(word));
    if (!v && n.IsSequence())
      s.fail_node(node, s.key_path(key) + "." + std::to_string(item), "one of " + names::choices(names::kRecomputeModule));
    if (!v) s.fail(key, expected);
    ++item;
    bits |= *v;
  }
  if (bits == 0) s.fail(key, expected);
  if ((bits & kRecomputeMlaUpProj) && model.kv_lora_rank == 0)
    s.fail(key, "no mla_up_proj in a model without multi-head latent attention (kv_lora_rank: 0)");
  return bits;
}

Workload convert_workload(const Section& s, ModelSpec& model) {
  s.check_keys({"mode", "global_batch", "micro_batch", "dp", "tp", "pp", "cp", "cp_style", "sequence_parallel", "schedule", "vpp",
                "uneven_stages", "ep", "etp", "ep_dispatch", "overlap_ep_comm", "ep_comm_sm_share", "fp8_dispatch", "sharding", "recompute", "recompute_layers", "recompute_modules", "fp8_cache", "flash_attention", "prompt_tokens", "kv_len", "output_tokens", "precision"});
  Workload w;
  w.mode = s.choice("mode", Mode::Training, names::kMode);
  w.global_batch = s.integer("global_batch", 1, 1, kBig);
  w.micro_batch = int32_t(s.integer("micro_batch", 1, 1, 1 << 24));
  w.dp = int32_t(s.integer("dp", 1, 1, 1 << 24));
  w.tp = int32_t(s.integer("tp", 1, 1, 1 << 24));
  w.pp = int32_t(s.integer("pp", 1, 1, 1 << 24));
  w.cp = int32_t(s.integer("cp", 1, 1, 1 << 24));
  w.cp_style = s.choice("cp_style", CpStyle::AllGather, names::kCpStyle);
  w.seq_parallel = s.boolean("sequence_parallel", false);
  w.schedule = s.choice("schedule", Schedule::OneF1B, names::kSchedule);
  w.vpp = int32_t(s.integer("vpp", 1, 1, 1 << 16));
  if (w.vpp > 1 && w.schedule != Schedule::Interleaved) s.fail_against("vpp", "schedule", "1 unless schedule is interleaved", "1");
  w.uneven_stages = s.boolean("uneven_stages", false);
  w.ep = int32_t(s.integer("ep", 1, 1, 1 << 24));
  w.etp = int32_t(s.integer("etp", 0, 0, 1 << 24));  // 0: not folded
  w.ep_dispatch = s.choice("ep_dispatch", EpDispatch::AllToAll, names::kEpDispatch);
  w.overlap_ep_comm = s.boolean("overlap_ep_comm", false);
  if (w.overlap_ep_comm && model.experts == 0) s.fail("overlap_ep_comm", "false in a dense model (experts: 0): it has no all-to-alls");
  w.ep_comm_sm_share = s.number("ep_comm_sm_share", 0, 0, 0.99);
  if (w.ep_comm_sm_share > 0 && !w.overlap_ep_comm)
    s.fail_against("ep_comm_sm_share", "overlap_ep_comm", "0 unless overlap_ep_comm is true", "0");
  w.sharding = s.choice("sharding", Sharding::None, names::kSharding);
  w.recompute = s.choice("recompute", Recompute::None, names::kRecompute);
  w.recompute_layers = int32_t(s.integer("recompute_layers", 0, 0, 1 << 24));  // 0: every layer
  if (w.recompute_layers > 0 && w.recompute != Recompute::Full)
    s.fail_against("recompute_layers", "recompute", "0 unless recompute is full", "0");
  if (s.has("recompute_modules")) w.recompute_modules = recompute_modules_of(s, w.recompute, model);
  w.flash_attention = s.boolean("flash_attention", true);
  w.prompt_tokens = int32_t(s.has("prompt_tokens") ? s.integer("prompt_tokens", 0, 1, 1 << 26) : 0);  // 0: the model's seq
  w.kv_len = int32_t(s.integer("kv_len", 0, 0, 1 << 26));
  w.output_tokens = int32_t(s.integer("output_tokens", 0, 0, 1 << 26));
  if (w.mode == Mode::Decode && w.kv_len < 1) s.fail("kv_len", "a positive integer in decode mode");
  if ((w.mode == Mode::Generate || w.mode == Mode::Serve) && w.output_tokens < 1)
    s.fail("output_tokens", std::string("a positive integer in ") + names::name(names::kMode, w.mode) + " mode");
  model.dtype_bytes = dtype_bytes_of(s, "precision", model.dtype_bytes);
  w.fp8_cache = s.boolean("fp8_cache", false);
  w.fp8_dispatch = s.boolean("fp8_dispatch", false);
  if (w.fp8_dispatch && model.experts == 0) s.fail("fp8_dispatch", "false in a dense model (experts: 0): it has no dispatches");
  for (const auto& [key, on] : {std::pair{"fp8_cache", w.fp8_cache}, {"fp8_dispatch", w.fp8_dispatch}})
    if (on && model.dtype_bytes != 1) s.fail_against(key, "precision", "false unless precision is fp8", "false");
  return w;
}

void convert_algorithms(const Section& d, NetDim& dim) {
  if (d.has("algorithm")) {
    const Algo a = d.choice("algorithm", Algo::Ring, names::kAlgo);
    for (auto& x : dim.algo) x = a;
  }
  if (d.has("algorithms")) {
    const Section a = d.sub("algorithms");
    a.check_keys({"all_reduce", "all_gather", "reduce_scatter", "all_to_all"});
    for (const auto& c : names::kColl) dim.algo[int(c.value)] = a.choice(c.name, dim.algo[int(c.value)], names::kAlgo);
  }
}

void convert_network(const Section& s, Network& net) {
  s.check_keys({"convention", "links_per_npu", "congestion_aware", "chunks", "policy", "multidim", "active_chunks", "endpoint_delay_ns",
                "placement", "prices", "dims"});
  net.convention = s.choice("convention", Convention::Physical, names::kConvention);
  net.links_per_npu = s.choice("links_per_npu", LinkCount::Study, names::kLinkCount);
  net.congestion_aware = s.boolean("congestion_aware", true);
  net.chunks = int32_t(s.integer("chunks", 4, 1, 1 << 20));
  net.policy = s.choice("policy", Policy::LIFO, names::kPolicy);
  net.multidim = s.choice("multidim", MultiDim::BWAware, names::kMultiDim);
  net.active_chunks = int32_t(s.integer("active_chunks", 1, 1, 1 << 20));
  net.endpoint_delay_ns = s.number("endpoint_delay_ns", 10, 0, 1e12);
  if (s.has("placement")) {
    const YAML::Node p = s.raw("placement");
    const std::string kp = s.key_path("placement");
    const std::string expected = "a list of tp, cp, dp, pp in some order, innermost first";
    if (!p.IsSequence() || p.size() != kNumGroups) s.fail_node(p, kp, expected);
    bool seen[kNumGroups] = {};
    for (size_t i = 0; i < p.size(); ++i) {
      const Group g = s.choice_node(p[i], kp + "." + std::to_string(i), names::kGroup);
      if (seen[int(g)]) s.fail_node(p, kp, expected);
      seen[int(g)] = true;
      net.order[i] = g;
    }
  }
  if (s.has("prices")) {  // dollars per GB/s of per-link bandwidth, by tier; unset: LIBRA's
    const Section p = s.sub("prices");
    const char* const* tiers = names::kTier;
    p.check_keys({tiers[0], tiers[1], tiers[2], tiers[3]});
    for (int t = 0; t < kNumTiers; ++t) {
      if (!p.has(tiers[t])) continue;
      const Section q = p.sub(tiers[t]);
      q.check_keys({"link", "switch", "nic"});
      TierPrice& price = net.price[t];
      price.link_usd_per_GBps = q.number("link", price.link_usd_per_GBps, 0, 1e12);
      price.switch_usd_per_GBps = q.number("switch", price.switch_usd_per_GBps, 0, 1e12);
      price.nic_usd_per_GBps = q.number("nic", price.nic_usd_per_GBps, 0, 1e12);
    }
  }
  const YAML::Node dims = s.raw("dims");
  if (!dims.IsSequence() || dims.size() < 1 || dims.size() > size_t(kMaxDims))
    s.fail_node(dims, s.key_path("dims"), "a list of 1 to " + std::to_string(kMaxDims) + " dimensions");
  net.ndims = int32_t(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const Section d(dims[i], s.key_path("dims") + "." + std::to_string(i), s.sources());
    d.check_keys({"topology", "npus", "bandwidth_GBps", "latency_ns", "algorithm", "algorithms", "name"});
    NetDim& dim = net.dim[i];
    if (!d.has("topology")) d.fail("topology", "one of " + names::choices(names::kTopology) + " (required)");
    dim.topology = d.choice("topology", Topology::Ring, names::kTopology);
    if (!d.has("npus")) d.fail("npus", "a positive integer (required)");
    dim.npus = int32_t(d.integer("npus", 1, 1, 1 << 24));
    if (!d.has("bandwidth_GBps")) d.fail("bandwidth_GBps", "a positive number: per-link bandwidth, GB/s (required)");
    // Down to 1e-20 GB/s a link: a design space's per-NPU bandwidth (at least 1e-9) over up to
    // 2^31 links, which `cosmic show --config` writes per link, reads back.
    dim.link_bw_GBps = d.number("bandwidth_GBps", 0, 1e-20, 1e12);
    dim.latency_ns = d.number("latency_ns", 0, 0, 1e15);
    convert_algorithms(d, dim);
  }
  if (total_npus(net) > kMaxNpus)
    s.fail_node(dims, s.key_path("dims"), "dimensions of at most " + std::to_string(kMaxNpus) + " NPUs in all");
}

void convert_compute(const Section& s, Compute& c) {
  s.check_keys({"peak_tflops", "memory_bw_GBps", "memory_GiB", "memory_GB", "price_usd", "power_W"});
  if (!s.has("peak_tflops")) s.fail("peak_tflops", "a number or a mapping {fp32, fp16, bf16, fp8} (required)");
  if (s.raw("peak_tflops").IsScalar()) {
    c.peak_tflops[1] = s.number("peak_tflops", 0, 1e-12, 1e12);
  } else {
    if (!s.raw("peak_tflops").IsMap()) s.fail("peak_tflops", "a number or a mapping {fp32, fp16, bf16, fp8}");
    const Section p = s.sub("peak_tflops");
    p.check_keys({"fp32", "fp16", "bf16", "fp8"});
    // A precision left out has no peak (0); one given has a positive one.
    c.peak_tflops[0] = p.number("fp32", 0, 1e-12, 1e12);
    c.peak_tflops[1] = p.number("bf16", p.number("fp16", 0, 1e-12, 1e12), 1e-12, 1e12);
    if (p.has("fp16") && p.has("bf16") && p.number("fp16", 0, 1e-12, 1e12) != c.peak_tflops[1])
      p.fail("fp16", "the bf16 peak: cosmic has one 16-bit peak (give one of them)");
    c.peak_tflops[2] = p.number("fp8", 0, 1e-12, 1e12);
  }
  if (!s.has("memory_bw_GBps")) s.fail("memory_bw_GBps", "a positive number (required)");
  c.mem_bw_GBps = s.number("memory_bw_GBps", 0, 1e-9, 1e12);
  if (s.has("memory_GiB") == s.has("memory_GB")) s.fail("memory_GiB", "exactly one of memory_GiB or memory_GB");
  c.mem_capacity_bytes = s.has("memory_GiB") ? s.number("memory_GiB", 0, 1e-9, 1e12) * 1073741824.0
                                             : s.number("memory_GB", 0, 1e-9, 1e12) * 1e9;
  c.price_usd = s.number("price_usd", 0, 1e-9, 1e12);  // a price, if given (0 would read as none)
  c.power_W = s.number("power_W", 0, 1e-9, 1e9);       // likewise a draw
}

void convert_operation(const Section& s, Operation& o) {
  s.check_keys({"pue", "usd_per_kWh", "lifetime_years"});
  o.pue = s.number("pue", o.pue, 1, 10);
  o.usd_per_kWh = s.number("usd_per_kWh", 0, 1e-9, 1e6);
  o.lifetime_years = s.number("lifetime_years", 0, 1e-6, 1e3);
}

void convert_calibration(const Section& s, Calibration& k) {
  s.check_keys({"gemm_eff_max", "gemm_half_flops", "attn_eff", "fp8_eff", "mem_eff", "net_eff", "layer_overhead_s", "tp_overlap",
                "cp_overlap", "ep_overlap", "dp_overlap", "grad_bytes", "master_bytes", "optimizer_bytes_per_param"});
  k.gemm_eff_max = s.number("gemm_eff_max", k.gemm_eff_max, 1e-6, 1);
  k.gemm_half_flops = s.number("gemm_half_flops", k.gemm_half_flops, 0, 1e18);
  k.attn_eff = s.number("attn_eff", k.attn_eff, 1e-6, 10);
  k.fp8_eff = s.number("fp8_eff", k.fp8_eff, 1e-6, 10);
  k.mem_eff = s.number("mem_eff", k.mem_eff, 1e-6, 1);
  k.net_eff = s.number("net_eff", k.net_eff, 1e-6, 1);
  k.layer_overhead_s = s.number("layer_overhead_s", k.layer_overhead_s, 0, 1);
  k.tp_overlap = s.number("tp_overlap", k.tp_overlap, 0, 1);
  k.cp_overlap = s.number("cp_overlap", k.cp_overlap, 0, 1);
  k.ep_overlap = s.number("ep_overlap", k.ep_overlap, 0, 1);
  k.dp_overlap = s.number("dp_overlap", k.dp_overlap, 0, 1);
  k.grad_bytes = s.number("grad_bytes", k.grad_bytes, 1, 16);  // a gradient has at least a byte (0 would drop its sync)
  k.master_bytes = s.number("master_bytes", k.master_bytes, 0, 64);
  k.optimizer_bytes_per_param = s.number("optimizer_bytes_per_param", k.optimizer_bytes_per_param, 0, 1024);
}

// Expands `model:` / `system:` given as a preset name, a path, or a mapping with `preset:`.
void resolve_section(YAML::Node root, const char* key, const char* kind, Sources& src) {
  YAML::Node n = root[key];
  if (!n.IsDefined() || n.IsNull()) {  // a key without a value has a line; a missing one none
    std::string at = src.config_file;
    for (auto it = root.begin(); n.IsDefined() && it != root.end(); ++it)
      if (it->first.Scalar() == key) at = where(src, key, it->first);
    const bool removed = !n.IsDefined() && src.override_from.count(key);  // by --set KEY=null
    throw ConfigError((removed ? src.override_from.at(key) : at) + ": key '" + key +
                      "': expected a preset name, a file or a mapping (required" +
                      (n.IsDefined() ? ", got nothing)"
                       : removed     ? "; --set " + src.set_prefix + key + "=null removed it)"
                                     : (src.config_file.rfind("--set", 0) == 0 ? "; the mapping has no '" : "; the file has no '") +
                                           std::string(key) + ":')"));
  }
  std::string preset, preset_key = key;  // preset_key: where the name was written, for errors
  YAML::Node overrides;
  if (n.IsScalar()) {
    preset = n.Scalar();
  } else if (n.IsMap() && n["preset"].IsDefined()) {
    preset_key += ".preset";
    const YAML::Node p = n["preset"];
    if (!p.IsScalar())
      throw ConfigError(where(src, std::string(key) + ".preset", p) + ": key '" + key +
                        ".preset': expected a preset name or a file, got " + node_text(p));
    preset = p.Scalar();
    overrides = n;  // not a clone: a clone's nodes lose their place in the file, which errors name
  }
  const std::string written_in = src.file_of(key);  // where the overrides are, before the preset's file is known
  if (preset.empty()) {
    src.section_file[key] = written_in;
    return;
  }
  std::string file;
  try {
    file = find_preset(kind, preset, src.config_file);
  } catch (const ConfigError& e) {
    throw ConfigError(where(src, preset_key, n.IsMap() ? n["preset"] : n) + ": key '" + preset_key + "': " + e.what());
  }
  YAML::Node base = load_yaml_file(file);
  if (!base.IsMap()) throw ConfigError(file + ": expected a mapping at the top level");
  src.section_file[key] = file;
  if (overrides.IsMap()) merge_into(base, overrides, key, written_in, src);
  root[key] = base;
}

}  // namespace

// A system may be parameterised by `nodes`: dimensions whose npus is the word `nodes` take it.
// A `nodes` the user wrote that no dimension takes is an error (it would change nothing).
void expand_nodes(YAML::Node system, const Sources& src) {
  // (no dimensions, or not a list of them: convert_network says what they must be)
  if (!system.IsMap() || !system["network"].IsMap() || !system["network"]["dims"].IsSequence() ||
      system["network"]["dims"].size() == 0)
    return;
  YAML::Node dims = system["network"]["dims"];
  if (system["nodes"].IsDefined()) {  // it is removed below
    const Section sys(system, "system", src);
    if (system["nodes"].IsNull()) sys.fail("nodes", "an integer in [1, 16777216]");  // integer() reads null as absent
    sys.integer("nodes", 1, 1, 1 << 24);
  }
  bool used = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i].IsMap()) return;  // convert_network says what a dimension must be
    YAML::Node npus = dims[i]["npus"];
    if (npus.IsScalar() && npus.Scalar() == "nodes") {
      const std::string kp = "system.network.dims." + std::to_string(i) + ".npus";
      if (!system["nodes"].IsDefined())
        throw ConfigError(where(src, kp, npus) + ": key '" + kp + "' is 'nodes' but the system sets no 'nodes'");
      dims[i]["npus"] = system["nodes"];  // its place in the file kept, for errors in it
      used = true;
    }
  }
  // A DGX preset's own default `nodes` stays harmless where the user gave a dimension's npus (or
  // the dimensions); a system file whose own dimensions do not use its `nodes` is in error.
  const std::string from = src.file_of("system.nodes");
  const auto preset = src.section_file.find("system");
  bool user_npus = false;
  for (size_t i = 0; i < dims.size(); ++i) user_npus = user_npus || src.file_of("system.network.dims." + std::to_string(i) + ".npus") != from;
  const bool presets_own = preset != src.section_file.end() && from == preset->second && from != src.config_file && user_npus;
  if (system["nodes"].IsDefined() && !used && !presets_own) {
    // A --set of a dimension's npus replaces its `npus: nodes`: say so, the file is not at fault.
    std::string replaced;
    for (size_t i = 0; i < dims.size(); ++i) {
      const std::string kp = "system.network.dims." + std::to_string(i) + ".npus";
      if (src.file_of(kp) == "--set") replaced += (replaced.empty() ? "" : ", ") + kp;
    }
    throw ConfigError(where(src, "system.nodes", system["nodes"]) +
                      ": key 'system.nodes': no network dimension of this system has 'npus: nodes'" +
                      (replaced.empty() ? ", so it would change nothing (set the dimensions' npus instead)"
                                        : " any more (--set gave " + replaced + " a number), so it would change "
                                          "nothing: set system.nodes instead of the nodes dimension's npus, or remove "
                                          "nodes"));
  }
  // Done with: the resolved tree (a result file's base_config) reads back as a configuration
  // without it, its dimensions' npus written out.
  if (system["nodes"].IsDefined()) system.remove("nodes");
}


// A configuration's top-level keys, checked before its model and system are looked for (a
// misspelt `modle:` is named as unknown, not reported as a missing `model:`).
void check_top_keys(const YAML::Node& root, const Sources& sources) {
  if (!root.IsMap()) throw ConfigError(sources.config_file + ": expected a mapping at the top level");
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string k = it->first.as<std::string>();
    if (k != "model" && k != "system" && k != "workload" && k != "name" && k != "description")
      throw ConfigError(where(sources, k, it->first) + ": unknown key '" + k +
                        "' (expected one of: name, description, model, system, workload)");
    if ((k == "name" || k == "description") && !it->second.IsScalar())
      throw ConfigError(where(sources, k, it->second) + ": key '" + k + "': expected a string, got " + node_text(it->second));
  }
}

void resolve_presets(YAML::Node root, Sources& sources) {
  check_top_keys(root, sources);
  resolve_section(root, "model", "models", sources);
  resolve_section(root, "system", "systems", sources);
}

std::string trim(std::string text) {
  text.erase(text.find_last_not_of(" \t") + 1);
  return text.erase(0, text.find_first_not_of(" \t"));
}

namespace {
// A --set edit as it applies: `KEY=VALUE`, each trimmed (`workload.dp = 4`, `model = NAME`).
std::string set_text(const std::string& set) {
  const size_t eq = set.find('=');
  return eq == std::string::npos ? set : trim(set.substr(0, eq)) + "=" + trim(set.substr(eq + 1));
}
}  // namespace

void apply_set(YAML::Node root, const std::string& assignment, Sources& sources) {
  const auto eq = assignment.find('=');
  check_utf8(assignment, "--set " + assignment.substr(0, eq));
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set " + assignment + ": expected key.path=value, e.g. workload.dp=16");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("--set " + assignment + ": value is not valid YAML: " + e.msg);
  }
  // KEY=null (or ~) removes KEY: a searched parameter the file has, say; an empty value is a slip.
  const bool remove = assignment.substr(eq + 1) == "null" || assignment.substr(eq + 1) == "~";
  if (value.IsNull() && !remove)
    throw ConfigError("--set " + assignment + ": expected a value after '=' (KEY=null removes KEY)");
  check_tree(value, "--set " + assignment, assignment.substr(eq + 1));
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  // Every name in the path written out, and indices as the file's keys write them (`npus.1`).
  if (path.back() == '.' || std::find(parts.begin(), parts.end(), "") != parts.end())
    throw ConfigError("--set " + assignment + ": the key path '" + path + "' has an empty name (a dot at an end, or two)");
  for (const std::string& p : parts)
    if (p.size() > 1 && p[0] == '0' && p.find_first_not_of("0123456789") == std::string::npos)
      throw ConfigError("--set " + assignment + ": '" + p + "' in the key path: an index is written without leading zeros");
  // Walk with explicit node references (yaml-cpp nodes are handles; assignment rebinds).
  std::vector<YAML::Node> chain{root};
  std::string prefix;
  // A path through a value (workload.dp.x): yaml-cpp would throw "operator[] call on a scalar".
  const auto not_a_value = [&](const YAML::Node& n, const std::string& key) {
    if (n.IsScalar())
      throw ConfigError("--set " + assignment + ": '" + prefix + "' is a value ('" + n.Scalar() + "', at " +
                        where(sources, prefix, n) + "), not a mapping with a key '" + key + "'");
  };
  // A PSA names one dimension of a parameter as one key, `npus.1`: in a mapping, NAME then a
  // number are joined into that key where the mapping has it, or has no NAME.
  const auto is_index = [](const std::string& part) {
    return !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
  };
  const auto join_dimension = [&](const YAML::Node& cur, size_t i) {
    if (parts[0] != "parameters" || i != 2) return;  // a parameter's name: parameters.STACK.NAME
    if (i + 1 >= parts.size() || !cur.IsMap() || !is_index(parts[i + 1])) return;
    const std::string joined = parts[i] + "." + parts[i + 1];
    if (cur[joined].IsDefined() || !cur[parts[i]].IsDefined()) {
      parts[i] = joined;
      parts.erase(parts.begin() + ptrdiff_t(i) + 1);
    }
  };
  // The index `part` names in the list at `list_path`, or an error that says what is there.
  const auto index_in = [&](const YAML::Node& list, const std::string& part, const std::string& list_path) {
    size_t idx = list.size();
    if (is_index(part) && part.size() < 10) idx = std::stoul(part);
    if (idx >= list.size())
      throw ConfigError("--set " + assignment + ": '" + list_path + "' is a list of " + std::to_string(list.size()) +
                        " values, and '" + part + "' is not one of its indices; --set " + list_path +
                        "=[...] replaces the whole list");
    return idx;
  };
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    join_dimension(static_cast<const YAML::Node&>(cur), i);
    if (i + 1 == parts.size()) break;
    const std::string& p = parts[i];
    not_a_value(cur, p);
    const std::string at = prefix;
    prefix += (i ? "." : "") + p;
    YAML::Node next;
    if (cur.IsSequence()) {
      next = cur[index_in(cur, p, at)];
    } else {
      next = cur[p];
    }
    const bool made = !next.IsDefined() || next.IsNull();
    if (made && is_index(parts[i + 1]))  // no mapping has numbered keys
      throw ConfigError("--set " + assignment + ": there is no list '" + prefix + "' to index; --set " + prefix +
                        "=[...] gives the whole list");
    if (made) {  // a mapping --set makes: errors in it name --set
      cur[p] = YAML::Node(YAML::NodeType::Map);
      next = cur[p];
      sources.override_from[prefix] = "--set";
    }
    // A model or system section that names its preset alone (`system: dgx-h100`) reads as
    // {preset: dgx-h100} when a key below it is set (presets not expanded yet: a PSA's inline
    // base, a study's). X.preset=NAME swaps the preset and keeps X's other keys; a section
    // written out in full has no preset to swap.
    if ((p == "model" || p == "system") && !cur.IsSequence()) {
      if (next.IsScalar()) {
        YAML::Node m(YAML::NodeType::Map);
        m["preset"] = next.Scalar();
        cur[p] = m;
        next = cur[p];
      } else if (!made && i + 2 == parts.size() && parts.back() == "preset" && next.IsMap() &&
                 !next["preset"].IsDefined()) {
        throw ConfigError("--set " + assignment + ": '" + prefix + "' (at " + where(sources, prefix, next) +
                          ") names no preset to swap: it is written out in full; --set " + prefix +
                          "=NAME replaces it with a preset");
      }
    }
    chain.push_back(next);
  }
  YAML::Node parent = chain.back();
  const std::string& last = parts.back();
  not_a_value(parent, last);
  if (remove) {
    if (parent.IsSequence())
      throw ConfigError("--set " + assignment + ": '" + prefix + "' is a list, whose items are not removed one by one; --set " +
                        prefix + "=[...] replaces the whole list");
    if (!parent.IsMap() || !static_cast<const YAML::Node&>(parent)[last].IsDefined())
      throw ConfigError("--set " + assignment + ": there is no key '" + path + "' to remove");
    parent.remove(last);
  } else if (parent.IsSequence()) {
    parent[index_in(parent, last, prefix)] = value;
    // A parameter's bare list of values is read as its `values`: errors name values.N.
    if (parts.size() == 4 && parts[0] == "parameters") sources.override_from[prefix + ".values." + last] = "--set";
  } else {
    set_replacing_alternative(parent, last, value);
  }
  sources.override_from[path] = "--set";
}

bool replaces_base(const std::string& set) { return set.rfind("base=", 0) == 0; }

bool picks_preset(const std::string& set) {
  const std::string s = set.rfind("base.", 0) == 0 ? set.substr(5) : set;
  for (const char* key : {"model=", "system=", "model.preset=", "system.preset="})
    if (s.rfind(key, 0) == 0) return true;
  return false;
}

std::vector<std::string> application_order(const std::vector<std::string>& given) {
  std::vector<std::string> sets, out;
  for (const auto& s : given) sets.push_back(set_text(s));
  for (const auto& s : sets)
    if (replaces_base(s)) out.push_back(s);
  for (const auto& s : sets)
    if (!replaces_base(s) && picks_preset(s)) out.push_back(s);
  for (const auto& s : sets)
    if (!replaces_base(s) && !picks_preset(s)) out.push_back(s);
  return out;
}

std::string read_text(const std::string& path) {
  try {
    return read_input(path, "a text file");
  } catch (const ConfigError&) {  // unreadable: "", as documented
    return "";
  }
}

Config convert_config(const YAML::Node& root, const Sources& sources) {
  const Section top(root, "", sources);
  Config c;
  check_top_keys(root, sources);
  const Section model(root["model"], "model", sources);
  c.model = convert_model(model);
  const Section sys(root["system"], "system", sources);
  sys.check_keys({"name", "description", "source", "nodes", "compute", "network", "calibration", "operation"});
  if (sys.has("nodes")) sys.integer("nodes", 1, 1, 1 << 24);
  if (!sys.has("compute")) sys.fail("compute", "a mapping (required)");
  if (!sys.has("network")) sys.fail("network", "a mapping (required)");
  convert_compute(sys.sub("compute"), c.compute);
  convert_network(sys.sub("network"), c.net);
  const Section cal = sys.sub("calibration");
  convert_calibration(cal, c.cal);
  convert_operation(sys.sub("operation"), c.op);
  if (!top.has("workload")) top.fail("workload", "a mapping (required; {} takes every default)");
  const Section work(root["workload"], "workload", sources);
  c.work = convert_workload(work, c.model);
  // fp32 training keeps fp32 gradients and no separate master copy (the weights are fp32): 4 and
  // 8 bytes per parameter unless the calibration says otherwise (the defaults are mixed precision's).
  if (c.model.dtype_bytes == 4) {
    if (!cal.has("grad_bytes")) c.cal.grad_bytes = 4;
    if (!cal.has("master_bytes")) c.cal.master_bytes = 8;
  }
  // A precision the system has no peak for: the error is the key that chose the precision
  // (workload.precision, else model.dtype), else the system's peaks (the default, bf16).
  if (c.compute.peak_tflops[peak_index(c.model.dtype_bytes)] <= 0) {
    const char* name = c.model.dtype_bytes == 1 ? "fp8" : c.model.dtype_bytes == 2 ? "16-bit (bf16 / fp16)" : "fp32";
    const Section compute = sys.sub("compute");
    const std::string peaks = where(sources, "system.compute.peak_tflops", compute.raw("peak_tflops"));
    const std::string why = std::string("a precision the system has a peak for: system.compute.peak_tflops (") + peaks +
                            ") gives no " + name + " peak";
    if (work.has("precision")) work.fail("precision", why);
    if (model.has("dtype")) model.fail("dtype", why);
    compute.fail("peak_tflops", std::string("a ") + name + " peak, for the model's precision (bf16 unless set)");
  }
  return c;
}

LoadedConfig load_config(const std::string& path, const std::vector<std::string>& given, const std::string& set_prefix) {
  const std::vector<std::string> sets = application_order(given);  // (trimmed, as apply_set takes them)
  LoadedConfig out;
  out.sources.config_file = path;
  out.sources.set_prefix = set_prefix;
  YAML::Node root = load_yaml_file(path);
  if (!root.IsMap()) throw ConfigError(path + ": expected a mapping with model, system and workload");
  try {
    // --set model=NAME / system=NAME (or model.preset=NAME / system.preset=NAME, keeping the
    // file's other keys of it, such as nodes) names another preset or file: applied before
    // presets are resolved, so that it is read as if the file named it (and errors in it name its
    // file).
    for (const auto& s : sets)
      if (picks_preset(s)) apply_set(root, s, out.sources);
    resolve_presets(root, out.sources);
    for (const auto& s : sets)
      if (picks_preset(s)) out.sources.override_from.erase(s.substr(0, s.find('=')));
    for (const auto& s : sets)
      if (!picks_preset(s)) apply_set(root, s, out.sources);
    expand_nodes(root["system"], out.sources);
    out.config = convert_config(root, out.sources);
    out.model_name = node_name(root["model"]);
    out.system_name = node_name(root["system"]);
  } catch (const YAML::Exception& e) {
    // A shape the checks above did not foresee (a mapping where a scalar belongs, a subscript
    // into a scalar): still an error in the input, reported with the place yaml-cpp knows.
    std::ostringstream os;
    os << path;
    if (e.mark.line >= 0) os << ":" << e.mark.line + 1 << ":" << e.mark.column + 1;
    os << ": unexpected structure (" << e.msg << "); see docs/config.md for the expected keys";
    throw ConfigError(os.str());
  }
  out.resolved = root;
  return out;
}

}  // namespace cosmic::psa
