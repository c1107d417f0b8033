// save_model/load_model: LIBLINEAR's text format, exact round trips, and the errors of
// load_model on malformed files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "comm/job_error.h"
#include "model/model_file.h"

using namespace mpisgd;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("mpisgd_unit_model_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i])) return false;
  return true;
}

std::vector<double> awkward_weights() {
  return {1.0 / 3.0,
          -2.0 / 7.0,
          0.0,
          -0.0,
          1e-300,
          -1.2345678901234567e300,
          0.1,
          std::nextafter(1.0, 2.0),
          -std::numeric_limits<double>::min(),
          123456789.0,
          std::ldexp(1.0, -60)};
}

// The InputError that loading `path` raises. Anything else fails the check but not the
// test case, so that a loop over bad inputs reports each one.
InputError load_error(const std::string& path, uint64_t memory_limit = std::numeric_limits<uint64_t>::max()) {
  try {
    load_model(path, memory_limit);
    FAIL_CHECK("no InputError loading " << path);
  } catch (const InputError& e) {
    return e;
  } catch (const std::exception& e) {
    FAIL_CHECK("not an InputError loading " << path << ": " << e.what());
  }
  return InputError("", 0, "");
}

}  // namespace

TEST_CASE("model file: classification models round trip in LIBLINEAR format", "[model_file]") {
  TempDir dir;
  struct Case {
    LossKind loss;
    const char* solver;
    float positive, negative;
    const char* label_line;
  };
  const std::vector<Case> cases = {
      {LossKind::logistic, "L2R_LR", 1, -1, "label 1 -1"},
      {LossKind::hinge, "L2R_L1LOSS_SVC_DUAL", 1, 0, "label 1 0"},
      {LossKind::logistic, "L2R_LR", 4, 2, "label 4 2"},
  };
  for (const auto& c : cases) {
    INFO("solver " << c.solver << " labels " << c.positive << " " << c.negative);
    LinearModel m;
    m.classification = true;
    m.loss = c.loss;
    m.labels.positive = c.positive;
    m.labels.negative = c.negative;
    m.w = awkward_weights();
    const std::string path = dir.file(std::string("model_") + c.solver + ".txt");
    save_model(path, m);

    const auto lines = read_lines(path);
    REQUIRE(lines.size() == 6 + m.w.size());
    CHECK(lines[0] == std::string("solver_type ") + c.solver);
    CHECK(lines[1] == "nr_class 2");
    CHECK(lines[2] == c.label_line);
    CHECK(lines[3] == "nr_feature " + std::to_string(m.w.size()));
    CHECK(lines[4] == "bias -1");
    CHECK(lines[5] == "w");
    for (size_t i = 0; i < m.w.size(); ++i) {
      // LIBLINEAR writes each weight followed by a space; strtod must read it back.
      const std::string& l = lines[6 + i];
      REQUIRE(!l.empty());
      CHECK(l.back() == ' ');
      CHECK(std::strtod(l.c_str(), nullptr) == m.w[i]);
    }

    LinearModel back = load_model(path);
    CHECK(back.classification);
    CHECK(back.loss == c.loss);
    CHECK(back.labels.positive == c.positive);
    CHECK(back.labels.negative == c.negative);
    CHECK(back.bias == -1);
    CHECK(back.features() == m.w.size());
    CHECK(same_bits(back.w, m.w));
  }
  // save_model leaves no temporary file behind.
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    INFO("file " << entry.path());
    CHECK(entry.path().extension() != ".tmp");
  }
}

TEST_CASE("model file: regression models round trip without a label line", "[model_file]") {
  TempDir dir;
  LinearModel m;
  m.classification = false;
  m.loss = LossKind::squared;
  std::mt19937_64 rng(42);
  std::normal_distribution<double> n(0, 10);
  for (int i = 0; i < 1000; ++i) m.w.push_back(n(rng));
  const std::string path = dir.file("linreg.model");
  save_model(path, m);
  CHECK_FALSE(fs::exists(path + ".tmp"));

  const auto lines = read_lines(path);
  REQUIRE(lines.size() == 5 + m.w.size());
  CHECK(lines[0] == "solver_type L2R_L2LOSS_SVR");
  CHECK(lines[1] == "nr_class 2");
  CHECK(lines[2] == "nr_feature 1000");
  CHECK(lines[3] == "bias -1");
  CHECK(lines[4] == "w");

  LinearModel back = load_model(path);
  CHECK_FALSE(back.classification);
  CHECK(back.loss == LossKind::squared);
  CHECK(same_bits(back.w, m.w));

  // Saving again over an existing file replaces it.
  m.w.resize(3);
  save_model(path, m);
  CHECK(load_model(path).w.size() == 3);
  CHECK(same_bits(load_model(path).w, m.w));
  CHECK_FALSE(fs::exists(path + ".tmp"));
}

TEST_CASE("model file: a model with a bias term round trips", "[model_file]") {
  TempDir dir;
  LinearModel m;
  m.loss = LossKind::hinge;
  m.bias = 1;
  m.w = {0.5, -0.25, 2, -1};  // 3 features, then the bias weight
  const std::string path = dir.file("bias.model");
  save_model(path, m);
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == 6 + 4);
  CHECK(lines[3] == "nr_feature 3");
  CHECK(lines[4] == "bias 1");
  LinearModel back = load_model(path);
  CHECK(back.bias == 1);
  CHECK(back.features() == 3);
  CHECK(same_bits(back.w, m.w));
}

TEST_CASE("model file: LIBLINEAR models with a bias load and the decision uses it", "[model_file]") {
  TempDir dir;
  SECTION("classification, bias 1") {
    const std::string path = dir.file("liblinear_lr.model");
    write_text(path,
               "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias 1\nw\n"
               "0.5 \n-0.25 \n2 \n-1 \n");
    LinearModel m = load_model(path);
    CHECK(m.classification);
    CHECK(m.loss == LossKind::logistic);
    CHECK(m.bias == 1);
    REQUIRE(m.w.size() == 4);
    CHECK(m.features() == 3);
    std::vector<uint32_t> idx{0, 2};
    std::vector<float> val{1.0f, 2.0f};
    CHECK(m.decision(idx, val) == Approx(0.5 + 4 - 1));
    // Index 3 is not a feature (its slot holds the bias weight): it is ignored.
    std::vector<uint32_t> idx2{1, 3, 10};
    std::vector<float> val2{4.0f, 5.0f, 6.0f};
    CHECK(m.decision(idx2, val2) == Approx(-1 - 1));
    CHECK(m.decision(std::vector<uint32_t>{}, std::vector<float>{}) == Approx(-1));
  }
  SECTION("classification, bias 2.5") {
    const std::string path = dir.file("liblinear_svc.model");
    write_text(path,
               "solver_type L2R_L2LOSS_SVC\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias 2.5\nw\n"
               "1 \n1 \n0.5 \n");
    LinearModel m = load_model(path);
    CHECK(m.loss == LossKind::hinge);
    CHECK(m.decision(std::vector<uint32_t>{1}, std::vector<float>{3.0f}) == Approx(3 + 1.25));
  }
  SECTION("regression written by liblinear-train -s 11 -B 1") {
    const std::string path = dir.file("liblinear_svr.model");
    write_text(path,
               "solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 3\nbias 1\nw\n"
               "0.73751111482269871 \n-0.50302522014656781 \n0.53814087897823315 \n"
               "-0.092783401866314355 \n");
    LinearModel m = load_model(path);
    CHECK_FALSE(m.classification);
    CHECK(m.loss == LossKind::squared);
    REQUIRE(m.w.size() == 4);
    CHECK(m.w[3] == -0.092783401866314355);
    CHECK(m.decision(std::vector<uint32_t>{0}, std::vector<float>{1.0f}) ==
          Approx(0.73751111482269871 - 0.092783401866314355));
  }
}

TEST_CASE("model file: load errors name the file and the line", "[model_file]") {
  TempDir dir;
  const std::string header = "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\nw\n";

  SECTION("missing file") {
    const std::string path = dir.file("no_such.model");
    InputError e = load_error(path);
    CHECK(e.file() == path);
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
  SECTION("no w line") {
    const std::string path = dir.file("no_w.model");
    write_text(path, "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\n");
    InputError e = load_error(path);
    CHECK(e.file() == path);
    CHECK(e.line() == 5);
    CHECK_THAT(e.what(), Catch::Contains(path + ":5:") && Catch::Contains("'w'"));
  }
  SECTION("too few weights") {
    const std::string path = dir.file("short.model");
    write_text(path, header + "0.5 \n-1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 9);
    CHECK_THAT(e.what(), Catch::Contains(path + ":9:") && Catch::Contains("expected 3 weights") &&
                             Catch::Contains("found 2"));
  }
  SECTION("non-numeric weight") {
    const std::string path = dir.file("nan_text.model");
    write_text(path, header + "0.5 \nabc \n1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 8);
    CHECK_THAT(e.what(), Catch::Contains(path + ":8:") && Catch::Contains("abc"));
  }
  SECTION("empty weight line") {
    const std::string path = dir.file("empty_weight.model");
    write_text(path, header + "0.5 \n\n1 \n");
    CHECK(load_error(path).line() == 8);
  }
  SECTION("three classes with a weight missing from a line") {
    const std::string path = dir.file("three.model");
    write_text(path, "solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 2\nbias -1\nw\n1 2 3 \n4 5 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 8);
    CHECK_THAT(e.what(), Catch::Contains(path + ":8:") && Catch::Contains("expected 3 weights (one per class)"));
  }
  SECTION("labels and nr_class disagree") {
    const std::string path = dir.file("labels.model");
    write_text(path, "solver_type L2R_LR\nnr_class 3\nlabel 1 2\nnr_feature 1\nbias -1\nw\n1 2 3 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 3);
    CHECK_THAT(e.what(), Catch::Contains("label lists 2 classes") && Catch::Contains("says 3"));
  }
  SECTION("a class listed twice") {
    const std::string path = dir.file("twice.model");
    write_text(path, "solver_type L2R_LR\nnr_class 3\nlabel 1 2 1\nnr_feature 1\nbias -1\nw\n1 2 3 \n");
    CHECK_THAT(load_error(path).what(), Catch::Contains(":3:") && Catch::Contains("class 1 twice"));
  }
  SECTION("unknown header field") {
    const std::string path = dir.file("unknown.model");
    write_text(path, "solver_type L2R_LR\nnr_class 2\ncolour blue\nnr_feature 1\nbias -1\nw\n1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 3);
    CHECK_THAT(e.what(), Catch::Contains("colour"));
  }
  SECTION("missing nr_feature") {
    const std::string path = dir.file("no_nr_feature.model");
    write_text(path, "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nbias -1\nw\n1 \n");
    CHECK_THAT(load_error(path).what(), Catch::Contains(path) && Catch::Contains("nr_feature"));
  }
}

TEST_CASE("model file: blank lines in the header are skipped", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("blank.model");
  write_text(path, "solver_type L2R_LR\n\nnr_class 2\nlabel 1 -1\nnr_feature 1\n\nbias -1\nw\n0.5 \n");
  LinearModel m = load_model(path);
  REQUIRE(m.loss == LossKind::logistic);
  REQUIRE(m.features() == 1);
  REQUIRE(m.w == std::vector<double>{0.5});
}

TEST_CASE("model file: labels are written exactly", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("labels.model");
  LinearModel m;
  m.labels = {1234567, 0, {}};
  m.w = {0.25};
  save_model(path, m);
  REQUIRE(read_lines(path)[2] == "label 1234567 0");
  REQUIRE(load_model(path).labels.positive == 1234567.0f);
}

TEST_CASE("model file: nr_feature is checked against the file and 32 bits before allocating", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("huge.model");
  // Memory for one weight at most: what fails is the file, not an allocation.
  auto with_nr_feature = [&](const std::string& n) {
    write_text(path, "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature " + n + "\nbias -1\nw\n" +
                         "0.5 \n-1 \n2 \n");
    return load_error(path, sizeof(double));
  };
  // A file too short for its nr_feature is read through, to say what it holds.
  for (const char* n : {"100000000", "4294967295"}) {
    INFO("nr_feature " << n);
    InputError e = with_nr_feature(n);
    CHECK(e.line() == 10);
    CHECK_THAT(e.what(), Catch::Contains(path + ":10:") && Catch::Contains(std::string("nr_feature ") + n) &&
                             Catch::Contains(std::string("expected ") + n + " weights") && Catch::Contains("found 3"));
  }
  // Above what 32-bit indices address.
  for (const char* n : {"4294967296", "9223372036854775807", "99999999999999999999"}) {
    INFO("nr_feature " << n);
    InputError e = with_nr_feature(n);
    CHECK(e.line() == 4);
    CHECK_THAT(e.what(), Catch::Contains(path + ":4:") && Catch::Contains(std::string("nr_feature ") + n) &&
                             Catch::Contains("4294967295"));
  }
}

TEST_CASE("model file: weights that do not fit the memory available are an error", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("big.model");
  std::string text = "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1000\nbias 1\nw\n";
  for (int i = 0; i < 1001; ++i) text += "0.25 \n";
  write_text(path, text);
  CHECK(load_model(path, 1001 * sizeof(double)).w.size() == 1001);
  InputError e = load_error(path, 1000 * sizeof(double));
  CHECK(e.line() == 4);
  CHECK_THAT(e.what(), Catch::Contains(path + ":4:") && Catch::Contains("memory"));
}

TEST_CASE("model file: malformed weights are errors naming their line", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("weights.model");
  const std::string header = "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\nw\n";
  for (const char* bad : {"nan", "-nan", "inf", "-inf", "infinity", "1e400", "0.5abc", "0x1p3", "1,5", "+-1",
                          "- 1", "0.5 0.7", "0.5 0.7 ", "0.5 x", "#"}) {
    INFO("weight '" << bad << "'");
    write_text(path, header + "0.5 \n" + bad + " \n1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 8);
    CHECK_THAT(e.what(), Catch::Contains(path + ":8:") && Catch::Contains(bad));
  }
  write_text(path, header + "0.5 0.7 \n-1 \n1 \n");
  CHECK_THAT(load_error(path).what(), Catch::Contains("one weight"));
}

TEST_CASE("model file: weights in every form LIBLINEAR writes are read exactly", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("forms.model");
  // %.17g with its trailing space, without it, without the last newline, CRLF, a '+'.
  write_text(path, "solver_type L2R_LR\r\nnr_class 2\r\nlabel 1 -1\r\nnr_feature 5\r\nbias -1\r\nw\r\n"
                   "0.61376787140168443 \r\n-1e-300\n\t2.5E+10\n+3 \n-0");
  LinearModel m = load_model(path);
  REQUIRE(m.w.size() == 5);
  CHECK(m.w[0] == 0.61376787140168443);
  CHECK(m.w[1] == -1e-300);
  CHECK(m.w[2] == 2.5e10);
  CHECK(m.w[3] == 3);
  CHECK(std::signbit(m.w[4]));
}

TEST_CASE("model file: too few or too many weights say how many were expected and found", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("count.model");
  const std::string header = "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias 1\nw\n";
  SECTION("too many") {
    write_text(path, header + "1 \n2 \n3 \n4 \n5 \n6 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 11);
    CHECK_THAT(e.what(), Catch::Contains("expected 4 weights") && Catch::Contains("found 6"));
  }
  SECTION("too few") {
    write_text(path, header + "1 \n2 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 9);
    CHECK_THAT(e.what(), Catch::Contains("expected 4 weights") && Catch::Contains("found 2"));
  }
  SECTION("blank lines after the last weight are not weights") {
    write_text(path, header + "1 \n2 \n3 \n4 \n\n \n");
    CHECK(load_model(path).w == std::vector<double>{1, 2, 3, 4});
  }
}

TEST_CASE("model file: malformed header lines are errors naming their line", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("header.model");
  struct Case {
    std::string text;
    uint64_t line;
    std::vector<std::string> says;
  };
  const std::string tail = "bias -1\nw\n1 \n";
  const std::vector<Case> cases = {
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1.5\n" + tail, 4, {"nr_feature", "1.5"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature -1\n" + tail, 4, {"nr_feature", "-1"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1 2\n" + tail, 4, {"nr_feature"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature\n" + tail, 4, {"nr_feature"}},
      {"solver_type L2R_LR\nnr_class 2.0\nlabel 1 -1\nnr_feature 1\n" + tail, 2, {"nr_class", "2.0"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 x\nnr_feature 1\n" + tail, 3, {"label", "'x'"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1\nnr_feature 1\n" + tail, 3, {"label"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 1\nnr_feature 1\n" + tail, 3, {"label"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 nan\nnr_feature 1\n" + tail, 3, {"label", "nan"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias x\nw\n1 \n", 5, {"bias", "'x'"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias inf\nw\n1 \n", 5, {"bias", "inf"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nnr_feature 1\n" + tail, 5,
       {"nr_feature", "line 4"}},
      {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw 1\n1 \n", 6, {"'w'"}},
      {"solver_type L2R_LR extra\nnr_class 2\nlabel 1 -1\nnr_feature 1\n" + tail, 1, {"solver_type"}},
      {"solver_type\nnr_class 2\nlabel 1 -1\nnr_feature 1\n" + tail, 1, {"solver_type"}},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    write_text(path, c.text);
    InputError e = load_error(path);
    CHECK(e.line() == c.line);
    CHECK_THAT(e.what(), Catch::Contains(path + ":" + std::to_string(c.line) + ":"));
    for (const auto& s : c.says) CHECK_THAT(e.what(), Catch::Contains(s));
  }
}

TEST_CASE("model file: the solver must be named and known", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("solver.model");
  const std::string rest = "nr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n1 \n";
  SECTION("missing") {
    write_text(path, rest);
    InputError e = load_error(path);
    CHECK(e.line() == 5);
    CHECK_THAT(e.what(), Catch::Contains(path + ":5:") && Catch::Contains("solver_type"));
  }
  SECTION("unknown: the error lists the known ones") {
    write_text(path, "solver_type L2R_FOO\n" + rest);
    InputError e = load_error(path);
    CHECK(e.line() == 1);
    CHECK_THAT(e.what(), Catch::Contains("L2R_FOO") && Catch::Contains("L2R_LR,") &&
                             Catch::Contains("L2R_L1LOSS_SVC_DUAL") && Catch::Contains("L2R_L2LOSS_SVR"));
  }
  SECTION("Crammer-Singer keeps one weight column per class, even for two") {
    write_text(path, "solver_type MCSVM_CS\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n0.5 -0.5 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 1);
    CHECK_THAT(e.what(), Catch::Contains("MCSVM_CS"));
  }
  SECTION("every LIBLINEAR solver for two classes or regression") {
    struct Known {
      const char* name;
      LossKind loss;
      bool classification;
    };
    const Known known[] = {
        {"L2R_LR", LossKind::logistic, true},          {"L2R_L2LOSS_SVC_DUAL", LossKind::hinge, true},
        {"L2R_L2LOSS_SVC", LossKind::hinge, true},     {"L2R_L1LOSS_SVC_DUAL", LossKind::hinge, true},
        {"L1R_L2LOSS_SVC", LossKind::hinge, true},     {"L1R_LR", LossKind::logistic, true},
        {"L2R_LR_DUAL", LossKind::logistic, true},     {"L2R_L2LOSS_SVR", LossKind::squared, false},
        {"L2R_L2LOSS_SVR_DUAL", LossKind::squared, false}, {"L2R_L1LOSS_SVR_DUAL", LossKind::squared, false}};
    for (const Known& k : known) {
      INFO(k.name);
      write_text(path, std::string("solver_type ") + k.name + "\nnr_class 2\n" +
                           (k.classification ? "label 1 -1\n" : "") +
                           "nr_feature 1\nbias -1\nw\n1 \n");
      LinearModel m = load_model(path);
      CHECK(m.loss == k.loss);
      CHECK(m.classification == k.classification);
    }
  }
}

TEST_CASE("model file: required header lines", "[model_file]") {
  TempDir dir;
  const std::string path = dir.file("required.model");
  SECTION("classification without a label line") {
    write_text(path, "solver_type L2R_LR\nnr_class 2\nnr_feature 1\nbias -1\nw\n1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 5);
    CHECK_THAT(e.what(), Catch::Contains("label") && Catch::Contains("L2R_LR"));
  }
  SECTION("regression with a label line") {
    write_text(path, "solver_type L2R_L2LOSS_SVR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 3);
    CHECK_THAT(e.what(), Catch::Contains("label") && Catch::Contains("L2R_L2LOSS_SVR"));
  }
  SECTION("no bias line") {
    write_text(path, "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nw\n1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 5);
    CHECK_THAT(e.what(), Catch::Contains("bias"));
  }
  SECTION("no nr_class line") {
    write_text(path, "solver_type L2R_LR\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n1 \n");
    InputError e = load_error(path);
    CHECK(e.line() == 5);
    CHECK_THAT(e.what(), Catch::Contains("nr_class"));
  }
  SECTION("a multi-class model reads wherever its label line is, one column per class") {
    write_text(path, "solver_type L2R_LR\nlabel 2 3 1\nnr_class 3\nnr_feature 2\nbias 1\nw\n1 2 3 \n4 5 6\n-1 0 1 \n");
    LinearModel m = load_model(path);
    REQUIRE(m.columns() == 3);
    CHECK(m.labels.classes == std::vector<float>{2, 3, 1});
    CHECK(m.features() == 2);
    std::vector<double> margins(3);
    m.margins(std::vector<uint32_t>{0, 1, 7}, std::vector<float>{1.0f, 2.0f, 9.0f}, margins);
    CHECK(margins == std::vector<double>{1 + 8 - 1, 2 + 10, 3 + 12 + 1});
  }
  SECTION("a regression model says nr_class 2") {
    write_text(path, "solver_type L2R_L2LOSS_SVR\nnr_class 3\nnr_feature 1\nbias -1\nw\n1 \n");
    CHECK_THAT(load_error(path).what(), Catch::Contains(":2:") && Catch::Contains("regression solver"));
  }
  SECTION("LIBLINEAR lists the labels in the order it met them: the first is the positive class") {
    write_text(path, "solver_type L2R_LR\nnr_class 2\nlabel -1 1\nnr_feature 1\nbias -1\nw\n2 \n");
    LinearModel m = load_model(path);
    CHECK(m.labels.positive == -1);
    CHECK(m.labels.negative == 1);
  }
}
