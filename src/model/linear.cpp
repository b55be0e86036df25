// LinearWeight: W packed once for an AVX-512 kernel where the build targets it, and otherwise
// W in place with a gemm() per column panel (in WebAssembly gemm_simd128.cpp packs the panel's
// slice of W as it goes).
//
// The AVX-512 kernel. W is packed in strips of 32 columns (zero-padded past cols), each strip
// row after row, so a step over p reads 2 vectors of W at unit stride. A tile of up to 12 rows
// of `out` by one strip lives in 24 of the 32 zmm registers; per p it takes one broadcast of
// `in` per row and two fused multiply-adds per row. Every element starts at its bias and adds
// in(i, p) * W(p, j) for p = 0, 1, ... in order, one fused multiply-add each, so its bits depend
// on neither the tiling, the thread count, nor how many rows the product has: a token alone
// (decoding) gets the bits it gets inside a prefill.
#include "model/linear.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "model/gemm.h"
#include "model/parallel.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace attnlab {

#if defined(__AVX512F__)

namespace {

constexpr int kStrip = 32;       // columns per packed strip: two zmm vectors
constexpr int kTileRows = 12;    // rows per tile: 24 accumulators
constexpr int kDepthBlock = 256; // p per pass over a tile: its rows of `in` (12 KB) stay in L1
static_assert(LinearWeight::kPanel % kStrip == 0);

// c (rows x 32, row stride ldc, the columns m0 and m1 leave out untouched) += a (rows x kc,
// stride lda) @ w (kc x 32 packed). Meanwhile asks for `prefetch_lines` cache lines from
// `prefetch` on, one every 4 steps of p (see apply()).
template <int R>
void tile(int kc, const float* a, size_t lda, const float* w, float* c, size_t ldc, __mmask16 m0, __mmask16 m1,
          const float* prefetch, int prefetch_lines) {
    __m512 lo[R], hi[R];
    for (int r = 0; r < R; ++r) {
        lo[r] = _mm512_maskz_loadu_ps(m0, c + r * ldc);
        hi[r] = _mm512_maskz_loadu_ps(m1, c + r * ldc + 16);
    }
    for (int p = 0; p < kc; ++p) {
        if ((p & 3) == 0 && (p >> 2) < prefetch_lines) _mm_prefetch(reinterpret_cast<const char*>(prefetch + (p >> 2) * 16), _MM_HINT_T1);
        const __m512 w0 = _mm512_load_ps(w + p * kStrip), w1 = _mm512_load_ps(w + p * kStrip + 16);
        for (int r = 0; r < R; ++r) {
            const __m512 x = _mm512_set1_ps(a[r * lda + p]);
            lo[r] = _mm512_fmadd_ps(x, w0, lo[r]);
            hi[r] = _mm512_fmadd_ps(x, w1, hi[r]);
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm512_mask_storeu_ps(c + r * ldc, m0, lo[r]);
        _mm512_mask_storeu_ps(c + r * ldc + 16, m1, hi[r]);
    }
}

using TileFn = void (*)(int, const float*, size_t, const float*, float*, size_t, __mmask16, __mmask16, const float*, int);
template <int... R>
constexpr auto make_tiles(std::integer_sequence<int, R...>) {
    return std::array<TileFn, sizeof...(R)>{&tile<R + 1>...};
}
constexpr auto kTiles = make_tiles(std::make_integer_sequence<int, kTileRows>{});

}  // namespace

LinearWeight::LinearWeight(const float* w, int rows, int cols) : w_(w), rows_(rows), cols_(cols) {
    const int strips = (cols + kStrip - 1) / kStrip;
    const size_t strip_floats = static_cast<size_t>(rows) * kStrip;
    float* raw = static_cast<float*>(::operator new[](std::max<size_t>(1, strips * strip_floats) * sizeof(float), std::align_val_t(64)));
    packed_ = std::shared_ptr<float[]>(raw, [](float* p) { ::operator delete[](p, std::align_val_t(64)); });
    parallel_for(strips, [&](int s) {
        const int j0 = s * kStrip, width = std::min(kStrip, cols - j0);
        float* out = raw + s * strip_floats;
        for (int p = 0; p < rows; ++p, out += kStrip) {
            std::memcpy(out, w + static_cast<size_t>(p) * cols + j0, width * sizeof(float));
            std::fill(out + width, out + kStrip, 0.0f);
        }
    });
}

void LinearWeight::apply(const float* in, int n, const float* bias, float* out) const {
    if (n <= 0 || cols_ <= 0) return;
    const size_t strip_floats = static_cast<size_t>(rows_) * kStrip;
    parallel_for((cols_ + kPanel - 1) / kPanel, [&](int panel) {
        const int c0 = panel * kPanel, width = std::min(kPanel, cols_ - c0);
        for (int i = 0; i < n; ++i) {
            float* row = out + static_cast<size_t>(i) * cols_ + c0;
            if (bias) std::copy(bias + c0, bias + c0 + width, row);
            else std::fill(row, row + width, 0.0f);
        }
        // W comes from memory once per product, a block of kDepthBlock rows of the panel at a
        // time, and the first row tile over a block waits for it (at 128 rows a product ran at
        // 166 GFLOP/s against 200 with W in cache). So the later row tiles over block kb ask
        // for block kb + 1 ahead, each strip's tile for 64 lines of that strip's next block.
        const int strips = (width + kStrip - 1) / kStrip;
        for (int k0 = 0; k0 < rows_; k0 += kDepthBlock) {
            const int kc = std::min(kDepthBlock, rows_ - k0);
            // The block after the last is the next panel's first (the same thread's next, mostly).
            const bool last = k0 + kc >= rows_;
            const int next_k0 = last ? 0 : k0 + kc, next_c0 = last ? c0 + kPanel : c0;
            const int next_lines = next_c0 >= cols_ ? 0 : std::min(kDepthBlock, rows_ - next_k0) * kStrip / 16;
            const int next_strips = next_c0 >= cols_ ? 0 : (std::min(kPanel, cols_ - next_c0) + kStrip - 1) / kStrip;
            for (int i0 = 0, t = 0; i0 < n; i0 += kTileRows, ++t) {
                const int r = std::min(kTileRows, n - i0);
                for (int s = 0; s < strips; ++s) {
                    const int j0 = c0 + s * kStrip, left = c0 + width - j0;
                    const __mmask16 m0 = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1);
                    const __mmask16 m1 = left >= 32 ? 0xFFFF : left <= 16 ? 0 : static_cast<__mmask16>((1u << (left - 16)) - 1);
                    const float* strip = packed_.get() + (j0 / kStrip) * strip_floats;
                    const int first_line = (t - 1) * 64, lines = t == 0 || s >= next_strips ? 0 : std::clamp(next_lines - first_line, 0, 64);
                    const float* next = lines == 0 ? nullptr
                                                   : packed_.get() + (next_c0 / kStrip + s) * strip_floats +
                                                         static_cast<size_t>(next_k0) * kStrip + static_cast<size_t>(first_line) * 16;
                    kTiles[r - 1](kc, in + static_cast<size_t>(i0) * rows_ + k0, rows_, strip + static_cast<size_t>(k0) * kStrip,
                                  out + static_cast<size_t>(i0) * cols_ + j0, cols_, m0, m1, next, lines);
                }
            }
        }
    });
}

#else

LinearWeight::LinearWeight(const float* w, int rows, int cols) : w_(w), rows_(rows), cols_(cols) {}

void LinearWeight::apply(const float* in, int n, const float* bias, float* out) const {
    parallel_for((cols_ + kPanel - 1) / kPanel, [&](int item) {
        const int c0 = item * kPanel;
        gemm(n, std::min(kPanel, cols_ - c0), rows_, in, rows_, w_ + c0, cols_, false, out + c0, cols_, 1.0f,
             bias ? bias + c0 : nullptr);
    });
}

#endif

}  // namespace attnlab
