// multiply_block (tile_x86.h): a block of a product through one kind of tile, row tile by
// row tile, each row tile across the block's strips in groups of the kind's strip count.
#include "model/tile_x86.h"
#if defined(ATTNLAB_X86_TILES)

namespace attnlab::x86 {

void multiply_block(const TileKind& kind, WeightType type, int m, int width, int kc, const float* a, size_t lda, const void* b,
                    size_t strip_stride, float* c, size_t ldc, Prefetch next) {
    const TileTable& fn = kind.fn[static_cast<size_t>(type)];
    const size_t strip_bytes = strip_stride * weight_type_size(type);
    // The tile's rows of a at the fixed stride kDepthBlock, for the kinds that read a copy.
    alignas(64) static thread_local float copy[kMaxTileRows * kDepthBlock];
    const int strips = (width + kStrip - 1) / kStrip;
    for (int i0 = 0, t = 0; i0 < m; i0 += kind.rows, ++t) {
        const int rows = std::min(kind.rows, m - i0);
        const float* rows_of_a = a + static_cast<size_t>(i0) * lda;
        if (kind.a == ARows::copied) {
            for (int r = 0; r < rows; ++r) std::copy(rows_of_a + r * lda, rows_of_a + r * lda + kc, copy + r * kDepthBlock);
            rows_of_a = copy;
        }
        for (int s = 0; s < strips; s += kind.strips) {
            const int group = std::min(kind.strips, strips - s);
            // Row tile t >= 1 asks for lines (t - 1) * 64 .. of the next block of its strips.
            Prefetch ahead;
            const int first_line = (t - 1) * 64;
            if (t > 0 && s < next.strips && first_line < next.lines)
                ahead = {next.from + s * next.strip_stride + static_cast<size_t>(first_line) * 64, next.strip_stride, next.strips - s,
                         std::min(64, next.lines - first_line)};
            fn[group - 1][rows - 1](kc, rows_of_a, lda, static_cast<const char*>(b) + s * strip_bytes, strip_stride,
                                    c + static_cast<size_t>(i0) * ldc + s * kStrip, ldc, width - s * kStrip, ahead);
        }
    }
}

}  // namespace attnlab::x86
#endif
