// The MPI-IO partitioned reader: whatever P and chunk size, the ranks' rows together are
// exactly the rows of a serial parse, in file order.
#include <catch2/catch.hpp>

#include <limits>
#include <random>

#include "comm/job_error.h"
#include "data/libsvm_parser.h"
#include "data/mpiio_text_reader.h"
#include "mpi_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

Dataset serial_parse(const std::string& text) {
  Dataset d;
  LibsvmParser parser({});
  parser.parse(text.data(), text.data() + text.size(), text.data() + text.size(), true, d);
  return d;
}

// Every rank checks its rows against rows [first_row, first_row + rows) of the serial parse.
bool matches_serial(const Dataset& mine, const Dataset& all) {
  return on_all_ranks(mine.global_rows == all.rows() && rows_match(mine, all));
}

std::string random_file(int rows, unsigned seed, bool crlf, bool final_newline) {
  std::mt19937 rng(seed);
  std::string text = "# generated\n";
  for (int r = 0; r < rows; ++r) {
    text += (rng() % 2 ? "+1" : "-1");
    uint32_t idx = 0;
    int nnz = static_cast<int>(rng() % 12);
    for (int j = 0; j < nnz; ++j) {
      idx += 1 + rng() % 40;
      text += (rng() % 5 ? " " : "\t  ") + std::to_string(idx) + ":" + std::to_string((rng() % 1000) / 100.0);
    }
    if (rng() % 7 == 0) text += " # trailing comment";
    text += crlf ? "\r\n" : "\n";
    if (rng() % 11 == 0) text += "\n";
  }
  if (!final_newline) text.pop_back();
  return text;
}

}  // namespace

TEST_CASE("partitioned read equals a serial parse for any chunk size", "[read]") {
  for (bool crlf : {false, true}) {
    for (bool final_newline : {true, false}) {
      std::string text = random_file(57, 7, crlf, final_newline);
      std::string path = write_file("rand.svm", text);
      Dataset all = serial_parse(text);
      for (size_t chunk : {size_t{5}, size_t{64}, size_t{1} << 20}) {
        TextReadOptions opt;
        opt.chunk_bytes = chunk;
        auto got = read_libsvm_text(path, MPI_COMM_WORLD, opt);
        CAPTURE(crlf, final_newline, chunk);
        REQUIRE(matches_serial(got.data, all));
        uint32_t expected_dim = *std::max_element(all.index.begin(), all.index.end()) + 1;
        REQUIRE(got.data.dim == expected_dim);
      }
    }
  }
}

TEST_CASE("files with fewer rows than ranks", "[read]") {
  for (std::string text : {"+1 3:1\n", "-1 1:2\n+1 2:1 5:1\n", "+1 4:1", "\n\n-1 1:1\n\n\n"}) {
    std::string path = write_file("few.svm", text);
    auto got = read_libsvm_text(path, MPI_COMM_WORLD, {});
    CAPTURE(text);
    REQUIRE(matches_serial(got.data, serial_parse(text)));
  }
}

TEST_CASE("a line longer than the read buffer", "[read]") {
  std::string text = "+1";
  for (int i = 1; i <= 3000; ++i) text += " " + std::to_string(i) + ":0.5";
  text += "\n-1 2:1\n";
  std::string path = write_file("long.svm", text);
  TextReadOptions opt;
  opt.chunk_bytes = 100;
  auto got = read_libsvm_text(path, MPI_COMM_WORLD, opt);
  REQUIRE(matches_serial(got.data, serial_parse(text)));
}

TEST_CASE("a bad line ends the read on every rank with its global line number", "[read][errors]") {
  std::string text = random_file(40, 3, false, true);
  // Append bad lines at the end, in the last rank's range: line numbers must still be global.
  uint64_t lines = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  text += "+1 4:1 2:1\n+1 x:1\n";
  std::string path = write_file("bad.svm", text);
  REQUIRE_THROWS_WITH(read_libsvm_text(path, MPI_COMM_WORLD, {}),
                      Catch::Contains(path + ":" + std::to_string(lines + 1) + ": indices not strictly ascending"));
}

TEST_CASE("the first bad line wins when several ranks fail", "[read][errors]") {
  std::string text;
  for (int i = 0; i < 200; ++i) text += i % 50 == 49 ? "+1 1:nan\n" : "+1 1:1 2:1\n";
  std::string path = write_file("bad_many.svm", text);
  REQUIRE_THROWS_WITH(read_libsvm_text(path, MPI_COMM_WORLD, {}), Catch::Contains(path + ":50: value 'nan'"));
}

TEST_CASE("missing, empty and comment-only files", "[read][errors]") {
  REQUIRE_THROWS_WITH(read_libsvm_text(scratch_dir() + "/nope.svm", MPI_COMM_WORLD, {}),
                      Catch::Contains("nope.svm: cannot open for reading"));
  std::string empty = write_file("empty.svm", "");
  REQUIRE_THROWS_WITH(read_libsvm_text(empty, MPI_COMM_WORLD, {}), Catch::Equals(empty + ": no rows"));
  std::string comments = write_file("comments.svm", "# nothing\n\n   \n# here\n");
  REQUIRE_THROWS_WITH(read_libsvm_text(comments, MPI_COMM_WORLD, {}), Catch::Equals(comments + ": no rows"));
}

TEST_CASE("--dim sets N and rejects larger indices", "[read]") {
  std::string path = write_file("dim.svm", "+1 3:1\n-1 7:1\n+1 2:1\n");
  TextReadOptions opt;
  REQUIRE(read_libsvm_text(path, MPI_COMM_WORLD, opt).data.dim == 7);
  opt.parse.dim_limit = 10;
  REQUIRE(read_libsvm_text(path, MPI_COMM_WORLD, opt).data.dim == 10);
  opt.parse.dim_limit = 5;
  REQUIRE_THROWS_WITH(read_libsvm_text(path, MPI_COMM_WORLD, opt), Catch::Contains(path + ":2: index 7 is above --dim 5"));
}

TEST_CASE("zero-based files", "[read]") {
  std::string path = write_file("zero.svm", "+1 0:1 3:1\n-1 1:1\n");
  TextReadOptions opt;
  REQUIRE_THROWS_WITH(read_libsvm_text(path, MPI_COMM_WORLD, opt), Catch::Contains(":1: index 0"));
  opt.parse.zero_based = true;
  auto got = read_libsvm_text(path, MPI_COMM_WORLD, opt);
  REQUIRE(got.data.dim == 4);
}

TEST_CASE("an index above 2^31 sets N on every rank", "[read]") {
  // Reduced as unsigned 32-bit values, MPICH 4.0.2 took 3000000000 for negative and
  // gave N = 3 at P = 2.
  std::string path = write_file("wide.svm", "+1 1:1\n-1 2:1\n+1 3:1\n-1 3000000000:1\n");
  REQUIRE(on_all_ranks(read_libsvm_text(path, MPI_COMM_WORLD, {}).data.dim == 3000000000u));
}

TEST_CASE("--dim beyond 32-bit indices is refused, not truncated", "[read][errors]") {
  std::string path = write_file("dim_wide.svm", "+1 1:1\n-1 2:1\n");
  TextReadOptions opt;
  opt.parse.dim_limit = (uint64_t{1} << 32) + 1;
  REQUIRE_THROWS_WITH(read_libsvm_text(path, MPI_COMM_WORLD, opt),
                      "--dim 4294967297 is too large: indices are 32-bit, so at most 4294967295 features");
  opt.parse.dim_limit = std::numeric_limits<uint32_t>::max();
  REQUIRE(read_libsvm_text(path, MPI_COMM_WORLD, opt).data.dim == std::numeric_limits<uint32_t>::max());
}
