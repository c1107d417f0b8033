// The command line's value rules and --config reader without MPI: what each rule accepts,
// rewrites and says about a bad value, the "did you mean" hint, and the lines, sections
// and keys a config file is read into.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli/config_file.h"
#include "cli/flag_values.h"
#include "cli/nearest_name.h"

using namespace mpisgd::cli;

namespace {

// What the rule says of `value` ("" when accepted); `value` is left as the rule rewrote it.
std::string verdict(const ValueRule& rule, std::string& value) { return rule.wanted_instead(value); }

std::string verdict(const ValueRule& rule, const char* text) {
  std::string value = text;
  return verdict(rule, value);
}

}  // namespace

TEST_CASE("whole-number rules say what was wanted and read decimal only", "[cli]") {
  const ValueRule positive = positive_whole<int>();
  for (const char* bad : {"x", "-3", "2.5", "0", "", "1e3", "0x10", " 4"}) {
    CAPTURE(bad);
    CHECK(verdict(positive, bad) == "a positive whole number");
  }
  CHECK(verdict(positive, "99999999999") == "a positive whole number up to 2147483647");
  std::string octal_looking = "010";
  CHECK(verdict(positive, octal_looking).empty());
  CHECK(octal_looking == "10");  // CLI11 converts with base 0, which reads 010 as 8
  std::string plus = "+5";
  CHECK(verdict(positive, plus).empty());
  CHECK(plus == "5");
  CHECK(verdict(non_negative_whole<uint64_t>(), "0").empty());
  CHECK(verdict(non_negative_whole<uint64_t>(), "-1") == "a non-negative whole number");
}

TEST_CASE("number rules refuse what is not a finite number in their range", "[cli]") {
  CHECK(verdict(number_from_to(0, 1), "1.5") == "a number from 0 to 1");
  CHECK(verdict(number_from_to(0, 1), "nan") == "a number from 0 to 1");
  CHECK(verdict(number_from_to(0, 1), "0.25").empty());
  CHECK(verdict(positive_number(), "0") == "a positive number");
  CHECK(verdict(positive_number(), "inf") == "a positive number");
  CHECK(verdict(non_negative_number(), "-0.1") == "a non-negative number");
  CHECK(verdict(number(), "1e-300").empty());
  CHECK(verdict(positive_whole<uint64_t>().or_word("auto"), "auto").empty());
  CHECK(verdict(positive_whole<uint64_t>().or_word("auto"), "0") == "auto or a positive whole number");
}

TEST_CASE("a name from a list, a flag's truth value and a pair", "[cli]") {
  const ValueRule models = one_of({"logreg", "svm", "linreg"});
  CHECK(verdict(models, "svm").empty());
  CHECK(verdict(models, "logerg") == "one of logreg, svm, linreg (did you mean 'logreg'?)");
  CHECK(verdict(models, "tree") == "one of logreg, svm, linreg");
  CHECK(verdict(boolean(), "true").empty());
  CHECK(verdict(boolean(), "off").empty());
  CHECK(verdict(boolean(), "maybe") == "true or false");
  const ValueRule slow = pair_of(non_negative_whole<int>(), ':', number_from_to(1, 1000), "RANK:FACTOR");
  std::string given = "01:2";
  CHECK(verdict(slow, given).empty());
  CHECK(given == "1:2");
  for (const char* bad : {"1", "1:0.5", "x:2", "1:2000", ":2"}) {
    CAPTURE(bad);
    CHECK(verdict(slow, bad) == "RANK:FACTOR");
  }
}

TEST_CASE("the nearest name is given only when it is close", "[cli]") {
  const std::vector<std::string> flags = {"epochs", "batch", "threads", "seed"};
  CHECK(nearest_name("epochz", flags) == "epochs");
  CHECK(nearest_name("thraeds", flags) == "threads");  // two letters swapped: one edit
  CHECK(nearest_name("sed", flags) == "seed");
  CHECK(nearest_name("learning-rate", flags).empty());
  CHECK(did_you_mean("trian", {"train", "predict"}, "[", "]") == " (did you mean [train]?)");
  CHECK(did_you_mean("zzz", {"train"}).empty());
}

TEST_CASE("a config file is read into its sections and settings with their lines", "[cli]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cli_config_" + std::to_string(::getpid()) + ".toml")).string();
  std::ofstream(path) << "# a run\n"
                         "epochs = 3\n"
                         "train.seed = 7\n"
                         "[train]\n"
                         "data = \"run#2.svm\"  # quoted: the # belongs to the name\n"
                         "; an INI comment\n"
                         "no-early-stop\n"
                         "\n"
                         "[[predict]]\n"
                         "--threads='2'\n";
  const std::vector<ConfigLine> lines = read_config_lines(path);
  REQUIRE(lines.size() == 7);
  CHECK((lines[0].number == 2 && lines[0].section.empty() && lines[0].key == "epochs" && lines[0].value == "3"));
  CHECK((lines[1].number == 3 && lines[1].section == "train" && lines[1].key == "seed" && lines[1].value == "7"));
  CHECK((lines[2].number == 4 && lines[2].opens_section() && lines[2].section == "train"));
  CHECK((lines[3].number == 5 && lines[3].key == "data" && lines[3].value == "run#2.svm"));
  CHECK((lines[4].number == 7 && lines[4].key == "no-early-stop" && lines[4].value == "true"));
  CHECK((lines[5].opens_section() && lines[5].section == "predict"));
  CHECK((lines[6].number == 10 && lines[6].section == "predict" && lines[6].key == "--threads" && lines[6].value == "2"));

  std::ofstream(path) << "[train]\n[train\n";
  REQUIRE_THROWS_WITH(read_config_lines(path), Catch::Contains(path + ":2: '[train' is not a section header"));
  std::ofstream(path) << "= 4\n";
  REQUIRE_THROWS_WITH(read_config_lines(path), Catch::Contains(path + ":1: '= 4' has no key before '='"));
  std::remove(path.c_str());
  REQUIRE_THROWS_WITH(read_config_lines(path), Catch::Contains(path + ": cannot open for reading"));
}
