// Checkpoints across ranks: every rank's strategy state comes back to that rank, the
// weights and header to all, from the newest valid file; none at all fails on every rank.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_dir.h"
#include "checkpoint/checkpoint_io.h"
#include "comm/job_error.h"
#include "mpi_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;
namespace fs = std::filesystem;

namespace {

// Rank r's state: r + 1 bytes of value r + epoch, so a mix-up shows.
std::vector<std::byte> state_of(int rank, int epoch) {
  return std::vector<std::byte>(static_cast<size_t>(rank) + 1, static_cast<std::byte>(rank + epoch));
}

}  // namespace

TEST_CASE("each rank gets its own state back from the newest valid checkpoint", "[checkpoint]") {
  const fs::path mine = fs::temp_directory_path() / ("mpisgd_ckpt_mpi_" + std::to_string(::getpid()));
  const std::string dir = on_rank0(mine.string());
  for (int epoch = 1; epoch <= 3; ++epoch) {
    Checkpoint c;
    c.config = "ranks=" + std::to_string(world_size()) + "\n";
    c.epoch = epoch;
    c.step = 5u * static_cast<uint64_t>(epoch);
    if (world_rank() == 0) c.weights.assign(100, std::byte{7});
    save_checkpoint(MPI_COMM_WORLD, dir, c, state_of(world_rank(), epoch));
  }
  if (world_rank() == 0) fs::resize_file(fs::path(dir) / "epoch-000003.ckpt", 20);
  MPI_Barrier(MPI_COMM_WORLD);

  ResumePoint p = load_checkpoint(MPI_COMM_WORLD, dir);
  CHECK(on_all_ranks(p.checkpoint.epoch == 2 && p.checkpoint.step == 10));
  CHECK(on_all_ranks(p.checkpoint.weights == std::vector<std::byte>(100, std::byte{7})));
  CHECK(on_all_ranks(p.mine == state_of(world_rank(), 2)));
  CHECK(on_all_ranks(p.path.ends_with("epoch-000002.ckpt")));

  if (world_rank() == 0) fs::resize_file(fs::path(dir) / "epoch-000002.ckpt", 20);
  MPI_Barrier(MPI_COMM_WORLD);
  bool failed = false;
  try {
    load_checkpoint(MPI_COMM_WORLD, dir);
  } catch (const JobFailed& e) {
    failed = std::string(e.what()).find("no valid checkpoint") != std::string::npos;
  }
  CHECK(on_all_ranks(failed));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) fs::remove_all(dir);
}
