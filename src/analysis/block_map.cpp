#include "analysis/block_map.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// n + 1 edges splitting [start, start + size) into n = min(size, max_blocks) blocks, position i in
// block (i - start) * n / size: block b starts at the first i with (i - start) * n >= b * size.
std::vector<int> even_edges(int start, int size, int max_blocks) {
    const int n = std::max(0, std::min(size, max_blocks));
    std::vector<int> edges(static_cast<size_t>(n) + 1);
    for (int b = 0; b <= n; ++b)
        edges[static_cast<size_t>(b)] = start + static_cast<int>((static_cast<long long>(b) * size + n - 1) / std::max(n, 1));
    return edges;
}

int block_of(const std::vector<int>& edges, int position) {
    if (edges.size() < 2 || position < edges.front() || position >= edges.back()) return -1;
    return static_cast<int>(std::upper_bound(edges.begin(), edges.end(), position) - edges.begin()) - 1;
}

// Every other edge, and the last: neighbours merged in pairs.
std::vector<int> halved_edges(const std::vector<int>& edges) {
    std::vector<int> out;
    for (size_t e = 0; e < edges.size(); e += 2) out.push_back(edges[e]);
    if (out.back() != edges.back()) out.push_back(edges.back());
    return out;
}

void fold_cell(float& cell, float value, BlockAggregation how) {
    // NaN (no cell yet) compares false: the first value replaces it.
    if (how == BlockAggregation::Max) {
        if (!(cell >= value)) cell = value;
    } else {
        cell = cell == cell ? cell + value : value;
    }
}

}  // namespace

const char* aggregation_name(BlockAggregation how) { return how == BlockAggregation::Max ? "max" : "sum"; }

int BlockMap::block_row(int query) const { return block_of(row_edges, query); }
int BlockMap::block_col(int key) const { return block_of(col_edges, key); }

BlockMap empty_block_map(const MapWindow& window, int max_blocks, BlockAggregation how) {
    BlockMap m;
    m.window = window;
    m.aggregation = how;
    m.row_edges = even_edges(window.q0, std::max(window.queries(), 0), max_blocks);
    m.col_edges = even_edges(window.k0, std::max(window.keys(), 0), max_blocks);
    m.cells.assign(static_cast<size_t>(m.rows()) * m.cols(), std::numeric_limits<float>::quiet_NaN());
    return m;
}

void fold_rows(BlockMap& m, std::span<const float> rows, int L, int r0, int r1) {
    assert(rows.size() == static_cast<size_t>(r1 - r0) * L);
    const MapWindow& w = m.window;
    const int cols = m.cols();
    for (int i = std::max(r0, w.q0); i < std::min(r1, w.q1); ++i) {
        const float* row = rows.data() + static_cast<size_t>(i - r0) * L;
        float* out = m.cells.data() + static_cast<size_t>(m.block_row(i)) * cols;
        const int last = std::min({w.k1, i + 1, L});  // keys past the query are not seen
        for (int c = 0, j = w.k0; c < cols && j < last; ++c) {
            const int end = std::min(m.col_edges[static_cast<size_t>(c) + 1], last);
            float& cell = out[c];
            for (; j < end; ++j) fold_cell(cell, row[j], m.aggregation);
            if (cell > m.max) m.max = cell;  // weights are >= 0: a sum only grows
        }
    }
}

BlockMap coarsened(const BlockMap& m) {
    BlockMap c;
    c.window = m.window;
    c.aggregation = m.aggregation;
    c.row_edges = halved_edges(m.row_edges);
    c.col_edges = halved_edges(m.col_edges);
    c.cells.assign(static_cast<size_t>(c.rows()) * c.cols(), std::numeric_limits<float>::quiet_NaN());
    for (int r = 0; r < m.rows(); ++r)
        for (int k = 0; k < m.cols(); ++k) {
            const float v = m.at(r, k);
            if (v != v) continue;
            float& cell = c.cells[static_cast<size_t>(r / 2) * c.cols() + k / 2];
            fold_cell(cell, v, m.aggregation);
            if (cell > c.max) c.max = cell;
        }
    return c;
}

namespace {

// Clamped as a double before rounding: a long is 32 bits in wasm32, where lround of a far zoom or
// pan (1e9 x a side) overflows.
int rounded_within(double x, int lo, int hi) { return static_cast<int>(std::lround(std::clamp(x, double(lo), double(hi)))); }

// A side of `size` positions starting as close to `start` as the map [0, L) allows.
int clamped_start(double start, int size, int L) { return rounded_within(start, 0, L - size); }

}  // namespace

MapWindow zoomed(const MapWindow& w, int L, double factor, double at_q, double at_k, int min_side) {
    const int old = std::max(w.queries(), 1);
    const int side = rounded_within(old * factor, std::min(min_side, L), L);
    // The point at fraction f of the old side stays at fraction f of the new one.
    const double fq = (at_q - w.q0) / old, fk = (at_k - w.k0) / std::max(w.keys(), 1);
    const int q0 = clamped_start(at_q - fq * side, side, L), k0 = clamped_start(at_k - fk * side, side, L);
    return {q0, q0 + side, k0, k0 + side};
}

MapWindow panned(const MapWindow& w, int L, double dq, double dk) {
    const int q0 = clamped_start(w.q0 + dq, w.queries(), L), k0 = clamped_start(w.k0 + dk, w.keys(), L);
    return {q0, q0 + w.queries(), k0, k0 + w.keys()};
}

}  // namespace attnlab
