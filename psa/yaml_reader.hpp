// Strict, typed reading of YAML trees, shared by configuration files (config.cpp) and design-space
// files (space.cpp). Every error names the file, line, column and full key, and says what was
// expected: "file:line:col: key 'a.b': expected ..., got '...'".
#pragma once

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>

#include <yaml-cpp/yaml.h>

#include "psa/config.hpp"
#include "psa/names.hpp"

namespace cosmic::psa {

// "file:line:col" of a node (just the file for --set overrides or nodes without a mark).
std::string where(const Sources& src, const std::string& key_path, const YAML::Node& node);

// A node as text for error messages: its scalar quoted, or "a mapping", "an empty list",
// "a list of 3 items", "nothing".
std::string node_text(const YAML::Node& n);

// A system may be parameterised by `nodes`: dimensions whose npus is the word `nodes` take it.
void expand_nodes(YAML::Node system, const Sources& src);

// Where to name a key written without a value (`pp:`): yaml-cpp places the missing value at
// the next token, a line below (or, at the end of a file without a newline, at the start of the
// key's line), so the key's own place, where it has one (a key merged in from an override may
// not, and its value's place is then the one in the user's file). A `~` or `null` written after
// the key keeps its own place.
inline const YAML::Node& place_of_value(const YAML::Node& key, const YAML::Node& value) {
  const YAML::Mark k = key.Mark(), v = value.Mark();
  const bool elsewhere = v.line > k.line || (v.line == k.line && v.column < k.column);
  return v.line < 0 || (k.line >= 0 && value.IsNull() && elsewhere) ? key : value;
}

// Typed, strict access to one mapping of the tree.
class Section {
 public:
  // An absent section (undefined or null) reads as an empty mapping.
  Section(const YAML::Node& node, std::string path, const Sources& src)
      : node_(node.IsDefined() ? node : YAML::Node()), path_(std::move(path)), src_(src) {
    if (!node_.IsNull() && !node_.IsMap()) fail_node(node_, path_, "a mapping");
  }

  bool has(const char* key) const { return !raw(key).IsNull(); }
  // The value under `key`, or a null node when absent (never an invalid node).
  YAML::Node raw(const char* key) const {
    if (!node_.IsMap()) return YAML::Node();
    const YAML::Node n = static_cast<const YAML::Node&>(node_)[key];
    return n.IsDefined() ? n : YAML::Node();
  }
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail_node(const YAML::Node& n, const std::string& kp, const std::string& expected,
                              const YAML::Node* at = nullptr,  // at: where, when not n's own place
                              const std::string& note = "") const {
    throw ConfigError(where(src_, kp, at ? *at : n) + ": key '" + kp + "': expected " + expected + ", got " + node_text(n) +
                      note);
  }
  [[noreturn]] void fail(const char* key, const std::string& expected, const std::string& note = "") const {
    const YAML::Node n = raw(key);
    // An absent key has no place in the file: the mapping that lacks it gives the line.
    const bool absent = n.IsNull() && n.Mark().line < 0 && node_.IsMap();
    fail_node(n, key_path(key), expected, absent ? &node_ : nullptr, note);
  }
  // `key` contradicts `other`. Where a --set gave `other` and a file `key`, the file's line is
  // named all the same, but the edit made it wrong: the message says so, and what to add.
  [[noreturn]] void fail_against(const char* key, const char* other, const std::string& expected,
                                 const std::string& value_that_fits) const {
    const bool edited = src_.file_of(key_path(other)) == "--set" && src_.file_of(key_path(key)) != "--set";
    fail(key, expected,
         edited ? " (" + src_.set_prefix + key_path(other) + " is from --set: add --set " + src_.set_prefix + key_path(key) +
                      "=" + value_that_fits + ")"
                : "");
  }

  void check_keys(std::initializer_list<const char*> allowed) const {
    if (!node_.IsMap()) return;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const std::string k = it->first.as<std::string>();
      bool ok = false;
      for (const char* a : allowed) ok = ok || k == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        // A key merged in from an override is a new node without a place: its value has one. (A
        // copy: `it->` is a proxy that ends with this statement.)
        const YAML::Node at = it->first.Mark().line >= 0 ? it->first : it->second;
        throw ConfigError(where(src_, key_path(k), at) + ": unknown key '" + key_path(k) + "' (expected one of: " + list +
                          ")" + (k == "<<" ? "; YAML merge keys are not read: write the keys out" : ""));
      }
      // A key written without a value (`fp16:`, `fp16: null`) is a mistake, not "use the default".
      // An override's value has the place in the user's file; a preset's key may not.
      if (it->second.IsNull()) fail_node(it->second, key_path(k), "a value", &place_of_value(it->first, it->second));
      // The descriptive keys are text, not lists or mappings.
      if ((k == "name" || k == "description" || k == "source") && !it->second.IsScalar())
        fail_node(it->second, key_path(k), "a string");
    }
  }

  std::string text(const char* key, const std::string& def = "") const {
    if (!has(key)) return def;
    if (!raw(key).IsScalar()) fail(key, "a string");
    return raw(key).Scalar();
  }

  int64_t integer(const char* key, int64_t def, int64_t lo, int64_t hi) const {
    if (!has(key)) return def;
    const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (!raw(key).IsScalar()) fail(key, range);
    int64_t v;
    try {
      size_t used = 0;
      v = std::stoll(raw(key).Scalar(), &used);
      if (used != raw(key).Scalar().size()) fail(key, range);
    } catch (const std::logic_error&) {
      fail(key, range);
    }
    if (v < lo || v > hi) fail(key, range);
    return v;
  }

  double number(const char* key, double def, double lo, double hi) const {
    if (!has(key)) return def;
    std::ostringstream range;
    range << "a number in [" << lo << ", " << hi << "]";
    if (!raw(key).IsScalar()) fail(key, range.str());
    // Decimal only (strtod would read 0x10 as 16, which the integer keys refuse); a value too
    // small for a double (5e-324) is read as what it rounds to, not refused.
    const std::string& text = raw(key).Scalar();
    if (text.find_first_of("xX") != std::string::npos) fail(key, range.str() + ", written in decimal");
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) fail(key, range.str());
    if (!std::isfinite(v) || v < lo || v > hi) fail(key, range.str());
    return v;
  }

  bool boolean(const char* key, bool def) const {
    if (!has(key)) return def;
    const std::string s = raw(key).IsScalar() ? raw(key).Scalar() : "";
    if (names::iequal(s, "true") || names::iequal(s, "yes") || s == "1") return true;
    if (names::iequal(s, "false") || names::iequal(s, "no") || s == "0") return false;
    fail(key, "true or false");
  }

  template <class E, size_t N>
  E choice(const char* key, E def, const names::Entry<E> (&table)[N]) const {
    if (!has(key)) return def;
    return choice_node(raw(key), key_path(key), table);
  }

  template <class E, size_t N>
  E choice_node(const YAML::Node& n, const std::string& kp, const names::Entry<E> (&table)[N]) const {
    if (n.IsScalar())
      if (auto v = names::parse(table, n.Scalar())) return *v;
    fail_node(n, kp, "one of " + names::choices(table));
  }

  const YAML::Node& node() const { return node_; }
  Section sub(const char* key) const { return Section(raw(key), key_path(key), src_); }
  const Sources& sources() const { return src_; }

 private:
  YAML::Node node_;
  std::string path_;
  const Sources& src_;
};

}  // namespace cosmic::psa
