#include "sgd/batch_gradient.h"

#include <algorithm>
#include <bit>

#include <omp.h>

namespace mpisgd {

BatchGradient::BatchGradient(uint32_t dim, int threads)
    : dim_(dim),
      threads_(std::max(1, threads)),
      touched_((dim + 63) / 64, 0),
      thread_loss_(static_cast<size_t>(threads_)),
      thread_offset_(static_cast<size_t>(threads_) + 1) {}

uint32_t BatchGradient::range_begin(int t, int nt) const {
  if (t >= nt) return dim_;
  return static_cast<uint32_t>(static_cast<uint64_t>(dim_) * static_cast<uint64_t>(t) / static_cast<uint64_t>(nt)) & ~63u;
}

size_t BatchGradient::touched_count(size_t w0, size_t w1) const {
  size_t count = 0;
  for (size_t k = w0; k < w1; ++k) count += static_cast<size_t>(std::popcount(touched_[k]));
  return count;
}

void BatchGradient::extract(Weights& w, size_t w0, size_t w1, size_t at, SparseVector& out) {
  for (size_t k = w0; k < w1; ++k) {
    for (uint64_t bits = touched_[k]; bits; bits &= bits - 1) {
      uint32_t i = static_cast<uint32_t>(k * 64 + static_cast<size_t>(std::countr_zero(bits)));
      out.index[at] = i;
      out.value[at] = w.scratch(i);
      w.scratch(i) = 0;
      ++at;
    }
    touched_[k] = 0;
  }
}

BatchLoss BatchGradient::compute_one_thread(const Dataset& data, std::span<const uint64_t> rows, Weights& w,
                                            const Loss& loss, float scale) {
  BatchLoss result{0, rows.size()};
  for (size_t r = 0; r < rows.size(); ++r) {
    prefetch_ahead(data, rows, r, rows.size(), w);
    const uint64_t row = rows[r];
    auto index = data.row_index(row);
    auto value = data.row_value(row);
    double p = w.dot(index, value);
    double y = data.label[row];
    result.loss_sum += loss.value(p, y);
    const float c = static_cast<float>(scale * loss.derivative(p, y));
    if (c != 0) accumulate(w, c, index, value, 0, dim_);  // hinge rows beyond the margin add nothing
  }
  return result;
}

BatchLoss BatchGradient::compute(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                                 float scale, SparseVector& out) {
  if (threads_ == 1) {
    BatchLoss result = compute_one_thread(data, rows, w, loss, scale);
    size_t count = touched_count(0, touched_.size());
    out.index.resize(count);
    out.value.resize(count);
    extract(w, 0, touched_.size(), 0, out);
    return result;
  }

  const size_t batch = rows.size();
  coef_.resize(batch);
  std::fill(thread_loss_.begin(), thread_loss_.end(), 0.0);
  // The dot products read w while other threads write scratch lanes: different floats,
  // so no race, and every dot product is done (barrier) before the first scratch write.
#pragma omp parallel num_threads(threads_)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();

    double loss_sum = 0;
    const size_t end = batch * (t + 1) / nt;
    for (size_t r = batch * t / nt; r < end; ++r) {
      prefetch_ahead(data, rows, r, end, w);
      uint64_t row = rows[r];
      double p = w.dot(data.row_index(row), data.row_value(row));
      double y = data.label[row];
      loss_sum += loss.value(p, y);
      coef_[r] = static_cast<float>(scale * loss.derivative(p, y));
    }
    thread_loss_[static_cast<size_t>(t)] = loss_sum;
#pragma omp barrier

    const uint32_t lo = range_begin(t, nt), hi = range_begin(t + 1, nt);
    for (size_t r = 0; r < batch; ++r)
      if (coef_[r] != 0) accumulate(w, coef_[r], data.row_index(rows[r]), data.row_value(rows[r]), lo, hi);

    const size_t w0 = lo / 64, w1 = (static_cast<size_t>(hi) + 63) / 64;
    thread_offset_[static_cast<size_t>(t) + 1] = touched_count(w0, w1);
#pragma omp barrier
#pragma omp single
    {
      thread_offset_[0] = 0;
      for (int k = 0; k < nt; ++k) thread_offset_[static_cast<size_t>(k) + 1] += thread_offset_[static_cast<size_t>(k)];
      out.index.resize(thread_offset_[static_cast<size_t>(nt)]);
      out.value.resize(thread_offset_[static_cast<size_t>(nt)]);
    }
    extract(w, w0, w1, thread_offset_[static_cast<size_t>(t)], out);
  }

  BatchLoss result;
  result.rows = batch;
  for (double l : thread_loss_) result.loss_sum += l;
  return result;
}

}  // namespace mpisgd
