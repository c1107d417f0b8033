#pragma once
// Strict, allocation-free LIBSVM text parser (the format of LIBSVM/LIBLINEAR):
//   line    := [ws] label [ws "qid:" int] {ws index ":" value} [ws] ["#" comment] [\r] \n
//   ws      := blanks (' ', '\t'); a '\r' is a blank only when no more than blanks follow
//              it on its line (CRLF), anywhere else it is an error (CR-only line ends)
//   label   := real (classification: +1/-1/1/0, regression: any real)
//   value   := real
//   real    := decimal float with an optional sign. One too small for float is read as the
//              nearest float, 0 or a subnormal (as LIBLINEAR's strtod, once stored as
//              float); one that overflows float (|x| > 3.4e38), NaN and Inf are errors
//   index   := integer >= 1 (>= 0 with zero_based), strictly ascending within a line
//   int     := 64-bit decimal integer: the qid (SVMlight's query id) is checked, then ignored
// Blank and comment-only lines are skipped. Anything else is an error naming its line,
// a UTF-8 byte-order mark included, and quoting input with its unprintable bytes as \xHH.
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace mpisgd {

struct ParseOptions {
  bool zero_based = false;
  uint64_t dim_limit = 0;  // with --dim: indices (1-based) above it are errors; 0 = none
};

// A parse error at a line counted from the first line this parser saw (1-based).
struct ParseError {
  uint64_t line;
  std::string cause;
};

// The most classes a classifier takes: more distinct labels than this are a regression's
// targets given to a classifier, or a mistake, sooner than classes.
inline constexpr size_t kMostClasses = 1000;

// A label value and the first line (local, 1-based) it appeared on.
struct LabelSeen {
  float label;
  uint64_t line;
};

class LibsvmParser {
 public:
  explicit LibsvmParser(ParseOptions options) : options_(options) {}

  // Parses whole lines of [begin, end) into `out` and returns where it stopped: before a
  // line that is not complete (unless `at_eof`, where the last line needs no newline), or
  // before the first line starting at or after `owned_end` (it belongs to the next rank).
  // Throws ParseError.
  const char* parse(const char* begin, const char* end, const char* owned_end, bool at_eof,
                    Dataset& out);

  uint64_t lines() const { return lines_; }
  uint32_t max_index() const { return max_index_; }  // 0-based; meaningful if any entry
  uint64_t max_index_line() const { return max_index_line_; }  // the first line holding it
  // The first kMostClasses + 1 distinct labels in line order: enough to find one too many
  // globally.
  const std::vector<LabelSeen>& first_labels() const { return first_labels_; }

 private:
  // [p, end) is one line without its newline; *end must be a readable '\n'. Bytes up to
  // readable_end may be loaded, but nothing past the line is used.
  void parse_line(const char* p, const char* end, const char* readable_end, Dataset& out);
  [[noreturn]] void fail(const std::string& cause) const;
  // Past the blanks at p; fails when a '\r' among them is not the line's end.
  const char* skip_space(const char* p, const char* end) const;
  // A comment is not parsed, but may hide a CR-only line end.
  void check_comment(const char* p, const char* end) const;
  // Full checks and messages for what the fast paths do not take; return past the token.
  void parse_label_slow(const char*& p, const char* end, float& label) const;
  const char* skip_qid(const char* p, const char* end) const;
  const char* parse_index_slow(const char* p, const char* end, uint64_t& idx) const;
  void parse_value_slow(const char*& v, const char* end, uint64_t idx, float& value) const;

  ParseOptions options_;
  uint64_t lines_ = 0;
  uint32_t max_index_ = 0;
  uint64_t max_index_line_ = 0;
  std::vector<LabelSeen> first_labels_;
};

}  // namespace mpisgd
