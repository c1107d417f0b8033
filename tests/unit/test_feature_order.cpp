// FeatureOrder: a bijection of [0, N) that puts popular features first in each stripe and
// deals them evenly over the stripes; renumbered rows hold the same pairs, sorted; the
// model comes back in file order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "data/dataset.h"
#include "data/feature_order.h"

using namespace mpisgd;

namespace {

std::vector<uint32_t> random_counts(std::mt19937_64& rng, uint32_t dim, uint32_t most) {
  std::vector<uint32_t> counts(dim);
  for (uint32_t& c : counts) c = static_cast<uint32_t>(rng() % (most + 1));
  return counts;
}

// The stripe of internal index x: stripe b is [dim b / B, dim (b + 1) / B).
uint32_t stripe_of(uint32_t x, uint32_t dim, uint32_t stripes) {
  uint32_t b = 0;
  while (uint64_t{dim} * (b + 1) / stripes <= x) ++b;
  return b;
}

Dataset random_rows(std::mt19937_64& rng, uint32_t dim, uint32_t rows, uint32_t longest, uint32_t beyond) {
  Dataset d;
  d.dim = dim;
  for (uint32_t r = 0; r < rows; ++r) {
    std::vector<uint32_t> idx(dim + beyond);
    for (uint32_t i = 0; i < dim + beyond; ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(rng() % (std::min(longest, dim + beyond) + 1));
    std::sort(idx.begin(), idx.end());
    for (uint32_t i : idx) {
      d.index.owned().push_back(i);
      d.value.owned().push_back(static_cast<float>(rng() % 1000) / 7.0f - 60.0f);
    }
    d.row_ptr.push_back(d.index.size());
    d.label.push_back(1.0f);
  }
  return d;
}

std::vector<std::map<uint32_t, float>> pairs_of(const Dataset& d) {
  std::vector<std::map<uint32_t, float>> out(d.rows());
  for (uint64_t r = 0; r < d.rows(); ++r)
    for (uint64_t k = d.row_ptr[r]; k < d.row_ptr[r + 1]; ++k) out[r][d.index[k]] = d.value[k];
  return out;
}

}  // namespace

TEST_CASE("feature order: stripes are the fewest multiple of P, at least 16", "[feature_order]") {
  CHECK(FeatureOrder::stripes_for(1) == 16);
  CHECK(FeatureOrder::stripes_for(3) == 18);
  CHECK(FeatureOrder::stripes_for(4) == 16);
  CHECK(FeatureOrder::stripes_for(5) == 20);
  CHECK(FeatureOrder::stripes_for(16) == 16);
  CHECK(FeatureOrder::stripes_for(17) == 17);
  CHECK(FeatureOrder::stripes_for(100) == 100);
}

TEST_CASE("feature order: a bijection, popular first within a stripe, ties in file order", "[feature_order]") {
  std::mt19937_64 rng(5);
  for (uint32_t dim : {1u, 7u, 16u, 100u, 1001u, 5000u}) {
    for (uint32_t stripes : {1u, 3u, 16u, 18u, 64u}) {
      INFO("dim " << dim << ", stripes " << stripes);
      // Few distinct counts (many ties) and many, ranked by the counting sort; counts past
      // its table's bound (2^22) take the radix sort, with ties there too.
      std::vector<uint32_t> counts = random_counts(rng, dim, dim % 2 ? 5 : 70000);
      if (dim % 5 == 0)
        for (uint32_t& c : counts) c = c % 3 + (c % 2 ? uint32_t{1} << 30 : 0);
      const FeatureOrder order = FeatureOrder::from_counts(counts, stripes);
      REQUIRE(order.dim() == dim);
      std::vector<uint32_t> file_of(dim, dim);
      for (uint32_t f = 0; f < dim; ++f) {
        REQUIRE(order.internal(f) < dim);
        REQUIRE(file_of[order.internal(f)] == dim);
        file_of[order.internal(f)] = f;
      }
      for (uint32_t x = 1; x < dim; ++x) {
        if (stripe_of(x, dim, stripes) != stripe_of(x - 1, dim, stripes)) continue;
        const uint32_t a = file_of[x - 1], b = file_of[x];
        CHECK((counts[a] > counts[b] || (counts[a] == counts[b] && a < b)));
      }
    }
  }
}

TEST_CASE("feature order: every popularity tier is dealt evenly over P ranges", "[feature_order]") {
  std::mt19937_64 rng(9);
  const uint32_t dim = 100003;
  std::vector<uint32_t> counts(dim);
  for (uint32_t f = 0; f < dim; ++f) counts[f] = dim - f;  // feature f is the f-th most popular
  std::shuffle(counts.begin(), counts.end(), rng);
  for (int ranks : {1, 3, 4, 5, 8, 13}) {
    INFO("P = " << ranks);
    const uint32_t stripes = FeatureOrder::stripes_for(ranks);
    const FeatureOrder order = FeatureOrder::from_counts(counts, stripes);
    for (uint32_t top : {stripes, 10 * stripes, 1000 * stripes}) {
      std::vector<uint32_t> held(static_cast<size_t>(ranks), 0);
      for (uint32_t f = 0; f < dim; ++f)
        if (counts[f] > dim - top) {
          // Range p of P near-equal ranges holds x, as the split collectives own them.
          const uint32_t x = order.internal(f);
          int p = 0;
          while (uint64_t{dim} * static_cast<uint64_t>(p + 1) / static_cast<uint64_t>(ranks) <= x) ++p;
          ++held[static_cast<size_t>(p)];
        }
      for (uint32_t h : held) CHECK(h == top / static_cast<uint32_t>(ranks));
    }
  }
}

TEST_CASE("feature order: renumbered rows hold the same pairs, sorted, past-N indices kept", "[feature_order]") {
  std::mt19937_64 rng(13);
  const uint32_t dim = 3000;
  // Short rows, rows long enough for the 8-bit passes (>= 256 entries) and for the
  // 12-bit ones over every bit (>= 1,024); test rows may name features beyond N, up to
  // the top of the index range.
  Dataset d = random_rows(rng, dim, 60, 2000, 40);
  // A long row, dense over a stretch, ending past N at the top of the index range.
  for (uint32_t i = 1000; i < 2400; ++i) {
    d.index.owned().push_back(i);
    d.value.owned().push_back(0.5f * static_cast<float>(i));
  }
  d.index.owned().push_back(UINT32_MAX);
  d.value.owned().push_back(2.5f);
  d.row_ptr.push_back(d.index.size());
  d.label.push_back(1.0f);
  const auto before = pairs_of(d);
  std::vector<uint32_t> counts(dim, 0);
  for (uint32_t i : d.index)
    if (i < dim) ++counts[i];
  const FeatureOrder order = FeatureOrder::from_counts(counts, 16);

  auto check = [&](const Dataset& renumbered) {
    std::vector<uint32_t> internal_of(dim + 40);
    for (uint32_t f = 0; f < dim + 40; ++f) internal_of[f] = f < dim ? order.internal(f) : f;
    const auto after = pairs_of(renumbered);
    REQUIRE(after.size() == before.size());
    for (uint64_t r = 0; r < renumbered.rows(); ++r) {
      INFO("row " << r);
      auto index = renumbered.row_index(r);
      CHECK(std::adjacent_find(index.begin(), index.end(), std::greater_equal<>()) == index.end());
      std::map<uint32_t, float> expect;
      for (const auto& [f, v] : before[r]) expect[f == UINT32_MAX ? f : internal_of[f]] = v;
      CHECK(after[r] == expect);
    }
  };

  SECTION("rows in memory of their own are renumbered in place") {
    for (int threads : {1, 3}) {
      Dataset copy = d;
      order.apply(copy, threads);
      check(copy);
    }
  }
  SECTION("rows mapped read-only (a binary cache) are copied, the mapping left as it was") {
    auto index = std::make_shared<std::vector<uint32_t>>(d.index.begin(), d.index.end());
    auto value = std::make_shared<std::vector<float>>(d.value.begin(), d.value.end());
    Dataset mapped;
    mapped.dim = dim;
    mapped.row_ptr = d.row_ptr;
    mapped.label = d.label;
    mapped.index = CsrArray<uint32_t>(index, index->data(), index->size());
    mapped.value = CsrArray<float>(value, value->data(), value->size());
    order.apply(mapped, 2);
    CHECK_FALSE(mapped.index.mapped());
    check(mapped);
    CHECK(std::equal(index->begin(), index->end(), d.index.begin()));
    CHECK(std::equal(value->begin(), value->end(), d.value.begin()));
  }
}

TEST_CASE("feature order: model values come back in file order", "[feature_order]") {
  std::mt19937_64 rng(17);
  const uint32_t dim = 777;
  const FeatureOrder order = FeatureOrder::from_counts(random_counts(rng, dim, 50), 18);
  std::vector<double> internal(dim);
  for (uint32_t f = 0; f < dim; ++f) internal[order.internal(f)] = 0.5 * f - 3;
  const std::vector<double> file = order.to_file_order(internal);
  REQUIRE(file.size() == dim);
  for (uint32_t f = 0; f < dim; ++f) CHECK(file[f] == 0.5 * f - 3);
}
