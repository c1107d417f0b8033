#pragma once
// CLI11's parse for a program that every rank runs with the same arguments: each rank
// parses alike, so all reach the same verdict without a message, and one prints it.
#include <optional>

#include <CLI/CLI.hpp>

namespace mpisgd::cli {

// Parses `argv` into `app`. Returns nothing when the program goes on, else the status to
// exit with: --help, or a bad argument, which `prints` (rank 0, say) writes out.
std::optional<int> parse_args(CLI::App& app, int argc, char** argv, bool prints);

}  // namespace mpisgd::cli
