#include "data/crc32c.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace mpisgd {
namespace {

// Polynomials are held bit-reflected, as the CRC register holds them: bit 31 is x^0.
constexpr uint32_t kPoly = 0x82F63B78u;
constexpr uint32_t kOne = 1u << 31;

// a(x) * b(x) modulo the CRC polynomial (zlib's multmodp).
constexpr uint32_t multiply(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t m = kOne; m; m >>= 1) {
    if (a & m) product ^= b;
    b = b & 1 ? (b >> 1) ^ kPoly : b >> 1;
  }
  return product;
}

// x^(2^k) modulo the polynomial.
constexpr std::array<uint32_t, 64> kSquares = [] {
  std::array<uint32_t, 64> s{};
  uint32_t p = kOne >> 1;  // x^1
  for (auto& v : s) {
    v = p;
    p = multiply(p, p);
  }
  return s;
}();

// x^(8n): what feeding n zero bytes multiplies the register by.
constexpr uint32_t zero_bytes_factor(uint64_t n) {
  uint32_t p = kOne;
  for (size_t k = 3; n; n >>= 1, ++k)
    if (n & 1) p = multiply(kSquares[k], p);
  return p;
}

// The raw register (no inversion in or out) after n zero bytes.
uint32_t shift(uint32_t reg, uint64_t n) { return multiply(zero_bytes_factor(n), reg); }

inline uint64_t load_le64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

#if defined(__SSE4_2__)

// Shifting the register by a fixed number of zero bytes is linear in its four bytes: four
// lookups instead of a multiplication.
struct ShiftBy {
  std::array<std::array<uint32_t, 256>, 4> t{};
  explicit constexpr ShiftBy(uint64_t n) {
    const uint32_t factor = zero_bytes_factor(n);
    for (uint32_t k = 0; k < 4; ++k)
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = multiply(factor, b << (8 * k));
  }
  uint32_t operator()(uint32_t reg) const {
    return t[0][reg & 0xff] ^ t[1][reg >> 8 & 0xff] ^ t[2][reg >> 16 & 0xff] ^ t[3][reg >> 24];
  }
};

// The instruction has a latency of three cycles and a throughput of one: three streams
// over adjacent thirds of a stretch keep it busy, and the thirds' registers are joined by
// shifting (Mark Adler's crc32c.c). Long stretches first, then short ones for the rest.
constexpr size_t kLong = 8192, kShort = 256;
constexpr ShiftBy kShiftLong(kLong), kShiftShort(kShort);

template <size_t kStream>
uint32_t three_streams(uint32_t reg, const unsigned char*& p, size_t& n, const ShiftBy& shift_stream) {
  for (; n >= 3 * kStream; p += 3 * kStream, n -= 3 * kStream) {
    uint64_t a = reg, b = 0, c = 0;
    for (size_t i = 0; i < kStream; i += 8) {
      a = _mm_crc32_u64(a, load_le64(p + i));
      b = _mm_crc32_u64(b, load_le64(p + kStream + i));
      c = _mm_crc32_u64(c, load_le64(p + 2 * kStream + i));
    }
    reg = shift_stream(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
    reg = shift_stream(reg) ^ static_cast<uint32_t>(c);
  }
  return reg;
}

uint32_t update(uint32_t reg, const unsigned char* p, size_t n) {
  reg = three_streams<kLong>(reg, p, n, kShiftLong);
  reg = three_streams<kShort>(reg, p, n, kShiftShort);
  for (; n >= 8; p += 8, n -= 8) reg = static_cast<uint32_t>(_mm_crc32_u64(reg, load_le64(p)));
  for (; n; ++p, --n) reg = _mm_crc32_u8(reg, *p);
  return reg;
}

#else

// Slicing-by-8: table k maps a byte to its share after k more zero bytes.
constexpr auto kTables = [] {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = c & 1 ? (c >> 1) ^ kPoly : c >> 1;
    t[0][b] = c;
  }
  for (size_t k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = t[k - 1][b] >> 8 ^ t[0][t[k - 1][b] & 0xff];
  return t;
}();

uint32_t update(uint32_t reg, const unsigned char* p, size_t n) {
  const auto& t = kTables;
  for (; n >= 8; p += 8, n -= 8) {
    const uint64_t w = load_le64(p) ^ reg;
    reg = t[7][w & 0xff] ^ t[6][w >> 8 & 0xff] ^ t[5][w >> 16 & 0xff] ^ t[4][w >> 24 & 0xff] ^
          t[3][w >> 32 & 0xff] ^ t[2][w >> 40 & 0xff] ^ t[1][w >> 48 & 0xff] ^ t[0][w >> 56];
  }
  for (; n; ++p, --n) reg = reg >> 8 ^ t[0][(reg ^ *p) & 0xff];
  return reg;
}

#endif

}  // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t n) {
  return ~update(~crc, static_cast<const unsigned char*>(data), n);
}

uint32_t crc32c_zeros(uint64_t n) { return ~shift(~0u, n); }

uint32_t crc32c_term(const void* data, size_t n, uint64_t after) {
  return shift(update(0, static_cast<const unsigned char*>(data), n), after);
}

}  // namespace mpisgd
