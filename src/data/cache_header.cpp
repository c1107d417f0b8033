#include "data/cache_header.h"

#include <bit>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <utility>

#include "data/crc32c.h"

namespace mpisgd {

namespace {
constexpr int64_t kHeaderBytes = sizeof(CacheHeader);
}  // namespace

uint32_t cache_header_crc(const CacheHeader& h) { return crc32c(0, &h, offsetof(CacheHeader, header_crc)); }

CacheLayout::CacheLayout(uint64_t rows, uint64_t nnz, uint32_t block) : block_bytes(block) {
  label = kHeaderBytes;
  row_ptr = label + static_cast<int64_t>(rows * sizeof(float));
  index = row_ptr + static_cast<int64_t>((rows + 1) * sizeof(uint64_t));
  value = index + static_cast<int64_t>(nnz * sizeof(uint32_t));
  table = value + static_cast<int64_t>(nnz * sizeof(float));
  blocks = (static_cast<uint64_t>(table - label) + block_bytes - 1) / block_bytes;
  end = table + static_cast<int64_t>(blocks * sizeof(uint32_t));
}

std::string CacheLayout::describe(uint64_t k) const {
  const int64_t b = block_begin(k), e = block_end(k);
  std::string what;
  const std::pair<int64_t, const char*> sections[] = {
      {label, "labels"}, {row_ptr, "row offsets"}, {index, "indices"}, {value, "values"}, {table, ""}};
  for (size_t s = 0; s + 1 < std::size(sections); ++s)
    if (sections[s].first < e && sections[s + 1].first > b)
      what += (what.empty() ? "" : ", ") + std::string(sections[s].second);
  return "block " + std::to_string(k + 1) + " of " + std::to_string(blocks) + " (bytes " + std::to_string(b) +
         " to " + std::to_string(e) + ": " + what + ")";
}

bool starts_like_cache(const char* head, size_t n) {
  if (n < sizeof kCacheMagic) return false;
  size_t in_place = 0;
  for (size_t i = 0; i < sizeof kCacheMagic; ++i) in_place += head[i] == kCacheMagic[i];
  if (in_place >= sizeof kCacheMagic / 2) return true;
  if (n < sizeof(CacheHeader)) return false;
  CacheHeader h;
  std::memcpy(&h, head, sizeof h);
  const bool reserved_zero = std::all_of(std::begin(h.reserved), std::end(h.reserved), [](char c) { return c == 0; });
  return h.version >= 1 && h.version <= kCacheVersion && reserved_zero;
}

CacheLayout check_cache_header(const CacheHeader& h, uint64_t file_size) {
  const auto size = static_cast<int64_t>(file_size);
  if (size < kHeaderBytes)
    throw CacheHeaderError(0, std::to_string(size) + " bytes, shorter than the header (truncated?)");
  if (std::memcmp(h.magic, kCacheMagic, sizeof h.magic) != 0) throw CacheHeaderError(0, "bad magic");
  const bool intact = h.header_crc == cache_header_crc(h);
  if (h.version != kCacheVersion)
    throw std::runtime_error("mpisgd binary cache of format version " + std::to_string(h.version) +
                             (intact ? "" : " (or a damaged header)") + ", this build reads version " +
                             std::to_string(kCacheVersion) + ": re-run `mpisgd convert` on the text file");
  if (!intact) throw CacheHeaderError(0, "header checksum mismatch");
  if (h.rows == 0)
    throw CacheHeaderError(offsetof(CacheHeader, rows), "the header says 0 rows (a file needs at least one)");
  if (!std::has_single_bit(h.block_bytes) || h.block_bytes < 4096 || h.block_bytes > (uint32_t{1} << 30))
    throw CacheHeaderError(offsetof(CacheHeader, block_bytes), "block size " + std::to_string(h.block_bytes) +
                                                                   " is not a power of two from 4 KiB to 1 GiB");
  // Every row takes 12 bytes and every entry 8: bounding them first keeps the layout's
  // sums from wrapping whatever the header says.
  const auto room = static_cast<uint64_t>(size - kHeaderBytes);
  if (h.rows > room / 12 || h.nnz > room / 8)
    throw CacheHeaderError(offsetof(CacheHeader, rows), "the header says " + std::to_string(h.rows) +
                                                            " rows and " + std::to_string(h.nnz) +
                                                            " entries, more than its " + std::to_string(size) +
                                                            " bytes hold");
  const CacheLayout at(h.rows, h.nnz, h.block_bytes);
  if (at.end != size)
    throw CacheHeaderError(0, std::to_string(size) + " bytes where the header says " + std::to_string(at.end) +
                                  " (truncated?)");
  return at;
}

}  // namespace mpisgd
