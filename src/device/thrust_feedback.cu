#include "device/thrust_feedback.h"

#include <stdexcept>
#include <vector>

#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/merge.h>
#include <thrust/reduce.h>
#include <thrust/remove.h>
#include <thrust/scatter.h>
#include <thrust/transform.h>
#include <thrust/tuple.h>

#include "comm/state_blob.h"
#include "device/thrust_functors.h"
#include "device/thrust_top_k.h"
#include "model/host_device.h"
#include "sparse/topk_select.h"

namespace mpisgd {
namespace {

using thrust_detail::AtLeast;
using thrust_detail::IsSet;
using thrust_detail::Magnitude;

// A sparse vector in device memory: ascending indices, no zeros.
struct DeviceSparse {
  thrust::device_vector<uint32_t> index;
  thrust::device_vector<float> value;
  size_t size() const { return index.size(); }
  void clear() {
    index.clear();
    value.clear();
  }
};

struct PairIndex {
  MPISGD_HD uint32_t operator()(const Pair<float>& p) const { return p.index; }
};
struct PairValue {
  MPISGD_HD float operator()(const Pair<float>& p) const { return p.value; }
};
struct MakePair {
  MPISGD_HD Pair<float> operator()(uint32_t i, float v) const { return {i, v}; }
};
struct IsZero {
  MPISGD_HD bool operator()(const thrust::tuple<uint32_t, float>& p) const { return thrust::get<1>(p) == 0.0f; }
};

// out = a + b index by index (a's value first where both hold one), exact zeros dropped:
// error feedback's sums (sparse/error_feedback.cpp). Each input holds an index once, so a
// sum has two terms and their order cannot change its bits.
void add_sorted(const DeviceSparse& a, const DeviceSparse& b, DeviceSparse& merged, DeviceSparse& out,
                thrust_detail::TemporaryCache& temporaries) {
  const auto on = thrust::device(temporaries);
  const size_t n = a.size() + b.size();
  merged.index.resize(n);
  merged.value.resize(n);
  thrust::merge_by_key(on, a.index.begin(), a.index.end(), b.index.begin(), b.index.end(),
                       a.value.begin(), b.value.begin(), merged.index.begin(), merged.value.begin());
  out.index.resize(n);
  out.value.resize(n);
  const auto ends = thrust::reduce_by_key(on, merged.index.begin(), merged.index.end(),
                                          merged.value.begin(), out.index.begin(), out.value.begin());
  const auto first = thrust::make_zip_iterator(thrust::make_tuple(out.index.begin(), out.value.begin()));
  const auto last = thrust::make_zip_iterator(thrust::make_tuple(ends.first, ends.second));
  const auto kept = static_cast<size_t>(thrust::remove_if(on, first, last, IsZero{}) - first);
  out.index.resize(kept);
  out.value.resize(kept);
}

void upload(const SparseVector& host, DeviceSparse& device) {
  device.index.assign(host.index.begin(), host.index.end());
  device.value.assign(host.value.begin(), host.value.end());
}

}  // namespace

struct ThrustFeedback::State {
  DeviceSparse residual, back, local, merged, scratch;
  thrust::device_vector<uint32_t> kept;
  thrust::device_vector<uint8_t> keep;
  thrust_detail::TopKScratch top_k;
  thrust::device_vector<Pair<float>> sent;
  thrust_detail::TemporaryCache temporaries;
};

bool ThrustFeedback::supports(const SparsifyOptions& options) {
  const bool selection = options.select.empty() || options.select == "threshold-reuse" || options.select == "exact";
  return selection && options.columns <= 1 && options.keep == 0;
}

uint64_t ThrustFeedback::bytes_at_most(uint32_t dim) { return 93 * static_cast<uint64_t>(dim); }

ThrustFeedback::ThrustFeedback(const SparsifyOptions& options, uint32_t dim)
    : state_(std::make_unique<State>()), k_(options.k_for(dim)), warmup_steps_(options.warmup_steps),
      reuse_(options.select != "exact"), period_(options.reuse_period) {
  if (!supports(options)) throw std::invalid_argument("--device gpu selects top-k by exact or threshold-reuse only");
  if (reuse_ && period_ == 0) throw std::invalid_argument("top-k threshold-reuse: the reuse period must be at least 1");
  sent_.reserve_pairs(dim);
}

ThrustFeedback::~ThrustFeedback() = default;

void ThrustFeedback::take_update(const Pair<float>* device_pairs, uint32_t count) {
  State& s = *state_;
  const auto on = thrust::device(s.temporaries);
  const auto pairs = thrust::device_pointer_cast(device_pairs);
  s.local.index.resize(count);
  s.local.value.resize(count);
  thrust::transform(on, pairs, pairs + count, s.local.index.begin(), PairIndex{});
  thrust::transform(on, pairs, pairs + count, s.local.value.begin(), PairValue{});
}

void ThrustFeedback::fold_back() const {
  State& s = *state_;
  if (s.back.size() == 0) return;
  add_sorted(s.residual, s.back, s.merged, s.scratch, s.temporaries);
  s.residual.index.swap(s.scratch.index);
  s.residual.value.swap(s.scratch.value);
  s.back.clear();
}

uint32_t ThrustFeedback::keep_exact(uint64_t k) {
  State& s = *state_;
  const uint32_t t =
      thrust_detail::top_k_positions(s.merged.value.data(), s.merged.size(), k, s.kept, s.top_k, s.temporaries);
  const auto on = thrust::device(s.temporaries);
  thrust::fill(on, s.keep.begin(), s.keep.end(), uint8_t{0});
  const auto one = thrust::make_constant_iterator(uint8_t{1});
  thrust::scatter(on, one, one + k, s.kept.begin(), s.keep.begin());
  return t;
}

const Stream<float>& ThrustFeedback::select(std::span<const Pair<float>>) {
  State& s = *state_;
  const auto on = thrust::device(s.temporaries);
  fold_back();
  add_sorted(s.local, s.residual, s.scratch, s.merged, s.temporaries);
  const size_t n = s.merged.size();
  s.keep.resize(n);
  bool positions = false;  // s.kept already holds the kept positions (an exact selection's)
  if (step_++ < warmup_steps_) {  // the warm-up sends everything, and leaves the selector as it is
    thrust::fill(on, s.keep.begin(), s.keep.end(), uint8_t{1});
  } else {
    // As the host's selectors: threshold-reuse counts every call, and k = 0 or k >= n keep
    // nothing or everything without touching a threshold.
    const bool fresh = reuse_ && (selections_++ % period_ == 0 || !threshold_);
    if (k_ == 0 || k_ >= n) {
      thrust::fill(on, s.keep.begin(), s.keep.end(), uint8_t{k_ != 0});
    } else {
      const auto mag = thrust::make_transform_iterator(s.merged.value.begin(), Magnitude{});
      // The host selector's band (reuse_band, sparse/topk_select.h): a reused threshold
      // stands while its count is inside; else this call's exact one replaces it.
      const bool reused = reuse_ && !fresh &&
                          reuse_band(k_).holds(static_cast<uint64_t>(
                              thrust::count_if(on, mag, mag + n, AtLeast{*threshold_})));
      if (reused) {
        thrust::transform(on, mag, mag + n, s.keep.begin(), AtLeast{*threshold_});
      } else {
        const uint32_t t = keep_exact(k_);
        if (reuse_) threshold_ = t;
        positions = true;
      }
    }
  }
  // The kept pairs go down to be sent; the others stay as the residual.
  if (!positions) {
    thrust::counting_iterator<uint32_t> zero(0);
    s.kept.resize(n);
    s.kept.resize(static_cast<size_t>(
        thrust::copy_if(on, zero, zero + n, s.keep.begin(), s.kept.begin(), IsSet{}) - s.kept.begin()));
  }
  const auto kept = static_cast<uint32_t>(s.kept.size());
  s.sent.resize(kept);
  thrust::transform(on, thrust::make_permutation_iterator(s.merged.index.begin(), s.kept.begin()),
                    thrust::make_permutation_iterator(s.merged.index.begin(), s.kept.begin() + kept),
                    thrust::make_permutation_iterator(s.merged.value.begin(), s.kept.begin()), s.sent.begin(),
                    MakePair{});
  sent_.reserve_pairs(kept);
  sent_.set_sparse(kept);
  thrust::copy(s.sent.begin(), s.sent.end(), sent_.pairs().data());
  down_ += 8.0 * kept + 4;
  s.residual.index.resize(n - kept);
  s.residual.value.resize(n - kept);
  thrust::copy_if(on, s.merged.index.begin(), s.merged.index.end(), s.keep.begin(),
                  s.residual.index.begin(), thrust::logical_not<uint8_t>());
  thrust::copy_if(on, s.merged.value.begin(), s.merged.value.end(), s.keep.begin(),
                  s.residual.value.begin(), thrust::logical_not<uint8_t>());
  return sent_;
}

void ThrustFeedback::take_back(const Stream<float>& dropped) {
  if (dropped.count() == 0) return;
  fold_back();
  SparseVector back;
  append_handed_back(dropped, back);
  upload(back, state_->back);
  up_ += 8.0 * back.index.size();
}

const SparseVector& ThrustFeedback::residual() const {
  fold_back();
  const State& s = *state_;
  residual_.index.resize(s.residual.size());
  residual_.value.resize(s.residual.size());
  thrust::copy(s.residual.index.begin(), s.residual.index.end(), residual_.index.begin());
  thrust::copy(s.residual.value.begin(), s.residual.value.end(), residual_.value.begin());
  return residual_;
}

// The layout of ErrorFeedback::save_state and its selector's (exact: nothing;
// threshold-reuse: its call count and threshold).
void ThrustFeedback::save_state(StateWriter& out) const {
  const SparseVector& r = residual();
  out.put(step_);
  out.put_vector(r.index);
  out.put_vector(r.value);
  if (!reuse_) return;
  out.put(selections_);
  out.put(threshold_.has_value());
  out.put(threshold_.value_or(0));
}

void ThrustFeedback::load_state(StateReader& in) {
  step_ = in.get<uint64_t>();
  state_->back.clear();
  residual_.index = in.get_vector<uint32_t>();
  residual_.value = in.get_vector<float>();
  if (residual_.index.size() != residual_.value.size()) throw std::runtime_error("checkpoint residual is malformed");
  upload(residual_, state_->residual);
  if (!reuse_) return;
  selections_ = in.get<uint64_t>();
  const bool has = in.get<bool>();
  const auto t = in.get<uint32_t>();
  threshold_ = has ? std::optional<uint32_t>(t) : std::nullopt;
}

}  // namespace mpisgd
