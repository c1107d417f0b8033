// Top-k selection (issue 16): exact keeps the k largest magnitudes (checked against a full
// sort, also on layouts that defeat a sample and on sizes around the selectors' blocks of 16
// values), the threshold methods keep a count within their band of k on every call and always
// a "top set" (nothing left out is larger than anything kept), approx keeps k in expectation,
// and the random methods repeat themselves for a seed. Gradients are drawn normal and
// heavy-tailed (Cauchy), with signs, and with ties.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sparse/topk_select.h"
#include "tests/sparse_pairs.h"

using namespace mpisgd;

namespace {

std::vector<float> normal_values(std::mt19937& rng, size_t n, float sigma = 1) {
  std::normal_distribution<float> d(0, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<float> cauchy_values(std::mt19937& rng, size_t n) {
  std::cauchy_distribution<float> d(0, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Small integers in [-4, 4] without 0: every magnitude tied with many others.
std::vector<float> tied_values(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(1, 4);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>((rng() % 2 ? 1 : -1) * d(rng));
  return v;
}

std::vector<uint32_t> select(TopkSelector& s, const std::vector<float>& values, size_t k) {
  std::vector<uint32_t> kept{7, 7, 7};  // stale contents must be replaced
  s.select(values, k, kept);
  return kept;
}

// Ascending, in range, and no value left out is larger in magnitude than one kept.
void check_top_set(const std::vector<float>& values, const std::vector<uint32_t>& kept) {
  REQUIRE(std::is_sorted(kept.begin(), kept.end()));
  REQUIRE(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
  std::vector<bool> in(values.size());
  for (uint32_t p : kept) {
    REQUIRE(p < values.size());
    in[p] = true;
  }
  float min_kept = INFINITY, max_left = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (in[i])
      min_kept = std::min(min_kept, std::fabs(values[i]));
    else
      max_left = std::max(max_left, std::fabs(values[i]));
  }
  REQUIRE(max_left <= min_kept);
}

size_t ceil_frac(size_t k, size_t num, size_t den) { return (k * num + den - 1) / den; }

// Positions by descending magnitude, ties by ascending position: the exact k are the first k.
std::vector<uint32_t> ranked(const std::vector<float>& values) {
  std::vector<uint32_t> order(values.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return std::fabs(values[a]) > std::fabs(values[b]); });
  return order;
}

// The first k of `order`, ascending.
std::vector<uint32_t> first_sorted(const std::vector<uint32_t>& order, size_t k) {
  std::vector<uint32_t> top(order.begin(), order.begin() + static_cast<ptrdiff_t>(std::min(k, order.size())));
  std::sort(top.begin(), top.end());
  return top;
}

// Inputs whose layout a sampling selector could trip on: sorted either way, the largest values
// packed into runs of 32 (a sample drawn in runs then holds many of them or none), mostly
// zeros, and a few distinct magnitudes.
std::vector<std::vector<float>> awkward_inputs(std::mt19937& rng, size_t n) {
  std::vector<std::vector<float>> out;
  auto v = normal_values(rng, n);
  std::sort(v.begin(), v.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); });
  out.push_back(v);
  std::reverse(v.begin(), v.end());
  out.push_back(v);
  auto clustered = normal_values(rng, n, 0.01f);
  for (size_t i = 0; i < n; ++i)
    if (i / 32 % 50 == 7) clustered[i] = 10 + std::fabs(clustered[i]) * 100;
  out.push_back(clustered);
  auto zeros = normal_values(rng, n);
  for (size_t i = 0; i < n; ++i)
    if (i % 16 != 3) zeros[i] = 0;
  out.push_back(zeros);
  out.push_back(tied_values(rng, n));
  return out;
}

}  // namespace

TEST_CASE("make_topk_selector knows the five methods and names them when asked for another", "[topk]") {
  REQUIRE(topk_selector_names().size() == 5);
  for (auto name : topk_selector_names()) REQUIRE(make_topk_selector(name) != nullptr);
  try {
    make_topk_selector("topk");
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    REQUIRE(what.find("'topk'") != std::string::npos);
    for (auto name : topk_selector_names()) REQUIRE(what.find(name) != std::string::npos);
  }
  REQUIRE_THROWS_AS(make_topk_selector("threshold-reuse", {.reuse_period = 0}), std::invalid_argument);
}

TEST_CASE("exact keeps the k largest magnitudes, the lowest positions among ties", "[topk]") {
  std::mt19937 rng(11);
  auto selector = make_topk_selector("exact");
  for (int kind = 0; kind < 3; ++kind) {
    for (size_t n : {1, 2, 17, 1000, 20000}) {
      const auto values = kind == 0 ? normal_values(rng, n) : kind == 1 ? cauchy_values(rng, n) : tied_values(rng, n);
      std::vector<float> sorted(values.size());
      std::transform(values.begin(), values.end(), sorted.begin(), [](float x) { return std::fabs(x); });
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      for (size_t k : {size_t{1}, n / 100, n / 10, n / 2, n - 1}) {
        if (k == 0 || k >= n) continue;
        CAPTURE(kind, n, k);
        const auto kept = select(*selector, values, k);
        REQUIRE(kept.size() == k);
        check_top_set(values, kept);
        std::vector<float> got;
        for (uint32_t p : kept) got.push_back(std::fabs(values[p]));
        std::sort(got.begin(), got.end(), std::greater<>());
        REQUIRE(got == std::vector<float>(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(k)));
        // Of the values tied with the k-th, the first ones by position.
        const float kth = sorted[k - 1];
        size_t last_tie_kept = 0, first_tie_left = values.size();
        for (uint32_t p : kept)
          if (std::fabs(values[p]) == kth) last_tie_kept = p;
        for (size_t i = values.size(); i-- > 0;)
          if (std::fabs(values[i]) == kth && !std::binary_search(kept.begin(), kept.end(), i)) first_tie_left = i;
        REQUIRE(last_tie_kept < first_tie_left);
      }
    }
  }
}

TEST_CASE("exact matches a full sort on awkward layouts and on sizes around its block of 16", "[topk]") {
  std::mt19937 rng(13);
  auto selector = make_topk_selector("exact");
  for (size_t n : {size_t{3}, size_t{15}, size_t{16}, size_t{31}, size_t{1029}, size_t{200003}}) {
    for (const auto& values : awkward_inputs(rng, n)) {
      const auto order = ranked(values);
      for (size_t k : {size_t{1}, size_t{2}, n / 1000, n / 100, n / 7, n - 1}) {
        if (k == 0 || k >= n) continue;
        CAPTURE(n, k);
        REQUIRE(select(*selector, values, k) == first_sorted(order, k));
      }
    }
  }
}

TEST_CASE("every method keeps nothing for k = 0, everything for k >= n, and handles n = 0", "[topk]") {
  std::mt19937 rng(5);
  const auto values = normal_values(rng, 50);
  std::vector<uint32_t> all(values.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  for (auto name : topk_selector_names()) {
    CAPTURE(name);
    auto s = make_topk_selector(name, {.reuse_period = 4, .seed = 1});
    REQUIRE(select(*s, {}, 0).empty());
    REQUIRE(select(*s, {}, 3).empty());
    REQUIRE(select(*s, values, 0).empty());
    REQUIRE(select(*s, values, values.size()) == all);
    REQUIRE(select(*s, values, values.size() + 10) == all);
    REQUIRE(select(*s, {2.5f}, 1) == std::vector<uint32_t>{0});
  }
}

TEST_CASE("threshold methods give a count in their band even when all values are equal", "[topk]") {
  for (float x : {0.0f, -0.75f, 3.0f}) {
    const std::vector<float> values(400, x);
    for (auto name : {"exact", "threshold-reuse", "gaussian", "sampled"}) {
      CAPTURE(x, name);
      auto s = make_topk_selector(name, {.reuse_period = 3});
      for (int call = 0; call < 5; ++call) {
        const auto kept = select(*s, values, 40);
        REQUIRE(kept.size() >= ceil_frac(40, 2, 3));
        REQUIRE(kept.size() <= 40 * 5 / 4);
        check_top_set(values, kept);
      }
    }
  }
}

TEST_CASE("every method handles k = 1 and n below or off a multiple of 16", "[topk]") {
  std::mt19937 rng(17);
  for (auto name : topk_selector_names()) {
    auto s = make_topk_selector(name, {.reuse_period = 2, .seed = 4});
    for (size_t n : {size_t{2}, size_t{7}, size_t{15}, size_t{17}, size_t{33}, size_t{1000}, size_t{4099}}) {
      for (size_t k : {size_t{1}, n / 3, n - 1}) {
        if (k == 0) continue;
        for (int call = 0; call < 3; ++call) {
          CAPTURE(name, n, k, call);
          const auto values = call == 1 ? tied_values(rng, n) : cauchy_values(rng, n);
          const auto kept = select(*s, values, k);
          REQUIRE(std::is_sorted(kept.begin(), kept.end()));
          REQUIRE(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
          for (uint32_t p : kept) REQUIRE(p < n);
          if (name == "approx") continue;
          check_top_set(values, kept);
          REQUIRE(kept.size() >= (name == "threshold-reuse" ? ceil_frac(k, 2, 3) : ceil_frac(k, 3, 4)));
          REQUIRE(kept.size() <= k * 5 / 4);
          if (name == "exact") REQUIRE(kept == first_sorted(ranked(values), k));
        }
      }
    }
  }
}

TEST_CASE("gaussian and sampled keep between 3k/4 and 5k/4 on every draw", "[topk]") {
  std::mt19937 rng(23);
  for (auto name : {"gaussian", "sampled"}) {
    auto s = make_topk_selector(name, {.seed = 3});
    for (int draw = 0; draw < 200; ++draw) {
      const size_t n = 5000 + static_cast<size_t>(draw) * 37;
      const size_t k = draw % 3 == 0 ? 10 : draw % 3 == 1 ? n / 100 : n / 5;
      const auto values = draw % 2 ? cauchy_values(rng, n) : normal_values(rng, n, 1e-3f);
      CAPTURE(name, draw, n, k);
      const auto kept = select(*s, values, k);
      REQUIRE(kept.size() >= ceil_frac(k, 3, 4));
      REQUIRE(kept.size() <= k * 5 / 4);
      check_top_set(values, kept);
    }
  }
}

TEST_CASE("threshold-reuse stays within [2k/3, 5k/4] while the distribution drifts", "[topk]") {
  std::mt19937 rng(29);
  const size_t n = 8000, k = 80;
  auto s = make_topk_selector("threshold-reuse", {.reuse_period = 32});
  size_t reused_off_k = 0;
  for (int step = 0; step < 200; ++step) {
    // The scale shrinks 3% a step, as gradients do when training converges; halfway the
    // tails turn heavy, then the scale jumps up tenfold.
    auto values = step < 100 ? normal_values(rng, n) : cauchy_values(rng, n);
    const float scale = std::exp(-0.03f * static_cast<float>(step)) * (step >= 150 ? 10.0f : 1.0f);
    for (float& x : values) x *= scale;
    CAPTURE(step);
    const auto kept = select(*s, values, k);
    REQUIRE(kept.size() >= ceil_frac(k, 2, 3));
    REQUIRE(kept.size() <= k * 5 / 4);
    check_top_set(values, kept);
    if (step % 32 == 0) REQUIRE(kept.size() == k);  // the exact threshold's step
    reused_off_k += kept.size() != k;
  }
  REQUIRE(reused_off_k > 0);  // the threshold was reused, not recomputed every step
}

TEST_CASE("threshold-reuse recovers its band when the scale jumps up or down between exact calls", "[topk]") {
  std::mt19937 rng(43);
  const size_t n = 50000, k = 500;
  auto s = make_topk_selector("threshold-reuse", {.reuse_period = 1000});
  const auto base = normal_values(rng, n);
  // Each change of scale moves the count out of the band: up by 30 keeps most values, up by 1.3
  // about 5 k, down almost none.
  for (float scale : {1.0f, 1.0f, 30.0f, 30.0f, 0.01f, 0.01f, 3.0f, 1.0f, 1.3f, 1.0f}) {
    auto values = normal_values(rng, n);
    for (size_t i = 0; i < n; ++i) values[i] = scale * (0.2f * values[i] + base[i]);
    CAPTURE(scale);
    const auto kept = select(*s, values, k);
    REQUIRE(kept.size() >= ceil_frac(k, 2, 3));
    REQUIRE(kept.size() <= k * 5 / 4);
    check_top_set(values, kept);
  }
}

TEST_CASE("threshold-reuse with period 1 is exact on every call", "[topk]") {
  std::mt19937 rng(31);
  auto reuse = make_topk_selector("threshold-reuse", {.reuse_period = 1});
  auto exact = make_topk_selector("exact");
  for (int step = 0; step < 20; ++step) {
    const auto values = step % 2 ? tied_values(rng, 3000) : cauchy_values(rng, 3000);
    REQUIRE(select(*reuse, values, 100) == select(*exact, values, 100));
  }
}

TEST_CASE("approx keeps k in expectation and always keeps a dominant value", "[topk]") {
  std::mt19937 rng(37);
  auto s = make_topk_selector("approx", {.seed = 9});
  for (int kind = 0; kind < 2; ++kind) {
    for (size_t k : {50, 500}) {
      const size_t n = 10000;
      double total = 0;
      for (int draw = 0; draw < 200; ++draw) {
        const auto values = kind == 0 ? normal_values(rng, n) : cauchy_values(rng, n);
        const auto kept = select(*s, values, k);
        REQUIRE(std::is_sorted(kept.begin(), kept.end()));
        total += static_cast<double>(kept.size());
      }
      CAPTURE(kind, k);
      // The count's standard deviation is at most sqrt(k), so the mean of 200 draws is within
      // 3% of k by more than 4 standard deviations.
      REQUIRE(std::fabs(total / 200 - static_cast<double>(k)) <= 0.03 * static_cast<double>(k));
    }
  }
  // ||v||_inf > ||v||_1 / k: the largest value gets p = 1.
  std::vector<float> values(1000, 0.01f);
  values[617] = -1000;
  for (int draw = 0; draw < 50; ++draw) {
    const auto kept = select(*s, values, 10);
    REQUIRE(std::binary_search(kept.begin(), kept.end(), 617u));
  }
}

TEST_CASE("approx never keeps a zero while the largest value is within its budget", "[topk]") {
  // ||v||_inf <= ||v||_1 / k: p_i = k |v_i| / ||v||_1, which is 0 for the zeros.
  std::mt19937 rng(47);
  auto s = make_topk_selector("approx", {.seed = 5});
  auto values = normal_values(rng, 20011);
  for (size_t i = 0; i < values.size(); i += 2) values[i] = 0;
  for (int draw = 0; draw < 20; ++draw) {
    const auto kept = select(*s, values, 200);
    REQUIRE(!kept.empty());
    for (uint32_t p : kept) REQUIRE(values[p] != 0);
  }
}

TEST_CASE("random methods repeat their selections for a seed", "[topk]") {
  std::mt19937 rng(41);
  std::vector<std::vector<float>> draws;
  for (int i = 0; i < 10; ++i) draws.push_back(i % 2 ? cauchy_values(rng, 200000) : normal_values(rng, 200000));
  for (auto name : {"approx", "sampled"}) {
    CAPTURE(name);
    auto a = make_topk_selector(name, {.seed = 77}), b = make_topk_selector(name, {.seed = 77});
    auto c = make_topk_selector(name, {.seed = 78});
    size_t differs = 0;
    for (const auto& values : draws) {
      const auto kept = select(*a, values, 1000);
      REQUIRE(kept == select(*b, values, 1000));
      differs += kept != select(*c, values, 1000);
    }
    REQUIRE(differs > 0);
  }
}

TEST_CASE("split_selected sends the kept pairs and keeps the rest, both in index order", "[topk]") {
  SparseVector in{{2, 5, 9, 14, 30}, {0.5f, -3, 1, 7, -0.25f}};
  Stream<float> sent = paired(SparseVector{{1}, {1}});
  SparseVector residual{{1}, {1}};
  const std::vector<uint32_t> kept{1, 3};
  split_selected(in, kept, sent, residual);
  REQUIRE(!sent.is_dense());
  REQUIRE(unpaired(sent).index == std::vector<uint32_t>{5, 14});
  REQUIRE(unpaired(sent).value == std::vector<float>{-3, 7});
  REQUIRE(residual.index == std::vector<uint32_t>{2, 9, 30});
  REQUIRE(residual.value == std::vector<float>{0.5f, 1, -0.25f});
  split_selected(in, {}, sent, residual);
  REQUIRE(sent.count() == 0);
  REQUIRE(residual.index == in.index);
}

TEST_CASE("split_selected copies the runs between kept pairs, wherever they lie", "[topk]") {
  std::mt19937 rng(5);
  const size_t n = GENERATE(1, 2, 97, 1000);
  SparseVector in;
  for (size_t j = 0; j < n; ++j) {
    in.index.push_back(static_cast<uint32_t>(3 * j + 1));
    in.value.push_back(static_cast<float>(j) - 40.5f);
  }
  // Run lengths of 0 (consecutive kept positions) up to n, the first and last positions
  // included; the outputs start larger and smaller than they end.
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<uint32_t> kept;
    const double p = std::uniform_real_distribution<double>(0, 1)(rng);
    for (uint32_t j = 0; j < n; ++j)
      if (std::bernoulli_distribution(p)(rng)) kept.push_back(j);
    SparseVector residual{std::vector<uint32_t>(trial % 3 * n, 7), std::vector<float>(trial % 3 * n, 7)};
    Stream<float> sent = paired(residual);
    split_selected(in, kept, sent, residual);
    SparseVector want_sent, want_residual;
    for (uint32_t j = 0, q = 0; j < n; ++j) {
      SparseVector& to = q < kept.size() && kept[q] == j ? (++q, want_sent) : want_residual;
      to.index.push_back(in.index[j]);
      to.value.push_back(in.value[j]);
    }
    REQUIRE(unpaired(sent).index == want_sent.index);
    REQUIRE(unpaired(sent).value == want_sent.value);
    REQUIRE(residual.index == want_residual.index);
    REQUIRE(residual.value == want_residual.value);
  }
}
