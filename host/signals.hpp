// SIGINT and SIGTERM for the lifetime of a sweep or search: the handler only records the signal,
// and the run stops at its next check, writing what it has (docs/results-format.md). A run
// installs it as it starts, before it makes its file, so that a signal while the file is made
// still leaves one that --resume continues (the default action left only OUT.partial).
#pragma once

#include <signal.h>

#include <csignal>

namespace cosmic {

class StopSignals {
 public:
  StopSignals() {
    received_ = 0;
    struct sigaction sa {};
    sa.sa_handler = [](int sig) { received_ = sig; };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The signal received since the run started, 0 for none.
  static int received() { return int(received_); }

 private:
  static inline volatile std::sig_atomic_t received_ = 0;
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace cosmic
