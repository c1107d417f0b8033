// Damaged binary caches: every byte is checked, and what a checksum cannot catch (a file
// written wrong, with checksums to match) is refused with the row or size at fault. Every
// failure is a JobFailed on every rank that names the file, at any P, mapped or read.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <vector>

#include "comm/job_error.h"
#include "data/binary_cache.h"
#include "data/crc32c.h"
#include "data/load_dataset.h"
#include "data/mpiio_text_reader.h"
#include "mpi_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;
using Catch::Contains;

namespace {

// rows_text(n): rows r % 5 == 0 start with index 0, which the version 2 checksum
// multiplied its value away with.
std::string make_cache(const std::string& name, const std::string& text) {
  const std::string path = write_file(name + ".svm", text), bin = scratch_dir() + "/" + name + ".bin";
  write_binary_cache(read_libsvm_text(path, MPI_COMM_WORLD, {}).data, bin, MPI_COMM_WORLD);
  return bin;
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

CacheHeader header_in(const std::vector<char>& bytes) {
  CacheHeader h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  return h;
}

// Collective: read by every rank before rank 0 may change it.
CacheHeader header_of(const std::string& path) {
  const CacheHeader h = header_in(file_bytes(path));
  MPI_Barrier(MPI_COMM_WORLD);
  return h;
}

// File offsets of the sections, from the header.
struct Sections {
  long label, row_ptr, index, value, table;
  explicit Sections(const CacheHeader& h) {
    label = sizeof(CacheHeader);
    row_ptr = label + static_cast<long>(4 * h.rows);
    index = row_ptr + static_cast<long>(8 * (h.rows + 1));
    value = index + static_cast<long>(4 * h.nnz);
    table = value + static_cast<long>(4 * h.nnz);
  }
};

// Rank 0 rewrites bytes at `offset`.
void write_at(const std::string& path, long offset, const void* data, size_t n) {
  if (world_rank() == 0) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offset);
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

template <class T>
void write_value(const std::string& path, long offset, T v) {
  write_at(path, offset, &v, sizeof v);
}

// Collective: edits the header and gives it a matching checksum, as a faulty writer would.
void seal_header(const std::string& path, const std::function<void(CacheHeader&)>& edit) {
  CacheHeader h = header_of(path);
  edit(h);
  h.header_crc = crc32c(0, &h, offsetof(CacheHeader, header_crc));
  write_value(path, 0, h);
}

// Collective: recomputes every block checksum and the header's, so that only the checks of the
// values themselves can find what was changed.
void seal_all(const std::string& path) {
  if (world_rank() == 0) {
    const std::vector<char> bytes = file_bytes(path);
    CacheHeader h = header_in(bytes);
    const Sections at(h);
    std::vector<uint32_t> table;
    for (long b = at.label; b < at.table; b += h.block_bytes)
      table.push_back(
          crc32c(0, bytes.data() + b, static_cast<size_t>(std::min<long>(h.block_bytes, at.table - b))));
    h.table_crc = crc32c(0, table.data(), table.size() * 4);
    h.header_crc = crc32c(0, &h, offsetof(CacheHeader, header_crc));
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.seekp(at.table);
    f.write(reinterpret_cast<const char*>(table.data()), static_cast<std::streamsize>(table.size() * 4));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The message of the JobFailed that reading `bin` throws; "" when it reads.
std::string failure(const std::string& bin, CacheRead how) {
  try {
    read_binary_cache(bin, MPI_COMM_WORLD, how);
  } catch (const JobFailed& e) {
    return e.what();
  }
  return "";
}

// Both ways of reading fail with a message that names the file and contains `cause`.
void require_refused(const std::string& bin, const std::string& cause) {
  for (CacheRead how : {CacheRead::map_or_read, CacheRead::read}) {
    INFO((how == CacheRead::read ? "read with MPI-IO" : "mapped"));
    REQUIRE_THAT(failure(bin, how), Contains(bin + ": ") && Contains(cause));
  }
}

}  // namespace

TEST_CASE("binary cache damage: a flipped byte anywhere in the file is refused", "[cache][errors]") {
  // Three rows: at P = 5 two ranks hold none and still take part.
  const std::string bin = make_cache("every_byte", rows_text(3));
  const std::vector<char> bytes = file_bytes(bin);
  for (size_t i = 0; i < bytes.size(); ++i) {
    INFO("byte " << i << " of " << bytes.size());
    const char flipped = static_cast<char>(bytes[i] ^ 0x10);
    write_at(bin, static_cast<long>(i), &flipped, 1);
    const CacheRead how = i % 2 ? CacheRead::read : CacheRead::map_or_read;
    REQUIRE_THAT(failure(bin, how), Contains(bin + ": ") && (Contains("damaged mpisgd binary cache") ||
                                                             Contains("re-run `mpisgd convert`")));
    write_at(bin, static_cast<long>(i), &bytes[i], 1);
  }
  REQUIRE(failure(bin, CacheRead::map_or_read).empty());
}

TEST_CASE("binary cache damage: every value is checksummed, the first of a row with index 0 too",
          "[cache][errors]") {
  const std::string bin = make_cache("index0", rows_text(25));
  const Sections at(header_of(bin));
  const long row5_first_value = at.value + 4 * 10;  // row 5 starts at entry 10, with index 0
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), 3e38f}) {
    INFO("value " << bad);
    write_value(bin, row5_first_value, bad);
    require_refused(bin, "checksum mismatch in block 1 of 1");
    write_value(bin, row5_first_value, 5.0f);
    REQUIRE(failure(bin, CacheRead::map_or_read).empty());
  }
}

TEST_CASE("binary cache damage: non-finite values and labels are refused with their row", "[cache][errors]") {
  const std::string bin = make_cache("nan", rows_text(25));
  const Sections at(header_of(bin));
  write_value(bin, at.value + 4 * 10, std::numeric_limits<float>::quiet_NaN());
  seal_all(bin);
  require_refused(bin, "row 6: value is NaN or infinite");

  write_value(bin, at.value + 4 * 10, 5.0f);
  write_value(bin, at.value + 4 * 49, std::numeric_limits<float>::infinity());
  seal_all(bin);
  require_refused(bin, "row 25: value is NaN or infinite");

  write_value(bin, at.value + 4 * 49, 0.5f);
  write_value(bin, at.label + 4 * 17, -std::numeric_limits<float>::infinity());
  seal_all(bin);
  require_refused(bin, "row 18: label is NaN or infinite");
}

TEST_CASE("binary cache damage: an index at or above the header's dim is refused with its row",
          "[cache][errors]") {
  // Row 1 holds indices 0 and 8 (dim 9).
  const std::string bin = make_cache("dim", rows_text(25));
  REQUIRE(header_of(bin).dim == 9);
  for (uint32_t dim : {0u, 1u, 4u}) {
    INFO("dim " << dim);
    seal_header(bin, [&](CacheHeader& h) { h.dim = dim; });
    require_refused(bin, "row 1: feature index " + std::string(dim == 0 ? "0" : "8") +
                             " (0-based) not below the header's dim " + std::to_string(dim));
  }
  seal_header(bin, [](CacheHeader& h) { h.dim = 9; });
  REQUIRE(failure(bin, CacheRead::map_or_read).empty());
}

TEST_CASE("binary cache damage: row offsets must ascend from 0 to nnz", "[cache][errors]") {
  const std::string bin = make_cache("offsets", rows_text(25));  // two entries a row
  const Sections at(header_of(bin));
  write_value<uint64_t>(bin, at.row_ptr + 8 * 12, 7);
  seal_all(bin);
  require_refused(bin, "row 12 ends before it starts (row_ptr[11] = 22, row_ptr[12] = 7)");

  write_value<uint64_t>(bin, at.row_ptr + 8 * 12, 24);
  write_value<uint64_t>(bin, at.row_ptr + 8 * 25, 1000);
  seal_all(bin);
  require_refused(bin, "row_ptr[25] = 1000 is beyond the header's 50 entries");

  write_value<uint64_t>(bin, at.row_ptr + 8 * 25, 49);
  seal_all(bin);
  require_refused(bin, "row_ptr[25] = 49, not the header's 50 entries");

  write_value<uint64_t>(bin, at.row_ptr + 8 * 25, 50);
  write_value<uint64_t>(bin, at.row_ptr, 1);
  seal_all(bin);
  require_refused(bin, "row_ptr[0] = 1, not 0");
}

TEST_CASE("binary cache damage: sizes that wrap or that no file can hold are refused", "[cache][errors]") {
  const std::string bin = make_cache("sizes", rows_text(25));
  const CacheHeader good = header_of(bin);
  const uint64_t huge = uint64_t{1} << 62;
  seal_header(bin, [&](CacheHeader& h) { h.rows = huge + good.rows; });
  require_refused(bin,
                  "the header says " + std::to_string(huge + good.rows) + " rows and 50 entries, more than");

  seal_header(bin, [&](CacheHeader& h) {
    h = good;
    h.nnz = huge + good.nnz;
  });
  require_refused(bin, "entries, more than its");

  seal_header(bin, [&](CacheHeader& h) {
    h = good;
    h.rows = 0;
  });
  require_refused(bin, "the header says 0 rows");

  seal_header(bin, [&](CacheHeader& h) {
    h = good;
    h.nnz = good.nnz - 1;
  });
  require_refused(bin, "where the header says");
}

TEST_CASE("binary cache damage: the header's reserved bytes are checksummed", "[cache][errors]") {
  const std::string bin = make_cache("reserved", rows_text(25));
  for (size_t i = 0; i < sizeof(CacheHeader::reserved); ++i) {
    write_value(bin, static_cast<long>(offsetof(CacheHeader, reserved) + i), '\x01');
    require_refused(bin,
                    "damaged mpisgd binary cache (convert the text file again): header checksum mismatch");
    write_value(bin, static_cast<long>(offsetof(CacheHeader, reserved) + i), '\0');
  }
}

TEST_CASE("binary cache damage: older format versions ask for a new conversion", "[cache][errors]") {
  const std::string bin = make_cache("old", rows_text(25));
  write_value<uint32_t>(bin, offsetof(CacheHeader, version), 2);
  require_refused(bin, "format version 2");
  require_refused(bin, "this build reads version 3: re-run `mpisgd convert` on the text file");
}

TEST_CASE("binary cache damage: a damaged magic is a damaged cache, not LIBSVM text", "[cache][errors]") {
  const std::string bin = make_cache("magic", rows_text(25));
  const auto expect_bad_magic = [&] {
    REQUIRE(is_binary_cache(bin, MPI_COMM_WORLD));
    REQUIRE_THROWS_WITH(
        load_dataset(bin, MPI_COMM_WORLD, {}),
        Contains(bin + ": damaged mpisgd binary cache (convert the text file again): bad magic"));
  };
  write_at(bin, 0, "X", 1);
  expect_bad_magic();
  write_at(bin, 0, "12 3:4.5", 8);  // the whole magic overwritten: the version and zeros after it remain
  expect_bad_magic();

  // Text is never taken for a cache, whatever its comments hold.
  const std::string comment = std::string("# MPISGDC\n#\0\0\0", 14) + "\n+1 1:1\n";
  REQUIRE_FALSE(is_binary_cache(write_file("comment.svm", comment), MPI_COMM_WORLD));
  REQUIRE_FALSE(is_binary_cache(write_file("trailing.svm", std::string("+1 1:1 #\0MPISGDC", 16) + "\n"),
                                MPI_COMM_WORLD));
  REQUIRE_FALSE(is_binary_cache(write_file("short.svm", "1 1:1\n"), MPI_COMM_WORLD));
  REQUIRE_FALSE(is_binary_cache(write_file("empty.svm", ""), MPI_COMM_WORLD));
}

TEST_CASE("binary cache damage: a NUL byte in LIBSVM text is the text parser's to name, at any line",
          "[cache][errors]") {
  // Short enough that the NUL falls inside a header's 64 bytes, and with the NUL past the
  // first thousand lines.
  const std::string early = write_file("nul_early.svm", std::string("+1 1:1\n-1 2:\0\n", 14));
  std::string rows;
  for (int r = 0; r < 1500; ++r) rows += r % 2 ? "-1 1:0.5 4:1\n" : "+1 2:1 3:0.25\n";
  const std::string late = write_file("nul_late.svm", rows + std::string("-1 2:\0\n", 7) + rows);
  for (const auto& [path, line] : {std::pair{early, 2}, std::pair{late, 1501}}) {
    CAPTURE(path);
    REQUIRE_FALSE(is_binary_cache(path, MPI_COMM_WORLD));
    const std::string expected = path + ":" + std::to_string(line) + ": value '\\x00' of index 2 is not a number";
    REQUIRE_THROWS_AS(load_dataset(path, MPI_COMM_WORLD, {}), JobFailed);
    REQUIRE_THROWS_WITH(load_dataset(path, MPI_COMM_WORLD, {}), Contains(expected));
    REQUIRE_THROWS_WITH(read_libsvm_text(path, MPI_COMM_WORLD, {}), Contains(expected));
  }
}

TEST_CASE("binary cache damage: in a file of many blocks, each rank checks the blocks it reads",
          "[cache][errors]") {
  // 4,000 rows of 150 entries: 4.8 MB of entries in 5 blocks of 1 MiB; damage in the
  // middle of each is found whichever rank holds it.
  std::string text;
  for (int r = 0; r < 4000; ++r) {
    text += r % 3 ? "+1" : "-1";
    for (int k = 1; k <= 150; ++k)
      text += " " + std::to_string(k * 3 + r % 3) + ":" + std::to_string(r % 7 + k);
    text += "\n";
  }
  const std::string bin = make_cache("blocks", text);
  const CacheHeader h = header_of(bin);
  const Sections at(h);
  const long blocks = (at.table - at.label + h.block_bytes - 1) / h.block_bytes;
  REQUIRE(blocks == 5);
  REQUIRE(failure(bin, CacheRead::map_or_read).empty());
  for (long k = 0; k < blocks; ++k) {
    INFO("block " << k + 1);
    const long offset = at.label + k * h.block_bytes + 1000 * (k + 1);
    const char original = file_bytes(bin)[static_cast<size_t>(offset)],
               flipped = static_cast<char>(original ^ 1);
    write_at(bin, offset, &flipped, 1);
    require_refused(bin, "checksum mismatch in block " + std::to_string(k + 1) + " of 5");
    write_at(bin, offset, &original, 1);
  }
  REQUIRE(failure(bin, CacheRead::read).empty());
}
