// Streams and their sums: encode, switched, extract, write_dense, densify, the eight summation cases
// of add_overlapping and concat_disjoint, compact, and nonzeros, for float and double. Every result
// is compared with a plain dense reference; values are small integers, so sums are exact
// and any difference is a bug, not rounding. Ranges deliberately start away from 0.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "sparse/stream_sum.h"

using namespace mpisgd;

namespace {

// A sparse vector as index -> value, indices absolute.
using Entries = std::map<uint32_t, int>;

// About `k` distinct random indices in `range` with non-zero integer values in [-4, 4].
Entries random_entries(std::mt19937& rng, Range range, uint32_t k) {
  Entries e;
  if (range.length() == 0) return e;
  k = std::min(k, range.length());
  std::uniform_int_distribution<uint32_t> at(range.begin, range.end - 1);
  std::uniform_int_distribution<int> v(1, 4);
  while (e.size() < k) e[at(rng)] = (rng() % 2 ? 1 : -1) * v(rng);
  return e;
}

// The first `k` indices of `range`, or every index, with value 1 + index % 5.
Entries first_entries(Range range, uint32_t k) {
  Entries e;
  for (uint32_t i = range.begin; i < range.end && e.size() < k; ++i) e[i] = 1 + static_cast<int>(i % 5);
  return e;
}

// A stream in the form asked for, whatever the dense switch says, built without the code
// under test. Its buffer holds `range` (and at least `room` indices).
template <class V>
Stream<V> sparse_stream(const Entries& e, Range range, uint64_t room = 0) {
  Stream<V> s(std::max<uint64_t>(range.length(), room));
  s.reserve(2 * e.size());  // room for more pairs than the switch allows, as tests need
  REQUIRE(Stream<V>::sparse_bytes(e.size()) <= s.capacity());
  s.set_sparse(static_cast<uint32_t>(e.size()));
  size_t j = 0;
  for (auto [i, v] : e) s.pairs()[j++] = Pair<V>{i, static_cast<V>(v)};
  return s;
}

template <class V>
Stream<V> dense_stream(const Entries& e, Range range, uint64_t room = 0) {
  Stream<V> s(std::max<uint64_t>(range.length(), room));
  s.set_zero_dense(range.length());
  for (auto [i, v] : e) s.values()[i - range.begin] = static_cast<V>(v);
  return s;
}

template <class V>
Stream<V> make_stream(bool dense, const Entries& e, Range range, uint64_t room = 0) {
  return dense ? dense_stream<V>(e, range, room) : sparse_stream<V>(e, range, room);
}

// The reference: the dense vector over `range`.
template <class V>
std::vector<V> reference(const Entries& e, Range range) {
  std::vector<V> d(range.length(), V{0});
  for (auto [i, v] : e) d[i - range.begin] += static_cast<V>(v);
  return d;
}

Entries sum(const Entries& a, const Entries& b) {
  Entries s = a;
  for (auto [i, v] : b) s[i] += v;
  return s;
}

// The dense form of a stream over `range`, read independently of write_dense(); fails on
// a malformed stream (pairs out of range or not ascending, wrong dense length).
template <class V>
std::vector<V> contents(const Stream<V>& s, Range range) {
  std::vector<V> d(range.length(), V{0});
  if (s.is_dense()) {
    REQUIRE(s.count() == range.length());
    std::copy(s.values().begin(), s.values().end(), d.begin());
    return d;
  }
  REQUIRE(s.count() <= range.length());
  uint64_t previous = 0;
  bool first = true;
  for (const Pair<V>& p : s.pairs()) {
    const uint32_t i = p.index;
    REQUIRE(i >= range.begin);
    REQUIRE(i < range.end);
    REQUIRE((first || i > previous));
    first = false;
    previous = i;
    d[i - range.begin] = p.value;
  }
  return d;
}

}  // namespace

TEMPLATE_TEST_CASE("stream layout: header, packed pairs, byte sizes", "[stream]", float, double) {
  using V = TestType;
  STATIC_REQUIRE(sizeof(Pair<V>) == 4 + sizeof(V));
  REQUIRE(Stream<V>::sparse_bytes(0) == 8);
  REQUIRE(Stream<V>::sparse_bytes(3) == 8 + 3 * (4 + sizeof(V)));
  REQUIRE(Stream<V>::dense_bytes(5) == 8 + 5 * sizeof(V));

  Stream<V> s;
  REQUIRE(s.capacity() >= 8);
  s.set_empty();
  REQUIRE(s.count() == 0);
  REQUIRE_FALSE(s.is_dense());
  REQUIRE(s.bytes() == 8);
  s.reserve(10);
  REQUIRE(s.capacity() >= Stream<V>::dense_bytes(10));
  REQUIRE(reinterpret_cast<uintptr_t>(s.data()) % 8 == 0);
  s.set_zero_dense(10);
  REQUIRE(s.is_dense());
  REQUIRE(s.count() == 10);
  REQUIRE(s.bytes() == Stream<V>::dense_bytes(10));
  REQUIRE(s.pairs().empty());
  REQUIRE(s.values().size() == 10);
  REQUIRE(std::all_of(s.values().begin(), s.values().end(), [](V v) { return v == 0; }));

  // copy_from grows a small buffer; swap exchanges contents.
  Stream<V> small;
  small.copy_from(s);
  REQUIRE(small.is_dense());
  REQUIRE(contents(small, {0, 10}) == std::vector<V>(10, V{0}));
  Stream<V> t = sparse_stream<V>({{3, 2}}, {0, 10});
  t.swap(small);
  REQUIRE(t.is_dense());
  REQUIRE(small.count() == 1);
  REQUIRE(small.pairs()[0].index == 3);
}

TEST_CASE("DenseSwitch: the byte bound phi and the density bound", "[stream]") {
  const DenseSwitch bytes_only{1.0};
  // phi(n) = floor(n sizeof(V) / sizeof(Pair<V>)): n/2 for float, 2n/3 for double.
  CHECK(bytes_only.switch_count<float>(0) == 0);
  CHECK(bytes_only.switch_count<float>(1) == 0);
  CHECK(bytes_only.switch_count<float>(3) == 1);
  CHECK(bytes_only.switch_count<float>(100) == 50);
  CHECK(bytes_only.switch_count<double>(1) == 0);
  CHECK(bytes_only.switch_count<double>(2) == 1);
  CHECK(bytes_only.switch_count<double>(100) == 66);
  CHECK(bytes_only.switch_count<double>(4'000'000'000ULL) == 2'666'666'666ULL);
  // At phi pairs the sparse form is no larger than the dense one; one more and it is.
  for (uint64_t n : {1u, 2u, 3u, 7u, 100u, 1001u}) {
    CAPTURE(n);
    CHECK(Stream<float>::sparse_bytes(bytes_only.switch_count<float>(n)) <= Stream<float>::dense_bytes(n));
    CHECK(Stream<float>::sparse_bytes(bytes_only.switch_count<float>(n) + 1) > Stream<float>::dense_bytes(n));
    CHECK(Stream<double>::sparse_bytes(bytes_only.switch_count<double>(n)) <= Stream<double>::dense_bytes(n));
    CHECK(Stream<double>::sparse_bytes(bytes_only.switch_count<double>(n) + 1) > Stream<double>::dense_bytes(n));
  }

  // The density bound floor(density n), here the thesis' 6.25%, is the tighter one.
  const DenseSwitch thesis{0.0625};
  CHECK(thesis.switch_count<float>(1000) == 62);
  CHECK(thesis.switch_count<double>(1000) == 62);
  CHECK(thesis.switch_count<float>(15) == 0);
  CHECK(thesis.switch_count<float>(16) == 1);
  // The default is the measured crossover, below the byte bound.
  const DenseSwitch measured;
  CHECK(measured.density == DenseSwitch::kMeasuredDensity);
  CHECK(measured.density > 0);
  CHECK(measured.density < 0.5);
  CHECK(measured.switch_count<float>(100000) == static_cast<uint64_t>(DenseSwitch::kMeasuredDensity * 100000));
  // Whichever is lower wins.
  CHECK(DenseSwitch{0.9}.switch_count<float>(100) == 50);
  CHECK(DenseSwitch{0.25}.switch_count<float>(100) == 25);
  CHECK(DenseSwitch{0.0}.switch_count<double>(1000) == 0);
}

TEMPLATE_TEST_CASE("encode: sparse up to the switch, dense past it, any range", "[stream]", float, double) {
  using V = TestType;
  auto run = [](const Entries& e, Range range, const DenseSwitch& sw) {
    std::vector<uint32_t> index;
    std::vector<V> value;
    for (auto [i, v] : e) index.push_back(i), value.push_back(static_cast<V>(v));
    Stream<V> out;  // encode makes room itself
    encode<V>(index, value, range, sw, out);
    return out;
  };

  const Range r{1000, 2000};  // length 1000: a 6.25% switch at 62 pairs
  std::mt19937 rng(1);
  for (uint32_t k : {0u, 1u, 61u, 62u, 63u, 500u, 1000u}) {
    CAPTURE(k);
    Entries e = random_entries(rng, r, k);
    Stream<V> s = run(e, r, DenseSwitch{0.0625});
    CHECK(s.is_dense() == (k > 62));
    CHECK(s.count() == (k > 62 ? r.length() : k));
    CHECK(contents(s, r) == reference<V>(e, r));
    CHECK(nonzeros(s) == k);
  }

  // The byte bound alone: phi(100) is 50 pairs (float) or 66 (double).
  const Range r100{7, 107};
  const uint32_t phi = sizeof(V) == 4 ? 50 : 66;
  for (uint32_t k : {phi, phi + 1}) {
    CAPTURE(k);
    Entries e = first_entries(r100, k);
    Stream<V> s = run(e, r100, DenseSwitch{1.0});
    CHECK(s.is_dense() == (k > phi));
    CHECK(contents(s, r100) == reference<V>(e, r100));
  }

  // A density of 0 sends everything that is not empty dense.
  {
    Stream<V> s = run({{9, 3}}, r100, DenseSwitch{0});
    CHECK(s.is_dense());
    CHECK(contents(s, r100) == reference<V>({{9, 3}}, r100));
    Stream<V> empty = run({}, r100, DenseSwitch{0});
    CHECK_FALSE(empty.is_dense());
    CHECK(empty.count() == 0);
  }

  // Length 0 and length 1 ranges.
  {
    Stream<V> s = run({}, {5, 5}, DenseSwitch{});
    CHECK_FALSE(s.is_dense());
    CHECK(s.count() == 0);
    CHECK(s.bytes() == 8);
    Stream<V> one_empty = run({}, {5, 6}, DenseSwitch{1.0});
    CHECK_FALSE(one_empty.is_dense());
    CHECK(one_empty.count() == 0);
    // phi(1) = 0: a single pair over one index is always sent dense.
    Stream<V> one = run({{5, -2}}, {5, 6}, DenseSwitch{1.0});
    CHECK(one.is_dense());
    CHECK(contents(one, {5, 6}) == std::vector<V>{V(-2)});
  }
}

TEMPLATE_TEST_CASE("write_dense and densify give the dense form of either form", "[stream]", float, double) {
  using V = TestType;
  std::mt19937 rng(2);
  for (Range r : {Range{0, 0}, Range{3, 4}, Range{0, 10}, Range{12345, 13345}}) {
    for (uint32_t k : {0u, 1u, 10u, 400u}) {
      Entries e = random_entries(rng, r, k);
      for (bool dense : {false, true}) {
        CAPTURE(r.begin, r.end, k, dense);
        Stream<V> in = make_stream<V>(dense, e, r);
        std::vector<V> out(r.length() + 2, V{77});  // guard values either side of nothing
        write_dense(in, r, out.data() + 1);
        std::vector<V> expect = reference<V>(e, r);
        CHECK(std::equal(expect.begin(), expect.end(), out.begin() + 1));
        CHECK(out.front() == V{77});
        CHECK(out.back() == V{77});
        if (r.length() > 0) out[1] = V{99};  // garbage where write_dense must zero-fill
        write_dense(in, r, out.data() + 1);
        CHECK(std::equal(expect.begin(), expect.end(), out.begin() + 1));

        Stream<V> d;
        densify(in, r, d);
        CHECK(d.is_dense());
        CHECK(d.count() == r.length());
        CHECK(contents(d, r) == expect);
      }
    }
  }
}

TEMPLATE_TEST_CASE("switched: pairs written into a stream take the form encode gives them", "[stream]", float,
                   double) {
  using V = TestType;
  const Range r{1000, 2000};
  std::mt19937 rng(3);
  for (uint32_t k : {0u, 1u, 62u, 63u, 500u, 1000u}) {
    for (double density : {0.0, 0.0625, 1.0}) {
      CAPTURE(k, density);
      const Entries e = random_entries(rng, r, k);
      std::vector<uint32_t> index;
      std::vector<V> value;
      for (auto [i, v] : e) index.push_back(i), value.push_back(static_cast<V>(v));
      Stream<V> want;
      encode<V>(index, value, r, DenseSwitch{density}, want);
      const Stream<V> in = sparse_stream<V>(e, r);
      Stream<V> dense;
      const Stream<V>& got = switched(in, r, DenseSwitch{density}, dense);
      CHECK(&got == (want.is_dense() ? &dense : &in));
      REQUIRE(got.bytes() == want.bytes());
      CHECK(std::memcmp(got.data(), want.data(), want.bytes()) == 0);
    }
  }
  // A stream that is dense already is left as it is.
  const Stream<V> dense_in = dense_stream<V>({{1500, 2}}, r);
  Stream<V> unused;
  CHECK(&switched(dense_in, r, DenseSwitch{0.0625}, unused) == &dense_in);
}

TEMPLATE_TEST_CASE("extract: the pairs of a part, sparse or dense by the part's switch", "[stream]", float, double) {
  using V = TestType;
  const Range whole{500, 1500};
  const DenseSwitch sw{0.0625};
  std::mt19937 rng(3);
  const std::vector<Range> parts = {{500, 500}, {500, 501}, {500, 800}, {800, 1200}, {1200, 1500}, {1499, 1500},
                                    {1500, 1500}, {500, 1500}};
  for (uint32_t k : {0u, 5u, 60u, 300u}) {
    Entries e = random_entries(rng, whole, k);
    for (bool dense : {false, true}) {
      Stream<V> in = make_stream<V>(dense, e, whole);
      for (Range part : parts) {
        CAPTURE(k, dense, part.begin, part.end);
        Entries in_part;
        for (auto [i, v] : e) {
          if (i >= part.begin && i < part.end) in_part[i] = v;
        }
        Stream<V> out;
        extract(in, whole, part, sw, out);
        CHECK(contents(out, part) == reference<V>(in_part, part));
        if (dense) {
          CHECK(out.is_dense());  // a dense stream is sliced, not re-encoded
        } else {
          CHECK(out.is_dense() == (in_part.size() > sw.switch_count<V>(part.length())));
        }
      }
    }
  }
  // Exactly at the switch of the part: 300 indices, switch 18.
  const Range part{800, 1100};
  for (uint32_t k : {18u, 19u}) {
    CAPTURE(k);
    Entries e = first_entries(part, k);
    e[500] = 1;  // outside the part
    e[1499] = 2;
    Stream<V> in = sparse_stream<V>(e, whole);
    Stream<V> out;
    extract(in, whole, part, sw, out);
    CHECK(out.is_dense() == (k > 18));
    Entries in_part = first_entries(part, k);
    CHECK(contents(out, part) == reference<V>(in_part, part));
  }
}

TEMPLATE_TEST_CASE("add_overlapping: the four cases against a dense sum", "[stream]", float, double) {
  using V = TestType;
  const Range r{1000, 2000};
  const DenseSwitch sw{0.0625};  // 62 pairs
  std::mt19937 rng(4);

  // Runs acc += in and checks the values and the form of the result.
  auto check = [&](bool acc_dense, const Entries& a, bool in_dense, const Entries& b, const DenseSwitch& s,
                   Range range, bool expect_dense) {
    Stream<V> acc = make_stream<V>(acc_dense, a, range);
    Stream<V> in = make_stream<V>(in_dense, b, range);
    Stream<V> scratch;  // add_overlapping makes room in it
    add_overlapping(acc, in, scratch, range, s);
    CHECK(acc.is_dense() == expect_dense);
    CHECK(contents(acc, range) == reference<V>(sum(a, b), range));
    if (!acc.is_dense()) CHECK(acc.count() == sum(a, b).size());
  };

  SECTION("1.a sparse + sparse, staying sparse") {
    Entries a = random_entries(rng, r, 25), b = random_entries(rng, r, 25);
    b[a.begin()->first] = 3;  // at least one shared index
    REQUIRE(sum(a, b).size() <= 62);
    check(false, a, false, b, sw, r, false);
    check(false, a, false, {}, sw, r, false);
    check(false, {}, false, b, sw, r, false);
    check(false, a, false, a, sw, r, false);  // identical index sets: every index shared
    // a + (-a): every value cancels; the pairs stay, holding zeros
    Entries neg = a;
    for (auto& [i, v] : neg) v = -v;
    check(false, a, false, neg, sw, r, false);
  }
  SECTION("1.a sparse + sparse, going dense by the count switch") {
    Entries a = random_entries(rng, r, 40), b = random_entries(rng, r, 40);
    REQUIRE(sum(a, b).size() > 62);
    check(false, a, false, b, sw, r, true);
    // exactly at the switch stays sparse, one past it goes dense
    Entries lo = first_entries({1000, 1031}, 31), hi = first_entries({1031, 1062}, 31);
    check(false, lo, false, hi, sw, r, false);
    Entries hi2 = first_entries({1031, 1063}, 32);
    check(false, lo, false, hi2, sw, r, true);
  }
  SECTION("1.a sparse + sparse, |a| + |b| pairs exceed the buffer: dense directly") {
    // With the byte bound only, each side may hold up to phi pairs; together they do not
    // fit in a buffer the size of the dense form, so the sum is built dense, even when the
    // union (here: identical index sets) would have stayed under the switch.
    const DenseSwitch bytes_only{1.0};
    const uint32_t phi = bytes_only.switch_count<V>(r.length());
    Entries a = random_entries(rng, r, phi * 4 / 5);
    REQUIRE(Stream<V>::sparse_bytes(2 * a.size()) > Stream<V>::capacity_bytes(r.length()) + 8);
    check(false, a, false, a, bytes_only, r, true);
    Entries b = random_entries(rng, r, phi * 4 / 5);
    check(false, a, false, b, bytes_only, r, true);
  }
  SECTION("1.b dense + dense") {
    Entries a = random_entries(rng, r, 700), b = random_entries(rng, r, 300);
    check(true, a, true, b, sw, r, true);
    check(true, {}, true, {}, sw, r, true);
  }
  SECTION("1.c dense + sparse") {
    Entries a = random_entries(rng, r, 700), b = random_entries(rng, r, 20);
    check(true, a, false, b, sw, r, true);
    check(true, a, false, {}, sw, r, true);
    check(true, {}, false, b, sw, r, true);
  }
  SECTION("1.d sparse + dense") {
    Entries a = random_entries(rng, r, 20), b = random_entries(rng, r, 700);
    check(false, a, true, b, sw, r, true);
    check(false, {}, true, b, sw, r, true);
    check(false, a, true, {}, sw, r, true);
  }
  SECTION("empty streams, length-0 and length-1 ranges") {
    check(false, {}, false, {}, sw, r, false);
    check(false, {}, false, {}, sw, {42, 42}, false);
    check(true, {}, true, {}, sw, {42, 42}, true);
    check(false, {}, true, {}, sw, {42, 42}, true);
    const Range one{42, 43};
    check(false, {}, false, {}, DenseSwitch{1.0}, one, false);
    // two single pairs (24 bytes) do not fit the 1-value buffer: dense directly
    check(false, {{42, 2}}, false, {{42, -5}}, DenseSwitch{1.0}, one, true);
    check(false, {{42, 2}}, false, {}, DenseSwitch{1.0}, one, true);  // 1 > phi(1) = 0
    check(true, {{42, 2}}, false, {{42, 1}}, sw, one, true);
    check(false, {{42, 2}}, true, {{42, 1}}, sw, one, true);
    check(true, {{42, 2}}, true, {{42, 1}}, sw, one, true);
  }
}

TEMPLATE_TEST_CASE("add_overlapping: a sparse merge keeps lone values' bits and adds shared ones", "[stream]",
                   float, double) {
  // The merge picks each pair's index and value without branches; a lone value must come
  // through bit for bit (-0.0 and a subnormal among them), not as v + 0, and a shared one
  // must be the IEEE sum, the same whichever side it came from.
  using V = TestType;
  const Range r{10, 60};
  const V tiny = std::numeric_limits<V>::denorm_min();
  const std::vector<Pair<V>> a = {{11, static_cast<V>(-0.0)}, {20, V(0.1)}, {30, tiny}, {41, V(-3.7)}, {59, V(1e-7)}};
  const std::vector<Pair<V>> b = {{10, V(2.5)}, {20, V(0.2)}, {31, static_cast<V>(-0.0)}, {41, V(3.7)}, {59, V(-0.3)}};
  auto stream = [&](const std::vector<Pair<V>>& pairs) {
    Stream<V> s(r.length());
    s.set_sparse(static_cast<uint32_t>(pairs.size()));
    std::copy(pairs.begin(), pairs.end(), s.pairs().begin());
    return s;
  };
  const std::vector<Pair<V>> expected = {
      {10, V(2.5)}, {11, static_cast<V>(-0.0)}, {20, V(V(0.1) + V(0.2))}, {30, tiny},
      {31, static_cast<V>(-0.0)}, {41, V(V(-3.7) + V(3.7))}, {59, V(V(1e-7) + V(-0.3))}};
  for (bool swapped : {false, true}) {
    Stream<V> acc = stream(swapped ? b : a), in = stream(swapped ? a : b), scratch;
    add_overlapping(acc, in, scratch, r, DenseSwitch{1.0});
    REQUIRE(!acc.is_dense());
    REQUIRE(acc.count() == expected.size());
    for (size_t j = 0; j < expected.size(); ++j) {
      CHECK(acc.pairs()[j].index == expected[j].index);
      CHECK(std::memcmp(&acc.pairs()[j].value, &expected[j].value, sizeof(V)) == 0);
    }
  }
}

TEMPLATE_TEST_CASE("add_overlapping: long sparse merges run in two chains, split at a's middle index", "[stream]",
                   float, double) {
  // From 64 pairs a side the merge runs one chain below a's middle index and one from it;
  // b's pairs go to whichever their index falls in, a pair at that very index included.
  using V = TestType;
  const Range r{5000, 105000};
  const DenseSwitch bytes_only{1.0};
  std::mt19937 rng(6);
  auto check = [&](const Entries& a, const Entries& b) {
    CAPTURE(a.size(), b.size());
    Stream<V> acc = sparse_stream<V>(a, r), in = sparse_stream<V>(b, r), scratch;
    add_overlapping(acc, in, scratch, r, bytes_only);
    REQUIRE(!acc.is_dense());
    CHECK(acc.count() == sum(a, b).size());
    CHECK(contents(acc, r) == reference<V>(sum(a, b), r));
  };
  auto first = [](const Entries& e, size_t n) { return Entries(e.begin(), std::next(e.begin(), static_cast<long>(n))); };
  const Entries a = random_entries(rng, r, 3000), b = random_entries(rng, r, 2000);
  check(a, b);
  check(b, a);
  check(a, a);
  const uint32_t middle = std::next(a.begin(), static_cast<long>(a.size() / 2))->first;
  Entries holds_middle = b, below, from;
  holds_middle[middle] = 3;
  check(a, holds_middle);
  for (auto [i, v] : b) (i < middle ? below : from)[i] = v;
  check(a, below);  // the upper chain has none of b
  check(a, from);   // the lower chain has none of b
  check(first(a, 64), first(b, 64));
  check(first(a, 64), first(b, 63));
  check(first(a, 63), first(b, 64));
}

TEMPLATE_TEST_CASE("add_overlapping: a chain of sums reusing three buffers", "[stream]", float, double) {
  // As the collectives use it: the same acc, in and scratch, swapped around, many times.
  using V = TestType;
  const Range r{64, 1064};
  const DenseSwitch sw;
  std::mt19937 rng(5);
  Stream<V> acc = sparse_stream<V>({}, r), in(r.length()), scratch(r.length());
  Entries total;
  for (int step = 0; step < 40; ++step) {
    CAPTURE(step);
    uint32_t k = std::uniform_int_distribution<uint32_t>(0, 6)(rng) == 0 ? 600 : rng() % 30;
    Entries b = random_entries(rng, r, k);
    Stream<V> fresh = make_stream<V>(k > sw.switch_count<V>(r.length()), b, r);
    in.copy_from(fresh);
    add_overlapping(acc, in, scratch, r, sw);
    total = sum(total, b);
    REQUIRE(contents(acc, r) == reference<V>(total, r));
    if (step % 13 == 12) {  // restart from an empty sum now and then
      acc.set_empty();
      total.clear();
    }
  }
}

TEMPLATE_TEST_CASE("concat_disjoint: the four cases against a dense concatenation", "[stream]", float, double) {
  using V = TestType;
  std::mt19937 rng(6);
  const Range lo{300, 700}, hi{700, 1300};  // joined: [300, 1300)
  // A concatenation sums nothing, so only the byte bound turns it dense: 500 pairs (float)
  // or 666 (double) of the 1000 indices, far above any summation switch.
  const auto phi = static_cast<uint32_t>(DenseSwitch{1.0}.switch_count<V>(1000));

  auto check = [&](bool lower_dense, const Entries& a, Range lower_range, bool upper_dense, const Entries& b,
                   Range upper_range, bool expect_dense) {
    const Range joined{lower_range.begin, upper_range.end};
    // The lower stream only has room for its own range: concat_disjoint makes room.
    Stream<V> lower = make_stream<V>(lower_dense, a, lower_range);
    const Stream<V> upper = make_stream<V>(upper_dense, b, upper_range);
    Stream<V> scratch;
    concat_disjoint(lower, upper, lower_range, upper_range, scratch);
    CHECK(lower.is_dense() == expect_dense);
    CHECK(contents(lower, joined) == reference<V>(sum(a, b), joined));
    // upper is unchanged
    CHECK(contents(upper, upper_range) == reference<V>(b, upper_range));
  };

  SECTION("2.a sparse + sparse, staying sparse") {
    Entries a = random_entries(rng, lo, 200), b = random_entries(rng, hi, phi - 200);
    check(false, a, lo, false, b, hi, false);  // exactly at the byte bound
    check(false, random_entries(rng, lo, 30), lo, false, random_entries(rng, hi, 40), hi, false);
    check(false, {}, lo, false, b, hi, false);
    check(false, a, lo, false, {}, hi, false);
    check(false, {}, lo, false, {}, hi, false);
  }
  SECTION("2.a sparse + sparse, going dense") {
    Entries a = random_entries(rng, lo, 200), b = random_entries(rng, hi, phi - 199);
    check(false, a, lo, false, b, hi, true);  // one pair past the byte bound
    check(false, random_entries(rng, lo, 400), lo, false, random_entries(rng, hi, 600), hi, true);
  }
  SECTION("2.b dense + dense") {
    check(true, random_entries(rng, lo, 300), lo, true, random_entries(rng, hi, 100), hi, true);
    check(true, {}, lo, true, {}, hi, true);
  }
  SECTION("2.c dense lower + sparse upper") {
    check(true, random_entries(rng, lo, 300), lo, false, random_entries(rng, hi, 10), hi, true);
    check(true, random_entries(rng, lo, 300), lo, false, {}, hi, true);
  }
  SECTION("2.d sparse lower + dense upper") {
    check(false, random_entries(rng, lo, 10), lo, true, random_entries(rng, hi, 300), hi, true);
    check(false, {}, lo, true, random_entries(rng, hi, 300), hi, true);
  }
  SECTION("empty and single-index ranges") {
    const Range none_lo{700, 700}, none_hi{1300, 1300};
    Entries b = random_entries(rng, hi, 10);
    check(false, {}, none_lo, false, b, hi, false);
    check(true, {}, none_lo, false, b, hi, true);
    check(false, {}, none_lo, true, b, hi, true);
    check(false, b, hi, false, {}, none_hi, false);
    check(false, b, hi, true, {}, none_hi, true);
    check(true, b, hi, false, {}, none_hi, true);
    check(false, {}, {5, 5}, false, {}, {5, 5}, false);
    check(true, {}, {5, 5}, true, {}, {5, 5}, true);
    // one index each: phi(2) = 1 pair (float and double), so two pairs go dense
    check(false, {{5, 1}}, {5, 6}, false, {{6, 2}}, {6, 7}, true);
    check(false, {{5, 1}}, {5, 6}, false, {}, {6, 7}, false);
    check(false, {}, {5, 6}, false, {{6, 2}}, {6, 7}, false);
    check(true, {{5, 1}}, {5, 6}, false, {{6, 2}}, {6, 7}, true);
    check(false, {{5, 1}}, {5, 6}, true, {{6, 2}}, {6, 7}, true);
  }
}

TEMPLATE_TEST_CASE("concat_disjoint: building [0, N) from many parts, as an allgather does", "[stream]", float,
                   double) {
  using V = TestType;
  const DenseSwitch sw{1.0};  // an allgather's blocks arrive compacted
  std::mt19937 rng(7);
  for (uint32_t per_part : {0u, 2u, 9u, 40u}) {
    CAPTURE(per_part);
    Stream<V> acc(0), scratch;
    acc.set_empty();
    Entries total;
    Range have{100, 100};
    for (int part = 0; part < 12; ++part) {
      const Range next{have.end, have.end + 37 + static_cast<uint32_t>(part % 3)};
      Entries b = random_entries(rng, next, per_part);
      Stream<V> up(next.length());
      std::vector<uint32_t> idx;
      std::vector<V> val;
      for (auto [i, v] : b) idx.push_back(i), val.push_back(static_cast<V>(v));
      encode<V>(idx, val, next, sw, up);
      concat_disjoint(acc, up, have, next, scratch);
      have.end = next.end;
      total = sum(total, b);
      REQUIRE(contents(acc, have) == reference<V>(total, have));
      // 9 of ~38 indices (24%) is past any summation switch but not the byte bound.
      if (per_part <= 9) CHECK_FALSE(acc.is_dense());
    }
  }
}

TEMPLATE_TEST_CASE("compact: a dense sum back to pairs while they are fewer bytes", "[stream]", float, double) {
  using V = TestType;
  std::mt19937 rng(8);
  const Range r{1000, 2000};
  const auto phi = static_cast<uint32_t>(DenseSwitch{1.0}.switch_count<V>(r.length()));
  auto check = [&](bool dense, const Entries& e, bool expect_dense) {
    const Stream<V> in = make_stream<V>(dense, e, r);
    Stream<V> out(0);
    compact(in, r, out);
    CHECK(out.is_dense() == expect_dense);
    CHECK(contents(out, r) == reference<V>(e, r));
    CHECK(out.bytes() <= in.bytes());
  };
  SECTION("dense, up to the byte bound: pairs") {
    check(true, {}, false);
    check(true, random_entries(rng, r, 1), false);
    check(true, random_entries(rng, r, 60), false);
    check(true, random_entries(rng, r, phi), false);
    check(true, first_entries(r, phi), false);
  }
  SECTION("dense, past the byte bound: stays dense") {
    check(true, random_entries(rng, r, phi + 1), true);
    check(true, first_entries(r, r.length()), true);
  }
  SECTION("sparse: copied as it is") {
    check(false, {}, false);
    check(false, random_entries(rng, r, 60), false);
  }
  SECTION("zeros of a dense sum are dropped") {
    Stream<V> in = dense_stream<V>({{1003, 2}, {1500, -1}}, r);
    in.values()[7] = V{0};
    Stream<V> out(0);
    compact(in, r, out);
    REQUIRE_FALSE(out.is_dense());
    REQUIRE(out.count() == 2);
    CHECK(out.pairs()[0].index == 1003);
    CHECK(out.pairs()[1].index == 1500);
    CHECK(out.pairs()[1].value == V(-1));
  }
  SECTION("an empty range") {
    Stream<V> in(0), out(0);
    in.set_zero_dense(0);
    compact(in, {5, 5}, out);
    CHECK_FALSE(out.is_dense());
    CHECK(out.count() == 0);
  }
}

TEMPLATE_TEST_CASE("nonzeros counts pairs or scans dense values", "[stream]", float, double) {
  using V = TestType;
  const Range r{10, 30};
  CHECK(nonzeros(sparse_stream<V>({}, r)) == 0);
  CHECK(nonzeros(dense_stream<V>({}, r)) == 0);
  Entries e{{10, 1}, {17, -3}, {29, 4}};
  CHECK(nonzeros(sparse_stream<V>(e, r)) == 3);
  CHECK(nonzeros(dense_stream<V>(e, r)) == 3);
  Stream<V> zero_length(0);
  zero_length.set_zero_dense(0);
  CHECK(nonzeros(zero_length) == 0);
}
