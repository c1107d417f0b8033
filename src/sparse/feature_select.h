#pragma once
// Top-k by feature, for a model of K weights a feature kept in consecutive slots (a K-class
// model, feature-major: slots i K .. i K + K - 1): each feature present is ranked by the
// Euclidean norm of its values, and a feature's values are kept or left together,
// ceil(k / K) features for a budget of k values. Used by a rank's error feedback and by the
// collectives' own selections (gTop-k's merges), so that a feature's K values never part
// and an update stays runs of K indices (sparse/packed_stream.h).
#include <cstdint>
#include <span>
#include <vector>

#include "sparse/topk_select.h"

namespace mpisgd {

class FeatureSelector {
 public:
  explicit FeatureSelector(uint32_t columns) : columns_(columns) {}

  uint32_t columns() const { return columns_; }
  // Replaces `kept` with the ascending positions of the values kept, of `values` at the
  // ascending indices `index`, choosing the features with `selector`.
  void select(TopkSelector& selector, std::span<const uint32_t> index, std::span<const float> values, uint64_t k,
              std::vector<uint32_t>& kept);

 private:
  uint32_t columns_;
  // Each feature's norm, where its run of positions starts (and the end), the features kept.
  std::vector<float> norms_;
  std::vector<uint32_t> run_start_, kept_features_;
};

}  // namespace mpisgd
