#pragma once
// allreduce_bench's report: the tables rank 0 prints and the rows of --csv.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/allreduce_bench/options.h"
#include "collectives/cost_model.h"

namespace mpisgd::bench {

// One algorithm's line of the report.
struct Row {
  std::string algo;
  bool wrong = false;
  double median = NAN, p25 = NAN, p75 = NAN;
  double sent = NAN, received = NAN, sent_max = NAN;  // per rank per call
  double analytical = NAN;
  double result_density = NAN;
  std::string note;
  int reps = 0;
  bool lossy = false;                          // a top-k allreduce
  double volume_low = NAN, volume_high = NAN;  // Table 1, bytes sent per rank per call
};

// measured / analytical bytes; 1 when both are 0 (one rank sends nothing).
inline double ratio(const Row& r) {
  if (r.sent == 0 && r.analytical == 0) return 1.0;
  return r.sent / r.analytical;
}

// What the report says of the run besides its rows.
struct RunFacts {
  const Options& options;
  int ranks = 1;
  uint64_t k = 0;  // per rank
  double dense_switch = 0;
  uint64_t reference_nonzeros = 0;
};

inline std::string human_bytes(double b) {
  if (!std::isfinite(b)) return "-";
  if (b < 1e3) return fmt::format("{:.0f} B", b);
  if (b < 1e6) return fmt::format("{:.2f} kB", b / 1e3);
  if (b < 1e9) return fmt::format("{:.2f} MB", b / 1e6);
  return fmt::format("{:.2f} GB", b / 1e9);
}

inline std::string ms(double s) { return std::isfinite(s) ? fmt::format("{:.3f}", s * 1e3) : "-"; }

inline void print_topk(const RunFacts& f, const std::vector<Row>& rows, double dense_median) {
  fmt::print("\ntop-k allreduces: each rank's k={} pairs are its selection; checked by conservation (result + "
             "dropped == MPI_Allreduce)\n",
             f.k);
  fmt::print("  Table 1: the Ok-Topk paper's volume, bytes sent per rank per call, low..high (an algorithm's "
             "comment says whether it means the mean rank or the busiest)\n");
  fmt::print("\n{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>21} {:>9}  {}\n", "algorithm",
             "median ms", "p25 ms", "p75 ms", "vs dense", "sent/rank", "recv/rank", "sent max", "Table 1",
             "res dens", "note");
  for (const Row& r : rows) {
    if (!r.lossy) continue;
    std::string note = r.note;
    if (r.wrong) note = "LOST OR ADDED MASS" + (note.empty() ? "" : "; " + note);
    auto in_band = [&](double b) { return b >= 0.9 * r.volume_low && b <= 1.1 * r.volume_high; };
    if (!in_band(r.sent) && !in_band(r.sent_max)) {
      note += std::string(note.empty() ? "" : "; ") + "mean and busiest >10% outside Table 1";
    }
    const std::string band = r.volume_low == r.volume_high
                                 ? human_bytes(r.volume_low)
                                 : human_bytes(r.volume_low) + ".." + human_bytes(r.volume_high);
    const double vs = r.median / dense_median;
    fmt::print("{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>21} {:>9.4g}  {}\n", r.algo, ms(r.median),
               ms(r.p25), ms(r.p75), vs >= 0.01 ? fmt::format("{:.3f}", vs) : fmt::format("{:.1e}", vs),
               human_bytes(r.sent), human_bytes(r.received), human_bytes(r.sent_max), band, r.result_density, note);
  }
}

// rank 0: the run's settings, then a table of the lossless allreduces and one of the top-k ones.
inline void print_report(const RunFacts& f, const std::vector<Row>& rows) {
  const double dense_median = rows.front().median;  // "dense" is always first
  fmt::print("allreduce_bench: P={} N={} density={:g} (k={} per rank) dist={}{} type={} reps>={} min-time={:g}s "
             "rounds={} warmup={} dense-switch={:g} group-size={}\n",
             f.ranks, f.options.dim, f.options.density, f.k, f.options.dist, f.options.dist == "powerlaw" ? fmt::format(" (skew {:g})", f.options.skew) : "",
             f.options.type, f.options.reps, f.options.min_time, f.options.rounds, f.options.warmup, f.dense_switch, f.options.group_size);
  fmt::print("  inputs drawn once (seed {}), {}; reference result density {:.4g} ({} nonzeros, first set)\n",
             f.options.seed,
             f.options.input_sets == 1 ? std::string("the same every rep")
                                       : fmt::format("{} sets taken in turn", f.options.input_sets),
             static_cast<double>(f.reference_nonzeros) / f.options.dim, f.reference_nonzeros);
  fmt::print("  time: slowest rank per call, quantiles over reps; bytes: per rank per call, mean over ranks\n");
  fmt::print("  analytical: cost_model.h with alpha=0, beta=1 (Table 3.1 + 8-byte headers, dense switch, fold), "
             "index space M={}\n",
             f.options.dist == "uniform" ? std::string("N (uniform)")
                                  : fmt::format("{:.4g} (fitted to the result size)",
                                                fit_universe(static_cast<double>(f.k),
                                                             static_cast<double>(f.reference_nonzeros), f.ranks, f.options.dim)));
  fmt::print("\n{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}  {}\n", "algorithm",
             "median ms", "p25 ms", "p75 ms", "vs dense", "sent/rank", "recv/rank", "sent max", "analytical",
             "meas/anal", "res dens", "note");
  for (const Row& r : rows) {
    if (r.lossy) continue;
    std::string note = r.note;
    if (r.wrong) note = "WRONG RESULT" + (note.empty() ? "" : "; " + note);
    if (std::isfinite(r.analytical) && std::abs(ratio(r) - 1) > 0.1) {
      note += std::string(note.empty() ? "" : "; ") + ">10% off analytical";
    }
    const double vs = r.median / dense_median;
    fmt::print("{:<14} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9.4g}  {}\n", r.algo,
               ms(r.median), ms(r.p25), ms(r.p75), vs >= 0.01 ? fmt::format("{:.3f}", vs) : fmt::format("{:.1e}", vs),
               human_bytes(r.sent),
               human_bytes(r.received), human_bytes(r.sent_max), human_bytes(r.analytical),
               std::isfinite(r.analytical) ? fmt::format("{:.3f}", ratio(r)) : "-", r.result_density, note);
  }
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.lossy; })) print_topk(f, rows, dense_median);
  std::fflush(stdout);
}

// Appends one row per algorithm to --csv, with a header if the file is new.
inline void append_csv(const RunFacts& f, const std::vector<Row>& rows) {
  namespace fs = std::filesystem;
  const fs::path path(f.options.csv);
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const bool fresh = !fs::exists(path) || fs::file_size(path) == 0;
  std::ofstream out(path, std::ios::app);
  if (!out) throw std::runtime_error("cannot open " + f.options.csv + " for appending");
  if (fresh) {
    out << "ranks,dim,density,k,dist,type,dense_switch,group_size,reps,algo,median_s,p25_s,p75_s,time_vs_dense,"
           "sent_bytes,received_bytes,sent_max_bytes,analytical_bytes,measured_over_analytical,result_density,"
           "reference_density,correct,auto_ran,lossy,table1_low_bytes,table1_high_bytes,input_sets\n";
  }
  const double dense_median = rows.front().median;
  for (const Row& r : rows) {
    out << fmt::format("{},{},{:g},{},{},{},{:g},{},{},{},{:.6e},{:.6e},{:.6e},{:.4f},{:.1f},{:.1f},{:.1f},{:.1f},{:.4f},"
                       "{:.6g},{:.6g},{},{},{},{:.1f},{:.1f},{}\n",
                       f.ranks, f.options.dim, f.options.density, f.k, f.options.dist, f.options.type, f.dense_switch, f.options.group_size, r.reps, r.algo,
                       r.median, r.p25, r.p75, r.median / dense_median, r.sent, r.received, r.sent_max,
                       r.analytical, ratio(r), r.result_density,
                       static_cast<double>(f.reference_nonzeros) / f.options.dim, r.wrong ? 0 : 1,
                       r.algo == "auto" ? r.note : "", r.lossy ? 1 : 0, r.volume_low, r.volume_high,
                       f.options.input_sets);
  }
  if (!out.flush()) throw std::runtime_error("write to " + f.options.csv + " failed");
}

}  // namespace mpisgd::bench
