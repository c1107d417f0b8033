#include "sparse/feature_select.h"

#include <cmath>

namespace mpisgd {

void FeatureSelector::select(TopkSelector& selector, std::span<const uint32_t> index, std::span<const float> values,
                             uint64_t k, std::vector<uint32_t>& kept) {
  norms_.clear();
  run_start_.clear();
  const size_t n = index.size();
  for (size_t j = 0; j < n;) {
    const uint32_t feature = index[j] / columns_;
    run_start_.push_back(static_cast<uint32_t>(j));
    double squares = 0;
    for (; j < n && index[j] / columns_ == feature; ++j) squares += static_cast<double>(values[j]) * values[j];
    norms_.push_back(static_cast<float>(std::sqrt(squares)));
  }
  run_start_.push_back(static_cast<uint32_t>(n));
  selector.select(norms_, (k + columns_ - 1) / columns_, kept_features_);
  kept.clear();
  for (uint32_t f : kept_features_)
    for (uint32_t j = run_start_[f]; j < run_start_[f + 1]; ++j) kept.push_back(j);
}

}  // namespace mpisgd
