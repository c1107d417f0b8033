// The reader's memory check (data/csr_memory.h): --max-memory's values, the sampled
// estimate of a rank's rows against what it then holds, and a limit below it failing
// every rank with one message before anything is allocated.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "comm/job_error.h"
#include "data/csr_memory.h"
#include "data/mpi_file.h"
#include "data/mpiio_text_reader.h"
#include "mpi_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

// URL-like rows: a label and 20 to 180 ascending entries with short decimal values.
std::string url_like(int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::string text;
  for (int r = 0; r < rows; ++r) {
    text += rng() % 2 ? "+1" : "-1";
    uint32_t idx = 0;
    for (int j = 0, n = 20 + static_cast<int>(rng() % 160); j < n; ++j) {
      idx += 1 + rng() % 20000;
      text += " " + std::to_string(idx) + ":" + (rng() % 3 ? "1" : std::to_string((rng() % 1000) / 1000.0));
    }
    text += "\n";
  }
  return text;
}

uint64_t csr_bytes(const Dataset& d) { return d.rows() * 12 + d.nnz() * 8; }

}  // namespace

TEST_CASE("--max-memory accepts sizes with suffixes, auto and 0", "[memory]") {
  CHECK(parse_max_memory("auto") == std::nullopt);
  CHECK(parse_max_memory("0") == uint64_t{0});
  CHECK(parse_max_memory("4096") == uint64_t{4096});
  CHECK(parse_max_memory("512M") == uint64_t{512} << 20);
  CHECK(parse_max_memory("8g") == uint64_t{8} << 30);
  CHECK(parse_max_memory("1.5G") == uint64_t{3} << 29);
  CHECK(parse_max_memory("2KiB") == uint64_t{2048});
  CHECK(parse_max_memory("3MB") == uint64_t{3} << 20);
  CHECK(parse_max_memory("1T") == uint64_t{1} << 40);
  CHECK(parse_max_memory("100B") == uint64_t{100});
  for (const char* bad : {"", "-1", "12Q", "1.5", "G", "nan", "inf", "1e30", "8 G", "0x10", "auto2", "M8"})
    CHECK_THROWS_AS(parse_max_memory(bad), JobFailed);
  CHECK_THROWS_WITH(parse_max_memory("12Q"), Catch::Contains("--max-memory 12Q") && Catch::Contains("suffix"));
}

TEST_CASE("the sampled estimate of a rank's rows is close to what it holds", "[memory]") {
  const std::string path = write_file("estimate.svm", url_like(6000, 3));  // ~5 MB: sampled at any P here
  TextReadOptions options;
  options.max_memory = 0;
  const Dataset d = read_libsvm_text(path, MPI_COMM_WORLD, options).data;
  // The rank's byte range, as the reader splits the file.
  MpiFile file = MpiFile::open_read(path, MPI_COMM_WORLD);
  const int64_t size = file.size(), p = world_size(), r = world_rank();
  const CsrEstimate e = estimate_text_csr(file, size * r / p, size * (r + 1) / p);
  const double ratio = static_cast<double>(e.bytes) / static_cast<double>(csr_bytes(d));
  INFO("rank " << r << ": estimate " << e.bytes << " bytes (" << e.rows << " rows, " << e.nnz
               << " entries), holds " << csr_bytes(d) << " (" << d.rows() << " rows, " << d.nnz() << " entries)");
  CHECK(on_all_ranks(e.sampled && ratio > 0.9 && ratio < 1.15));
}

TEST_CASE("a small range is counted whole: rows and entries exactly, a qid as an entry", "[memory]") {
  const std::string path = write_file("small.svm", "+1 qid:3 1:1 5:0.5\n-1 2:1\n+1 7:2 9:1 10:1\n");
  MpiFile file = MpiFile::open_read(path, MPI_COMM_WORLD);
  const CsrEstimate e = estimate_text_csr(file, 0, file.size());
  CHECK(on_all_ranks(!e.sampled && e.rows == 3 + 1 && e.nnz == 7 && e.bytes == 4 * 12 + 7 * 8));
}

TEST_CASE("a memory limit below a rank's rows fails every rank before reading, naming rank and fix", "[memory]") {
  const std::string path = write_file("limit.svm", url_like(400, 5));
  TextReadOptions options;
  options.max_memory = 4096;
  std::string message;
  try {
    read_libsvm_text(path, MPI_COMM_WORLD, options);
  } catch (const JobFailed& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(on_all_ranks(message.find(path) == 0 && message.find("rank 0 of " + std::to_string(world_size())) !=
                                                    std::string::npos &&
                     message.find("above its memory limit of 4.0 KiB (--max-memory)") != std::string::npos &&
                     message.find("more ranks") != std::string::npos));

  // No check with 0; the default (this node's memory shared among its ranks) lets it by.
  for (const std::optional<uint64_t> limit : {std::optional<uint64_t>(0), std::optional<uint64_t>()}) {
    options.max_memory = limit;
    CHECK(on_all_ranks(read_libsvm_text(path, MPI_COMM_WORLD, options).data.global_rows == 400));
  }
}
