// gemm() with b a WeightMatrix (gemm.h): 16-bit b read in place where the build can for this
// product (gemm_16bit_in_place), else widened into a per-thread buffer, the slice this call
// reads, then the fp32 product of this build. Widening is exact, so the bits are the fp32
// product's on the widened values.
#include <cstddef>
#include <vector>

#include "model/gemm.h"

namespace attnlab {

void gemm(int m, int n, int k, const float* a, int lda, WeightMatrix b, int ldb, bool b_transposed, float* c, int ldc, float alpha,
          const float* bias) {
    if (b.f32() || m <= 0 || n <= 0 || k <= 0) return gemm(m, n, k, a, lda, b.f32(), ldb, b_transposed, c, ldc, alpha, bias);
    if (gemm_16bit_in_place(m, n, k, a, lda, b, ldb, b_transposed, c, ldc, alpha, bias)) return;
    thread_local std::vector<float> wide;
    wide.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(k));
    // op(b) (k, n): b (n, k) when transposed, else b (k, n); either way stored row by row.
    const int rows = b_transposed ? n : k, cols = b_transposed ? k : n;
    widen_block(b, static_cast<std::size_t>(ldb), rows, cols, wide.data(), static_cast<std::size_t>(cols));
    gemm(m, n, k, a, lda, wide.data(), cols, b_transposed, c, ldc, alpha, bias);
}

}  // namespace attnlab
