#include "data/libsvm_parser.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

namespace mpisgd {
namespace {

// Lines are handed over with a readable '\n' at `end`, which is neither a digit nor a
// space: the scanning loops below stop there without comparing against `end`.
inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline bool ends_token(const char* p, const char* end) {
  return p == end || is_space(*p) || *p == '#';
}
inline const char* skip_space(const char* p) {
  while (is_space(*p)) ++p;
  return p;
}
inline const char* token_end(const char* p, const char* end) {
  while (!ends_token(p, end)) ++p;
  return p;
}
std::string quote(const char* p, const char* end) {
  std::string_view tok(p, static_cast<size_t>(token_end(p, end) - p));
  std::string q = "'";
  q.append(tok.substr(0, 40));
  q.append(tok.size() > 40 ? "...'" : "'");
  return q;
}

// Parses a finite float that must end at a token boundary; a leading '+' is allowed
// (from_chars rejects it, LIBSVM files use it for labels).
enum class FloatStatus { ok, not_a_number, not_finite };
inline FloatStatus parse_float(const char*& p, const char* end, float& out) {
  const char* s = p;
  if (s != end && *s == '+' && ++s != end && *s == '-') return FloatStatus::not_a_number;
  auto [next, ec] = std::from_chars(s, end, out);
  if (ec == std::errc::result_out_of_range) return FloatStatus::not_finite;
  if (ec != std::errc() || next == s || !ends_token(next, end)) return FloatStatus::not_a_number;
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

const char* LibsvmParser::parse_index_slow(const char* p, const char* end, uint64_t& idx) const {
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
  }
}

const char* LibsvmParser::parse(const char* begin, const char* end, const char* owned_end,
                                bool at_eof, Dataset& out) {
  const char* p = begin;
  while (p < end && p < owned_end) {
    auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (!nl && !at_eof) break;
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
  return p;
}

void LibsvmParser::parse_line(const char* p, const char* end, const char* readable_end, Dataset& out) {
  p = skip_space(p);
  if (p == end || *p == '#') return;

  float label = 0;
  if (!parse_simple_float(p, end, label)) switch (parse_float(p, end, label)) {
    case FloatStatus::ok: break;
    case FloatStatus::not_a_number: fail("label " + quote(p, end) + " is not a number");
    case FloatStatus::not_finite: fail("label " + quote(p, end) + " is NaN, Inf or out of range");
  }
  if (first_labels_.size() < 3) {
    bool seen = false;
    for (const auto& l : first_labels_) seen = seen || l.label == label;
    if (!seen) first_labels_.push_back({label, lines_});
  }

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
    p = skip_space(p);
    if (p == end || *p == '#') break;
    if (*p == 'q' && end - p >= 4 && std::memcmp(p, "qid:", 4) == 0) {
      p = token_end(p, end);
      continue;
    }
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
    if (stored > max_index_) max_index_ = stored;
    *index_out++ = stored;
    *value_out++ = value;
    p = v;
  }
  index.resize(static_cast<size_t>(index_out - index.data()));
  values.resize(index.size());
  out.label.push_back(label);
  out.row_ptr.push_back(index.size());
}

}  // namespace mpisgd
