#include "strategies/strategy.h"

#include <stdexcept>

namespace mpisgd {

// One declaration and one entry per strategy; each lives in a file of its own.
std::unique_ptr<Strategy> make_dense_allreduce(const StrategyContext&);
std::unique_ptr<Strategy> make_lossless_sparse(const StrategyContext&, const std::string& algorithm);

// The lossless sparse strategies differ only in the collective (src/collectives/).
template <const char* Algorithm>
std::unique_ptr<Strategy> make_sparse(const StrategyContext& c) {
  return make_lossless_sparse(c, Algorithm);
}
constexpr char kRecDbl[] = "ssar-rec-dbl", kSplitAg[] = "ssar-split-ag", kDsarSplitAg[] = "dsar-split-ag",
               kDsarEarly[] = "dsar-early", kAuto[] = "auto";

const std::vector<StrategyInfo>& strategy_registry() {
  static const std::vector<StrategyInfo> registry = {
      {"allreduce", "dense MPI_Allreduce of the whole update vector (the baseline)", make_dense_allreduce},
      {"ssar-rec-dbl", "sparse update, SSAR recursive doubling", make_sparse<kRecDbl>},
      {"ssar-split-ag", "sparse update, SSAR split + sparse allgather", make_sparse<kSplitAg>},
      {"dsar-split-ag", "sparse update, DSAR split + dense allgather", make_sparse<kDsarSplitAg>},
      {"dsar-early", "sparse update, DSAR going dense inside groups of --group-size", make_sparse<kDsarEarly>},
      {"sparse-auto", "sparse update, the collective an alpha-beta model picks per step", make_sparse<kAuto>},
  };
  return registry;
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& context) {
  std::string known;
  for (const auto& info : strategy_registry()) {
    if (info.name == name) return info.make(context);
    known += (known.empty() ? "" : ", ") + info.name;
  }
  throw std::invalid_argument("unknown strategy '" + name + "' (known: " + known + ")");
}

}  // namespace mpisgd
