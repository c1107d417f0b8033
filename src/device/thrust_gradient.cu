#include "device/thrust_gradient.h"

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/tuple.h>
#include <thrust/unique.h>

#include "device/gpu_batch_device.h"
#include "device/thrust_functors.h"
#include "device/thrust_state.h"

namespace mpisgd {
namespace {

using thrust_detail::IsSet;
using thrust_detail::raw;

struct RowLength {
  const uint64_t* row_ptr;
  MPISGD_HD uint64_t operator()(uint64_t row) const { return row_ptr[row + 1] - row_ptr[row]; }
};

// Entry e's place in the CSR arrays, from its row in the batch (entry_row). One device
// thread an entry: a thread a row would leave a GPU idle on a batch of long rows.
struct EntryPlace {
  const uint64_t* rows;
  const uint64_t* start;
  const uint64_t* row_ptr;
  const uint32_t* entry_row;
  uint64_t* entry_at;
  MPISGD_HD void operator()(uint64_t e) const {
    const uint32_t b = entry_row[e];
    entry_at[e] = row_ptr[rows[b]] + (e - start[b]);
  }
};

// Row b's K margins from the gathered weights (entry_slot: the entry's feature among the
// batch's distinct ones), summed over its entries in order and scaled as Weights::dot and
// Weights::margins do: the CPU path's order, one device thread a row.
struct RowMargins {
  const uint64_t* start;
  const uint64_t* entry_at;
  const uint32_t* entry_slot;
  const float* value;
  const float* weights;  // U x K, feature-major
  double* margin;        // B x K
  uint32_t k;
  double weight_scale;
  MPISGD_HD void operator()(uint32_t b) const {
    double* m = margin + size_t{b} * k;
    for (uint32_t c = 0; c < k; ++c) m[c] = 0;
    for (uint64_t e = start[b]; e < start[b + 1]; ++e) {
      const float x = value[entry_at[e]];
      const float* w = weights + size_t{entry_slot[e]} * k;
      for (uint32_t c = 0; c < k; ++c) m[c] += static_cast<double>(w[c]) * x;
    }
    for (uint32_t c = 0; c < k; ++c) m[c] *= weight_scale;
  }
};

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
// RowMargins with a warp for each margin (row b, column c): the lanes take every 32nd
// entry of the row and a shuffle tree adds their sums, so a Webspam row's ~3,700 entries
// take ~116 steps of one warp instead of 3,700 of one thread. Another order of the same
// terms, so the margins agree with RowMargins' to rounding.
__global__ void margins_by_warp(const uint64_t* start, const uint64_t* entry_at, const uint32_t* entry_slot,
                                const float* value, const float* weights, double* margin, uint64_t margins,
                                uint32_t k, double weight_scale) {
  const uint64_t id = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (id >= margins) return;  // whole warps: the block size is a multiple of 32
  const uint64_t b = id / k, c = id % k;
  double m = 0;
  for (uint64_t e = start[b] + lane; e < start[b + 1]; e += 32)
    m += static_cast<double>(weights[size_t{entry_slot[e]} * k + c]) * value[entry_at[e]];
  for (unsigned offset = 16; offset > 0; offset /= 2) m += __shfl_down_sync(0xffffffffu, m, offset);
  if (lane == 0) margin[id] = m * weight_scale;
}
#endif

// Row b's loss and coefficients from its margins, as BatchGradient computes them.
struct RowCoefficients {
  const uint64_t* rows;
  const float* label;
  const double* margin;  // B x K
  double* derivative;    // B x K
  float* coef;           // B x K
  double* row_loss;      // B
  Loss loss;
  uint32_t k;
  float scale;
  MPISGD_HD void operator()(uint32_t b) const {
    const double* m = margin + size_t{b} * k;
    const float y = label[rows[b]];
    if (k == 1) {
      row_loss[b] = loss.value(m[0], y);
      coef[b] = static_cast<float>(scale * loss.derivative(m[0], y));
      return;
    }
    double* d = derivative + size_t{b} * k;
    const auto cls = static_cast<uint32_t>(y);
    loss.derivatives(m, k, cls, d);
    for (uint32_t c = 0; c < k; ++c) coef[size_t{b} * k + c] = static_cast<float>(scale * d[c]);
    row_loss[b] = loss.value(m, k, cls);
  }
};

// Slot id = u K + c (column c of the batch's u-th distinct feature): the sum of its
// entries' contributions coef x value in batch order (order: the entries sorted stably by
// feature, first[u] .. first[u + 1] those of feature u), skipping rows whose coefficient
// is zero as the CPU path does (they mark nothing).
struct SlotSum {
  const uint32_t* first;
  const uint32_t* order;
  const uint32_t* entry_row;
  const uint64_t* entry_at;
  const float* value;
  const float* coef;
  float* sum;
  uint8_t* touched;
  uint32_t k;
  MPISGD_HD void operator()(uint32_t id) const {
    const uint32_t u = id / k, c = id % k;
    float s = 0;
    bool hit = false;
    for (uint32_t q = first[u]; q < first[u + 1]; ++q) {
      const uint32_t e = order[q];
      const float cf = coef[size_t{entry_row[e]} * k + c];
      if (cf == 0) continue;
      s += cf * value[entry_at[e]];
      hit = true;
    }
    sum[id] = s;
    touched[id] = hit;
  }
};

// The segmented form of SlotSum (Slots::by_entry): term t = c E + q is entry q of the
// feature-sorted order in column c, keyed by its slot in column-major order, c U + u, so
// that each key's terms are adjacent; the reduction's i-th sum is slot SlotOfKey(i).
struct TermKey {
  const uint32_t* sorted_slot;
  uint64_t entries;
  uint32_t distinct;
  MPISGD_HD uint64_t operator()(uint64_t t) const {
    return t / entries * distinct + sorted_slot[t % entries];
  }
};
struct Term {
  const uint32_t* order;
  const uint32_t* entry_row;
  const uint64_t* entry_at;
  const float* value;
  const float* coef;
  uint64_t entries;
  uint32_t k;
  MPISGD_HD thrust::tuple<float, uint8_t> operator()(uint64_t t) const {
    const auto c = static_cast<uint32_t>(t / entries);
    const uint32_t e = order[t % entries];
    const float cf = coef[size_t{entry_row[e]} * k + c];
    if (cf == 0) return {0.0f, uint8_t{0}};  // as SlotSum, which skips it
    return {cf * value[entry_at[e]], uint8_t{1}};
  }
};
struct AddTerms {
  MPISGD_HD thrust::tuple<float, uint8_t> operator()(const thrust::tuple<float, uint8_t>& a,
                                                     const thrust::tuple<float, uint8_t>& b) const {
    return {thrust::get<0>(a) + thrust::get<0>(b), static_cast<uint8_t>(thrust::get<1>(a) | thrust::get<1>(b))};
  }
};
struct SlotOfKey {
  uint32_t distinct;
  uint32_t k;
  MPISGD_HD uint32_t operator()(uint32_t i) const { return i % distinct * k + i / distinct; }
};

// Slot id's stored weight (column id % K of the batch's feature id / K), read from the
// model the device holds.
struct HeldWeight {
  const uint32_t* feature;
  const float* model;
  uint32_t k;
  MPISGD_HD float operator()(uint32_t id) const { return model[size_t{feature[id / k]} * k + id % k]; }
};

// A touched slot's update pair: weight index feature x K + column, and its sum.
struct SlotPair {
  const uint32_t* feature;
  const float* sum;
  uint32_t k;
  MPISGD_HD Pair<float> operator()(uint32_t id) const { return {feature[id / k] * k + id % k, sum[id]}; }
};

}  // namespace

ThrustGradient::Slots ThrustGradient::default_slots() {
  return gpu_backend() == GpuBackend::cuda ? Slots::by_entry : Slots::by_slot;
}

ThrustGradient::ThrustGradient(const Dataset& data, uint32_t columns, Margins margins, int host_threads, Rows rows,
                               Slots slots)
    : state_(std::make_unique<State>()),
      columns_(columns < 1 ? 1 : columns),
      host_threads_(host_threads < 1 ? 1 : host_threads),
      margins_(gpu_backend() == GpuBackend::cuda ? margins : Margins::by_row),
      rows_(rows),
      slots_(slots) {
  if (rows_ == Rows::streamed) return;
  State& s = *state_;
  s.row_ptr.assign(data.row_ptr.data(), data.row_ptr.data() + data.row_ptr.size());
  s.index.assign(data.index.data(), data.index.data() + data.index.size());
  s.value.assign(data.value.data(), data.value.data() + data.value.size());
  s.label.assign(data.label.data(), data.label.data() + data.label.size());
}

ThrustGradient::~ThrustGradient() = default;

uint64_t ThrustGradient::batch_bytes(uint64_t batch, uint64_t longest_row, uint32_t columns) {
  const uint64_t entries = batch * longest_row;
  // Per entry: its row, place, feature, slot, sorted slot and order, the distinct feature
  // list and a sort's temporary copy of the keys; per slot (at most one per entry and
  // column): the weight, sum, touched flag and the compacted pair; per row: rows, start,
  // margins, derivatives, coefficients and loss.
  return entries * (40 + 21 * uint64_t{columns}) + batch * (24 + 20 * uint64_t{columns});
}

void ThrustGradient::stream_rows(const Dataset& data, std::span<const uint64_t> rows) {
  State& s = *state_;
  const size_t batch = rows.size();
  s.host_row_ptr.resize(batch + 1);
  s.host_row_ptr[0] = 0;
  for (size_t b = 0; b < batch; ++b)
    s.host_row_ptr[b + 1] = s.host_row_ptr[b] + (data.row_ptr[rows[b] + 1] - data.row_ptr[rows[b]]);
  const uint64_t entries = s.host_row_ptr[batch];
  s.host_index.resize(entries);
  s.host_value.resize(entries);
  s.host_label.resize(batch);
  for (size_t b = 0; b < batch; ++b) {
    const uint64_t from = data.row_ptr[rows[b]], length = s.host_row_ptr[b + 1] - s.host_row_ptr[b];
    std::copy_n(data.index.data() + from, length, s.host_index.begin() + static_cast<ptrdiff_t>(s.host_row_ptr[b]));
    std::copy_n(data.value.data() + from, length, s.host_value.begin() + static_cast<ptrdiff_t>(s.host_row_ptr[b]));
    s.host_label[b] = data.label[rows[b]];
  }
  s.row_ptr.assign(s.host_row_ptr.begin(), s.host_row_ptr.end());
  s.index.assign(s.host_index.begin(), s.host_index.end());
  s.value.assign(s.host_value.begin(), s.host_value.end());
  s.label.assign(s.host_label.begin(), s.host_label.end());
  s.rows.resize(batch);
  thrust::sequence(thrust::device(s.temporaries), s.rows.begin(), s.rows.end());
  traffic_.to_device += 8.0 * static_cast<double>(batch + 1) + 8.0 * static_cast<double>(entries) + 4.0 * batch;
}

uint32_t ThrustGradient::update_on_device(const Dataset& data, std::span<const uint64_t> rows, const Weights& w,
                                          const Loss& loss, float scale, BatchLoss& result) {
  State& s = *state_;
  const uint32_t k = columns_;
  const auto batch = static_cast<uint32_t>(rows.size());
  const auto on = thrust::device(s.temporaries);
  thrust::counting_iterator<uint32_t> zero(0);

  // 1. The batch's entries, and its distinct features, sorted.
  if (rows_ == Rows::streamed) {
    stream_rows(data, rows);
  } else {
    s.rows.assign(rows.begin(), rows.end());
    traffic_.to_device += 8.0 * batch;
  }
  s.start.resize(batch + 1);
  s.start[0] = 0;
  thrust::transform(on, s.rows.begin(), s.rows.end(), s.start.begin() + 1, RowLength{raw(s.row_ptr)});
  thrust::inclusive_scan(on, s.start.begin() + 1, s.start.end(), s.start.begin() + 1);
  const uint64_t entries = s.start[batch];
  s.entry_row.resize(entries);
  s.entry_at.resize(entries);
  s.entry_feature.resize(entries);
  s.entry_slot.resize(entries);
  thrust::counting_iterator<uint64_t> first_entry(0);
  thrust::upper_bound(on, s.start.begin() + 1, s.start.end(), first_entry, first_entry + entries, s.entry_row.begin());
  thrust::for_each(on, first_entry, first_entry + entries,
                   EntryPlace{raw(s.rows), raw(s.start), raw(s.row_ptr), raw(s.entry_row), raw(s.entry_at)});
  thrust::gather(on, s.entry_at.begin(), s.entry_at.end(), s.index.begin(), s.entry_feature.begin());
  s.feature = s.entry_feature;
  thrust::sort(on, s.feature.begin(), s.feature.end());
  s.feature.erase(thrust::unique(on, s.feature.begin(), s.feature.end()), s.feature.end());
  const auto distinct = static_cast<uint32_t>(s.feature.size());
  thrust::lower_bound(on, s.feature.begin(), s.feature.end(), s.entry_feature.begin(), s.entry_feature.end(),
                      s.entry_slot.begin());

  // 2. Their stored weights: read where the device holds the model, else gathered on the
  // host and copied up.
  s.weights.resize(size_t{distinct} * k);
  if (holding_) {
    thrust::transform(on, zero, zero + distinct * k, s.weights.begin(), HeldWeight{raw(s.feature), raw(s.model), k});
  } else {
    s.host_feature.resize(distinct);
    thrust::copy(s.feature.begin(), s.feature.end(), s.host_feature.begin());
    s.host_weights.resize(size_t{distinct} * k);
    // Random reads over the whole model, a batch of long rows' largest host cost: spread
    // over the rank's threads, which have nothing else to do during a device call.
#pragma omp parallel for num_threads(host_threads_) schedule(static)
    for (uint32_t u = 0; u < distinct; ++u)
      for (uint32_t c = 0; c < k; ++c) s.host_weights[size_t{u} * k + c] = w.stored(s.host_feature[u] * k + c);
    thrust::copy(s.host_weights.begin(), s.host_weights.end(), s.weights.begin());
    traffic_.from_device += 4.0 * distinct;
    traffic_.to_device += 4.0 * distinct * k;
  }
  const double weight_scale = holding_ ? held_.scale : w.scale();

  // 3. Each row's margins, loss and coefficients.
  s.margin.resize(size_t{batch} * k);
  s.derivative.resize(size_t{batch} * k);
  s.coef.resize(size_t{batch} * k);
  s.row_loss.resize(batch);
  if (margins_ == Margins::by_warp) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
    const uint64_t margins = uint64_t{batch} * k, block = 256;
    margins_by_warp<<<(margins * 32 + block - 1) / block, block>>>(raw(s.start), raw(s.entry_at), raw(s.entry_slot),
                                                                   raw(s.value), raw(s.weights), raw(s.margin),
                                                                   margins, k, weight_scale);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
      throw std::runtime_error(std::string("--device gpu: the margins kernel did not start: ") + cudaGetErrorString(e));
#endif
  } else {
    thrust::for_each(on, zero, zero + batch,
                     RowMargins{raw(s.start), raw(s.entry_at), raw(s.entry_slot), raw(s.value), raw(s.weights),
                                raw(s.margin), k, weight_scale});
  }
  thrust::for_each(on, zero, zero + batch,
                   RowCoefficients{raw(s.rows), raw(s.label), raw(s.margin), raw(s.derivative), raw(s.coef),
                                   raw(s.row_loss), loss, k, scale});
  s.host_loss.resize(batch);
  thrust::copy(s.row_loss.begin(), s.row_loss.end(), s.host_loss.begin());
  for (double l : s.host_loss) result.loss_sum += l;

  // 4. Each slot's sum over the batch (Slots), and the touched ones compacted.
  s.sorted_slot = s.entry_slot;
  s.order.resize(entries);
  thrust::sequence(on, s.order.begin(), s.order.end());
  thrust::stable_sort_by_key(on, s.sorted_slot.begin(), s.sorted_slot.end(), s.order.begin());
  const uint32_t slots = distinct * k;
  s.sum.resize(slots);
  s.touched.resize(slots);
  if (slots_ == Slots::by_entry) {
    thrust::counting_iterator<uint64_t> term(0);
    const auto key = thrust::make_transform_iterator(term, TermKey{raw(s.sorted_slot), entries, distinct});
    const auto value = thrust::make_transform_iterator(
        term, Term{raw(s.order), raw(s.entry_row), raw(s.entry_at), raw(s.value), raw(s.coef), entries, k});
    const auto slot = thrust::make_transform_iterator(zero, SlotOfKey{distinct, k});
    const auto into = thrust::make_permutation_iterator(thrust::make_zip_iterator(s.sum.begin(), s.touched.begin()), slot);
    thrust::reduce_by_key(on, key, key + entries * k, value, thrust::make_discard_iterator(), into,
                          thrust::equal_to<uint64_t>(), AddTerms{});
  } else {
    s.first.resize(size_t{distinct} + 1);
    thrust::lower_bound(on, s.sorted_slot.begin(), s.sorted_slot.end(), zero, zero + distinct + 1, s.first.begin());
    thrust::for_each(on, zero, zero + slots,
                     SlotSum{raw(s.first), raw(s.order), raw(s.entry_row), raw(s.entry_at), raw(s.value), raw(s.coef),
                             raw(s.sum), raw(s.touched), k});
  }
  s.touched_id.resize(slots);
  const auto nnz =
      static_cast<uint32_t>(thrust::copy_if(on, zero, zero + slots, s.touched.begin(), s.touched_id.begin(), IsSet{}) -
                            s.touched_id.begin());
  s.out.resize(nnz);
  thrust::transform(on, s.touched_id.begin(), s.touched_id.begin() + nnz, s.out.begin(),
                    SlotPair{raw(s.feature), raw(s.sum), k});

  // Up: the first start; down: the entry count, the rows' losses and the pair count.
  traffic_.to_device += 8;
  traffic_.from_device += 8 + 8.0 * batch + 4;
  result.nnz = nnz;
  return nnz;
}

void ThrustGradient::copy_update_down(uint32_t nnz, Stream<float>& out) {
  out.reserve_pairs(nnz);
  out.set_sparse(nnz);
  thrust::copy(state_->out.begin(), state_->out.begin() + nnz, out.pairs().data());
  traffic_.from_device += 8.0 * nnz;
}

BatchLoss ThrustGradient::compute(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                                  float scale, Stream<float>& out) {
  BatchLoss result{0, rows.size(), 0};
  if (rows.empty()) {
    if (feedback_) feedback_->take_update(nullptr, 0);
    out.set_sparse(0);
    return result;
  }
  const auto began = std::chrono::steady_clock::now();
  const uint32_t nnz = update_on_device(data, rows, w, loss, scale, result);
  if (feedback_) {
    feedback_->take_update(raw(state_->out), nnz);
    out.set_sparse(0);
  } else {
    copy_update_down(nnz, out);
  }
  traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return result;
}

}  // namespace mpisgd
