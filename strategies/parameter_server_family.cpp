// The parameter servers' flags (ParameterServerConfig), their checks and their roles: the
// last --servers ranks serve and train nothing, unless the servers are co-located
// (strategies/parameter_server.cpp). The checks run on every rank before anything is
// read: the flags are the same everywhere, so a bad combination is one error on every
// rank, never a rank waiting for a server that does not exist.
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>

#include "cli/flag_values.h"
#include "ps/ps_config.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class ParameterServerFamily final : public StrategyFamily {
 public:
  void declare_flags(CLI::App& t, StrategyFlags& flags) const override {
    auto& ps = flags.get<ParameterServerConfig>();
    t.add_option_function<std::string>(
         "--servers",
         [&ps](const std::string& v) {
           ps.colocated = v == "colocated";
           if (!ps.colocated) ps.servers = std::stoi(v);
         },
         "ps-sync, ps-async: the last S ranks serve shards of the model and train nothing (default 1); colocated: "
         "every rank trains and serves 1/P of the model on a second thread (needs MPI_THREAD_MULTIPLE)")
        ->transform(cli::positive_whole<int>().or_word("colocated"));
    t.add_option("--max-staleness", ps.max_staleness,
                 "ps-async: a worker runs at most K steps ahead of the slowest (0 waits as ps-sync; default "
                 "unbounded)")
        ->transform(cli::non_negative_whole<int64_t>());
    t.add_option("--drop-rate", ps.drop_rate,
                 "ps-sync, ps-async: pushes and pulls carry only the largest 1 - R of each update, the rest kept as "
                 "residuals (gradient dropping; 0 sends everything)")
        ->transform(cli::number())  // in [0, 1), checked below
        ->capture_default_str();
    CLI::Option* overlap = t.add_flag("--overlap", ps.overlap,
                                      "ps-sync, ps-async: a thread pushes and pulls while the worker computes the "
                                      "next batches on the values it has (needs MPI_THREAD_MULTIPLE)")
                               ->transform(cli::boolean());
    t.add_option("--max-overlap-steps", ps.max_overlap_steps,
                 "--overlap: steps a worker computes while an exchange is in flight (0: none, as without --overlap)")
        ->transform(cli::non_negative_whole<uint64_t>())
        ->needs(overlap)
        ->capture_default_str();
  }

  // S >= P, --max-staleness with ps-sync, these flags with another family's strategy, a
  // drop rate outside [0, 1), a second thread in MPI without MPI_THREAD_MULTIPLE.
  void check(const std::string& strategy, bool own, const StrategyFlags& flags, int ranks) const override {
    const auto& c = flags.get<ParameterServerConfig>();
    if (!own) {
      const std::string ours = " is for --strategy " + strategies_of(*this) + ", not " + strategy;
      if (c.servers || c.colocated) throw std::invalid_argument("--servers" + ours);
      if (c.max_staleness != ParameterServerConfig::kUnbounded)
        throw std::invalid_argument("--max-staleness is for --strategy ps-async, not " + strategy);
      if (c.drop_rate != 0) throw std::invalid_argument("--drop-rate" + ours);
      if (c.overlap) throw std::invalid_argument("--overlap" + ours);
      return;
    }
    if (strategy == "ps-sync" && c.max_staleness != ParameterServerConfig::kUnbounded)
      throw std::invalid_argument("--max-staleness bounds ps-async; ps-sync never runs ahead (it is ps-async with 0)");
    if (c.max_staleness < ParameterServerConfig::kUnbounded)
      throw std::invalid_argument("--max-staleness must be 0 or more steps");
    if (!(c.drop_rate >= 0 && c.drop_rate < 1))
      throw std::invalid_argument("--drop-rate is the fraction of each update left out: it must be in [0, 1)");
    if (c.servers < 0) throw std::invalid_argument("--servers must be at least 1");
    if (!c.colocated && c.server_ranks() >= ranks)
      throw std::invalid_argument("--servers " + std::to_string(c.server_ranks()) + " leaves no rank to train on " +
                                  std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") + ": run at least " +
                                  std::to_string(c.server_ranks() + 1) + " ranks");
    int granted = MPI_THREAD_SINGLE;
    MPI_Query_thread(&granted);
    check_thread_level(c, granted);
  }

  int training_ranks(const StrategyFlags& flags, int ranks) const override {
    return ranks - flags.get<ParameterServerConfig>().server_ranks();
  }
  // The servers keep the L2 scale and AdaGrad's sums; a worker's weights hold only the
  // values it was sent (ps/model_copy.h).
  bool takes_steps() const override { return false; }

  void identity(const StrategyFlags& flags, std::vector<std::pair<std::string, std::string>>& lines) const override {
    const auto& c = flags.get<ParameterServerConfig>();
    lines.emplace_back("servers", c.colocated ? std::string("colocated") : std::to_string(c.server_ranks()));
    lines.emplace_back("max-staleness", fmt::format("{}", c.max_staleness));
    lines.emplace_back("drop-rate", fmt::format("{}", c.drop_rate));
    lines.emplace_back("overlap", c.overlap ? std::to_string(c.max_overlap_steps) : std::string("off"));
  }
};

}  // namespace

const StrategyFamily& parameter_server_family() {
  static const ParameterServerFamily family;
  return family;
}

}  // namespace mpisgd
