// Subcommands of the `cosmic` binary. Each takes the arguments after its name and returns the
// process exit status (0 ok, 1 error in the input, 2 usage error).
#pragma once

namespace cosmic {

int cmd_eval(int argc, const char* const* argv);
int cmd_validate(int argc, const char* const* argv);
int cmd_space(int argc, const char* const* argv);
int cmd_sweep(int argc, const char* const* argv);
int cmd_merge(int argc, const char* const* argv);
int cmd_search(int argc, const char* const* argv);
int cmd_study(int argc, const char* const* argv);
int cmd_show(int argc, const char* const* argv);

}  // namespace cosmic
