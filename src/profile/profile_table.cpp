#include "profile/profile_table.h"

#include <fmt/format.h>

namespace mpisgd {
namespace {

std::string spread(const MinMeanMax& m, double unit, int precision) {
  return fmt::format("{:.{}f}/{:.{}f}/{:.{}f}", m.min / unit, precision, m.mean / unit, precision, m.max / unit, precision);
}

}  // namespace

void print_profile_header(std::FILE* out, bool classification) {
  fmt::print(out, "{:>5} {:>6} {:>23} {:>23} {:>23} {:>20} {:>9} {:>10} {:>10} {:>9}\n", "epoch", "steps",
             "wall s min/mean/max", "compute s min/mean/max", "comm s min/mean/max", "sent MB/rank m/m/m", "density",
             "train loss", "test loss", classification ? "test acc" : "test rmse");
  std::fflush(out);
}

void print_profile_row(std::FILE* out, const EpochSummary& s) {
  std::string test_loss = s.test ? fmt::format("{:.5f}", s.test->loss) : "-";
  std::string metric = s.test ? fmt::format("{:.4f}", s.test->metric) : "-";
  fmt::print(out, "{:>5} {:>6} {:>23} {:>23} {:>23} {:>20} {:>9.2e} {:>10.5f} {:>10} {:>9}\n", s.epoch, s.steps,
             spread(s.wall_s, 1, 3), spread(s.compute_s, 1, 3), spread(s.comm_s, 1, 3), spread(s.bytes_sent, 1e6, 1),
             s.density, s.train_loss, test_loss, metric);
  if (s.ps) {
    // Parameter servers: a second line, so that every strategy's table keeps its columns.
    const ParameterServerSummary& ps = *s.ps;
    fmt::print(out, "{:>5} {} workers: push s {} pull s {} wait s {} | {} server{} busy {} | staleness mean {:.2f} max {:.0f}\n",
               "", ps.workers, spread(ps.push_s, 1, 3), spread(ps.pull_s, 1, 3), spread(ps.wait_s, 1, 3), ps.servers,
               ps.servers == 1 ? "" : "s", spread(ps.busy, 0.01, 0) + "%", ps.staleness_mean, ps.staleness_max);
  }
  std::fflush(out);
}

}  // namespace mpisgd
