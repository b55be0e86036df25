// gemm() against the plain triple loop, on shapes chosen to hit every edge of the kernels'
// tiling: fewer rows than a tile (the unpacked paths), row and column remainders, k across block
// boundaries, n across packed blocks, padded strides on every operand, alpha and bias. Where
// gemm() defines its order of summation (the SIMD128 kernel; natively the x86 tiles from 4
// rows, AVX-512 or AVX2) it must equal a float loop in that order bit for bit (std::fma for the fused chain);
// where Eigen reorders the sums it must be within a rounding bound of a double loop. Padding
// between rows of c must be left alone. Natively with the x86 tiles, every kind of tile the run-time
// choice may pick (model/tile_choice.h) is forced in turn and held to the same bits.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/random.h"
#include "model/fused_multiply_add.h"
#include "model/gemm.h"
#include "model/tile_choice.h"
#include "random_inputs.h"

using namespace attnlab;
using attnlab::test::random_values;

namespace {

struct Case {
    int m, n, k;
    bool transposed;
    int pad_a, pad_b, pad_c;
    float alpha;
    bool bias;
};

// op(b)(p, j), the element the product uses.
float b_at(const std::vector<float>& b, int ldb, bool transposed, int p, int j) {
    return transposed ? b[static_cast<size_t>(j) * ldb + p] : b[static_cast<size_t>(p) * ldb + j];
}

void check(const Case& t, SplitMix64& rng) {
    const int lda = t.k + t.pad_a, ldc = t.n + t.pad_c;
    const int ldb = (t.transposed ? t.k : t.n) + t.pad_b;
    const std::vector<float> a = random_values(rng, static_cast<size_t>(t.m) * lda + 1);
    const std::vector<float> b = random_values(rng, static_cast<size_t>(t.transposed ? t.n : t.k) * ldb + 1);
    const std::vector<float> bias = random_values(rng, static_cast<size_t>(t.n));
    const float sentinel = 12345.5f;
    std::vector<float> c(static_cast<size_t>(t.m) * ldc, sentinel);
    gemm(t.m, t.n, t.k, a.data(), lda, b.data(), ldb, t.transposed, c.data(), ldc, t.alpha, t.bias ? bias.data() : nullptr);

    INFO("m " << t.m << " n " << t.n << " k " << t.k << (t.transposed ? " b^T" : " b") << " pads " << t.pad_a << "/" << t.pad_b << "/"
              << t.pad_c << " alpha " << t.alpha << (t.bias ? " bias" : ""));
    int wrong = 0;
    for (int i = 0; i < t.m; ++i) {
        for (int j = 0; j < t.n; ++j) {
            // The float loop in the order gemm_sum_order() names; each product is kept apart so
            // that the compiler cannot fuse it into a multiply-add.
            const GemmSumOrder order = gemm_sum_order(t.m, t.transposed);
            float in_order = 0.0f, chain = 0.0f, lanes[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            double exact = 0.0, magnitude = 0.0;
            const int k4 = t.k / 4 * 4;
            for (int p = 0; p < t.k; ++p) {
                const float x = a[static_cast<size_t>(i) * lda + p], y = b_at(b, ldb, t.transposed, p, j);
                const float product = x * y;
                if (order == GemmSumOrder::four_lanes && p < k4) {
                    lanes[p % 4] = lanes[p % 4] + product;
                    if (p == k4 - 1) in_order = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
                } else {
                    in_order = in_order + product;
                }
                chain = fused_multiply_add(x, y, chain);
                exact += static_cast<double>(x) * y;
                magnitude += std::fabs(static_cast<double>(x) * y);
            }
            in_order = in_order * t.alpha;
            if (t.bias) in_order = in_order + bias[static_cast<size_t>(j)];
            if (order == GemmSumOrder::fused_chain)
                in_order = fused_multiply_add(chain, t.alpha, t.bias ? bias[static_cast<size_t>(j)] : 0.0f);
            exact = exact * t.alpha + (t.bias ? bias[static_cast<size_t>(j)] : 0.0);
            const float got = c[static_cast<size_t>(i) * ldc + j];
            const bool ok = order != GemmSumOrder::unspecified
                                ? std::memcmp(&got, &in_order, sizeof got) == 0
                                : std::fabs(got - exact) <=
                                      4e-7 * (t.k + 2) * (magnitude * std::fabs(t.alpha) + std::fabs(bias[static_cast<size_t>(j)])) + 1e-30;
            if (!ok && ++wrong <= 3) {
                UNSCOPED_INFO("c(" << i << ", " << j << ") = " << got << ", plain loop " << in_order << ", double " << exact);
            }
        }
        for (int j = t.n; j < ldc; ++j)
            if (c[static_cast<size_t>(i) * ldc + j] != sentinel && ++wrong <= 3)
                UNSCOPED_INFO("padding c(" << i << ", " << j << ") written");
    }
    CHECK(wrong == 0);
}

// Every shape of the sweep below, checked; returns how many.
int check_every_edge(SplitMix64& rng) {
    // Rows: below, at and around the 4-row tile (natively the tiles of 4, 6 and 12 rows with
    // AVX-512, of 2, 3 and 6 with AVX2); columns: around the 8-wide tile, the 4-wide transposed
    // groups, the 16 x 16 and 8 x 8 transposed blocks, the 32- and 16-column strips, the 256-column packed block natively and the
    // 1024-column one in WebAssembly; k: around the 16 x 16 blocks and the 256 block.
    const int ms[] = {1, 2, 3, 4, 5, 7, 9, 12, 13, 16, 25};
    const int ns[] = {1, 3, 4, 5, 8, 9, 17, 33, 64, 97, 257, 1031};
    const int ks[] = {0, 1, 3, 4, 5, 17, 255, 256, 257, 600};
    int cases = 0;
    for (bool transposed : {false, true})
        for (int m : ms)
            for (int n : ns)
                for (int k : ks) {
                    if (static_cast<long>(m) * n * k > 3'000'000) continue;  // keep the suite quick
                    const int pick = static_cast<int>(rng.next() % 4);
                    const Case t{
                        m,        n, k, transposed, pick & 1 ? 3 : 0, pick & 2 ? 5 : 0, pick == 3 ? 2 : pick, pick == 2 ? 0.125f : 1.0f,
                        pick != 0};
                    check(t, rng);
                    ++cases;
                }
    return cases;
}

}  // namespace

TEST_CASE("gemm equals the plain loop on every edge of the tiling", "[gemm]") {
    SplitMix64 rng(77);
    CHECK(check_every_edge(rng) > 450);
}

#if defined(ATTNLAB_X86_TILES)
TEST_CASE("gemm gives the fused chain's bits through every kind of tile the run-time choice has", "[gemm]") {
    // The choice may pick any kind by timing, so each must give the bits gemm_sum_order() names,
    // forced in turn on the same inputs, and all must give the same bits as one another.
    const std::vector<std::string> kinds = tile_names();
    REQUIRE(kinds.size() >= 2);
    SplitMix64 data(3);
    const int m = 37, n = 300, k = 600, lda = k + 3, ldb = k + 5, ldc = n + 2;
    // b is (n, k) with row stride ldb, or (k, n) with row stride n + 5: k ldb floats hold either.
    const std::vector<float> a = random_values(data, static_cast<size_t>(m) * lda), b = random_values(data, static_cast<size_t>(k) * ldb);
    const std::vector<float> bias = random_values(data, static_cast<size_t>(n));
    std::vector<std::vector<float>> results;
    for (const std::string& kind : kinds) {
        INFO("tile " << kind);
        REQUIRE(force_tile(kind));
        SplitMix64 rng(77);  // the same shapes and inputs for every kind
        CHECK(check_every_edge(rng) > 450);
        for (bool transposed : {false, true}) {
            results.emplace_back(static_cast<size_t>(m) * ldc, 0.0f);
            gemm(m, n, k, a.data(), lda, b.data(), transposed ? ldb : n + 5, transposed, results.back().data(), ldc, 0.5f, bias.data());
        }
    }
    force_tile("");
    for (size_t i = 2; i < results.size(); ++i) {
        INFO("tile " << kinds[i / 2] << (i % 2 ? ", b^T" : ", b") << " against " << kinds[0]);
        CHECK(std::memcmp(results[i].data(), results[i % 2].data(), results[i].size() * sizeof(float)) == 0);
    }
    CHECK_FALSE(force_tile("no such tile"));
}
#else
TEST_CASE("gemm has no tiles to choose from in this build", "[gemm]") {
    CHECK(tile_names().empty());
    CHECK(tile_choices().empty());
    CHECK_FALSE(force_tile("12x32-in-place"));
}
#endif

TEST_CASE("gemm gives a row the same bits alone as inside a larger product", "[gemm]") {
    // The forward pass multiplies one token's row alone when decoding and inside a block when
    // prefilling. Against b (the linear maps) the WebAssembly kernel gives both the same bits;
    // natively, and against b^T, this only checks that both are close.
    SplitMix64 rng(5);
    for (bool transposed : {false, true}) {
        const GemmSumOrder alone = gemm_sum_order(1, transposed);
        const bool same_bits = alone == gemm_sum_order(37, transposed) && alone != GemmSumOrder::unspecified;
        const int m = 37, n = 200, k = 300;
        const std::vector<float> a = random_values(rng, static_cast<size_t>(m) * k);
        const std::vector<float> b = random_values(rng, static_cast<size_t>(n) * k);
        std::vector<float> whole(static_cast<size_t>(m) * n), row(static_cast<size_t>(n));
        gemm(m, n, k, a.data(), k, b.data(), transposed ? k : n, transposed, whole.data(), n, 0.5f);
        for (int i : {0, 3, 4, 36}) {
            gemm(1, n, k, a.data() + static_cast<size_t>(i) * k, k, b.data(), transposed ? k : n, transposed, row.data(), n, 0.5f);
            int differ = 0;
            for (int j = 0; j < n; ++j) {
                const float w = whole[static_cast<size_t>(i) * n + j];
                differ += same_bits ? std::memcmp(&w, &row[static_cast<size_t>(j)], sizeof w) != 0
                                    : std::fabs(w - row[static_cast<size_t>(j)]) > 1e-4f;
            }
            INFO("row " << i << (transposed ? " b^T" : " b"));
            CHECK(differ == 0);
        }
    }
}
