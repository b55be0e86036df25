// LinearWeight: W packed once for an AVX-512 kernel where the build targets it, and otherwise
// W in place with a gemm() per column panel (in WebAssembly gemm_simd128.cpp packs the panel's
// slice of W as it goes).
//
// With AVX-512, W is packed in strips of 32 columns (zero-padded past cols), each strip row
// after row, for the tile of tile_avx512.h. Every element starts at its bias and adds
// in(i, p) * W(p, j) for p = 0, 1, ... in order, one fused multiply-add each, so its bits depend
// on neither the tiling, the thread count, nor how many rows the product has: a token alone
// (decoding) gets the bits it gets inside a prefill.
#include "model/linear.h"

#include <algorithm>

#include "model/gemm.h"
#include "model/parallel.h"

#if defined(__AVX512F__)
#include "model/tile_avx512.h"
#endif

namespace attnlab {

#if defined(__AVX512F__)

namespace {

using avx512::kDepthBlock;
using avx512::kStrip;
using avx512::kTileRows;
static_assert(LinearWeight::kPanel % kStrip == 0);

}  // namespace

LinearWeight::LinearWeight(const float* w, int rows, int cols) : w_(w), rows_(rows), cols_(cols) {
    const int strips = (cols + kStrip - 1) / kStrip;
    const size_t strip_floats = static_cast<size_t>(rows) * kStrip;
    float* raw = static_cast<float*>(::operator new[](std::max<size_t>(1, strips * strip_floats) * sizeof(float), std::align_val_t(64)));
    packed_ = std::shared_ptr<float[]>(raw, [](float* p) { ::operator delete[](p, std::align_val_t(64)); });
    parallel_for(strips, [&](int s) {
        const int j0 = s * kStrip;
        avx512::pack_strip(w + j0, static_cast<size_t>(cols), rows, std::min(kStrip, cols - j0), raw + s * strip_floats);
    });
}

void LinearWeight::apply(const float* in, int n, const float* bias, float* out, const ColumnsDone& done) const {
    if (n <= 0 || cols_ <= 0) return;
    const size_t strip_floats = static_cast<size_t>(rows_) * kStrip;
    const int strips = (cols_ + kStrip - 1) / kStrip, panel_strips = kPanel / kStrip;
    // One panel, columns c0..c0 + width - 1; next_c0/next_width: the panel this thread runs next
    // (width 0: none), whose first block of W is fetched ahead during this one's last block.
    const auto panel = [&](int c0, int width, int next_c0, int next_width) {
        for (int i = 0; i < n; ++i) {
            float* row = out + static_cast<size_t>(i) * cols_ + c0;
            if (bias) std::copy(bias + c0, bias + c0 + width, row);
            else std::fill(row, row + width, 0.0f);
        }
        // W comes from memory once per product, a block of kDepthBlock rows of the panel at a
        // time, and the first row tile over a block waits for it (at 128 rows a product ran at
        // 166 GFLOP/s against 200 with W in cache). So the later row tiles over block kb ask
        // for block kb + 1 ahead, each strip's tile for 64 lines of that strip's next block.
        const int width_strips = (width + kStrip - 1) / kStrip;
        for (int k0 = 0; k0 < rows_; k0 += kDepthBlock) {
            const int kc = std::min(kDepthBlock, rows_ - k0);
            const bool last = k0 + kc >= rows_;
            const int next_k0 = last ? 0 : k0 + kc, ahead_c0 = last ? next_c0 : c0;
            const int ahead_width = last ? next_width : width;
            const int next_lines = ahead_width == 0 ? 0 : std::min(kDepthBlock, rows_ - next_k0) * kStrip / 16;
            const int next_strips = (ahead_width + kStrip - 1) / kStrip;
            for (int i0 = 0, t = 0; i0 < n; i0 += kTileRows, ++t) {
                const int r = std::min(kTileRows, n - i0);
                for (int s = 0; s < width_strips; ++s) {
                    const int j0 = c0 + s * kStrip, left = c0 + width - j0;
                    const __mmask16 m0 = avx512::low_mask(left), m1 = avx512::high_mask(left);
                    const float* strip = packed_.get() + (j0 / kStrip) * strip_floats;
                    const int first_line = (t - 1) * 64, lines = t == 0 || s >= next_strips ? 0 : std::clamp(next_lines - first_line, 0, 64);
                    const float* next = lines == 0 ? nullptr
                                                   : packed_.get() + (ahead_c0 / kStrip + s) * strip_floats +
                                                         static_cast<size_t>(next_k0) * kStrip + static_cast<size_t>(first_line) * 16;
                    avx512::tiles[r - 1](kc, in + static_cast<size_t>(i0) * rows_ + k0, rows_, strip + static_cast<size_t>(k0) * kStrip,
                                         out + static_cast<size_t>(i0) * cols_ + j0, cols_, m0, m1, next, lines);
                }
            }
        }
        if (done) done(c0, width);
    };
    // Each thread takes one run of whole strips and goes through it panel by panel, so the
    // panel it fetches W ahead for is the one it runs next. Panels handed out one at a time
    // alternated between the threads, and a 2-thread prefill took 8-16% longer at every length
    // (bench/RESULTS.md); the tiles' CPU time was a fifth above one thread's for the same work.
    // Not the prefetch alone: without it the runs kept their gain. Our reading, not measured:
    // out's rows are not 64-byte aligned, so alternating panels wrote shared cache lines at
    // every panel edge, and a run has one such edge a row.
    const int parts = std::min(max_threads(), strips);
    parallel_for(parts, [&](int part) {
        const int s0 = strips * part / parts, s1 = strips * (part + 1) / parts;
        for (int p = s0; p < s1; p += panel_strips) {
            const int q = std::min(s1, p + panel_strips), next_q = std::min(s1, q + panel_strips);
            const int c0 = p * kStrip, width = std::min(cols_, q * kStrip) - c0;
            const int next_c0 = q * kStrip, next_width = q < s1 ? std::min(cols_, next_q * kStrip) - next_c0 : 0;
            panel(c0, width, next_c0, next_width);
        }
    });
}

#else

LinearWeight::LinearWeight(const float* w, int rows, int cols) : w_(w), rows_(rows), cols_(cols) {}

void LinearWeight::apply(const float* in, int n, const float* bias, float* out, const ColumnsDone& done) const {
    // As with AVX-512: one run of columns a thread (in units of 32), gone through panel by panel.
    constexpr int kUnit = 32;
    const int units = (cols_ + kUnit - 1) / kUnit, parts = std::min(max_threads(), units);
    parallel_for(parts, [&](int part) {
        const int end = std::min(cols_, units * (part + 1) / parts * kUnit);
        for (int c0 = units * part / parts * kUnit; c0 < end; c0 += kPanel) {
            const int width = std::min(kPanel, end - c0);
            gemm(n, width, rows_, in, rows_, w_ + c0, cols_, false, out + c0, cols_, 1.0f, bias ? bias + c0 : nullptr);
            if (done) done(c0, width);
        }
    });
}

#endif

}  // namespace attnlab
