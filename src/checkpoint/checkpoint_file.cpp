#include "checkpoint/checkpoint_file.h"

#include <cstring>
#include <stdexcept>

#include "comm/state_blob.h"
#include "data/crc32c.h"

namespace mpisgd {
namespace {

constexpr char kMagic[8] = {'M', 'P', 'I', 'S', 'G', 'D', 'C', 'K'};
constexpr uint32_t kVersion = 2;
constexpr uint32_t kByteOrder = 0x01020304;
constexpr size_t kHeaderBytes = sizeof kMagic + 2 * sizeof(uint32_t) + sizeof(uint64_t);

}  // namespace

std::vector<std::byte> encode_checkpoint(const Checkpoint& c) {
  // The body's length goes first, so it is counted up front and the file built in place.
  uint64_t length = 8 + c.config.size() + sizeof c.data_id + sizeof c.epoch + sizeof c.step + sizeof(int32_t) + 8 +
                    c.weights.size();
  for (const auto& r : c.ranks) length += 8 + r.size();
  length += 8 + c.run.size();
  StateWriter out;
  out.reserve_more(kHeaderBytes + length + sizeof(uint32_t));
  out.put(kMagic);
  out.put(kVersion);
  out.put(kByteOrder);
  out.put(length);
  out.put_string(c.config);
  out.put(c.data_id);
  out.put(c.epoch);
  out.put(c.step);
  out.put(static_cast<int32_t>(c.ranks.size()));
  out.put_vector(c.weights);
  for (const auto& r : c.ranks) out.put_vector(r);
  out.put_vector(c.run);
  out.put(crc32c(0, out.bytes().data(), out.bytes().size()));
  return out.take();
}

Checkpoint decode_checkpoint(std::span<const std::byte> bytes) {
  if (bytes.size() < kHeaderBytes + sizeof(uint32_t) || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw std::runtime_error("not a checkpoint (no MPISGDCK header)");
  StateReader head(bytes.subspan(sizeof kMagic, kHeaderBytes - sizeof kMagic));
  if (const auto v = head.get<uint32_t>(); v != kVersion)
    throw std::runtime_error("checkpoint format version " + std::to_string(v) + ", this build reads " +
                             std::to_string(kVersion));
  if (head.get<uint32_t>() != kByteOrder) throw std::runtime_error("checkpoint written with another byte order");
  const auto length = head.get<uint64_t>();
  if (length > bytes.size())
    throw std::runtime_error("truncated: " + std::to_string(bytes.size()) + " bytes, header says more than " +
                             std::to_string(length));
  if (bytes.size() != kHeaderBytes + length + sizeof(uint32_t))
    throw std::runtime_error("truncated or overlong: " + std::to_string(bytes.size()) + " bytes, header says " +
                             std::to_string(kHeaderBytes + length + sizeof(uint32_t)));
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
  if (crc32c(0, bytes.data(), bytes.size() - sizeof stored) != stored) throw std::runtime_error("checksum mismatch");

  StateReader body(bytes.subspan(kHeaderBytes, length));
  Checkpoint c;
  c.config = body.get_string();
  c.data_id = body.get<uint64_t>();
  c.epoch = body.get<int>();
  c.step = body.get<uint64_t>();
  const auto ranks = body.get<int32_t>();
  if (ranks < 1) throw std::runtime_error("checkpoint names no ranks");
  c.weights = body.get_vector<std::byte>();
  c.ranks.resize(static_cast<size_t>(ranks));
  for (auto& r : c.ranks) r = body.get_vector<std::byte>();
  c.run = body.get_vector<std::byte>();
  body.expect_end();
  return c;
}

}  // namespace mpisgd
