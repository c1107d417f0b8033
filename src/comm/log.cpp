#include "comm/log.h"

#include <mpi.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace mpisgd {
namespace {

spdlog::level::level_enum rank_level(int rank, spdlog::level::level_enum wanted) {
  const bool verbose = wanted <= spdlog::level::debug;
  return rank == 0 || verbose ? wanted : std::max(wanted, spdlog::level::warn);
}

#ifdef MPISGD_SIM
// Under SimGrid every simulated rank runs in one process, and spdlog's registry (a global
// of the shared library, which SMPI does not privatize) holds one default logger for all
// of them. So the rank a line names, and whether a rank other than 0 prints it, are
// decided per message, for the rank that is calling: SMPI answers MPI_Comm_rank for the
// simulated rank running now.
int calling_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

class RankFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string rank = std::to_string(calling_rank());
    dest.append(rank.data(), rank.data() + rank.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<RankFlag>(); }
};

class RankLevelSink : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  RankLevelSink(spdlog::sink_ptr out, spdlog::level::level_enum wanted) : out_(std::move(out)), wanted_(wanted) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level >= rank_level(calling_rank(), wanted_)) out_->log(msg);
  }
  void flush_() override { out_->flush(); }

 private:
  spdlog::sink_ptr out_;
  spdlog::level::level_enum wanted_;
};
#endif

}  // namespace

void init_logging(int rank, const std::string& level) {
  const auto wanted = spdlog::level::from_str(level);
#ifdef MPISGD_SIM
  (void)rank;
  if (spdlog::get("mpisgd")) return;  // another simulated rank set it up
  auto out = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<RankFlag>('R').set_pattern("[%H:%M:%S.%e] [rank %R] [%^%l%$] %v");
  out->set_formatter(std::move(formatter));
  auto logger = std::make_shared<spdlog::logger>("mpisgd", std::make_shared<RankLevelSink>(out, wanted));
  logger->set_level(wanted);
  spdlog::register_logger(logger);
#else
  auto logger = spdlog::stderr_color_mt("mpisgd");
  logger->set_pattern("[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] [%^%l%$] %v");
  logger->set_level(rank_level(rank, wanted));
#endif
  spdlog::set_default_logger(logger);
}

}  // namespace mpisgd
