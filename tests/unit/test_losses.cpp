// The three losses and their K-class forms: derivatives against finite differences,
// logistic stability for large margins, flags and names.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/loss.h"

using namespace mpisgd;

namespace {

double central_difference(const Loss& loss, double p, double y, double h) {
  return (loss.value(p + h, y) - loss.value(p - h, y)) / (2 * h);
}

void check_derivative(const Loss& loss, double p, double y) {
  const double h = 1e-5 * std::max(1.0, std::abs(p));
  const double fd = central_difference(loss, p, y, h);
  const double d = loss.derivative(p, y);
  INFO("loss " << model_name(loss.kind) << " p=" << p << " y=" << y << " f'=" << d << " fd=" << fd);
  CHECK(std::abs(d - fd) <= 1e-6 * std::max(1.0, std::abs(fd)));
}

}  // namespace

TEST_CASE("losses: derivative matches central finite differences", "[loss]") {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> margin(-8, 8);
  std::uniform_real_distribution<double> target(-5, 5);

  SECTION("logistic") {
    Loss loss{LossKind::logistic};
    for (double y : {-1.0, 1.0})
      for (double p : {-30.0, -5.0, -1.0, -0.1, 0.0, 0.1, 1.0, 5.0, 30.0}) check_derivative(loss, p, y);
    for (int i = 0; i < 500; ++i) check_derivative(loss, margin(rng), rng() % 2 ? 1.0 : -1.0);
  }
  SECTION("hinge, away from the kink at y p = 1") {
    Loss loss{LossKind::hinge};
    int checked_flat = 0, checked_slope = 0;
    for (int i = 0; i < 500; ++i) {
      double p = margin(rng), y = rng() % 2 ? 1.0 : -1.0;
      if (std::abs(1 - y * p) < 1e-3) continue;
      check_derivative(loss, p, y);
      (y * p < 1 ? checked_slope : checked_flat)++;
    }
    CHECK(checked_flat > 50);
    CHECK(checked_slope > 50);
    // Exact values on both sides.
    CHECK(loss.derivative(0.5, 1) == -1.0);
    CHECK(loss.derivative(-0.5, -1) == 1.0);
    CHECK(loss.derivative(2, 1) == 0.0);
    CHECK(loss.derivative(-2, -1) == 0.0);
    CHECK(loss.value(2, 1) == 0.0);
    CHECK(loss.value(0.25, 1) == 0.75);
    CHECK(loss.value(0.25, -1) == 1.25);
  }
  SECTION("squared") {
    Loss loss{LossKind::squared};
    for (int i = 0; i < 500; ++i) check_derivative(loss, margin(rng), target(rng));
    CHECK(loss.value(3, 1) == 2.0);
    CHECK(loss.derivative(3, 1) == 2.0);
    CHECK(loss.derivative(-1.5, 2) == -3.5);
  }
}

TEST_CASE("losses: logistic is finite and accurate for large margins", "[loss]") {
  Loss loss{LossKind::logistic};
  for (double y : {-1.0, 1.0}) {
    for (double p = -1000; p <= 1000; p += 12.5) {
      const double v = loss.value(p, y);
      const double d = loss.derivative(p, y);
      INFO("p=" << p << " y=" << y << " value=" << v << " derivative=" << d);
      REQUIRE(std::isfinite(v));
      REQUIRE(std::isfinite(d));
      CHECK(v >= 0);
      // Reference ln(1 + e^-z) in long double, written the stable way round.
      const long double z = static_cast<long double>(y * p);
      const long double ref = z > 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z));
      CHECK(std::abs(static_cast<long double>(v) - ref) <= 1e-12L * std::max(ref, 1e-300L));
      const long double dref = -static_cast<long double>(y) / (1 + std::exp(z));
      CHECK(std::abs(static_cast<long double>(d) - dref) <= 1e-12L * std::max(std::abs(dref), 1e-300L));
    }
  }
  CHECK(loss.value(0, 1) == Approx(std::log(2.0)).epsilon(1e-15));
  CHECK(loss.derivative(0, 1) == -0.5);
  CHECK(loss.derivative(0, -1) == 0.5);
  CHECK(loss.value(-1000, 1) == Approx(1000.0).epsilon(1e-15));
  CHECK(loss.value(1000, -1) == Approx(1000.0).epsilon(1e-15));
  CHECK(loss.value(40, 1) == Approx(std::exp(-40.0)).epsilon(1e-12));  // not rounded to 0
  CHECK(loss.value(40, 1) > 0);
  CHECK(loss.derivative(-1000, 1) == Approx(-1.0));
  CHECK(loss.derivative(1000, -1) == Approx(1.0));
}

TEST_CASE("losses: classification flags", "[loss]") {
  CHECK(Loss{LossKind::logistic}.classification());
  CHECK(Loss{LossKind::hinge}.classification());
  CHECK_FALSE(Loss{LossKind::squared}.classification());
}

TEST_CASE("losses: names round trip and unknown names throw", "[loss]") {
  CHECK(loss_from_name("logreg") == LossKind::logistic);
  CHECK(loss_from_name("svm") == LossKind::hinge);
  CHECK(loss_from_name("linreg") == LossKind::squared);
  for (LossKind k : {LossKind::logistic, LossKind::hinge, LossKind::squared})
    CHECK(loss_from_name(model_name(k)) == k);
  CHECK(std::string(model_name(LossKind::logistic)) == "logreg");
  CHECK_THROWS_AS(loss_from_name("lasso"), std::invalid_argument);
  CHECK_THROWS_AS(loss_from_name(""), std::invalid_argument);
  CHECK_THROWS_AS(loss_from_name("LogReg"), std::invalid_argument);
  CHECK_THROWS_WITH(loss_from_name("lasso"), Catch::Contains("lasso"));
}

namespace {

// Whether the Crammer-Singer hinge has a kink within 1e-3 of m: the active margin at 0, or
// the two largest rivals tied.
bool near_kink(const std::vector<double>& m, uint32_t y) {
  std::vector<double> rivals;
  for (uint32_t c = 0; c < m.size(); ++c)
    if (c != y) rivals.push_back(m[c]);
  std::sort(rivals.rbegin(), rivals.rend());
  return std::abs(1 + rivals[0] - m[y]) < 1e-3 || rivals[0] - rivals[1] < 1e-3;
}

}  // namespace

TEST_CASE("losses: K-class derivatives match central finite differences", "[loss]") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> margin(-6, 6);
  for (uint32_t classes : {3u, 4u, 10u}) {
    for (Loss loss : {Loss{LossKind::logistic, classes, Multiclass::softmax}, Loss{LossKind::logistic, classes},
                      Loss{LossKind::hinge, classes}, Loss{LossKind::hinge, classes, Multiclass::crammer_singer}}) {
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<double> m(classes), d(classes);
        for (double& x : m) x = margin(rng);
        const uint32_t y = static_cast<uint32_t>(rng() % classes);
        loss.derivatives(m, y, d);
        for (uint32_t c = 0; c < classes; ++c) {
          INFO("K " << classes << " form " << static_cast<int>(loss.multiclass) << " kind " << model_name(loss.kind)
                    << " c " << c);
          // The hinges have kinks (y_c m_c = 1; 1 + m_r = m_y, or two rivals tied), where a
          // difference straddling one is neither side's slope.
          if (loss.kind == LossKind::hinge && std::abs(std::abs(m[c]) - 1) < 1e-3) continue;
          if (loss.multiclass == Multiclass::crammer_singer && near_kink(m, y)) continue;
          const double h = 1e-5;
          std::vector<double> up = m, down = m;
          up[c] += h;
          down[c] -= h;
          const double fd = (loss.value(up, y) - loss.value(down, y)) / (2 * h);
          CHECK(std::abs(d[c] - fd) <= 1e-6 * std::max(1.0, std::abs(fd)));
        }
      }
    }
  }
}

TEST_CASE("losses: one-vs-rest is K binary losses; softmax's derivatives sum to zero", "[loss]") {
  const std::vector<double> m = {0.5, -2, 3, 0.25};
  const Loss ovr{LossKind::logistic, 4}, softmax{LossKind::logistic, 4, Multiclass::softmax};
  const Loss binary{LossKind::logistic};
  std::vector<double> d(4);
  ovr.derivatives(m, 2, d);
  double sum = 0;
  for (uint32_t c = 0; c < 4; ++c) {
    const double y = c == 2 ? 1 : -1;
    CHECK(d[c] == binary.derivative(m[c], y));
    sum += binary.value(m[c], y);
  }
  CHECK(ovr.value(m, 2) == sum);
  softmax.derivatives(m, 1, d);
  CHECK(d[0] + d[1] + d[2] + d[3] == Approx(0).margin(1e-12));
  CHECK(d[1] < 0);
  // Large margins neither overflow nor lose the loss.
  CHECK(softmax.value(std::vector<double>{800, -800, 0, 1}, 0) == Approx(0).margin(1e-12));
  CHECK(softmax.value(std::vector<double>{800, -800, 0, 1}, 1) == Approx(1600));
  CHECK(Loss::argmax(std::vector<double>{1, 3, 3, 2}) == 1);  // the first of the largest, as LIBLINEAR

  // Crammer-Singer: the most violating rival and the true class move, nothing else.
  const Loss cs{LossKind::hinge, 4, Multiclass::crammer_singer};
  cs.derivatives(m, 0, d);  // y = 0 at 0.5, rival class 2 at 3: 1 + 3 - 0.5 > 0
  CHECK(d == std::vector<double>{-1, 0, 1, 0});
  CHECK(cs.value(m, 0) == 3.5);
  cs.derivatives(m, 2, d);  // y = 2 at 3, rival class 0 at 0.5: 1 + 0.5 - 3 < 0
  CHECK(d == std::vector<double>{0, 0, 0, 0});
  CHECK(cs.value(m, 2) == 0);
}
