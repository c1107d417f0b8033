#pragma once
// Whether this build runs its ranks under SimGrid's SMPI (`make SIM=1`, docs/design.md,
// "Simulated clusters"): all ranks in one process, one thread each, MPI_THREAD_SINGLE. What
// a real run can do and a simulated one cannot is refused at start, naming the flag.
namespace mpisgd {

#ifdef MPISGD_SIM
inline constexpr bool kSimulated = true;
#else
inline constexpr bool kSimulated = false;
#endif

}  // namespace mpisgd
