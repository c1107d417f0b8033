// pingpong_bench: the one-way time of a message against its size, the curve a network
// model is fitted to. A simulated link charges latency + size / bandwidth; a real one, or
// a token-bucket shaper, sends a small message faster than its long-run rate, and SimGrid
// takes that as a bandwidth factor per message size (smpi/bw-factor). The platform of the
// emulated network (scripts/platforms/gbe-emulated.xml) was set from this curve, and
// scripts/calibrate_sim.py prints it emulated and simulated side by side.
//
//   build/pingpong_bench [--sizes 8,1024,...] [--reps 21] [--csv FILE]
//
// Ranks r and r ^ 1 ping-pong, every pair at once (an odd last rank waits), with the
// trainer's start-up measurement (comm/alpha_beta.h): a rank's share of the network while
// all ranks talk, as in a collective. Per size: one untimed round trip, then --reps, each
// pair's median one-way time, the slowest pair's printed; "MB/s" is size over that
// time, "MB/s past latency" size over the time less the smallest size's.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cli/parse_args.h"
#include "comm/alpha_beta.h"
#include "comm/thread_level.h"

namespace {

struct Options {
  std::vector<int> sizes{8, 1024, 4096, 16384, 65536, 131072, 262144, 1048576, 4194304};
  int reps = 21;
  std::string csv;
};

// The slowest pair's median one-way seconds for `bytes`, after one untimed round trip;
// the same on every rank.
double one_way(MPI_Comm comm, int bytes, int reps) {
  mpisgd::pair_one_way_seconds(comm, bytes, 1);
  double t = mpisgd::pair_one_way_seconds(comm, bytes, reps);
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (!mpisgd::init_mpi(argc, argv, MPI_THREAD_SINGLE)) return 1;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Options o;
  CLI::App app{"pingpong_bench: one-way message time against size, every pair of ranks (r, r ^ 1) at once"};
  app.add_option("--sizes", o.sizes, "message sizes in bytes, ascending")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 30))
      ->capture_default_str();
  app.add_option("--reps", o.reps, "timed round trips per size")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--csv", o.csv, "append one row per size to this CSV file (header if new)");
  if (const std::optional<int> code = mpisgd::cli::parse_args(app, argc, argv, rank == 0)) {
    MPI_Finalize();
    return *code;
  }
  if (size < 2 || !std::is_sorted(o.sizes.begin(), o.sizes.end())) {
    if (rank == 0)
      std::fprintf(stderr, "pingpong_bench: %s\n", size < 2 ? "needs at least 2 ranks" : "--sizes must be ascending");
    MPI_Finalize();
    return 2;
  }

  std::vector<double> seconds;
  for (int bytes : o.sizes) seconds.push_back(one_way(MPI_COMM_WORLD, bytes, o.reps));
  if (rank == 0) {
    std::printf("%6s %10s %12s %10s %18s\n", "ranks", "bytes", "one-way s", "MB/s", "MB/s past latency");
    const bool header = !o.csv.empty() && !std::filesystem::exists(o.csv);
    std::ofstream csv;
    if (!o.csv.empty()) csv.open(o.csv, std::ios::app);
    if (header) csv << "ranks,bytes,one_way_s,mb_per_s,mb_per_s_past_latency\n";
    for (size_t i = 0; i < o.sizes.size(); ++i) {
      const double rate = o.sizes[i] / seconds[i] / 1e6;
      const double past = seconds[i] > seconds[0] ? (o.sizes[i] - o.sizes[0]) / (seconds[i] - seconds[0]) / 1e6 : 0;
      std::printf("%6d %10d %12.4e %10.1f %18.1f\n", size, o.sizes[i], seconds[i], rate, past);
      if (csv.is_open()) csv << size << ',' << o.sizes[i] << ',' << seconds[i] << ',' << rate << ',' << past << '\n';
    }
  }
  MPI_Finalize();
  return 0;
}
