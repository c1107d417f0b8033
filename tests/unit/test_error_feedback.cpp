// Error feedback (issue 16): what a rank selects plus its residual is always everything it
// was given, for every selection method; the warm-up sends everything; what a collective
// hands back, sparse or dense, joins the residual; k follows --density and --k.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>

#include "sparse/error_feedback.h"

using namespace mpisgd;

namespace {

// Integer values: every sum below is exact.
SparseVector random_update(std::mt19937& rng, uint32_t dim, double density) {
  SparseVector v;
  std::bernoulli_distribution take(density);
  std::uniform_int_distribution<int> value(-8, 8);
  for (uint32_t i = 0; i < dim; ++i) {
    const int x = value(rng);
    if (x != 0 && take(rng)) {
      v.index.push_back(i);
      v.value.push_back(static_cast<float>(x));
    }
  }
  return v;
}

void add_into(std::map<uint32_t, float>& m, const SparseVector& v) {
  for (size_t j = 0; j < v.nnz(); ++j) m[v.index[j]] += v.value[j];
}

void drop_zeros(std::map<uint32_t, float>& m) { std::erase_if(m, [](const auto& e) { return e.second == 0.0f; }); }

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
    const SparseVector& s = feedback.select(local);
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
  REQUIRE(feedback.select(local).nnz() == 5);
  REQUIRE(feedback.residual().nnz() == 0);
  REQUIRE(feedback.select(local).nnz() == 5);
  REQUIRE_FALSE(feedback.warming_up());
  const SparseVector& s = feedback.select(local);
  REQUIRE(s.index == std::vector<uint32_t>{5, 9, 40});
  REQUIRE(feedback.residual().index == std::vector<uint32_t>{1, 20});
}

TEST_CASE("error feedback: what a collective drops joins the residual", "[topk][feedback]") {
  SparsifyOptions o;
  o.k = 1;
  o.select = "exact";
  ErrorFeedback feedback(o, 8);
  feedback.select(SparseVector{{2, 6}, {4, 1}});  // sends 2, keeps 6
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
  const SparseVector& a = f.select(first);
  REQUIRE(a.index == std::vector<uint32_t>{2, 4});
  REQUIRE(f.residual().nnz() == 6);
  // Four new values: one goes out, the largest of update and residual together.
  const SparseVector second{{10, 11, 12, 13}, {1, 1, 1, -2}};
  const SparseVector& b = f.select(second);
  REQUIRE(b.index == std::vector<uint32_t>{8});
  REQUIRE(b.value == std::vector<float>{6});
  REQUIRE(f.residual().nnz() == 9);
}
