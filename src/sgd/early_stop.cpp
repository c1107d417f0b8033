#include "sgd/early_stop.h"

#include <cmath>

#include <fmt/format.h>

namespace mpisgd {

bool EarlyStop::after_epoch(double loss) {
  const bool finite = std::isfinite(loss);
  if (finite && (!seen_ || loss <= best_ - options_.tol)) stale_ = 0;
  else ++stale_;
  if (finite && (!seen_ || loss < best_)) {
    best_ = loss;
    seen_ = true;
  }
  return stopped();
}

std::string EarlyStop::reason() const {
  return fmt::format("the training loss has not improved on its best, {:.6g}, by --tol {} for {} epochs "
                     "(--n-iter-no-change; --no-early-stop trains all --epochs)",
                     best_, options_.tol, stale_);
}

void EarlyStop::save_state(StateWriter& out) const {
  out.put(best_);
  out.put(static_cast<uint8_t>(seen_));
  out.put(static_cast<int32_t>(stale_));
}

void EarlyStop::load_state(StateReader& in) {
  best_ = in.get<double>();
  seen_ = in.get<uint8_t>() != 0;
  stale_ = in.get<int32_t>();
}

}  // namespace mpisgd
