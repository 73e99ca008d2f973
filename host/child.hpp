// Work done in a child process, so that a crash or a runaway allocation there (HDF5 reading a
// damaged file: host/h5.cpp) is reported rather than taken down with the command.
#pragma once

#include <cstddef>
#include <functional>

namespace cosmic {

struct ChildLimits {
  size_t extra_memory_bytes = 0;  // address space beyond the parent's at the fork; 0: no limit
  unsigned seconds = 0;           // wall time before SIGALRM ends it; 0: no limit
};

// Runs `work` in a child process (fork) and waits for it: the child's exit status (work()'s
// return value), or minus the signal that ended it. The child ends with its parent. Runs
// `work` here where no process can be made. Call it where no other thread is inside HDF5 (a
// child forked meanwhile would wait on HDF5's lock for ever); other threads or a CUDA context
// in the parent do not matter to a child that only reads with HDF5 and exits.
int run_in_child(const std::function<int()>& work, const ChildLimits& limits = {});

}  // namespace cosmic
