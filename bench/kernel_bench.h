#pragma once
// attnlab_bench --kernel (kernel_bench.cpp).
namespace attnlab {

// Prints the run-time choice of tile and every kernel's speed against Eigen on the forward
// pass's shapes, one thread, best of `repeats`. 0, or 1 if two kernels disagreed.
int run_kernel_bench(int repeats);

// Only the last table of run_kernel_bench: SmolLM2-135M's linear maps with F32, BF16 and F16
// weights (attnlab_bench --weight-types). 0, or 1 if a 16-bit product gave other bits than F32.
int run_weight_type_bench(int repeats);

}  // namespace attnlab
