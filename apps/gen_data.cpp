/*
 * gen_data: deterministic synthetic LIBSVM files shaped like the two sparse sets
 * mpisgd is built for, so that training and communication can be studied at full
 * size without downloading them.
 *
 * What the real sets look like, and what is imitated:
 *
 *   url (url_combined, Ma et al. 2009, malicious URL detection): 2.4M rows x
 *   3,231,961 features, ~115 non-zeros per row, ~1/3 positive. Nearly all
 *   features are binary tokens of host, path and WHOIS/DNS records; ~134 are
 *   real-valued lexical statistics (lengths, ratios) at low indices. Token
 *   popularity is Zipf-like: "com" or "www" occur in most URLs, millions of
 *   tokens occur once. Here: 100..130 non-zeros per row, ~16% of them from a
 *   block of 134 real-valued features in (0, 1] at the lowest indices, the rest
 *   binary (value 1) with power-law popularity.
 *
 *   webspam (webspam_wc_normalized_trigram): 350k rows x 16,609,143 features
 *   (byte trigrams), ~3,700 distinct trigrams per page, trigram counts scaled
 *   to unit L2 norm per row, ~61% spam. Text trigrams dominate, so popularity
 *   is skewed too, and common trigrams repeat on a page. Here: 1,850..5,550
 *   non-zeros per row, counts that fall with popularity (Pareto around that),
 *   L2-normalised, 60% positive.
 *
 * Why these matter: what mpisgd measures is communication, and the size of a
 * mini-batch update is the number of distinct features its rows touch. That is
 * set by non-zeros per row and the popularity curve, so those two are matched;
 * everything else is kept simple.
 *
 * Popularity: a feature's popularity rank r is drawn with P(r) ~ 1/(r + r0)
 * (inverse CDF: one exp per draw). r0 = 1 + nnz/40 grows with the row length so
 * that the head stays a head: in url the top feature is in ~85% of rows, the
 * 100th in 7%, the 10,000th in 0.1%; in webspam ~50 trigrams are in 90% of rows.
 * Ranks are spread over the index range by a fixed affine bijection: the real
 * files number features in order of first appearance, which a stationary
 * generator cannot imitate, and spreading keeps contiguous feature ranges
 * (split allreduces partition by range) evenly loaded and indices as long as
 * in the real files.
 *
 * Labels: a hidden sparse linear model w, w_f a hash of (seed, f), non-zero on
 * half of the real-valued block and of the most popular binary features: a
 * learner can only fit the weight of a feature it sees often (url: the top
 * 4,096, the last still in ~1 row in 600), and in an L2-normalised row only
 * the large entries move the margin (webspam: the top 128 trigrams, which
 * carry most of a row's norm). The row's margin w.x is standardised to z, and
 * y = +1 iff z + noise * logistic > t.
 * So P(y = +1 | x) is exactly a logistic model: `noise` sets how well a linear
 * learner can do, t the share of positives. Mean, deviation and t are measured
 * on the first rows, so they depend only on (seed, kind, dimensions) and the
 * shape flags below.
 *
 * Classes (--classes K, K >= 3; labels 0..K-1): K hidden models w_c, each
 * drawn as w is from a hash of (seed, c, f) on its own half of the same
 * features; class c's margin w_c.x is standardised to z_c as above, and
 * y = argmax_c (z_c - b_c + noise * G_c), G_c independent standard Gumbel.
 * Gumbel noise makes P(y = c | x) exactly softmax_c((z_c - b_c) / noise), the
 * multiclass logistic model, so `noise` keeps its meaning (for K = 2 the
 * difference of two Gumbels is logistic: the binary labels are this model
 * with one margin). The offsets b_c balance the classes: each class's
 * expected share over the calibration rows is 1/K.
 *
 * Shape flags: the trainer's defaults (step, batch, stopping) were tuned on the
 * two shapes above, and a default is only one if it holds on shapes it was not
 * tuned on. Each flag left out keeps the kind's own shape, byte for byte.
 *   --real-columns C: C real-valued columns at the lowest indices in place of
 *   the kind's block. Column c is in a row with its own probability in
 *   [0.3, 0.8], a hash of (seed, kind, dimensions, c), with values u^2 kept
 *   in (0, 1); binary features fill the rest of the row's length (webspam
 *   normalises its trigram counts alone).
 *   --positive-share S: moves t.
 *   --popularity-exponent E: binary ranks are drawn with P(r) ~ (r + r0)^-E;
 *   a flatter law (E < 1) makes a mini-batch touch more distinct features, a
 *   steeper one fewer.
 *   --bayes-accuracy A: sets noise in place of the kind's. As P(y = +1 | z) is
 *   logistic in z, no classifier beats sign(z - t), right with probability
 *   max(p, 1 - p); noise is the scale at which that averages A over the
 *   calibration rows (found by bisection once at start), so A is what a linear
 *   learner approaches with enough rows. The kinds' own noise gives ~0.94.
 *   With K classes the same holds of argmax_c (z_c - b_c), right with
 *   probability max_c P(y = c | x), and A must beat 1/K; the offsets are
 *   rebalanced at each noise tried. Below 0.005 deviations of noise they
 *   take too long to balance, which bounds A (about 0.99 at K = 5).
 *   --classes K: the labels above. --positive-share has no meaning then (the
 *   classes are balanced) and is refused.
 *
 * Determinism: each row has its own random stream keyed by a hash of (seed,
 * kind, dimensions, global row index), so any slice (--first-row) and any
 * thread count give the same bytes, and train/test slices share the model.
 * Values are rounded to 6 significant digits before shortest round-trip
 * printing, as the real files were written with %g: shorter files and faster
 * parsing, with what a reader of the real data sees.
 */
#include <CLI/CLI.hpp>
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "sparse/random.h"

namespace {

using mpisgd::kGolden;
using mpisgd::mix64;

// Uniform in (0, 1], never 0, so that logs and negative powers stay finite.
double unit(uint64_t h) { return double((h >> 11) + 1) * 0x1p-53; }

struct Rng {  // splitmix64: one stream per row, started at a hash of the row
  uint64_t s;
  uint64_t next() { return mpisgd::splitmix64(s); }
};

struct KindSpec {
  uint32_t features;
  uint32_t nnz;
  double nnz_spread;      // row length is uniform in nnz * (1 +- spread)
  uint32_t real_block;    // real-valued features at the lowest indices
  double real_share;      // share of a row's non-zeros taken from that block
  uint32_t model_ranks;   // the hidden model lives on half of this many top features
  double positive_share;
  double noise;           // scale of the logistic label noise, in margin deviations
};

// noise is calibrated so that liblinear -s 0 reaches 86-92% test accuracy on
// 50k-200k url rows or 5k webspam rows: learnable, not trivial.
constexpr KindSpec kUrl{3231961, 115, 0.13, 134, 0.16, 4096, 1.0 / 3, 0.12};
constexpr KindSpec kWebspam{16609143, 3700, 0.5, 0, 0.0, 128, 0.6, 0.1};

// What the shape flags change; left unset, the kind's own shape.
struct Shape {
  std::optional<uint32_t> real_columns;  // replaces the kind's real-valued block
  double popularity_exponent = 1;        // of the binary features' popularity law
  std::optional<double> bayes_accuracy;  // sets the label noise in place of the kind's
  int classes = 2;                       // K >= 3: labels 0..K-1 in place of +1/-1
};

// Labels are y = +1 iff z + s L > t (L standard logistic), so P(y = +1 | z) =
// sigmoid((z - t) / s) and no classifier does better than sign(z - t), which is
// right with probability max(p, 1 - p). This finds the s at which sign(z - t) is
// right on a share `accuracy` of the rows z on average, t being set so that the
// expected share of positives is `positive`. That accuracy falls as s grows, from
// 1 towards the majority share, so bisections on log s and on t find both.
double noise_for_accuracy(const std::vector<double>& z, double positive, double accuracy) {
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  const auto [z_min, z_max] = std::minmax_element(z.begin(), z.end());
  auto bayes_accuracy = [&](double s) {
    double lo = *z_min - 40 * s, hi = *z_max + 40 * s;  // all positive .. none
    for (int k = 0; k < 60; ++k) {
      double t = (lo + hi) / 2, share = 0;
      for (double v : z) share += sigmoid((v - t) / s);
      (share > positive * double(z.size()) ? lo : hi) = t;
    }
    double t = (lo + hi) / 2, right = 0;
    for (double v : z) {
      double p = sigmoid((v - t) / s);
      right += std::max(p, 1 - p);
    }
    return right / double(z.size());
  };
  double lo = std::log(1e-6), hi = std::log(1e6);
  for (int k = 0; k < 60; ++k) {
    double mid = (lo + hi) / 2;
    (bayes_accuracy(std::exp(mid)) > accuracy ? lo : hi) = mid;
  }
  return std::exp((lo + hi) / 2);
}

// With K >= 3 classes labels are y = argmax_c (z_c - b_c + s G_c), G_c standard
// Gumbel, so P(y = c | z) = softmax_c((z_c - b_c) / s) and no classifier does better
// than argmax_c (z_c - b_c), right with probability max_c P(y = c | z). This moves
// the offsets b from where they are until every class's expected share over the rows
// z (n x K, row-major) is 1/K, as near as n rows allow, and returns that classifier's
// accuracy averaged over the rows.
//
// The step b_c += s log(K share_c) is Sinkhorn's: it scales class c's probabilities
// by 1/(K share_c), the softmax renormalises each row, and the two alternate towards
// the balanced offsets. The log is kept in [-1, 1], so that a class which no row
// reaches moves by s a step, not infinitely far. Steps shorten with s while the
// offsets' distance to their balance does not: below s = 0.005 they would take
// thousands of steps, so the callers keep s above that. Rows are summed in fixed
// blocks, in order, so the offsets are the same for any thread count.
double balance_classes(const std::vector<double>& z, double s, std::vector<double>& b) {
  const size_t classes = b.size(), n = z.size() / classes;
  constexpr size_t kBlock = 256;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  // One row more or less in a class moves K share_c by K/n.
  const double tolerance = std::max(1e-3, double(classes) / double(n));
  std::vector<double> sums(blocks * (classes + 1));  // per block: the shares, then the accuracy
  for (int step = 0;; ++step) {
    // A step is one pass of n K exps: with few, starting the threads costs more.
#pragma omp parallel if (n * classes >= (1u << 18))
    {
      std::vector<double> e(classes);
#pragma omp for schedule(static)
      for (size_t block = 0; block < blocks; ++block) {
        double* sum = &sums[block * (classes + 1)];
        std::fill(sum, sum + classes + 1, 0.0);
        for (size_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock); ++i) {
          const double* zi = &z[i * classes];
          double top = -HUGE_VAL, total = 0;
          for (size_t c = 0; c < classes; ++c) {
            e[c] = (zi[c] - b[c]) / s;
            top = std::max(top, e[c]);
          }
          // Far below the top a class's probability is below 1e-22: 0, and no subnormals.
          for (size_t c = 0; c < classes; ++c) {
            e[c] = e[c] - top > -50 ? std::exp(e[c] - top) : 0.0;
            total += e[c];
          }
          for (size_t c = 0; c < classes; ++c) sum[c] += e[c] / total;
          sum[classes] += 1 / total;  // the largest probability: its e is 1
        }
      }
    }
    std::vector<double> share(classes + 1, 0.0);
    for (size_t block = 0; block < blocks; ++block)
      for (size_t c = 0; c <= classes; ++c) share[c] += sums[block * (classes + 1) + c] / double(n);
    double worst = 0;
    for (size_t c = 0; c < classes; ++c)
      worst = std::max(worst, std::abs(double(classes) * share[c] - 1));
    // The cap guards against rows no offsets split evenly, such as many identical rows.
    if (worst <= tolerance || step == 1000) return share[classes];
    for (size_t c = 0; c < classes; ++c)
      b[c] += s * std::clamp(std::log(double(classes) * share[c]), -1.0, 1.0);
  }
}

// The s at which argmax_c (z_c - b_c) is right on a share `accuracy` of the rows z
// on average, the offsets b balanced at each s: as with two classes that accuracy
// falls as s grows, from 1 towards 1/K, so a bisection on log s finds it. s stays in
// [0.005, 1e4]: balance_classes is slow below, and above the accuracy is within 1e-4
// of 1/K. An accuracy that needs less noise is refused, with the most there is.
double class_noise_for_accuracy(const std::vector<double>& z, double accuracy,
                                std::vector<double>& b) {
  double lo = std::log(0.005), hi = std::log(1e4);
  double most = balance_classes(z, std::exp(lo), b);
  if (most <= accuracy) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "%g is out of reach with --classes %zu: the least label noise the classes are "
                  "balanced at, 0.005 margin deviations, gives %.4f",
                  accuracy, b.size(), most);
    throw CLI::ValidationError("--bayes-accuracy", text);
  }
  for (int k = 0; k < 40; ++k) {
    double mid = (lo + hi) / 2;
    (balance_classes(z, std::exp(mid), b) > accuracy ? lo : hi) = mid;
  }
  return std::exp((lo + hi) / 2);
}

// Ranks 0..n-1 with P(r) ~ (r + r0)^-e, drawn by inverting the CDF of the
// continuous law on [0, n): for e = 1, x = r0 (1 + n/r0)^u - r0; otherwise
// x = (r0^(1-e) + u ((n + r0)^(1-e) - r0^(1-e)))^(1/(1-e)) - r0.
struct PowerLaw {
  uint32_t n = 1;
  double r0 = 1, e = 1;
  double base = 0, span = 0;  // e = 1: span = log(1 + n/r0); else r0^(1-e) and the span above
  PowerLaw() = default;
  PowerLaw(uint32_t n_, double r0_, double e_ = 1) : n(n_), r0(r0_), e(e_) {
    if (e == 1) {
      span = std::log((n + r0) / r0);
    } else {
      base = std::pow(r0, 1 - e);
      span = std::pow(n + r0, 1 - e) - base;
    }
  }
  uint32_t draw(uint64_t h) const {
    double x = e == 1 ? r0 * std::exp(unit(h) * span) - r0
                      : std::pow(base + unit(h) * span, 1 / (1 - e)) - r0;
    return std::min(static_cast<uint32_t>(std::max(x, 0.0)), n - 1);
  }
};

__extension__ using u128 = unsigned __int128;

// Affine bijection rank -> index of [base, base + n).
struct Spread {
  uint32_t base = 0;
  uint64_t n = 1, a = 1, c = 0, barrett = 0;
  Spread() = default;
  Spread(uint32_t base_, uint64_t n_, uint64_t key)
      : base(base_), n(n_), c(mix64(key) % n_), barrett(~uint64_t(0) / n_) {
    // A multiplier near n/phi sends neighbouring ranks far apart.
    a = static_cast<uint64_t>(double(n) * 0.6180339887498949) | 1;
    while (std::gcd(a, n) != 1) a += 2;
    a %= n;
  }
  uint32_t index(uint32_t rank) const {
    // (rank * a + c) mod n by Barrett reduction: a 64-bit division would cost
    // about a tenth of the url generation time.
    uint64_t x = rank * a + c;
    uint64_t r = x - static_cast<uint64_t>((u128(x) * barrett) >> 64) * n;
    return base + static_cast<uint32_t>(r >= n ? r - n : r);
  }
};

// Rounds to 6 significant digits, so that the shortest round-trip float is short.
float round6(double v) {
  static const auto pow10 = [] {
    std::array<double, 64> p{};
    for (int e = 0; e < 64; ++e) p[e] = std::pow(10.0, e - 32);
    return p;
  }();
  int e = std::clamp(static_cast<int>(std::floor(std::log10(v))), -26, 26);
  double s = pow10[5 - e + 32];
  return static_cast<float>(std::nearbyint(v * s) / s);
}

// Sorts keys whose high 32 bits (a feature index below index_end) are spread
// near-uniformly: one counting pass by the index's leading bits leaves disorder
// only within buckets of ~1 key, which an insertion pass removes. On url rows
// this makes the whole generator ~1.4x faster than with std::sort.
struct KeySorter {
  std::vector<uint64_t> tmp;
  std::vector<uint32_t> start;

  void sort(uint64_t* first, uint64_t* last, uint64_t index_end) {
    size_t n = static_cast<size_t>(last - first);
    if (n < 16) return std::sort(first, last);
    size_t buckets = size_t(1) << std::min<size_t>(std::bit_width(n - 1), 16);
    uint64_t scale = (uint64_t(buckets) << 32) / index_end;  // floor: bucket < buckets
    auto bucket = [scale](uint64_t key) { return ((key >> 32) * scale) >> 32; };
    start.assign(buckets + 1, 0);
    for (const uint64_t* p = first; p != last; ++p) ++start[bucket(*p) + 1];
    for (size_t b = 1; b <= buckets; ++b) start[b] += start[b - 1];
    tmp.resize(n);
    for (const uint64_t* p = first; p != last; ++p) tmp[start[bucket(*p)]++] = *p;
    for (size_t i = 1; i < n; ++i) {
      uint64_t key = tmp[i];
      size_t j = i;
      for (; j > 0 && tmp[j - 1] > key; --j) tmp[j] = tmp[j - 1];
      tmp[j] = key;
    }
    std::copy(tmp.begin(), tmp.end(), first);
  }
};

struct Row {
  std::vector<uint64_t> drawn;  // scratch
  KeySorter sorter;
  std::vector<uint32_t> idx;
  std::vector<float> val;
  double margin = 0;
  double noise = 0;  // standard logistic draw
  std::vector<double> margins, gumbel;  // K >= 3 classes: per class, the margin and a Gumbel draw
};

class Generator {
 public:
  Generator(const KindSpec& spec, const Shape& shape, uint64_t seed, int kind_id,
            uint32_t features, uint32_t nnz)
      : spec_(spec), webspam_(kind_id == 1), classes_(shape.classes), noise_(spec.noise) {
    key_ = mix64(mix64(mix64(seed) ^ (uint64_t(kind_id) << 32 | features)) ^ nnz);
    uint64_t lo = std::max<uint64_t>(1, std::llround(nnz * (1 - spec.nnz_spread)));
    uint64_t hi = std::max<uint64_t>(lo, std::llround(nnz * (1 + spec.nnz_spread)));
    len_lo_ = static_cast<uint32_t>(lo);
    len_span_ = static_cast<uint32_t>(hi - lo + 1);
    double real_mean = 0;
    if (shape.real_columns) {
      real_block_ = *shape.real_columns;
      for (uint32_t c = 0; c < real_block_; ++c) {
        presence_.push_back(0.3 + 0.5 * unit(mix64(key_ ^ (0x5052455345000000ull + c))));
        real_mean += presence_.back();
      }
    } else {
      real_block_ = std::min(spec.real_block, features / 16);
      real_mean = real_block_ ? std::min(real_block_ / 2.0, nnz * spec.real_share) : 0.0;
    }
    binary_n_ = features > real_block_ ? features - real_block_ : 0;
    double binary_mean = std::max(nnz - real_mean, 0.0);
    if (hi > binary_n_ / 2)  // beyond this, distinct draws would take long to collect
      throw CLI::ValidationError("--nnz", "rows of up to " + std::to_string(hi) +
                                              " non-zeros need --features of at least " +
                                              std::to_string(2 * hi + real_block_) +
                                              (shape.real_columns ? " with --real-columns " +
                                                                        std::to_string(real_block_)
                                                                  : ""));
    if (real_block_ && presence_.empty()) real_law_ = PowerLaw(real_block_, 1 + real_mean / 40);
    binary_law_ = PowerLaw(binary_n_, 1 + binary_mean / 40, shape.popularity_exponent);
    spread_ = Spread(real_block_, binary_n_, key_ ^ 0x5350524541440000ull);
    model_ranks_ = std::min(spec.model_ranks, binary_n_);
    if (classes_ == 2) {
      calibrate(shape.bayes_accuracy);
      return;
    }
    // Class c's weight on model slot k, at [k * K + c]: a row's K margins then add
    // one contiguous run per entry (34 MB at K = 1000 on url).
    const uint32_t slots = real_block_ + model_ranks_;
    class_weights_.resize(size_t(slots) * classes_);
    for (uint32_t k = 0; k < slots; ++k) {
      uint32_t f = k < real_block_ ? k : spread_.index(k - real_block_);
      for (int c = 0; c < classes_; ++c)
        class_weights_[size_t(k) * classes_ + c] = normal_weight(
            mix64(mix64(key_ ^ (0x434C415353000000ull + c)) ^ (0x5745494748540000ull + f)));
    }
    calibrate_classes(shape.bayes_accuracy);
  }

  void row(uint64_t i, Row& r) const {
    uint64_t state = mix64(key_ + i * kGolden);
    Rng rng{state};
    r.idx.clear();
    r.val.clear();
    uint32_t len = len_lo_ + static_cast<uint32_t>(rng.next() % len_span_);
    // Entries are (index << 32 | rank): sorting orders by index, and the rank
    // that gates the hidden weight comes along without inverting the spread.
    const std::vector<uint64_t>& drawn = r.drawn;
    r.drawn.clear();
    uint32_t real = 0;
    if (!presence_.empty()) {  // --real-columns: each column in its own share of rows
      for (uint32_t c = 0; c < real_block_; ++c)
        if (unit(rng.next()) <= presence_[c]) r.drawn.push_back(uint64_t(c) << 32 | c);
      real = static_cast<uint32_t>(r.drawn.size());
    } else if (real_block_) {
      real = static_cast<uint32_t>(
          std::min<double>(real_block_ / 2, std::round(len * spec_.real_share)));
      draw_distinct(rng, real, real_law_, real_block_, [](uint32_t rank) { return rank; }, r);
    }
    draw_distinct(rng, len - std::min(real, len), binary_law_, uint64_t(real_block_) + binary_n_,
                  [this](uint32_t rank) { return spread_.index(rank); }, r);
    for (uint64_t e : drawn) r.idx.push_back(static_cast<uint32_t>(e >> 32));
    // Lexical ratios are mostly small: u^2 puts most of them below 0.25. The
    // kind's own block lets 1 through; --real-columns promises values below 1.
    for (uint32_t j = 0; j < real; ++j) {
      double u = unit(rng.next());
      float v = round6(std::max(u * u, 1e-6));
      r.val.push_back(presence_.empty() ? v : std::min(v, 0.999999f));
    }
    if (webspam_) {
      // Common trigrams repeat on a page, rare ones occur once, so the expected
      // count falls with rank from ~20 to 1; around it counts are Pareto (alpha
      // 2.5: heavy-tailed, yet no single trigram takes most of the norm). The
      // trigrams alone are normalised: real-valued columns keep their values.
      double sumsq = 0, r0 = binary_law_.r0;
      for (size_t j = real; j < r.idx.size(); ++j) {
        double rate = 1 + 20 * r0 / (static_cast<uint32_t>(drawn[j]) + r0);
        double count = std::floor(rate * std::pow(unit(rng.next()), -1 / 2.5));
        r.val.push_back(static_cast<float>(count));
        sumsq += count * count;
      }
      double scale = 1 / std::sqrt(sumsq);
      for (size_t j = real; j < r.val.size(); ++j) r.val[j] = round6(r.val[j] * scale);
    } else {
      r.val.resize(r.idx.size(), 1.0f);
    }
    if (classes_ > 2) return class_margins(state, r);
    r.margin = 0;
    for (size_t j = 0; j < drawn.size(); ++j)
      r.margin += weight(r.idx[j], static_cast<uint32_t>(drawn[j])) * r.val[j];
    double u = unit(mix64(state ^ 0x4E4F495345000000ull));
    r.noise = std::log(u / (1 - u + 0x1p-53));
  }

  bool positive(const Row& r) const {
    return (r.margin - mean_) / deviation_ + noise_ * r.noise > threshold_;
  }

  // K >= 3 classes: the first class of the highest score.
  int label(const Row& r) const {
    int best = 0;
    double best_score = -HUGE_VAL;
    for (int c = 0; c < classes_; ++c) {
      double score = (r.margins[c] - class_mean_[c]) / class_deviation_[c] - class_offset_[c] +
                     noise_ * r.gumbel[c];
      if (score > best_score) best = c, best_score = score;
    }
    return best;
  }

 private:
  template <class ToIndex>
  static void draw_distinct(Rng& rng, uint32_t count, const PowerLaw& law, uint64_t index_end,
                            ToIndex to_index, Row& r) {
    std::vector<uint64_t>& out = r.drawn;
    size_t begin = out.size(), end = begin + count;
    while (out.size() < end) {
      size_t sorted = out.size();
      for (size_t missing = end - out.size(); missing > 0; --missing) {
        uint32_t rank = law.draw(rng.next());
        out.push_back(uint64_t(to_index(rank)) << 32 | rank);
      }
      // Top-up rounds only sort the few new draws and merge them in.
      r.sorter.sort(out.data() + sorted, out.data() + out.size(), index_end);
      std::inplace_merge(out.begin() + begin, out.begin() + sorted, out.end());
      out.erase(std::unique(out.begin() + begin, out.end()), out.end());
    }
  }

  // The weight a hash h gives: 0 for half of the hashes, else near-normal.
  static double normal_weight(uint64_t h) {
    if (h & 1) return 0;
    // Irwin-Hall: four 15-bit uniforms make a near-normal weight, mean 0, variance 1.
    double s = double((h >> 1) & 0x7FFF) + double((h >> 16) & 0x7FFF) +
               double((h >> 31) & 0x7FFF) + double((h >> 46) & 0x7FFF);
    return (s / 32768.0 - 2) * std::sqrt(3.0);
  }

  double weight(uint32_t f, uint32_t rank) const {
    if (f >= real_block_ && rank >= model_ranks_) return 0;
    return normal_weight(mix64(key_ ^ (0x5745494748540000ull + f)));
  }

  // K >= 3 classes: each class's margin, from the rows of class_weights_ that the
  // row's model features select, and one Gumbel draw per class from the row's own
  // noise stream.
  void class_margins(uint64_t state, Row& r) const {
    r.margins.assign(classes_, 0.0);
    for (size_t j = 0; j < r.drawn.size(); ++j) {
      uint32_t f = r.idx[j], rank = static_cast<uint32_t>(r.drawn[j]);
      if (f >= real_block_ && rank >= model_ranks_) continue;
      size_t slot = f < real_block_ ? f : real_block_ + rank;
      const double* w = &class_weights_[slot * classes_];
      for (int c = 0; c < classes_; ++c) r.margins[c] += w[c] * r.val[j];
    }
    Rng noise{mix64(state ^ 0x47554D42454C0000ull)};
    r.gumbel.resize(classes_);
    // -log(-log u), kept finite at u = 1 as the logistic draw is.
    for (int c = 0; c < classes_; ++c)
      r.gumbel[c] = -std::log(-std::log(unit(noise.next())) + 0x1p-53);
  }

  void calibrate(std::optional<double> bayes_accuracy) {
    constexpr int kRows = 2048;
    std::vector<double> margin(kRows), noise(kRows);
#pragma omp parallel
    {
      Row r;
#pragma omp for schedule(static)
      for (int i = 0; i < kRows; ++i) {
        row(static_cast<uint64_t>(i), r);
        margin[i] = r.margin;
        noise[i] = r.noise;
      }
    }
    double sum = 0, sumsq = 0;
    for (double m : margin) sum += m;
    mean_ = sum / kRows;
    for (double m : margin) sumsq += (m - mean_) * (m - mean_);
    deviation_ = sumsq > 0 ? std::sqrt(sumsq / kRows) : 1.0;
    std::vector<double> score(kRows);
    if (bayes_accuracy) {
      for (int i = 0; i < kRows; ++i) score[i] = (margin[i] - mean_) / deviation_;
      noise_ = noise_for_accuracy(score, spec_.positive_share, *bayes_accuracy);
    }
    for (int i = 0; i < kRows; ++i)
      score[i] = (margin[i] - mean_) / deviation_ + noise_ * noise[i];
    // At most the last score: a share near 0 would otherwise cut past the end.
    auto cut = score.begin() +
               std::min<long>(static_cast<long>((1 - spec_.positive_share) * kRows), kRows - 1);
    std::nth_element(score.begin(), cut, score.end());
    threshold_ = *cut;
  }

  // As calibrate(), per class: each class's margin standardised, then the offsets
  // that balance the classes (and the noise, for --bayes-accuracy). The rows are at
  // least 16 per class, so that each offset rests on a few rows of its class (their
  // margins take 128 MB at K = 1000).
  void calibrate_classes(std::optional<double> bayes_accuracy) {
    const int rows = std::max(2048, 16 * classes_);
    std::vector<double> z(size_t(rows) * classes_);
#pragma omp parallel
    {
      Row r;
#pragma omp for schedule(static)
      for (int i = 0; i < rows; ++i) {
        row(static_cast<uint64_t>(i), r);
        std::copy(r.margins.begin(), r.margins.end(), z.begin() + size_t(i) * classes_);
      }
    }
    class_mean_.assign(classes_, 0.0);
    class_deviation_.assign(classes_, 1.0);
    for (int c = 0; c < classes_; ++c) {
      double sum = 0, sumsq = 0;
      for (int i = 0; i < rows; ++i) sum += z[size_t(i) * classes_ + c];
      class_mean_[c] = sum / rows;
      for (int i = 0; i < rows; ++i) {
        double d = z[size_t(i) * classes_ + c] - class_mean_[c];
        sumsq += d * d;
      }
      if (sumsq > 0) class_deviation_[c] = std::sqrt(sumsq / rows);
      for (int i = 0; i < rows; ++i) {
        double& v = z[size_t(i) * classes_ + c];
        v = (v - class_mean_[c]) / class_deviation_[c];
      }
    }
    class_offset_.assign(classes_, 0.0);
    if (bayes_accuracy) noise_ = class_noise_for_accuracy(z, *bayes_accuracy, class_offset_);
    balance_classes(z, noise_, class_offset_);
  }

  KindSpec spec_;
  bool webspam_;
  uint64_t key_ = 0;
  uint32_t len_lo_ = 1, len_span_ = 1;
  uint32_t real_block_ = 0, binary_n_ = 1;
  std::vector<double> presence_;  // --real-columns: the share of rows each column is in
  PowerLaw real_law_, binary_law_;
  Spread spread_;
  uint32_t model_ranks_ = 1;
  int classes_;
  double noise_;  // scale of the logistic (or Gumbel) label noise, in margin deviations
  double mean_ = 0, deviation_ = 1, threshold_ = 0;
  // K >= 3 classes: weights per model slot (the real block, then the model ranks),
  // and per class the margin's mean and deviation and the balancing offset.
  std::vector<double> class_weights_, class_mean_, class_deviation_, class_offset_;
};

// Reports an I/O failure on `tmp` and removes it, so no half-written file is left.
[[noreturn]] void io_fail(const std::string& what, const std::string& tmp, int err) {
  std::fprintf(stderr, "gen_data: cannot %s: %s\n", what.c_str(), std::strerror(err));
  std::remove(tmp.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Deterministic synthetic LIBSVM data shaped like the URL and Webspam sets.\n"
               "Row i is a pure function of i and of the flags other than --rows, --first-row,\n"
               "--threads and --out: make a test set with the same flags and --first-row past\n"
               "the training rows.",
               "gen_data"};
  std::string kind, out;
  uint64_t rows = 0, first_row = 0, seed = 1;
  uint32_t features = 0, nnz = 0;
  int threads = 0;
  bool zero_based = false;
  app.add_option("--kind", kind, "url (3,231,961 features, ~115 nnz/row) or webspam "
                                 "(16,609,143 features, ~3,700 nnz/row)")
      ->required()
      ->check(CLI::IsMember({"url", "webspam"}));
  // CLI11 would wrap "-5" into a huge unsigned value.
  const CLI::Validator non_negative(
      [](std::string& in) { return in.find('-') == std::string::npos ? "" : "must not be negative: " + in; },
      "");
  app.add_option("--rows", rows, "number of rows to write")->required()->check(non_negative);
  app.add_option("--first-row", first_row, "global index of the first row written")
      ->capture_default_str()
      ->check(non_negative);
  app.add_option("--seed", seed, "seed of the rows and of the hidden model")
      ->capture_default_str()
      ->check(non_negative);
  app.add_option("--out", out, "output file (written to FILE.tmp, then renamed)")->required();
  app.add_option("--threads", threads, "OpenMP threads (default: OpenMP's); output is identical for any")
      ->check(CLI::Range(1, 4096));
  auto* features_opt = app.add_option("--features", features, "override the number of features")
                           ->check(CLI::Range(1u, UINT32_MAX));
  auto* nnz_opt = app.add_option("--nnz", nnz, "override the mean non-zeros per row")
                      ->check(CLI::Range(1u, UINT32_MAX));
  app.add_flag("--zero-based", zero_based, "write 0-based feature indices (default 1-based, as LIBSVM)");
  // The shape flags (see the top of this file): data unlike the two kinds, to
  // check the defaults on shapes they were not tuned on.
  uint32_t real_columns = 0;
  double positive_share = 0, bayes_accuracy = 0;
  Shape shape;
  auto* real_columns_opt =
      app.add_option("--real-columns", real_columns,
                     "C real-valued columns, values in (0,1), at the lowest indices in place of "
                     "the kind's own block (url: 134); column c is in its own share of rows, "
                     "drawn in [0.3, 0.8] from the seed, and binary features fill the rest of "
                     "the row's length")
          ->check(non_negative);
  auto* share_opt = app.add_option(
      "--positive-share", positive_share,
      "share of positive rows, in (0,1) (default: url 1/3, webspam 0.6)");
  auto* accuracy_opt = app.add_option(
      "--bayes-accuracy", bayes_accuracy,
      "in (0.5,1): the accuracy of the best possible classifier, the sign of the hidden model's "
      "margin (a linear model), which sets the label noise (default: the kind's noise, which "
      "gives about 0.94); with --classes K >= 3, in (1/K, 1), and the classifier is the argmax "
      "of the classes' margins");
  app.add_option("--classes", shape.classes,
                 "K in [2, 1000]: with K >= 3, K hidden linear models and labels 0..K-1, a row "
                 "labelled by the argmax over the classes of its margin plus Gumbel noise (so by "
                 "a softmax of the margins), the classes balanced (so no --positive-share); 2 "
                 "writes the +1/-1 labels")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  auto* popularity_opt =
      app.add_option("--popularity-exponent", shape.popularity_exponent,
                     "E in [0, 2]: the binary feature of popularity rank r is drawn with "
                     "P(r) ~ (r + r0)^-E (0: uniform, above 1: a steeper head)")
          ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const int kind_id = kind == "webspam" ? 1 : 0;
  KindSpec spec = kind_id == 1 ? kWebspam : kUrl;
  if (features_opt->count() == 0) features = spec.features;
  if (nnz_opt->count() == 0) nnz = spec.nnz;
  if (threads > 0) omp_set_num_threads(threads);

  std::optional<Generator> gen;
  try {
    if (rows > UINT64_MAX - first_row)
      throw CLI::ValidationError("--rows", "--first-row + --rows overflows 64 bits");
    if (real_columns_opt->count()) shape.real_columns = real_columns;
    const std::string with_classes = " with --classes " + std::to_string(shape.classes);
    if (shape.classes > 2 && share_opt->count())
      throw CLI::ValidationError("--positive-share", "has no meaning" + with_classes +
                                                         ": the classes are balanced");
    if (share_opt->count()) {
      if (!(positive_share > 0 && positive_share < 1))
        throw CLI::ValidationError("--positive-share", "must be in (0, 1), not " +
                                                           share_opt->as<std::string>());
      spec.positive_share = positive_share;
    }
    if (accuracy_opt->count() && shape.classes > 2) {
      // Noise alone leaves any one class right on a share 1/K of the rows.
      if (!(bayes_accuracy > 1.0 / shape.classes && bayes_accuracy < 1))
        throw CLI::ValidationError("--bayes-accuracy", "must be in (1/K, 1)" + with_classes +
                                                           ", not " +
                                                           accuracy_opt->as<std::string>());
      shape.bayes_accuracy = bayes_accuracy;
    } else if (accuracy_opt->count()) {
      if (!(bayes_accuracy > 0.5 && bayes_accuracy < 1))
        throw CLI::ValidationError("--bayes-accuracy", "must be in (0.5, 1), not " +
                                                           accuracy_opt->as<std::string>());
      // Noise alone leaves the majority answer right on this share of rows.
      double majority = std::max(spec.positive_share, 1 - spec.positive_share);
      if (bayes_accuracy <= majority)
        throw CLI::ValidationError(
            "--bayes-accuracy", accuracy_opt->as<std::string>() +
                                    " is no more than always answering the majority label "
                                    "reaches: " + std::to_string(majority) +
                                    " with a positive share of " +
                                    std::to_string(spec.positive_share) +
                                    " (--positive-share)");
      shape.bayes_accuracy = bayes_accuracy;
    }
    // Steeper laws pile the draws onto the head: a row's distinct features then
    // take many times longer to collect (webspam: ~10x at 2, ~50x at 2.5).
    if (!(shape.popularity_exponent >= 0 && shape.popularity_exponent <= 2))
      throw CLI::ValidationError("--popularity-exponent", "must be in [0, 2], not " +
                                                                popularity_opt->as<std::string>());
    gen.emplace(spec, shape, seed, kind_id, features, nnz);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }

  const std::string tmp = out + ".tmp";
  std::FILE* file = std::fopen(tmp.c_str(), "wb");
  if (!file) io_fail("open " + tmp + " for writing", tmp, errno);

  auto start = std::chrono::steady_clock::now();
  // Blocks of a few MB: big enough to amortise the ordered hand-off, small
  // enough to keep every thread busy on short runs.
  const uint64_t block_rows = std::max<uint64_t>(1, (4u << 20) / (uint64_t(nnz) * 11 + 8));
  const uint64_t blocks = rows / block_rows + (rows % block_rows != 0);
  const uint32_t one = zero_based ? 0 : 1;
  std::atomic<int> write_error{0};
  uint64_t total_nnz = 0, total_bytes = 0;
#pragma omp parallel reduction(+ : total_nnz)
  {
    Row r;
    std::vector<char> buf;
#pragma omp for ordered schedule(static, 1)
    for (uint64_t b = 0; b < blocks; ++b) {
      size_t used = 0;
      uint64_t lo = first_row + b * block_rows, hi = lo + std::min(block_rows, rows - b * block_rows);
      for (uint64_t i = lo; i < hi; ++i) {
        gen->row(i, r);
        total_nnz += r.idx.size();
        // label (at most 3 digits), then per entry at most ' ' + 10 digits + ':' + 15 chars
        // of float, then '\n'
        size_t need = used + 4 + r.idx.size() * 28;
        if (buf.size() < need) buf.resize(std::max(need, 2 * buf.size()));
        char* p = buf.data() + used;
        char* const end = buf.data() + buf.size();
        if (shape.classes > 2) {
          p = std::to_chars(p, end, gen->label(r)).ptr;
        } else {
          *p++ = gen->positive(r) ? '+' : '-';
          *p++ = '1';
        }
        for (size_t j = 0; j < r.idx.size(); ++j) {
          *p++ = ' ';
          p = std::to_chars(p, end, r.idx[j] + one).ptr;
          *p++ = ':';
          if (r.val[j] == 1.0f)  // most url values; spares the float formatter
            *p++ = '1';
          else
            p = std::to_chars(p, end, r.val[j]).ptr;
        }
        *p++ = '\n';
        used = static_cast<size_t>(p - buf.data());
      }
#pragma omp ordered
      if (write_error == 0) {
        if (std::fwrite(buf.data(), 1, used, file) != used)
          write_error = errno ? errno : EIO;
        else
          total_bytes += used;
      }
    }
  }
  if (write_error != 0) io_fail("write " + tmp, tmp, write_error);
  if (std::fclose(file) != 0) io_fail("write " + tmp, tmp, errno);
  if (std::rename(tmp.c_str(), out.c_str()) != 0) io_fail("rename " + tmp + " to " + out, tmp, errno);

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "gen_data: %s: %llu rows, %llu non-zeros, %.1f MB in %.2f s (%.0f MB/s)\n",
               out.c_str(), static_cast<unsigned long long>(rows),
               static_cast<unsigned long long>(total_nnz), total_bytes / 1e6, seconds,
               total_bytes / 1e6 / std::max(seconds, 1e-9));
  return 0;
}
