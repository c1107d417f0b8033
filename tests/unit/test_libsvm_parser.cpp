// LibsvmParser::parse on in-memory text: accepted forms, the CSR it builds, where it
// stops, and the line and cause of every kind of bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/libsvm_parser.h"

using namespace mpisgd;

namespace {

// The CSR arrays are not std::vector; compare their contents as plain vectors.
template <class Array>
auto plain(const Array& a) {
  return std::vector<std::remove_cvref_t<decltype(a[0])>>(a.begin(), a.end());
}

struct Parsed {
  Dataset data;
  uint64_t lines = 0;
  uint32_t max_index = 0;
  std::vector<LabelSeen> first_labels;
  size_t consumed = 0;  // bytes before the returned pointer
};

Parsed parse_text(const std::string& text, ParseOptions options = {}, bool at_eof = true) {
  LibsvmParser parser(options);
  Parsed r;
  const char* b = text.data();
  const char* e = b + text.size();
  const char* stop = parser.parse(b, e, e, at_eof, r.data);
  r.consumed = static_cast<size_t>(stop - b);
  r.lines = parser.lines();
  r.max_index = parser.max_index();
  r.first_labels = parser.first_labels();
  return r;
}

// The ParseError the text raises (the test fails if it raises none).
ParseError parse_error(const std::string& text, ParseOptions options = {}) {
  LibsvmParser parser(options);
  Dataset d;
  try {
    parser.parse(text.data(), text.data() + text.size(), text.data() + text.size(), true, d);
  } catch (const ParseError& e) {
    return e;
  }
  FAIL("no ParseError for: " << text);
  return {};
}

// CSR invariants that must hold for any successful parse.
void check_csr_shape(const Dataset& d) {
  REQUIRE(d.row_ptr.size() == d.label.size() + 1);
  REQUIRE(d.row_ptr.front() == 0);
  REQUIRE(d.row_ptr.back() == d.index.size());
  REQUIRE(d.index.size() == d.value.size());
  for (size_t r = 0; r + 1 < d.row_ptr.size(); ++r) REQUIRE(d.row_ptr[r] <= d.row_ptr[r + 1]);
}

}  // namespace

TEST_CASE("parser: basic rows give the expected CSR with 0-based indices", "[parser]") {
  auto r = parse_text("+1 1:0.5 3:2\n-1 2:-0.5 10:1e-3\n1 4:+2\n0 1:1\n");
  check_csr_shape(r.data);
  CHECK(plain(r.data.label) == std::vector<float>{1, -1, 1, 0});
  CHECK(plain(r.data.row_ptr) == std::vector<uint64_t>{0, 2, 4, 5, 6});
  CHECK(plain(r.data.index) == std::vector<uint32_t>{0, 2, 1, 9, 3, 0});
  CHECK(plain(r.data.value) == std::vector<float>{0.5f, 2.0f, -0.5f, 1e-3f, 2.0f, 1.0f});
  CHECK(r.lines == 4);
  CHECK(r.max_index == 9);
  CHECK(r.consumed == std::string("+1 1:0.5 3:2\n-1 2:-0.5 10:1e-3\n1 4:+2\n0 1:1\n").size());
}

TEST_CASE("parser: real-valued labels", "[parser]") {
  auto r = parse_text("2.5e-1 1:1\n-3.75 2:1\n+0.5 3:1\n1e3 4:1\n-0 5:1\n");
  check_csr_shape(r.data);
  REQUIRE(r.data.rows() == 5);
  CHECK(r.data.label[0] == 0.25f);
  CHECK(r.data.label[1] == -3.75f);
  CHECK(r.data.label[2] == 0.5f);
  CHECK(r.data.label[3] == 1000.0f);
  CHECK(r.data.label[4] == 0.0f);
}

TEST_CASE("parser: qid, comments, blank and whitespace-only lines are handled", "[parser]") {
  const std::string text =
      "# a whole-line comment\n"
      "1 qid:3 2:1 4:2 # trailing comment 9:9\n"
      "\n"
      "   \t  \n"
      "  # indented comment\n"
      "-1 qid:17 5:3#no space before the comment\n"
      "\n";
  auto r = parse_text(text);
  check_csr_shape(r.data);
  CHECK(plain(r.data.label) == std::vector<float>{1, -1});
  CHECK(plain(r.data.index) == std::vector<uint32_t>{1, 3, 4});
  CHECK(plain(r.data.value) == std::vector<float>{1, 2, 3});
  CHECK(r.lines == 7);  // every line counts, skipped ones included
  CHECK(r.max_index == 4);
  CHECK(r.consumed == text.size());
}

TEST_CASE("parser: CRLF, tabs and runs of spaces", "[parser]") {
  auto r = parse_text("1\t1:1\t\t3:2  \r\n  -1   2:0.25\t \r\n\r\n+1 7:-1\r\n");
  check_csr_shape(r.data);
  CHECK(plain(r.data.label) == std::vector<float>{1, -1, 1});
  CHECK(plain(r.data.row_ptr) == std::vector<uint64_t>{0, 2, 3, 4});
  CHECK(plain(r.data.index) == std::vector<uint32_t>{0, 2, 1, 6});
  CHECK(plain(r.data.value) == std::vector<float>{1, 2, 0.25f, -1});
  CHECK(r.lines == 4);
}

TEST_CASE("parser: rows without features", "[parser]") {
  auto r = parse_text("1\n-1 # only a comment\n1 qid:2\n-1 3:1\n  +1   \n");
  check_csr_shape(r.data);
  CHECK(plain(r.data.label) == std::vector<float>{1, -1, 1, -1, 1});
  CHECK(plain(r.data.row_ptr) == std::vector<uint64_t>{0, 0, 0, 0, 1, 1});
  CHECK(plain(r.data.index) == std::vector<uint32_t>{2});
}

TEST_CASE("parser: last line without newline", "[parser]") {
  const std::string text = "1 1:1\n-1 2:2\n1 3:3";
  SECTION("at_eof parses it") {
    auto r = parse_text(text, {}, true);
    CHECK(r.data.rows() == 3);
    CHECK(plain(r.data.index) == std::vector<uint32_t>{0, 1, 2});
    CHECK(r.lines == 3);
    CHECK(r.consumed == text.size());
  }
  SECTION("without at_eof it stops before the incomplete line, and a later call resumes") {
    LibsvmParser parser({});
    Dataset d;
    const char* b = text.data();
    const char* e = b + text.size();
    const char* stop = parser.parse(b, e, e, false, d);
    CHECK(stop == b + std::string("1 1:1\n-1 2:2\n").size());
    CHECK(d.rows() == 2);
    CHECK(parser.lines() == 2);
    CHECK(plain(d.index) == std::vector<uint32_t>{0, 1});
    stop = parser.parse(stop, e, e, true, d);
    CHECK(stop == e);
    CHECK(d.rows() == 3);
    CHECK(parser.lines() == 3);
    CHECK(plain(d.index) == std::vector<uint32_t>{0, 1, 2});
    check_csr_shape(d);
  }
  SECTION("a lone partial line without at_eof is not consumed") {
    auto r = parse_text("1 1:1", {}, false);
    CHECK(r.consumed == 0);
    CHECK(r.data.rows() == 0);
    CHECK(r.lines == 0);
  }
  SECTION("a partial comment line with at_eof is consumed and counted") {
    auto r = parse_text("1 1:1\n# end", {}, true);
    CHECK(r.consumed == std::string("1 1:1\n# end").size());
    CHECK(r.data.rows() == 1);
    CHECK(r.lines == 2);
  }
}

TEST_CASE("parser: owned_end leaves lines starting at or after it unparsed", "[parser]") {
  const std::string text = "1 1:1\n-1 2:2\n1 3:3\n-1 4:4\n";
  const char* b = text.data();
  const char* e = b + text.size();
  const char* line2 = b + 6;   // "-1 2:2\n"
  const char* line3 = b + 13;  // "1 3:3\n"
  REQUIRE(std::string(line2, 6) == "-1 2:2");
  REQUIRE(std::string(line3, 5) == "1 3:3");

  SECTION("owned_end exactly at a line start") {
    LibsvmParser parser({});
    Dataset d;
    CHECK(parser.parse(b, e, line2, true, d) == line2);
    CHECK(d.rows() == 1);
    CHECK(parser.lines() == 1);
  }
  SECTION("owned_end inside a line: that line is still ours") {
    LibsvmParser parser({});
    Dataset d;
    CHECK(parser.parse(b, e, line2 + 1, true, d) == line3);
    CHECK(d.rows() == 2);
    CHECK(plain(d.label) == std::vector<float>{1, -1});
    CHECK(plain(d.index) == std::vector<uint32_t>{0, 1});
  }
  SECTION("owned_end at begin: nothing") {
    LibsvmParser parser({});
    Dataset d;
    CHECK(parser.parse(b, e, b, true, d) == b);
    CHECK(d.rows() == 0);
    CHECK(parser.lines() == 0);
  }
  SECTION("owned_end past the last line start: everything") {
    LibsvmParser parser({});
    Dataset d;
    CHECK(parser.parse(b, e, e - 1, true, d) == e);
    CHECK(d.rows() == 4);
  }
}

TEST_CASE("parser: zero_based accepts index 0 and stores indices unshifted", "[parser]") {
  ParseOptions zb;
  zb.zero_based = true;
  auto r = parse_text("1 0:1 5:2\n-1 3:1\n", zb);
  check_csr_shape(r.data);
  CHECK(plain(r.data.index) == std::vector<uint32_t>{0, 5, 3});
  CHECK(r.max_index == 5);
}

TEST_CASE("parser: first_labels keeps the distinct labels with their first lines", "[parser]") {
  auto r = parse_text("1 1:1\n\n-1 1:1\n1 2:1\n# c\n-1 3:1\n0 1:1\n2 1:1\n0 1:1\n");
  REQUIRE(r.first_labels.size() == 4);
  CHECK(r.first_labels[0].label == 1.0f);
  CHECK(r.first_labels[0].line == 1);
  CHECK(r.first_labels[1].label == -1.0f);
  CHECK(r.first_labels[1].line == 3);
  CHECK(r.first_labels[2].label == 0.0f);
  CHECK(r.first_labels[2].line == 7);
  CHECK(r.first_labels[3].label == 2.0f);
  CHECK(r.first_labels[3].line == 8);

  auto one = parse_text("-1 1:1\n-1 2:1\n");
  REQUIRE(one.first_labels.size() == 1);
  CHECK(one.first_labels[0].label == -1.0f);
  CHECK(one.first_labels[0].line == 1);
}

TEST_CASE("parser: dim_limit boundary and large 32-bit indices are accepted", "[parser]") {
  ParseOptions lim;
  lim.dim_limit = 10;
  auto r = parse_text("1 10:1\n", lim);
  CHECK(plain(r.data.index) == std::vector<uint32_t>{9});
  CHECK(r.max_index == 9);

  ParseOptions zlim;
  zlim.zero_based = true;
  zlim.dim_limit = 10;
  CHECK(plain(parse_text("1 9:1\n", zlim).data.index) == std::vector<uint32_t>{9});
  CHECK(parse_error("1 10:1\n", zlim).cause.find("--dim") != std::string::npos);

  // Ten-digit indices that fit 32 bits are fine.
  auto big = parse_text("1 7:1 4000000000:2\n");
  CHECK(plain(big.data.index) == std::vector<uint32_t>{6, 3999999999u});
  CHECK(big.max_index == 3999999999u);
  ParseOptions zb;
  zb.zero_based = true;
  CHECK(plain(parse_text("1 0:1 4000000000:2\n", zb).data.index) == std::vector<uint32_t>{0, 4000000000u});
}

namespace {
struct BadCase {
  const char* line;
  const char* cause;  // a substring the cause must contain
  bool zero_based = false;
  uint64_t dim_limit = 0;
};
}  // namespace

TEST_CASE("parser: bad input names its line and cause", "[parser]") {
  const std::vector<BadCase> cases = {
      {"abc 1:1", "not a number"},
      {"1x 1:1", "not a number"},
      {"1 3:abc", "not a number"},
      {"1 3:", "not a number"},
      {"1 3 4:1", "missing ':'"},
      {"1 :4", "expected index:value"},
      {"1 a:1", "expected index:value"},
      {"1 0:1", "index 0"},
      {"1 -2:1", "negative index"},
      {"1 3:1 3:2", "not strictly ascending"},
      {"1 5:1 3:2", "not strictly ascending"},
      {"1 3:nan", "NaN, Inf"},
      {"1 3:inf", "NaN, Inf"},
      {"1 3:-inf", "NaN, Inf"},
      {"nan 3:1", "NaN, Inf"},
      {"inf 3:1", "NaN, Inf"},
      {"1 3:1e50", "out of range"},
      {"1e50 3:1", "out of range"},
      {"1 11:1", "above --dim", false, 10},
      {"1 4294967296:1", "32 bits"},
      {"1 0:1 4294967295:1", "32 bits", true},
      {"1 99999999999999999999999:1", "too large"},
      {"1 3:1x", "not a number"},
      {"1 3:1:2", "not a number"},
      {"1 3:0x10", "not a number"},
      {"+-1 3:1", "not a number"},  // one sign only
      {"-+1 3:1", "not a number"},
      {"++1 3:1", "not a number"},
      {"1 3:+-2", "not a number"},
      {"1 3:--2", "not a number"},
  };
  for (const auto& c : cases) {
    ParseOptions o;
    o.zero_based = c.zero_based;
    o.dim_limit = c.dim_limit;
    // Two good lines, a blank one, then the bad line: line 4.
    const std::string text = std::string("+1 1:1\n-1 2:2\n\n") + c.line + "\n1 1:1\n";
    INFO("input line: " << c.line);
    ParseError e = parse_error(text, o);
    CHECK(e.line == 4);
    INFO("cause: " << e.cause);
    CHECK(e.cause.find(c.cause) != std::string::npos);
  }
}

TEST_CASE("parser: error line numbers count across calls and on the first and last lines", "[parser]") {
  CHECK(parse_error("1 0:1\n").line == 1);
  CHECK(parse_error("1 1:1\n-1 2:1\n1 2:x").line == 3);  // last line, no newline

  LibsvmParser parser({});
  Dataset d;
  const std::string a = "1 1:1\n1 2:1\n";
  const std::string b = "# c\n1 2:bad\n";
  parser.parse(a.data(), a.data() + a.size(), a.data() + a.size(), false, d);
  try {
    parser.parse(b.data(), b.data() + b.size(), b.data() + b.size(), true, d);
    FAIL("no ParseError");
  } catch (const ParseError& e) {
    CHECK(e.line == 4);
    CHECK(e.cause.find("'bad'") != std::string::npos);
  }
}

TEST_CASE("parser: never reads past end, even when the bytes after it continue a token", "[parser]") {
  const std::string buffer = "1 3:1\n2 4:25 7:1\n";
  const char* b = buffer.data();
  const char* end = b + std::string("1 3:1\n2 4:2").size();  // cuts "25" after its first digit
  LibsvmParser parser({});
  Dataset d;
  CHECK(parser.parse(b, end, end, true, d) == end);
  CHECK(plain(d.label) == std::vector<float>{1, 2});
  CHECK(plain(d.index) == std::vector<uint32_t>{2, 3});
  CHECK(plain(d.value) == std::vector<float>{1, 2});

  const char* end2 = b + std::string("1 3:1\n2 4:25 7").size();  // a dangling "7" index
  LibsvmParser p2({});
  Dataset d2;
  try {
    p2.parse(b, end2, end2, true, d2);
    FAIL("no ParseError");
  } catch (const ParseError& e) {
    CHECK(e.line == 2);
    CHECK(e.cause.find("missing ':'") != std::string::npos);
  }
}

TEST_CASE("parser: values and labels are the correctly rounded float of their text", "[parser]") {
  // Plain decimals (any fast path) and exponent forms must agree with from_chars.
  std::vector<std::string> texts = {"0",        "-0",         "1",          "0.1",         "0.3",
                                    "16777216", "16777217",   "16777219",   "123456789",   "0.000001",
                                    "1234.5678", "9.99999999", "0.1234567891", "99999999999", "3.4028234e38",
                                    "1e-3",     "1.5E2",      "-2.75",      ".5",          "7."};
  uint64_t state = 12345;
  auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int i = 0; i < 2000; ++i) {
    std::string digits = std::to_string(next() % 100000000);
    const size_t point = next() % (digits.size() + 1);
    std::string t = digits.substr(0, point) + "." + digits.substr(point);
    if (t == ".") t = "0";
    if (next() % 2) t = "-" + t;
    texts.push_back(t);
  }
  std::string text;
  for (const auto& t : texts) text += t + " 5:" + t + "\n";
  auto r = parse_text(text);
  REQUIRE(r.data.rows() == texts.size());
  REQUIRE(r.data.value.size() == texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const char* s = texts[i].data();
    float expect = 0;
    std::from_chars(s, s + texts[i].size(), expect);
    INFO("text " << texts[i]);
    CHECK(std::bit_cast<uint32_t>(r.data.label[i]) == std::bit_cast<uint32_t>(expect));
    CHECK(std::bit_cast<uint32_t>(r.data.value[i]) == std::bit_cast<uint32_t>(expect));
  }
}

TEST_CASE("parser: indices of every length, with leading zeros, near and far from the buffer end", "[parser]") {
  // 1 to 10 digits: the short ones take the eight-byte path, the long ones the loop.
  std::string line = "1";
  std::vector<uint32_t> expect;
  uint64_t idx = 0;
  for (int digits = 1; digits <= 10; ++digits) {
    idx = std::max<uint64_t>(idx + 1, digits == 1 ? 7 : static_cast<uint64_t>(std::pow(10, digits - 1)) + 3 * digits);
    line += " " + std::to_string(idx) + ":1";
    expect.push_back(static_cast<uint32_t>(idx - 1));
  }
  line += "\n";
  CHECK(plain(parse_text(line).data.index) == expect);
  CHECK(plain(parse_text("1 0005:1 00000012:2 000000000013:3\n").data.index) == std::vector<uint32_t>{4, 11, 12});
  // The same row with its last tokens ever closer to the end of the buffer.
  for (size_t pad = 0; pad < 12; ++pad) {
    std::string text = std::string(pad, ' ') + "1 4:1 1234567:2 7654321:3";
    CHECK(plain(parse_text(text).data.index) == std::vector<uint32_t>{3, 1234566, 7654320});
  }
}

TEST_CASE("parser: messages quote control and non-ASCII bytes as \\xHH", "[parser]") {
  using namespace std::string_literals;
  // A NUL used to end the message where it is printed as a C string.
  ParseError nul = parse_error("+1 1:1\n-1 2:\0\n"s);
  CHECK(nul.line == 2);
  CHECK(nul.cause == "value '\\x00' of index 2 is not a number");
  CHECK(parse_error("\x1b[31m 1:1\n").cause == "label '\\x1b[31m' is not a number");
  CHECK(parse_error("1 3:1\x7f\n").cause == "value '1\\x7f' of index 3 is not a number");
  CHECK(parse_error("1 \xc3\xa9:1\n").cause == "expected index:value, found '\\xc3\\xa9:1'");
  CHECK(parse_error("1 qid:\x01 2:1\n").cause.find("'\\x01'") != std::string::npos);
  // Every kind of message that quotes input: nothing unprintable gets through.
  for (const std::string& bad : {"\0 1:1"s, "1 3:\0"s, "1 -\0:1"s, "1 3\0 4:1"s, "1 \0:1"s, "1\0 2:1"s,
                                "1 0\0:1"s, "1 qid:\0 2:1"s, "1 2:1 qid:\0"s, "1 3:1e99\0"s}) {
    const std::string cause = parse_error(bad + "\n").cause;
    INFO("cause: " << cause);
    CHECK(std::all_of(cause.begin(), cause.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
    CHECK(cause.find("\\x00") != std::string::npos);
  }
  // The 40-byte cut counts input bytes, not escaped ones.
  CHECK(parse_error("1 3:" + std::string(50, '\x02') + "\n").cause.find("\\x02'") == std::string::npos);
  CHECK(parse_error("1 3:" + std::string(50, '\x02') + "\n").cause.find("\\x02...'") != std::string::npos);
}

TEST_CASE("parser: a byte-order mark and CR-only line ends are named as the cause", "[parser]") {
  ParseError bom = parse_error("\xEF\xBB\xBF+1 1:1\n-1 2:1\n");
  CHECK(bom.line == 1);
  CHECK(bom.cause.find("UTF-8 byte-order mark (EF BB BF)") != std::string::npos);
  CHECK(parse_error("\xEF\xBB\xBF# header\n+1 1:1\n").cause.find("byte-order mark") != std::string::npos);

  for (const std::string old_mac : {"+1 1:1\r-1 2:1\r+1 3:1\r", "+1 1:1\r+1 2:1\r", "1 1:1\r1 2:1\r",
                                    "# header\r+1 1:1\r-1 2:1\r", "+1 1:1 # c\r-1 2:1\r", "1\r-1\r",
                                    // Found by fuzz/libsvm_parser_fuzz.cpp: a '\r' before a comment
                                    // or a token, once taken for a blank, kept one row of many.
                                    "+1 1:1\r# c\r-1 2:1\r", "1\r#1 2\n", "+1 1:1\r2:1\n", "\r+1 1:1\n"}) {
    INFO("input: " << old_mac);
    ParseError cr = parse_error(old_mac);
    CHECK(cr.line == 1);
    CHECK(cr.cause.find("carriage return inside a line") != std::string::npos);
  }
  // Before the line's end is even in the buffer: the reader would grow it to the whole file.
  LibsvmParser parser({});
  Dataset d;
  const std::string head = "+1 1:1\n-1 2:1\r+1 3:1\r-1 4:";
  try {
    parser.parse(head.data(), head.data() + head.size(), head.data() + head.size(), false, d);
    FAIL("no ParseError");
  } catch (const ParseError& e) {
    CHECK(e.line == 2);
    CHECK(e.cause.find("carriage return inside a line") != std::string::npos);
  }
  const std::string crlf_cut = "+1 1:1\r\n-1 2:1 \r";  // a CRLF cut between its two bytes
  CHECK(parse_text(crlf_cut, {}, false).consumed == std::string("+1 1:1\r\n").size());

  ParseError second = parse_error("+1 1:1\n-1 2:1\r+1 3:x\n");
  CHECK(second.line == 2);
  CHECK(second.cause.find("carriage return") != std::string::npos);

  // CRLF, blanks around its '\r' and comments ending in it all still parse.
  auto r = parse_text("# header\r\n1 1:1 # c\r\n-1 2:1 \r \r\n\r\n");
  CHECK(plain(r.data.label) == std::vector<float>{1, -1});
  CHECK(plain(r.data.index) == std::vector<uint32_t>{0, 1});
}

TEST_CASE("parser: a real too small for float is its nearest float, one too large an error", "[parser]") {
  const std::string tiny = "0." + std::string(60, '0') + "1";
  auto r = parse_text("1e-50 1:1e-50\n-1e-50 2:-1e-60\n" + tiny + " 3:" + tiny +
                      "\n1e-400 4:1E-99999999999999\n1 5:1e-40 6:1e-45 7:7e-46\n");
  REQUIRE(r.data.rows() == 5);
  CHECK(plain(r.data.label) == std::vector<float>{0, 0, 0, 0, 1});
  CHECK(std::signbit(r.data.label[1]));
  CHECK(!std::signbit(r.data.label[0]));
  const auto v = plain(r.data.value);
  REQUIRE(v.size() == 7);
  CHECK(v[0] == 0.0f);
  CHECK(std::signbit(v[1]));
  CHECK(v[2] == 0.0f);
  CHECK(v[3] == 0.0f);
  CHECK(v[4] == 1e-40f);  // subnormals as from_chars reads them
  CHECK(v[5] == std::numeric_limits<float>::denorm_min());
  CHECK(v[6] == 0.0f);

  const std::string huge = std::string(40, '9');
  const std::vector<std::string> overflows = {"1 3:1e39",      "1 3:-1e400", "1 3:" + huge,
                                              "1 3:0.0001e43", "1e39 3:1",   "-" + huge + " 3:1"};
  for (const std::string& bad : overflows) {
    INFO("input: " << bad);
    CHECK(parse_error(bad + "\n").cause.find("overflows float (|x| > 3.4e38)") != std::string::npos);
  }
  CHECK(parse_error("1 3:1e-50x\n").cause.find("not a number") != std::string::npos);
  CHECK(parse_error("1e-50x 3:1\n").cause.find("not a number") != std::string::npos);
}

TEST_CASE("parser: qid only right after the label, as an integer", "[parser]") {
  auto r = parse_text("1 qid:3 2:1\n-1\tqid:0\n1 qid:-4 # c\n");
  CHECK(plain(r.data.label) == std::vector<float>{1, -1, 1});
  CHECK(plain(r.data.index) == std::vector<uint32_t>{1});

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1 2:1 qid:3", "qid must come right after the label, once per line; found 'qid:3'"},
      {"1 qid:1 qid:2 3:1", "qid must come right after the label"},
      {"1 2:1 qid:", "qid must come right after the label"},
      {"1 qid: 3:1", "qid value '' is not an integer"},
      {"1 qid:", "qid value '' is not an integer"},
      {"1 qid:x 3:1", "qid value 'x' is not an integer"},
      {"1 qid:1.5 3:1", "qid value '1.5' is not an integer"},
      {"1 qid:3:1", "qid value '3:1' is not an integer"},
      {"1 qid:99999999999999999999 3:1", "does not fit 64 bits"},
  };
  for (const auto& [line, cause] : cases) {
    INFO("input line: " << line);
    ParseError e = parse_error("1 1:1\n" + line + "\n");
    CHECK(e.line == 2);
    INFO("cause: " << e.cause);
    CHECK(e.cause.find(cause) != std::string::npos);
  }
}
