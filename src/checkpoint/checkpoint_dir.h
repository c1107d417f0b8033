#pragma once
// A checkpoint directory: files named epoch-NNNNNN.ckpt, the last two kept. A file appears
// whole or not at all (written under a temporary name, fsynced, renamed, the directory
// fsynced), so a run killed while writing leaves the previous checkpoints intact; one
// damaged in any other way is found by its CRC and the one before it is used.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_file.h"

namespace mpisgd {

inline constexpr int kCheckpointsKept = 2;

// Writes `bytes` as the checkpoint of `epoch` in `dir` (created if missing) and removes
// all but the newest kCheckpointsKept. Returns its path. Throws std::runtime_error naming
// the path and the cause.
std::string write_checkpoint_file(const std::string& dir, int epoch, std::span<const std::byte> bytes);

struct FoundCheckpoint {
  std::string path;
  Checkpoint checkpoint;
};

// The newest checkpoint in `dir` that decodes, or nullopt when none does; every newer file
// that could not be used is added to `rejected` as "path: why". Throws std::runtime_error if `dir` cannot be read.
std::optional<FoundCheckpoint> newest_valid_checkpoint(const std::string& dir, std::vector<std::string>& rejected);

}  // namespace mpisgd
