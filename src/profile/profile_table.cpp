#include "profile/profile_table.h"

#include <fmt/format.h>

namespace mpisgd {

std::string format_spread(const MinMeanMax& m, double unit, int precision) {
  return fmt::format("{:.{}f}/{:.{}f}/{:.{}f}", m.min / unit, precision, m.mean / unit, precision, m.max / unit, precision);
}

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
             format_spread(s.wall_s, 1, 3), format_spread(s.compute_s, 1, 3), format_spread(s.comm_s, 1, 3),
             format_spread(s.bytes_sent, 1e6, 1), s.density, s.train_loss, test_loss, metric);
  if (!s.strategy.table_line.empty()) fmt::print(out, "{}\n", s.strategy.table_line);
  std::fflush(out);
}

}  // namespace mpisgd
