#include "jobs/predict_job.h"

#include <cstdio>
#include <optional>

#include <fmt/format.h>
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

// Each rank formats its rows' predictions; the ranks' pieces land at their offsets, in
// file order.
void write_predictions(const std::string& path, const Dataset& d, const LinearModel& m, MPI_Comm comm) {
  std::string text;
  std::vector<double> margins(m.columns());
  for (uint64_t r = 0; r < d.rows(); ++r) {
    m.margins(d.row_index(r), d.row_value(r), margins);
    const double p = margins[0];
    if (margins.size() > 1) text += fmt::format("{}\n", m.labels.classes[Loss::argmax(margins)]);
    else text += m.classification ? fmt::format("{}\n", m.labels.label_of(p)) : fmt::format("{:.9g}\n", p);
  }
  unsigned long long bytes = text.size(), offset = 0;
  MPI_Exscan(&bytes, &offset, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) offset = 0;
  write_file_atomically(path, comm,
                        [&](MpiFile& file) { file.write_at(static_cast<MPI_Offset>(offset), text.data(), text.size()); });
}

}  // namespace

void run_predict(const PredictConfig& c, MPI_Comm comm) {
  check_output_paths(comm, {{"--out", c.out}});
  const LoadOptions load{.zero_based = c.zero_based, .max_memory = parse_max_memory(c.max_memory)};
  std::optional<LinearModel> model;
  std::optional<LocalFailure> failure;
  try {
    model = load_model(c.model);
  } catch (const std::exception& e) {
    failure = LocalFailure{0, e.what()};
  }
  agree_on_error(comm, failure);

  Dataset data = load_dataset(c.data, comm, load).data;
  if (model->classification) warn_unseen_labels(c.data, data, model->labels, comm);
  Evaluation ev = evaluate(data, Loss{model->loss, model->columns()}, model->labels, c.threads, comm,
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
    write_predictions(c.out, data, *model, comm);
    spdlog::info("predictions written to {}", c.out);
  }
}

}  // namespace mpisgd
