#pragma once
// The mini-batch gradient of one rank (thesis Algorithm 1, line 8), computed by T OpenMP
// threads into a sparse update sorted by index:
//   u = scale * sum_{r in batch} f'(w^T x_r, y_r) x_r
// written as the pairs of a stream (sparse/stream.h), the form the strategies and
// collectives send and the weights step with, so it is never copied into another.
// The sum builds up in the weights' scratch lane (see Weights), each touched index marked
// in a bitmap, and each bitmap word that holds a mark in a summary bitmap above it (one
// per thread, so that threads never share a summary word); walking the summary's marked
// words in order then yields the update sorted, with no sort, in O(N/4096 + touched words
// + nnz) per batch. A walk of the whole bitmap, O(N/64), was a fifth of a URL-like run's
// time at P = 2 (3.2M features, 100-row batches).
// With one thread a row's entries are added right after its dot product, while its
// cache lines are loaded. With T > 1 the index space is split: thread t owns [lo_t, hi_t)
// (multiples of 64, so bitmap words are never shared, holding equal shares of the
// expected work) and works on every row's entries in that range: for a chunk of rows,
// first the partial dot products, then, once every thread has published its partials of
// the chunk, each row's derivative from the summed partials and the adds. Splitting the
// rows instead would load the lines of every feature the threads' rows share into both
// cores' caches; split by index, each line is loaded by one thread. The cost is that a
// dot product sums T partials, so models of different T agree to rounding; the same T
// gives the same bits.
// With K >= 3 classes (model/loss.h) the weights hold K columns feature-major: a row's K
// margins come from one pass over its entries, and its update adds d_c x to column c for
// each class whose derivative d_c is not zero, in slots i K + c. Thread ranges then start
// at multiples of K as well, so that each feature's K slots belong to one thread.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "data/dataset.h"
#include "device/batch_device.h"
#include "model/loss.h"
#include "model/weights.h"
#include "sparse/stream.h"

namespace mpisgd {

class BatchGradient : public BatchDevice {
 public:
  // `data` is the data the batches of `batch` rows will come from: how often each feature
  // occurs in it sets the threads' ranges. `dim` counts weights: features x `columns`.
  BatchGradient(const Dataset& data, uint32_t dim, int threads, uint64_t batch, uint32_t columns = 1);

  // Reads w and uses its scratch lane, which it leaves zero again. `out` becomes a sparse
  // stream over [0, N), however many pairs: the strategy applies its dense switch.
  BatchLoss compute(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                    float scale, Stream<float>& out) override {
    return run(data, rows, w, loss, scale, &out, 0);
  }
  // As compute(), but takes the step with rate eta on w as the update is drained from the
  // scratch lane, instead of handing it out: when the exchange would apply the update as
  // it is (Strategy::passes_through), this saves a second pass over the update's weight
  // slots (docs/performance.md#figures-behind-the-code).
  BatchLoss compute_and_step(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                             float scale, double eta) override {
    return run(data, rows, w, loss, scale, nullptr, eta);
  }

 private:
  // Start of thread t's index range of nt, from the cumulative work per bitmap word.
  uint32_t range_begin(int t, int nt) const;
  BatchLoss compute_one_thread(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                               float scale);
  // A row's loss from its K margins m (its class in its label), its coefficients
  // scale x d_c into `coef`.
  static double class_coefficients(const Loss& loss, std::span<const double> m, float label, float scale,
                                   std::span<double> d, std::span<float> coef) {
    const auto y = static_cast<uint32_t>(label);
    loss.derivatives(m, y, d);
    for (size_t c = 0; c < m.size(); ++c) coef[c] = static_cast<float>(scale * d[c]);
    return loss.value(m, y);
  }
  // Adds c * x into the scratch lane and marks x's indices, their words in `summary`.
  void add(Weights& w, float c, std::span<const uint32_t> index, std::span<const float> value, uint64_t* summary) {
    for (size_t j = 0; j < index.size(); ++j) {
      uint32_t i = index[j];
      w.scratch(i) += c * value[j];
      mark(i, summary);
    }
  }
  // As add(), for K columns: coef[c] x into column c wherever coef[c] is not zero. When
  // every column moves (one-vs-rest and softmax rows, nearly always) a feature's K slots
  // are marked a word at a time: marking slot by slot, each behind a test of its
  // coefficient, was most of a Fashion-MNIST epoch (10 classes, 784 dense features).
  void add_columns(Weights& w, std::span<const float> coef, std::span<const uint32_t> index,
                   std::span<const float> value, uint64_t* summary) {
    const size_t k = coef.size();
    if (std::find(coef.begin(), coef.end(), 0.0f) == coef.end()) {
      for (size_t j = 0; j < index.size(); ++j) {
        const size_t base = size_t{index[j]} * k;
        for (size_t c = 0; c < k; ++c) w.scratch(static_cast<uint32_t>(base + c)) += coef[c] * value[j];
        mark_run(base, base + k, summary);
      }
      return;
    }
    for (size_t j = 0; j < index.size(); ++j) {
      const size_t base = size_t{index[j]} * k;
      for (size_t c = 0; c < k; ++c) {
        if (coef[c] == 0) continue;
        const size_t i = base + c;
        w.scratch(static_cast<uint32_t>(i)) += coef[c] * value[j];
        mark(i, summary);
      }
    }
  }
  // Marks slot i and its word in `summary`.
  void mark(size_t i, uint64_t* summary) {
    touched_[i >> 6] |= uint64_t{1} << (i & 63);
    summary[i >> 12] |= uint64_t{1} << ((i >> 6) & 63);
  }
  // Marks slots [begin, end) and their words in `summary`.
  void mark_run(size_t begin, size_t end, uint64_t* summary) {
    for (size_t word = begin >> 6; word <= (end - 1) >> 6; ++word) {
      const size_t lo = std::max(begin, word * 64) & 63, hi = std::min(end - 1, word * 64 + 63) & 63;
      touched_[word] |= (~uint64_t{0} >> (63 - hi)) & (~uint64_t{0} << lo);
      summary[word >> 6] |= uint64_t{1} << (word & 63);
    }
  }
  // Shuffled rows lie anywhere in the CSR, so a row is fetched in two stages: its offsets
  // and label four rows ahead, every line of its indices and values two rows ahead: the
  // first line of each alone left the rest of a long row to demand misses, and the
  // label's miss stalled each row (docs/performance.md#figures-behind-the-code).
  // Always inlined: GCC 12 drops calls to an out-of-line function that does nothing but
  // prefetch (ipa-modref finds no side effect).
  [[gnu::always_inline]] static void prefetch_row(const Dataset& data, uint64_t row) {
    const uint64_t b = data.row_ptr[row], e = data.row_ptr[row + 1];
    for (uint64_t k = b; k < e; k += 16) {
      __builtin_prefetch(data.index.data() + k);
      __builtin_prefetch(data.value.data() + k);
    }
  }
  [[gnu::always_inline]] static void prefetch_row_start(const Dataset& data, uint64_t row) {
    __builtin_prefetch(data.row_ptr.data() + row);
    __builtin_prefetch(data.label.data() + row);
  }
  // Both stages, for the rows that follow rows[r].
  [[gnu::always_inline]] static void prefetch_ahead(const Dataset& data, std::span<const uint64_t> rows, size_t r) {
    if (r + 4 < rows.size()) prefetch_row_start(data, rows[r + 4]);
    if (r + 2 < rows.size()) prefetch_row(data, rows[r + 2]);
  }
  // Hands the update to `out`, or with none takes the step of rate eta on w once every
  // dot product is done (the step rescales w).
  BatchLoss run(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss, float scale,
                Stream<float>* out, double eta);
  // Marks in bitmap words [w0, w1), all of whose words `summary` holds.
  size_t touched_count(size_t w0, size_t w1, const uint64_t* summary) const;
  // Thread t has the partials of the batch's first `rows` rows; await returns once it does.
  void publish(int t, uint32_t rows);
  void await(int t, uint32_t rows);
  // Moves the marked sums of bitmap words [w0, w1) to out[at...], or with no `out` steps
  // with them (begun on w); either way scratch, bitmap and `summary` are left zero.
  void extract(Weights& w, size_t w0, size_t w1, size_t at, Stream<float>* out, uint64_t* summary);
  uint64_t* summary(int t) { return summary_.data() + static_cast<size_t>(t) * summary_words_; }

  uint32_t dim_;
  uint32_t columns_;  // K: weights per feature
  int threads_;
  struct Segment {  // a row's entries [begin, end) lie in a thread's range
    uint32_t begin, end;
  };
  std::vector<uint64_t> touched_;   // bitmap over indices, all zero between calls
  // Per thread, summary_words_ words: bit k marks a non-zero touched_[k] in its range.
  size_t summary_words_;
  std::vector<uint64_t> summary_;
  std::vector<double> word_cost_;   // word_cost_[k]: an epoch's expected work in bitmap words [0, k)
  std::vector<Segment> segment_;    // per thread and batch row
  std::vector<double> partial_;     // per thread, batch row and column: w_c^T x over the thread's range
  std::vector<double> thread_loss_;
  std::vector<size_t> thread_offset_;
  // Per thread, 2 K doubles and K floats: a row's margins, derivatives and coefficients.
  std::vector<double> margin_;
  std::vector<float> coef_;
  // Per thread, on a cache line of its own: base_ plus the rows whose partials it has
  // published. base_ counts the rows of earlier calls, so no reset is needed between
  // batches; the counters wrap, and are compared by their difference.
  struct alignas(64) Ready {
    std::atomic<uint32_t> rows{0};
  };
  std::unique_ptr<Ready[]> ready_;
  uint32_t base_ = 0;
};

}  // namespace mpisgd
