#include "strategies/strategy.h"

#include <stdexcept>

namespace mpisgd {

// One declaration and one entry per strategy; each lives in a file of its own.
std::unique_ptr<Strategy> make_dense_allreduce(const StrategyContext&);

const std::vector<StrategyInfo>& strategy_registry() {
  static const std::vector<StrategyInfo> registry = {
      {"allreduce", "dense MPI_Allreduce of the whole update vector (the baseline)", make_dense_allreduce},
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
