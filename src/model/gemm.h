#pragma once
// The fp32 matrix product of the forward pass's attention, its logits and the analyses (the
// linear maps go through LinearWeight, linear.h):
//
//   c (m, n) = alpha * a (m, k) @ op(b) + bias (n)      op(b) = b (k, n), or b^T when b is (n, k)
//
// All matrices are row-major with a row stride (lda, ldb, ldc >= their column counts); bias may
// be null. c must not overlap a or b.
//
// Three builds of it: natively with AVX-512 or AVX2 and FMA, from 4 rows, register tiles of our
// own over op(b) packed per call (gemm.cpp, tile_x86.h), of the kind a short measurement at first use found
// fastest on this CPU (tile_choice.h); natively otherwise (no AVX2) Eigen; in WebAssembly a
// register-blocked SIMD128 kernel over packed panels of b (gemm_simd128.cpp), since Eigen's SSE
// path on SIMD128 reaches about half of what SIMD128 allows.
//
// Our kernels define every element's bits (GemmSumOrder below): they never depend on the tiling,
// the kind of tile picked, the strides or the thread count (docs/kernels.md).
#include "model/weight_matrix.h"

namespace attnlab {

void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc, float alpha = 1.0f,
          const float* bias = nullptr);

// The same with b a matrix of weights (weight_matrix.h). A 16-bit b is widened, the part of it
// this call reads, into a buffer of the calling thread's, then multiplied as an fp32 b: the bits
// are those of an fp32 b that holds the widened values. Callers pass slices (a panel of columns,
// a slice of the vocabulary), so the buffer stays the size of a slice, never of the model.
void gemm(int m, int n, int k, const float* a, int lda, WeightMatrix b, int ldb, bool b_transposed, float* c, int ldc, float alpha = 1.0f,
          const float* bias = nullptr);

// The same for fewer rows than the kernel packs b for (a decode step), where this build reads
// 16-bit b in place and widens it in registers (WebAssembly, bfloat16): true when it did, false
// for gemm() above to do it. Widening a decode step's weights into a buffer first wrote them and
// read them again, and made BF16 decoding 1.3x slower than fp32 in the page. Same bits.
bool gemm_16bit_in_place(int m, int n, int k, const float* a, int lda, WeightMatrix b, int ldb, bool b_transposed, float* c, int ldc,
                         float alpha, const float* bias);

// How gemm() sums c(i, j) before multiplying by alpha and adding the bias.
enum class GemmSumOrder {
    plain_loop,   // over p = 0..k-1 in order, one multiply and one add at a time
    four_lanes,   // lane l sums p = l, l + 4, ... below k rounded down to 4, in order; then
                  // (l0 + l1) + (l2 + l3); then the last k mod 4 terms in order
    fused_chain,  // a chain of fused multiply-adds over p = 0..k-1 in order, from 0; then
                  // fma(sum, alpha, bias) (natively with the x86 tiles, at least 4 rows; in the
                  // relaxed-SIMD WebAssembly build where the CPU fuses relaxed_madd)
    unspecified,  // Eigen: blocked, vectorised and fused; close to the exact sum, bits not defined
};
GemmSumOrder gemm_sum_order(int m, bool b_transposed);

}  // namespace attnlab
