#pragma once
// Force-included after SimGrid's smpi_helpers.h in the SIM=1 build (Makefile). SMPI turns
// exit, getpid and the allocation functions into macros so that a simulated rank's calls
// reach the simulator; as function-like macros they also rewrite `app.exit(e)` (CLI11)
// and `std::free(p)`, which then no longer compile. mpisgd ends through MPI_Finalize and
// MPI_Abort, which SMPI intercepts anyway, and allocates nothing it means to share between
// ranks, so the C library's own functions are the right ones. SMPI's sleep and clock
// macros stay: those are what move simulated time.
#undef exit
#undef malloc
#undef calloc
#undef realloc
#undef free
