#pragma once
// Which register tile each class of product uses, chosen on the CPU the process runs on.
//
// Natively with AVX-512, or AVX2 and FMA, there are several kinds of tile (tile_x86.h): a tile
// tuned on one micro-architecture ran at under half of Eigen's speed on another (issue 28: AMD
// Zen 5 against Intel Sapphire Rapids). The first time the process runs a product natively, every
// kind is timed on a small product of each class below, one thread, best of a few runs, and the
// fastest kind of each class is kept for the process. No list of CPU names is consulted.
//
// The pick changes speed only, never bits: every kind of tile sums every element as the same
// chain of fused multiply-adds over p in order (tile_x86.h). So two processes on one machine
// give the same bits even when their timings pick differently, and so do all thread counts
// (docs/kernels.md). Eigen is not among the kinds: its order of summation depends on its
// blocking, which it sizes from the caches it detects, so picking it by a timing would let a
// run's bits change from one process to the next.
//
// Without them (a native build without AVX2, WebAssembly) there is one kernel and nothing to choose.
#include <string>
#include <vector>

namespace attnlab {

// The classes of product the choice keeps one pick each for. "Few rows" is under 24: a decoding
// step, a short chunk of a prompt; "b per call" is gemm(), which packs op(b) on every call, and
// "linear" LinearWeight, whose weights were packed once at load.
enum class ProductClass { linear_few_rows, linear_many_rows, gemm_few_rows, gemm_many_rows, gemm_bt_few_rows, gemm_bt_many_rows };
constexpr int kProductClasses = 6;

ProductClass linear_class(int rows);
ProductClass gemm_class(int rows, bool b_transposed);

// What the choice measured for one class: each kind's speed on the class's probe product, and
// which kind the class uses (the fastest, unless force_tile() named one).
struct TileTiming {
    std::string tile;
    double gflops;
};
struct TileChoice {
    std::string product_class, probe, picked;
    bool forced = false;
    double seconds = 0;  // what measuring every class took, at the process's first product
    std::vector<TileTiming> timings;
};

// The choice for every class, measuring now where no product has yet. Empty without the x86 tiles.
std::vector<TileChoice> tile_choices();

// The kinds of tile in this build, in the choice's order (empty without the x86 tiles).
std::vector<std::string> tile_names();

// Every product from now on uses the named kind (tests, attnlab_bench --tile); "" returns to the
// measured picks. False, and nothing changes, if there is no kind of that name.
bool force_tile(const std::string& name);

}  // namespace attnlab

#include "model/tile_x86.h"
#if defined(ATTNLAB_X86_TILES)

namespace attnlab {
// The kind of tile products of this class use now.
const x86::TileKind& tile_for(ProductClass c);
}  // namespace attnlab
#endif
