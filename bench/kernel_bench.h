#pragma once
// attnlab_bench --kernel (kernel_bench.cpp).
namespace attnlab {

// Prints the run-time choice of tile and every kernel's speed against Eigen on the forward
// pass's shapes, one thread, best of `repeats`. 0, or 1 if two kernels disagreed.
int run_kernel_bench(int repeats);

}  // namespace attnlab
