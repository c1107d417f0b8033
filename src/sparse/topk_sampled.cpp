#include "sparse/topk_select.h"

#include "comm/state_blob.h"
#include "sparse/topk_kernels.h"

namespace mpisgd {
namespace {

using namespace topk;

// sampled (Marian's gradient dropping, Neckermann 2017 section 3.8, after Aji and Heafield
// 2017): the threshold is the k s / n -th magnitude of s values drawn at random, in runs of 16
// consecutive values (draw_runs: a run costs what one random read does). s is chosen so that
// about 256 sampled values lie above the threshold, which puts the count within ~6% of k (one
// standard deviation, if values are not correlated within a run), and at least 1024; once that
// is n or more the selection is exact. Then, as for gaussian, the count is held in
// [3k/4, 5k/4]. Cost: s reads in runs, the exact selection within the sample (a pass over s),
// one pass over n.
class SampledSelector final : public TopkSelector {
 public:
  static constexpr size_t kMinSample = 1024, kHitsInSample = 256;

  explicit SampledSelector(uint64_t seed) : state_(seed) {}

  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const size_t n = values.size();
    if (trivial(n, k, kept)) return;
    const size_t want = std::max(kMinSample, (kHitsInSample * n + k - 1) / k);
    const size_t s = (want + kBlock - 1) / kBlock * kBlock;
    if (s >= n) {
      keep_exact(values, k, scratch_, kept);
      return;
    }
    draw_runs(values, s, state_, sample_);
    const size_t ks = std::max<size_t>(1, (k * s + n / 2) / n);
    const uint32_t t = kth_largest(sample_, ks, scratch_);
    keep_in_band(values, k, t, Band::of(k, 3, 4, 5, 4), scratch_, kept);
  }
  void save_state(StateWriter& out) const override { out.put(state_); }
  void load_state(StateReader& in) override { state_ = in.get<uint64_t>(); }

 private:
  uint64_t state_;
  std::vector<float> sample_;
  Scratch scratch_;
};

}  // namespace

std::unique_ptr<TopkSelector> make_sampled_selector(const TopkOptions& options) {
  return std::make_unique<SampledSelector>(options.seed);
}

}  // namespace mpisgd
