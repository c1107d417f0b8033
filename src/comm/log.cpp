#include "comm/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace mpisgd {

void init_logging(int rank, const std::string& level) {
  auto logger = spdlog::stderr_color_mt("mpisgd");
  logger->set_pattern("[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] [%^%l%$] %v");
  auto wanted = spdlog::level::from_str(level);
  bool verbose = wanted <= spdlog::level::debug;
  logger->set_level(rank == 0 || verbose ? wanted : std::max(wanted, spdlog::level::warn));
  spdlog::set_default_logger(logger);
}

}  // namespace mpisgd
