#include "sparse/topk_select.h"

#include <optional>
#include <stdexcept>

#include "comm/state_blob.h"
#include "sparse/topk_kernels.h"

namespace mpisgd {
namespace {

using namespace topk;

// threshold-reuse (Ok-Topk, Li and Hoefler 2022, section 3.1.3): gradients change slowly, so
// the exact threshold (the k-th magnitude) is computed every T calls (tau', default 32 as in
// their VGG-16 and LSTM runs) and reused between. A reused threshold whose count has drifted
// out of [2k/3, 5k/4] is replaced by this call's exact threshold (keep_in_band), kept for the
// next calls. Cost: the exact selection once per T calls, one pass otherwise, about one more
// after drift.
class ThresholdReuseSelector final : public TopkSelector {
 public:
  explicit ThresholdReuseSelector(uint32_t period) : period_(period) {}

  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const bool fresh = step_++ % period_ == 0 || !threshold_;
    if (trivial(values.size(), k, kept)) return;
    if (fresh) {
      threshold_ = keep_exact(values, k, scratch_, kept);
    } else {
      const CountBand band = reuse_band(k);
      threshold_ = keep_in_band(values, k, *threshold_, Band{band.lo, band.hi}, scratch_, kept);
    }
  }
  void save_state(StateWriter& out) const override {
    out.put(step_);
    out.put(threshold_.has_value());
    out.put(threshold_.value_or(0));
  }
  void load_state(StateReader& in) override {
    step_ = in.get<uint64_t>();
    const bool has = in.get<bool>();
    const auto t = in.get<uint32_t>();
    threshold_ = has ? std::optional<uint32_t>(t) : std::nullopt;
  }

 private:
  uint32_t period_;
  uint64_t step_ = 0;
  std::optional<uint32_t> threshold_;
  Scratch scratch_;
};

}  // namespace

CountBand reuse_band(size_t k) {
  const Band band = Band::of(k, 2, 3, 5, 4);
  return {band.lo, band.hi};
}

std::unique_ptr<TopkSelector> make_threshold_reuse_selector(const TopkOptions& options) {
  if (options.reuse_period == 0) throw std::invalid_argument("top-k threshold-reuse: the reuse period must be at least 1");
  return std::make_unique<ThresholdReuseSelector>(options.reuse_period);
}

}  // namespace mpisgd
