#pragma once
// How fast this machine sums streams (thesis section 5.2.5): seconds per item of a sparse
// merge and per element of a dense addition, measured in about 20 ms of a start-up on
// vectors sized like a large model's partial sums (out of cache, as in the collectives).
namespace mpisgd {

struct SummationSpeed {
  double merge_item_s = 0;     // add_overlapping of two sparse streams, per input item
  double dense_element_s = 0;  // dense += dense, per element
};

SummationSpeed measure_summation_speed();

}  // namespace mpisgd
