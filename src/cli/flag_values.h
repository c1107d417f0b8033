#pragma once
// The values flags take, one rule per kind of value, so that a bad value reads the same on
// the command line and in a --config file and says what was given and what is wanted
// ("--epochs: 'x' is not a positive whole number"), where CLI11's own checks print their
// bounds ("not in range 0.000000 to 1797...", 309 digits) or "Could not convert".
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace mpisgd::cli {

class ValueRule {
 public:
  // "" when `value` is accepted, else what is wanted instead ("a positive whole number").
  // An accepted value may be rewritten into the form CLI11 then converts.
  using Test = std::function<std::string(std::string& value)>;

  ValueRule(Test test, std::string help) : test_(std::move(test)), help_(std::move(help)) {}

  std::string wanted_instead(std::string& value) const { return test_(value); }  // as Test

  // Also accepts `word` (auto, colocated), left as written for the flag's own callback.
  ValueRule or_word(const std::string& word) const;

  // Implicit, so that a rule reads as what it is where a flag is declared:
  // ->transform(rule), as ->check() would undo the rewrite of an accepted value.
  operator CLI::Validator() const;  // NOLINT(google-explicit-constructor)

 private:
  Test test_;
  std::string help_;  // shown after the value's type in --help
};

namespace detail {
// Decimal digits only, from `least` (0 or 1) to `most`.
ValueRule whole_number(uint64_t least, uint64_t most);
}  // namespace detail

// A whole number that fits T: 1, 2, ... or 0, 1, ...
template <class T>
ValueRule positive_whole() {
  return detail::whole_number(1, std::numeric_limits<T>::max());
}
template <class T>
ValueRule non_negative_whole() {
  return detail::whole_number(0, std::numeric_limits<T>::max());
}

ValueRule number();                                   // finite; a range the job checks with the flags it depends on
ValueRule positive_number();                          // finite, > 0
ValueRule non_negative_number();                      // finite, >= 0
ValueRule number_from_to(double least, double most);  // [least, most]: densities, seconds
ValueRule one_of(std::vector<std::string> names);     // names a bad value's nearest one
ValueRule boolean();                                  // a flag's value: true, false, yes, off, ...
// Two values joined by `separator` (--slow-rank R:F), each as its rule takes it.
ValueRule pair_of(ValueRule first, char separator, ValueRule second, const std::string& wanted);

}  // namespace mpisgd::cli
