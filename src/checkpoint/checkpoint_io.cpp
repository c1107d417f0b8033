#include "checkpoint/checkpoint_io.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "checkpoint/checkpoint_dir.h"
#include "comm/job_error.h"

namespace mpisgd {
namespace {

constexpr size_t kPiece = size_t{1} << 30;
constexpr int kTag = 7401;

void send_bytes(MPI_Comm comm, int to, const std::vector<std::byte>& b) {
  for (size_t at = 0; at < b.size(); at += kPiece)
    MPI_Send(b.data() + at, static_cast<int>(std::min(kPiece, b.size() - at)), MPI_BYTE, to, kTag, comm);
}

void recv_bytes(MPI_Comm comm, int from, std::vector<std::byte>& b) {
  for (size_t at = 0; at < b.size(); at += kPiece)
    MPI_Recv(b.data() + at, static_cast<int>(std::min(kPiece, b.size() - at)), MPI_BYTE, from, kTag, comm,
             MPI_STATUS_IGNORE);
}

void bcast_bytes(MPI_Comm comm, std::vector<std::byte>& b) {
  uint64_t n = b.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
  b.resize(n);
  for (size_t at = 0; at < b.size(); at += kPiece)
    MPI_Bcast(b.data() + at, static_cast<int>(std::min(kPiece, b.size() - at)), MPI_BYTE, 0, comm);
}

void bcast_string(MPI_Comm comm, std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  std::vector<std::byte> b(p, p + s.size());
  bcast_bytes(comm, b);
  s.assign(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

std::string save_checkpoint(MPI_Comm comm, const std::string& dir, Checkpoint c, std::vector<std::byte> mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const uint64_t length = mine.size();
  std::vector<uint64_t> lengths(static_cast<size_t>(size));
  MPI_Gather(&length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, 0, comm);
  if (rank != 0) {
    send_bytes(comm, 0, mine);
  } else {
    c.ranks.resize(static_cast<size_t>(size));
    c.ranks[0] = std::move(mine);
    for (int r = 1; r < size; ++r) {
      c.ranks[static_cast<size_t>(r)].resize(lengths[static_cast<size_t>(r)]);
      recv_bytes(comm, r, c.ranks[static_cast<size_t>(r)]);
    }
  }
  std::string path;
  run_on_root(comm, 0, [&] { path = write_checkpoint_file(dir, c.epoch, encode_checkpoint(c)); });
  bcast_string(comm, path);
  return path;
}

ResumePoint load_checkpoint(MPI_Comm comm, const std::string& dir) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ResumePoint p;
  run_on_root(comm, 0, [&] {
    std::vector<std::string> rejected;
    auto found = newest_valid_checkpoint(dir, rejected);
    for (const auto& why : rejected) spdlog::warn("skipping damaged checkpoint {}", why);
    if (!found) throw std::runtime_error(dir + ": no valid checkpoint to resume from" +
                                         (rejected.empty() ? std::string(" (none written)") : ""));
    if (!rejected.empty()) spdlog::warn("resuming from the older checkpoint {}", found->path);
    p.path = std::move(found->path);
    p.checkpoint = std::move(found->checkpoint);
  });
  Checkpoint& c = p.checkpoint;
  bcast_string(comm, p.path);
  bcast_string(comm, c.config);
  MPI_Bcast(&c.data_id, 1, MPI_UINT64_T, 0, comm);
  MPI_Bcast(&c.epoch, 1, MPI_INT, 0, comm);
  MPI_Bcast(&c.step, 1, MPI_UINT64_T, 0, comm);
  bcast_bytes(comm, c.weights);
  bcast_bytes(comm, c.run);
  int saved_ranks = static_cast<int>(c.ranks.size());
  MPI_Bcast(&saved_ranks, 1, MPI_INT, 0, comm);
  if (saved_ranks != size) return p;  // the caller refuses it by its identity
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      const uint64_t length = c.ranks[static_cast<size_t>(r)].size();
      MPI_Send(&length, 1, MPI_UINT64_T, r, kTag, comm);
      send_bytes(comm, r, c.ranks[static_cast<size_t>(r)]);
    }
    p.mine = std::move(c.ranks[0]);
  } else {
    uint64_t length = 0;
    MPI_Recv(&length, 1, MPI_UINT64_T, 0, kTag, comm, MPI_STATUS_IGNORE);
    p.mine.resize(length);
    recv_bytes(comm, 0, p.mine);
  }
  c.ranks.clear();
  return p;
}

}  // namespace mpisgd
