// attnlab_bench --kernel: the matrix products of one forward pass, one thread, each kernel this
// build has against Eigen on the same shapes, in one run (bench/RESULTS.md).
//
// First the run-time choice of tile (src/model/tile_choice.h): per class of product, what it
// timed and what it picked. Then per shape: gemm() or LinearWeight with every kind of tile
// forced in turn, with the pick, and Eigen's product; every kind must give the same bits (the
// bench stops if one does not), and the pick must agree with Eigen within a rounding bound.
#include "kernel_bench.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "base/safetensors.h"
#include "base/timing.h"
#include "model/gemm.h"
#include "model/linear.h"
#include "model/tile_choice.h"

namespace attnlab {

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

#ifdef __wasm_simd128__
// The CPU's clock, from a chain of dependent xor-add pairs (two cycles a pair on any x86-64
// core). The SIMD128 peak without fused multiply-add follows from the core's ports
// (bench/RESULTS.md derives it).
double measured_ghz() {
    volatile std::uint32_t seed_y = 0x9e3779b9u, seed_z = 12345u;
    std::uint32_t x = 1, y = seed_y, z = seed_z;
    const int n = 200'000'000;
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {  // the first may run before V8's optimising tier
        const auto start = SteadyClock::now();
        for (int i = 0; i < n; ++i) x = (x ^ y) + z;
        best = std::min(best, seconds_since(start));
    }
    if (x == 42) std::printf(" ");
    return 2.0 * n / best / 1e9;
}
#endif

void print_tile_choices() {
    const std::vector<TileChoice> choices = tile_choices();
    if (choices.empty()) return;
    std::printf(
        "The run-time choice of tile (GFLOP/s on each class's probe, one thread, best of 3; measured at the first product, in %.0f "
        "ms):\n\n",
        choices[0].seconds * 1e3);
    std::printf("| class | probe (m x n x k) |");
    for (const TileTiming& t : choices[0].timings) std::printf(" %s |", t.tile.c_str());
    std::printf(" picked |\n|---|---|");
    for (size_t i = 0; i <= choices[0].timings.size(); ++i) std::printf("---|");
    std::printf("\n");
    for (const TileChoice& c : choices) {
        std::printf("| %s | %s |", c.product_class.c_str(), c.probe.c_str());
        for (const TileTiming& t : c.timings) std::printf(" %.1f |", t.gflops);
        std::printf(" %s%s |\n", c.picked.c_str(), c.forced ? " (forced)" : " (fastest)");
    }
    std::printf("\n");
}

struct Shape {
    const char* what;
    int m, n, k;
    bool transposed, linear;  // linear: through LinearWeight, W packed at load (b is W, k x n)
};

// One row of the table: every kind forced, then the pick, then Eigen. False if two kinds gave
// different bits, or the pick and Eigen disagree beyond rounding.
bool time_shape(const Shape& s, int repeats, const std::vector<std::string>& kinds) {
    const Matrix a = Matrix::Random(s.m, s.k), b = s.transposed ? Matrix::Random(s.n, s.k) : Matrix::Random(s.k, s.n);
    Matrix c(s.m, s.n), first(s.m, s.n), e(s.m, s.n);
    const LinearWeight w = s.linear ? LinearWeight(b.data(), s.k, s.n) : LinearWeight();
    const auto ours = [&] {
        if (s.linear) w.apply(a.data(), s.m, nullptr, c.data());
        else gemm(s.m, s.n, s.k, a.data(), s.k, b.data(), s.transposed ? s.k : s.n, s.transposed, c.data(), s.n);
    };
    const double flops = 2.0 * s.m * s.n * s.k;
    std::printf("| %s (%d x %d x %d) |", s.what, s.m, s.n, s.k);
    bool same_bits = true;
    for (size_t i = 0; i < kinds.size(); ++i) {
        force_tile(kinds[i]);
        std::printf(" %.1f |", flops / best_seconds(repeats, ours) / 1e9);
        if (i == 0) first = c;
        else same_bits &= std::memcmp(first.data(), c.data(), sizeof(float) * static_cast<size_t>(c.size())) == 0;
    }
    force_tile("");
    const double picked = best_seconds(repeats, ours);
    const double eigen = best_seconds(repeats, [&] {
        if (s.transposed) e.noalias() = a * b.transpose();
        else e.noalias() = a * b;
    });
    std::printf(" %.1f | %.1f | %.2f |\n", flops / picked / 1e9, flops / eigen / 1e9, eigen / picked);
    if (!same_bits) std::fprintf(stderr, "attnlab_bench: the kinds of tile gave different bits on %s\n", s.what);
    if ((c - e).cwiseAbs().maxCoeff() > 1e-3f * s.k) std::fprintf(stderr, "attnlab_bench: ours and Eigen disagree on %s\n", s.what);
    return same_bits && (c - e).cwiseAbs().maxCoeff() <= 1e-3f * s.k;
}

// Seconds of CPU time that run() takes (wall time in WebAssembly, where clock() is wall time).
template <typename Run>
double cpu_seconds(Run&& run) {
#ifdef __EMSCRIPTEN__
    const auto start = SteadyClock::now();
    run();
    return seconds_since(start);
#else
    const std::clock_t start = std::clock();
    run();
    return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
#endif
}

// SmolLM2-135M's linear maps (issue 37) through LinearWeight with W as nn.Linear parts (out, in),
// as llama_load.cpp builds them, its weights stored F32, BF16 and F16. The 16-bit products must
// give the bits of the F32 product on the same values widened (the F32 column's W); the bench
// stops if one does not. Returns false then.
bool time_weight_types(int repeats) {
    struct LinearShape {
        const char* what;
        int rows, in;
        std::vector<int> outs;
    };
    const LinearShape shapes[] = {
        {"q, k, v, L = 128", 128, 576, {576, 192, 192}},
        {"gate, L = 128", 128, 576, {1536}},
        {"down, L = 128", 128, 1536, {576}},
        {"q, k, v, L = 1024", 1024, 576, {576, 192, 192}},
        {"gate, L = 1024", 1024, 576, {1536}},
        {"down, L = 1024", 1024, 1536, {576}},
        {"gate, one row (decode)", 1, 576, {1536}},
        {"down, one row (decode)", 1, 1536, {576}},
    };
    std::string tiles;  // what each class of linear map uses
    for (const TileChoice& c : tile_choices())
        if (c.product_class.rfind("linear", 0) == 0) tiles += (tiles.empty() ? "" : ", ") + c.product_class + ": " + c.picked;
    std::printf("\nSmolLM2-135M's linear maps by weight type, GFLOP/s of CPU time, one thread, best of %d%s%s:\n\n", repeats,
                tiles.empty() ? "" : "; tiles: ", tiles.c_str());
    std::printf("| shape (m x out x in) | F32 | BF16 | F16 | F32 time / BF16 time | F32 / F16 |\n|---|---|---|---|---|---|\n");
    bool ok = true;
    for (const LinearShape& s : shapes) {
        int cols = 0;
        for (int o : s.outs) cols += o;
        const Matrix a = Matrix::Random(s.rows, s.in), w = Matrix::Random(cols, s.in);
        // Each type's bits and, for the F32 reference, the values they widen to.
        std::vector<std::uint16_t> bf16(static_cast<size_t>(w.size())), f16(bf16.size());
        std::vector<float> bf16_wide(bf16.size()), f16_wide(bf16.size());
        for (size_t i = 0; i < bf16.size(); ++i) {
            bf16[i] = f32_to_bf16(w.data()[i]);
            f16[i] = f32_to_f16(w.data()[i]);
            bf16_wide[i] = bf16_to_f32(bf16[i]);
            f16_wide[i] = f16_to_f32(f16[i]);
        }
        const auto linear = [&](WeightMatrix m) {
            std::vector<LinearWeight::Part> parts;
            size_t row = 0;
            for (int o : s.outs) {
                parts.push_back({m.offset(row * static_cast<size_t>(s.in)), o});
                row += static_cast<size_t>(o);
            }
            return LinearWeight(parts, s.in);
        };
        // The three in turn, repeat after repeat, best of each: a machine whose speed drifts
        // (other jobs) then slows all three alike. Natively the process's CPU time, which a
        // shared machine's other jobs do not add to (they still share the caches).
        const LinearWeight weights[3] = {linear(WeightMatrix(bf16_wide.data())), linear(WeightMatrix(bf16.data(), WeightType::bf16)),
                                         linear(WeightMatrix(f16.data(), WeightType::f16))};
        Matrix out[3];
        double best[3] = {1e30, 1e30, 1e30};
        for (int r = 0; r < repeats; ++r)
            for (int t = 0; t < 3; ++t) {
                out[t].resize(s.rows, cols);
                best[t] = std::min(best[t], cpu_seconds([&] { weights[t].apply(a.data(), s.rows, nullptr, out[t].data()); }));
            }
        const bool bf16_same = out[1] == out[0];
        Matrix ref(s.rows, cols);
        linear(WeightMatrix(f16_wide.data())).apply(a.data(), s.rows, nullptr, ref.data());
        const bool f16_same = out[2] == ref;
        const double t32 = best[0], tb = best[1], th = best[2];
        const double flops = 2.0 * s.rows * cols * s.in;
        std::printf("| %s (%d x %d x %d) | %.1f | %.1f | %.1f | %.2f | %.2f |\n", s.what, s.rows, cols, s.in, flops / t32 / 1e9,
                    flops / tb / 1e9, flops / th / 1e9, t32 / tb, t32 / th);
        if (!bf16_same || !f16_same) std::fprintf(stderr, "attnlab_bench: 16-bit weights gave other bits than F32 on %s\n", s.what);
        ok &= bf16_same && f16_same;
    }
    return ok;
}

}  // namespace

int run_kernel_bench(int repeats) {
    set_max_threads(1);
#ifdef __wasm_simd128__
    std::printf("clock (dependent xor-add chain): %.2f GHz\n\n", measured_ghz());
#endif
    print_tile_choices();
    const std::vector<std::string> kinds = tile_names();
    const Shape shapes[] = {
        {"c_attn, L = 128, W packed at load", 128, 2304, 768, false, true},
        {"c_fc, L = 1024, W packed at load", 1024, 3072, 768, false, true},
        {"c_fc, one row (decode), W packed at load", 1, 3072, 768, false, true},
        {"c_attn, L = 128", 128, 2304, 768, false, false},
        {"c_fc, L = 128", 128, 3072, 768, false, false},
        {"mlp c_proj, L = 128", 128, 768, 3072, false, false},
        {"c_fc, L = 1024", 1024, 3072, 768, false, false},
        {"scores q k^T, 64 queries x 1024 keys", 64, 1024, 64, true, false},
        {"weights v, 64 queries x 1024 keys", 64, 64, 1024, false, false},
        {"scores q k^T, 8 queries x 256 keys", 8, 256, 64, true, false},
        {"lm_head^T, one row (decode)", 1, 50257, 768, true, false},
        {"c_fc, one row (decode)", 1, 3072, 768, false, false},
    };
    std::printf("GFLOP/s, one thread, best of %d:\n\n| shape (m x n x k) |", repeats);
    for (const std::string& k : kinds) std::printf(" %s |", k.c_str());
    std::printf(" %s | Eigen | ours / Eigen |\n|---|", kinds.empty() ? "gemm()" : "picked");
    for (size_t i = 0; i < kinds.size() + 3; ++i) std::printf("---|");
    std::printf("\n");
    bool ok = true;
    for (const Shape& s : shapes) ok &= time_shape(s, repeats, kinds);
    ok &= time_weight_types(repeats);
    return ok ? 0 : 1;
}

int run_weight_type_bench(int repeats) {
    set_max_threads(1);
    return time_weight_types(repeats) ? 0 : 1;
}

}  // namespace attnlab
