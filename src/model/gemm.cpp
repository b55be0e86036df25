// gemm() natively: with AVX-512 and at least kMinPackedRows rows, b packed per call for the tile
// of tile_avx512.h; otherwise Eigen (AVX-512 or AVX2 with FMA). Single-threaded per call: callers
// split the work into fixed panels, so the bits do not depend on the thread count.
//
// With fewer rows (decoding one token: lm_head's matrix-vector product) packing b would cost
// more than the product, and Eigen's matrix-vector kernel reads b in place at memory speed.
#include "model/gemm.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#if defined(__AVX512F__)
#include "model/tile_avx512.h"
#endif

namespace attnlab {

namespace {

constexpr int kMinPackedRows = 4;

void eigen_gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc,
                float alpha, const float* bias) {
    using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Stride = Eigen::OuterStride<>;
    Eigen::Map<RowMatrix, 0, Stride> C(c, m, n, Stride(ldc));
    if (k <= 0) {
        C.setZero();
    } else {
        const Eigen::Map<const RowMatrix, 0, Stride> A(a, m, k, Stride(lda));
        if (b_transposed) {
            const Eigen::Map<const RowMatrix, 0, Stride> B(b, n, k, Stride(ldb));
            C.noalias() = A * B.transpose();
        } else {
            const Eigen::Map<const RowMatrix, 0, Stride> B(b, k, n, Stride(ldb));
            C.noalias() = A * B;
        }
        if (alpha != 1.0f) C *= alpha;
    }
    if (bias) C.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, n);
}

#if defined(__AVX512F__)
// c = alpha * (a @ op(b)) + bias: each element a chain of fused multiply-adds from 0 over p in
// order, then times alpha plus its bias in one more (GemmSumOrder::fused_chain).
void packed_gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc,
                 float alpha, const float* bias) {
    using namespace avx512;
    for (int i = 0; i < m; ++i) std::fill(c + static_cast<size_t>(i) * ldc, c + static_cast<size_t>(i) * ldc + n, 0.0f);
    const int strips = (n + kStrip - 1) / kStrip;
    thread_local std::vector<float> buffer;  // one block of op(b), strip after strip; 64-byte aligned below
    buffer.resize(static_cast<size_t>(strips) * kDepthBlock * kStrip + 16);
    float* const packed = buffer.data() + (16 - (reinterpret_cast<std::uintptr_t>(buffer.data()) / sizeof(float)) % 16) % 16;
    for (int k0 = 0; k0 < k; k0 += kDepthBlock) {
        const int kc = std::min(kDepthBlock, k - k0);
        // op(b) rows k0..k0+kc, in strips of 32 columns, zero past n.
        for (int s = 0; s < strips; ++s) {
            const int j0 = s * kStrip, width = std::min(kStrip, n - j0);
            float* strip = packed + static_cast<size_t>(s) * kc * kStrip;
            if (b_transposed) {
                for (int jj = 0; jj < width; ++jj) {
                    const float* col = b + static_cast<size_t>(j0 + jj) * ldb + k0;  // op(b)(., j0 + jj) is row j0 + jj of b
                    for (int p = 0; p < kc; ++p) strip[p * kStrip + jj] = col[p];
                }
                for (int p = 0; p < kc; ++p) std::fill(strip + p * kStrip + width, strip + (p + 1) * kStrip, 0.0f);
            } else {
                pack_strip(b + static_cast<size_t>(k0) * ldb + j0, static_cast<size_t>(ldb), kc, width, strip);
            }
        }
        for (int i0 = 0; i0 < m; i0 += kTileRows) {
            const int rows = std::min(kTileRows, m - i0);
            for (int s = 0; s < strips; ++s) {
                const int left = n - s * kStrip;
                tiles[rows - 1](kc, a + static_cast<size_t>(i0) * lda + k0, lda, packed + static_cast<size_t>(s) * kc * kStrip,
                                c + static_cast<size_t>(i0) * ldc + s * kStrip, ldc, low_mask(left), high_mask(left), nullptr, 0);
            }
        }
    }
    if (alpha == 1.0f && !bias) return;
    for (int i = 0; i < m; ++i) {
        float* row = c + static_cast<size_t>(i) * ldc;
        for (int j = 0; j < n; ++j) row[j] = std::fma(row[j], alpha, bias ? bias[j] : 0.0f);
    }
}
#endif

}  // namespace

GemmSumOrder gemm_sum_order(int m, bool) {
#if defined(__AVX512F__)
    if (m >= kMinPackedRows) return GemmSumOrder::fused_chain;
#endif
    (void)m;
    return GemmSumOrder::unspecified;
}

void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc,
          float alpha, const float* bias) {
    if (m <= 0 || n <= 0) return;
#if defined(__AVX512F__)
    if (m >= kMinPackedRows) return packed_gemm(m, n, k, a, lda, b, ldb, b_transposed, c, ldc, alpha, bias);
#endif
    eigen_gemm(m, n, k, a, lda, b, ldb, b_transposed, c, ldc, alpha, bias);
}

}  // namespace attnlab
