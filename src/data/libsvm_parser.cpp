#include "data/libsvm_parser.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

#include "data/quote.h"

namespace mpisgd {
namespace {

// Lines are handed over with a readable '\n' at `end`, which is neither a digit nor a
// space: the scanning loops below stop there without comparing against `end`.
inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline bool ends_token(const char* p, const char* end) {
  return p == end || is_space(*p) || *p == '#';
}
inline const char* token_end(const char* p, const char* end) {
  while (!ends_token(p, end)) ++p;
  return p;
}
inline bool is_qid(const char* p, const char* end) { return end - p >= 4 && std::memcmp(p, "qid:", 4) == 0; }

// The token at p, quoted for a message.
std::string quote(const char* p, const char* end) {
  return quote_input(std::string_view(p, static_cast<size_t>(token_end(p, end) - p)));
}

// A '\r' followed by more than blanks on its line. CRLF ends a line with a lone '\r', but
// CR-only (old Mac) line ends run the whole file into one line, whose second label then
// fails as an index, or which is skipped whole when it starts with a comment.
bool has_inner_cr(const char* p, const char* end) {
  while ((p = static_cast<const char*>(std::memchr(p, '\r', static_cast<size_t>(end - p))))) {
    while (++p != end && is_space(*p)) {}
    if (p != end) return true;
  }
  return false;
}
constexpr const char* kInnerCr =
    "carriage return inside a line: CR-only (old Mac) line endings? convert them to \\n";

// [s, e) is a decimal float that from_chars found out of float's range: true when it is
// too small (it rounds to 0), false when too large. It is below 1 when its first nonzero
// digit, moved by the exponent, stands after the decimal point.
bool underflows(const char* s, const char* e) {
  int64_t place = 0;  // the value lies in [10^(place-1), 10^place)
  bool point = false, nonzero = false;
  for (; s != e && *s != 'e' && *s != 'E'; ++s) {
    if (*s == '.') {
      point = true;
    } else if (*s >= '0' && *s <= '9') {
      nonzero = nonzero || *s != '0';
      if (nonzero && !point) ++place;
      if (!nonzero && point) --place;
    }
  }
  if (s != e) {  // from_chars took an exponent only with at least one digit
    const bool negative = *++s == '-';
    if (*s == '-' || *s == '+') ++s;
    int64_t exponent = 0;
    for (; s != e; ++s) exponent = std::min<int64_t>(exponent * 10 + (*s - '0'), int64_t{1} << 40);
    place += negative ? -exponent : exponent;
  }
  return place <= 0;
}

// Parses a finite float that must end at a token boundary; a leading '+' is allowed
// (from_chars rejects it, LIBSVM files use it for labels). A value too small for float
// is its nearest float, a signed 0 (from_chars gives subnormals itself, and reports
// result_out_of_range both for what rounds to 0 and for what overflows).
enum class FloatStatus { ok, not_a_number, not_finite, overflow };
constexpr const char* kOverflow = "it overflows float (|x| > 3.4e38)";
inline FloatStatus parse_float(const char*& p, const char* end, float& out) {
  const char* s = p;
  if (s != end && *s == '+' && ++s != end && *s == '-') return FloatStatus::not_a_number;
  auto [next, ec] = std::from_chars(s, end, out);
  const bool out_of_range = ec == std::errc::result_out_of_range;
  if ((ec != std::errc() && !out_of_range) || next == s || !ends_token(next, end))
    return FloatStatus::not_a_number;
  if (out_of_range) {
    if (!underflows(s, next)) return FloatStatus::overflow;
    out = *s == '-' ? -0.0f : 0.0f;
  }
  if (!std::isfinite(out)) return FloatStatus::not_finite;
  p = next;
  return FloatStatus::ok;
}

// Fast path for the common "digits[.digits]" value: m / 10^k with m <= 2^24 and k <= 10 is
// exact over exact operands, so one float division rounds correctly and gives the very
// float from_chars would (Clinger's fast path). Anything else goes to from_chars.
constexpr float kPow10[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
inline bool parse_simple_float(const char*& p, const char* end, float& out) {
  const char* q = p;
  bool negative = *q == '-';
  if (*q == '-' || *q == '+') ++q;
  uint32_t mantissa = 0;
  int digits = 0, fraction = 0;
  for (; static_cast<unsigned>(*q - '0') < 10; ++q, ++digits) mantissa = mantissa * 10 + static_cast<uint32_t>(*q - '0');
  if (*q == '.') {
    for (++q; static_cast<unsigned>(*q - '0') < 10; ++q, ++digits, ++fraction)
      mantissa = mantissa * 10 + static_cast<uint32_t>(*q - '0');
  }
  if (digits == 0 || digits > 9 || mantissa > (1u << 24) || fraction > 10 || !ends_token(q, end)) return false;
  float v = static_cast<float>(mantissa) / kPow10[fraction];
  out = negative ? -v : v;
  p = q;
  return true;
}

// An index of 1 to 7 digits followed by ':', read 8 bytes at a time (SWAR): no loop per
// digit, whose exit the CPU mispredicts as index lengths vary. The 8 bytes at p must lie
// inside the buffer.
inline bool parse_short_index(const char*& p, uint64_t& out) {
  uint64_t x;
  std::memcpy(&x, p, 8);  // little-endian: p[0] is the lowest byte
  // A byte is a digit when its high nibble is 3 and adding 6 leaves it 3.
  constexpr uint64_t high = 0xF0F0F0F0F0F0F0F0ull;
  const uint64_t nibbles = (x & high) | (((x + 0x0606060606060606ull) & high) >> 4);
  const uint64_t other = nibbles ^ 0x3333333333333333ull;  // zero bytes are digits
  const int n = other ? std::countr_zero(other) >> 3 : 8;
  if (n == 0 || n == 8 || p[n] != ':') return false;
  // Digits to the top, zero bytes in front as leading zeros, then pairs, fours, eights
  // (the eight-digit conversion of Mula and Lemire).
  x = (x - 0x3030303030303030ull) << (8 * (8 - n));
  x = x * 10 + (x >> 8);
  x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
  out = x;
  p += n + 1;
  return true;
}

// Fast path for an index of at most 9 digits followed by ':'.
inline bool parse_simple_index(const char*& p, uint64_t& out) {
  const char* q = p;
  uint64_t v = 0;
  for (; static_cast<unsigned>(*q - '0') < 10; ++q) v = v * 10 + static_cast<uint64_t>(*q - '0');
  if (q == p || q - p > 9 || *q != ':') return false;
  out = v;
  p = q + 1;
  return true;
}

}  // namespace

void LibsvmParser::fail(const std::string& cause) const { throw ParseError{lines_, cause}; }

const char* LibsvmParser::skip_space(const char* p, const char* end) const {
  while (*p == ' ' || *p == '\t') ++p;
  if (*p != '\r') return p;
  // Only blanks may follow a '\r' on its line: a CR-only line end with more after it
  // (a token, or a comment that would swallow the next lines) is an error, not a blank.
  while (is_space(*p)) ++p;
  if (p != end) fail(kInnerCr);
  return p;
}

void LibsvmParser::check_comment(const char* p, const char* end) const {
  if (has_inner_cr(p, end)) fail(kInnerCr);
}

void LibsvmParser::parse_label_slow(const char*& p, const char* end, float& label) const {
  switch (parse_float(p, end, label)) {
    case FloatStatus::ok: return;
    case FloatStatus::not_a_number:
      // Only a file's first line can carry one, but a rank sees no more than its range.
      if (end - p >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        fail("line starts with a UTF-8 byte-order mark (EF BB BF); save the file without it");
      fail("label " + quote(p, end) + " is not a number");
    case FloatStatus::not_finite: fail("label " + quote(p, end) + " is NaN, Inf or out of range");
    case FloatStatus::overflow: fail("label " + quote(p, end) + " is out of range: " + kOverflow);
  }
}

const char* LibsvmParser::skip_qid(const char* p, const char* end) const {
  const char* v = p + 4;
  int64_t qid = 0;
  auto [next, ec] = std::from_chars(v, end, qid);
  if (ends_token(next, end)) {
    if (ec == std::errc()) return next;
    if (ec == std::errc::result_out_of_range) fail("qid value " + quote(v, end) + " does not fit 64 bits");
  }
  fail("qid value " + quote(v, end) + " is not an integer");
}

const char* LibsvmParser::parse_index_slow(const char* p, const char* end, uint64_t& idx) const {
  if (is_qid(p, end)) fail("qid must come right after the label, once per line; found " + quote(p, end));
  if (*p == '-') fail("negative index in " + quote(p, end));
  auto [colon, ec] = std::from_chars(p, end, idx);
  if (ec == std::errc::result_out_of_range) fail("index in " + quote(p, end) + " is too large");
  if (ec != std::errc() || colon == end || *colon != ':') {
    if (ec == std::errc() && ends_token(colon, end)) fail("missing ':' in " + quote(p, end) + " (expected index:value)");
    fail("expected index:value, found " + quote(p, end));
  }
  if (idx >= UINT32_MAX) fail("index " + std::to_string(idx) + " does not fit 32 bits");
  return colon + 1;
}

void LibsvmParser::parse_value_slow(const char*& v, const char* end, uint64_t idx, float& value) const {
  const char* start = v;
  switch (parse_float(v, end, value)) {
    case FloatStatus::ok: return;
    case FloatStatus::not_a_number:
      fail("value " + quote(start, end) + " of index " + std::to_string(idx) + " is not a number");
    case FloatStatus::not_finite:
      fail("value " + quote(start, end) + " of index " + std::to_string(idx) + " is NaN, Inf or out of range");
    case FloatStatus::overflow:
      fail("value " + quote(start, end) + " of index " + std::to_string(idx) + " is out of range: " +
           kOverflow);
  }
}

const char* LibsvmParser::parse(const char* begin, const char* end, const char* owned_end,
                                bool at_eof, Dataset& out) {
  const char* p = begin;
  try {
    while (p < end && p < owned_end) {
      auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (!nl && !at_eof) {
        // A CR-only file has no '\n' at all: fail at once rather than after reading it whole.
        if (has_inner_cr(p, end)) throw ParseError{lines_ + 1, kInnerCr};
        break;
      }
      ++lines_;
      if (nl) {
        parse_line(p, nl, end, out);
        p = nl + 1;
      } else {  // the last line lacks its '\n': parse a copy that has one
        std::string last(p, end);
        last += '\n';
        parse_line(last.data(), last.data() + last.size() - 1, last.data() + last.size(), out);
        p = end;
      }
    }
  } catch (ParseError& e) {
    // Whatever failed on such a line, its carriage return is the cause to name.
    auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (has_inner_cr(p, nl ? nl : end)) e.cause = kInnerCr;
    throw;
  }
  return p;
}

void LibsvmParser::parse_line(const char* p, const char* end, const char* readable_end, Dataset& out) {
  p = skip_space(p, end);
  if (p == end) return;
  if (*p == '#') return check_comment(p, end);

  float label = 0;
  if (!parse_simple_float(p, end, label)) parse_label_slow(p, end, label);
  if (first_labels_.size() <= kMostClasses) {
    bool seen = false;
    for (const auto& l : first_labels_) seen = seen || l.label == label;
    if (!seen) first_labels_.push_back({label, lines_});
  }

  p = skip_space(p, end);
  if (is_qid(p, end)) p = skip_qid(p, end);

  // Entries go straight into the CSR through plain pointers: the arrays are first sized
  // for the most entries the line can hold (a token takes at least 4 bytes, "i:v "),
  // which writes nothing (BigArray default-initialises), then cut to what was found.
  const size_t most = static_cast<size_t>(end - p) / 4 + 1;
  auto& index = out.index.owned();
  auto& values = out.value.owned();
  const size_t at = index.size();
  index.resize(at + most);
  values.resize(at + most);
  uint32_t* index_out = index.data() + at;
  float* value_out = values.data() + at;
  const uint64_t base = options_.zero_based ? 0 : 1;
  uint64_t previous = 0;
  bool first = true;
  for (;;) {
    p = skip_space(p, end);
    if (p == end || *p == '#') break;
    uint64_t idx = 0;
    const char* v = p;
    if (!(readable_end - p >= 8 && parse_short_index(v, idx)) && !parse_simple_index(v, idx))
      v = parse_index_slow(p, end, idx);
    if (idx < base) fail("index 0 in " + quote(p, end) + " (indices start at 1; use --zero-based)");
    if (!first && idx <= previous)
      fail("indices not strictly ascending (" + std::to_string(idx) + " after " + std::to_string(previous) + ")");
    if (options_.dim_limit && idx - base >= options_.dim_limit)
      fail("index " + std::to_string(idx) + " is above --dim " + std::to_string(options_.dim_limit));

    float value = 1;  // most values of sparse binary features: checked first
    if (*v == '1' && ends_token(v + 1, end))
      ++v;
    else if (!parse_simple_float(v, end, value))
      parse_value_slow(v, end, idx, value);
    previous = idx;
    first = false;
    auto stored = static_cast<uint32_t>(idx - base);
    if (stored > max_index_ || max_index_line_ == 0) {
      max_index_ = stored;
      max_index_line_ = lines_;
    }
    *index_out++ = stored;
    *value_out++ = value;
    p = v;
  }
  if (p != end) check_comment(p, end);
  index.resize(static_cast<size_t>(index_out - index.data()));
  values.resize(index.size());
  out.label.push_back(label);
  out.row_ptr.push_back(index.size());
}

}  // namespace mpisgd
