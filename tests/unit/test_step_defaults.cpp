// The default step (--batch auto, --lr auto) and early stopping.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "sgd/early_stop.h"
#include "sgd/step_defaults.h"

using namespace mpisgd;

TEST_CASE("auto batch aims at a global batch of 100 split over the workers", "[step]") {
  const DataScale big{200000, 100.0};
  CHECK(resolve_step({}, big, 1, LossKind::logistic, Schedule::invscaling).batch == 100);
  CHECK(resolve_step({}, big, 4, LossKind::logistic, Schedule::invscaling).batch == 25);
  // Rounded up: a global batch of 104, not 96.
  const ResolvedStep eight = resolve_step({}, big, 8, LossKind::logistic, Schedule::invscaling);
  CHECK(eight.batch == 13);
  CHECK_FALSE(eight.batch_shrunk);
}

TEST_CASE("auto lr is the global batch over the rows' mean squared norm", "[step]") {
  const ResolvedStep url = resolve_step({}, {200000, 100.0}, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(url.lr == Approx(1.0));
  const ResolvedStep webspam = resolve_step({}, {200000, 1.0}, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(webspam.lr == Approx(100.0));
  CHECK(resolve_step({}, {200000, 1.0}, 4, LossKind::hinge, Schedule::constant).lr == Approx(100.0));
  CHECK(resolve_step({}, {200000, 1.0}, 4, LossKind::squared, Schedule::constant).lr == Approx(25.0));
  // The same inputs give the same bits: every rank resolves alone.
  CHECK(resolve_step({}, {12345, 3.7}, 3, LossKind::logistic, Schedule::invscaling).lr ==
        resolve_step({}, {12345, 3.7}, 3, LossKind::logistic, Schedule::invscaling).lr);
}

TEST_CASE("the squared loss's auto lr stays below the batch's curvature limit", "[step]") {
  // Webspam-like rows share their features: a batch curves like one row, not like 1/G of it.
  DataScale shared{200000, 1.0, 0.5};
  const ResolvedStep capped = resolve_step({}, shared, 4, LossKind::squared, Schedule::invscaling);
  CHECK(capped.lr == Approx(2.0));
  CHECK_THAT(capped.why, Catch::Contains("largest curvature"));
  // Below the cap the linear scaling rule stands.
  DataScale apart{200000, 100.0, 0.01};
  CHECK(resolve_step({}, apart, 1, LossKind::squared, Schedule::invscaling).lr == Approx(0.25));
  // An explicit lr takes no cap.
  CHECK(resolve_step({std::nullopt, 7.0}, shared, 4, LossKind::squared, Schedule::constant).lr == 7.0);
  CHECK(needs_curvature({}));
  CHECK_FALSE(needs_curvature({std::nullopt, 1.0}));
}

TEST_CASE("the logistic and hinge losses' auto lr stops growing with the batch at 20 / curvature", "[step]") {
  // Webspam-like rows at a global batch of 1000: the linear rule's eta 1000 swings.
  const DataScale webspam{16000, 1.0, 0.5};
  const ResolvedStep big = resolve_step({250, std::nullopt}, webspam, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(big.lr == Approx(40.0));
  CHECK_THAT(big.why, Catch::Contains("20 / largest curvature of a global batch 0.5"));
  CHECK(resolve_step({250, std::nullopt}, webspam, 4, LossKind::hinge, Schedule::constant).lr == Approx(40.0));
  // URL-like rows at the default batch stay on the linear rule (cap 20 / 9 > 1).
  const ResolvedStep url = resolve_step({}, {200000, 100.0, 9.0}, 1, LossKind::logistic, Schedule::invscaling);
  CHECK(url.lr == Approx(1.0));
  CHECK_THAT(url.why, !Catch::Contains("curvature"));
  // ... and a batch of 4000 rows is capped.
  const DataScale url_4000{200000, 100.0, 8.0};
  CHECK(resolve_step({4000, std::nullopt}, url_4000, 1, LossKind::logistic, Schedule::invscaling).lr == Approx(2.5));
}

TEST_CASE("with more workers the auto global batch grows as far as the lr follows it", "[step]") {
  // URL-like: the linear lr 1 x G / 100 reaches the cap 20 / 8.2 at G = 243.
  const DataScale url{200000, 100.0, 8.2};
  CHECK(grown_global_batch(100.0, 8.2, 2, LossKind::logistic) == 200);
  CHECK(grown_global_batch(100.0, 8.2, 4, LossKind::logistic) == 243);
  const ResolvedStep two = resolve_step({}, url, 2, LossKind::logistic, Schedule::invscaling);
  CHECK(two.batch == 100);
  CHECK(two.lr == Approx(2.0));
  CHECK_THAT(two.why, Catch::Contains("global batch grown to 200 for 2 workers, 100 each (at most 243 = 20 x"));
  // Split rounding down, so the lr still follows the batch: 4 x 60, lr 2.4 under 2.44.
  const ResolvedStep four = resolve_step({}, url, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(four.batch == 60);
  CHECK(four.lr == Approx(2.4));
  CHECK_THAT(four.why, !Catch::Contains("(below"));
  CHECK_THAT(four.why, Catch::Contains("global batch grown to 243 for 4 workers, short of 100 each: at most 243 ="));
  // One rank keeps its 100 rows, and so does data whose lr is capped at 100 rows already
  // (Webspam-like: 20 / 0.47 = 42.6 < 1 x 100 / 1).
  CHECK(resolve_step({}, url, 1, LossKind::logistic, Schedule::invscaling).batch == 100);
  const ResolvedStep webspam = resolve_step({}, {200000, 1.0, 0.47}, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(webspam.batch == 25);
  CHECK_THAT(webspam.why, !Catch::Contains("grown"));
  // Without a measured curvature (an explicit lr) nothing says how far the lr
  // could follow: the batch stays at 100 rows.
  CHECK(resolve_step({std::nullopt, 1.0}, url, 4, LossKind::logistic, Schedule::invscaling).batch == 25);
  CHECK(resolve_step({}, url, 4, LossKind::logistic, Schedule::adagrad).batch == 60);
  CHECK(resolve_step({}, {200000, 100.0}, 4, LossKind::logistic, Schedule::invscaling).batch == 25);
  // The squared loss's cap is 1 / curvature, with a step constant of 1/4.
  CHECK(grown_global_batch(1.0, 0.01, 8, LossKind::squared) == 400);
  // A small set still keeps 200 steps an epoch.
  const ResolvedStep small = resolve_step({}, {40000, 100.0, 8.2}, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(small.batch == 50);
  CHECK(small.batch_shrunk);
}

TEST_CASE("small sets shrink the batch to keep 200 steps an epoch, and say so", "[step]") {
  const ResolvedStep one = resolve_step({}, {16000, 1.0}, 1, LossKind::logistic, Schedule::invscaling);
  CHECK(one.batch == 80);
  CHECK(one.batch_shrunk);
  CHECK_THAT(one.why, Catch::Contains("keeps 200 steps"));
  CHECK(one.lr == Approx(80.0));  // lr follows the batch it got
  // Fewer rows than workers x 200: one row per worker, never zero.
  const ResolvedStep tiny = resolve_step({}, {455, 30.0}, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(tiny.batch == 1);
  CHECK(tiny.lr == Approx(4.0 / 30.0));
  CHECK(resolve_step({}, {0, 0.0}, 2, LossKind::logistic, Schedule::invscaling).batch == 1);
}

TEST_CASE("explicit --batch and --lr win over auto", "[step]") {
  StepRequest both{1000, 0.5};
  const ResolvedStep r = resolve_step(both, {200000, 100.0}, 4, LossKind::logistic, Schedule::invscaling);
  CHECK(r.batch == 1000);
  CHECK(r.lr == 0.5);
  CHECK_FALSE(r.batch_shrunk);
  // An explicit batch still sets the auto lr.
  StepRequest batch_only{10, std::nullopt};
  CHECK(resolve_step(batch_only, {200000, 100.0}, 4, LossKind::logistic, Schedule::invscaling).lr == Approx(0.4));
}

TEST_CASE("early stopping follows scikit-learn's tol and n_iter_no_change", "[step]") {
  EarlyStop stop({.enabled = true, .tol = 0.01, .patience = 2});
  CHECK_FALSE(stop.after_epoch(1.0));
  CHECK_FALSE(stop.after_epoch(0.5));    // improved
  CHECK_FALSE(stop.after_epoch(0.495));  // better, but by less than tol: 1
  CHECK_FALSE(stop.after_epoch(0.48));   // beats the best, 0.495, by more than tol: 0
  CHECK_FALSE(stop.after_epoch(0.475));  // 1
  CHECK(stop.after_epoch(0.6));          // 2: stop
  CHECK(stop.stopped());
  CHECK_THAT(stop.reason(), Catch::Contains("0.475"));
}

TEST_CASE("a loss that is not finite is no improvement", "[step]") {
  EarlyStop stop({.enabled = true, .tol = 1e-3, .patience = 2});
  stop.after_epoch(1.0);
  CHECK_FALSE(stop.after_epoch(std::numeric_limits<double>::quiet_NaN()));
  CHECK(stop.after_epoch(std::numeric_limits<double>::infinity()));
}

TEST_CASE("with early stopping off every epoch runs", "[step]") {
  EarlyStop stop({.enabled = false, .tol = 1e-3, .patience = 1});
  for (int i = 0; i < 10; ++i) CHECK_FALSE(stop.after_epoch(1.0));
}

TEST_CASE("the stopper's state survives a checkpoint", "[step][checkpoint]") {
  const EarlyStopOptions o{.enabled = true, .tol = 0.1, .patience = 3};
  EarlyStop a(o), b(o);
  for (double loss : {1.0, 0.95, 0.93}) a.after_epoch(loss);
  StateWriter out;
  a.save_state(out);
  StateReader in(out.bytes());
  b.load_state(in);
  in.expect_end();
  for (double loss : {0.92, 0.91}) CHECK(a.after_epoch(loss) == b.after_epoch(loss));
  CHECK(a.stopped());
  CHECK(b.stopped());
}

TEST_CASE("AdaGrad's sums start at a batch's squared gradient, its auto eta at the default's first steps",
          "[step]") {
  // URL-like: s0 = 1/4 x 100 / 100, eta = lr 1 x sqrt(s0).
  const ResolvedStep url = resolve_step({}, {200000, 100.0, 0.1}, 1, LossKind::logistic, Schedule::adagrad);
  CHECK(url.batch == 100);
  CHECK(url.adagrad_start == Approx(0.25));
  CHECK(url.lr == Approx(0.5));
  CHECK_THAT(url.why, Catch::Contains("AdaGrad's sums start at 0.25 = 0.25 x mean ||x||^2 100 / global batch 100"));
  // Webspam-like: the capped lr 20 / 0.5 = 40 at a global batch of 100, s0 = 1/4 x 1 / 100.
  const ResolvedStep webspam = resolve_step({}, {200000, 1.0, 0.5}, 1, LossKind::logistic, Schedule::adagrad);
  CHECK(webspam.adagrad_start == Approx(0.0025));
  CHECK(webspam.lr == Approx(40.0 * 0.05));
  CHECK_THAT(webspam.why, Catch::Contains("largest curvature"));
  // The hinge and squared losses' derivative at 0 is the label: s0 = 1 x 100 / 100.
  CHECK(resolve_step({}, {200000, 100.0, 0.1}, 1, LossKind::hinge, Schedule::adagrad).adagrad_start == Approx(1.0));
  // An explicit eta is kept, and the sums still start from the data.
  const ResolvedStep given =
      resolve_step({std::nullopt, 0.3}, {200000, 100.0}, 1, LossKind::logistic, Schedule::adagrad);
  CHECK(given.lr == 0.3);
  CHECK(given.adagrad_start == Approx(0.25));
  // Other schedules keep no sums.
  CHECK(resolve_step({}, {200000, 100.0, 0.1}, 1, LossKind::logistic, Schedule::invscaling).adagrad_start == 0);
}
