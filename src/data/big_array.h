#pragma once
// Vectors for the big arrays of a run: the CSR of a rank's rows, the feature order's
// tables, the streams and local SGD's copy of the model. (The weight slots take fresh
// pages of their own, model/zeroed_array.h, for the same reason as below.)
//
// All default-initialise: resize() leaves trivial elements unwritten, so an array that
// is about to be overwritten (a binary cache read) is not zero-filled first.
//
// HugePageArray also places arrays of 4 MiB and more on a 2 MiB boundary and asks the
// kernel for transparent huge pages. For the weights that pays: SGD reads them at random,
// and a URL-sized model's weight slots are thousands of small pages, more than a
// second-level TLB holds, but a dozen huge ones. The CSR takes them too: an epoch reads
// its rows in shuffled order, each from anywhere in it, and ran faster on huge pages
// (URL-like rows on the 2-core VM: 0.26 s against 0.35 s, medians), while their first
// writes cost no more than small pages' there; so does the feature order's N-sized table,
// its counts and then its map (docs/performance.md#set-up-against-the-epochs), and local
// SGD's copy of the model, written whole at its first step.
//
// A stream (sparse/stream.h) reserves dense room it mostly never writes, and a huge page
// maps, and zeroes, 2 MiB at its first write: a sparse step's sum (~100 KB on URL-like
// rows) should map no more than it writes. But a model average's streams carry MBs of
// pairs (a local SGD round's changes: 3 MB on URL-like rows), and a small page's first
// write is a fault of its own, about 40 us each on the 2-core VM. HugeTailArray keeps
// its first 256 KiB on small pages and asks for huge ones past them: local SGD's page
// faults fell from 21,000 to 6,400 a rank in three URL-like epochs at P = 2
// (docs/performance.md#the-first-epoch).
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace mpisgd {

// Which pages an array's memory asks for.
enum class Pages {
  small,     // the kernel's default
  huge,      // transparent huge pages throughout, for arrays written or read whole
  huge_tail  // small pages for the first 256 KiB, huge ones past it (streams, below)
};

template <class T, Pages kPages>
struct BigArrayAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kMinHugeBytes = size_t{4} << 20;

  template <class U>
  struct rebind {
    using other = BigArrayAllocator<U, kPages>;
  };

  BigArrayAllocator() = default;
  template <class U>
  BigArrayAllocator(const BigArrayAllocator<U, kPages>&) noexcept {}

  static bool huge(size_t n) { return kPages != Pages::small && n * sizeof(T) >= kMinHugeBytes; }

  // Pages::huge_tail: the array starts this far below a huge page's boundary, on small pages.
  static constexpr size_t kSmallHead = size_t{256} << 10;
  static constexpr size_t kLead = kPages == Pages::huge_tail ? kHugePage - kSmallHead : 0;

  T* allocate(size_t n) {
    if (!huge(n)) return static_cast<T*>(::operator new(n * sizeof(T)));
    const size_t rounded = (kLead + n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
    char* p = static_cast<char*>(std::aligned_alloc(kHugePage, rounded));
    if (!p) throw std::bad_alloc();
    // Advice only: without THP, small pages still work. The head is advised too, since
    // memory the heap hands out again keeps an earlier array's advice.
    const size_t small = kLead ? kHugePage : 0;
    if (small) madvise(p, small, MADV_NOHUGEPAGE);
    madvise(p + small, rounded - small, MADV_HUGEPAGE);
    return reinterpret_cast<T*>(p + kLead);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (huge(n))
      std::free(reinterpret_cast<char*>(p) - kLead);
    else
      ::operator delete(p);
  }

  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  bool operator==(const BigArrayAllocator<U, kPages>&) const noexcept {
    return true;
  }
};

template <class T>
using BigArray = std::vector<T, BigArrayAllocator<T, Pages::small>>;
template <class T>
using HugePageArray = std::vector<T, BigArrayAllocator<T, Pages::huge>>;
template <class T>
using HugeTailArray = std::vector<T, BigArrayAllocator<T, Pages::huge_tail>>;

// Maps the pages of elements [from, from + count) of a just-sized array in one call
// (Linux 5.14+; elsewhere the first write maps them, as always). Before a read into the
// range this is quicker than taking a page fault per page inside the copy.
template <class T, Pages kPages>
void map_pages(std::vector<T, BigArrayAllocator<T, kPages>>& a, size_t from, size_t count) {
#ifdef MADV_POPULATE_WRITE
  constexpr uintptr_t kPage = 4096;
  const auto begin = reinterpret_cast<uintptr_t>(a.data() + from) & ~(kPage - 1);
  const auto end = (reinterpret_cast<uintptr_t>(a.data() + from + count) + kPage - 1) & ~(kPage - 1);
  if (count) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)a, (void)from, (void)count;
#endif
}

}  // namespace mpisgd
