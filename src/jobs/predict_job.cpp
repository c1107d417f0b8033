#include "jobs/predict_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "comm/job_error.h"
#include "comm/output_paths.h"
#include "data/csr_memory.h"
#include "data/load_dataset.h"
#include "data/mpi_file.h"
#include "model/model_file.h"
#include "sgd/evaluate.h"

namespace mpisgd {
namespace {

// The model's labels in the order of its probabilities (LIBLINEAR's label line).
std::vector<float> labels_of(const LinearModel& m) {
  return m.columns() > 1 ? m.labels.classes : std::vector<float>{m.labels.positive, m.labels.negative};
}

// A row's class probabilities from its margins, as LIBLINEAR's predict_probability
// computes them for logistic models, or their softmax.
void probabilities(std::span<const double> margins, bool softmax, std::vector<double>& p) {
  const auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  if (margins.size() == 1) {
    p = {sigmoid(margins[0]), 1 - sigmoid(margins[0])};
    return;
  }
  p.resize(margins.size());
  const double top = softmax ? *std::max_element(margins.begin(), margins.end()) : 0;
  double sum = 0;
  for (size_t c = 0; c < margins.size(); ++c) sum += p[c] = softmax ? std::exp(margins[c] - top) : sigmoid(margins[c]);
  for (double& x : p) x /= sum;
}

// Each rank formats its rows' predictions; the ranks' pieces land at their offsets, in
// file order.
void write_predictions(const std::string& path, const Dataset& d, const LinearModel& m, const std::string& probs,
                       MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  if (!probs.empty() && rank == 0) text = fmt::format("labels {}\n", fmt::join(labels_of(m), " "));
  std::vector<double> margins(m.columns()), p;
  for (uint64_t r = 0; r < d.rows(); ++r) {
    m.margins(d.row_index(r), d.row_value(r), margins);
    if (!m.classification) {
      text += fmt::format("{:.9g}\n", margins[0]);
      continue;
    }
    const float label = margins.size() > 1 ? m.labels.classes[Loss::argmax(margins)] : m.labels.label_of(margins[0]);
    if (probs.empty()) {
      text += fmt::format("{}\n", label);
      continue;
    }
    probabilities(margins, probs == "softmax", p);
    text += fmt::format("{} {:g}\n", label, fmt::join(p, " "));
  }
  unsigned long long bytes = text.size(), offset = 0;
  MPI_Exscan(&bytes, &offset, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  if (rank == 0) offset = 0;
  write_file_atomically(path, comm,
                        [&](MpiFile& file) { file.write_at(static_cast<MPI_Offset>(offset), text.data(), text.size()); });
}

}  // namespace

void run_predict(const PredictConfig& c, MPI_Comm comm) {
  check_output_paths(comm, {{"--out", c.out}});
  if (!c.probabilities.empty() && c.out.empty())
    throw JobFailed("--probabilities writes them with the predictions: give --out FILE");
  const LoadOptions load{.zero_based = c.zero_based, .max_memory = parse_max_memory(c.max_memory)};
  std::optional<LinearModel> model;
  std::optional<LocalFailure> failure;
  try {
    model = load_model(c.model);
  } catch (const std::exception& e) {
    failure = LocalFailure{0, e.what()};
  }
  agree_on_error(comm, failure);
  if (!c.probabilities.empty() && !(model->classification && model->loss == LossKind::logistic))
    throw JobFailed(c.model + ": --probabilities needs a logistic regression model (solver_type L2R_LR), as "
                    "LIBLINEAR's predict -b 1 does");

  Dataset data = load_dataset(c.data, comm, load).data;
  if (model->classification) warn_unseen_labels(c.data, data, model->labels, comm);
  Evaluation ev = evaluate(data, Loss{model->loss, model->columns(), model->multiclass}, model->labels, c.threads, comm,
                           [&](auto index, auto value, auto m) { model->margins(index, value, m); });
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    if (model->classification)
      fmt::print("Accuracy = {:g}% ({}/{})\n", 100 * ev.result.metric, ev.correct, ev.rows);  // as LIBLINEAR
    else
      fmt::print("RMSE = {:.6g} ({} rows)\n", ev.result.metric, ev.rows);
    std::fflush(stdout);
  }
  if (!c.out.empty()) {
    write_predictions(c.out, data, *model, c.probabilities, comm);
    spdlog::info("predictions written to {}", c.out);
  }
}

}  // namespace mpisgd
