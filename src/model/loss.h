#pragma once
// The three losses of MPI-SGD (thesis section 2.2), on the prediction p = w^T x and the
// target y (y in {-1,+1} for classification, real for regression):
//   logistic  f(p) = ln(1 + exp(-y p))       f'(p) = -y / (1 + exp(y p))
//   hinge     f(p) = max(0, 1 - y p)         f'(p) = -y if y p < 1, else 0
//   squared   f(p) = (p - y)^2 / 2           f'(p) = p - y
// The gradient of a row x is f'(p) x, as sparse as the row itself.
//
// With K >= 3 classes the model keeps K weight columns, a row has K margins m_c = w_c^T x,
// and a row of class y (0-based) costs, as LIBLINEAR `-s 0` and scikit-learn's
// LogisticRegression(multi_class=...) define them:
//   one-vs-rest   sum_c f(m_c, y_c), y_c = +1 if c = y else -1   (K independent binary
//                 problems sharing the rows: column c trains exactly as a binary model of
//                 "class c against the rest" would)
//   softmax       ln sum_c exp(m_c) - m_y,  d/dm_c = p_c - [c = y],  p = softmax(m)
//                 (multinomial logistic regression; Bishop, PRML section 4.3.4)
//   Crammer-Singer  max(0, 1 + max_{c != y} m_c - m_y): the multi-class hinge (Crammer
//                 and Singer, JMLR 2001, eq. 13; LIBLINEAR -s 4); a subgradient is +1 for
//                 the most violating class r and -1 for y when the hinge is active
// The gradient of column c is d_c x: a row touches K weights per non-zero.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "model/host_device.h"

namespace mpisgd {

enum class LossKind { logistic, hinge, squared };
// How K >= 3 classes share the loss (above): one-vs-rest takes the binary loss's kind;
// softmax goes with logistic, Crammer-Singer with hinge.
enum class Multiclass { ovr, softmax, crammer_singer };

struct Loss {
  LossKind kind;
  uint32_t columns = 1;  // weight columns: 1 (two classes, regression) or K >= 3 classes
  Multiclass multiclass = Multiclass::ovr;  // with K >= 3 classes

  MPISGD_HD bool classification() const { return kind != LossKind::squared; }

  MPISGD_HD double value(double p, double y) const {
    switch (kind) {
      case LossKind::logistic: {
        double z = y * p;  // ln(1 + e^-z) without overflow for large |z|
        return z > 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z));
      }
      case LossKind::hinge: return max0(1 - y * p);
      case LossKind::squared: return 0.5 * (p - y) * (p - y);
    }
    return 0;
  }

  MPISGD_HD double derivative(double p, double y) const {
    switch (kind) {
      case LossKind::logistic: {
        double z = y * p;
        if (z > 0) {
          double e = std::exp(-z);
          return -y * e / (1 + e);
        }
        return -y / (1 + std::exp(z));
      }
      case LossKind::hinge: return y * p < 1 ? -y : 0.0;
      case LossKind::squared: return p - y;
    }
    return 0;
  }

  // The K-class loss of margins m (K = columns) for a row of class y.
  double value(std::span<const double> m, uint32_t y) const { return value(m.data(), columns_of(m), y); }
  MPISGD_HD double value(const double* m, uint32_t k, uint32_t y) const {
    if (multiclass == Multiclass::softmax) return log_sum_exp(m, k) - m[y];
    if (multiclass == Multiclass::crammer_singer) return max0(1 + m[rival(m, k, y)] - m[y]);
    double sum = 0;
    for (uint32_t c = 0; c < k; ++c) sum += value(m[c], c == y ? 1.0 : -1.0);
    return sum;
  }

  // d[c] = the derivative of value(m, y) in m_c.
  void derivatives(std::span<const double> m, uint32_t y, std::span<double> d) const {
    derivatives(m.data(), columns_of(m), y, d.data());
  }
  MPISGD_HD void derivatives(const double* m, uint32_t k, uint32_t y, double* d) const {
    if (multiclass == Multiclass::softmax) {
      const double lse = log_sum_exp(m, k);
      for (uint32_t c = 0; c < k; ++c) d[c] = std::exp(m[c] - lse) - (c == y ? 1.0 : 0.0);
      return;
    }
    if (multiclass == Multiclass::crammer_singer) {
      for (uint32_t c = 0; c < k; ++c) d[c] = 0;
      const uint32_t r = rival(m, k, y);
      if (1 + m[r] - m[y] > 0) {
        d[r] = 1;
        d[y] = -1;
      }
      return;
    }
    for (uint32_t c = 0; c < k; ++c) d[c] = derivative(m[c], c == y ? 1.0 : -1.0);
  }

  // The predicted class: the first of the largest margins, as LIBLINEAR's predict picks it.
  static uint32_t argmax(std::span<const double> m) {
    return static_cast<uint32_t>(std::max_element(m.begin(), m.end()) - m.begin());
  }

 private:
  static uint32_t columns_of(std::span<const double> m) { return static_cast<uint32_t>(m.size()); }
  // std::max(0.0, x), which device code cannot call.
  MPISGD_HD static double max0(double x) { return 0.0 < x ? x : 0.0; }
  // The class other than y with the largest margin, the first on ties.
  MPISGD_HD static uint32_t rival(const double* m, uint32_t k, uint32_t y) {
    uint32_t r = y == 0 ? 1 : 0;
    for (uint32_t c = r + 1; c < k; ++c)
      if (c != y && m[c] > m[r]) r = c;
    return r;
  }
  // ln sum exp(m_c), shifted by the largest margin so that no exp overflows.
  MPISGD_HD static double log_sum_exp(const double* m, uint32_t k) {
    double top = m[0];
    for (uint32_t c = 1; c < k; ++c)
      if (top < m[c]) top = m[c];
    double sum = 0;
    for (uint32_t c = 0; c < k; ++c) sum += std::exp(m[c] - top);
    return top + std::log(sum);
  }
};

// Names used on the command line: logreg, svm, linreg; ovr, softmax, crammer-singer.
LossKind loss_from_name(const std::string& name);
const char* model_name(LossKind kind);
Multiclass multiclass_from_name(const std::string& name);
const char* multiclass_name(Multiclass form);

}  // namespace mpisgd
