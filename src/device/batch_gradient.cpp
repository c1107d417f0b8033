#include "device/batch_gradient.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include <omp.h>

namespace mpisgd {
namespace {

// With T > 1 a batch is done in chunks of this many rows: a thread takes the dot products
// of chunk k, then the adds of chunk k-1, whose partials the other threads have published
// by then unless they lag a whole chunk. The adds still find the lines the dot products
// loaded in the core's cache, and a thread that was held up on one chunk (by another
// process, an interrupt, a row of rare features) catches up on the next instead of
// stalling the others at a barrier, which one barrier per chunk made measurably slower.
// Chunks of 8 and 16 rows measured alike, larger ones slower
// (docs/performance.md#figures-behind-the-code).
constexpr size_t kChunk = 16;

// Polls of a lagging thread's counter before sleeping on it: 0.1-0.2 ms on x86.
constexpr int kSpins = 4096;

// Rows up to this many entries have their weight slots prefetched a row ahead (T = 1).
constexpr size_t kPrefetchedRowLength = 256;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

BatchGradient::BatchGradient(const Dataset& data, uint32_t dim, int threads, uint64_t batch, uint32_t columns)
    : dim_(dim),
      columns_(std::max(1u, columns)),
      threads_(std::max(1, threads)),
      touched_((dim + 63) / 64, 0),
      summary_words_((touched_.size() + 63) / 64),
      summary_(summary_words_ * static_cast<size_t>(threads_), 0),
      thread_loss_(static_cast<size_t>(threads_)),
      thread_offset_(static_cast<size_t>(threads_) + 1),
      margin_(2 * size_t{columns_} * static_cast<size_t>(threads_)),
      coef_(size_t{columns_} * static_cast<size_t>(threads_)),
      ready_(std::make_unique<Ready[]>(static_cast<size_t>(threads_))) {
  if (threads_ == 1) return;
  // An epoch costs a thread about one unit per non-zero of its range (the dot product and
  // the add, mostly in cache) plus kMissCost units per slot a step touches (its first
  // touch in a batch misses the core's cache, and the drain passes it once more). Feature
  // i, in c_i of n rows, is in a batch of b rows with chance 1 - (1 - c_i/n)^b, over n/b
  // batches. Rare features cost more per non-zero, so shares of non-zeros alone left the
  // thread with the rarer half busier at T = 2 on URL-like data, and the other waiting.
  // With K columns a feature costs K times that, in the word of its first column.
  constexpr double kMissCost = 8;  // the best of those tried (docs/performance.md#figures-behind-the-code)
  const uint32_t features = dim_ / columns_;
  std::vector<uint32_t> count(features, 0);
  for (uint32_t i : data.index)
    if (i < features) ++count[i];
  const double n = std::max<double>(1, static_cast<double>(data.rows()));
  const double b = static_cast<double>(std::max<uint64_t>(1, batch));
  word_cost_.assign(touched_.size() + 1, 0);
  for (uint32_t i = 0; i < features; ++i) {
    if (count[i] == 0) continue;
    const double in_batch = -std::expm1(b * std::log1p(-std::min(1.0, count[i] / n)));
    word_cost_[((size_t{i} * columns_) >> 6) + 1] += columns_ * (count[i] + kMissCost * (n / b) * in_batch);
  }
  for (size_t k = 1; k < word_cost_.size(); ++k) word_cost_[k] += word_cost_[k - 1];
}

uint32_t BatchGradient::range_begin(int t, int nt) const {
  if (t <= 0) return 0;
  if (t >= nt) return dim_;
  const double share = word_cost_.back() * t / nt;
  const auto word = std::lower_bound(word_cost_.begin(), word_cost_.end(), share) - word_cost_.begin();
  // Whole words below the last, which holds the indices past the last multiple of 64,
  // and whole features: multiples of 64 and of K.
  const uint64_t unit = std::lcm(uint64_t{64}, uint64_t{columns_});
  return static_cast<uint32_t>(std::min<uint64_t>(static_cast<uint64_t>(word) * 64 / unit, dim_ / unit) * unit);
}

size_t BatchGradient::touched_count(size_t w0, size_t w1, const uint64_t* summary) const {
  size_t count = 0;
  for (size_t s = w0 / 64; s < (w1 + 63) / 64; ++s) {
    for (uint64_t words = summary[s]; words; words &= words - 1)
      count += static_cast<size_t>(std::popcount(touched_[s * 64 + static_cast<size_t>(std::countr_zero(words))]));
  }
  return count;
}

void BatchGradient::extract(Weights& w, size_t w0, size_t w1, size_t at, Stream<float>* out, uint64_t* summary) {
  Pair<float>* pairs = out ? out->pairs().data() : nullptr;
  for (size_t s = w0 / 64; s < (w1 + 63) / 64; ++s) {
    for (uint64_t words = summary[s]; words; words &= words - 1) {
      const size_t k = s * 64 + static_cast<size_t>(std::countr_zero(words));
      for (uint64_t bits = touched_[k]; bits; bits &= bits - 1) {
        uint32_t i = static_cast<uint32_t>(k * 64 + static_cast<size_t>(std::countr_zero(bits)));
        if (!out) {
          w.step_scratch(i);
          continue;
        }
        pairs[at] = {i, w.scratch(i)};
        w.scratch(i) = 0;
        ++at;
      }
      touched_[k] = 0;
    }
    summary[s] = 0;
  }
}

BatchLoss BatchGradient::compute_one_thread(const Dataset& data, std::span<const uint64_t> rows, Weights& w,
                                            const Loss& loss, float scale) {
  BatchLoss result{0, rows.size()};
  for (size_t r = 0; r < rows.size(); ++r) {
    prefetch_ahead(data, rows, r);
    // The next row's weight slots are fetched while this row is worked on, for rows short
    // enough that their lines fit beside this row's (URL-like: ~115); a Webspam-like row's
    // ~3,700 random lines would evict the ones in use, and the epoch took 1.1-1.5x longer.
    if (columns_ == 1 && r + 1 < rows.size() && data.row_index(rows[r + 1]).size() <= kPrefetchedRowLength)
      w.prefetch(data.row_index(rows[r + 1]));
    const uint64_t row = rows[r];
    auto index = data.row_index(row);
    auto value = data.row_value(row);
    if (columns_ > 1) {
      const std::span<double> m(margin_.data(), columns_), d(margin_.data() + columns_, columns_);
      const std::span<float> coef(coef_.data(), columns_);
      w.margins(index, value, m);
      result.loss_sum += class_coefficients(loss, m, data.label[row], scale, d, coef);
      add_columns(w, coef, index, value, summary(0));
      continue;
    }
    double p = w.dot(index, value);
    double y = data.label[row];
    result.loss_sum += loss.value(p, y);
    const float c = static_cast<float>(scale * loss.derivative(p, y));
    if (c != 0) add(w, c, index, value, summary(0));  // hinge rows beyond the margin add nothing
  }
  return result;
}

void BatchGradient::publish(int t, uint32_t rows) {
  ready_[static_cast<size_t>(t)].rows.store(base_ + rows, std::memory_order_release);
  ready_[static_cast<size_t>(t)].rows.notify_all();
}

void BatchGradient::await(int t, uint32_t rows) {
  const uint32_t target = base_ + rows;
  std::atomic<uint32_t>& ready = ready_[static_cast<size_t>(t)].rows;
  auto behind = [target](uint32_t v) { return static_cast<int32_t>(v - target) < 0; };
  // A lag is mostly a few microseconds, so spin on it first; beyond that (more threads
  // than cores, the other thread descheduled) sleep on the counter until it moves.
  uint32_t v = ready.load(std::memory_order_acquire);
  for (int spin = 0; behind(v) && spin < kSpins; ++spin) {
    cpu_relax();
    v = ready.load(std::memory_order_acquire);
  }
  while (behind(v)) {
    ready.wait(v, std::memory_order_acquire);
    v = ready.load(std::memory_order_acquire);
  }
}

BatchLoss BatchGradient::run(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                             float scale, Stream<float>* out, double eta) {
  if (threads_ == 1) {
    BatchLoss result = compute_one_thread(data, rows, w, loss, scale);
    result.nnz = touched_count(0, touched_.size(), summary(0));
    if (out) {
      out->reserve_pairs(result.nnz);
      out->set_sparse(static_cast<uint32_t>(result.nnz));
    } else {
      w.begin_step(eta);
    }
    extract(w, 0, touched_.size(), 0, out, summary(0));
    if (!out) w.end_step();
    return result;
  }

  const size_t batch = rows.size();
  const size_t lanes = batch * static_cast<size_t>(threads_);
  const size_t k = columns_;
  segment_.resize(lanes);
  partial_.resize(lanes * k);
  std::fill(thread_loss_.begin(), thread_loss_.end(), 0.0);
  size_t nnz = 0;
  // Each thread reads and writes only the weight slots of its own index range.
#pragma omp parallel num_threads(threads_)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const uint32_t lo = range_begin(t, nt), hi = range_begin(t + 1, nt);
    const uint32_t first_feature = lo / columns_, end_feature = hi / columns_;
    Segment* segment = segment_.data() + static_cast<size_t>(t) * batch;
    double* partial = partial_.data() + static_cast<size_t>(t) * batch * k;
    const std::span<double> m(margin_.data() + 2 * k * static_cast<size_t>(t), k), d(m.data() + k, k);
    const std::span<float> coef(coef_.data() + k * static_cast<size_t>(t), k);

    // The next row's segment is found one row ahead, which overlaps its loads with this
    // row's dot product. Prefetching that segment's weights as well, as one thread does,
    // made the loop slower: the segment is short, its slots mostly in the shared cache.
    auto find = [&](size_t r) {
      auto index = data.row_index(rows[r]);
      const auto first = lo == 0 ? index.begin() : std::lower_bound(index.begin(), index.end(), first_feature);
      const auto last = hi >= dim_ ? index.end() : std::lower_bound(first, index.end(), end_feature);
      segment[r] = Segment{static_cast<uint32_t>(first - index.begin()), static_cast<uint32_t>(last - index.begin())};
    };
    if (batch > 0) find(0);
    double loss_sum = 0;
    auto dots = [&](size_t c0, size_t c1) {
      for (size_t r = c0; r < c1; ++r) {
        prefetch_ahead(data, rows, r);
        if (r + 1 < batch) find(r + 1);
        const Segment s = segment[r];
        const auto index = data.row_index(rows[r]).subspan(s.begin, s.end - s.begin);
        const auto value = data.row_value(rows[r]).subspan(s.begin, s.end - s.begin);
        if (k == 1) partial[r] = w.dot(index, value);
        else w.margins(index, value, {partial + r * k, k});
      }
      publish(t, static_cast<uint32_t>(c1));
    };
    auto adds = [&](size_t c0, size_t c1) {
      for (int u = 0; u < nt; ++u) await(u, static_cast<uint32_t>(c1));
      for (size_t r = c0; r < c1; ++r) {
        const bool counts_loss = r % static_cast<size_t>(nt) == static_cast<size_t>(t);
        const Segment s = segment[r];
        const auto index = data.row_index(rows[r]).subspan(s.begin, s.end - s.begin);
        const auto value = data.row_value(rows[r]).subspan(s.begin, s.end - s.begin);
        if (k > 1) {
          std::fill(m.begin(), m.end(), 0.0);
          for (int u = 0; u < nt; ++u)
            for (size_t c = 0; c < k; ++c) m[c] += partial_[(static_cast<size_t>(u) * batch + r) * k + c];
          const double row_loss = class_coefficients(loss, m, data.label[rows[r]], scale, d, coef);
          if (counts_loss) loss_sum += row_loss;
          add_columns(w, coef, index, value, summary(t));
          continue;
        }
        double p = 0;
        for (int u = 0; u < nt; ++u) p += partial_[static_cast<size_t>(u) * batch + r];
        double y = data.label[rows[r]];
        if (counts_loss) loss_sum += loss.value(p, y);
        const float c = static_cast<float>(scale * loss.derivative(p, y));
        if (c == 0) continue;
        add(w, c, index, value, summary(t));
      }
    };
    for (size_t c0 = 0; c0 < batch; c0 += kChunk) {
      dots(c0, std::min(batch, c0 + kChunk));
      if (c0 > 0) adds(c0 - kChunk, c0);
    }
    if (batch > 0) adds((batch - 1) / kChunk * kChunk, batch);
    thread_loss_[static_cast<size_t>(t)] = loss_sum;

    const size_t w0 = lo / 64, w1 = (static_cast<size_t>(hi) + 63) / 64;
    thread_offset_[static_cast<size_t>(t) + 1] = touched_count(w0, w1, summary(t));
#pragma omp barrier
#pragma omp single
    {
      thread_offset_[0] = 0;
      for (int u = 0; u < nt; ++u) thread_offset_[static_cast<size_t>(u) + 1] += thread_offset_[static_cast<size_t>(u)];
      nnz = thread_offset_[static_cast<size_t>(nt)];
      if (out) {
        out->reserve_pairs(nnz);
        out->set_sparse(static_cast<uint32_t>(nnz));
      } else {
        w.begin_step(eta);
      }
    }
    extract(w, w0, w1, thread_offset_[static_cast<size_t>(t)], out, summary(t));
  }
  if (!out) w.end_step();
  base_ += static_cast<uint32_t>(batch);

  BatchLoss result;
  result.rows = batch;
  result.nnz = nnz;
  for (double l : thread_loss_) result.loss_sum += l;
  return result;
}

}  // namespace mpisgd
