#pragma once
// Spreading independent work over the cores.
//
// parallel_for(count, body) runs body(i) once for every i in 0..count-1 and returns when all
// have run. Natively OpenMP does it; in the pthreads WebAssembly build (the cross-origin-isolated
// page) a pool of workers started on first use, one fewer than max_threads(), with the calling
// thread taking items too (parallel.cpp); in the single-threaded build it is a loop. Every
// caller hands out items whose results do not depend on which thread runs them, so the bits are
// the same on any thread count.
//
// ATTNLAB_PRAGMA(omp ...) compiles to nothing where OpenMP is absent.
#ifdef _OPENMP
#include <omp.h>
#define ATTNLAB_PRAGMA(x) _Pragma(#x)
#else
#define ATTNLAB_PRAGMA(x)
#endif

#include <type_traits>

namespace attnlab {

#ifdef _OPENMP
inline int max_threads() { return omp_get_max_threads(); }
inline int thread_index() { return omp_get_thread_num(); }
inline void set_max_threads(int n) { omp_set_num_threads(n); }
#elif defined(__EMSCRIPTEN_PTHREADS__)
int max_threads();            // the pool's size with the caller: navigator.hardwareConcurrency, at most 8
int thread_index();           // 0 on the calling thread, 1.. on the pool's workers
void set_max_threads(int n);  // use at most n threads (n >= 1) from now on
void pool_run(int count, void (*run)(void* body, int i), void* body);
#else
inline int max_threads() { return 1; }
inline int thread_index() { return 0; }
inline void set_max_threads(int) {}
#endif

template <typename Body>
void parallel_for(int count, Body&& body, bool use_threads = true) {
#ifdef _OPENMP
    ATTNLAB_PRAGMA(omp parallel for schedule(dynamic) if (use_threads))
    for (int i = 0; i < count; ++i) body(i);
#elif defined(__EMSCRIPTEN_PTHREADS__)
    if (use_threads && count > 1)
        pool_run(
            count, [](void* b, int i) { (*static_cast<std::remove_reference_t<Body>*>(b))(i); }, &body);
    else
        for (int i = 0; i < count; ++i) body(i);
#else
    (void)use_threads;
    for (int i = 0; i < count; ++i) body(i);
#endif
}

}  // namespace attnlab
