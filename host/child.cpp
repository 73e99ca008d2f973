#include "host/child.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>

namespace cosmic {

namespace {
// The process's address space now, bytes (/proc/self/statm's first field, in pages); 0 if unknown.
size_t address_space_bytes() {
  unsigned long pages = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
  std::fclose(f);
  return size_t(pages) * size_t(sysconf(_SC_PAGESIZE));
}
}  // namespace

int run_in_child(const std::function<int()>& work, const ChildLimits& limits) {
  std::cout.flush();
  std::cerr.flush();
  // SIGCHLD ignored (inherited so), the child would be reaped unseen: default while it runs.
  struct sigaction chld {}, default_chld {};
  default_chld.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &default_chld, &chld);
  const size_t used = limits.extra_memory_bytes ? address_space_bytes() : 0;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    sigaction(SIGCHLD, &chld, nullptr);
    return work();
  }
  if (pid == 0) {
    // Ends with its parent (a SIGTERM or kill to the parent alone), rather than work on for no one.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    if (used > 0) {  // an allocation past the limit fails (HDF5 reports it; new throws)
      const rlimit as{rlim_t(used + limits.extra_memory_bytes), rlim_t(used + limits.extra_memory_bytes)};
      setrlimit(RLIMIT_AS, &as);
    }
    if (limits.seconds) {
      signal(SIGALRM, SIG_DFL);
      alarm(limits.seconds);
    }
    const int status = work();
    std::cout.flush();
    std::cerr.flush();
    _exit(status);
  }
  int status = 0;
  bool waited = true;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      waited = false;
      break;
    }
  sigaction(SIGCHLD, &chld, nullptr);
  if (!waited) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace cosmic
