#include "model/model_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/job_error.h"
#include "comm/temp_files.h"
#include "data/quote.h"
#include "comm/node_facts.h"

namespace mpisgd {
namespace {

struct Solver {
  std::string_view name;
  LossKind loss;
  bool classification;
};

// LIBLINEAR's solvers whose models keep one weight column for two classes (and regression),
// and one per class, one-vs-rest, for more.
constexpr Solver kSolvers[] = {
    {"L2R_LR", LossKind::logistic, true},          {"L2R_L2LOSS_SVC_DUAL", LossKind::hinge, true},
    {"L2R_L2LOSS_SVC", LossKind::hinge, true},     {"L2R_L1LOSS_SVC_DUAL", LossKind::hinge, true},
    {"L1R_L2LOSS_SVC", LossKind::hinge, true},     {"L1R_LR", LossKind::logistic, true},
    {"L2R_LR_DUAL", LossKind::logistic, true},     {"L2R_L2LOSS_SVR", LossKind::squared, false},
    {"L2R_L2LOSS_SVR_DUAL", LossKind::squared, false}, {"L2R_L1LOSS_SVR_DUAL", LossKind::squared, false},
};
// Crammer and Singer's multi-class SVM: one column per class for any number of classes.
constexpr Solver kCrammerSinger{"MCSVM_CS", LossKind::hinge, true};

// '\r' too: a model file that went through Windows still reads.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t at = 0;
  for (;;) {
    while (at < line.size() && is_space(line[at])) ++at;
    if (at == line.size()) return fields;
    size_t end = at;
    while (end < line.size() && !is_space(line[end])) ++end;
    fields.push_back(line.substr(at, end - at));
    at = end;
  }
}

// A finite real that is the whole token. A leading '+' is allowed, as strtod and the LIBSVM
// parser allow it; "nan", "inf", hex floats and trailing characters are not.
enum class Real { ok, not_a_number, not_finite };
template <class T>
Real parse_real(std::string_view token, T& out) {
  const char* b = token.data();
  const char* e = b + token.size();
  if (b != e && *b == '+' && ++b != e && *b == '-') return Real::not_a_number;
  auto [p, ec] = std::from_chars(b, e, out);
  if (ec == std::errc::result_out_of_range) return Real::not_finite;
  if (ec != std::errc() || p != e) return Real::not_a_number;
  return std::isfinite(out) ? Real::ok : Real::not_finite;
}

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1ull << 20));
  return fmt::format("{} bytes", bytes);
}

// The header's lines, each with the line it was found on (0: absent).
struct Header {
  const Solver* solver = nullptr;
  std::vector<float> labels;
  uint64_t nr_class = 0;
  uint64_t nr_feature = 0;
  double bias = -1;
  uint64_t solver_line = 0, nr_class_line = 0, label_line = 0, nr_feature_line = 0, bias_line = 0, w_line = 0;
};

class ModelReader {
 public:
  ModelReader(const std::string& path, uint64_t memory_limit) : path_(path), memory_limit_(memory_limit) {}

  LinearModel read() {
    in_.open(path_, std::ios::binary);
    if (!in_) throw InputError(path_, 0, "cannot open model file");
    const Header h = header();
    LinearModel m;
    m.classification = h.solver->classification;
    m.loss = h.solver->loss;
    if (m.classification && h.labels.size() == 2) m.labels = LabelMap{h.labels[0], h.labels[1], {}};
    if (m.classification && h.labels.size() > 2) m.labels.classes = h.labels;
    if (h.solver == &kCrammerSinger) m.multiclass = Multiclass::crammer_singer;
    m.bias = h.bias;
    weights(h, m.w);
    return m;
  }

 private:
  [[noreturn]] void fail(uint64_t line, const std::string& cause) const {
    throw InputError(path_, line, cause);
  }

  bool next_line() {
    if (!std::getline(in_, line_)) return false;
    ++lineno_;
    offset_ += line_.size() + (in_.eof() ? 0 : 1);
    return true;
  }

  Header header() {
    Header h;
    while (next_line()) {
      const auto fields = fields_of(line_);
      if (fields.empty()) continue;
      const std::string key(fields[0]);
      const std::pair<const char*, uint64_t*> keys[] = {
          {"solver_type", &h.solver_line}, {"nr_class", &h.nr_class_line}, {"label", &h.label_line},
          {"nr_feature", &h.nr_feature_line}, {"bias", &h.bias_line}, {"w", &h.w_line}};
      uint64_t* seen = nullptr;
      for (auto [name, line] : keys)
        if (key == name) seen = line;
      if (!seen) fail(lineno_, "unknown header field " + quote_input(key));
      if (*seen) fail(lineno_, key + " given twice (first on line " + std::to_string(*seen) + ")");
      *seen = lineno_;
      if (key == "w") {
        if (fields.size() > 1) fail(lineno_, "the 'w' line has more than 'w': " + quote_input(line_));
        check(h);
        return h;
      }
      if (key == "label") {
        for (size_t i = 1; i < fields.size(); ++i) {
          float label = 0;
          if (parse_real(fields[i], label) != Real::ok)
            fail(lineno_, "label " + quote_input(fields[i]) + " is not a finite number");
          h.labels.push_back(label);
        }
        continue;
      }
      if (fields.size() != 2)
        fail(lineno_, key + " takes one value, found " + std::to_string(fields.size() - 1));
      const std::string_view value = fields[1];
      if (key == "solver_type") {
        h.solver = solver(value);
      } else if (key == "nr_class") {
        if (!parse_count(value, h.nr_class)) fail(lineno_, "nr_class " + quote_input(value) + " is not a count");
        if (h.nr_class < 2 || h.nr_class > kMostClasses)
          fail(lineno_, "nr_class " + std::string(value) + ": models of 2 to " + std::to_string(kMostClasses) +
                            " classes are supported (regression ones say 2)");
      } else if (key == "nr_feature") {
        if (!parse_count(value, h.nr_feature))
          fail(lineno_, "nr_feature " + quote_input(value) + " is not a count");
        if (h.nr_feature > UINT32_MAX)
          fail(lineno_, "nr_feature " + std::string(value) + " is above " + std::to_string(UINT32_MAX) +
                            ", the most features 32-bit indices address");
      } else if (parse_real(value, h.bias) != Real::ok) {
        fail(lineno_, "bias " + quote_input(value) + " is not a finite number");
      }
    }
    fail(lineno_, "no 'w' line: not a LIBLINEAR model file");
  }

  // Whether `value` is a whole unsigned decimal count (LIBLINEAR writes them with %d).
  static bool parse_count(std::string_view value, uint64_t& out) {
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec == std::errc::result_out_of_range) {
      out = std::numeric_limits<uint64_t>::max();
      return p == value.data() + value.size();
    }
    return ec == std::errc() && p == value.data() + value.size();
  }

  const Solver* solver(std::string_view name) const {
    for (const Solver& s : kSolvers)
      if (s.name == name) return &s;
    if (name == kCrammerSinger.name) return &kCrammerSinger;
    std::string known;
    for (const Solver& s : kSolvers) known += (known.empty() ? "" : ", ") + std::string(s.name);
    known += ", " + std::string(kCrammerSinger.name);
    fail(lineno_, "unknown solver_type " + quote_input(name) + " (known: " + known + ")");
  }

  // What each line's value means depends on the others, which may come in any order.
  void check(const Header& h) const {
    std::string missing;
    for (auto [line, key] : {std::pair{h.solver_line, "solver_type"}, {h.nr_class_line, "nr_class"},
                             {h.nr_feature_line, "nr_feature"}, {h.bias_line, "bias"}})
      if (!line) missing += (missing.empty() ? "" : ", ") + std::string(key);
    if (!missing.empty()) fail(h.w_line, "the header before 'w' lacks " + missing);
    const std::string solver = "solver_type " + std::string(h.solver->name);
    if (h.solver->classification) {
      if (!h.label_line) fail(h.w_line, "no 'label' line, which " + solver + " (a classifier) requires");
      if (h.labels.size() != h.nr_class)
        fail(h.label_line, "label lists " + std::to_string(h.labels.size()) + " classes, nr_class (line " +
                               std::to_string(h.nr_class_line) + ") says " + std::to_string(h.nr_class));
      for (size_t i = 1; i < h.labels.size(); ++i)
        if (std::find(h.labels.begin(), h.labels.begin() + static_cast<ptrdiff_t>(i), h.labels[i]) !=
            h.labels.begin() + static_cast<ptrdiff_t>(i))
          fail(h.label_line, fmt::format("label lists the class {} twice", h.labels[i]));
      if (h.solver == &kCrammerSinger && h.nr_class == 2)
        fail(h.solver_line, "solver_type MCSVM_CS with nr_class 2 keeps two weight columns: two-class models "
                            "with one column (any other solver) are supported");
    } else if (h.nr_class != 2) {
      fail(h.nr_class_line, "nr_class " + std::to_string(h.nr_class) + ", but " + solver +
                                " is a regression solver (nr_class 2)");
    } else if (h.label_line) {
      fail(h.label_line, "a 'label' line, but " + solver + " is a regression solver");
    }
  }

  std::string count_text(uint64_t lines, const Header& h) const {
    const uint64_t k = columns(h);
    return fmt::format("expected {} {} (nr_feature {}{})", lines,
                       k == 1 ? std::string("weights") : fmt::format("lines of {} weights", k), h.nr_feature,
                       h.bias >= 0 ? " and one for the bias" : "");
  }

  static uint64_t columns(const Header& h) { return h.solver->classification && h.nr_class > 2 ? h.nr_class : 1; }

  // The header's claim is checked against the file and the memory before anything is
  // allocated. A weight takes at least 2 bytes ("0\n" or "0 ", the last one's newline
  // optional): a file too short for the count is only read through, to report what it
  // does hold.
  void weights(const Header& h, std::vector<double>& w) {
    const uint64_t lines = h.nr_feature + (h.bias >= 0 ? 1 : 0), k = columns(h);
    const uint64_t count = lines * k;
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path_, ec);
    const bool fits_file = ec || count == 0 || (size > offset_ && size - offset_ >= 2 * count - 1);
    if (fits_file && count > memory_limit_ / sizeof(double))
      fail(h.nr_feature_line,
           fmt::format("nr_feature {}: the weights need {} of memory, more than the {} available",
                       h.nr_feature, bytes_text(count * sizeof(double)), bytes_text(memory_limit_)));
    if (fits_file) w.resize(count);
    for (uint64_t i = 0; i < lines; ++i) {
      if (!next_line()) fail(lineno_ + 1, count_text(lines, h) + fmt::format(", found {}", i));
      const auto fields = fields_of(line_);
      if (fields.empty()) fail(lineno_, "empty line where a weight belongs");
      if (fields.size() != k)
        fail(lineno_, fmt::format("expected {} weight{}, found {} values in {}", k == 1 ? "one" : std::to_string(k),
                                  k == 1 ? "" : "s (one per class)", fields.size(), quote_input(line_)));
      for (uint64_t c = 0; c < k; ++c) {
        const double x = weight(fields[c]);
        if (fits_file) w[i * k + c] = x;
      }
    }
    uint64_t extra = 0, first_extra = 0;
    while (next_line())
      if (!fields_of(line_).empty() && !extra++) first_extra = lineno_;
    if (extra) fail(first_extra, count_text(lines, h) + fmt::format(", found {}", lines + extra));
  }

  double weight(std::string_view token) const {
    double x = 0;
    switch (parse_real(token, x)) {
      case Real::ok: return x;
      case Real::not_a_number: fail(lineno_, "weight " + quote_input(token) + " is not a number");
      case Real::not_finite: fail(lineno_, "weight " + quote_input(token) + " is NaN, Inf or out of range");
    }
    return x;
  }

  const std::string& path_;
  const uint64_t memory_limit_;
  std::ifstream in_;
  std::string line_;
  uint64_t lineno_ = 0;
  uint64_t offset_ = 0;  // bytes of the lines read so far
};

const char* solver_name(LossKind loss) {
  switch (loss) {
    case LossKind::logistic: return "L2R_LR";
    case LossKind::hinge: return "L2R_L1LOSS_SVC_DUAL";
    case LossKind::squared: return "L2R_L2LOSS_SVR";
  }
  return "?";
}

}  // namespace

void save_model(const std::string& path, const LinearModel& m) {
  const std::string tmp = path + ".tmp";
  TempFileGuard guard(tmp);
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw std::runtime_error(tmp + ": cannot open for writing");
    const uint32_t k = m.columns();
    const bool crammer_singer = k > 1 && m.multiclass == Multiclass::crammer_singer;
    out << "solver_type " << (crammer_singer ? kCrammerSinger.name : solver_name(m.loss)) << "\nnr_class "
        << (k == 1 ? 2 : k) << "\n";
    // Shortest round-trip text: a label comes back as the same float (1234567, not 1.23457e+06).
    if (m.classification && k == 1) out << fmt::format("label {} {}\n", m.labels.positive, m.labels.negative);
    if (k > 1) out << fmt::format("label {}\n", fmt::join(m.labels.classes, " "));
    out << "nr_feature " << m.features() << "\nbias " << m.bias << "\nw\n";
    // Shortest round-trip text: as exact as %.17g, and shorter.
    std::string text;
    text.reserve(m.w.size() * 24);
    char buf[32];
    for (size_t i = 0; i < m.w.size(); ++i) {
      auto end = std::to_chars(buf, buf + sizeof buf, m.w[i]).ptr;
      text.append(buf, end);
      text += (i + 1) % k ? " " : " \n";
    }
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(tmp + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename " + tmp + " into place");
  }
}

LinearModel load_model(const std::string& path, uint64_t memory_limit) {
  return ModelReader(path, memory_limit).read();
}

LinearModel load_model(const std::string& path) {
  const uint64_t available = available_memory();
  return load_model(path, available ? available : std::numeric_limits<uint64_t>::max());
}

}  // namespace mpisgd
