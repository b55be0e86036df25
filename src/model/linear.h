#pragma once
// A linear map's weight, prepared once when the model loads, for every product with it:
//
//   out (n, cols) = in (n, rows) @ W (rows, cols) + bias (cols)      (Conv1D layout, row-major)
//
// The product is split by columns, never by rows or depth: every element's bits are then the same
// on any thread count, which the experiments promise. (Left to thread a product itself, Eigen
// split the rows by the thread count and treated the split edges differently.)
//
// Where the build targets AVX-512, or AVX2 with FMA (natively, with -march=native on such a CPU:
// every x86-64 CPU since Intel Haswell and AMD Zen) W is packed once,
// at construction, for register tiles of our own (linear.cpp, tile_x86.h): a packed copy the
// size of W, which spares every product the packing Eigen's did again at each call. The kind of
// tile is the one a short measurement at first use found fastest on this CPU for the product's
// class (tile_choice.h); every kind gives the same bits.
// Elsewhere, WebAssembly included, W is used in place and each panel is a gemm() (which in
// WebAssembly packs its slice of W as it goes): a second copy of GPT-2 small's weights would
// not fit the page's memory comfortably.
//
// W may be 16-bit (F16 or BF16, weight_matrix.h) and stays so: packed 16-bit for the x86 tiles and
// widened in the tiles' registers, elsewhere widened a panel at a time into a buffer of the
// thread's (gemm.h). Widening is exact: the bits are those of W widened to fp32 beforehand.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "model/weight_matrix.h"

namespace attnlab {

class LinearWeight {
public:
    LinearWeight() = default;
    // w (rows, cols) row-major with row stride cols. It must outlive this unless it was packed.
    LinearWeight(const float* w, int rows, int cols);
    // The same for fp32 or 16-bit W; 16-bit stays 16-bit. Its bytes must outlive this unless packed.
    LinearWeight(WeightMatrix w, int rows, int cols);
    // W (in, the sum of the parts' outs) given as nn.Linear weights: each part (out, in) row-major,
    // the parts side by side in W's columns (q, k and v as one product). Used in place as above,
    // read transposed: no transposed copy is made, and 16-bit stays 16-bit. All parts of one type.
    struct Part {
        WeightMatrix w;  // (out, in)
        int out;
    };
    LinearWeight(std::vector<Part> parts, int in);

    int rows() const { return rows_; }
    int cols() const { return cols_; }
    WeightType type() const { return w_.type; }
    // Bytes this holds of its own (the packed copy of W with the x86 tiles; 0 where W is used in place).
    std::size_t owned_bytes() const { return owned_bytes_; }

    // Called with (c0, width) once columns c0..c0 + width - 1 of out are final in every row, on
    // the thread that computed them, while they are still in its cache: element-wise work that
    // follows the product (an activation, a residual add, a copy) then needs no pass of its own
    // over out, nor a wait for every thread in between. Runs of columns never overlap.
    using ColumnsDone = std::function<void(int c0, int width)>;

    // out (n, cols), row stride cols = in (n, rows), row stride rows, @ W + bias (null: none).
    // Uses every thread parallel_for() may (base/parallel.h).
    void apply(const float* in, int n, const float* bias, float* out, const ColumnsDone& done = {}) const;

    static constexpr int kPanel = 128;  // columns per panel: a thread goes through its run of columns panel by panel

private:
    WeightMatrix w_;
    std::vector<Part> parts_;  // W as (out, in) parts (then w_ is empty)
    int rows_ = 0, cols_ = 0;
    std::shared_ptr<void> packed_;  // x86 tiles: strips of kStrip columns, row after row, of w_'s type (linear.cpp)
    std::size_t owned_bytes_ = 0;
};

}  // namespace attnlab
