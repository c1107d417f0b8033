// A server's copies of what it last sent each worker (--drop-rate's pull side): an answer
// carries the largest changes, as new values, and leaves the rest behind for later.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "ps/client_copies.h"

using namespace mpisgd;

namespace {

// Applies an answer to a worker's copy of the shard.
void take(std::vector<float>& copy, const std::vector<uint32_t>& index, const std::vector<float>& value) {
  for (size_t j = 0; j < index.size(); ++j) copy[index[j]] = value[j];
}

}  // namespace

TEST_CASE("a pull answer carries the largest changes since the last one", "[ps-drop]") {
  const uint32_t n = 10;
  Weights shard(n, 0, false);
  ClientCopies copies(n, 2, 0.5);
  copies.sync(shard);
  std::vector<float> worker0(n), worker1(n);

  // A step changes 6 coordinates by different amounts: half of them go out, the largest.
  const std::vector<uint32_t> touched = {1, 2, 4, 5, 7, 9};
  const std::vector<float> g = {1, -6, 3, 5, -2, 4};
  shard.step_sparse(1.0, touched, g);
  copies.changed(touched);
  std::vector<uint32_t> index;
  std::vector<float> value;
  copies.answer(0, shard, index, value);
  REQUIRE(index == std::vector<uint32_t>{2, 5, 9});
  REQUIRE(value == std::vector<float>{6, -5, -4});
  take(worker0, index, value);

  // Nothing changed since: nothing goes out, and what stayed behind waits.
  copies.answer(0, shard, index, value);
  REQUIRE(index.empty());

  // One more change of one coordinate: one value goes out, the largest difference among
  // all that are behind (coordinate 4's -3 beats coordinate 7's 2.5).
  const std::vector<uint32_t> one = {7};
  const std::vector<float> g7 = {-0.5};
  shard.step_sparse(1.0, one, g7);
  copies.changed(one);
  copies.answer(0, shard, index, value);
  REQUIRE(index == std::vector<uint32_t>{4});
  REQUIRE(value == std::vector<float>{-3});
  take(worker0, index, value);

  // The other worker was never answered: its copy is behind on every changed coordinate,
  // and gets the largest ceil(7 / 2) = 4 of them.
  copies.answer(1, shard, index, value);
  REQUIRE(index == std::vector<uint32_t>{2, 4, 5, 9});
  take(worker1, index, value);

  // Every value a worker holds is one the shard had: sent values are exact.
  for (uint32_t i = 0; i < n; ++i) {
    CAPTURE(i);
    REQUIRE((worker0[i] == 0 || worker0[i] == static_cast<float>(shard.weight(i))));
  }

  // At an epoch's start the workers hold the gathered model: nothing is behind.
  copies.sync(shard);
  shard.step_sparse(1.0, one, g7);
  copies.changed(one);
  copies.answer(0, shard, index, value);
  REQUIRE(index == std::vector<uint32_t>{7});
  REQUIRE(value == std::vector<float>{static_cast<float>(shard.weight(7))});
}
