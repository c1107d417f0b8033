#pragma once
// Our own random generator (splitmix64), so a given seed draws the same numbers with any
// standard library: used for shuffling rows (sgd/shuffle.h), for the randomised top-k
// selections (sparse/topk_select.h) and by the data generator (apps/gen_data.cpp).
#include <cstdint>

namespace mpisgd {

__extension__ typedef unsigned __int128 uint128;  // GCC/Clang; -Wpedantic would flag the bare name

// splitmix64's increment: the golden ratio's 64 fractional bits.
inline constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// splitmix64's finaliser: a bijection of 64 bits with full avalanche, also a good hash.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t splitmix64(uint64_t& state) { return mix64(state += kGolden); }

// A draw from [0, n): Lemire's multiply-shift maps 64 random bits there without a division.
inline uint64_t draw_below(uint64_t& state, uint64_t n) {
  return static_cast<uint64_t>((static_cast<uint128>(splitmix64(state)) * n) >> 64);
}

}  // namespace mpisgd
