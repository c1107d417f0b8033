#include "device/thrust_gradient.h"

#include <chrono>
#include <vector>

#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/for_each.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>

namespace mpisgd {
namespace {

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}
template <class T>
const T* raw(const thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

struct RowLength {
  const uint64_t* row_ptr;
  MPISGD_HD uint64_t operator()(uint64_t row) const { return row_ptr[row + 1] - row_ptr[row]; }
};

// Entry e of the batch: its row's place in the batch and its place in the CSR arrays.
struct ListEntries {
  const uint64_t* rows;
  const uint64_t* start;
  const uint64_t* row_ptr;
  uint32_t* entry_row;
  uint64_t* entry_at;
  MPISGD_HD void operator()(uint32_t b) const {
    uint64_t e = start[b];
    for (uint64_t j = row_ptr[rows[b]]; j < row_ptr[rows[b] + 1]; ++j, ++e) {
      entry_row[e] = b;
      entry_at[e] = j;
    }
  }
};

// Row b's K margins from the gathered weights (entry_slot: the entry's feature among the
// batch's distinct ones), summed over its entries in order and scaled as Weights::dot and
// Weights::margins do; then its loss and coefficients as BatchGradient computes them.
struct RowCoefficients {
  const uint64_t* rows;
  const uint64_t* start;
  const uint64_t* entry_at;
  const uint32_t* entry_slot;
  const float* value;
  const float* label;
  const float* weights;  // U x K, feature-major
  double* margin;        // B x K
  double* derivative;    // B x K
  float* coef;           // B x K
  double* row_loss;      // B
  Loss loss;
  uint32_t k;
  double weight_scale;
  float scale;
  MPISGD_HD void operator()(uint32_t b) const {
    double* m = margin + size_t{b} * k;
    for (uint32_t c = 0; c < k; ++c) m[c] = 0;
    for (uint64_t e = start[b]; e < start[b + 1]; ++e) {
      const float x = value[entry_at[e]];
      const float* w = weights + size_t{entry_slot[e]} * k;
      for (uint32_t c = 0; c < k; ++c) m[c] += static_cast<double>(w[c]) * x;
    }
    for (uint32_t c = 0; c < k; ++c) m[c] *= weight_scale;
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

struct IsSet {
  MPISGD_HD bool operator()(uint8_t x) const { return x != 0; }
};

// A touched slot's weight index: feature x K + column.
struct SlotIndex {
  const uint32_t* feature;
  uint32_t k;
  MPISGD_HD uint32_t operator()(uint32_t id) const { return feature[id / k] * k + id % k; }
};

}  // namespace

struct ThrustGradient::State {
  // The rank's rows, uploaded once.
  thrust::device_vector<uint64_t> row_ptr;
  thrust::device_vector<uint32_t> index;
  thrust::device_vector<float> value, label;
  // Per batch, kept to be reused: B rows, E entries, U distinct features.
  thrust::device_vector<uint64_t> rows, start, entry_at;                // B, B + 1, E
  thrust::device_vector<uint32_t> entry_row, entry_feature, entry_slot;  // E
  thrust::device_vector<uint32_t> feature, sorted_slot, order, first;    // U, E, E, U + 1
  thrust::device_vector<float> weights, sum, coef, out_value;            // U K, U K, B K, nnz
  thrust::device_vector<uint8_t> touched;                                // U K
  thrust::device_vector<uint32_t> touched_id, out_index;                 // nnz
  thrust::device_vector<double> margin, derivative, row_loss;            // B K, B K, B
  std::vector<uint32_t> host_feature, host_index;
  std::vector<float> host_weights, host_value;
  std::vector<double> host_loss;
};

ThrustGradient::ThrustGradient(const Dataset& data, uint32_t columns)
    : state_(std::make_unique<State>()), columns_(columns < 1 ? 1 : columns) {
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

BatchLoss ThrustGradient::compute(const Dataset&, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                                  float scale, Stream<float>& out) {
  State& s = *state_;
  const uint32_t k = columns_;
  const auto batch = static_cast<uint32_t>(rows.size());
  BatchLoss result{0, rows.size(), 0};
  if (batch == 0) {
    out.set_sparse(0);
    return result;
  }
  const auto began = std::chrono::steady_clock::now();

  // 1. The batch's entries, and its distinct features, sorted.
  s.rows.assign(rows.begin(), rows.end());
  s.start.resize(batch + 1);
  s.start[0] = 0;
  thrust::transform(s.rows.begin(), s.rows.end(), s.start.begin() + 1, RowLength{raw(s.row_ptr)});
  thrust::inclusive_scan(s.start.begin() + 1, s.start.end(), s.start.begin() + 1);
  const uint64_t entries = s.start[batch];
  s.entry_row.resize(entries);
  s.entry_at.resize(entries);
  s.entry_feature.resize(entries);
  s.entry_slot.resize(entries);
  thrust::counting_iterator<uint32_t> zero(0);
  thrust::for_each(zero, zero + batch,
                   ListEntries{raw(s.rows), raw(s.start), raw(s.row_ptr), raw(s.entry_row), raw(s.entry_at)});
  thrust::gather(s.entry_at.begin(), s.entry_at.end(), s.index.begin(), s.entry_feature.begin());
  s.feature = s.entry_feature;
  thrust::sort(s.feature.begin(), s.feature.end());
  s.feature.erase(thrust::unique(s.feature.begin(), s.feature.end()), s.feature.end());
  const auto distinct = static_cast<uint32_t>(s.feature.size());
  thrust::lower_bound(s.feature.begin(), s.feature.end(), s.entry_feature.begin(), s.entry_feature.end(),
                      s.entry_slot.begin());

  // 2. Their stored weights, gathered on the host where the model lives.
  s.host_feature.resize(distinct);
  thrust::copy(s.feature.begin(), s.feature.end(), s.host_feature.begin());
  s.host_weights.resize(size_t{distinct} * k);
  for (uint32_t u = 0; u < distinct; ++u)
    for (uint32_t c = 0; c < k; ++c) s.host_weights[size_t{u} * k + c] = w.stored(s.host_feature[u] * k + c);
  s.weights.assign(s.host_weights.begin(), s.host_weights.end());

  // 3. Each row's margins, loss and coefficients.
  s.margin.resize(size_t{batch} * k);
  s.derivative.resize(size_t{batch} * k);
  s.coef.resize(size_t{batch} * k);
  s.row_loss.resize(batch);
  thrust::for_each(zero, zero + batch,
                   RowCoefficients{raw(s.rows), raw(s.start), raw(s.entry_at), raw(s.entry_slot), raw(s.value),
                                   raw(s.label), raw(s.weights), raw(s.margin), raw(s.derivative), raw(s.coef),
                                   raw(s.row_loss), loss, k, w.scale(), scale});
  s.host_loss.resize(batch);
  thrust::copy(s.row_loss.begin(), s.row_loss.end(), s.host_loss.begin());
  for (double l : s.host_loss) result.loss_sum += l;

  // 4. Each slot's sum over the batch, in batch order, and the touched ones compacted.
  s.sorted_slot = s.entry_slot;
  s.order.resize(entries);
  thrust::sequence(s.order.begin(), s.order.end());
  thrust::stable_sort_by_key(s.sorted_slot.begin(), s.sorted_slot.end(), s.order.begin());
  s.first.resize(size_t{distinct} + 1);
  thrust::lower_bound(s.sorted_slot.begin(), s.sorted_slot.end(), zero, zero + distinct + 1, s.first.begin());
  const uint32_t slots = distinct * k;
  s.sum.resize(slots);
  s.touched.resize(slots);
  thrust::for_each(zero, zero + slots,
                   SlotSum{raw(s.first), raw(s.order), raw(s.entry_row), raw(s.entry_at), raw(s.value), raw(s.coef),
                           raw(s.sum), raw(s.touched), k});
  s.touched_id.resize(slots);
  const auto nnz =
      static_cast<uint32_t>(thrust::copy_if(zero, zero + slots, s.touched.begin(), s.touched_id.begin(), IsSet{}) -
                            s.touched_id.begin());
  s.out_index.resize(nnz);
  s.out_value.resize(nnz);
  thrust::transform(s.touched_id.begin(), s.touched_id.begin() + nnz, s.out_index.begin(),
                    SlotIndex{raw(s.feature), k});
  thrust::gather(s.touched_id.begin(), s.touched_id.begin() + nnz, s.sum.begin(), s.out_value.begin());

  // The pairs, down into the update stream.
  s.host_index.resize(nnz);
  s.host_value.resize(nnz);
  thrust::copy(s.out_index.begin(), s.out_index.end(), s.host_index.begin());
  thrust::copy(s.out_value.begin(), s.out_value.end(), s.host_value.begin());
  out.reserve_pairs(nnz);
  out.set_sparse(nnz);
  Pair<float>* pairs = out.pairs().data();
  for (uint32_t j = 0; j < nnz; ++j) pairs[j] = {s.host_index[j], s.host_value[j]};
  result.nnz = nnz;

  // Up: the batch's rows and its features' weights; down: the entry count, the features,
  // the rows' losses, the pair count and the pairs.
  traffic_.to_device += 8.0 * batch + 8 + 4.0 * distinct * k;
  traffic_.from_device += 8 + 4.0 * distinct + 8.0 * batch + 4 + 8.0 * nnz;
  traffic_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return result;
}

BatchLoss ThrustGradient::compute_and_step(const Dataset& data, std::span<const uint64_t> rows, Weights& w,
                                           const Loss& loss, float scale, double eta) {
  BatchLoss result = compute(data, rows, w, loss, scale, own_);
  w.step_pairs(eta, own_.pairs());
  return result;
}

}  // namespace mpisgd
