#pragma once
// Binary cache of a LIBSVM file, read back much faster than text.
// Layout (host byte order, checked by the magic):
//   CacheHeader (64 B) | label f32[R] | row_ptr u64[R+1] | index u32[nnz] | value f32[nnz] | crc u32[K]
// The bytes from the labels to the table are checked in K blocks of block_bytes (the
// last one shorter): crc[k] is block k's CRC-32C (data/crc32c.h); the header holds the
// CRC of the table and, in its last field, of its own first 60 bytes.
// Rank r holds rows [R*r/P, R*(r+1)/P): labels and row offsets read with MPI-IO, its
// index and value sections (nearly all the bytes) mapped read-only where the file can be
// mapped, read with MPI-IO where not. Each rank checks every block its bytes lie in,
// reading the rest of the blocks at the ends of its ranges, so together the ranks check
// every byte; it also checks what a CRC cannot (a file written by something else): row
// offsets ascending within nnz, labels and values finite, indices below dim.
#include <cstdint>
#include <string>

#include <mpi.h>

#include "data/dataset.h"

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

// Collective: true if `path` starts like a cache (read by rank 0, broadcast): with the
// magic, or damaged, with half of the magic's bytes in place or a NUL byte in its first
// 64 bytes. Bytes from the first '#' on are not looked at: LIBSVM text holds neither
// outside a comment, while a cache's header always holds NULs.
bool is_binary_cache(const std::string& path, MPI_Comm comm);

// Collective: each rank holds its rows of one file (as read_libsvm_text leaves them);
// writes `path` through a temporary name, renamed once complete.
void write_binary_cache(const Dataset& local, const std::string& path, MPI_Comm comm);

enum class CacheRead { map_or_read, read };

// Collective: this rank's rows of the cache. Throws JobFailed on every rank, naming the
// file and the cause (and the row or block), on a bad magic, version, size, checksum or
// value.
Dataset read_binary_cache(const std::string& path, MPI_Comm comm, CacheRead how = CacheRead::map_or_read);

}  // namespace mpisgd
