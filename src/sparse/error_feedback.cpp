#include "sparse/error_feedback.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "comm/state_blob.h"

namespace mpisgd {

uint64_t SparsifyOptions::k_for(uint32_t dim) const {
  if (k > 0) return std::min<uint64_t>(k, dim);
  const double d = density > 0 ? density : 0.01;
  return std::min<uint64_t>(dim, std::max<uint64_t>(dim > 0, static_cast<uint64_t>(std::ceil(d * dim))));
}

ErrorFeedback::ErrorFeedback(const SparsifyOptions& options, uint32_t dim)
    : k_(options.k_for(dim)), warmup_steps_(options.warmup_steps), keep_(options.keep),
      features_(std::max(1u, options.columns)),
      selector_(make_topk_selector(options.select.empty() ? "threshold-reuse" : options.select,
                                   TopkOptions{options.reuse_period, options.seed})) {
  sent_.reserve_pairs(dim);
}

const Stream<float>& ErrorFeedback::select(std::span<const Pair<float>> local) {
  add_to_residual(local, residual_, back_, merged_);
  back_.clear();
  if (step_++ < warmup_steps_) {  // the warm-up sends everything, and leaves the selector as it is
    kept_.resize(merged_.nnz());
    std::iota(kept_.begin(), kept_.end(), uint32_t{0});
  } else {
    const uint64_t k = keep_ > 0 ? static_cast<uint64_t>(std::ceil(keep_ * static_cast<double>(local.size()))) : k_;
    if (features_.columns() > 1) {
      features_.select(*selector_, merged_.index, merged_.value, k, kept_);
    } else {
      selector_->select(merged_.value, k, kept_);
    }
  }
  split_selected(merged_, kept_, sent_, residual_);
  return sent_;
}

void ErrorFeedback::take_back(const Stream<float>& dropped) {
  if (dropped.count() == 0) return;
  residual();  // folds in an earlier take_back's values, if no select() came between
  append_handed_back(dropped, back_);
}

void append_handed_back(const Stream<float>& dropped, SparseVector& out) {
  if (dropped.is_dense()) {
    for (uint32_t i = 0; i < dropped.count(); ++i) {
      if (dropped.values()[i] == 0.0f) continue;
      out.index.push_back(i);
      out.value.push_back(dropped.values()[i]);
    }
  } else {
    for (const Pair<float>& p : dropped.pairs()) {
      out.index.push_back(p.index);
      out.value.push_back(p.value);
    }
  }
}

const SparseVector& ErrorFeedback::residual() const {
  if (back_.nnz() > 0) {
    add_sparse(residual_, back_, sum_);
    std::swap(residual_, sum_);
    back_.clear();
  }
  return residual_;
}

void add_sparse(const SparseVector& a, const SparseVector& b, SparseVector& out) {
  out.clear();
  out.index.reserve(a.nnz() + b.nnz());
  out.value.reserve(a.nnz() + b.nnz());
  size_t i = 0, j = 0;
  auto push = [&](uint32_t index, float value) {
    if (value == 0.0f) return;
    out.index.push_back(index);
    out.value.push_back(value);
  };
  while (i < a.nnz() && j < b.nnz()) {
    if (a.index[i] < b.index[j]) {
      push(a.index[i], a.value[i]);
      ++i;
    } else if (b.index[j] < a.index[i]) {
      push(b.index[j], b.value[j]);
      ++j;
    } else {
      push(a.index[i], a.value[i] + b.value[j]);
      ++i;
      ++j;
    }
  }
  for (; i < a.nnz(); ++i) push(a.index[i], a.value[i]);
  for (; j < b.nnz(); ++j) push(b.index[j], b.value[j]);
}

void add_to_residual(std::span<const Pair<float>> local, const SparseVector& residual, const SparseVector& back,
                     SparseVector& out) {
  const size_t nl = local.size(), nr = residual.nnz(), nb = back.nnz();
  // Sized, not cleared: growing from the last call's size writes only the difference.
  if (out.index.size() < nl + nr + nb) {
    out.index.resize(nl + nr + nb);
    out.value.resize(nl + nr + nb);
  }
  const Pair<float>* l = local.data();
  const uint32_t *ri = residual.index.data(), *bi = back.index.data();
  const float *rv = residual.value.data(), *bv = back.value.data();
  uint32_t* oi = out.index.data();
  float* ov = out.value.data();
  size_t i = 0, r = 0, b = 0, o = 0;
  while (i < nl || b < nb) {
    const uint32_t at = std::min(i < nl ? l[i].index : UINT32_MAX, b < nb ? bi[b] : UINT32_MAX);
    // The residual's run below the next index of local or back: a tight copy, as the
    // residual holds no zeros.
    for (; r < nr && ri[r] < at; ++r, ++o) {
      oi[o] = ri[r];
      ov[o] = rv[r];
    }
    bool present = r < nr && ri[r] == at;
    float v = present ? rv[r++] : 0.0f;
    if (b < nb && bi[b] == at) {
      v = present ? v + bv[b] : bv[b];
      present = true;
      ++b;
    }
    if (i < nl && l[i].index == at) {
      v = present ? l[i].value + v : l[i].value;
      ++i;
    }
    oi[o] = at;
    ov[o] = v;
    o += v != 0.0f;
  }
  std::copy(ri + r, ri + nr, oi + o);
  std::copy(rv + r, rv + nr, ov + o);
  o += nr - r;
  out.index.resize(o);
  out.value.resize(o);
}

void ErrorFeedback::save_state(StateWriter& out) const {
  residual();
  out.put(step_);
  out.put_vector(residual_.index);
  out.put_vector(residual_.value);
  selector_->save_state(out);
}

void ErrorFeedback::load_state(StateReader& in) {
  step_ = in.get<uint64_t>();
  back_.clear();
  residual_.index = in.get_vector<uint32_t>();
  residual_.value = in.get_vector<float>();
  if (residual_.index.size() != residual_.value.size()) throw std::runtime_error("checkpoint residual is malformed");
  selector_->load_state(in);
}

}  // namespace mpisgd
