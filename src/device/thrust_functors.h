#pragma once
// Small functors more than one device file needs. Device code cannot call the host's
// helpers in sparse/topk_kernels.h (they use SSE), so the magnitude is stated here again,
// with the same meaning.
#include <cstdint>
#include <cstring>

#include "model/host_device.h"

namespace mpisgd::thrust_detail {

// The bits of |v|, which order as the magnitudes do (as topk::magnitude).
struct Magnitude {
  MPISGD_HD uint32_t operator()(float v) const {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits & 0x7fffffffu;
  }
};

// A magnitude at or above threshold t: what a top-k threshold keeps.
struct AtLeast {
  uint32_t t;
  MPISGD_HD bool operator()(uint32_t m) const { return m >= t; }
};

struct IsSet {
  MPISGD_HD bool operator()(uint8_t x) const { return x != 0; }
};

}  // namespace mpisgd::thrust_detail
