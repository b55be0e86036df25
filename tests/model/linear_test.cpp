// LinearWeight (model/linear.h), the linear maps' products, against loops of our own: shapes
// around its column panels (128), its packed strips (32) and row tiles (12), and its blocks of
// the inner dimension (256). Its bits are defined in two builds and must be met exactly: with
// the x86 tiles (AVX-512, or AVX2 and FMA) a chain of fused multiply-adds from the bias
// (std::fma), in WebAssembly gemm()'s order
// (the plain loop, or with relaxed SIMD on a CPU with FMA a fused chain), then the bias. Elsewhere
// (Eigen) it must be within a rounding bound of a double loop. Its bits must not
// depend on the thread count, nor, where defined, on how many rows the product has.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "base/random.h"
#include "model/fused_multiply_add.h"
#include "model/gemm.h"
#include "model/linear.h"
#include "model/tile_choice.h"
#include "random_inputs.h"

using namespace attnlab;
using attnlab::test::random_values;

namespace {

// Counts the elements of out (n, cols) that are not in@w + bias; reports the first three.
int wrong_elements(int n, int rows, int cols, const std::vector<float>& in, const std::vector<float>& w, const float* bias,
                   const std::vector<float>& out) {
    // Natively with the x86 tiles each element is a fused chain from its bias; elsewhere gemm()'s sum
    // from 0 (a plain loop, or with relaxed SIMD on a CPU with FMA a fused chain), then the bias.
#if defined(ATTNLAB_X86_TILES)
    const GemmSumOrder order = GemmSumOrder::fused_chain;
    const bool from_bias = true;
#else
    const GemmSumOrder order = gemm_sum_order(n, false);
    const bool from_bias = false;
#endif
    const bool exact_bits = order == GemmSumOrder::plain_loop || order == GemmSumOrder::fused_chain;
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < cols; ++j) {
            const float b = bias ? bias[j] : 0.0f;
            float in_order = 0.0f, chain = from_bias ? b : 0.0f;
            double exact = 0.0, magnitude = 0.0;
            for (int p = 0; p < rows; ++p) {
                const float x = in[static_cast<size_t>(i) * rows + p], y = w[static_cast<size_t>(p) * cols + j];
                const float product = x * y;  // apart, so that it cannot be fused
                in_order = in_order + product;
                chain = fused_multiply_add(x, y, chain);
                exact += static_cast<double>(x) * y;
                magnitude += std::fabs(static_cast<double>(x) * y);
            }
            if (order == GemmSumOrder::fused_chain) in_order = chain;
            if (bias && !from_bias) in_order = in_order + b;
            exact += b;
            const float got = out[static_cast<size_t>(i) * cols + j];
            const bool ok = exact_bits ? std::memcmp(&got, &in_order, sizeof got) == 0
                                       : std::fabs(got - exact) <= 4e-7 * (rows + 2) * (magnitude + std::fabs(b)) + 1e-30;
            if (!ok && ++wrong <= 3)
                UNSCOPED_INFO("out(" << i << ", " << j << ") = " << got << ", float loop " << in_order << ", double " << exact);
        }
    return wrong;
}

}  // namespace

TEST_CASE("LinearWeight equals the loop on every edge of its panels and blocks", "[linear]") {
    SplitMix64 rng(2024);
    const int row_counts[] = {1, 2, 3, 5, 47, 48, 49, 255, 256, 257, 300};  // n: tokens
    const int depths[] = {1, 7, 255, 256, 257, 600};                        // rows of W
    const int widths[] = {1, 5, 16, 127, 128, 129, 300};                    // cols of W
    int cases = 0;
    for (int rows : depths)
        for (int cols : widths) {
            const std::vector<float> w = random_values(rng, static_cast<size_t>(rows) * cols);
            const std::vector<float> bias = random_values(rng, static_cast<size_t>(cols));
            const LinearWeight lw(w.data(), rows, cols);
            CHECK(lw.rows() == rows);
            CHECK(lw.cols() == cols);
            for (int n : row_counts) {
                if (static_cast<long>(n) * rows * cols > 4'000'000) continue;  // keep the suite quick
                const bool with_bias = (n + cols) % 2 == 0;
                const std::vector<float> in = random_values(rng, static_cast<size_t>(n) * rows);
                std::vector<float> out(static_cast<size_t>(n) * cols, 12345.5f);
                lw.apply(in.data(), n, with_bias ? bias.data() : nullptr, out.data());
                INFO("n " << n << " rows " << rows << " cols " << cols << (with_bias ? " bias" : ""));
                CHECK(wrong_elements(n, rows, cols, in, w, with_bias ? bias.data() : nullptr, out) == 0);
                ++cases;
            }
        }
    CHECK(cases > 350);
}

TEST_CASE("LinearWeight gives the same bits on one thread and on all", "[linear][threads]") {
    SplitMix64 rng(9);
    const int n = 300, rows = 600, cols = 700;  // several row blocks, depth blocks and panels
    const std::vector<float> w = random_values(rng, static_cast<size_t>(rows) * cols);
    const std::vector<float> bias = random_values(rng, static_cast<size_t>(cols));
    const std::vector<float> in = random_values(rng, static_cast<size_t>(n) * rows);
    const int before = max_threads();
    set_max_threads(1);
    const LinearWeight packed_alone(w.data(), rows, cols);
    std::vector<float> alone(static_cast<size_t>(n) * cols);
    packed_alone.apply(in.data(), n, bias.data(), alone.data());
    // Each thread takes a run of the columns, so the runs' edges move with the thread count:
    // 3, 5 and 7 threads split the 22 strips of 32 columns off the panels' own edges.
    for (int threads : {before, 2, 3, 5, 7}) {
        set_max_threads(threads);
        REQUIRE(max_threads() > 1);  // more than one thread ran: the comparison compares something
        const LinearWeight lw(w.data(), rows, cols);
        std::vector<float> all(alone.size());
        lw.apply(in.data(), n, bias.data(), all.data());
        INFO(threads << " threads");
        CHECK(std::memcmp(alone.data(), all.data(), alone.size() * sizeof(float)) == 0);
        CHECK(wrong_elements(n, rows, cols, in, w, bias.data(), all) == 0);
    }
    set_max_threads(before);
}

#if defined(ATTNLAB_X86_TILES)
TEST_CASE("LinearWeight gives the same bits through every kind of tile, on any thread count", "[linear]") {
    // The run-time choice (model/tile_choice.h) may pick any kind by timing: each, forced in turn,
    // must give the loop's bits, and all the same bits on 1, 2, 3 and 7 threads, for few rows
    // (a decoding step) and many.
    const std::vector<std::string> kinds = tile_names();
    REQUIRE(kinds.size() >= 2);
    SplitMix64 rng(12);
    const int rows = 600, cols = 700;
    const std::vector<float> w = random_values(rng, static_cast<size_t>(rows) * cols);
    const std::vector<float> bias = random_values(rng, static_cast<size_t>(cols));
    const LinearWeight lw(w.data(), rows, cols);
    const int before = max_threads();
    for (int n : {5, 61}) {
        const std::vector<float> in = random_values(rng, static_cast<size_t>(n) * rows);
        std::vector<float> first;
        for (const std::string& kind : kinds) {
            REQUIRE(force_tile(kind));
            for (int threads : {1, 2, 3, 7}) {
                set_max_threads(threads);
                std::vector<float> out(static_cast<size_t>(n) * cols);
                lw.apply(in.data(), n, bias.data(), out.data());
                INFO("tile " << kind << ", " << threads << " threads, " << n << " rows");
                if (first.empty()) {
                    CHECK(wrong_elements(n, rows, cols, in, w, bias.data(), out) == 0);
                    first = out;
                }
                CHECK(std::memcmp(first.data(), out.data(), out.size() * sizeof(float)) == 0);
            }
        }
        force_tile("");
        set_max_threads(before);
    }
}
#endif

TEST_CASE("LinearWeight hands over every column once, and only when it is final", "[linear]") {
    SplitMix64 rng(77);
    const int n = 30, rows = 600, cols = 700;  // several depth blocks: a column is final after the last
    const std::vector<float> w = random_values(rng, static_cast<size_t>(rows) * cols);
    const std::vector<float> in = random_values(rng, static_cast<size_t>(n) * rows);
    const LinearWeight lw(w.data(), rows, cols);
    const int before = max_threads();
    for (int threads : {1, 2, 3, 7}) {
        set_max_threads(threads);
        // What each column held when it was handed over, against the loop; a column never handed
        // over stays NaN there and counts as wrong.
        std::vector<float> out(static_cast<size_t>(n) * cols, 0.0f), handed_values(out.size(), std::nanf(""));
        std::vector<int> handed(static_cast<size_t>(cols), 0);
        std::mutex guard;
        lw.apply(in.data(), n, nullptr, out.data(), [&](int c0, int width) {
            std::lock_guard<std::mutex> lock(guard);
            for (int j = c0; j < c0 + width; ++j) {
                ++handed[static_cast<size_t>(j)];
                for (int i = 0; i < n; ++i) handed_values[static_cast<size_t>(i) * cols + j] = out[static_cast<size_t>(i) * cols + j];
            }
        });
        INFO(threads << " threads");
        CHECK(wrong_elements(n, rows, cols, in, w, nullptr, handed_values) == 0);
        CHECK(std::count(handed.begin(), handed.end(), 1) == cols);
    }
    set_max_threads(before);
}

TEST_CASE("LinearWeight gives a row alone the bits it gets inside a larger product", "[linear]") {
    // Decoding multiplies one token's row alone, a prefill a block of them.
#if defined(ATTNLAB_X86_TILES)
    const bool same_bits = true;
#else
    const bool same_bits = gemm_sum_order(1, false) == gemm_sum_order(37, false) && gemm_sum_order(1, false) != GemmSumOrder::unspecified;
#endif
    SplitMix64 rng(31);
    const int n = 37, rows = 300, cols = 200;
    const std::vector<float> w = random_values(rng, static_cast<size_t>(rows) * cols);
    const std::vector<float> bias = random_values(rng, static_cast<size_t>(cols));
    const std::vector<float> in = random_values(rng, static_cast<size_t>(n) * rows);
    const LinearWeight lw(w.data(), rows, cols);
    std::vector<float> whole(static_cast<size_t>(n) * cols), row(static_cast<size_t>(cols));
    lw.apply(in.data(), n, bias.data(), whole.data());
    for (int i : {0, 11, 12, 36}) {
        lw.apply(in.data() + static_cast<size_t>(i) * rows, 1, bias.data(), row.data());
        int differ = 0;
        for (int j = 0; j < cols; ++j) {
            const float a = whole[static_cast<size_t>(i) * cols + j];
            differ += same_bits ? std::memcmp(&a, &row[static_cast<size_t>(j)], sizeof a) != 0
                                : std::fabs(a - row[static_cast<size_t>(j)]) > 1e-4f;
        }
        INFO("row " << i << (same_bits ? ", bits" : ", within 1e-4"));
        CHECK(differ == 0);
    }
}
