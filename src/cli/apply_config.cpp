#include "cli/apply_config.h"

#include <map>
#include <vector>

#include "cli/config_file.h"
#include "cli/nearest_name.h"

namespace mpisgd::cli {
namespace {

// The subcommand a line's section names, or the running one outside any section.
CLI::App& section_app(CLI::App& app, CLI::App& running, const std::string& path, const ConfigLine& line) {
  if (line.section.empty()) return running;
  std::vector<std::string> names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == line.section) return *sub;
    names.push_back(sub->get_name());
  }
  throw CLI::ConfigError(config_place(path, line.number) + "unknown section [" + line.section + "]" +
                         did_you_mean(line.section, names, "[", "]"));
}

// A key is the flag's name with its dashes or without.
std::string flag_name(const std::string& key) {
  const size_t first = key.find_first_not_of('-');
  return first == std::string::npos ? key : key.substr(first);
}

CLI::Option& option_for(CLI::App& sub, const CLI::App& running, const std::string& path, const ConfigLine& line) {
  const std::string name = flag_name(line.key);
  CLI::Option* option = sub.get_option_no_throw("--" + name);
  if (option != nullptr && option->get_configurable()) return *option;
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options([](const CLI::Option* o) { return o->get_configurable(); }))
    names.insert(names.end(), o->get_lnames().begin(), o->get_lnames().end());
  const std::string place = line.section.empty() ? "for " + running.get_name() : "in [" + line.section + "]";
  throw CLI::ConfigError(config_place(path, line.number) + "unknown key '" + line.key + "' " + place +
                         did_you_mean(name, names));
}

// As CLI11 gives a config value: a flag's through its flag value (so that
// `no-early-stop = true` stores what --no-early-stop does). Its callback runs now, not
// with the command line's, so that a bad value is reported with this line.
void set_value(CLI::Option& option, const ConfigLine& line) {
  const std::string name = flag_name(line.key);
  option.add_result(option.get_expected_min() == 0 ? option.get_flag_value(name, line.value) : line.value);
  option.run_callback();
}

}  // namespace

void apply_config_file(const std::string& path, CLI::App& app) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (parsed.empty()) return;  // CLI11 reports the missing subcommand next
  CLI::App& running = *parsed.front();
  std::map<const CLI::Option*, int> set_on_line;
  for (const ConfigLine& line : read_config_lines(path)) {
    CLI::App& sub = section_app(app, running, path, line);
    if (line.opens_section()) continue;
    CLI::Option& option = option_for(sub, running, path, line);
    if (const auto [first, fresh] = set_on_line.emplace(&option, line.number); !fresh)
      throw CLI::ConfigError(config_place(path, line.number) + "'" + line.key + "' is set twice, also on line " +
                             std::to_string(first->second));
    if (&sub != &running || option.count() > 0) continue;
    try {
      set_value(option, line);
    } catch (const CLI::ParseError& e) {
      throw CLI::ConfigError(config_place(path, line.number) + e.what());
    }
  }
}

}  // namespace mpisgd::cli
