// The registry of the top-k selections of topk_select.h, and the split of an update by
// a selection. Each selection lives in a file of its own (topk_exact.cpp, ...), their
// shared passes in topk_kernels.h.
#include "sparse/topk_select.h"

#include <algorithm>
#include <array>

#include "comm/find_by_name.h"

namespace mpisgd {

// One declaration and one entry per selection.
std::unique_ptr<TopkSelector> make_exact_selector(const TopkOptions&);
std::unique_ptr<TopkSelector> make_approx_selector(const TopkOptions&);
std::unique_ptr<TopkSelector> make_threshold_reuse_selector(const TopkOptions&);
std::unique_ptr<TopkSelector> make_gaussian_selector(const TopkOptions&);
std::unique_ptr<TopkSelector> make_sampled_selector(const TopkOptions&);

namespace {

struct SelectorInfo {
  std::string_view name;
  std::unique_ptr<TopkSelector> (*make)(const TopkOptions&);
};

constexpr std::array<SelectorInfo, 5> kSelectors{{
    {"exact", make_exact_selector},
    {"approx", make_approx_selector},
    {"threshold-reuse", make_threshold_reuse_selector},
    {"gaussian", make_gaussian_selector},
    {"sampled", make_sampled_selector},
}};

constexpr std::array<std::string_view, kSelectors.size()> kNames = [] {
  std::array<std::string_view, kSelectors.size()> names{};
  for (size_t i = 0; i < kSelectors.size(); ++i) names[i] = kSelectors[i].name;
  return names;
}();

}  // namespace

std::span<const std::string_view> topk_selector_names() { return kNames; }

std::unique_ptr<TopkSelector> make_topk_selector(std::string_view name, const TopkOptions& options) {
  return find_by_name(kSelectors, name, "top-k selection").make(options);
}

void split_selected(const SparseVector& in, std::span<const uint32_t> kept, Stream<float>& sent,
                    SparseVector& residual) {
  // The kept pairs are a few percent of `in`: the runs between them are copied whole,
  // several times faster than choosing a destination per pair, and this copy of the
  // residual is part of every top-k step (docs/performance.md#figures-behind-the-code).
  const size_t n = in.nnz(), nk = kept.size();
  sent.reserve_pairs(nk);
  sent.set_sparse(static_cast<uint32_t>(nk));
  Pair<float>* to_send = sent.pairs().data();
  residual.index.resize(n - nk);
  residual.value.resize(n - nk);
  size_t from = 0, to = 0;
  auto copy_run = [&](size_t end) {
    std::copy(in.index.begin() + from, in.index.begin() + end, residual.index.begin() + to);
    std::copy(in.value.begin() + from, in.value.begin() + end, residual.value.begin() + to);
    to += end - from;
  };
  for (size_t q = 0; q < nk; ++q) {
    const size_t p = kept[q];
    copy_run(p);
    to_send[q] = {in.index[p], in.value[p]};
    from = p + 1;
  }
  copy_run(n);
}

}  // namespace mpisgd
