// Error feedback (issue 16): what a rank selects plus its residual is always everything it
// was given, for every selection method; the warm-up sends everything; what a collective
// hands back, sparse or dense, joins the residual; k follows --density and --k.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <random>
#include <string>

#include "sparse/error_feedback.h"
#include "tests/sparse_pairs.h"

using namespace mpisgd;

namespace {

void add_into(std::map<uint32_t, float>& m, const SparseVector& v) {
  for (size_t j = 0; j < v.nnz(); ++j) m[v.index[j]] += v.value[j];
}

void drop_zeros(std::map<uint32_t, float>& m) { std::erase_if(m, [](const auto& e) { return e.second == 0.0f; }); }

// select() of an update written as arrays, what it sends read back as arrays.
SparseVector select(ErrorFeedback& feedback, const SparseVector& local) {
  return unpaired(feedback.select(paired(local).pairs()));
}

// k = 1, exact selection over N = 8, one step taken: 2 (value 4) went out, 6 (1) stayed.
ErrorFeedback after_one_step() {
  SparsifyOptions o;
  o.k = 1;
  o.select = "exact";
  ErrorFeedback feedback(o, 8);
  select(feedback, SparseVector{{2, 6}, {4, 1}});
  return feedback;
}

}  // namespace

TEST_CASE("error feedback: sent plus residual is the sum of all updates", "[topk][feedback]") {
  const std::string method = GENERATE("exact", "approx", "threshold-reuse", "gaussian", "sampled");
  const uint32_t dim = 5000;
  SparsifyOptions o;
  o.density = 0.01;
  o.select = method;
  o.reuse_period = 4;
  ErrorFeedback feedback(o, dim);
  REQUIRE(feedback.k() == 50);
  std::mt19937 rng(7);
  std::map<uint32_t, float> raw, sent;
  for (int step = 0; step < 30; ++step) {
    SparseVector local = random_update(rng, dim, step % 3 ? 0.02 : 0.2);
    add_into(raw, local);
    const SparseVector& s = select(feedback, local);
    REQUIRE(s.nnz() <= 2 * feedback.k());
    add_into(sent, s);
    std::map<uint32_t, float> total = sent;
    add_into(total, feedback.residual());
    drop_zeros(total);
    std::map<uint32_t, float> expected = raw;
    drop_zeros(expected);
    REQUIRE(total == expected);
  }
}

TEST_CASE("error feedback: warm-up sends everything, then k", "[topk][feedback]") {
  SparsifyOptions o;
  o.k = 3;
  o.select = "exact";
  o.warmup_steps = 2;
  ErrorFeedback feedback(o, 100);
  SparseVector local{{1, 5, 9, 20, 40}, {1, -7, 3, 2, -5}};
  REQUIRE(feedback.warming_up());
  REQUIRE(select(feedback, local).nnz() == 5);
  REQUIRE(feedback.residual().nnz() == 0);
  REQUIRE(select(feedback, local).nnz() == 5);
  REQUIRE_FALSE(feedback.warming_up());
  const SparseVector& s = select(feedback, local);
  REQUIRE(s.index == std::vector<uint32_t>{5, 9, 40});
  REQUIRE(feedback.residual().index == std::vector<uint32_t>{1, 20});
}

TEST_CASE("error feedback: what a collective drops joins the residual", "[topk][feedback]") {
  ErrorFeedback feedback = after_one_step();
  Stream<float> dropped(8);
  dropped.set_sparse(2);
  dropped.pairs()[0] = {2, 4};
  dropped.pairs()[1] = {6, 2};
  feedback.take_back(dropped);
  REQUIRE(feedback.residual().index == std::vector<uint32_t>{2, 6});
  REQUIRE(feedback.residual().value == std::vector<float>{4, 3});

  dropped.set_zero_dense(8);
  dropped.values()[2] = -4;
  dropped.values()[7] = 1;
  feedback.take_back(dropped);
  REQUIRE(feedback.residual().index == std::vector<uint32_t>{6, 7});  // 4 - 4 cancels
  REQUIRE(feedback.residual().value == std::vector<float>{3, 1});
}

TEST_CASE("error feedback: dropped pairs wait for the next select, which sums them in", "[topk][feedback]") {
  ErrorFeedback feedback = after_one_step();
  Stream<float> dropped(8);
  dropped.set_sparse(1);
  dropped.pairs()[0] = {6, 1};
  feedback.take_back(dropped);
  dropped.pairs()[0] = {3, 5};  // a second hand-back, below the first, before any select
  feedback.take_back(dropped);
  // 0: 9 and 6: 2 from the update; 6 then holds 1 kept + 1 dropped + 2, and 3 holds 5.
  const SparseVector& sent = select(feedback, SparseVector{{0, 6}, {9, 2}});
  REQUIRE(sent.index == std::vector<uint32_t>{0});
  REQUIRE(sent.value == std::vector<float>{9});
  REQUIRE(feedback.residual().index == std::vector<uint32_t>{3, 6});
  REQUIRE(feedback.residual().value == std::vector<float>{5, 4});
}

TEST_CASE("error feedback: k from --density and --k", "[topk][feedback]") {
  SparsifyOptions o;
  REQUIRE(o.k_for(1000) == 10);  // the default density 0.01
  REQUIRE(o.k_for(10) == 1);     // at least one value
  REQUIRE(o.k_for(0) == 0);
  o.density = 0.001;
  REQUIRE(o.k_for(3231961) == 3232);  // ceil
  o.k = 500;
  REQUIRE(o.k_for(3231961) == 500);
  REQUIRE(o.k_for(100) == 100);  // never above N
  REQUIRE_THROWS_AS(ErrorFeedback(SparsifyOptions{0.1, 0, "nope"}, 10), std::invalid_argument);
}

TEST_CASE("error feedback: a keep fraction sends a share of each update's size", "[topk][feedback][ps-drop]") {
  SparsifyOptions o;
  o.select = "exact";
  o.keep = 0.25;
  ErrorFeedback f(o, 100);
  const SparseVector first{{1, 2, 3, 4, 5, 6, 7, 8}, {1, -8, 3, 7, 2, -5, 4, 6}};
  const SparseVector& a = select(f, first);
  REQUIRE(a.index == std::vector<uint32_t>{2, 4});
  REQUIRE(f.residual().nnz() == 6);
  // Four new values: one goes out, the largest of update and residual together.
  const SparseVector second{{10, 11, 12, 13}, {1, 1, 1, -2}};
  const SparseVector& b = select(f, second);
  REQUIRE(b.index == std::vector<uint32_t>{8});
  REQUIRE(b.value == std::vector<float>{6});
  REQUIRE(f.residual().nnz() == 9);
}

TEST_CASE("error feedback: with K columns a feature's values go together, ranked by their norm",
          "[topk][feedback][multiclass]") {
  // K = 3: feature 1 (slots 3-5) has norm sqrt(0.75) ~ 0.87 from three small values, feature
  // 2 (slot 6) a single 0.8, feature 4 (slots 12, 14) norm 0.5. A budget of k = 3 values
  // is one feature: the first, whole, though 0.8 is the largest single value.
  SparsifyOptions o;
  o.k = 3;
  o.select = "exact";
  o.columns = 3;
  ErrorFeedback f(o, 15);
  const SparseVector local{{3, 4, 5, 6, 12, 14}, {0.5f, -0.5f, 0.5f, 0.8f, 0.3f, -0.4f}};
  const SparseVector sent = select(f, local);
  REQUIRE(sent.index == std::vector<uint32_t>{3, 4, 5});
  REQUIRE(f.residual().index == std::vector<uint32_t>{6, 12, 14});
  // The residual joins the next update; now feature 2 (0.8 + 0.3) leads and goes whole.
  const SparseVector next{{6, 8}, {0.3f, 0.1f}};
  const SparseVector again = select(f, next);
  REQUIRE(again.index == std::vector<uint32_t>{6, 8});
  REQUIRE(f.residual().index == std::vector<uint32_t>{12, 14});
  // k = 4 values is two features (rounded up).
  o.k = 4;
  ErrorFeedback two(o, 15);
  REQUIRE(select(two, local).index == std::vector<uint32_t>{3, 4, 5, 6});
}

TEST_CASE("add_to_residual forms local + (residual + back) with the bits of two merges", "[feedback]") {
  std::mt19937 rng(11);
  // Values with fractions, so that the order of the additions shows in the bits; some pairs
  // cancel exactly, and every index from the first to the last can occur.
  auto make = [&rng](double density, std::uniform_int_distribution<int>& pick) {
    SparseVector v;
    std::bernoulli_distribution take(density);
    std::uniform_real_distribution<float> value(-1, 1);
    for (uint32_t i = 0; i < 300; ++i)
      if (take(rng)) {
        v.index.push_back(i);
        const int kind = pick(rng);
        v.value.push_back(kind == 0 ? 0.5f : kind == 1 ? -0.5f : kind == 2 ? 0.0f : value(rng) * 1e-3f);
      }
    return v;
  };
  std::uniform_int_distribution<int> pick(0, 9);
  for (int trial = 0; trial < 200; ++trial) {
    const double dl = trial % 4 * 0.1, dr = (trial / 4 % 5) * 0.25, db = trial % 3 * 0.05;
    SparseVector local = make(dl, pick), residual = make(dr, pick), back = make(db, pick);
    std::erase(residual.value, 0.0f);  // a residual holds no zeros
    residual.index.resize(residual.value.size());
    std::iota(residual.index.begin(), residual.index.end(), trial % 7);
    SparseVector folded, want, got{std::vector<uint32_t>(trial % 5 * 50, 3), std::vector<float>(trial % 5 * 50, 3)};
    add_sparse(residual, back, folded);
    add_sparse(local, folded, want);
    add_to_residual(paired(local).pairs(), residual, back, got);
    REQUIRE(got.index == want.index);
    REQUIRE(std::equal(got.value.begin(), got.value.end(), want.value.begin(), want.value.end(),
                       [](float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }));
  }
}
