// Helpers shared by the tests: small hand-written networks and configurations.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "kernels/types.hpp"

namespace cosmic::test {

inline NetDim dim(Topology t, int npus, double bw_GBps, double latency_ns, Algo a = Algo::Ring) {
  NetDim d;
  d.topology = t;
  d.npus = npus;
  d.link_bw_GBps = bw_GBps;
  d.latency_ns = latency_ns;
  for (auto& x : d.algo) x = a;
  return d;
}

inline Network one_dim(Topology t, int npus, double bw_GBps, double latency_ns, Algo a, int chunks = 1) {
  Network n;
  n.ndims = 1;
  n.dim[0] = dim(t, npus, bw_GBps, latency_ns, a);
  n.chunks = chunks;
  n.endpoint_delay_ns = 10;
  return n;
}

// A group covering whole dimensions 0..nd-1 of `net`.
inline Span full_span(const Network& net) {
  Span s;
  for (int i = 0; i < net.ndims; ++i) s.k[i] = net.dim[i].npus;
  return s;
}

// GPT-3 175B on a 2-level 64-GPU A100-like cluster, ideal calibration; tests edit it.
inline Config gpt175b_cluster() {
  Config c;
  c.model = ModelSpec{96, 12288, 49152, 96, 96, 2048, 51200, Mlp::Gelu, 2, true, true};
  c.work.global_batch = 64;
  c.work.micro_batch = 1;
  c.work.tp = 8;
  c.work.pp = 8;
  c.work.dp = 1;
  c.work.recompute = Recompute::Selective;
  c.work.seq_parallel = true;
  c.net.ndims = 2;
  c.net.dim[0] = dim(Topology::Switch, 8, 300, 500);
  c.net.dim[1] = dim(Topology::Switch, 8, 25, 2000);
  c.net.chunks = 1;
  c.compute.peak_tflops[1] = 312;
  c.compute.mem_bw_GBps = 2039;
  c.compute.mem_capacity_bytes = 80.0 * 1073741824.0;
  return c;
}

inline std::string data_path(const std::string& rel) { return std::string(COSMIC_DATA_DIR) + "/" + rel; }

// Runs the cosmic binary with `args` (shell words), capturing stdout and stderr together.
struct CliRun {
  int status = -1;  // exit status, -1 when it did not exit normally
  std::string out;
};
inline CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(COSMIC_BINARY) + " " + args + " 2>&1";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace cosmic::test
