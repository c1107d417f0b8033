#pragma once
// Error feedback for top-k sparsified SGD (sparse AllReduce thesis section 2.4; Ok-Topk
// Algorithm 1, lines 3-5; gTop-k Algorithm 4): a rank sends only about k values of its
// update and keeps the others as a residual that joins its next update, so gradient mass
// is delayed, never lost. What a rank selects from is its natural sparse gradient plus its
// residual, merged: the selection runs over their non-zeros, never over all N.
// The residual is kept in gradient units (before the learning rate), so that
//   applied update + all ranks' residuals == all ranks' raw updates, summed over steps.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "sparse/feature_select.h"
#include "sparse/feedback.h"
#include "sparse/sparse_vector.h"
#include "sparse/stream.h"
#include "sparse/topk_select.h"

namespace mpisgd {

class StateReader;
class StateWriter;

struct SparsifyOptions {
  double density = 0;  // k = ceil(density N) per rank ...
  uint64_t k = 0;      // ... unless k is set
  std::string select;  // a topk_select.h method; empty: threshold-reuse
  uint32_t reuse_period = 32;
  uint64_t warmup_steps = 0;  // steps that send the whole update before sparsifying
  uint64_t seed = 1;
  // Gradient dropping (the parameter servers' --drop-rate R): a step sends
  // ceil(keep x m) values, keep = 1 - R, for the m non-zeros of its own update (the
  // residual holds far more, and would otherwise raise what is sent), instead of k.
  double keep = 0;
  // Weights per feature (K columns of a K-class model, feature-major: slots i K .. i K +
  // K - 1): a feature's K values are ranked by their Euclidean norm and kept or sent
  // together, k / K features (rounded up) for a budget of k values.
  uint32_t columns = 1;

  bool requested() const { return density > 0 || k > 0; }
  // The per-rank k for N features (at least 1 when N > 0); density 0.01 if neither is set.
  uint64_t k_for(uint32_t dim) const;
};

// Error feedback on the host.
class ErrorFeedback final : public Feedback {
 public:
  // Throws std::invalid_argument for an unknown selection method or a reuse period of 0.
  ErrorFeedback(const SparsifyOptions& options, uint32_t dim);

  uint64_t k() const override { return k_; }
  bool warming_up() const override { return step_ < warmup_steps_; }
  // `local`: pairs, indices ascending. The stream returned has room for N pairs.
  const Stream<float>& select(std::span<const Pair<float>> local) override;
  // The sum is formed by the next select(), in the same pass as the merge with the local
  // update: a separate pass over the residual cost as much as that merge.
  void take_back(const Stream<float>& dropped) override;
  const SparseVector& residual() const override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

 private:
  uint64_t k_, warmup_steps_, step_ = 0;
  double keep_;
  FeatureSelector features_;  // with K columns, ranks features by the norm of their values
  std::unique_ptr<TopkSelector> selector_;
  // Index and value apart, as the selectors scan the values as one array.
  SparseVector merged_;
  Stream<float> sent_;
  // The residual is residual_ + back_ (what take_back was handed since the last select);
  // residual() adds them when asked, forming the same sums select() would.
  mutable SparseVector residual_, back_, sum_;
  std::vector<uint32_t> kept_;
};

// Appends what a collective handed back (a stream over [0, N); a dense one's non-zeros) to
// `out`, as the residual's next additions.
void append_handed_back(const Stream<float>& dropped, SparseVector& out);

// out = a + b over ascending indices; exact zeros are dropped.
void add_sparse(const SparseVector& a, const SparseVector& b, SparseVector& out);

// out = local + (residual + back) index by index, the order in which error feedback adds
// them, with exact zeros dropped (a zero residual + back leaves local alone). One pass over
// `residual`, copying its runs between the indices of `local` and `back`, which are
// usually far fewer.
void add_to_residual(std::span<const Pair<float>> local, const SparseVector& residual, const SparseVector& back,
                     SparseVector& out);

}  // namespace mpisgd
