#include "cli/flag_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "cli/nearest_name.h"

namespace mpisgd::cli {
namespace {

// The whole string as a finite number, as CLI11 converts it (strtold, to the end).
bool read_number(const std::string& value, double& x) {
  char* end = nullptr;
  x = std::strtod(value.c_str(), &end);
  return !value.empty() && end == value.c_str() + value.size() && std::isfinite(x);
}

ValueRule number_where(std::function<bool(double)> accepts, const std::string& wanted, const std::string& help) {
  return ValueRule(
      [accepts = std::move(accepts), wanted](std::string& value) {
        double x = 0;
        return read_number(value, x) && accepts(x) ? std::string() : wanted;
      },
      help);
}

}  // namespace

ValueRule ValueRule::or_word(const std::string& word) const {
  return ValueRule(
      [rule = *this, word](std::string& value) {
        if (value == word) return std::string();
        const std::string wanted = rule.wanted_instead(value);
        return wanted.empty() ? wanted : word + " or " + wanted;
      },
      word + "|" + help_);
}

ValueRule::operator CLI::Validator() const {
  return CLI::Validator(
      [rule = *this](std::string& value) {
        const std::string wanted = rule.wanted_instead(value);
        return wanted.empty() ? wanted : "'" + value + "' is not " + wanted;
      },
      help_);
}

namespace detail {

ValueRule whole_number(uint64_t least, uint64_t most) {
  const std::string wanted = least == 0 ? "a non-negative whole number" : "a positive whole number";
  return ValueRule(
      [least, most, wanted](std::string& value) {
        uint64_t n = 0;
        const char* digits = value.data() + (value.starts_with('+') ? 1 : 0);
        const char* last = value.data() + value.size();
        const auto [end, error] = std::from_chars(digits, last, n);
        if (end != last || error == std::errc::invalid_argument) return wanted;
        if (error == std::errc::result_out_of_range || n > most) return wanted + " up to " + std::to_string(most);
        if (n < least) return wanted;
        // CLI11 converts with base 0, which would read "010" as octal 8 (and "0x10" as 16,
        // which is refused here).
        value = std::to_string(n);
        return std::string();
      },
      least == 0 ? "NONNEGATIVE" : "POSITIVE");
}

}  // namespace detail

ValueRule number() {
  return number_where([](double) { return true; }, "a number", "");
}

ValueRule positive_number() {
  return number_where([](double x) { return x > 0; }, "a positive number", "POSITIVE");
}

ValueRule non_negative_number() {
  return number_where([](double x) { return x >= 0; }, "a non-negative number", "NONNEGATIVE");
}

ValueRule number_from_to(double least, double most) {
  return number_where([least, most](double x) { return x >= least && x <= most; },
                      fmt::format("a number from {} to {}", least, most), fmt::format("in [{}, {}]", least, most));
}

ValueRule one_of(std::vector<std::string> names) {
  return ValueRule(
      [names](std::string& value) {
        if (std::find(names.begin(), names.end(), value) != names.end()) return std::string();
        return "one of " + fmt::format("{}", fmt::join(names, ", ")) + did_you_mean(value, names);
      },
      "{" + fmt::format("{}", fmt::join(names, ",")) + "}");
}

ValueRule boolean() {
  return ValueRule(
      [](std::string& value) {
        try {
          CLI::detail::to_flag_value(value);
          return std::string();
        } catch (const std::exception&) {
          return std::string("true or false");
        }
      },
      "");
}

ValueRule pair_of(ValueRule first, char separator, ValueRule second, const std::string& wanted) {
  return ValueRule(
      [first, separator, second, wanted](std::string& value) {
        const size_t at = value.find(separator);
        if (at == std::string::npos) return wanted;
        std::string a = value.substr(0, at);
        std::string b = value.substr(at + 1);
        if (!first.wanted_instead(a).empty() || !second.wanted_instead(b).empty()) return wanted;
        value = a + separator + b;
        return std::string();
      },
      "");
}

}  // namespace mpisgd::cli
