// LinearWeight: W packed once for the x86 tiles where the build has them (tile_x86.h), and otherwise
// W in place with a gemm() per column panel (in WebAssembly gemm_simd128.cpp packs the panel's
// slice of W as it goes).
//
// With the tiles, W is packed in strips of kStrip columns (zero-padded past cols), each strip row
// after row, for the tiles of tile_x86.h. Every element starts at its bias and adds
// in(i, p) * W(p, j) for p = 0, 1, ... in order, one fused multiply-add each, so its bits depend
// on neither the tiling, the kind of tile, the thread count, nor how many rows the product has:
// a token alone (decoding) gets the bits it gets inside a prefill.
#include "model/linear.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "base/parallel.h"
#include "model/column_runs.h"
#include "model/gemm.h"
#include "model/tile_choice.h"
#include "model/tile_x86.h"

namespace attnlab {

namespace {

constexpr int kColumnUnit = 32;  // a piece of columns is whole units (whole packed strips with the x86 tiles)

// Splits a product's cols columns between the threads in pieces of whole units (column_runs.h),
// calling panel(c0, width, next_c0, next_width) for each, where next is the piece the same thread
// will likely take next (width 0: none), so that it fetches W ahead for the panel it runs next.
//
// Natively without the x86 tiles (no AVX2) a panel is one of Eigen's products, whose order of
// summation follows the product's shape, so there the panels lie on a grid of 64 columns from
// column 0 whatever the thread count, and a run is whole panels (docs/kernels.md, section 3).
template <typename Panel>
void for_each_panel(int cols, Panel&& panel) {
#if !defined(ATTNLAB_X86_TILES) && !defined(__EMSCRIPTEN__)
    constexpr int kGrid = 2 * kColumnUnit;
    const int cells = (cols + kGrid - 1) / kGrid, runs = std::min(max_threads(), cells);
    parallel_for(runs, [&](int run) {
        for (int cell = cells * run / runs; cell < cells * (run + 1) / runs; ++cell)
            panel(cell * kGrid, std::min(kGrid, cols - cell * kGrid), 0, 0);
    });
#else
    static_assert(LinearWeight::kPanel % kColumnUnit == 0);
    ColumnRuns runs((cols + kColumnUnit - 1) / kColumnUnit, max_threads(), LinearWeight::kPanel / kColumnUnit);
    const auto column = [cols](int unit) { return std::min(cols, unit * kColumnUnit); };
    parallel_for(runs.runs(), [&](int own) {
        for (ColumnRuns::Piece p = runs.next(own); !p.empty(); p = runs.next(own))
            panel(column(p.first), column(p.end) - column(p.first), column(p.next_first), column(p.next_end) - column(p.next_first));
    });
#endif
}

}  // namespace

LinearWeight::LinearWeight(const float* w, int rows, int cols) : LinearWeight(WeightMatrix(w), rows, cols) {}

namespace {

int columns_of(const std::vector<LinearWeight::Part>& parts) {
    int cols = 0;
    for (const LinearWeight::Part& p : parts) cols += p.out;
    return cols;
}

// Calls piece(part, first row of the part, c, width) for the parts' pieces of columns c0..c0 + width - 1.
template <typename Piece>
void for_each_part_piece(const std::vector<LinearWeight::Part>& parts, int c0, int width, Piece&& piece) {
    int start = 0;
    for (const LinearWeight::Part& p : parts) {
        const int lo = std::max(c0, start), hi = std::min(c0 + width, start + p.out);
        if (lo < hi) piece(p, lo - start, lo, hi - lo);
        start += p.out;
    }
}

}  // namespace

#if defined(ATTNLAB_X86_TILES)

namespace {

using x86::kDepthBlock;
using x86::kStrip;
using x86::Prefetch;
static_assert(kColumnUnit % kStrip == 0);

}  // namespace

LinearWeight::LinearWeight(WeightMatrix w, int rows, int cols) : w_(w), rows_(rows), cols_(cols) {
    const int strips = (cols + kStrip - 1) / kStrip;
    const size_t strip_elements = static_cast<size_t>(rows) * kStrip, element = weight_type_size(w.type);
    owned_bytes_ = std::max<size_t>(1, strips * strip_elements) * element;
    void* raw = ::operator new[](owned_bytes_, std::align_val_t(64));
    packed_ = std::shared_ptr<void>(raw, [](void* p) { ::operator delete[](p, std::align_val_t(64)); });
    parallel_for(strips, [&](int s) {
        const int j0 = s * kStrip, width = std::min(kStrip, cols - j0);
        if (const float* f = w.f32())
            x86::pack_strip(f + j0, static_cast<size_t>(cols), rows, width, static_cast<float*>(raw) + s * strip_elements);
        else
            x86::pack_strip_16(w.bits16() + j0, static_cast<size_t>(cols), rows, width, w.type,
                               static_cast<std::uint16_t*>(raw) + s * strip_elements);
    });
}

LinearWeight::LinearWeight(std::vector<Part> parts, int in) : rows_(in), cols_(columns_of(parts)) {
    const WeightType type = parts.empty() ? WeightType::f32 : parts.front().w.type;
    const int strips = (cols_ + kStrip - 1) / kStrip;
    const size_t strip_elements = static_cast<size_t>(rows_) * kStrip, element = weight_type_size(type);
    owned_bytes_ = std::max<size_t>(1, strips * strip_elements) * element;
    w_.type = type;
    void* raw = ::operator new[](owned_bytes_, std::align_val_t(64));
    packed_ = std::shared_ptr<void>(raw, [](void* p) { ::operator delete[](p, std::align_val_t(64)); });
    // Column j of W is row j of its part: each strip column is read along its part's row.
    parallel_for(strips, [&](int s) {
        const int j0 = s * kStrip, width = std::min(kStrip, cols_ - j0);
        std::array<WeightMatrix, kStrip> column{};
        for_each_part_piece(parts, j0, width, [&](const Part& p, int row, int c, int count) {
            for (int j = 0; j < count; ++j) column[static_cast<size_t>(c - j0 + j)] = p.w.offset(static_cast<size_t>(row + j) * in);
        });
        char* strip = static_cast<char*>(raw) + s * strip_elements * element;
        for (int slot = 0; slot < kStrip; ++slot) {
            const WeightMatrix src = column[static_cast<size_t>(x86::strip_column(slot, type))];
            for (int p = 0; p < rows_; ++p) {
                char* at = strip + (static_cast<size_t>(p) * kStrip + slot) * element;
                if (type == WeightType::f32) *reinterpret_cast<float*>(at) = src.empty() ? 0.0f : src.f32()[p];
                else *reinterpret_cast<std::uint16_t*>(at) = src.empty() ? 0 : src.bits16()[p];
            }
        }
    });
}

void x86::packed_linear_columns(const TileKind& kind, const float* in, int n, int rows, const void* packed, WeightType type, int cols,
                                const float* bias, float* out, int c0, int width, int next_c0, int next_width) {
    for (int i = 0; i < n; ++i) {
        float* row = out + static_cast<size_t>(i) * cols + c0;
        if (bias) std::copy(bias + c0, bias + c0 + width, row);
        else std::fill(row, row + width, 0.0f);
    }
    // W comes from memory once per product, a block of kDepthBlock rows of the panel at a time,
    // and the first row tile over a block waits for it (at 128 rows a product ran at 166
    // GFLOP/s against 200 with W in cache). So the later row tiles over block kb ask for block
    // kb + 1 ahead (multiply_block), and over the last block for the next panel's first.
    const size_t strip_elements = static_cast<size_t>(rows) * kStrip, element = weight_type_size(type);
    const char* const bytes = static_cast<const char*>(packed);
    const auto at = [&](int column, int depth) {
        return bytes + ((column / kStrip) * strip_elements + static_cast<size_t>(depth) * kStrip) * element;
    };
    for (int k0 = 0; k0 < rows; k0 += kDepthBlock) {
        const int kc = std::min(kDepthBlock, rows - k0);
        const bool last = k0 + kc >= rows;
        const int next_k0 = last ? 0 : k0 + kc, ahead_c0 = last ? next_c0 : c0, ahead_width = last ? next_width : width;
        const Prefetch next{at(ahead_c0, next_k0), strip_elements * element, (ahead_width + kStrip - 1) / kStrip,
                            static_cast<int>(std::min(kDepthBlock, rows - next_k0) * kStrip * element / 64)};
        multiply_block(kind, type, n, width, kc, in + k0, static_cast<size_t>(rows), at(c0, k0), strip_elements, out + c0,
                       static_cast<size_t>(cols), next);
    }
}

void LinearWeight::apply(const float* in, int n, const float* bias, float* out, const ColumnsDone& done) const {
    if (n <= 0 || cols_ <= 0) return;
    const x86::TileKind& kind = tile_for(linear_class(n));
    for_each_panel(cols_, [&](int c0, int width, int next_c0, int next_width) {
        x86::packed_linear_columns(kind, in, n, rows_, packed_.get(), w_.type, cols_, bias, out, c0, width, next_c0, next_width);
        if (done) done(c0, width);
    });
}

#else

LinearWeight::LinearWeight(WeightMatrix w, int rows, int cols) : w_(w), rows_(rows), cols_(cols) {}

LinearWeight::LinearWeight(std::vector<Part> parts, int in) : parts_(std::move(parts)), rows_(in), cols_(columns_of(parts_)) {
    if (!parts_.empty()) w_.type = parts_.front().w.type;
}

void LinearWeight::apply(const float* in, int n, const float* bias, float* out, const ColumnsDone& done) const {
    for_each_panel(cols_, [&](int c0, int width, int, int) {
        if (parts_.empty())
            gemm(n, width, rows_, in, rows_, w_.offset(static_cast<size_t>(c0)), cols_, false, out + c0, cols_, 1.0f,
                 bias ? bias + c0 : nullptr);
        // (out, in) parts: the panel's rows of each part, read transposed in place.
        for_each_part_piece(parts_, c0, width, [&](const Part& p, int row, int c, int count) {
            gemm(n, count, rows_, in, rows_, p.w.offset(static_cast<size_t>(row) * rows_), rows_, true, out + c, cols_, 1.0f,
                 bias ? bias + c : nullptr);
        });
        if (done) done(c0, width);
    });
}

#endif

}  // namespace attnlab
