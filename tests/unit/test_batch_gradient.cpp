// BatchGradient::compute against a naive reference at several thread counts, its
// reproducibility for a given thread count, the reset of its internal accumulator
// between calls, and compute_and_step against compute followed by the step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "data/dataset.h"
#include "device/batch_gradient.h"
#include "model/loss.h"
#include "model/weights.h"
#include "tests/random_rows.h"
#include "tests/sparse_pairs.h"

using namespace mpisgd;

namespace {

// Weight slots whose scratch lane is not zero: BatchGradient must leave none.
uint32_t dirty_scratch(Weights& w) {
  uint32_t dirty = 0;
  for (uint32_t i = 0; i < w.dim(); ++i) dirty += w.scratch(i) != 0;
  return dirty;
}

struct Reference {
  std::map<uint32_t, double> sum, abs_sum;
  double loss = 0;
};

Reference naive(const Dataset& d, std::span<const uint64_t> batch, const Weights& w, const Loss& loss,
                float scale) {
  Reference ref;
  for (uint64_t row : batch) {
    auto idx = d.row_index(row);
    auto val = d.row_value(row);
    double p = 0;
    for (size_t j = 0; j < idx.size(); ++j) p += w.weight(idx[j]) * static_cast<double>(val[j]);
    const double y = d.label[row];
    ref.loss += loss.value(p, y);
    const double f1 = loss.derivative(p, y);
    if (f1 == 0) continue;
    const double c = scale * f1;
    for (size_t j = 0; j < idx.size(); ++j) {
      ref.sum[idx[j]] += c * val[j];
      ref.abs_sum[idx[j]] += std::abs(c * val[j]);
    }
  }
  return ref;
}

void check_against_reference(const Stream<float>& update, const BatchLoss& bl, const Reference& ref, size_t batch) {
  REQUIRE(!update.is_dense());
  const SparseVector out = unpaired(update);
  CHECK(bl.rows == batch);
  CHECK(bl.loss_sum == Approx(ref.loss).epsilon(1e-12).margin(1e-12));
  REQUIRE(out.index.size() == out.value.size());
  for (size_t j = 1; j < out.index.size(); ++j) REQUIRE(out.index[j - 1] < out.index[j]);
  REQUIRE(out.index.size() == ref.sum.size());
  size_t j = 0, bad = 0;
  for (const auto& [i, s] : ref.sum) {
    REQUIRE(out.index[j] == i);
    const double tol = 1e-6 * ref.abs_sum.at(i) + 1e-12;
    if (std::abs(out.value[j] - s) > tol && ++bad <= 5) {
      INFO("index " << i << ": got " << out.value[j] << ", reference " << s);
      CHECK(std::abs(out.value[j] - s) <= tol);
    }
    ++j;
  }
  CHECK(bad == 0);
}

bool bit_identical(const Stream<float>& sa, const Stream<float>& sb) {
  const SparseVector a = unpaired(sa), b = unpaired(sb);
  if (a.index != b.index || a.value.size() != b.value.size()) return false;
  for (size_t j = 0; j < a.value.size(); ++j)
    if (std::bit_cast<uint32_t>(a.value[j]) != std::bit_cast<uint32_t>(b.value[j])) return false;
  return true;
}

}  // namespace

TEST_CASE("batch gradient: equals the naive sum at every thread count, and repeats its bits", "[batch_gradient]") {
  struct Config {
    uint32_t dim;
    uint64_t rows;
    uint32_t max_nnz;
    size_t batch;
  };
  const std::vector<Config> configs = {
      {1000, 200, 40, 64},  // dim not a multiple of 64
      {70, 60, 12, 25},     // dim < 64 T: most threads own an empty range
      {130, 80, 20, 33},
      {64, 40, 10, 17},
      {1, 10, 1, 7},
      {2000, 500, 30, 300},  // T > 1 works in chunks of 16 rows, adds one chunk behind: 18 and a part
  };
  std::mt19937_64 rng(2024);
  size_t hinge_beyond = 0, hinge_inside = 0;
  for (const auto& cfg : configs) {
    for (LossKind kind : {LossKind::logistic, LossKind::hinge, LossKind::squared}) {
      const Loss loss{kind};
      INFO("dim " << cfg.dim << " loss " << model_name(kind));
      Dataset d = random_dataset(rng, cfg.rows, cfg.dim, cfg.max_nnz, kind == LossKind::squared);
      Weights w = random_weights(rng, cfg.dim);
      std::vector<uint64_t> batch = random_batch(rng, cfg.rows, cfg.batch);
      batch[0] = 3;  // the row with every index
      const float scale = 1.0f / static_cast<float>(cfg.batch);
      const Reference ref = naive(d, batch, w, loss, scale);

      SparseVector first;
      BatchLoss first_loss;
      for (int threads : {1, 2, 3, 4, 8}) {
        INFO("threads " << threads);
        BatchGradient bg(d, cfg.dim, threads, cfg.batch);
        Stream<float> out;
        const uint64_t hash_before = w.hash();
        const std::vector<double> weights_before = w.values();
        BatchLoss bl = bg.compute(d, batch, w, loss, scale, out);
        // compute only reads the model, and leaves the weights' scratch lane zero.
        CHECK(w.hash() == hash_before);
        CHECK(w.values() == weights_before);
        CHECK(dirty_scratch(w) == 0);
        check_against_reference(out, bl, ref, batch.size());
        BatchGradient again(d, cfg.dim, threads, cfg.batch);
        Stream<float> repeat;
        again.compute(d, batch, w, loss, scale, repeat);
        CHECK(bit_identical(out, repeat));
        // T > 1 sums T partial dot products, so values may differ from T = 1 in rounding.
        if (threads == 1) {
          first = unpaired(out);
          first_loss = bl;
        } else {
          CHECK(unpaired(out).index == first.index);
          CHECK(bl.loss_sum == Approx(first_loss.loss_sum).epsilon(1e-12));
        }
      }
      if (kind == LossKind::hinge) {
        for (uint64_t r : batch) {
          const double p = w.dot(d.row_index(r), d.row_value(r));
          (d.label[r] * p >= 1 ? hinge_beyond : hinge_inside)++;
        }
      }
    }
  }
  // Both hinge cases were exercised: rows beyond the margin (which add nothing) and inside.
  CHECK(hinge_beyond > 0);
  CHECK(hinge_inside > 0);
}

TEST_CASE("batch gradient: an empty batch gives an empty update", "[batch_gradient]") {
  std::mt19937_64 rng(1);
  Dataset d = random_dataset(rng, 20, 100, 10, false);
  Weights w = random_weights(rng, 100);
  for (int threads : {1, 3}) {
    BatchGradient bg(d, 100, threads, 10);
    Stream<float> out = paired(SparseVector{{1, 2, 3}, {1, 2, 3}});
    BatchLoss bl = bg.compute(d, std::vector<uint64_t>{}, w, Loss{LossKind::logistic}, 1.0f, out);
    CHECK(!out.is_dense());
    CHECK(out.count() == 0);
    CHECK(bl.rows == 0);
    CHECK(bl.loss_sum == 0.0);
  }
}

TEST_CASE("batch gradient: the accumulator is reset between calls", "[batch_gradient]") {
  std::mt19937_64 rng(77);
  const uint32_t dim = 500;
  Dataset d = random_dataset(rng, 100, dim, 30, false);
  Weights w = random_weights(rng, dim);
  const Loss loss{LossKind::logistic};
  auto b1 = random_batch(rng, 100, 32);
  auto b2 = random_batch(rng, 100, 32);

  for (int threads : {1, 3}) {
    INFO("threads " << threads);
    BatchGradient bg(d, dim, threads, 32);
    Stream<float> a, other;
    // Stale contents in the output must be overwritten.
    Stream<float> again = paired(SparseVector{std::vector<uint32_t>(5000, 7), std::vector<float>(5000, 7.0f)});
    BatchLoss la = bg.compute(d, b1, w, loss, 0.5f, a);
    BatchLoss la2 = bg.compute(d, b1, w, loss, 0.5f, again);
    CHECK(bit_identical(a, again));
    CHECK(la.loss_sum == la2.loss_sum);

    bg.compute(d, b2, w, loss, 0.5f, other);
    BatchGradient fresh(d, dim, threads, 32);
    Stream<float> expect;
    fresh.compute(d, b2, w, loss, 0.5f, expect);
    CHECK(bit_identical(other, expect));
    check_against_reference(other, bg.compute(d, b2, w, loss, 0.5f, other), naive(d, b2, w, loss, 0.5f), b2.size());
  }
}

TEST_CASE("batch gradient: a hand-computed squared-loss batch", "[batch_gradient]") {
  // Two rows, w = 0, squared loss: f'(0, y) = -y, so u = scale * sum -y_r x_r.
  Dataset d;
  d.dim = 70;
  d.index = {0, 65, 69, 65};
  d.value = {1.0f, 2.0f, 3.0f, 4.0f};
  d.row_ptr = {0, 3, 4};
  d.label = {2.0f, -1.0f};
  Weights w(70, 0.0, false);
  for (int threads : {1, 2, 4}) {
    BatchGradient bg(d, 70, threads, 2);
    Stream<float> out;
    std::vector<uint64_t> batch{0, 1};
    BatchLoss bl = bg.compute(d, batch, w, Loss{LossKind::squared}, 0.5f, out);
    const SparseVector u = unpaired(out);
    CHECK(u.index == std::vector<uint32_t>{0, 65, 69});
    CHECK(u.value == std::vector<float>{-1.0f, -2.0f + 2.0f, -3.0f});
    CHECK(bl.loss_sum == Approx(0.5 * 4 + 0.5 * 1));
    CHECK(bl.rows == 2);
  }
}

TEST_CASE("batch gradient: threads split the work, however crowded the indices", "[batch_gradient]") {
  // Nearly every non-zero in the first bitmap word and a few in the last: balanced by
  // expected work, most threads own an empty range next to one that owns the crowded word.
  std::mt19937_64 rng(5);
  const uint32_t dim = 4096;
  Dataset d;
  d.dim = dim;
  for (uint64_t r = 0; r < 300; ++r) {
    std::vector<uint32_t> idx = random_subset(rng, 64, 1 + static_cast<uint32_t>(rng() % 20));
    if (r % 7 == 0) idx.push_back(dim - 1 - static_cast<uint32_t>(rng() % 64));
    for (uint32_t i : idx) {
      d.index.owned().push_back(i);
      d.value.owned().push_back(nonzero_uniform(rng, -1, 1));
    }
    d.row_ptr.push_back(d.index.size());
    d.label.push_back(rng() % 2 ? 1.0f : -1.0f);
  }
  d.global_rows = 300;
  Weights w = random_weights(rng, dim);
  const Loss loss{LossKind::logistic};
  const std::vector<uint64_t> batch = random_batch(rng, 300, 120);
  for (int threads : {2, 3, 8}) {
    INFO("threads " << threads);
    BatchGradient bg(d, dim, threads, batch.size());
    Stream<float> out;
    BatchLoss bl = bg.compute(d, batch, w, loss, 0.25f, out);
    check_against_reference(out, bl, naive(d, batch, w, loss, 0.25f), batch.size());
  }
}

TEST_CASE("batch gradient: stepping as the update drains equals stepping with the update", "[batch_gradient]") {
  std::mt19937_64 rng(31);
  const uint32_t dim = 700;
  Dataset d = random_dataset(rng, 400, dim, 40, false);
  const Loss loss{LossKind::logistic};
  for (bool adagrad : {false, true}) {
    for (int threads : {1, 2, 3}) {
      INFO("adagrad " << adagrad << ", threads " << threads);
      Weights handed(dim, 0.01, adagrad), drained(dim, 0.01, adagrad);
      BatchGradient hand(d, dim, threads, 150), drain(d, dim, threads, 150);
      Stream<float> out;
      for (int step = 0; step < 6; ++step) {
        const std::vector<uint64_t> batch = random_batch(rng, 400, 150);
        const double eta = 0.5 / (1 + step);
        BatchLoss a = hand.compute(d, batch, handed, loss, 1.0f / 150, out);
        handed.step_pairs(eta, out.pairs());
        BatchLoss b = drain.compute_and_step(d, batch, drained, loss, 1.0f / 150, eta);
        CHECK(a.nnz == out.count());
        CHECK(b.nnz == a.nnz);
        CHECK(b.loss_sum == a.loss_sum);
        CHECK(drained.hash() == handed.hash());
      }
      CHECK(dirty_scratch(drained) == 0);
    }
  }
}

TEST_CASE("batch gradient: K columns equal the naive K-class sum at every thread count", "[batch_gradient]") {
  struct Config {
    uint32_t features, classes;
    size_t batch;
  };
  // Thread ranges start at multiples of lcm(64, K): K = 3 and 10 do not divide 64.
  const std::vector<Config> configs = {{70, 3, 25}, {130, 10, 33}, {1000, 4, 64}, {500, 3, 300}};
  std::mt19937_64 rng(77);
  for (const auto& cfg : configs) {
    for (const Loss loss :
         {Loss{LossKind::logistic, cfg.classes, Multiclass::ovr}, Loss{LossKind::logistic, cfg.classes, Multiclass::softmax},
          Loss{LossKind::hinge, cfg.classes, Multiclass::ovr}, Loss{LossKind::hinge, cfg.classes, Multiclass::crammer_singer}}) {
      INFO("features " << cfg.features << " K " << cfg.classes << " form " << static_cast<int>(loss.multiclass) << " kind "
                       << model_name(loss.kind));
      const uint32_t dim = cfg.features * cfg.classes;
      Dataset d = random_dataset(rng, 120, cfg.features, 20, false);
      for (float& y : d.label) y = static_cast<float>(rng() % cfg.classes);
      Weights w = random_weights(rng, dim);
      std::vector<uint64_t> batch = random_batch(rng, d.rows(), cfg.batch);
      batch[0] = 3;  // the row with every index
      const float scale = 1.0f / static_cast<float>(cfg.batch);

      Reference ref;
      std::vector<double> m(cfg.classes), der(cfg.classes);
      for (uint64_t row : batch) {
        auto idx = d.row_index(row);
        auto val = d.row_value(row);
        std::fill(m.begin(), m.end(), 0.0);
        for (size_t j = 0; j < idx.size(); ++j)
          for (uint32_t c = 0; c < cfg.classes; ++c) m[c] += w.weight(idx[j] * cfg.classes + c) * double{val[j]};
        const auto y = static_cast<uint32_t>(d.label[row]);
        ref.loss += loss.value(m, y);
        loss.derivatives(m, y, der);
        for (uint32_t c = 0; c < cfg.classes; ++c) {
          if (der[c] == 0) continue;
          for (size_t j = 0; j < idx.size(); ++j) {
            ref.sum[idx[j] * cfg.classes + c] += scale * der[c] * val[j];
            ref.abs_sum[idx[j] * cfg.classes + c] += std::abs(scale * der[c] * val[j]);
          }
        }
      }
      for (int threads : {1, 2, 3, 8}) {
        INFO("threads " << threads);
        BatchGradient bg(d, dim, threads, cfg.batch, cfg.classes);
        Stream<float> out;
        BatchLoss bl = bg.compute(d, batch, w, loss, scale, out);
        CHECK(dirty_scratch(w) == 0);
        check_against_reference(out, bl, ref, batch.size());
      }
    }
  }
}
