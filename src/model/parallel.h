#pragma once
// Natively, OpenMP spreads independent work over the cores; in wasm everything runs on one.
// ATTNLAB_PRAGMA(omp ...) compiles to nothing where OpenMP is absent, so the same loops
// build warning-free in both.
#ifdef _OPENMP
#include <omp.h>
#define ATTNLAB_PRAGMA(x) _Pragma(#x)
#else
#define ATTNLAB_PRAGMA(x)
#endif

namespace attnlab {

#ifdef _OPENMP
inline int max_threads() { return omp_get_max_threads(); }
inline int thread_index() { return omp_get_thread_num(); }
inline void set_max_threads(int n) { omp_set_num_threads(n); }
#else
inline int max_threads() { return 1; }
inline int thread_index() { return 0; }
inline void set_max_threads(int) {}
#endif

}  // namespace attnlab
