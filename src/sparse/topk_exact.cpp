#include "sparse/topk_select.h"

#include "sparse/topk_kernels.h"

namespace mpisgd {
namespace {

using namespace topk;

// exact: the k largest magnitudes, ties broken towards lower positions. A sample's threshold
// picks a few more than k candidates in one pass, a radix selection over their magnitudes
// finds the k-th, and a walk over them keeps the k (collect_candidates, keep_top). O(n)
// expected, one pass when the sample is right (a pass more, rarely, when not); scratch for the
// candidates, a little over k unless ties crowd the k-th.
class ExactSelector final : public TopkSelector {
 public:
  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    if (!trivial(values.size(), k, kept)) keep_exact(values, k, scratch_, kept);
  }

 private:
  Scratch scratch_;
};

}  // namespace

std::unique_ptr<TopkSelector> make_exact_selector(const TopkOptions&) { return std::make_unique<ExactSelector>(); }

}  // namespace mpisgd
