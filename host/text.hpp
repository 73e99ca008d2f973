// Numbers and durations as progress lines and reports print them.
#pragma once

#include <cstdio>
#include <string>

namespace cosmic {

// 3 significant digits with a k / M / G / T / P / E / Z suffix: 966k, 2.39G.
inline std::string human(double v) {
  char buf[32];
  const char* unit[] = {"", "k", "M", "G", "T", "P", "E", "Z"};
  int u = 0;
  while (v >= 999.5 && u < 7) {  // 999.7k prints as 1M, not 1e+03k
    v /= 1000;
    ++u;
  }
  std::snprintf(buf, sizeof buf, "%.3g%s", v, unit[u]);
  return buf;
}

// `digits` significant digits, as printf's %g: 183.682, 1.5e+09.
inline std::string fmt_g(double v, int digits = 6) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// 0m12s, 1h05m; "?" for an unknown (infinite or NaN) time.
inline std::string duration(double s) {
  if (!(s >= 0)) return "?";
  char buf[32];
  if (s >= 365.25 * 86400) {  // a year or more (an ETA of a space no sweep finishes)
    std::snprintf(buf, sizeof buf, "%.2g years", s / (365.25 * 86400));
    return buf;
  }
  const long t = long(s);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  return buf;
}

// The strings of a container, comma-separated: "a, b, c" (or separated by `sep`).
template <class Strings>
std::string join(const Strings& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + std::string(x);
  return s;
}

// "1 OpenMP thread", "16 OpenMP threads": the CPU backends' device name.
inline std::string openmp_threads(int n) { return std::to_string(n) + (n == 1 ? " OpenMP thread" : " OpenMP threads"); }

}  // namespace cosmic
