// Label agreement across ranks and the binary cache round trip and its damage checks.
#include <catch2/catch.hpp>

#include <fstream>

#include "comm/job_error.h"
#include "data/binary_cache.h"
#include "data/labels.h"
#include "data/load_dataset.h"
#include "data/mpiio_text_reader.h"
#include "mpi_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

LabelMap labels_of(const std::string& path) {
  auto got = read_libsvm_text(path, MPI_COMM_WORLD, {});
  return agree_on_labels(path, got.first_labels, MPI_COMM_WORLD);
}

// Rank 0 rewrites `bytes` bytes at `offset` of the file.
void damage(const std::string& path, long offset, const std::string& bytes) {
  if (world_rank() == 0) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offset);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

TEST_CASE("labels: the larger of two labels is the positive class", "[labels]") {
  std::string text;
  for (int r = 0; r < 30; ++r) text += (r % 3 ? "0" : "1") + std::string(" 1:1\n");
  LabelMap map = labels_of(write_file("01.svm", text));
  REQUIRE(map.positive == 1.0f);
  REQUIRE(map.negative == 0.0f);
  map = labels_of(write_file("pm.svm", "-1 1:1\n+1 1:1\n-1 2:1\n"));
  REQUIRE(map.positive == 1.0f);
  REQUIRE(map.negative == -1.0f);
}

TEST_CASE("labels: a single class is accepted", "[labels]") {
  LabelMap map = labels_of(write_file("one.svm", "-1 1:1\n-1 2:1\n-1 3:1\n"));
  REQUIRE(map.negative == -1.0f);
}

TEST_CASE("labels: three or more classes keep the order of their first rows, whichever rank reads them",
          "[labels]") {
  std::string text;
  for (int r = 0; r < 60; ++r) text += (r % 2 ? "7" : "-3") + std::string(" 1:1\n");
  text += "5 1:1\n7 1:1\n0 1:1\n";
  LabelMap map = labels_of(write_file("four.svm", text));
  CHECK(map.classes == std::vector<float>{-3, 7, 5, 0});
  CHECK(map.columns() == 4);
  CHECK(map.column_of(5) == 2);
  CHECK(map.column_of(1) == -1);
}

TEST_CASE("labels: one class too many names its first line, wherever it lies", "[labels][errors]") {
  std::string text;
  for (int r = 0; r < 60; ++r) text += (r % 2 ? "+1" : "-1") + std::string(" 1:1\n");
  for (size_t c = 0; c < kMostClasses; ++c) text += std::to_string(c + 2) + " 1:1\n";
  std::string path = write_file("many.svm", text);
  REQUIRE_THROWS_WITH(labels_of(path),
                      Catch::Contains(path + ":" + std::to_string(60 + kMostClasses - 1) + ": label " +
                                      std::to_string(kMostClasses) + " makes 1001 distinct labels"));
}

namespace {

// Rows of `per_row` entries each: enough of them span several of the blocks the cache is
// read and checked in.
std::string wide_rows_text(int rows, int per_row) {
  std::string text;
  for (int r = 0; r < rows; ++r) {
    text += r % 3 ? "+1" : "-1";
    for (int k = 1; k <= per_row; ++k) text += " " + std::to_string(k * 3 + r % 3) + ":" + std::to_string(r % 7 + k) + ".25";
    text += "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("binary cache: mapped and read with MPI-IO, a file of many blocks round-trips exactly", "[cache]") {
  const std::string text = wide_rows_text(1500, 120);  // 180,000 entries
  std::string path = write_file("wide.svm", text);
  std::string bin = scratch_dir() + "/wide.bin";
  write_binary_cache(read_libsvm_text(path, MPI_COMM_WORLD, {}).data, bin, MPI_COMM_WORLD);
  Dataset serial;
  LibsvmParser parser({});
  parser.parse(text.data(), text.data() + text.size(), text.data() + text.size(), true, serial);
  for (CacheRead how : {CacheRead::map_or_read, CacheRead::read}) {
    const bool map = how == CacheRead::map_or_read;
    INFO((map ? "mapped" : "read"));
    Dataset cached = read_binary_cache(bin, MPI_COMM_WORLD, how);
    REQUIRE(on_all_ranks(cached.index.mapped() == map && cached.value.mapped() == map));
    REQUIRE(on_all_ranks(cached.global_rows == 1500 && rows_match(cached, serial)));
  }
}

TEST_CASE("binary cache: ranks without rows map nothing and still check the file", "[cache]") {
  std::string path = write_file("tiny.svm", "+1 2:1 7:0.5\n");
  std::string bin = scratch_dir() + "/tiny.bin";
  write_binary_cache(read_libsvm_text(path, MPI_COMM_WORLD, {}).data, bin, MPI_COMM_WORLD);
  for (CacheRead how : {CacheRead::map_or_read, CacheRead::read}) {
    Dataset cached = read_binary_cache(bin, MPI_COMM_WORLD, how);
    const bool ok = cached.rows() == 0 ? cached.nnz() == 0
                                       : cached.rows() == 1 && cached.nnz() == 2 && cached.index[1] == 6 &&
                                             cached.value[1] == 0.5f;
    REQUIRE(on_all_ranks(ok));
    uint64_t rows = cached.rows(), total = 0;
    MPI_Allreduce(&rows, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    REQUIRE(total == 1);
  }
}

TEST_CASE("binary cache: round trip equals the text read", "[cache]") {
  std::string text = rows_text(37);
  std::string path = write_file("cache.svm", text);
  std::string bin = scratch_dir() + "/cache.bin";
  auto parsed = read_libsvm_text(path, MPI_COMM_WORLD, {});
  write_binary_cache(parsed.data, bin, MPI_COMM_WORLD);
  REQUIRE(is_binary_cache(bin, MPI_COMM_WORLD));
  REQUIRE_FALSE(is_binary_cache(path, MPI_COMM_WORLD));
  REQUIRE_FALSE(std::filesystem::exists(bin + ".tmp"));

  Dataset cached = read_binary_cache(bin, MPI_COMM_WORLD);
  // Both partitions are contiguous in file order; compare through the global row number.
  Dataset serial;
  LibsvmParser parser({});
  parser.parse(text.data(), text.data() + text.size(), text.data() + text.size(), true, serial);
  bool ok = cached.global_rows == 37 && cached.dim == parsed.data.dim && rows_match(cached, serial);
  REQUIRE(on_all_ranks(ok));
  uint64_t rows = cached.rows(), total = 0;
  MPI_Allreduce(&rows, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  REQUIRE(total == 37);

  // load_dataset tells the formats apart by content, and --dim widens a cache's N.
  LoadOptions wide;
  wide.dim = 100;
  REQUIRE(load_dataset(bin, MPI_COMM_WORLD, wide).data.dim == 100);
  wide.dim = 3;
  REQUIRE_THROWS_WITH(load_dataset(bin, MPI_COMM_WORLD, wide), Catch::Contains("above --dim 3"));
}

TEST_CASE("binary cache: damage is detected on every rank", "[cache][errors]") {
  std::string path = write_file("dmg.svm", rows_text(25));
  auto parsed = read_libsvm_text(path, MPI_COMM_WORLD, {});
  std::string bin = scratch_dir() + "/dmg.bin";

  write_binary_cache(parsed.data, bin, MPI_COMM_WORLD);
  auto size = static_cast<long>(std::filesystem::file_size(bin));
  damage(bin, size - 6, "\x7f");  // inside the last value, before the 4-byte table of block checksums
  for (CacheRead how : {CacheRead::map_or_read, CacheRead::read})
    REQUIRE_THROWS_WITH(read_binary_cache(bin, MPI_COMM_WORLD, how), Catch::Contains("checksum mismatch"));

  write_binary_cache(parsed.data, bin, MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::resize_file(bin, static_cast<uintmax_t>(size - 4));
  MPI_Barrier(MPI_COMM_WORLD);
  REQUIRE_THROWS_WITH(read_binary_cache(bin, MPI_COMM_WORLD), Catch::Contains("(truncated?)"));

  write_binary_cache(parsed.data, bin, MPI_COMM_WORLD);
  damage(bin, offsetof(CacheHeader, dim), "\x7f");
  REQUIRE_THROWS_WITH(read_binary_cache(bin, MPI_COMM_WORLD), Catch::Contains("header checksum mismatch"));
}
