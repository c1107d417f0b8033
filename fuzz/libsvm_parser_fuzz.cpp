// libFuzzer target for the LIBSVM text parser (data/libsvm_parser.h), driven the way the
// partitioned reader drives it. Each input is parsed twice: whole, as one rank holding the
// whole file would, and split between two "ranks" at a byte, each fed through a small
// growing buffer as mpiio_text_reader.cpp feeds it. ParseError is an expected answer;
// a crash, a sanitizer report, or the two readings disagreeing (one fails, the other
// does not, or their rows differ) is a bug.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "data/dataset.h"
#include "data/libsvm_parser.h"

using namespace mpisgd;

namespace {

struct Rows {
  std::vector<uint64_t> row_ptr;
  std::vector<uint32_t> index;
  std::vector<float> value;
  std::vector<float> label;

  void append(const Dataset& d) {
    const uint64_t base = index.size();
    for (uint64_t r = 0; r < d.rows(); ++r) row_ptr.push_back(base + d.row_ptr[r + 1]);
    index.insert(index.end(), d.index.begin(), d.index.end());
    value.insert(value.end(), d.value.begin(), d.value.end());
    label.insert(label.end(), d.label.begin(), d.label.end());
  }
  // Bitwise, so that -0 and 0 differ and NaN (which must never appear) fails.
  bool operator==(const Rows& o) const {
    const auto same_floats = [](const std::vector<float>& a, const std::vector<float>& b) {
      return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                        [](float x, float y) { return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y); });
    };
    return row_ptr == o.row_ptr && index == o.index && same_floats(value, o.value) && same_floats(label, o.label);
  }
};

// The rows of the whole text, or nothing when it is rejected.
std::optional<Rows> parse_whole(const std::vector<char>& text, ParseOptions options) {
  LibsvmParser parser(options);
  Dataset d;
  try {
    const char* end = text.data() + text.size();
    if (parser.parse(text.data(), end, end, true, d) != end) std::abort();
  } catch (const ParseError&) {
    return std::nullopt;
  }
  Rows rows;
  rows.append(d);
  return rows;
}

// One rank's share: the lines that start in [start, owned), read through a buffer of
// `chunk` bytes that doubles when a line does not fit, as parse_range does.
bool parse_share(const std::vector<char>& text, size_t start, size_t owned, size_t chunk, ParseOptions options,
                 Rows& rows) {
  LibsvmParser parser(options);
  Dataset d;
  std::vector<char> buf(chunk);
  size_t offset = start, len = 0;
  try {
    while (offset < owned) {
      if (len == buf.size()) buf.resize(buf.size() * 2);
      const size_t want = std::min(buf.size() - len, text.size() - offset - len);
      std::memcpy(buf.data() + len, text.data() + offset + len, want);
      len += want;
      // The parser may read up to the end of what it is given, never past it: hand it
      // an exactly sized copy so that AddressSanitizer sees any overread.
      std::vector<char> given(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len));
      const bool at_eof = offset + len >= text.size();
      const size_t own = std::min(owned - offset, len);
      const char* stop = parser.parse(given.data(), given.data() + len, given.data() + own, at_eof, d);
      const auto consumed = static_cast<size_t>(stop - given.data());
      offset += consumed;
      if (at_eof && consumed == len) break;
      std::memmove(buf.data(), buf.data() + consumed, len - consumed);
      len -= consumed;
    }
  } catch (const ParseError&) {
    return false;
  }
  rows.append(d);
  return true;
}

// The first line start at or after `at` (mpiio_text_reader.cpp's first_line_start).
size_t first_line_start(const std::vector<char>& text, size_t at) {
  if (at == 0) return 0;
  const auto nl = std::find(text.begin() + static_cast<std::ptrdiff_t>(at - 1), text.end(), '\n');
  return nl == text.end() ? text.size() : static_cast<size_t>(nl - text.begin()) + 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<char> text(data, data + size);
  // The options, the split and the buffer size come from a hash of the bytes, so that the
  // corpus stays plain LIBSVM text.
  uint32_t hash = 0;
  for (size_t i = 0; i < size; ++i) hash = hash * 31 + data[i];
  const ParseOptions options{(hash & 1) != 0, (hash & 2) ? uint64_t{1000} : 0};
  const size_t split = size ? (hash >> 2) % (size + 1) : 0;
  const size_t chunk = 1 + (hash >> 12) % 64;

  const std::optional<Rows> whole = parse_whole(text, options);
  Rows shared;
  const bool ok = parse_share(text, 0, split, chunk, options, shared) &&
                  parse_share(text, first_line_start(text, split), size, chunk, options, shared);
  if (ok != whole.has_value() || (ok && !(shared == *whole))) std::abort();
  return 0;
}
