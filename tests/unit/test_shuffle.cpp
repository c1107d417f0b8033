// shuffle_rows (seeded Fisher-Yates) and the learning-rate schedules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "sgd/lr_schedule.h"
#include "sgd/shuffle.h"

using namespace mpisgd;

namespace {

std::vector<uint64_t> shuffled(size_t n, uint64_t seed, int rank, int epoch) {
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  shuffle_rows(order, seed, rank, epoch);
  return order;
}

bool is_permutation_of_iota(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != i) return false;
  return true;
}

}  // namespace

TEST_CASE("shuffle: gives a permutation", "[shuffle]") {
  for (size_t n : {0, 1, 2, 3, 10, 1000, 4097}) {
    INFO("n " << n);
    auto order = shuffled(n, 42, 0, 0);
    CHECK(order.size() == n);
    CHECK(is_permutation_of_iota(order));
  }
  auto big = shuffled(1000, 42, 0, 0);
  std::vector<uint64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(big != identity);
  // It permutes whatever the vector holds, not only 0..n-1.
  std::vector<uint64_t> rows{100, 200, 300, 400, 500};
  shuffle_rows(rows, 1, 0, 0);
  std::sort(rows.begin(), rows.end());
  CHECK(rows == std::vector<uint64_t>{100, 200, 300, 400, 500});
}

TEST_CASE("shuffle: deterministic in (seed, rank, epoch) and different when any changes", "[shuffle]") {
  const auto base = shuffled(1000, 42, 3, 7);
  CHECK(shuffled(1000, 42, 3, 7) == base);
  CHECK(shuffled(1000, 43, 3, 7) != base);
  CHECK(shuffled(1000, 42, 4, 7) != base);
  CHECK(shuffled(1000, 42, 3, 8) != base);
  CHECK(shuffled(1000, 0, 0, 0) != shuffled(1000, 0, 0, 1));
  CHECK(shuffled(1000, 0, 0, 0) != shuffled(1000, 0, 1, 0));
  CHECK(shuffled(1000, 0, 0, 0) != shuffled(1000, 1, 0, 0));
  // Rank and epoch must not be interchangeable.
  CHECK(shuffled(1000, 5, 1, 2) != shuffled(1000, 5, 2, 1));

  // Shuffling an already shuffled vector again with the same key gives the same
  // permutation applied twice (the generator does not depend on the contents).
  auto twice = base;
  shuffle_rows(twice, 42, 3, 7);
  std::vector<uint64_t> expect(1000);
  for (size_t i = 0; i < 1000; ++i) expect[i] = base[base[i]];
  CHECK(twice == expect);
}

TEST_CASE("shuffle: all orders of 4 rows come out about equally often", "[shuffle]") {
  // 24 permutations over 24000 epochs: about 1000 each. A biased Fisher-Yates (e.g. one
  // that never leaves an element in place, or draws j from [0, n)) fails this by far.
  std::map<std::vector<uint64_t>, int> count;
  const int trials = 24000;
  for (int e = 0; e < trials; ++e) count[shuffled(4, 2024, 0, e)]++;
  CHECK(count.size() == 24);
  double chi2 = 0;
  for (const auto& [perm, c] : count) chi2 += (c - 1000.0) * (c - 1000.0) / 1000.0;
  INFO("chi-squared " << chi2 << " with 23 degrees of freedom");
  CHECK(chi2 < 70);  // p ~ 1e-6 for an unbiased shuffle
}

TEST_CASE("learning-rate schedules", "[lr_schedule]") {
  const double eta = 0.3;
  const uint64_t spe = 250;  // steps per epoch
  for (uint64_t step : {0ull, 1ull, 1000ull, 123456789ull}) {
    CHECK(learning_rate(Schedule::constant, eta, step, spe) == eta);
    CHECK(learning_rate(Schedule::adagrad, eta, step, spe) == eta);
  }
  CHECK(learning_rate(Schedule::invscaling, eta, 0, spe) == Approx(eta));
  CHECK(learning_rate(Schedule::invscaling, eta, spe, spe) == Approx(eta / std::sqrt(2.0)));
  CHECK(learning_rate(Schedule::invscaling, eta, 3 * spe, spe) == Approx(eta / 2));
  CHECK(learning_rate(Schedule::invscaling, eta, 8 * spe, spe) == Approx(eta / 3));
  CHECK(learning_rate(Schedule::invscaling, eta, spe / 2, spe) == Approx(eta / std::sqrt(1.5)));
  // eta/2 after 3 epochs whatever the batch size (steps per epoch).
  for (uint64_t s : {1ull, 7ull, 1000ull, 1000000ull})
    CHECK(learning_rate(Schedule::invscaling, 1.0, 3 * s, s) == Approx(0.5));
  // Decreasing in the step.
  double previous = 1e300;
  for (uint64_t step = 0; step < 5000; step += 37) {
    double lr = learning_rate(Schedule::invscaling, eta, step, spe);
    CHECK(lr < previous);
    previous = lr;
  }

  CHECK(schedule_from_name("constant") == Schedule::constant);
  CHECK(schedule_from_name("invscaling") == Schedule::invscaling);
  CHECK(schedule_from_name("adagrad") == Schedule::adagrad);
  CHECK_THROWS_AS(schedule_from_name("cosine"), std::invalid_argument);
}
