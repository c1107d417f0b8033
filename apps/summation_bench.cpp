// summation_bench: the cost of summing sparse streams against dense addition (thesis
// section 5.2.5), which sets where a stream should go dense (DenseSwitch::density).
//
//   build/summation_bench [--dims 1000000,16000000] [--densities 1e-4,...] [--reps 11]
//                         [--type float|double] [--switch-density 1.0] [--csv FILE]
//
// For each dimension N and density d, times add_overlapping (sparse/stream_sum.h) on:
//   sparse+sparse  two sparse streams of k = d N uniform random indices each (the merge),
//                  different ones for each timed call
//   sparse+dense   a sparse stream of k items scattered into a dense one
//   dense+dense    two dense streams of N values (SIMD loop), once per N
// and prints the median time, ns per input item (per element for dense), the ratio to
// dense+dense, and the density where sparse+sparse summation becomes as slow as dense
// addition (interpolated in log density). Single process; no MPI.
//
// With the library's default switch (6.25%) a sparse+sparse sum past the switch turns
// dense on its own, so the default here is --switch-density 1.0: pure sparse summation.
// Even then a stream cannot stay sparse past the byte bound (N sizeof(V) / sizeof(pair)
// items) and a merge whose two inputs could outgrow the dense buffer is done by scatter
// into a dense one; the "path" column says which form the result took.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "sparse/sample.h"
#include "sparse/stream.h"
#include "sparse/stream_sum.h"

namespace {

using namespace mpisgd;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<uint32_t> dims{1000000, 16000000};
  std::vector<double> densities{1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02,
                                0.03, 0.05, 0.0625, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5};
  int reps = 11;
  std::string type = "float";
  double switch_density = 1.0;
  uint64_t seed = 1;
  std::string csv;
};


double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Seconds of one call of `op` after `setup` (untimed), median of `reps`.
template <class Setup, class Op>
double time_median(int reps, Setup&& setup, Op&& op) {
  std::vector<double> t;
  setup();
  op();  // warm-up
  for (int r = 0; r < reps; ++r) {
    setup();
    const auto start = Clock::now();
    op();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(t);
}

struct Point {
  double density;
  uint64_t k;
  double ss, sd;  // seconds
  std::string path;
};

// Density where ratio(d) first reaches 1, interpolated in log-log; NaN if never.
double crossover(const std::vector<Point>& pts, double dense, bool sparse_sparse) {
  auto ratio = [&](const Point& p) { return (sparse_sparse ? p.ss : p.sd) / dense; };
  for (size_t i = 0; i < pts.size(); ++i) {
    if (ratio(pts[i]) < 1) continue;
    if (i == 0) return pts[0].density;  // already slower at the lowest density
    const double x0 = std::log(pts[i - 1].density), x1 = std::log(pts[i].density);
    const double y0 = std::log(ratio(pts[i - 1])), y1 = std::log(ratio(pts[i]));
    return std::exp(x0 + (x1 - x0) * (0 - y0) / (y1 - y0));
  }
  return NAN;
}

template <class V>
int run(const Options& o) {
  std::ofstream csv;
  if (!o.csv.empty()) {
    namespace fs = std::filesystem;
    const fs::path path(o.csv);
    if (path.has_parent_path()) fs::create_directories(path.parent_path());
    const bool fresh = !fs::exists(path) || fs::file_size(path) == 0;
    csv.open(path, std::ios::app);
    if (!csv) throw std::runtime_error("cannot open " + o.csv);
    if (fresh) {
      csv << "dim,type,switch_density,density,k,op,median_s,ns_per_item,ratio_to_dense,result\n";
    }
  }
  DenseSwitch sw;
  sw.density = o.switch_density;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> val(0.1, 1.0);

  fmt::print("summation_bench: add_overlapping, type {}, switch density {:g} (library default {:g}), median of {} "
             "reps\n",
             o.type, o.switch_density, DenseSwitch::kMeasuredDensity, o.reps);
  std::vector<std::string> summary;
  for (const uint32_t n : o.dims) {
    const Range range{0, n};
    Stream<V> acc(n), in(n), scratch(n), a0(n), b0(n), dense_acc(n), dense_in(n);

    // dense + dense: the SIMD loop over N values.
    dense_acc.set_zero_dense(n);
    dense_in.set_dense(n);
    for (V& v : dense_in.values()) v = static_cast<V>(val(rng));
    const double dd = time_median(
        o.reps, [] {}, [&] { add_overlapping(dense_acc, dense_in, scratch, range, sw); });
    fmt::print("\nN = {}: dense+dense {:.3f} ms = {:.3f} ns/element ({:.1f} GB/s read+write)\n", n, dd * 1e3,
               dd * 1e9 / n, 3.0 * n * sizeof(V) / dd / 1e9);
    fmt::print("{:>9} {:>10} {:>12} {:>9} {:>7} {:>12} {:>9} {:>8} {:>8}\n", "density", "k", "sp+sp ms",
               "ns/item", "result", "sp+dense ms", "ns/item", "ss/dd", "sd/dd");
    if (csv) {
      csv << fmt::format("{},{},{:g},1,{},dense+dense,{:.6e},{:.4f},1,dense\n", n, o.type, o.switch_density, n, dd,
                         dd * 1e9 / n);
    }

    std::vector<Point> pts;
    for (const double d : o.densities) {
      const auto k = std::min<uint64_t>(n, static_cast<uint64_t>(std::llround(d * n)));
      if (k == 0) continue;
      // A different pair of inputs for each timed call, up to 2^22 pairs held: merging one
      // pair over and over, the branch predictor learnt its order (0.5 ns an item at
      // k = 1,600, where fresh streams take 3-5), which a collective's merges never see.
      const size_t sets = std::clamp<size_t>((size_t{1} << 22) / k, 1, 8);
      std::vector<std::vector<uint32_t>> ia(sets), ib(sets);
      std::vector<std::vector<V>> va(sets, std::vector<V>(k)), vb(sets, std::vector<V>(k));
      for (size_t s = 0; s < sets; ++s) {
        for (auto& v : va[s]) v = static_cast<V>(val(rng));
        for (auto& v : vb[s]) v = static_cast<V>(val(rng));
        ia[s] = distinct_indices(n, k, rng);
        ib[s] = distinct_indices(n, k, rng);
      }
      encode<V>(ia[0], va[0], range, sw, a0);
      encode<V>(ib[0], vb[0], range, sw, b0);
      if (a0.is_dense() || b0.is_dense()) {
        fmt::print("{:>9g} {:>10}  (inputs past the dense switch, so not sparse: skipped)\n", d, k);
        continue;
      }

      Point p{d, k, 0, 0, ""};
      size_t next = 0;
      p.ss = time_median(
          o.reps,
          [&] {
            const size_t s = next++ % sets;
            encode<V>(ia[s], va[s], range, sw, acc);
            encode<V>(ib[s], vb[s], range, sw, in);
          },
          [&] { add_overlapping(acc, in, scratch, range, sw); });
      p.path = acc.is_dense() ? "dense" : "sparse";

      // sparse + dense (case 1.c): scatter in place into the dense accumulator.
      in.copy_from(b0);
      p.sd = time_median(
          o.reps, [] {}, [&] { add_overlapping(dense_acc, in, scratch, range, sw); });
      if (!dense_acc.is_dense()) throw std::logic_error("sparse+dense did not stay dense");

      fmt::print("{:>9g} {:>10} {:>12.4f} {:>9.3f} {:>7} {:>12.4f} {:>9.3f} {:>8.3f} {:>8.3f}\n", d, k, p.ss * 1e3,
                 p.ss * 1e9 / (2.0 * k), p.path, p.sd * 1e3, p.sd * 1e9 / k, p.ss / dd, p.sd / dd);
      if (csv) {
        csv << fmt::format("{},{},{:g},{:g},{},sparse+sparse,{:.6e},{:.4f},{:.4f},{}\n", n, o.type, o.switch_density,
                           d, k, p.ss, p.ss * 1e9 / (2.0 * k), p.ss / dd, p.path);
        csv << fmt::format("{},{},{:g},{:g},{},sparse+dense,{:.6e},{:.4f},{:.4f},dense\n", n, o.type,
                           o.switch_density, d, k, p.sd, p.sd * 1e9 / k, p.sd / dd);
      }
      pts.push_back(p);
    }
    auto describe = [&](double x) {
      return std::isnan(x) ? std::string("not reached in the densities measured") : fmt::format("{:.2f}%", 100 * x);
    };
    const std::string line = fmt::format(
        "N = {}: sparse+sparse as slow as dense+dense at density {}; sparse+dense at {}", n,
        describe(crossover(pts, dd, true)), describe(crossover(pts, dd, false)));
    fmt::print("crossover: {}\n", line);
    summary.push_back(line);
  }
  fmt::print("\nsummary (ns/item: sparse+sparse per input pair of the two streams, sparse+dense per pair "
             "scattered; thesis section 5.2.5 found 6.25%):\n");
  for (const auto& s : summary) fmt::print("  {}\n", s);
  if (csv && !csv.flush()) throw std::runtime_error("write to " + o.csv + " failed");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"summation_bench: sparse vs dense summation of streams (thesis section 5.2.5)"};
  app.footer(
      "sparse+sparse merges two sparse streams of k uniform random indices each; sparse+dense scatters k pairs "
      "into a dense vector; dense+dense adds N values. ns/item is per input pair (2k for sparse+sparse), per element "
      "for dense+dense. The crossover is interpolated in log density between the densities measured.");
  app.add_option("--dims", o.dims, "dimensions N, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(uint32_t{1}, UINT32_MAX / 2))
      ->capture_default_str();
  app.add_option("--densities", o.densities, "densities k/N, comma-separated, ascending")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--reps", o.reps, "timed calls per point (median)")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--type", o.type, "value type")->check(CLI::IsMember({"float", "double"}))->capture_default_str();
  app.add_option("--switch-density", o.switch_density,
                 "DenseSwitch density: 1.0 measures pure sparse summation, 0.0625 the library's default")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  app.add_option("--csv", o.csv, "append one row per measurement to this CSV file (header if new)");
  CLI11_PARSE(app, argc, argv);
  std::sort(o.densities.begin(), o.densities.end());
  try {
    return o.type == "float" ? run<float>(o) : run<double>(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "summation_bench: %s\n", e.what());
    return 1;
  }
}
