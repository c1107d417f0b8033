#pragma once
// Top-k selection for sparsified SGD with error feedback: pick about k of a rank's
// non-zeros by magnitude to send and keep the rest as residual. Every method selects over the
// given values only, never over all N coordinates, and reports the ascending positions of the
// values it keeps, so that a residual splits into (sent, kept back) in index order.
//
//   exact            the k largest |values|, ties broken towards lower positions
//   approx           thesis section 2.4.1: each value kept independently, k in expectation
//   threshold-reuse  Ok-Topk section 3.1.3: the exact threshold every T calls, reused between;
//                    count always in [2k/3, 5k/4]
//   gaussian         Gaussiank: the threshold of a fitted normal; count always in [3k/4, 5k/4]
//   sampled          Marian / Aji-Heafield gradient dropping: the threshold of a random
//                    sample; count always in [3k/4, 5k/4]
//
// Common to all: k >= n keeps everything, k == 0 keeps nothing. The random methods draw from
// the selector's own generator, so a selector made with the same seed and fed the same calls
// keeps the same positions with any standard library.
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sparse/sparse_vector.h"
#include "sparse/stream.h"

namespace mpisgd {

class StateReader;
class StateWriter;

struct TopkOptions {
  uint32_t reuse_period = 32;  // threshold-reuse: calls between exact thresholds (Ok-Topk's tau')
  uint64_t seed = 0;           // approx, sampled
};

class TopkSelector {
 public:
  virtual ~TopkSelector() = default;
  // Replaces `kept` with the ascending positions in `values` of the values selected.
  // Not thread-safe: a selector keeps scratch space, and threshold-reuse its state.
  virtual void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) = 0;
  // What the next calls depend on (generator state, reused threshold), for checkpoints.
  virtual void save_state(StateWriter& /*out*/) const {}
  virtual void load_state(StateReader& /*in*/) {}
};

// The counts a reused threshold may keep before threshold-reuse replaces it with the
// call's exact one (Ok-Topk section 3.1.3): [ceil(2k/3), floor(5k/4)]. Also what the
// device's selection (device/thrust_feedback.cu) keeps to.
struct CountBand {
  size_t lo, hi;
  bool holds(size_t c) const { return c >= lo && c <= hi; }
};
CountBand reuse_band(size_t k);

// The method names make_topk_selector knows, in the order above.
std::span<const std::string_view> topk_selector_names();

// Throws std::invalid_argument naming the known methods if `name` is not one of them, or if
// threshold-reuse is asked for with reuse_period 0.
std::unique_ptr<TopkSelector> make_topk_selector(std::string_view name, const TopkOptions& options = {});

// Error feedback's split: the pairs of `in` at the ascending positions `kept` go to `sent`,
// a sparse stream as the collectives take it, all others to `residual`. Both come out with
// ascending indices, as `in` has them.
void split_selected(const SparseVector& in, std::span<const uint32_t> kept, Stream<float>& sent,
                    SparseVector& residual);

}  // namespace mpisgd
