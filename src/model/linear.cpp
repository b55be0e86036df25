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
#include "base/parallel.h"

#if defined(__AVX512F__)
#include "model/tile_avx512.h"
#endif

namespace attnlab {

namespace {

constexpr int kColumnUnit = 32;  // a run of columns is whole units (a packed strip with AVX-512)

// Splits a product's cols columns between the threads: each takes one run of whole units and
// goes through it panel by panel, calling panel(c0, width, next_c0, next_width), where next is
// the same run's next panel (width 0: none), so that the panel a thread fetches W ahead for is
// the one it runs next. Panels handed out one at a time alternated between the threads, and a
// 2-thread prefill took 8-16% longer at every length natively, 1-4% in the pthreads WebAssembly
// build (bench/RESULTS.md); natively the tiles' CPU time was a fifth above one thread's for the
// same work. Not the prefetch alone: without it the runs kept their gain. Our reading, not
// measured: out's rows are not 64-byte aligned, so alternating panels wrote shared cache lines
// at every panel edge, and a run has one such edge a row.
template <typename Panel>
void for_each_panel(int cols, Panel&& panel) {
    constexpr int kPanel = LinearWeight::kPanel;
    static_assert(kPanel % kColumnUnit == 0);
    const int units = (cols + kColumnUnit - 1) / kColumnUnit, parts = std::min(max_threads(), units);
    parallel_for(parts, [&](int part) {
        const int end = std::min(cols, units * (part + 1) / parts * kColumnUnit);
        for (int c0 = units * part / parts * kColumnUnit; c0 < end; c0 += kPanel) {
            const int next = c0 + kPanel;
            panel(c0, std::min(kPanel, end - c0), next, std::clamp(end - next, 0, kPanel));
        }
    });
}

}  // namespace

#if defined(__AVX512F__)

namespace {

using avx512::kDepthBlock;
using avx512::kStrip;
using avx512::kTileRows;
static_assert(kColumnUnit == kStrip);

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
    // Columns c0..c0 + width - 1; the first block of W of the panel next_c0.. is fetched ahead
    // during this one's last block.
    for_each_panel(cols_, [&](int c0, int width, int next_c0, int next_width) {
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
    });
}

#else

LinearWeight::LinearWeight(const float* w, int rows, int cols) : w_(w), rows_(rows), cols_(cols) {}

void LinearWeight::apply(const float* in, int n, const float* bias, float* out, const ColumnsDone& done) const {
    for_each_panel(cols_, [&](int c0, int width, int, int) {
        gemm(n, width, rows_, in, rows_, w_ + c0, cols_, false, out + c0, cols_, 1.0f, bias ? bias + c0 : nullptr);
        if (done) done(c0, width);
    });
}

#endif

}  // namespace attnlab
