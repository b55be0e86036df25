#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/attention_map.h"
#include "analysis/block_map.h"
#include "analysis/normalizers.h"
#include "base/random.h"

using namespace attnlab;

namespace {

// A causal L x L map of random weights (not normalized: the blocks must not care), 0 above the
// diagonal, with one sharp peak planted at (peak_q, peak_k).
std::vector<float> random_causal_map(int L, std::uint64_t seed, int peak_q, int peak_k) {
    SplitMix64 rng(seed);
    std::vector<float> w(static_cast<size_t>(L) * L, 0.0f);
    for (int i = 0; i < L; ++i)
        for (int j = 0; j <= i; ++j) w[static_cast<size_t>(i) * L + j] = static_cast<float>(rng.uniform() * 0.1);
    w[static_cast<size_t>(peak_q) * L + peak_k] = 0.97f;
    return w;
}

// Brute force over the whole matrix: block (r, c) of n_rows x n_cols even blocks of `w`'s window,
// position x of a side of `size` starting at s in block floor((x - s) * n / size), found by
// scanning every visible cell. NaN where no visible cell falls.
std::vector<double> brute_force_blocks(const std::vector<float>& w, int L, MapWindow win, int n_rows, int n_cols, bool sum) {
    std::vector<double> out(static_cast<size_t>(n_rows) * n_cols, std::nan(""));
    for (int i = win.q0; i < win.q1; ++i)
        for (int j = win.k0; j < win.k1 && j <= i; ++j) {
            const int r = static_cast<int>(static_cast<long long>(i - win.q0) * n_rows / win.queries());
            const int c = static_cast<int>(static_cast<long long>(j - win.k0) * n_cols / win.keys());
            double& cell = out[static_cast<size_t>(r) * n_cols + c];
            const double v = w[static_cast<size_t>(i) * L + j];
            cell = std::isnan(cell) ? v : (sum ? cell + v : std::max(cell, v));
        }
    return out;
}

// The map folded from `w` in uneven blocks of `chunk` rows, as a streaming view folds them.
BlockMap fold_in_chunks(const std::vector<float>& w, int L, MapWindow win, int max_blocks, BlockAggregation how, int chunk) {
    BlockMap m = empty_block_map(win, max_blocks, how);
    for (int r0 = 0; r0 < L; r0 += chunk) {
        const int r1 = std::min(L, r0 + chunk);
        fold_rows(m, std::span<const float>(w).subspan(static_cast<size_t>(r0) * L, static_cast<size_t>(r1 - r0) * L), L, r0, r1);
    }
    return m;
}

void require_same(const BlockMap& m, const std::vector<double>& expected) {
    REQUIRE(m.cells.size() == expected.size());
    double top = 0.0;
    for (size_t c = 0; c < expected.size(); ++c) {
        INFO("block " << c / m.cols() << ", " << c % m.cols());
        if (std::isnan(expected[c])) {
            CHECK(std::isnan(m.cells[c]));
            continue;
        }
        CHECK(m.cells[c] == Approx(expected[c]).epsilon(1e-5));
        top = std::max(top, expected[c]);
    }
    CHECK(m.max == Approx(top).epsilon(1e-5));
}

}  // namespace

TEST_CASE("block map: the whole causal map in blocks equals brute force by max and by sum, L not divisible", "[block_map]") {
    const int L = 37;  // 8 blocks of 4 or 5 positions
    const std::vector<float> w = random_causal_map(L, 7, 29, 3);
    const MapWindow all{0, L, 0, L};
    for (BlockAggregation how : {BlockAggregation::Max, BlockAggregation::Sum}) {
        INFO(aggregation_name(how));
        const BlockMap m = fold_in_chunks(w, L, all, 8, how, 5);
        REQUIRE(m.rows() == 8);
        REQUIRE(m.cols() == 8);
        CHECK_FALSE(m.exact());
        require_same(m, brute_force_blocks(w, L, all, 8, 8, how == BlockAggregation::Sum));
        // The causal mask: the top-right block holds no visible cell (queries 0..4, keys 32..36).
        CHECK(std::isnan(m.at(0, 7)));
        // A block on the diagonal holds visible cells only: by max never above the planted peak.
        CHECK(m.block_row(29) == 29 * 8 / 37);
        CHECK(m.block_col(3) == 0);
        CHECK(m.block_row(37) == -1);
    }
    // The planted peak survives max-pooling: its block shows it exactly.
    const BlockMap max = fold_in_chunks(w, L, all, 8, BlockAggregation::Max, 5);
    CHECK(max.at(max.block_row(29), max.block_col(3)) == 0.97f);
    CHECK(max.max == 0.97f);
}

TEST_CASE("block map: block edges cover every position once, in order", "[block_map]") {
    for (int size : {1, 7, 37, 256, 8191}) {
        for (int n : {1, 3, 8, 512}) {
            const BlockMap m = empty_block_map({5, 5 + size, 0, size}, n, BlockAggregation::Max);
            INFO("size " << size << ", n " << n);
            REQUIRE(m.rows() == std::min(size, n));
            CHECK(m.row_edges.front() == 5);
            CHECK(m.row_edges.back() == 5 + size);
            for (int x = 0; x < size; ++x) {
                const int r = m.block_row(5 + x);
                CHECK(r == static_cast<int>(static_cast<long long>(x) * m.rows() / size));
                CHECK(m.row_edges[static_cast<size_t>(r)] <= 5 + x);
                CHECK(5 + x < m.row_edges[static_cast<size_t>(r) + 1]);
            }
        }
    }
}

TEST_CASE("block map: a zoomed window folds only its rows and keys; small windows are exact cells", "[block_map]") {
    const int L = 41;
    const std::vector<float> w = random_causal_map(L, 11, 33, 12);
    const MapWindow zoom{9, 38, 4, 27};  // 29 queries x 23 keys, crossing the diagonal
    for (BlockAggregation how : {BlockAggregation::Max, BlockAggregation::Sum}) {
        INFO(aggregation_name(how));
        const BlockMap m = fold_in_chunks(w, L, zoom, 6, how, 4);
        require_same(m, brute_force_blocks(w, L, zoom, 6, 6, how == BlockAggregation::Sum));
        // Every cell its own block: the map's weights themselves, NaN above the diagonal.
        const BlockMap cells = fold_in_chunks(w, L, zoom, 256, how, 7);
        REQUIRE(cells.exact());
        for (int i = zoom.q0; i < zoom.q1; ++i)
            for (int j = zoom.k0; j < zoom.k1; ++j) {
                const float v = cells.at(cells.block_row(i), cells.block_col(j));
                if (j > i) CHECK(std::isnan(v));
                else CHECK(v == w[static_cast<size_t>(i) * L + j]);
            }
    }
}

TEST_CASE("block map: halving the blocks equals folding into the merged blocks", "[block_map]") {
    const int L = 37;
    const std::vector<float> w = random_causal_map(L, 3, 20, 19);
    for (BlockAggregation how : {BlockAggregation::Max, BlockAggregation::Sum}) {
        INFO(aggregation_name(how));
        const BlockMap fine = fold_in_chunks(w, L, {0, L, 0, L}, 9, how, 6);
        const BlockMap half = coarsened(fine);
        REQUIRE(half.rows() == 5);  // 9 blocks: 4 pairs and the last alone
        // Brute force: coarse block of position x = its fine block / 2.
        std::vector<double> expected(25, std::nan(""));
        for (int i = 0; i < L; ++i)
            for (int j = 0; j <= i; ++j) {
                double& cell = expected[static_cast<size_t>(i * 9 / L / 2) * 5 + j * 9 / L / 2];
                const double v = w[static_cast<size_t>(i) * L + j];
                cell = std::isnan(cell) ? v : (how == BlockAggregation::Sum ? cell + v : std::max(cell, v));
            }
        require_same(half, expected);
        CHECK(half.block_row(36) == 4);
        CHECK(half.block_row(fine.row_edges[2]) == 1);
    }
}

TEST_CASE("block map: weights streamed a few rows at a time equal the whole map's, folded the same", "[block_map]") {
    // The panel's weights: scores q.k / sqrt(d) of every row, then the normalizer at T row by
    // row. Brute force holds the L x L scores (plain loops) and normalizes them all at once.
    const int L = 45, d = 8;
    SplitMix64 rng(5);
    std::vector<float> q(static_cast<size_t>(L) * d), k(q.size());
    for (float& x : q) x = static_cast<float>(rng.normal());
    for (float& x : k) x = static_cast<float>(rng.normal());
    std::vector<float> scores(static_cast<size_t>(L) * L);
    for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j) {
            double dot = 0;
            for (int c = 0; c < d; ++c) dot += double(q[size_t(i) * d + c]) * k[size_t(j) * d + c];
            scores[size_t(i) * L + j] = static_cast<float>(dot / std::sqrt(double(d)));
        }
    Normalizer n;
    std::string error;
    REQUIRE(parse_normalizer("sparsemax", n, error));
    std::vector<float> whole;
    REQUIRE(normalize_causal_rows(scores, L, n, 0.5, whole, error));
    const MapWindow zoom{10, 40, 0, 30};
    BlockMap streamed = empty_block_map(zoom, 7, BlockAggregation::Sum);
    std::vector<float> s, rows;
    for (int r0 = zoom.q0; r0 < zoom.q1; r0 += 6) {
        const int r1 = std::min(zoom.q1, r0 + 6);
        score_rows(q, k, L, d, r0, r1, s);
        REQUIRE(normalize_causal_row_block(s, L, r0, r1, n, 0.5, rows, error));
        fold_rows(streamed, rows, L, r0, r1);
    }
    const std::vector<double> expected = brute_force_blocks(whole, L, zoom, 7, 7, true);
    REQUIRE(streamed.cells.size() == expected.size());
    for (size_t c = 0; c < expected.size(); ++c) {
        if (std::isnan(expected[c])) CHECK(std::isnan(streamed.cells[c]));
        else CHECK(streamed.cells[c] == Approx(expected[c]).margin(1e-5));
    }
    // A bad temperature names the first row of the block.
    CHECK_FALSE(normalize_causal_row_block(s, L, 34, 40, n, -1.0, rows, error));  // s: rows 34..39
    CHECK(error.find("Query 34") != std::string::npos);
}

TEST_CASE("block map: zooming keeps the point under the pointer, panning stays inside the map", "[block_map]") {
    const int L = 8192;
    const MapWindow all{0, L, 0, L};
    // Zoom in 4x at query 6000, key 100: the new side is 2048, and 6000 stays at 6000/8192 of it.
    const MapWindow in = zoomed(all, L, 0.25, 6000, 100);
    CHECK(in.queries() == 2048);
    CHECK(in.keys() == 2048);
    CHECK(in.q0 == 6000 - 1500);  // 6000 - (6000/8192) * 2048
    CHECK(in.k0 == 100 - 25);
    // Never below min_side, never past the map's edges.
    const MapWindow corner = zoomed(all, L, 1e-6, 8191.5, 0.5);
    CHECK(corner == MapWindow{8184, 8192, 0, 8});
    CHECK(zoomed(corner, L, 1e9, 8191, 0) == all);
    // At the window's last cell, zoomed in as far as it goes: the cell stays the last.
    const MapWindow tiny = zoomed(in, L, 1e-6, 6547.5, 75.5);
    CHECK(tiny == MapWindow{6540, 6548, 75, 83});
    CHECK(panned(in, L, 1e9, -1e9) == MapWindow{L - 2048, L, 0, 2048});
    CHECK(panned(in, L, 10.4, 2.6) == MapWindow{4510, 6558, 78, 2126});
    // A map shorter than min_side: the whole map.
    CHECK(zoomed({0, 5, 0, 5}, 5, 0.1, 2, 2) == MapWindow{0, 5, 0, 5});
}
