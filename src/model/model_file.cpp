#include "model/model_file.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "comm/job_error.h"

namespace mpisgd {
namespace {

const char* solver_name(LossKind loss) {
  switch (loss) {
    case LossKind::logistic: return "L2R_LR";
    case LossKind::hinge: return "L2R_L1LOSS_SVC_DUAL";
    case LossKind::squared: return "L2R_L2LOSS_SVR";
  }
  return "?";
}

bool is_regression_solver(const std::string& s) {
  return s == "L2R_L2LOSS_SVR" || s == "L2R_L2LOSS_SVR_DUAL" || s == "L2R_L1LOSS_SVR_DUAL";
}

LossKind loss_of_solver(const std::string& s) {
  if (is_regression_solver(s)) return LossKind::squared;
  if (s.find("_LR") != std::string::npos) return LossKind::logistic;
  return LossKind::hinge;
}

}  // namespace

void save_model(const std::string& path, const LinearModel& m) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw std::runtime_error(tmp + ": cannot open for writing");
    out << "solver_type " << solver_name(m.loss) << "\nnr_class 2\n";
    // Shortest round-trip text: a label comes back as the same float (1234567, not 1.23457e+06).
    if (m.classification) out << fmt::format("label {} {}\n", m.labels.positive, m.labels.negative);
    out << "nr_feature " << m.features() << "\nbias " << m.bias << "\nw\n";
    // Shortest round-trip text: as exact as %.17g, and shorter.
    std::string text;
    text.reserve(m.w.size() * 24);
    char buf[32];
    for (double x : m.w) {
      auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
      text.append(buf, end);
      text += " \n";
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

LinearModel load_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open model file");
  LinearModel m;
  std::string line, key;
  uint64_t lineno = 0;
  int64_t features = -1;
  bool have_solver = false;
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream fields(line);
    if (!(fields >> key)) continue;  // blank line
    if (key == "w") break;
    if (key == "solver_type") {
      std::string solver;
      fields >> solver;
      m.classification = !is_regression_solver(solver);
      m.loss = loss_of_solver(solver);
      have_solver = true;
    } else if (key == "nr_class") {
      int n = 0;
      if (!(fields >> n)) throw InputError(path, lineno, "nr_class is not a number");
      if (n != 2 && m.classification) throw InputError(path, lineno, "nr_class " + std::to_string(n) + ": only two-class models are supported");
    } else if (key == "label") {
      if (!(fields >> m.labels.positive >> m.labels.negative)) throw InputError(path, lineno, "label needs two values");
    } else if (key == "nr_feature") {
      if (!(fields >> features) || features < 0) throw InputError(path, lineno, "nr_feature is not a count");
    } else if (key == "bias") {
      if (!(fields >> m.bias)) throw InputError(path, lineno, "bias is not a number");
    } else if (key != "rho") {
      throw InputError(path, lineno, "unknown header field '" + key + "'");
    }
  }
  if (key != "w") throw InputError(path, lineno, "no 'w' line: not a LIBLINEAR model file");
  if (!have_solver || features < 0) throw InputError(path, lineno, "header lacks solver_type or nr_feature");
  size_t count = static_cast<size_t>(features) + (m.bias >= 0 ? 1 : 0);
  m.w.resize(count);
  for (size_t i = 0; i < count; ++i) {
    ++lineno;
    if (!std::getline(in, line)) throw InputError(path, lineno, "file ends after " + std::to_string(i) + " of " + std::to_string(count) + " weights");
    const char* b = line.data();
    while (*b == ' ') ++b;
    auto [p, ec] = std::from_chars(b, line.data() + line.size(), m.w[i]);
    if (ec != std::errc()) throw InputError(path, lineno, "weight '" + line + "' is not a number");
  }
  return m;
}

}  // namespace mpisgd
