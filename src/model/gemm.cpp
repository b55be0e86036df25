// gemm() natively: with AVX-512 or AVX2 and FMA, and at least kMinPackedRows rows, op(b) packed
// per call a block at a time for the tiles of tile_x86.h, the kind the run-time choice picked for
// the product's class (tile_choice.h); otherwise Eigen. Single-threaded per call:
// callers split the work into fixed panels, so the bits do not depend on the thread count.
//
// With fewer rows (decoding one token: lm_head's matrix-vector product) packing b would cost
// more than the product, and Eigen's matrix-vector kernel reads b in place at memory speed.
#include "model/gemm.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model/tile_choice.h"
#include "model/tile_x86.h"

namespace attnlab {

namespace {

[[maybe_unused]] constexpr int kMinPackedRows = 4;  // used with the x86 tiles only

void eigen_gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc, float alpha,
                const float* bias) {
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

#if defined(ATTNLAB_X86_TILES)
using namespace x86;

// Columns of op(b) packed at a time: kDepthBlock x 256 floats, 256 KB, which stays in a core's
// L2 while every row tile of a passes over it (1 MB on Zen 5, 2 MB on Sapphire Rapids).
constexpr int kColumnBlock = 256;

// out[x] = column x of the kLanes x kLanes block whose row q is in[q].
#if defined(__AVX512F__)
inline void transpose_block(const Vec in[kLanes], Vec out[kLanes]) {
    __m512 t[16], u[4][4];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(in[2 * i], in[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(in[2 * i], in[2 * i + 1]);
    }
    // u[g][j], lane l: rows 4 g .. 4 g + 3 of column 4 l + j.
    for (int g = 0; g < 4; ++g) {
        u[g][0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        u[g][1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
        u[g][2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        u[g][3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
    }
    for (int j = 0; j < 4; ++j) {
        const __m512 p = _mm512_shuffle_f32x4(u[0][j], u[1][j], 0x44), q = _mm512_shuffle_f32x4(u[0][j], u[1][j], 0xEE);
        const __m512 r = _mm512_shuffle_f32x4(u[2][j], u[3][j], 0x44), s = _mm512_shuffle_f32x4(u[2][j], u[3][j], 0xEE);
        out[j] = _mm512_shuffle_f32x4(p, r, 0x88);
        out[4 + j] = _mm512_shuffle_f32x4(p, r, 0xDD);
        out[8 + j] = _mm512_shuffle_f32x4(q, s, 0x88);
        out[12 + j] = _mm512_shuffle_f32x4(q, s, 0xDD);
    }
}
#else
inline void transpose_block(const Vec in[kLanes], Vec out[kLanes]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_ps(in[2 * i], in[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(in[2 * i], in[2 * i + 1]);
    }
    // u[4 h + j], in each 128-bit half: rows 4 h .. 4 h + 3 of column j (and of 4 + j above).
    for (int h = 0; h < 2; ++h) {
        u[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
        u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
        u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
        u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
    }
    for (int j = 0; j < 4; ++j) {
        out[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        out[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}
#endif

// op(b) rows k0..k0+kc, columns j0..j0+nc as strips of kc x kStrip (strip s at out + s kc kStrip),
// zero past nc. With b transposed, op(b)(p, j) = b[j ldb + p]: kLanes x kLanes blocks transposed in
// registers (element by element, the strided writes cost as much as a short product).
void pack_block(const float* b, size_t ldb, bool transposed, int k0, int kc, int j0, int nc, float* out) {
    const int strips = (nc + kStrip - 1) / kStrip;
    for (int s = 0; s < strips; ++s) {
        float* strip = out + static_cast<size_t>(s) * kc * kStrip;
        const int j = j0 + s * kStrip, width = std::min(kStrip, j0 + nc - j);
        if (!transposed) {
            pack_strip(b + static_cast<size_t>(k0) * ldb + j, ldb, kc, width, strip);
            continue;
        }
        for (int half = 0; half < 2; ++half) {
            const int columns = std::clamp(width - kLanes * half, 0, kLanes);
            for (int p0 = 0; p0 < kc; p0 += kLanes) {
                const int depth = std::min(kLanes, kc - p0);
                const Lanes lanes = lanes_left(depth, 0);
                Vec in[kLanes], cols[kLanes];
                for (int q = 0; q < kLanes; ++q)
                    in[q] = q < columns ? load_lanes(lanes, b + static_cast<size_t>(j + kLanes * half + q) * ldb + k0 + p0) : zero();
                transpose_block(in, cols);
                for (int x = 0; x < depth; ++x) store(strip + (p0 + x) * kStrip + kLanes * half, cols[x]);
            }
        }
    }
}
#endif

}  // namespace

#if defined(ATTNLAB_X86_TILES)
void x86::packed_gemm(const TileKind& kind, int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed,
                      float* c, int ldc, float alpha, const float* bias) {
    for (int i = 0; i < m; ++i) std::fill(c + static_cast<size_t>(i) * ldc, c + static_cast<size_t>(i) * ldc + n, 0.0f);
    thread_local std::vector<float> buffer;  // one block of op(b); 64-byte aligned below
    buffer.resize(static_cast<size_t>(kDepthBlock) * kColumnBlock + 16);
    float* const packed = buffer.data() + (16 - (reinterpret_cast<std::uintptr_t>(buffer.data()) / sizeof(float)) % 16) % 16;
    for (int j0 = 0; j0 < n; j0 += kColumnBlock) {
        const int nc = std::min(kColumnBlock, n - j0);
        for (int k0 = 0; k0 < k; k0 += kDepthBlock) {
            const int kc = std::min(kDepthBlock, k - k0);
            pack_block(b, static_cast<size_t>(ldb), b_transposed, k0, kc, j0, nc, packed);
            multiply_block(kind, WeightType::f32, m, nc, kc, a + k0, static_cast<size_t>(lda), packed, static_cast<size_t>(kc) * kStrip,
                           c + j0, static_cast<size_t>(ldc));
        }
    }
    if (alpha == 1.0f && !bias) return;
    for (int i = 0; i < m; ++i) {
        float* row = c + static_cast<size_t>(i) * ldc;
        for (int j = 0; j < n; ++j) row[j] = std::fma(row[j], alpha, bias ? bias[j] : 0.0f);
    }
}
#endif

GemmSumOrder gemm_sum_order(int m, bool) {
#if defined(ATTNLAB_X86_TILES)
    if (m >= kMinPackedRows) return GemmSumOrder::fused_chain;
#endif
    (void)m;
    return GemmSumOrder::unspecified;
}

void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc, float alpha,
          const float* bias) {
    if (m <= 0 || n <= 0) return;
#if defined(ATTNLAB_X86_TILES)
    if (m >= kMinPackedRows)
        return x86::packed_gemm(tile_for(gemm_class(m, b_transposed)), m, n, k, a, lda, b, ldb, b_transposed, c, ldc, alpha, bias);
#endif
    eigen_gemm(m, n, k, a, lda, b, ldb, b_transposed, c, ldc, alpha, bias);
}

// Natively a decode step's 16-bit products are few (the linear maps' W is packed at load with
// the x86 tiles), so every 16-bit b is widened into a buffer first (gemm_weights.cpp).
bool gemm_16bit_in_place(int, int, int, const float*, int, WeightMatrix, int, bool, float*, int, float, const float*) { return false; }

}  // namespace attnlab
