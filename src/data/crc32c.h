#pragma once
// CRC-32C (Castagnoli, as in iSCSI and ext4), the checksum of the binary cache's blocks:
// the SSE4.2 instruction in three interleaved streams where the build targets it
// (x86-64-v2 and later), slicing-by-8 tables elsewhere.
//
// The CRC is affine over XOR, which lets ranks hash the pieces of one block that each of
// them wrote and combine the results without exchanging the bytes:
//   crc32c(0, M) == crc32c_zeros(|M|) ^ crc32c_term(M, 0), and
//   crc32c_term(0^a || P || 0^b, 0) == crc32c_term(P, b)   (0^a: a zero bytes),
// so a block's CRC is crc32c_zeros(its length) XOR the terms of its pieces, in any order.
#include <cstddef>
#include <cstdint>

namespace mpisgd {

// The CRC-32C of bytes A followed by the n bytes at `data`, given crc == crc32c(0, A)
// (0 for no A).
uint32_t crc32c(uint32_t crc, const void* data, size_t n);

// crc32c(0, n zero bytes).
uint32_t crc32c_zeros(uint64_t n);

// The share of the n bytes at `data` in the CRC of a block where `after` bytes follow them.
uint32_t crc32c_term(const void* data, size_t n, uint64_t after);

}  // namespace mpisgd
