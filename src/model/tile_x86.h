#pragma once
// The x86 register tiles behind LinearWeight (linear.cpp) and, natively, gemm() (gemm.cpp), and
// the loop that runs a block of a product through one of them: in zmm registers with AVX-512, in
// ymm registers with AVX2 and FMA (every x86-64 CPU since Intel Haswell and AMD Zen).
// ATTNLAB_X86_TILES is defined where the build has them; elsewhere this header is empty.
//
// b is packed in strips of kStrip columns (two vectors: 32 columns with AVX-512, 16 with AVX2),
// kc rows of a strip after one another, zero past the product's last column, so a step over p
// reads a strip's two vectors at unit stride. A tile holds R rows of c by S strips in 2 R S
// accumulators (at most 24 of the 32 zmm registers, 12 of the 16 ymm); per p it takes one
// broadcast of a per row and 2 S fused multiply-adds per row.
//
// W of a LinearWeight may be packed 16-bit (weight_matrix.h): strips of kStrip halves or bfloat16
// values, a vector's bytes a row, widened to the strip's two vectors of fp32 in registers as the
// tile reads them (load_strip_row). Widening is exact, so the bits are those of W packed as fp32.
//
// Every tile continues each element of c's own chain of fused multiply-adds over p in order,
// from the value c holds: an element's bits depend on neither the tile's shape, nor how a is
// read, nor its neighbours, nor the vector width. So the tiles below differ in speed only, and
// tile_choice.h may pick any of them, by measuring, without changing a single bit of any result;
// and an AVX2 machine's products have the bits an AVX-512 machine's have.
//
// What differs between them, and why each is there (bench/RESULTS.md has the measurements):
//   - the shape: with AVX-512 12 rows x 1 strip (2 vectors of b a step, 12 broadcasts), 6 x 2
//     (4 and 6), 4 x 3 (6 and 4); with AVX2 6 x 1, 3 x 2 and 2 x 3. Which shape keeps a core's
//     load ports, FMA pipes and L1 busiest differs between micro-architectures;
//   - how a is read: in place (one address register a row: at 12 rows the compiler keeps some of
//     them on the stack and reloads them every step) or from a copy of the tile's rows at the
//     fixed stride kDepthBlock (one address register for every row, the broadcasts fold into the
//     multiply-adds), at the price of copying R x kc floats once per tile and block.
#if !defined(__EMSCRIPTEN__) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)))
#define ATTNLAB_X86_TILES 1
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "model/weight_matrix.h"

namespace attnlab::x86 {

// The vector width's own operations; everything after them is written once for both.
#if defined(__AVX512F__)
using Vec = __m512;
using Lanes = __mmask16;  // which lanes of a vector are inside the product
constexpr int kLanes = 16;
constexpr int kMaxAccumulators = 24;  // of the 32 registers: the rest hold b and the broadcast

inline Lanes lanes_left(int left, int v) {
    const int in_vector = left - kLanes * v;
    return in_vector >= kLanes ? static_cast<Lanes>(0xFFFF) : in_vector <= 0 ? 0 : static_cast<Lanes>((1u << in_vector) - 1);
}
inline Vec load_lanes(Lanes m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
inline void store_lanes(float* p, Lanes m, Vec x) { _mm512_mask_storeu_ps(p, m, x); }
inline Vec load_aligned(const float* p) { return _mm512_load_ps(p); }
inline void store(float* p, Vec x) { _mm512_storeu_ps(p, x); }
inline Vec broadcast(float x) { return _mm512_set1_ps(x); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec zero() { return _mm512_setzero_ps(); }

// The two vectors of a strip row of 16-bit values (kStrip of them, 64 bytes at p, aligned).
inline void widen_f16(const std::uint16_t* p, Vec& lo, Vec& hi) {
    const __m512i row = _mm512_load_si512(p);
    lo = _mm512_cvtph_ps(_mm512_castsi512_si256(row));
    hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(row, 1));
}
inline void widen_bf16(const std::uint16_t* p, Vec& lo, Vec& hi) {
    const __m512i row = _mm512_load_si512(p);
    lo = _mm512_castsi512_ps(_mm512_slli_epi32(row, 16));
    hi = _mm512_castsi512_ps(_mm512_and_si512(row, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}
#else
using Vec = __m256;
using Lanes = __m256i;
constexpr int kLanes = 8;
constexpr int kMaxAccumulators = 12;  // of the 16 registers

inline Lanes lanes_left(int left, int v) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(left - kLanes * v), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec load_lanes(Lanes m, const float* p) { return _mm256_maskload_ps(p, m); }
// vmaskmovps to memory is slow on AMD cores: a whole vector takes a plain store.
inline void store_lanes(float* p, Lanes m, Vec x) {
    if (_mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF) _mm256_storeu_ps(p, x);
    else _mm256_maskstore_ps(p, m, x);
}
inline Vec load_aligned(const float* p) { return _mm256_load_ps(p); }
inline void store(float* p, Vec x) { _mm256_storeu_ps(p, x); }
inline Vec broadcast(float x) { return _mm256_set1_ps(x); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec zero() { return _mm256_setzero_ps(); }

inline void widen_f16(const std::uint16_t* p, Vec& lo, Vec& hi) {
    lo = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
    hi = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p + kLanes)));
}
inline void widen_bf16(const std::uint16_t* p, Vec& lo, Vec& hi) {
    const __m256i row = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
    lo = _mm256_castsi256_ps(_mm256_slli_epi32(row, 16));
    hi = _mm256_castsi256_ps(_mm256_and_si256(row, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
}
#endif

constexpr int kStrip = 2 * kLanes;                  // columns per packed strip: two vectors
constexpr int kDepthBlock = 256;                    // p per pass over a tile: the tile's rows of a (12 KB at most) stay in L1
constexpr int kMaxTileStrips = 3;                   // the most strips a tile kind has
constexpr int kMaxTileRows = kMaxAccumulators / 2;  // the most rows a tile kind has (one strip)

// How a tile reads its rows of a.
enum class ARows {
    in_place,  // a itself, row stride lda
    copied,    // a copy of the rows, row stride kDepthBlock
};

// rows x width floats of b (row stride ldb) as a strip: rows x kStrip, zero past width (<= kStrip).
inline void pack_strip(const float* b, size_t ldb, int rows, int width, float* strip) {
    const Lanes m0 = lanes_left(width, 0), m1 = lanes_left(width, 1);
    for (int p = 0; p < rows; ++p, b += ldb, strip += kStrip) {
        store(strip, load_lanes(m0, b));
        store(strip + kLanes, load_lanes(m1, b + kLanes));
    }
}

// rows x width 16-bit values of b (row stride ldb) as a strip: rows x kStrip, zero past width.
// Halves in column order; bfloat16 interleaved, column j and kLanes + j in one 32-bit lane (low
// and high half), so that widening a row is a shift and a mask (load_strip_row).
// The column of its strip that slot j holds (the interleave above; every other type in order).
inline int strip_column(int j, WeightType type) { return type == WeightType::bf16 ? (j % 2 ? kLanes : 0) + j / 2 : j; }

inline void pack_strip_16(const std::uint16_t* b, size_t ldb, int rows, int width, WeightType type, std::uint16_t* strip) {
    for (int p = 0; p < rows; ++p, b += ldb, strip += kStrip)
        for (int j = 0; j < kStrip; ++j) {
            const int column = strip_column(j, type);
            strip[j] = column < width ? b[column] : 0;
        }
}

// Row p of a strip as its two vectors of fp32 (columns 0 .. kLanes - 1 and kLanes .. kStrip - 1).
template <WeightType T>
inline void load_strip_row(const void* strip, int p, Vec& lo, Vec& hi) {
    if constexpr (T == WeightType::f32) {
        const float* row = static_cast<const float*>(strip) + p * kStrip;
        lo = load_aligned(row);
        hi = load_aligned(row + kLanes);
    } else if constexpr (T == WeightType::f16) {
        widen_f16(static_cast<const std::uint16_t*>(strip) + p * kStrip, lo, hi);
    } else {
        widen_bf16(static_cast<const std::uint16_t*>(strip) + p * kStrip, lo, hi);
    }
}

// Where a tile asks for the next block of b while it runs: `lines` cache lines from `from` on in
// each of the first `strips` strips (strip s at from + s * strip_stride bytes), one line every 4
// steps of p. No lines: nothing to ask for.
struct Prefetch {
    const char* from = nullptr;
    size_t strip_stride = 0;  // bytes
    int strips = 0, lines = 0;
};

// c (R x 32 S, row stride ldc; only the `left` first columns are read or written) +=
// a (R x kc) @ b (S strips of kc x 32 of type T, strip s at b + s * strip_stride elements). a's
// row stride is lda, or kDepthBlock when A is ARows::copied.
template <int R, int S, ARows A, WeightType T>
void tile(int kc, const float* a, size_t lda, const void* b, size_t strip_stride, float* c, size_t ldc, int left, Prefetch ahead) {
    constexpr size_t element = T == WeightType::f32 ? sizeof(float) : sizeof(std::uint16_t);
    constexpr int V = 2 * S;
    const size_t a_stride = A == ARows::copied ? static_cast<size_t>(kDepthBlock) : lda;
    Lanes mask[V];
    for (int v = 0; v < V; ++v) mask[v] = lanes_left(left, v);
    Vec acc[R][V];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = load_lanes(mask[v], c + r * ldc + kLanes * v);
    for (int p = 0; p < kc; ++p) {
        if ((p & 3) == 0 && (p >> 2) < ahead.lines)
            for (int s = 0; s < S && s < ahead.strips; ++s) _mm_prefetch(ahead.from + s * ahead.strip_stride + (p >> 2) * 64, _MM_HINT_T1);
        Vec bv[V];
        for (int s = 0; s < S; ++s)
            load_strip_row<T>(static_cast<const char*>(b) + s * strip_stride * element, p, bv[2 * s], bv[2 * s + 1]);
        for (int r = 0; r < R; ++r) {
            const Vec x = broadcast(a[r * a_stride + p]);
            for (int v = 0; v < V; ++v) acc[r][v] = fma(x, bv[v], acc[r][v]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) store_lanes(c + r * ldc + kLanes * v, mask[v], acc[r][v]);
}

using TileFn = void (*)(int, const float*, size_t, const void*, size_t, float*, size_t, int, Prefetch);
// A kind's functions for every smaller shape the edges of a product need (fn[s - 1][r - 1]: r
// rows by s strips), for b of one type.
using TileTable = std::array<std::array<TileFn, kMaxTileRows>, kMaxTileStrips>;

// One kind of tile: its name (rows x columns, then how it reads a), its shape, how it reads a,
// and its tables for packed b of each type (fn[WeightType]).
struct TileKind {
    const char* name;
    int rows, strips;
    ARows a;
    std::array<TileTable, 3> fn;
};

// The functions of r rows by S strips, r = 1..kMaxTileRows; null where a tile would hold more
// than kMaxAccumulators (no kind has that shape, and its edges never need it).
constexpr int max_rows(int strips) { return kMaxAccumulators / (2 * strips); }
template <int S, ARows A, WeightType T, int... R>
constexpr std::array<TileFn, kMaxTileRows> tiles_of_strips(std::integer_sequence<int, R...>) {
    return {(R + 1 <= max_rows(S) ? &tile<(R + 1 <= max_rows(S) ? R + 1 : 1), S, A, T> : nullptr)...};
}
template <ARows A, WeightType T>
constexpr TileTable tile_table() {
    constexpr auto rows = std::make_integer_sequence<int, kMaxTileRows>{};
    return {tiles_of_strips<1, A, T>(rows), tiles_of_strips<2, A, T>(rows), tiles_of_strips<3, A, T>(rows)};
}
template <ARows A>
constexpr std::array<TileTable, 3> tile_tables() {
    static_assert(static_cast<int>(WeightType::f32) == 0 && static_cast<int>(WeightType::f16) == 1 &&
                  static_cast<int>(WeightType::bf16) == 2);
    return {tile_table<A, WeightType::f32>(), tile_table<A, WeightType::f16>(), tile_table<A, WeightType::bf16>()};
}

// The kinds tile_choice.h chooses from, in the order it lists them. With AVX-512 the first is the
// tile this engine began with (tuned on AMD Zen 5); the AVX2 kinds are the same four structures
// at half the width and half the accumulators.
inline constexpr std::array<TileKind, 4> kTileKinds = {{
#if defined(__AVX512F__)
    {"12x32-in-place", 12, 1, ARows::in_place, tile_tables<ARows::in_place>()},
    {"12x32-copied", 12, 1, ARows::copied, tile_tables<ARows::copied>()},
    {"6x64-copied", 6, 2, ARows::copied, tile_tables<ARows::copied>()},
    {"4x96-copied", 4, 3, ARows::copied, tile_tables<ARows::copied>()},
#else
    {"6x16-in-place", 6, 1, ARows::in_place, tile_tables<ARows::in_place>()},
    {"6x16-copied", 6, 1, ARows::copied, tile_tables<ARows::copied>()},
    {"3x32-copied", 3, 2, ARows::copied, tile_tables<ARows::copied>()},
    {"2x48-copied", 2, 3, ARows::copied, tile_tables<ARows::copied>()},
#endif
}};

// c (m x width, row stride ldc) += a (m x kc, row stride lda) @ one block of packed b of type
// `type`: the strips of kc x kStrip at b + s * strip_stride elements, enough of them for width
// columns. Row tiles after the first ask for `next` (the block this run of columns needs after
// this one) while they run, 64 lines of each strip a row tile, so that the block is in cache
// when its first tile needs it.
void multiply_block(const TileKind& kind, WeightType type, int m, int width, int kc, const float* a, size_t lda, const void* b,
                    size_t strip_stride, float* c, size_t ldc, Prefetch next = {});

// gemm() (gemm.h) from 4 rows through tiles of this kind, op(b) packed a block at a time per call
// (gemm.cpp).
void packed_gemm(const TileKind& kind, int m, int n, int k, const float* a, int lda, const float* b, int ldb, bool b_transposed, float* c,
                 int ldc, float alpha, const float* bias);

// Columns c0..c0 + width - 1 of out (n, cols) = in (n, rows) @ W + bias (null: none), through
// tiles of this kind, with W packed as `type` in strips of kStrip columns (strip s at packed +
// s rows kStrip elements) (linear.cpp). Meanwhile fetches the start of the columns next_c0..
// that come next (next_width 0: none).
void packed_linear_columns(const TileKind& kind, const float* in, int n, int rows, const void* packed, WeightType type, int cols,
                           const float* bias, float* out, int c0, int width, int next_c0, int next_width);

}  // namespace attnlab::x86
#endif
