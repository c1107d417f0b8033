#pragma once
// Helpers for tests that run on every rank of MPI_COMM_WORLD.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <mpi.h>

#include "data/dataset.h"

namespace mpisgd::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// How many indices of [0, n) a density asks for: at least one for any density above 0.
inline uint64_t items(double density, uint32_t n) {
  if (density <= 0 || n == 0) return 0;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(density * n)));
}

// A REQUIRE that fails on one rank only would leave the others waiting in the next
// collective; asserting on the agreed value keeps every rank in step.
inline bool on_all_ranks(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Rank 0's `s` (up to 63 characters) on every rank, to check that ranks agree.
inline std::string on_rank0(std::string s) {
  s.resize(64);
  MPI_Bcast(s.data(), 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  s.resize(s.find('\0') == std::string::npos ? 64 : s.find('\0'));
  return s;
}

// True if this rank's rows are rows [first_row, first_row + rows) of `all` (a serial parse
// of the whole file), labels, indices and values alike.
inline bool rows_match(const Dataset& mine, const Dataset& all) {
  bool ok = mine.first_row + mine.rows() <= all.rows();
  for (uint64_t r = 0; ok && r < mine.rows(); ++r) {
    uint64_t g = mine.first_row + r;
    auto a = mine.row_index(r), b = all.row_index(g);
    auto va = mine.row_value(r), vb = all.row_value(g);
    ok = mine.label[r] == all.label[g] && std::equal(a.begin(), a.end(), b.begin(), b.end()) &&
         std::equal(va.begin(), va.end(), vb.begin(), vb.end());
  }
  return ok;
}

// A per-run scratch directory shared by all ranks (made by rank 0, name agreed), removed
// by remove_scratch_dir() at the end of the run.
inline std::string& scratch_dir_name() {
  static std::string dir;
  return dir;
}

inline std::string scratch_dir() {
  std::string& dir = scratch_dir_name();
  if (dir.empty()) dir = [] {
    char name[256] = {};
    if (world_rank() == 0) {
      std::string d = std::filesystem::temp_directory_path() / ("mpisgd_test_XXXXXX");
      std::snprintf(name, sizeof name, "%s", d.c_str());
      if (!mkdtemp(name)) std::perror("mkdtemp");
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    return std::string(name);
  }();
  return dir;
}

inline void remove_scratch_dir() {
  if (world_rank() == 0 && !scratch_dir_name().empty()) std::filesystem::remove_all(scratch_dir_name());
}

// LIBSVM text of `rows` rows: row r has label +-1, feature 1 + r % 5 with value r and
// feature 9 with 0.5.
inline std::string rows_text(int rows) {
  std::string text;
  for (int r = 0; r < rows; ++r)
    text += (r % 2 ? "+1 " : "-1 ") + std::to_string(1 + r % 5) + ":" + std::to_string(r) + " 9:0.5\n";
  return text;
}

// Rank 0 writes `text` to a file in the scratch directory; every rank gets the path.
inline std::string write_file(const std::string& name, const std::string& text) {
  std::string path = scratch_dir() + "/" + name;
  if (world_rank() == 0) std::ofstream(path, std::ios::binary) << text;
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

}  // namespace mpisgd::test
