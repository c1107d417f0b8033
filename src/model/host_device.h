#pragma once
// MPISGD_HD marks the per-row math that both the CPU path and the GPU kernels run
// (losses, their derivatives): nvcc compiles it for both sides, g++ (the CPU build, and
// the GPU path built against Thrust's OpenMP backend) sees plain functions. One source,
// so the CPU's unit tests check what the kernels compute.
#if defined(__CUDACC__)
#define MPISGD_HD __host__ __device__
#else
#define MPISGD_HD
#endif
