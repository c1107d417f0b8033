#pragma once
// One checkpoint file: everything `mpisgd train --resume` needs to continue a run as if it
// had never stopped.
//
//   "MPISGDCK"  u32 version  u32 0x01020304 (byte order)  u64 body length
//   body: config lines, data identity, epoch, step, P, the model's state (once: every
//         training rank holds the same bits), one strategy-state blob per rank, then the
//         run's state (the early stopper's; version 2 on)
//   u32 CRC-32C of every byte before it
//
// A torn write fails the length or the CRC, a flipped bit the CRC; decode says which.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mpisgd {

struct Checkpoint {
  std::string config;    // "key=value" lines that must match to resume (run_identity.h)
  uint64_t data_id = 0;  // data_identity.h
  int epoch = 0;         // epochs completed
  uint64_t step = 0;     // global steps taken
  std::vector<std::byte> weights;
  std::vector<std::vector<std::byte>> ranks;  // strategy state, by rank
  std::vector<std::byte> run;                 // the run's own state: the early stopper's
};

std::vector<std::byte> encode_checkpoint(const Checkpoint& c);
// Throws std::runtime_error saying what is wrong (truncated, checksum, version...).
Checkpoint decode_checkpoint(std::span<const std::byte> bytes);

}  // namespace mpisgd
