// cxxopts, as every subcommand includes it, and the argument handling they share.
//
// cxxopts splits the values of list options at commas by default; `--set key=value` values
// are YAML and may hold lists (`--set x=[1,2]`), so values are split at newlines instead, which
// never occur in one argument typed on a command line. Every file that uses cxxopts must
// include it through this header (one definition for all).
#pragma once

#define CXXOPTS_VECTOR_DELIMITER '\n'
#include <cxxopts.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace cosmic {

// Parses a subcommand's arguments into `args`. Returns false when the command must stop at once
// with `status`: 0 after printing --help, 2 after a usage error or a missing required argument
// (the message and the help go to stderr). `required` pairs an option with how the help
// names it, e.g. {"config", "CONFIG.yaml"}; `unless_resume` likewise, options --resume may go
// without (a resumed run takes them from its file).
inline bool parse_command(cxxopts::Options& opts, int argc, const char* const* argv,
                          std::initializer_list<std::pair<const char*, const char*>> required,
                          cxxopts::ParseResult& args, int& status,
                          std::initializer_list<std::pair<const char*, const char*>> unless_resume = {}) {
  const std::string name = opts.program();
  try {
    args = opts.parse(argc, argv);
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    // cxxopts names the value only ("Argument '-5' failed to parse"): name the option too.
    const std::string msg = e.what(), lq = "\u2018", rq = "\u2019";
    const size_t a = msg.find(lq), b = msg.rfind(rq);
    const std::string value = a != std::string::npos && b > a ? msg.substr(a + lq.size(), b - a - lq.size()) : "";
    std::string option;
    for (int i = 1; i < argc && option.empty(); ++i) {
      const std::string arg = argv[i];
      const size_t eq = arg.find('=');
      if (arg.rfind("-", 0) == 0 && eq != std::string::npos && arg.substr(eq + 1) == value) option = arg.substr(0, eq);
      else if (arg.rfind("-", 0) == 0 && i + 1 < argc && argv[i + 1] == value) option = arg;
    }
    std::cerr << name << ": " << (option.empty() ? msg : option + ": cannot read '" + value + "' as its value (see --help)")
              << "\n";
    status = 2;
    return false;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << name << ": " << e.what() << "\n" << opts.help();
    status = 2;
    return false;
  }
  if (args.count("help")) {
    std::cout << opts.help();
    status = 0;
    return false;
  }
  // A flag given a false value (`--json=false`, `=0`, `=f` printed JSON): cxxopts takes it as
  // given, and the commands test whether a flag is given.
  for (const auto& kv : args.arguments())
    for (const auto& o : opts.group_help("").options)
      if (o.is_boolean && !o.l.empty() && o.l.front() == kv.key() && !kv.as<bool>()) {  // false, 0, f, False...
        std::cerr << name << ": --" << kv.key() << " is a flag and takes no value (leave it out for false)\n";
        status = 2;
        return false;
      }
  if (!args.unmatched().empty()) {  // positional arguments beyond the command's
    std::cerr << name << ": unexpected argument '" << args.unmatched().front() << "'\n" << opts.help();
    status = 2;
    return false;
  }
  for (const auto& [option, shown] : required)
    if (!args.count(option)) {
      std::cerr << name << ": missing " << shown << "\n" << opts.help();
      status = 2;
      return false;
    }
  for (const auto& [option, shown] : unless_resume)
    if (!args.count(option) && !args.count("resume")) {
      std::cerr << name << ": missing " << shown << " (or --resume)\n" << opts.help();
      status = 2;
      return false;
    }
  return true;
}

// The values of a repeatable option such as --set; empty when it was not given.
inline std::vector<std::string> list_option(const cxxopts::ParseResult& args, const char* option) {
  return args.count(option) ? args[option].as<std::vector<std::string>>() : std::vector<std::string>{};
}

// --set KEY=VALUE on a PSA file (cosmic space, sweep, search; psa::load_psa applies them).
inline void add_psa_set_option(cxxopts::Options& opts) {
  opts.add_options()("s,set",
                     "edit a key of the PSA file (repeatable), e.g. --set derived.tp=none; base.KEY=VALUE edits the base "
                     "configuration",
                     cxxopts::value<std::vector<std::string>>());
}

// With --resume the file's recorded settings apply: says which of `fixed` were given anyway.
inline void warn_ignored_with_resume(const cxxopts::Options& opts, const cxxopts::ParseResult& args,
                                     std::initializer_list<const char*> fixed) {
  for (const char* option : fixed)
    if (args.count(option))  // count() is 0 for an option left at its default
      std::cerr << opts.program() << ": --" << option << " ignored with --resume: the file's recorded settings apply\n";
}

// A usage error found after parsing: prints "<program>: <message>" on stderr and returns 2, the
// exit status of usage errors.
inline int usage_error(const cxxopts::Options& opts, const std::string& message) {
  std::cerr << opts.program() << ": " << message << "\n";
  return 2;
}

// A count typed as digits (up to 2^64 - 1) or otherwise as a number that is whole and at most
// 2^53 (1e6, 2.5e6, 20e-1), as --param's integers are read; false for anything else (a sign,
// a fraction, garbage), leaving `out` as it was.
inline bool parse_count(const std::string& s, uint64_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string::npos || s[0] == '+' || s[0] == '-')
    return false;
  char* end = nullptr;
  errno = 0;
  if (s.find_first_not_of("0123456789") == std::string::npos) {
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno != 0) return false;
    out = v;
    return true;
  }
  const double d = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || d != std::floor(d) || !(d <= 9007199254740992.0)) return false;
  out = uint64_t(d);
  return true;
}

// The values of --backend of every command that evaluates.
inline bool known_backend(const std::string& backend) {
  return backend == "auto" || backend == "cpu" || backend == "cuda";
}

}  // namespace cosmic
