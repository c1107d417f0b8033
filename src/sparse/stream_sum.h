#pragma once
// Building and summing streams: the eight cases of thesis section 4.1.3, for two streams
// over the same range (overlapping indices, "case 1") and over two adjacent ranges (the
// concatenation of an allgather, "case 2"), each sparse+sparse, dense+dense, dense+sparse
// and sparse+dense. Results land in place where the layout allows it; otherwise in a
// scratch stream that is swapped in, so no call allocates.
#include <span>

#include "sparse/stream.h"

namespace mpisgd {

// Encodes sorted (index, value) pairs whose indices lie in `range` as a stream over it,
// dense if there are more than the switch allows.
template <class V>
void encode(std::span<const uint32_t> index, std::span<const V> value, Range range, const DenseSwitch& sw,
            Stream<V>& out);

// A sparse stream over `range` in the form encode() gives its pairs: `in` itself while
// they are within the switch, else their dense form, written to `dense`. For pairs
// written straight into a stream (a gradient, a top-k selection), so that they reach a
// collective without being copied.
template <class V>
const Stream<V>& switched(const Stream<V>& in, Range range, const DenseSwitch& sw, Stream<V>& dense);

// out = the part of `in` (a stream over `whole`) that lies in `part`, as a stream over
// `part`: the pairs in it, sparse if they are few enough, else the dense slice.
template <class V>
void extract(StreamView<V> in, Range whole, Range part, const DenseSwitch& sw, Stream<V>& out);
template <class V>
void extract(const Stream<V>& in, Range whole, Range part, const DenseSwitch& sw, Stream<V>& out) {
  extract(in.view(), whole, part, sw, out);
}

// Writes the dense form of `in` (a stream over `range`) to out[0, range.length()).
template <class V>
void write_dense(const Stream<V>& in, Range range, V* out);

// out = the dense form of `in` over `range`.
template <class V>
void densify(const Stream<V>& in, Range range, Stream<V>& out);

// acc += in, both over `range`. May swap `in` or `scratch` with `acc`, so both lose
// their contents. Every index gets exactly one addition, acc + in, in whichever form, so
// the values do not depend on the representations (IEEE addition is commutative).
template <class V>
void add_overlapping(Stream<V>& acc, Stream<V>& in, Stream<V>& scratch, Range range, const DenseSwitch& sw);

// out = `in` (a stream over `range`), sparse whenever its non-zero values' pairs take
// fewer bytes than the dense form. For a stream that travels on without being summed
// again, as an allgather's block does: the dense switch's speed bound is about summation,
// so a sum that crossed it may still be far cheaper to send as pairs. Zeros are dropped.
template <class V>
void compact(const Stream<V>& in, Range range, Stream<V>& out);

// lower = lower ++ upper, where `upper_range` starts where `lower_range` ends; the result
// covers both ranges, dense only past the byte bound: a concatenation sums nothing, so
// only the bytes decide. `lower` needs the capacity of the joined range. May swap
// `scratch` with `lower`.
template <class V>
void concat_disjoint(Stream<V>& lower, StreamView<V> upper, Range lower_range, Range upper_range, Stream<V>& scratch);
template <class V>
void concat_disjoint(Stream<V>& lower, const Stream<V>& upper, Range lower_range, Range upper_range,
                     Stream<V>& scratch) {
  concat_disjoint(lower, upper.view(), lower_range, upper_range, scratch);
}

// Number of non-zero values a stream holds (a dense one is scanned).
template <class V>
uint64_t nonzeros(const Stream<V>& s);

}  // namespace mpisgd
