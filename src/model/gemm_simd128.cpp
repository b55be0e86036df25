// gemm() in WebAssembly: a register-blocked SIMD128 kernel.
//
// A tile of kMr = 4 rows by kNr = 8 columns of c lives in 8 vector registers while p runs over
// a block of kKc values: per p, two loads of packed b, one broadcast load of a per row, and one
// multiply-add per register. V8 on x86-64 allocates 15 of the 16 xmm registers to wasm values,
// so 4 x 8 (8 accumulators, 2 b vectors, 1 broadcast) is the largest tile that leaves it room;
// bench/RESULTS.md has the tile sizes tried.
//
// Two builds of this file. The plain one multiplies and adds (f32x4.mul, f32x4.add). The
// relaxed-SIMD one (-mrelaxed-simd: attnlab-relaxed.wasm, which the page loads where the browser
// validates relaxed SIMD) uses f32x4.relaxed_madd, which the engine runs as one fused
// multiply-add where the CPU has one (every x86-64 CPU with FMA3, every ARM64), and as a multiply
// and an add where it has not. Emscripten 3.1.6's LLVM 14 encodes relaxed_madd with the
// proposal's early opcode, which engines reject: cmake/rewrite_relaxed_madd.mjs re-encodes it
// after the link, checked (docs/kernels.md).
//
// b is copied into panels of kKc x 8 contiguous floats (zero-padded past n) once per block, so
// the kernel reads it at unit stride and a whole panel stays in L1 while every row tile of a
// passes over it. With fewer than 4 rows (decoding one token) packing would cost more than the
// product, so those read b in place: (k, n) row by row, or (n, k) as dot products; bfloat16 b
// too, widened in registers (gemm_16bit_in_place).
//
// Every element is summed over p in order from 0, the partial sums of a block stored in c
// and read back for the next, then multiplied by alpha and given its bias: the plain loop's
// arithmetic, element by element (gemm.h), or in the relaxed-SIMD build on a CPU with FMA the
// fused chain's. The exception is a row of fewer than 4 against b^T, summed in four interleaved
// lanes by multiplies and adds in either build (direct_transposed_row).
#include <wasm_simd128.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/safetensors.h"
#include "model/gemm.h"

namespace attnlab {

namespace {

// The register tile: kMr rows by kVectors vectors of 4 columns (bench/RESULTS.md times the
// alternatives; -DATTNLAB_SIMD128_TILE_ROWS / _VECTORS build them). Its shape changes speed only:
// every element is the same chain over p whatever tile holds it.
#ifndef ATTNLAB_SIMD128_TILE_ROWS
#define ATTNLAB_SIMD128_TILE_ROWS 4
#endif
#ifndef ATTNLAB_SIMD128_TILE_VECTORS
#define ATTNLAB_SIMD128_TILE_VECTORS 2
#endif
constexpr int kMr = ATTNLAB_SIMD128_TILE_ROWS;  // rows of a tile
constexpr int kVectors = ATTNLAB_SIMD128_TILE_VECTORS;
constexpr int kNr = 4 * kVectors;  // columns of a tile, and of a packed panel of b
constexpr int kMinPackedRows = 4;  // from this many rows b is packed; fewer read b in place (gemm_sum_order)
constexpr int kKc = 256;           // p per block: a packed panel of 8 columns is 8 KB, 4 rows of a 4 KB
constexpr int kNc = 1024;          // columns per packed block: 1 MB of packed b at kKc, inside L2

// acc + x * y, lane by lane: one relaxed multiply-add in the relaxed-SIMD build (fused where the
// CPU has FMA), a multiply then an add in the plain one.
inline v128_t multiply_add(v128_t x, v128_t y, v128_t acc) {
#ifdef __wasm_relaxed_simd__
    return __builtin_wasm_fma_f32x4(x, y, acc);  // x * y + acc once re-encoded (the file's header)
#else
    return wasm_f32x4_add(acc, wasm_f32x4_mul(x, y));
#endif
}

// The same for one float (in the relaxed-SIMD build through lane 0), so that the edges of a
// product round as its body does.
inline float multiply_add(float x, float y, float acc) {
#ifdef __wasm_relaxed_simd__
    return wasm_f32x4_extract_lane(multiply_add(wasm_f32x4_splat(x), wasm_f32x4_splat(y), wasm_f32x4_splat(acc)), 0);
#else
    return acc + x * y;
#endif
}

// rows x kNr tile of c (row stride ldc) += a (rows x kc, row stride lda) @ b (kc x kNr, row
// stride ldb). With accumulate false the tile starts from zero instead of from c.
// Not inlined: inside the large callers V8's register allocator spilled the accumulators.
template <int R>
__attribute__((noinline)) void tile(int kc, const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc, bool accumulate) {
    v128_t acc[R][kVectors];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < kVectors; ++v) acc[r][v] = accumulate ? wasm_v128_load(c + r * ldc + 4 * v) : wasm_f32x4_splat(0.0f);
    for (int p = 0; p < kc; ++p) {
        v128_t bv[kVectors];
        for (int v = 0; v < kVectors; ++v) bv[v] = wasm_v128_load(b + p * ldb + 4 * v);
        for (int r = 0; r < R; ++r) {
            const v128_t x = wasm_v128_load32_splat(a + r * lda + p);
            for (int v = 0; v < kVectors; ++v) acc[r][v] = multiply_add(x, bv[v], acc[r][v]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < kVectors; ++v) wasm_v128_store(c + r * ldc + 4 * v, acc[r][v]);
}

using TileFn = void (*)(int, const float*, size_t, const float*, size_t, float*, size_t, bool);
template <int... R>
constexpr std::array<TileFn, sizeof...(R)> make_tiles(std::integer_sequence<int, R...>) {
    return {&tile<R + 1>...};
}
constexpr std::array<TileFn, kMr> kTiles = make_tiles(std::make_integer_sequence<int, kMr>{});  // kTiles[r - 1]: r rows

void tile_rows(int rows, int kc, const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc, bool accumulate) {
    kTiles[static_cast<size_t>(rows - 1)](kc, a, lda, b, ldb, c, ldc, accumulate);
}

// A tile whose last columns fall past n: computed into a full-width scratch tile, copied back.
void edge_tile(int rows, int width, int kc, const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc, bool accumulate) {
    alignas(16) float t[kMr * kNr] = {};
    if (accumulate)
        for (int r = 0; r < rows; ++r) std::copy(c + r * ldc, c + r * ldc + width, t + r * kNr);
    tile_rows(rows, kc, a, lda, b, ldb, t, kNr, accumulate);
    for (int r = 0; r < rows; ++r) std::copy(t + r * kNr, t + r * kNr + width, c + r * ldc);
}

// One panel of op(b) = b^T: rows 0..width-1 of b (row stride ldb, kc values each) as the
// panel's columns, kc x kNr, zero past width. A full panel goes 4 x 4 blocks at a time,
// transposed in registers: element by element took about 1 ns an element under node, 0.11 ns
// this way (bench/RESULTS.md). Every linear map of a Llama-family model packs transposed
// (nn.Linear weights are (out, in)): 106M elements a pass of SmolLM2-135M, about 0.1 s of its
// 0.9 s prefill at L = 128 on one thread. The rest element by element.
void pack_transposed_panel(const float* b, size_t ldb, int kc, int width, float* panel) {
    int p = 0;
    if (width == kNr)
        for (; p + 4 <= kc; p += 4)
            for (int v = 0; v < kVectors; ++v) {
                const float* row = b + static_cast<size_t>(4 * v) * ldb + p;
                const v128_t r0 = wasm_v128_load(row), r1 = wasm_v128_load(row + ldb);
                const v128_t r2 = wasm_v128_load(row + 2 * ldb), r3 = wasm_v128_load(row + 3 * ldb);
                const v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
                const v128_t t2 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
                float* to = panel + static_cast<size_t>(p) * kNr + 4 * v;
                wasm_v128_store(to, wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5));
                wasm_v128_store(to + kNr, wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7));
                wasm_v128_store(to + 2 * kNr, wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5));
                wasm_v128_store(to + 3 * kNr, wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7));
            }
    for (int j = 0; j < kNr; ++j) {
        const float* from = b + static_cast<size_t>(j) * ldb;
        for (int q = p; q < kc; ++q) panel[q * kNr + j] = j < width ? from[q] : 0.0f;
    }
}

// b's block of rows p0..p0+kc, columns j0..j0+nc, as panels of kc x kNr (the last zero-padded).
// op(b)(p, j) is b[p * ldb + j], or b[j * ldb + p] when b is transposed.
void pack_b(const float* b, size_t ldb, bool transposed, int p0, int kc, int j0, int nc, float* out) {
    const int full = nc / kNr * kNr;  // columns in whole panels
    if (!transposed) {
        // Row by row of b, so that it is read at unit stride (strided reads cost a TLB miss per
        // row of a large matrix), each row's kNr-column pieces going to their panels.
        for (int p = 0; p < kc; ++p) {
            const float* from = b + static_cast<size_t>(p0 + p) * ldb + j0;
            float* to = out + static_cast<size_t>(p) * kNr;
            for (int jp = 0; jp < full; jp += kNr, to += static_cast<size_t>(kNr) * kc)
                for (int v = 0; v < kVectors; ++v) wasm_v128_store(to + 4 * v, wasm_v128_load(from + jp + 4 * v));
            if (full < nc) std::fill(std::copy(from + full, from + nc, to), to + kNr, 0.0f);
        }
        return;
    }
    for (int jp = 0; jp < nc; jp += kNr)
        pack_transposed_panel(b + static_cast<size_t>(j0 + jp) * ldb + p0, ldb, kc, std::min(kNr, nc - jp),
                              out + static_cast<size_t>(jp) * kc);
}

// c (m, n) += a @ op(b) over packed blocks, m of any size.
void packed_product(int m, int n, int k, const float* a, size_t lda, const float* b, size_t ldb, bool transposed, float* c, size_t ldc) {
    // One buffer per thread, kept: the forward pass makes thousands of calls and must not
    // allocate in them (bench/RESULTS.md, a steady wasm time).
    thread_local std::vector<float> packed;
    const size_t need = static_cast<size_t>(kKc) * ((std::min(n, kNc) + kNr - 1) / kNr * kNr);
    if (packed.size() < need) packed.resize(need);
    for (int j0 = 0; j0 < n; j0 += kNc) {
        const int nc = std::min(kNc, n - j0);
        for (int p0 = 0; p0 < k; p0 += kKc) {
            const int kc = std::min(kKc, k - p0);
            pack_b(b, ldb, transposed, p0, kc, j0, nc, packed.data());
            for (int i0 = 0; i0 < m; i0 += kMr) {
                const int rows = std::min(kMr, m - i0);
                const float* ai = a + static_cast<size_t>(i0) * lda + p0;
                for (int jp = 0; jp < nc; jp += kNr) {
                    float* cij = c + static_cast<size_t>(i0) * ldc + j0 + jp;
                    const float* panel = packed.data() + static_cast<size_t>(jp) * kc;
                    if (jp + kNr <= nc) tile_rows(rows, kc, ai, lda, panel, kNr, cij, ldc, p0 > 0);
                    else edge_tile(rows, nc - jp, kc, ai, lda, panel, kNr, cij, ldc, p0 > 0);
                }
            }
        }
    }
}

// b as the rows-of-fewer-than-4 paths below read it, in place: fp32, or bfloat16 widened in
// registers (a shift: exact), so that a decode step reads each 16-bit weight once instead of
// widening it into a buffer and reading that (gemm_16bit_in_place).
//
// kRowsAtOnce: rows of b^T that direct_transposed_row reads side by side. fp32 goes one row at
// a time, a single stream through memory: SmolLM2-135M's decode step (537 MB of fp32 weights)
// took 28-30 ms a token under node with eight rows side by side and 21-22 ms with one (eight
// streams 2.3 KB apart read at 19 GB/s, one at 25). bfloat16 keeps eight: its widening shifts
// then overlap the loads, and one row at a time took 21 ms against 18 (bench/RESULTS.md).
struct F32Elements {
    static constexpr int kRowsAtOnce = 1;
    const float* b;
    v128_t four(size_t i) const { return wasm_v128_load(b + i); }
    float one(size_t i) const { return b[i]; }
    F32Elements row(size_t i) const { return {b + i}; }
};
struct Bf16Elements {
    static constexpr int kRowsAtOnce = 8;
    const std::uint16_t* b;
    v128_t four(size_t i) const { return wasm_i32x4_shl(wasm_u32x4_load16x4(b + i), 16); }
    float one(size_t i) const { return bf16_to_f32(b[i]); }
    Bf16Elements row(size_t i) const { return {b + i}; }
};

// c (one row, n) = a (k) @ b with b (k, n) read in place, row after row of b: each p adds
// a[p] b[p, :] to the whole row of c, which stays in L1, so b streams through once. Eight p at
// a time between a load and a store of c, in order of p.
template <typename B>
void direct_row(int n, int k, const float* a, B b, size_t ldb, float* c) {
    constexpr int kP = 8;
    std::fill(c, c + n, 0.0f);
    int p = 0;
    for (; p + kP <= k; p += kP) {
        B rows[kP];
        v128_t x[kP];
        for (int q = 0; q < kP; ++q) {
            rows[q] = b.row(static_cast<size_t>(p + q) * ldb);
            x[q] = wasm_f32x4_splat(a[p + q]);
        }
        int j = 0;
        for (; j + 4 <= n; j += 4) {
            v128_t s = wasm_v128_load(c + j);
            for (int q = 0; q < kP; ++q) s = multiply_add(x[q], rows[q].four(static_cast<size_t>(j)), s);
            wasm_v128_store(c + j, s);
        }
        for (; j < n; ++j)
            for (int q = 0; q < kP; ++q) c[j] = multiply_add(a[p + q], rows[q].one(static_cast<size_t>(j)), c[j]);
    }
    for (; p < k; ++p) {
        const B bp = b.row(static_cast<size_t>(p) * ldb);
        for (int j = 0; j < n; ++j) c[j] = multiply_add(a[p], bp.one(static_cast<size_t>(j)), c[j]);
    }
}

// (l0 + l1) + (l2 + l3) of a vector's lanes.
float lanes_total(v128_t s) {
    return (wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1)) +
           (wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3));
}

// The dot products of a with rows r[0..R) of b, into c[0..R).
template <int R, typename B>
void dot_rows(int k, const float* a, B b, size_t ldb, float* c) {
    const int k4 = k / 4 * 4;
    v128_t s[R];
    for (int l = 0; l < R; ++l) s[l] = wasm_f32x4_splat(0.0f);
    for (int p = 0; p < k4; p += 4) {
        const v128_t x = wasm_v128_load(a + p);
        for (int l = 0; l < R; ++l) s[l] = wasm_f32x4_add(s[l], wasm_f32x4_mul(x, b.four(l * ldb + static_cast<size_t>(p))));
    }
    for (int l = 0; l < R; ++l) {
        float t = lanes_total(s[l]);
        for (int p = k4; p < k; ++p) t += a[p] * b.one(l * ldb + static_cast<size_t>(p));
        c[l] = t;
    }
}

// c (one row, n) = a (k) @ b^T with b (n, k) read in place: dot products of a with
// B::kRowsAtOnce rows of b at a time. This is the one path that does not sum in order of p:
// each lane l sums the p = l mod 4 below k rounded down to 4, the lanes are added as
// (l0 + l1) + (l2 + l3), then the last k mod 4 terms in order (gemm.h), however many rows go
// side by side. Reading one row of b per output is what makes a decode step's 154 MB lm_head
// product stream at memory speed.
template <typename B>
void direct_transposed_row(int n, int k, const float* a, B b, size_t ldb, float* c) {
    int j = 0;
    for (; j + B::kRowsAtOnce <= n; j += B::kRowsAtOnce) dot_rows<B::kRowsAtOnce>(k, a, b.row(static_cast<size_t>(j) * ldb), ldb, c + j);
    for (; j < n; ++j) dot_rows<1>(k, a, b.row(static_cast<size_t>(j) * ldb), ldb, c + j);
}

// Rows of fewer than kMinPackedRows, b read in place.
template <typename B>
void direct_rows(int m, int n, int k, const float* a, size_t lda, B b, size_t ldb, bool b_transposed, float* c, size_t ldc) {
    for (int i = 0; i < m; ++i) {
        if (b_transposed) direct_transposed_row(n, k, a + i * lda, b, ldb, c + i * ldc);
        else direct_row(n, k, a + i * lda, b, ldb, c + i * ldc);
    }
}

// c = alpha c + bias, after the sums.
void scale_and_add_bias(int m, int n, float* c, size_t ldc, float alpha, const float* bias) {
    if (alpha == 1.0f && !bias) return;
    const v128_t va = wasm_f32x4_splat(alpha);
    for (int i = 0; i < m; ++i) {
        float* row = c + i * ldc;
        int j = 0;
        if (bias) {
            for (; j + 4 <= n; j += 4) wasm_v128_store(row + j, multiply_add(wasm_v128_load(row + j), va, wasm_v128_load(bias + j)));
            for (; j < n; ++j) row[j] = multiply_add(row[j], alpha, bias[j]);
        } else {
            for (; j + 4 <= n; j += 4) wasm_v128_store(row + j, wasm_f32x4_mul(wasm_v128_load(row + j), va));
            for (; j < n; ++j) row[j] *= alpha;
        }
    }
}

}  // namespace

// Whether multiply_add() rounds once here: (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24 fused, and 0
// when the product is rounded first. Opaque to the compiler, so the engine decides.
bool multiply_add_is_fused() {
    static const bool fused = [] {
        volatile float x = 1.0f + 0x1p-12f, acc = -1.0f - 0x1p-11f;
        return multiply_add(x, x, acc) != 0.0f;
    }();
    return fused;
}

GemmSumOrder gemm_sum_order(int m, bool b_transposed) {
    if (m < kMinPackedRows && b_transposed) return GemmSumOrder::four_lanes;
    return multiply_add_is_fused() ? GemmSumOrder::fused_chain : GemmSumOrder::plain_loop;
}

void gemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c, int ldc, float alpha,
          const float* bias) {
    if (m <= 0 || n <= 0) return;
    const size_t sa = static_cast<size_t>(lda), sb = static_cast<size_t>(ldb), sc = static_cast<size_t>(ldc);
    if (k <= 0) {
        for (int i = 0; i < m; ++i) std::fill(c + i * sc, c + i * sc + n, 0.0f);
    } else if (m >= kMinPackedRows) {
        packed_product(m, n, k, a, sa, b, sb, b_transposed, c, sc);
    } else {
        direct_rows(m, n, k, a, sa, F32Elements{b}, sb, b_transposed, c, sc);
    }
    scale_and_add_bias(m, n, c, sc, alpha, bias);
}

bool gemm_16bit_in_place(int m, int n, int k, const float* a, int lda, WeightMatrix b, int ldb, bool b_transposed, float* c, int ldc,
                         float alpha, const float* bias) {
    if (m <= 0 || m >= kMinPackedRows || n <= 0 || k <= 0 || b.type != WeightType::bf16) return false;
    const size_t sc = static_cast<size_t>(ldc);
    direct_rows(m, n, k, a, static_cast<size_t>(lda), Bf16Elements{b.bits16()}, static_cast<size_t>(ldb), b_transposed, c, sc);
    scale_and_add_bias(m, n, c, sc, alpha, bias);
    return true;
}

}  // namespace attnlab
