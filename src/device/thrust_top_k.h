#pragma once
// The exact top-k selection on a Thrust device: the k largest magnitudes of n floats, ties
// to the lower positions, which is what the host's exact selector keeps
// (sparse/topk_kernels.h), by the same plan, the sample-threshold step of Floyd and
// Rivest's SELECT (CACM 18(3), 1975), in device passes instead of a sort of all n:
//   1. s magnitudes from evenly spread positions, s = max(cbrt(2.25 k n), sqrt(3 n)),
//      sorted; their r-th largest t0, r = k s/n + 3 sqrt(k s/n) + 3, keeps all of the k
//      largest and about k + 3 sqrt(k n/s) + 3 n/s values in all;
//   2. one count of the n at or above t0 (while fewer than k are, r grows fourfold; past
//      r = s, t0 = 0 and all n are candidates);
//   3. the candidates' positions compacted (one pass over n) and their magnitudes sorted:
//      the k-th is the threshold t, and of the candidates equal to it the first k - (those
//      above it) are kept.
// Cost: two passes over n and sorts of a few thousand and of c ~ k values, against a sort
// of all n. Read only by device code, which both GPU builds compile.
#include <cstdint>

#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>

#include "device/thrust_temporaries.h"

namespace mpisgd::thrust_detail {

struct TopKScratch {
  thrust::device_vector<uint32_t> sample, cand, cand_mag, sorted, tie_rank;
};

// Replaces `kept` with the ascending positions of the k largest magnitudes of values[0, n),
// 1 <= k < n, ties to the lower positions; returns the k-th largest magnitude's bits.
// Thrust's temporaries come from `temporaries`.
uint32_t top_k_positions(thrust::device_ptr<const float> values, uint64_t n, uint64_t k,
                         thrust::device_vector<uint32_t>& kept, TopKScratch& s, TemporaryCache& temporaries);

}  // namespace mpisgd::thrust_detail
