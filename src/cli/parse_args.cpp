#include "cli/parse_args.h"

namespace mpisgd::cli {

std::optional<int> parse_args(CLI::App& app, int argc, char** argv, bool prints) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return prints ? app.exit(e) : e.get_exit_code();
  }
  return std::nullopt;
}

}  // namespace mpisgd::cli
