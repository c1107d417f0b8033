#pragma once
// Reads a --config file, TOML or INI as CLI11 reads them, into its section headers and
// settings with their line numbers: CLI11's own reader drops the line numbers, and a
// message that names the line is what finds a typo in a long file.
#include <string>
#include <vector>

namespace mpisgd::cli {

struct ConfigLine {
  int number = 0;       // from 1
  std::string section;  // "" above the first [section]; a key `train.epochs` is in section "train"
  std::string key;      // as written, dashes kept; empty on a line that opens a section
  std::string value;    // "true" for a key alone, which CLI11 reads as a flag given
  bool opens_section() const { return key.empty(); }
};

// "FILE:LINE: ", the start of every message about one line of the file.
std::string config_place(const std::string& path, int number);

// The headers and settings in file order; blank lines and comments (# or ;) left out.
// Throws CLI::FileError when the file cannot be read, and CLI::ConfigError naming file
// and line for a line that is neither a header nor a setting.
std::vector<ConfigLine> read_config_lines(const std::string& path);

}  // namespace mpisgd::cli
