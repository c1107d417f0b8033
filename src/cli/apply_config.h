#pragma once
// --config FILE: the file's settings go to the subcommand being run as if typed after it,
// except that the command line wins. Done here rather than by CLI11's set_config, which
// names no line in its errors, drops an unknown key or section without a word (a typo
// then trains on the default), and gives keys outside any section to the main app, which
// has none of the subcommands' flags.
#include <string>

#include <CLI/CLI.hpp>

namespace mpisgd::cli {

// Call once the command line is parsed and before required flags are checked: from
// --config's own callback, which CLI11 runs in between. A key outside any section is the
// running subcommand's; a [section] names any subcommand, whose keys are checked in every
// run and set only in its own. Throws CLI::ConfigError "FILE:LINE: ..." for an unknown
// section or key, a key set twice or a bad value, and CLI::FileError when FILE is
// unreadable.
void apply_config_file(const std::string& path, CLI::App& app);

}  // namespace mpisgd::cli
