// The GPU path's batch gradient (ThrustGradient) against the CPU path's (BatchGradient at
// one thread) on random rows reaching the kernels' edges: every loss, two classes and K,
// empty rows and batches, repeated rows, batches that shrink between calls, rows of 0, 1
// and 10,000 non-zeros. Under Thrust's OpenMP backend (make GPU=omp) the update and the
// loss must be the CPU path's bit for bit, at any thread count; under CUDA (make GPU=1,
// where a GPU exists) equal to rounding. Where no GPU can run them, the run says why and
// counts as skipped.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <random>
#include <vector>

#include <omp.h>

#include "device/batch_gradient.h"
#include "device/gpu_batch_device.h"
#include "comm/state_blob.h"
#include "device/thrust_gradient.h"
#include "strategies/apply_sum.h"
#include "tests/catch_session.h"
#include "tests/random_rows.h"

using namespace mpisgd;

namespace {

bool exact() { return gpu_backend() == GpuBackend::omp; }

// Bit for bit where `bits`, else to rounding.
void check_same(const Stream<float>& gpu, const BatchLoss& gl, const Stream<float>& cpu, const BatchLoss& cl,
                bool bits = exact()) {
  REQUIRE_FALSE(gpu.is_dense());
  REQUIRE(gpu.count() == cpu.count());
  CHECK(gl.rows == cl.rows);
  CHECK(gl.nnz == cl.nnz);
  const auto g = gpu.pairs(), c = cpu.pairs();
  if (bits) {
    CHECK(std::bit_cast<uint64_t>(gl.loss_sum) == std::bit_cast<uint64_t>(cl.loss_sum));
  } else {
    CHECK(gl.loss_sum == Approx(cl.loss_sum).epsilon(1e-9));
  }
  size_t index_differs = 0, value_differs = 0;
  for (size_t j = 0; j < g.size(); ++j) {
    index_differs += g[j].index != c[j].index;
    const float a = g[j].value, b = c[j].value;
    value_differs += bits ? std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(b)
                          : std::abs(a - b) > 1e-5f * (1 + std::abs(b));
  }
  CHECK(index_differs == 0);
  CHECK(value_differs == 0);
}

Loss loss_for(LossKind kind, uint32_t classes, Multiclass form) { return Loss{kind, classes, form}; }

// Random rows labelled with one of `classes` classes (two: the generator's labels), and
// the logistic loss over them (softmax for K >= 3).
Dataset classed_rows(std::mt19937_64& rng, uint64_t rows, uint32_t features, uint32_t max_nnz, uint32_t classes) {
  Dataset d = random_dataset(rng, rows, features, max_nnz, false);
  if (classes > 1)
    for (float& y : d.label) y = static_cast<float>(rng() % classes);
  return d;
}
Loss logistic_for(uint32_t classes) {
  return classes > 1 ? loss_for(LossKind::logistic, classes, Multiclass::softmax) : Loss{LossKind::logistic};
}

}  // namespace

TEST_CASE("thrust gradient: equals the CPU path on two classes and regression", "[device]") {
  std::mt19937_64 rng(5);
  for (const LossKind kind : {LossKind::logistic, LossKind::hinge, LossKind::squared}) {
    for (const uint32_t dim : {1u, 70u, 1000u}) {
      INFO(model_name(kind) << " dim " << dim);
      const Dataset d = random_dataset(rng, 150, dim, 30, kind == LossKind::squared);
      Weights w = random_weights(rng, dim);
      const Loss loss{kind};
      BatchGradient cpu(d, dim, 1, 64);
      ThrustGradient gpu(d, 1);
      for (const size_t size : {64, 1, 17, 0, 150}) {
        INFO("batch " << size);
        std::vector<uint64_t> batch = random_batch(rng, d.rows(), size);
        if (size > 1) batch[1] = 3;  // the row with every index
        const float scale = 1.0f / static_cast<float>(std::max<size_t>(1, size));
        Stream<float> a, b;
        const BatchLoss gl = gpu.compute(d, batch, w, loss, scale, a);
        const BatchLoss cl = cpu.compute(d, batch, w, loss, scale, b);
        check_same(a, gl, b, cl);
      }
    }
  }
}

TEST_CASE("thrust gradient: equals the CPU path with K columns", "[device]") {
  std::mt19937_64 rng(9);
  for (const uint32_t classes : {3u, 10u}) {
    for (const Loss loss : {loss_for(LossKind::logistic, classes, Multiclass::ovr),
                            loss_for(LossKind::logistic, classes, Multiclass::softmax),
                            loss_for(LossKind::hinge, classes, Multiclass::ovr),
                            loss_for(LossKind::hinge, classes, Multiclass::crammer_singer)}) {
      INFO("K " << classes << " " << multiclass_name(loss.multiclass) << " " << model_name(loss.kind));
      const uint32_t features = 130, dim = features * classes;
      const Dataset d = classed_rows(rng, 120, features, 20, classes);
      Weights w = random_weights(rng, dim);
      BatchGradient cpu(d, dim, 1, 40, classes);
      ThrustGradient gpu(d, classes);
      for (const size_t size : {40, 7, 120}) {
        std::vector<uint64_t> batch = random_batch(rng, d.rows(), size);
        batch[0] = 3;
        Stream<float> a, b;
        const float scale = 1.0f / static_cast<float>(size);
        check_same(a, gpu.compute(d, batch, w, loss, scale, a), b, cpu.compute(d, batch, w, loss, scale, b));
      }
    }
  }
}

TEST_CASE("thrust gradient: rows of 0, 1 and 10,000 non-zeros", "[device]") {
  std::mt19937_64 rng(21);
  const uint32_t dim = 30000;
  Dataset d;
  d.dim = dim;
  for (const uint32_t length : {0u, 1u, 10000u, 7u, 10000u}) {
    for (uint32_t i : random_subset(rng, dim, length)) {
      d.index.owned().push_back(i);
      d.value.owned().push_back(nonzero_uniform(rng, -1, 1));
    }
    d.row_ptr.push_back(d.index.size());
    d.label.push_back(rng() % 2 ? 1.0f : -1.0f);
  }
  Weights w = random_weights(rng, dim);
  BatchGradient cpu(d, dim, 1, 5);
  ThrustGradient gpu(d, 1);
  const std::vector<uint64_t> batch = {2, 0, 1, 4, 3, 2};
  for (const LossKind kind : {LossKind::logistic, LossKind::hinge, LossKind::squared}) {
    Stream<float> a, b;
    const Loss loss{kind};
    check_same(a, gpu.compute(d, batch, w, loss, 0.2f, a), b, cpu.compute(d, batch, w, loss, 0.2f, b));
  }
}

TEST_CASE("thrust gradient: a warp a margin agrees with a thread a row", "[device]") {
  if (exact()) {
    std::printf("skipped: a warp a margin is CUDA's; the OpenMP backend sums every margin a thread a row\n");
    return;
  }
  std::mt19937_64 rng(33);
  for (const uint32_t classes : {1u, 3u}) {
    INFO("K " << classes);
    const uint32_t features = 12000, dim = features * classes;
    const Dataset d = classed_rows(rng, 40, features, 3000, classes);
    Weights w = random_weights(rng, dim);
    const Loss loss = logistic_for(classes);
    ThrustGradient by_row(d, classes, ThrustGradient::Margins::by_row);
    ThrustGradient by_warp(d, classes, ThrustGradient::Margins::by_warp);
    for (const size_t size : {40, 1, 13}) {
      const std::vector<uint64_t> batch = random_batch(rng, d.rows(), size);
      Stream<float> a, b;
      const BatchLoss al = by_warp.compute(d, batch, w, loss, 0.1f, a);
      const BatchLoss bl = by_row.compute(d, batch, w, loss, 0.1f, b);
      check_same(a, al, b, bl);
    }
  }
}

// The slots summed by one segmented reduction (CUDA's default) against a thread a slot in
// batch order, on both backends: the same touched slots, sums equal to rounding. Few
// features, so that each is in many of a batch's rows; the hinge's zero coefficients mark
// nothing.
TEST_CASE("thrust gradient: a reduction over the entries sums the slots as a thread a slot does", "[device]") {
  std::mt19937_64 rng(35);
  for (const Loss& loss : {Loss{LossKind::logistic}, Loss{LossKind::hinge}, logistic_for(3),
                           loss_for(LossKind::hinge, 3, Multiclass::ovr)}) {
    const uint32_t classes = loss.columns;
    INFO("K " << classes << ", hinge " << (loss.kind == LossKind::hinge));
    const uint32_t features = 300, dim = features * classes;
    const Dataset d = classed_rows(rng, 400, features, 120, classes);
    Weights w = random_weights(rng, dim);
    using G = ThrustGradient;
    G by_slot(d, classes, G::Margins::by_row, 1, G::Rows::resident, G::Slots::by_slot);
    G by_entry(d, classes, G::Margins::by_row, 1, G::Rows::resident, G::Slots::by_entry);
    for (const size_t size : {400, 1, 57}) {
      INFO("batch " << size);
      const std::vector<uint64_t> batch = random_batch(rng, d.rows(), size);
      Stream<float> a, b;
      const BatchLoss al = by_entry.compute(d, batch, w, loss, 0.1f, a);
      const BatchLoss bl = by_slot.compute(d, batch, w, loss, 0.1f, b);
      check_same(a, al, b, bl, false);
    }
  }
}

TEST_CASE("thrust gradient: compute_and_step takes the CPU path's step", "[device]") {
  std::mt19937_64 rng(13);
  const uint32_t dim = 300;
  const Dataset d = random_dataset(rng, 200, dim, 25, false);
  Weights on_gpu = random_weights(rng, dim);
  Weights on_cpu = on_gpu;
  BatchGradient cpu(d, dim, 1, 50);
  ThrustGradient gpu(d, 1);
  const Loss loss{LossKind::logistic};
  for (int step = 0; step < 20; ++step) {
    const std::vector<uint64_t> batch = random_batch(rng, d.rows(), 50);
    const BatchLoss gl = gpu.compute_and_step(d, batch, on_gpu, loss, 1.0f / 50, 0.5);
    const BatchLoss cl = cpu.compute_and_step(d, batch, on_cpu, loss, 1.0f / 50, 0.5);
    CHECK(gl.nnz == cl.nnz);
  }
  if (exact()) {
    CHECK(on_gpu.hash() == on_cpu.hash());
  } else {
    for (uint32_t i = 0; i < dim; ++i) CHECK(on_gpu.weight(i) == Approx(on_cpu.weight(i)).margin(1e-5));
  }
}

// The device holding the model through an "epoch" of steps, against the host's Weights
// taking the same steps: its own updates (compute_and_step, empty batches among them),
// sparse and dense sums from a strategy (step), with L2 strong enough to renormalise and
// with AdaGrad; then the model back on the host.
TEST_CASE("thrust gradient: a held model steps as the host's does", "[device]") {
  std::mt19937_64 rng(29);
  const uint32_t dim = 400;
  const Dataset d = random_dataset(rng, 160, dim, 30, false);
  const Loss loss{LossKind::logistic};
  for (const bool adagrad : {false, true}) {
    for (const double l2 : {0.0, 0.2}) {
      INFO("adagrad " << adagrad << " l2 " << l2);
      Weights on_host(dim, l2, adagrad);
      {
        const Weights start = random_weights(rng, dim);
        std::vector<float> v(dim), none, zeros(adagrad ? dim : 0, 0.0f);
        start.copy_out(v, none);
        on_host.copy_in(v, zeros, StepScale{1, l2, 0});
      }
      Weights on_device = on_host;
      const uint64_t before = on_device.hash();
      BatchGradient cpu(d, dim, 1, 40);
      ThrustGradient gpu(d, 1);
      gpu.take_model(on_device);
      bool renormalised = false;
      for (int step = 0; step < 60; ++step) {
        const std::vector<uint64_t> batch = random_batch(rng, d.rows(), step % 7 == 3 ? 0 : 40);
        const double eta = 2.0;
        if (step % 3 == 0) {
          const BatchLoss gl = gpu.compute_and_step(d, batch, on_device, loss, 1.0f / 40, eta);
          const BatchLoss cl = cpu.compute_and_step(d, batch, on_host, loss, 1.0f / 40, eta);
          CHECK(gl.nnz == cl.nnz);
        } else {
          // A strategy's sum, sparse or dense, made here from this rank's update.
          Stream<float> mine, other(dim);
          gpu.compute(d, batch, on_device, loss, 1.0f / 40, mine);
          Stream<float> own_on_host;
          cpu.compute(d, batch, on_host, loss, 1.0f / 40, own_on_host);
          check_same(mine, {}, own_on_host, {});
          if (step % 3 == 1) {
            other.copy_from(mine);
            for (Pair<float>& p : other.pairs()) p.value *= 0.5f;
          } else {
            other.set_zero_dense(dim);
            for (const Pair<float>& p : mine.pairs()) other.values()[p.index] = -p.value;
            other.values()[dim - 1] += 0.25f;
          }
          CHECK(gpu.step(other, eta) == apply_sum(other, eta, on_host));
        }
        renormalised |= on_host.scale() == 1 && l2 > 0;
      }
      Weights back(dim, l2, adagrad);
      gpu.give_model(back);
      if (l2 > 0) CHECK(renormalised);
      if (exact()) {
        CHECK(back.hash() == on_host.hash());
      } else {
        CHECK(back.scale() == on_host.scale());
        for (uint32_t i = 0; i < dim; ++i)
          CHECK(back.weight(i) == Approx(on_host.weight(i)).epsilon(1e-4).margin(1e-5));
      }
      CHECK(on_device.hash() == before);  // the host's copy was left alone while held
    }
  }
}

// Epoch after epoch: the model goes up again only where the host's state changed since it
// came back, and the device steps from the state the host has either way.
TEST_CASE("thrust gradient: a model given back and left alone is not copied up again", "[device]") {
  std::mt19937_64 rng(31);
  const uint32_t dim = 300;
  const Dataset d = random_dataset(rng, 100, dim, 20, false);
  const Loss loss{LossKind::logistic};
  Weights on_device = random_weights(rng, dim);
  Weights on_host = on_device;
  ThrustGradient gpu(d, 1);
  BatchGradient cpu(d, dim, 1, 20);
  const auto epoch = [&] {
    gpu.take_model(on_device);
    for (int step = 0; step < 5; ++step) {
      const std::vector<uint64_t> batch = random_batch(rng, d.rows(), 20);
      gpu.compute_and_step(d, batch, on_device, loss, 1.0f / 20, 0.5);
      cpu.compute_and_step(d, batch, on_host, loss, 1.0f / 20, 0.5);
    }
    gpu.give_model(on_device);
  };
  const auto same = [&] {
    if (exact()) {
      CHECK(on_device.hash() == on_host.hash());
    } else {
      for (uint32_t i = 0; i < dim; ++i)
        CHECK(on_device.weight(i) == Approx(on_host.weight(i)).epsilon(1e-4).margin(1e-5));
    }
  };
  epoch();
  double up = gpu.traffic().to_device;
  epoch();  // nothing touched the host's model in between
  CHECK(gpu.traffic().to_device - up < 4.0 * dim);
  same();

  // A step on the host (a checkpoint loaded, say) must go up with the next epoch.
  const std::vector<uint32_t> index = {0, 7, dim - 1};
  const std::vector<float> g = {0.5f, -0.25f, 1.0f};
  on_device.step_sparse(0.3, index, g);
  on_host.step_sparse(0.3, index, g);
  up = gpu.traffic().to_device;
  epoch();
  CHECK(gpu.traffic().to_device - up >= 4.0 * dim);
  same();

  // So must another model.
  Weights other = random_weights(rng, dim);
  const uint64_t its = other.hash();
  gpu.take_model(other);
  gpu.give_model(other);
  CHECK(other.hash() == its);
}

// Rows streamed batch by batch (for rows that do not fit on the device) against rows
// uploaded once: the same update for every batch (empty ones, repeated rows, K columns),
// and the same model after steps of a held model.
TEST_CASE("thrust gradient: streamed rows give the resident rows' updates", "[device]") {
  std::mt19937_64 rng(47);
  for (const uint32_t classes : {1u, 3u}) {
    INFO("K " << classes);
    const uint32_t features = 300, dim = features * classes;
    const Dataset d = classed_rows(rng, 150, features, 30, classes);
    const Loss loss = logistic_for(classes);
    const Weights w = random_weights(rng, dim);
    ThrustGradient resident(d, classes);
    ThrustGradient streamed(d, classes, ThrustGradient::Margins::by_warp, 1, ThrustGradient::Rows::streamed);
    for (const size_t size : {40, 0, 1, 150, 17}) {
      std::vector<uint64_t> batch = random_batch(rng, d.rows(), size);
      if (size > 2) batch[2] = batch[0];
      Weights wa = w, wb = w;
      Stream<float> a, b;
      const BatchLoss al = streamed.compute(d, batch, wa, loss, 0.05f, a);
      const BatchLoss bl = resident.compute(d, batch, wb, loss, 0.05f, b);
      check_same(a, al, b, bl);
    }
    Weights wa = w, wb = w;
    streamed.take_model(wa);
    resident.take_model(wb);
    for (int step = 0; step < 12; ++step) {
      const std::vector<uint64_t> batch = random_batch(rng, d.rows(), step == 5 ? 0 : 25);
      streamed.compute_and_step(d, batch, wa, loss, 0.04f, 0.8);
      resident.compute_and_step(d, batch, wb, loss, 0.04f, 0.8);
    }
    streamed.give_model(wa);
    resident.give_model(wb);
    if (exact()) {
      CHECK(wa.hash() == wb.hash());
    } else {
      for (uint32_t i = 0; i < dim; ++i) CHECK(wa.weight(i) == Approx(wb.weight(i)).epsilon(1e-4).margin(1e-5));
    }
  }
}

// Error feedback on the device (ThrustFeedback, fed by the gradient where it computed it)
// against the host's ErrorFeedback fed the same update, copied down by a second device
// gradient (so the comparison is exact under CUDA too): the same pairs sent at every step,
// through the warm-up, exact thresholds, reused ones in and out of their band and ties at
// the threshold (handed-back values of equal magnitude), sparse and dense hand-backs, the
// same residual and the same checkpoint state, which each side loads from the other.
TEST_CASE("thrust feedback: selects as the host's error feedback", "[device]") {
  std::mt19937_64 rng(41);
  const uint32_t dim = 500;
  const Dataset d = random_dataset(rng, 200, dim, 25, false);
  const Weights w = random_weights(rng, dim);
  const Loss loss{LossKind::logistic};
  // A section a pass, so that a slow tool (compute-sanitizer's racecheck) can run one alone.
  const auto pass = [&](const char* select, uint64_t k) {
    SparsifyOptions o;
    o.k = k;
    o.select = select;
    o.reuse_period = 5;
    o.warmup_steps = 2;
    ThrustGradient gpu(d, 1), copied_down(d, 1);
    std::unique_ptr<Feedback> on_device = gpu.make_feedback(o, dim).feedback;
    REQUIRE(on_device);
    ErrorFeedback on_host(o, dim);
    Weights wg = w, wc = w;
    for (int step = 0; step < 80; ++step) {
      INFO("step " << step);
      const std::vector<uint64_t> batch = random_batch(rng, d.rows(), step % 9 == 4 ? 0 : 30);
      Stream<float> none, update;
      gpu.compute(d, batch, wg, loss, 1.0f / 30, none);
      CHECK(none.count() == 0);  // the update stayed on the device
      copied_down.compute(d, batch, wc, loss, 1.0f / 30, update);
      const Stream<float>& a = on_device->select({});
      const Stream<float>& b = on_host.select(update.pairs());
      REQUIRE(a.count() == b.count());
      CHECK(std::memcmp(a.pairs().data(), b.pairs().data(), a.bytes() - Stream<float>::kHeaderBytes) == 0);
      if (step % 3 == 0) {  // a collective hands values back: equal magnitudes make ties
        Stream<float> back(dim);
        if (step % 2 == 0) {
          back.set_zero_dense(dim);
          for (uint32_t i = 0; i < dim; i += 7) back.values()[i] = i % 2 ? 0.5f : -0.5f;
        } else {
          back.reserve_pairs(dim / 5);
          back.set_sparse(dim / 5);
          for (uint32_t j = 0; j < dim / 5; ++j) back.pairs()[j] = {j * 5, j % 3 ? 0.25f : -0.25f};
        }
        on_device->take_back(back);
        on_host.take_back(back);
      }
    }
    CHECK(on_device->residual().index == on_host.residual().index);
    CHECK(on_device->residual().value == on_host.residual().value);
    StateWriter from_device, from_host;
    on_device->save_state(from_device);
    on_host.save_state(from_host);
    CHECK(from_device.bytes() == from_host.bytes());
    StateReader into_host(from_device.bytes()), into_device(from_host.bytes());
    ErrorFeedback host_again(o, dim);
    host_again.load_state(into_host);
    on_device->load_state(into_device);
    CHECK(host_again.residual().value == on_device->residual().value);
  };
  SECTION("exact at k = 40") { pass("exact", 40); }
  SECTION("threshold-reuse at k = 40") { pass("threshold-reuse", 40); }
  SECTION("threshold-reuse at k = 9") { pass("threshold-reuse", 9); }
}

TEST_CASE("thrust gradient: the OpenMP backend's bits do not depend on the thread count", "[device]") {
  if (!exact()) return;
  std::mt19937_64 rng(17);
  const uint32_t classes = 3, dim = 500 * classes;
  const Dataset d = classed_rows(rng, 300, 500, 40, classes);
  const Weights w = random_weights(rng, dim);
  const std::vector<uint64_t> batch = random_batch(rng, d.rows(), 256);
  const Loss loss{LossKind::logistic, classes, Multiclass::softmax};
  ThrustGradient gpu(d, classes);
  Weights w1 = w;
  Stream<float> first;
  omp_set_num_threads(1);
  const BatchLoss l1 = gpu.compute(d, batch, w1, loss, 0.01f, first);
  for (const int threads : {2, 4}) {
    omp_set_num_threads(threads);
    Weights wt = w;
    Stream<float> again;
    check_same(again, gpu.compute(d, batch, wt, loss, 0.01f, again), first, l1);
  }
}

int main(int argc, char** argv) {
  if (const auto why = gpu_unavailable()) {
    std::printf("SKIPPED: the GPU path's tests need a GPU: %s\n", why->c_str());
    return 0;
  }
  std::printf("the GPU path on %s\n", gpu_backend() == GpuBackend::cuda ? "CUDA" : "Thrust's OpenMP backend");
  return run_catch_session(argc, argv);
}
