#pragma once
// One head's causal attention map seen as blocks, built a few query rows at a time, so that a
// view of an 8,192-token map never holds its T x T weights (268 MB of floats). A window of the
// map (a rectangle of queries and keys: the whole map, or the part a reader zoomed to) is split
// into at most n x n blocks, each the largest weight among its cells (max: a single sharp key
// stays visible in a small picture) or their sum (the weight a block of queries puts on a block
// of keys, summed over both). Cells a causal query cannot see (key > query) take no part; a block
// with none of its cells visible is NaN (blank). Pure arithmetic on spans; the panel draws it.
#include <span>
#include <vector>

namespace attnlab {

enum class BlockAggregation { Max, Sum };
const char* aggregation_name(BlockAggregation how);  // "max", "sum"

// A rectangle of the map: queries [q0, q1) (rows) by keys [k0, k1) (columns).
struct MapWindow {
    int q0 = 0, q1 = 0, k0 = 0, k1 = 0;
    int queries() const { return q1 - q0; }
    int keys() const { return k1 - k0; }
    bool operator==(const MapWindow&) const = default;
};

struct BlockMap {
    MapWindow window;
    BlockAggregation aggregation = BlockAggregation::Max;
    // Block r holds queries row_edges[r] .. row_edges[r + 1] - 1 (rows() + 1 positions, from q0 to
    // q1); the same for the keys.
    std::vector<int> row_edges, col_edges;
    std::vector<float> cells;  // (rows(), cols()) row-major; NaN where no cell is visible
    float max = 0.0f;          // the largest block (0 when none)

    int rows() const { return static_cast<int>(row_edges.size()) - 1; }
    int cols() const { return static_cast<int>(col_edges.size()) - 1; }
    // Every block one cell: the map's own weights.
    bool exact() const { return rows() == window.queries() && cols() == window.keys(); }
    // The block holding a query (row) or a key (column); -1 outside the window.
    int block_row(int query) const;
    int block_col(int key) const;
    float at(int row, int col) const { return cells[static_cast<size_t>(row) * cols() + col]; }
};

// An empty (all-NaN) map of `window`: min(side, max_blocks) blocks per side, position i of a side
// that starts at s and holds n falling in block (i - s) * blocks / n. Empty sides give no blocks.
BlockMap empty_block_map(const MapWindow& window, int max_blocks, BlockAggregation how);

// Folds query rows r0..r1-1 in: `rows` is (r1 - r0, L) row-major, row i's weights over keys
// 0..L-1 (only keys 0..i are read). Rows outside the window are skipped, so a caller may pass a
// window's rows in any blocks, each once.
void fold_rows(BlockMap& map, std::span<const float> rows, int L, int r0, int r1);

// The same map with half as many blocks per side (pairs of neighbours merged; an odd last block
// stays alone), the max of the maxes or the sum of the sums: what the coarser blocks would hold
// had the rows been folded into them. For drawing a map in a bounded number of rectangles.
BlockMap coarsened(const BlockMap& map);

// Zooming and panning a square window of an L x L map (the window keeps as many keys as queries).
// zoomed: `factor` times the side (< 1 zooms in), at least min_side and at most L, keeping the
// position (at_q, at_k) under the same point of the picture as far as the map's edges allow.
MapWindow zoomed(const MapWindow& w, int L, double factor, double at_q, double at_k, int min_side = 8);
// panned: moved by dq queries and dk keys (rounded), kept inside the map.
MapWindow panned(const MapWindow& w, int L, double dq, double dk);

}  // namespace attnlab
