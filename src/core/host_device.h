// Marks plain C++ helpers that CUDA code also calls (the GPU-driven receiver's loop parses
// frames and sequence numbers with the same functions as the CPU paths).
#pragma once

#ifdef __CUDACC__
#define NDQ_HOST_DEVICE __host__ __device__
#else
#define NDQ_HOST_DEVICE
#endif
