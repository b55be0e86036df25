#pragma once
// The AVX-512 register tile behind LinearWeight (linear.cpp) and, natively, gemm() (gemm.cpp).
//
// b is packed in strips of 32 columns, kc rows of a strip after one another, so a step over p
// reads 2 vectors of b at unit stride. A tile of up to 12 rows of c by one strip lives in 24 of
// the 32 zmm registers; per p it takes one broadcast of a per row and two fused multiply-adds
// per row. Each element of c continues its own chain of fused multiply-adds over p in order,
// from the value c holds: the bits depend on neither the tile's row count nor its neighbours.
// 12 rows reach about 200 GFLOP/s on one Zen 5 core with b in cache (bench/RESULTS.md).
#if !defined(__AVX512F__)
#error "tile_avx512.h needs AVX-512 (-march=native on a CPU that has it)"
#endif
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

namespace attnlab::avx512 {

constexpr int kStrip = 32;        // columns per packed strip: two zmm vectors
constexpr int kTileRows = 12;     // rows per tile: 24 accumulators
constexpr int kDepthBlock = 256;  // p per pass over a tile: its rows of a (12 KB) stay in L1

// Lanes of the strip's first and second vector that fall inside the `left` columns that remain.
inline __mmask16 low_mask(int left) { return left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1); }
inline __mmask16 high_mask(int left) {
    return left >= 32 ? 0xFFFF : left <= 16 ? 0 : static_cast<__mmask16>((1u << (left - 16)) - 1);
}

// rows x width floats of b (row stride ldb) as a strip: rows x 32, zero past width (<= 32).
inline void pack_strip(const float* b, size_t ldb, int rows, int width, float* strip) {
    for (int p = 0; p < rows; ++p, b += ldb, strip += kStrip) {
        std::copy(b, b + width, strip);
        std::fill(strip + width, strip + kStrip, 0.0f);
    }
}

// c (R x 32, row stride ldc; the lanes m0 and m1 leave out are neither read nor written) +=
// a (R x kc, row stride lda) @ b (kc x 32, one packed strip). Meanwhile asks for
// `prefetch_lines` cache lines from `prefetch` on, one every 4 steps of p (null: none).
template <int R>
void tile(int kc, const float* a, size_t lda, const float* b, float* c, size_t ldc, __mmask16 m0, __mmask16 m1,
          const float* prefetch, int prefetch_lines) {
    __m512 lo[R], hi[R];
    for (int r = 0; r < R; ++r) {
        lo[r] = _mm512_maskz_loadu_ps(m0, c + r * ldc);
        hi[r] = _mm512_maskz_loadu_ps(m1, c + r * ldc + 16);
    }
    for (int p = 0; p < kc; ++p) {
        if ((p & 3) == 0 && (p >> 2) < prefetch_lines) _mm_prefetch(reinterpret_cast<const char*>(prefetch + (p >> 2) * 16), _MM_HINT_T1);
        const __m512 b0 = _mm512_load_ps(b + p * kStrip), b1 = _mm512_load_ps(b + p * kStrip + 16);
        for (int r = 0; r < R; ++r) {
            const __m512 x = _mm512_set1_ps(a[r * lda + p]);
            lo[r] = _mm512_fmadd_ps(x, b0, lo[r]);
            hi[r] = _mm512_fmadd_ps(x, b1, hi[r]);
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm512_mask_storeu_ps(c + r * ldc, m0, lo[r]);
        _mm512_mask_storeu_ps(c + r * ldc + 16, m1, hi[r]);
    }
}

using TileFn = void (*)(int, const float*, size_t, const float*, float*, size_t, __mmask16, __mmask16, const float*, int);
template <int... R>
constexpr std::array<TileFn, sizeof...(R)> make_tiles(std::integer_sequence<int, R...>) {
    return {&tile<R + 1>...};
}
// tiles[r - 1] is the tile of r rows, 1 <= r <= kTileRows.
inline constexpr std::array<TileFn, kTileRows> tiles = make_tiles(std::make_integer_sequence<int, kTileRows>{});

}  // namespace attnlab::avx512
