#pragma once
// The binary cache's header and layout (host byte order, checked by the magic):
//   CacheHeader (64 B) | label f32[R] | row_ptr u64[R+1] | index u32[nnz] | value f32[nnz] | crc u32[K]
// The bytes from the labels to the table are checked in K blocks of block_bytes (the
// last one shorter): crc[k] is block k's CRC-32C (data/crc32c.h); the header holds the
// CRC of the table and, in its last field, of its own first 60 bytes.
// Kept apart from the MPI-IO reader (data/binary_cache.h) so that the header checks can
// be fuzzed on their own (fuzz/binary_cache_header_fuzz.cpp).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace mpisgd {

struct CacheHeader {
  char magic[8];
  uint32_t version;
  uint32_t dim;
  uint64_t rows;
  uint64_t nnz;
  uint32_t block_bytes;  // a power of two
  uint32_t table_crc;    // CRC-32C of crc u32[K]
  char reserved[20];     // zero
  uint32_t header_crc;   // CRC-32C of the bytes above, so a damaged header is named as such
};
static_assert(sizeof(CacheHeader) == 64);

inline constexpr char kCacheMagic[8] = {'M', 'P', 'I', 'S', 'G', 'D', 'C', '\n'};
// 3: CRC-32C per block. Older caches are refused with a request to convert again.
inline constexpr uint32_t kCacheVersion = 3;

uint32_t cache_header_crc(const CacheHeader& h);

// Where the sections and the blocks lie (file offsets), for sizes already known to fit
// the file.
struct CacheLayout {
  uint64_t block_bytes, blocks;
  int64_t label, row_ptr, index, value, table, end;

  CacheLayout(uint64_t rows, uint64_t nnz, uint32_t block);

  uint64_t block_of(int64_t at) const { return static_cast<uint64_t>(at - label) / block_bytes; }
  int64_t block_begin(uint64_t k) const { return label + static_cast<int64_t>(k * block_bytes); }
  int64_t block_end(uint64_t k) const { return std::min(block_begin(k + 1), table); }
  // "block 3 of 9 (bytes ... to ...: indices, values)", for messages.
  std::string describe(uint64_t k) const;
};

// A header that cannot start a cache of its file's size: the cause, and the file offset
// of the field at fault.
struct CacheHeaderError : std::runtime_error {
  CacheHeaderError(uint64_t at, const std::string& cause) : std::runtime_error(cause), at(at) {}
  uint64_t at;
};

// Whether a file whose first `n` bytes are `head` is a cache (intact or damaged) rather
// than LIBSVM text: its magic with at least half of the bytes in place, or, where the
// whole magic is lost, a format version this project has written followed by the zero
// reserved bytes. Text never holds those NULs in those places; a NUL anywhere else is the
// text parser's to name with its line.
bool starts_like_cache(const char* head, size_t n);

// The header checked on its own and against the file's size, trusting none of its sizes
// (what read_binary_cache checks before it reads past the header). Throws
// CacheHeaderError, or std::runtime_error for another format version.
CacheLayout check_cache_header(const CacheHeader& h, uint64_t file_size);

}  // namespace mpisgd
