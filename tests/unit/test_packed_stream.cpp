// The wire form of streams (sparse/packed_stream.h): packing and unpacking give back the
// stream bit for bit, runs are chosen only when they are smaller, the byte counts are the
// format's, and damaged blocks are refused by name.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "sparse/packed_stream.h"

using namespace mpisgd;

namespace {

// Features of `columns` consecutive slots each: `features` of them, random and distinct
// below `dim_features`, each with all its slots, ascending; values random (one -0.0 and a
// denormal among them, so that bits, not values, are compared).
template <class V>
std::vector<Pair<V>> feature_runs(std::mt19937& rng, uint32_t dim_features, uint32_t features, uint32_t columns) {
  std::vector<char> taken(dim_features, 0);
  std::uniform_int_distribution<uint32_t> at(0, dim_features - 1);
  for (uint32_t n = 0; n < features;) {
    const uint32_t f = at(rng);
    if (!taken[f]) taken[f] = 1, ++n;
  }
  std::normal_distribution<double> value;
  std::vector<Pair<V>> pairs;
  for (uint32_t f = 0; f < dim_features; ++f)
    if (taken[f])
      for (uint32_t c = 0; c < columns; ++c) pairs.push_back({f * columns + c, static_cast<V>(value(rng))});
  if (pairs.size() > 2) {
    pairs[0].value = static_cast<V>(-0.0);
    pairs[1].value = std::numeric_limits<V>::denorm_min();
  }
  return pairs;
}

template <class V>
Stream<V> sparse_stream(const std::vector<Pair<V>>& pairs, uint64_t length) {
  Stream<V> s(length);
  s.reserve_pairs(pairs.size());
  s.set_sparse(static_cast<uint32_t>(pairs.size()));
  std::copy(pairs.begin(), pairs.end(), s.pairs().begin());
  return s;
}

template <class V>
bool same_bits(const Stream<V>& a, const Stream<V>& b) {
  return a.bytes() == b.bytes() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

// Sends `s` as a collective would: its wire bytes copied into a stream that held
// something else, unpacked there; returns that stream.
template <class V>
Stream<V> round_trip(const Stream<V>& s, uint64_t length, size_t* wire_bytes = nullptr) {
  PackedStream<V> out, in;
  const auto w = out.wire(s);
  if (wire_bytes) *wire_bytes = w.size();
  Stream<V> back(length);
  back.reserve_pairs(s.count());
  back.set_zero_dense(4);
  std::memcpy(back.data(), w.data(), w.size());
  in.unpack(back, w.size());
  return back;
}

}  // namespace

TEMPLATE_TEST_CASE("packed streams give back the stream bit for bit", "[packed_stream]", float, double) {
  using V = TestType;
  std::mt19937 rng(7);
  for (uint32_t columns : {1u, 2u, 3u, 10u}) {
    for (uint32_t features : {0u, 1u, 5u, 300u}) {
      const uint32_t dim_features = 1000;
      const auto pairs = feature_runs<V>(rng, dim_features, features, columns);
      const Stream<V> s = sparse_stream(pairs, uint64_t{dim_features} * columns);
      size_t wire = 0;
      const Stream<V> back = round_trip(s, uint64_t{dim_features} * columns, &wire);
      INFO("K = " << columns << ", features " << features);
      CHECK(same_bits(back, s));
      CHECK(wire <= s.bytes());
      CHECK(wire == Stream<V>::kHeaderBytes + std::min(runs_bytes<V>(pairs), pairs.size() * sizeof(Pair<V>)));
    }
  }
}

TEMPLATE_TEST_CASE("runs cost 8 bytes a run and a value's bytes a value", "[packed_stream]", float, double) {
  using V = TestType;
  // Indices 3 4 5 | 9 | 20 21: three runs.
  const std::vector<Pair<V>> pairs{{3, 1}, {4, 2}, {5, 3}, {9, 4}, {20, 5}, {21, 6}};
  CHECK(runs_bytes<V>(pairs) == 3 * 8 + 6 * sizeof(V));
  // A K = 10 feature: 44 bytes for floats where its pairs take 80.
  std::vector<Pair<V>> feature;
  for (uint32_t c = 0; c < 10; ++c) feature.push_back({70 + c, static_cast<V>(c + 1)});
  CHECK(runs_bytes<V>(feature) == 8 + 10 * sizeof(V));
  CHECK(packed_bytes<V>(feature) == 8 + 8 + 10 * sizeof(V));
}

TEMPLATE_TEST_CASE("singletons and dense streams cross as they are", "[packed_stream]", float, double) {
  using V = TestType;
  // Every index alone: runs would cost 8 + sizeof(V) a value, pairs 4 + sizeof(V).
  const std::vector<Pair<V>> alone{{1, 1}, {3, 2}, {5, 3}, {100, 4}};
  const Stream<V> s = sparse_stream(alone, 200);
  PackedStream<V> packer;
  auto w = packer.wire(s);
  CHECK(w.data() == s.data());
  CHECK(w.size() == s.bytes());

  Stream<V> dense(50);
  dense.set_zero_dense(50);
  dense.values()[7] = 3;
  w = packer.wire(dense);
  CHECK(w.data() == dense.data());
  CHECK(same_bits(round_trip(dense, 50), dense));
}

TEMPLATE_TEST_CASE("a received stream whose bytes do not match its header is refused", "[packed_stream]", float,
                   double) {
  using V = TestType;
  const std::vector<Pair<V>> alone{{1, 1}, {3, 2}};
  Stream<V> s = sparse_stream(alone, 200);
  PackedStream<V> packer;
  CHECK_THROWS_WITH(packer.unpack(s, s.bytes() - 1), Catch::Contains("of form 0 and count 2"));
  CHECK_THROWS_WITH(packer.unpack(s, 3), Catch::Contains("shorter than a header"));
  CHECK_NOTHROW(packer.unpack(s, s.bytes()));
}

TEST_CASE("runs reach the last index and blocks of pairs read back", "[packed_stream]") {
  const uint32_t top = std::numeric_limits<uint32_t>::max();
  const std::vector<Pair<float>> pairs{{0, 1}, {1, 2}, {top - 2, 3}, {top - 1, 4}};
  std::vector<std::byte> block(packed_bytes<float>(pairs));
  REQUIRE(write_packed<float>(pairs, block.data()) == block.size());
  std::vector<Pair<float>> back(pairs.size());
  REQUIRE(read_packed_pairs<float>(block.data(), block.size(), back.data()) == pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    CHECK(back[i].index == pairs[i].index);
    CHECK(back[i].value == pairs[i].value);
  }
}

TEST_CASE("damaged blocks are refused by name", "[packed_stream]") {
  const std::vector<Pair<float>> pairs{{10, 1}, {11, 2}, {12, 3}};
  std::vector<std::byte> block(packed_bytes<float>(pairs));
  write_packed<float>(pairs, block.data());
  Stream<float> s(100);
  CHECK_THROWS_WITH(read_packed<float>(block.data(), 4, s), Catch::Contains("shorter than a header"));
  CHECK_THROWS_WITH(read_packed<float>(block.data(), block.size() - 4, s), Catch::Contains("longer than the block"));
  CHECK_THROWS_WITH(read_packed<float>(block.data(), 8 + 4, s), Catch::Contains("cut off"));

  auto header = [&](uint32_t count, uint32_t form) {
    const uint32_t h[2] = {count, form};
    std::memcpy(block.data(), h, sizeof h);
  };
  header(4, PackedStream<float>::kRuns);
  CHECK_THROWS_WITH(read_packed<float>(block.data(), block.size(), s), Catch::Contains("header says 4"));
  header(3, 7);
  CHECK_THROWS_WITH(read_packed<float>(block.data(), block.size(), s), Catch::Contains("form 7"));
  header(3, 0);
  CHECK_THROWS_WITH(read_packed<float>(block.data(), block.size(), s), Catch::Contains("bytes for 3 pairs"));

  const uint32_t past[2] = {std::numeric_limits<uint32_t>::max(), 2};
  std::vector<std::byte> over(8 + sizeof past + 2 * sizeof(float));
  const uint32_t h[2] = {2, PackedStream<float>::kRuns};
  std::memcpy(over.data(), h, sizeof h);
  std::memcpy(over.data() + 8, past, sizeof past);
  CHECK_THROWS_WITH(read_packed<float>(over.data(), over.size(), s), Catch::Contains("passes index 2^32 - 1"));
}
