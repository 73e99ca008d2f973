// cxxopts, as every subcommand includes it. cxxopts splits the values of list options at commas
// by default; `--set key=value` values are YAML and may hold lists (`--set x=[1,2]`), so values
// are split at newlines instead, which never occur in one argument typed on a command line.
// Every file that uses cxxopts must include it through this header (one definition for all).
#pragma once

#define CXXOPTS_VECTOR_DELIMITER '\n'
#include <cxxopts.hpp>
