#include "data/libsvm_parser.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

namespace mpisgd {
namespace {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline bool ends_token(const char* p, const char* end) {
  return p == end || is_space(*p) || *p == '#';
}
inline const char* skip_space(const char* p, const char* end) {
  while (p != end && is_space(*p)) ++p;
  return p;
}
inline const char* token_end(const char* p, const char* end) {
  while (!ends_token(p, end)) ++p;
  return p;
}
std::string quote(const char* p, const char* end) {
  std::string_view tok(p, static_cast<size_t>(token_end(p, end) - p));
  if (tok.size() > 40) return "'" + std::string(tok.substr(0, 40)) + "...'";
  return "'" + std::string(tok) + "'";
}

// Parses a finite float that must end at a token boundary; a leading '+' is allowed
// (from_chars rejects it, LIBSVM files use it for labels).
enum class FloatStatus { ok, not_a_number, not_finite };
inline FloatStatus parse_float(const char*& p, const char* end, float& out) {
  const char* s = p;
  if (s != end && *s == '+') ++s;
  auto [next, ec] = std::from_chars(s, end, out);
  if (ec == std::errc::result_out_of_range) return FloatStatus::not_finite;
  if (ec != std::errc() || next == s || !ends_token(next, end)) return FloatStatus::not_a_number;
  if (!std::isfinite(out)) return FloatStatus::not_finite;
  p = next;
  return FloatStatus::ok;
}

}  // namespace

void LibsvmParser::fail(const std::string& cause) const { throw ParseError{lines_, cause}; }

const char* LibsvmParser::parse(const char* begin, const char* end, const char* owned_end,
                                bool at_eof, Dataset& out) {
  const char* p = begin;
  while (p < end && p < owned_end) {
    auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (!nl && !at_eof) break;
    const char* line_end = nl ? nl : end;
    ++lines_;
    parse_line(p, line_end, out);
    p = nl ? nl + 1 : end;
  }
  return p;
}

void LibsvmParser::parse_line(const char* p, const char* end, Dataset& out) {
  p = skip_space(p, end);
  if (p == end || *p == '#') return;

  float label = 0;
  switch (parse_float(p, end, label)) {
    case FloatStatus::ok: break;
    case FloatStatus::not_a_number: fail("label " + quote(p, end) + " is not a number");
    case FloatStatus::not_finite: fail("label " + quote(p, end) + " is NaN, Inf or out of range");
  }
  if (first_labels_.size() < 3) {
    bool seen = false;
    for (const auto& l : first_labels_) seen = seen || l.label == label;
    if (!seen) first_labels_.push_back({label, lines_});
  }

  const uint64_t base = options_.zero_based ? 0 : 1;
  uint64_t previous = 0;
  bool first = true;
  for (;;) {
    p = skip_space(p, end);
    if (p == end || *p == '#') break;
    if (end - p >= 4 && std::memcmp(p, "qid:", 4) == 0) {
      p = token_end(p, end);
      continue;
    }
    if (*p == '-') fail("negative index in " + quote(p, end));
    uint64_t idx = 0;
    auto [colon, ec] = std::from_chars(p, end, idx);
    if (ec == std::errc::result_out_of_range) fail("index in " + quote(p, end) + " is too large");
    if (ec != std::errc() || colon == end || *colon != ':') {
      if (ec == std::errc() && ends_token(colon, end))
        fail("missing ':' in " + quote(p, end) + " (expected index:value)");
      fail("expected index:value, found " + quote(p, end));
    }
    if (idx < base) fail("index 0 in " + quote(p, end) + " (indices start at 1; use --zero-based)");
    if (!first && idx <= previous)
      fail("indices not strictly ascending (" + std::to_string(idx) + " after " +
           std::to_string(previous) + ")");
    if (options_.dim_limit && idx - base >= options_.dim_limit)
      fail("index " + std::to_string(idx) + " is above --dim " + std::to_string(options_.dim_limit));
    if (idx - base > UINT32_MAX - 1) fail("index " + std::to_string(idx) + " does not fit 32 bits");

    const char* v = colon + 1;
    float value = 0;
    switch (parse_float(v, end, value)) {
      case FloatStatus::ok: break;
      case FloatStatus::not_a_number:
        fail("value " + quote(colon + 1, end) + " of index " + std::to_string(idx) +
             " is not a number");
      case FloatStatus::not_finite:
        fail("value " + quote(colon + 1, end) + " of index " + std::to_string(idx) +
             " is NaN, Inf or out of range");
    }
    previous = idx;
    first = false;
    auto stored = static_cast<uint32_t>(idx - base);
    if (stored > max_index_) max_index_ = stored;
    out.index.push_back(stored);
    out.value.push_back(value);
    p = v;
  }
  out.label.push_back(label);
  out.row_ptr.push_back(out.index.size());
}

}  // namespace mpisgd
