// Weights: the lazy L2 scale against an eager dense reference in double, renormalisation,
// dense vs sparse steps, Adagrad, dot products and the state hash.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/weights.h"
#include "sparse/sample.h"

using namespace mpisgd;

namespace {

struct SparseG {
  std::vector<uint32_t> index;
  std::vector<float> value;
};

// k distinct sorted indices in [0, dim) with non-zero values.
SparseG random_sparse(std::mt19937_64& rng, uint32_t dim, uint32_t k) {
  SparseG g;
  g.index = distinct_indices(dim, k, rng);
  std::uniform_real_distribution<float> u(-2, 2);
  for (size_t j = 0; j < g.index.size(); ++j) {
    float x = u(rng);
    g.value.push_back(x == 0 ? 1.0f : x);
  }
  return g;
}

// The eager, dense reference in double. `bound` tracks the sum of the absolute sizes of
// the terms that made each coordinate, which bounds the rounding error of float storage.
struct Reference {
  std::vector<double> w, bound, G;
  double l2;
  bool adagrad;
  Reference(uint32_t dim, double l2_, bool ada) : w(dim, 0), bound(dim, 0), G(dim, 0), l2(l2_), adagrad(ada) {}

  void step(double eta, const SparseG& g) {
    const double decay = 1 - eta * l2;
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] *= decay;
      bound[i] *= decay;
    }
    for (size_t j = 0; j < g.index.size(); ++j) {
      const uint32_t i = g.index[j];
      const double gi = g.value[j];
      double delta = eta * gi;
      if (adagrad) {
        G[i] += gi * gi;
        delta = eta * gi / (std::sqrt(G[i]) + 1e-8);
      }
      w[i] -= delta;
      bound[i] += std::abs(delta) + std::abs(w[i]);
    }
  }
};

void check_close(const Weights& w, const Reference& ref, double rel = 1e-5) {
  REQUIRE(w.dim() == ref.w.size());
  const std::vector<double> v = w.values();
  REQUIRE(v.size() == ref.w.size());
  size_t bad = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    REQUIRE(std::isfinite(v[i]));
    CHECK(v[i] == w.weight(static_cast<uint32_t>(i)));
    const double tol = rel * ref.bound[i] + 1e-30;
    if (std::abs(v[i] - ref.w[i]) > tol) {
      if (++bad <= 5) {
        INFO("coordinate " << i << ": lazy " << v[i] << " eager " << ref.w[i] << " tolerance " << tol);
        CHECK(std::abs(v[i] - ref.w[i]) <= tol);
      }
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("weights: lazy L2 equals eager L2", "[weights]") {
  const uint32_t dim = 300;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> eta_dist(0.01, 1.0);
  std::uniform_real_distribution<double> log_l2(std::log(1e-3), std::log(1e-1));
  const double l2 = std::exp(log_l2(rng));
  Weights w(dim, l2, false);
  Reference ref(dim, l2, false);
  for (int s = 0; s < 200; ++s) {
    const double eta = eta_dist(rng);
    REQUIRE(eta * l2 < 1);
    SparseG g = random_sparse(rng, dim, 1 + static_cast<uint32_t>(rng() % 20));
    w.step_sparse(eta, g.index, g.value);
    ref.step(eta, g);
    if (s % 50 == 49) check_close(w, ref);
  }
  check_close(w, ref);
  // Something non-trivial was compared.
  double norm = 0;
  for (double x : ref.w) norm += x * x;
  CHECK(norm > 1e-2);
}

TEST_CASE("weights: renormalisation keeps the weights exact when the scale gets small", "[weights]") {
  const uint32_t dim = 64;
  const double l2 = 0.5;  // eta * l2 = 0.5 with eta = 1: the scale halves every step
  std::mt19937_64 rng(11);
  for (bool adagrad : {false, true}) {
    INFO("adagrad " << adagrad);
    Weights w(dim, l2, adagrad);
    Reference ref(dim, l2, adagrad);
    // 0.5^25 < 1e-6: renormalisation happens inside the first 25 steps. 300 steps would
    // leave a never-renormalised scale at 0.5^300 ~ 5e-91 and v = w / scale overflowing
    // float, so finite, accurate weights at the end show that it kept happening.
    for (int s = 0; s < 300; ++s) {
      SparseG g = random_sparse(rng, dim, 8);
      w.step_sparse(1.0, g.index, g.value);
      ref.step(1.0, g);
      if (s == 25 || s == 60 || s == 299) check_close(w, ref);
    }
  }
}

TEST_CASE("weights: step_dense equals step_sparse and counts non-zeros", "[weights]") {
  const uint32_t dim = 200;
  for (bool adagrad : {false, true}) {
    INFO("adagrad " << adagrad);
    std::mt19937_64 rng(3);
    Weights a(dim, 0.05, adagrad), b(dim, 0.05, adagrad);
    for (int s = 0; s < 60; ++s) {
      const double eta = 0.1 + 0.9 * static_cast<double>(rng() % 1000) / 1000.0;
      SparseG g = random_sparse(rng, dim, 1 + static_cast<uint32_t>(rng() % 40));
      std::vector<float> dense(dim, 0.0f);
      for (size_t j = 0; j < g.index.size(); ++j) dense[g.index[j]] = g.value[j];
      a.step_sparse(eta, g.index, g.value);
      CHECK(b.step_dense(eta, dense) == g.index.size());
    }
    CHECK(a.hash() == b.hash());
    const auto va = a.values(), vb = b.values();
    CHECK(va == vb);
  }
  // Zeros of either sign leave the weights' bits as a sparse step that skips them does.
  Weights signed_zero(4, 0.01, false), skipped(4, 0.01, false);
  CHECK(signed_zero.step_dense(0.5, std::vector<float>{-0.0f, 1.0f, 0.0f, -2.0f}) == 2);
  skipped.step_sparse(0.5, std::vector<uint32_t>{1, 3}, std::vector<float>{1.0f, -2.0f});
  CHECK(signed_zero.hash() == skipped.hash());
  Weights w(10, 0.0, false);
  CHECK(w.step_dense(0.1, std::vector<float>(10, 0.0f)) == 0);
  CHECK(w.step_dense(0.1, std::vector<float>{0, 1, 0, 0, -2, 0, 0, 0, 0, 3}) == 3);
  CHECK(w.weight(1) == Approx(-0.1));
  CHECK(w.weight(4) == Approx(0.2));
  CHECK(w.weight(9) == Approx(-0.3));
  CHECK(w.weight(0) == 0.0);
}

TEST_CASE("weights: Adagrad follows the documented formula", "[weights]") {
  const uint32_t dim = 150;
  std::mt19937_64 rng(5);
  for (double l2 : {0.0, 1e-2}) {
    INFO("l2 " << l2);
    Weights w(dim, l2, true);
    Reference ref(dim, l2, true);
    for (int s = 0; s < 200; ++s) {
      const double eta = 0.05 + 0.5 * static_cast<double>(rng() % 1000) / 1000.0;
      SparseG g = random_sparse(rng, dim, 1 + static_cast<uint32_t>(rng() % 15));
      w.step_sparse(eta, g.index, g.value);
      ref.step(eta, g);
    }
    check_close(w, ref);
  }
  // First Adagrad step on a coordinate: G = g^2, so the step is eta * sign(g) (almost).
  Weights one(4, 0.0, true);
  std::vector<uint32_t> idx{1, 3};
  std::vector<float> g{4.0f, -0.25f};
  one.step_sparse(0.5, idx, g);
  CHECK(one.weight(1) == Approx(-0.5).epsilon(1e-6));
  CHECK(one.weight(3) == Approx(0.5).epsilon(1e-6));
  // Second step with the same g: G = 2 g^2, step eta / sqrt(2).
  one.step_sparse(0.5, idx, g);
  CHECK(one.weight(1) == Approx(-0.5 - 0.5 / std::sqrt(2.0)).epsilon(1e-6));
  CHECK(one.weight(3) == Approx(0.5 + 0.5 / std::sqrt(2.0)).epsilon(1e-6));
  // With the sums starting at s0 the first step is eta g / sqrt(s0 + g^2): a small
  // gradient moves its coordinate by a small step, not by eta.
  Weights started(4, 0.0, true, 1, 0.25f);
  started.step_sparse(0.5, idx, g);
  CHECK(started.weight(1) == Approx(-0.5 * 4.0 / std::sqrt(0.25 + 16.0)).epsilon(1e-6));
  CHECK(started.weight(3) == Approx(0.5 * 0.25 / std::sqrt(0.25 + 0.0625)).epsilon(1e-6));
  CHECK(started.weight(0) == 0.0);
}

TEST_CASE("weights: dot and dot_known", "[weights]") {
  Weights w(5, 0.1, false);
  // One step with eta = 1: w = -g (the decay multiplies zero weights).
  std::vector<uint32_t> idx{0, 2, 4};
  std::vector<float> g{-1.0f, -2.0f, 0.5f};
  w.step_sparse(1.0, idx, g);
  // A second step scales everything by 0.9 through the lazy factor.
  w.step_sparse(1.0, std::vector<uint32_t>{}, std::vector<float>{});
  CHECK(w.weight(0) == Approx(0.9));
  CHECK(w.weight(2) == Approx(1.8));
  CHECK(w.weight(4) == Approx(-0.45));

  std::vector<uint32_t> xi{0, 2, 3, 4};
  std::vector<float> xv{2.0f, 1.0f, 7.0f, 4.0f};
  CHECK(w.dot(xi, xv) == Approx(0.9 * 2 + 1.8 - 0.45 * 4));
  CHECK(w.dot_known(xi, xv) == Approx(0.9 * 2 + 1.8 - 0.45 * 4));

  // dot_known ignores indices >= dim.
  std::vector<uint32_t> yi{0, 4, 5, 1000000};
  std::vector<float> yv{1.0f, 2.0f, 100.0f, 1000.0f};
  CHECK(w.dot_known(yi, yv) == Approx(0.0).margin(1e-6));
  std::vector<uint32_t> zi{2, 7};
  std::vector<float> zv{3.0f, 5.0f};
  CHECK(w.dot_known(zi, zv) == Approx(5.4));
  CHECK(w.dot_known(std::vector<uint32_t>{9}, std::vector<float>{1.0f}) == 0.0);
  CHECK(w.dot(std::vector<uint32_t>{}, std::vector<float>{}) == 0.0);
}

TEST_CASE("weights: hash is equal for equal histories and changes with one more step", "[weights]") {
  auto run = [](int steps, bool adagrad) {
    Weights w(100, 1e-2, adagrad);
    std::mt19937_64 rng(99);
    for (int s = 0; s < steps; ++s) {
      SparseG g = random_sparse(rng, 100, 5);
      w.step_sparse(0.3, g.index, g.value);
    }
    return w;
  };
  for (bool adagrad : {false, true}) {
    INFO("adagrad " << adagrad);
    CHECK(run(20, adagrad).hash() == run(20, adagrad).hash());
    CHECK(run(20, adagrad).hash() != run(21, adagrad).hash());
    // A step without data still decays the weights, and the hash sees it.
    Weights a = run(20, adagrad), b = run(20, adagrad);
    b.step_sparse(0.3, std::vector<uint32_t>{}, std::vector<float>{});
    CHECK(a.hash() != b.hash());
  }
  CHECK(run(20, false).hash() != run(20, true).hash());
}

TEST_CASE("weights: eta * l2 >= 1 throws", "[weights]") {
  Weights w(4, 0.5, false);
  std::vector<uint32_t> idx{1};
  std::vector<float> g{1.0f};
  CHECK_THROWS_AS(w.step_sparse(2.0, idx, g), std::invalid_argument);
  CHECK_THROWS_AS(w.step_sparse(3.0, idx, g), std::invalid_argument);
  CHECK_THROWS_AS(w.step_dense(2.0, std::vector<float>{0, 1, 0, 0}), std::invalid_argument);
  CHECK_NOTHROW(w.step_sparse(1.9, idx, g));
  CHECK(w.weight(1) == Approx(-1.9));
}

TEST_CASE("weights: steps applied by several threads equal one thread's", "[weights]") {
  const uint32_t dim = 50000;  // steps above the size that wakes the other threads
  for (bool adagrad : {false, true}) {
    INFO("adagrad " << adagrad);
    std::mt19937_64 rng(5);
    Weights one(dim, 1e-3, adagrad, 1), three(dim, 1e-3, adagrad, 3);
    for (int s = 0; s < 5; ++s) {
      SparseG g = random_sparse(rng, dim, 20000);
      one.step_sparse(0.5, g.index, g.value);
      three.step_sparse(0.5, g.index, g.value);
      std::vector<float> dense(dim, 0.0f);
      for (size_t j = 0; j < g.index.size(); j += 2) dense[g.index[j]] = g.value[j];
      CHECK(one.step_dense(0.5, dense) == three.step_dense(0.5, dense));
    }
    CHECK(one.hash() == three.hash());
    auto w = three.values();
    CHECK(std::count_if(w.begin(), w.end(), [](double x) { return x != 0; }) > 20000);
  }
}
