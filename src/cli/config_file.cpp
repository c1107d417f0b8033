#include "cli/config_file.h"

#include <fstream>

#include <CLI/Error.hpp>

namespace mpisgd::cli {
namespace {

constexpr const char* kSpace = " \t\r\f\v";

std::string trimmed(const std::string& s) {
  const size_t first = s.find_first_not_of(kSpace);
  return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

bool quoted(const std::string& s) {
  return s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front();
}

std::string unquoted(const std::string& s) { return quoted(s) ? s.substr(1, s.size() - 2) : s; }

// A trailing # comment is cut, but not inside a quoted value, which may hold a #
// ("run#2.csv"; CLI11 cuts there too, leaving a value that names no file).
std::string without_comment(const std::string& line) {
  size_t from = 0;
  const size_t equals = line.front() == '[' ? std::string::npos : line.find('=');
  if (equals != std::string::npos) {
    const size_t value = line.find_first_not_of(kSpace, equals + 1);
    if (value != std::string::npos && (line[value] == '"' || line[value] == '\'')) {
      const size_t closing = line.find(line[value], value + 1);
      from = closing == std::string::npos ? line.size() : closing + 1;
    }
  }
  return trimmed(line.substr(0, line.find('#', from)));
}

// [train], or TOML's [[train]], which CLI11 reads alike.
std::string section_name(const std::string& header, const std::string& path, int number) {
  std::string name = header;
  for (int brackets = 0; brackets < 2 && name.size() >= 2 && name.front() == '[' && name.back() == ']'; ++brackets)
    name = trimmed(name.substr(1, name.size() - 2));
  if (name.empty() || name.front() == '[' || name.back() == ']')
    throw CLI::ConfigError(config_place(path, number) + "'" + header + "' is not a section header such as [train]");
  return name;
}

ConfigLine setting(const std::string& text, const std::string& section, const std::string& path, int number) {
  const size_t equals = text.find('=');
  const std::string key = trimmed(text.substr(0, equals));
  ConfigLine line{number, section, unquoted(key), "true"};
  if (equals != std::string::npos) line.value = unquoted(trimmed(text.substr(equals + 1)));
  if (line.key.empty()) throw CLI::ConfigError(config_place(path, number) + "'" + text + "' has no key before '='");
  // A dotted key names its section, as CLI11 reads `train.epochs = 2`.
  if (const size_t dot = key.rfind('.'); !quoted(key) && dot != std::string::npos && dot > 0 && dot + 1 < key.size()) {
    line.section = (section.empty() ? "" : section + ".") + key.substr(0, dot);
    line.key = key.substr(dot + 1);
  }
  return line;
}

}  // namespace

std::string config_place(const std::string& path, int number) { return path + ":" + std::to_string(number) + ": "; }

std::vector<ConfigLine> read_config_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CLI::FileError(path + ": cannot open for reading");
  std::vector<ConfigLine> lines;
  std::string section;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    const std::string line = trimmed(text);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    const std::string content = without_comment(line);
    if (content.front() == '[') {
      section = section_name(content, path, number);
      lines.push_back({number, section, "", ""});
    } else {
      lines.push_back(setting(content, section, path, number));
    }
  }
  if (in.bad()) throw CLI::FileError(path + ": read error");
  return lines;
}

}  // namespace mpisgd::cli
