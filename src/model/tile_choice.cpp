// The run-time choice of tile (tile_choice.h): every kind timed on one probe product per class,
// the first time any product needs a pick, and the fastest kept for the process.
#include "model/tile_choice.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "base/random.h"
#include "base/timing.h"
#include "model/linear.h"

namespace attnlab {

namespace {

constexpr int kFewRows = 24;

}  // namespace

ProductClass linear_class(int rows) { return rows < kFewRows ? ProductClass::linear_few_rows : ProductClass::linear_many_rows; }

ProductClass gemm_class(int rows, bool b_transposed) {
    if (b_transposed) return rows < kFewRows ? ProductClass::gemm_bt_few_rows : ProductClass::gemm_bt_many_rows;
    return rows < kFewRows ? ProductClass::gemm_few_rows : ProductClass::gemm_many_rows;
}

#if defined(ATTNLAB_X86_TILES)

namespace {

const char* const kClassNames[kProductClasses] = {"linear, few rows",  "linear, many rows",  "gemm b, few rows",
                                                  "gemm b, many rows", "gemm b^T, few rows", "gemm b^T, many rows"};

using x86::kTileKinds;
constexpr int kKinds = static_cast<int>(kTileKinds.size());

// The product each class is timed on: m rows of a (k) against k x n of b. Generic sizes inside the
// class, small enough that timing every kind on every class takes a few tens of milliseconds.
struct Probe {
    int m, n, k;
};
constexpr Probe kProbes[kProductClasses] = {{8, 512, 512}, {96, 512, 256}, {8, 512, 256}, {96, 512, 256}, {8, 512, 256}, {96, 512, 256}};
constexpr int kRuns = 3;  // timed runs per kind and class, after one that is not

struct Measurements {
    std::array<std::array<double, kKinds>, kProductClasses> gflops{};
    std::array<int, kProductClasses> fastest{};
    double seconds = 0;  // what measuring them all took
};

std::once_flag measured_once;
Measurements measured;
std::atomic<int> forced{-1};

std::vector<float> random_floats(SplitMix64& rng, size_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
    return v;
}

// GFLOP/s of the best of kRuns runs of run(), after one that is not timed.
template <typename Run>
double best_gflops(double flops, Run&& run) {
    return flops / std::max(best_seconds(kRuns, run), 1e-9) / 1e9;
}

// Every kind on class c's probe, on this thread: a LinearWeight product panel by panel as apply()
// runs it on one thread, or a gemm() with op(b) packed per call.
std::array<double, kKinds> time_class(ProductClass c) {
    const Probe probe = kProbes[static_cast<int>(c)];
    const bool linear = c == ProductClass::linear_few_rows || c == ProductClass::linear_many_rows;
    const bool transposed = c == ProductClass::gemm_bt_few_rows || c == ProductClass::gemm_bt_many_rows;
    SplitMix64 rng(static_cast<std::uint64_t>(c) + 1);
    const std::vector<float> a = random_floats(rng, static_cast<size_t>(probe.m) * probe.k);
    const std::vector<float> b = random_floats(rng, static_cast<size_t>(probe.k) * probe.n);
    std::vector<float> c_out(static_cast<size_t>(probe.m) * probe.n);
    std::vector<float> packed(linear ? static_cast<size_t>(probe.k) * probe.n + 16 : 0);  // probe.n is whole strips
    float* const strips = packed.data() + (16 - (reinterpret_cast<std::uintptr_t>(packed.data()) / sizeof(float)) % 16) % 16;
    for (int j = 0; linear && j < probe.n; j += x86::kStrip)
        x86::pack_strip(b.data() + j, static_cast<size_t>(probe.n), probe.k, x86::kStrip, strips + static_cast<size_t>(j) * probe.k);
    std::array<double, kKinds> gflops{};
    for (int i = 0; i < kKinds; ++i) {
        const x86::TileKind& kind = kTileKinds[static_cast<size_t>(i)];
        gflops[static_cast<size_t>(i)] = best_gflops(2.0 * probe.m * probe.n * probe.k, [&] {
            if (linear) {
                constexpr int panel = LinearWeight::kPanel;
                for (int c0 = 0; c0 < probe.n; c0 += panel)
                    x86::packed_linear_columns(kind, a.data(), probe.m, probe.k, strips, WeightType::f32, probe.n, nullptr, c_out.data(),
                                               c0, std::min(panel, probe.n - c0), c0 + panel, std::clamp(probe.n - c0 - panel, 0, panel));
            } else {
                x86::packed_gemm(kind, probe.m, probe.n, probe.k, a.data(), probe.k, b.data(), transposed ? probe.k : probe.n, transposed,
                                 c_out.data(), probe.n, 1.0f, nullptr);
            }
        });
    }
    return gflops;
}

const Measurements& measurements() {
    std::call_once(measured_once, [] {
        const auto start = SteadyClock::now();
        for (int c = 0; c < kProductClasses; ++c) {
            const std::array<double, kKinds> g = time_class(static_cast<ProductClass>(c));
            measured.gflops[static_cast<size_t>(c)] = g;
            measured.fastest[static_cast<size_t>(c)] = static_cast<int>(std::max_element(g.begin(), g.end()) - g.begin());
        }
        measured.seconds = seconds_since(start);
    });
    return measured;
}

}  // namespace

const x86::TileKind& tile_for(ProductClass c) {
    const int f = forced.load(std::memory_order_relaxed);
    const int kind = f >= 0 ? f : measurements().fastest[static_cast<size_t>(c)];
    return kTileKinds[static_cast<size_t>(kind)];
}

std::vector<TileChoice> tile_choices() {
    const Measurements& m = measurements();
    const int f = forced.load();
    std::vector<TileChoice> out;
    for (int c = 0; c < kProductClasses; ++c) {
        const Probe p = kProbes[c];
        TileChoice choice;
        choice.product_class = kClassNames[c];
        choice.probe = std::to_string(p.m) + " x " + std::to_string(p.n) + " x " + std::to_string(p.k);
        choice.picked = kTileKinds[static_cast<size_t>(f >= 0 ? f : m.fastest[static_cast<size_t>(c)])].name;
        choice.forced = f >= 0;
        choice.seconds = m.seconds;
        for (int i = 0; i < kKinds; ++i)
            choice.timings.push_back({kTileKinds[static_cast<size_t>(i)].name, m.gflops[static_cast<size_t>(c)][static_cast<size_t>(i)]});
        out.push_back(choice);
    }
    return out;
}

std::vector<std::string> tile_names() {
    std::vector<std::string> names;
    for (const x86::TileKind& kind : kTileKinds) names.emplace_back(kind.name);
    return names;
}

bool force_tile(const std::string& name) {
    if (name.empty()) {
        forced = -1;
        return true;
    }
    for (int i = 0; i < kKinds; ++i)
        if (name == kTileKinds[static_cast<size_t>(i)].name) {
            forced = i;
            return true;
        }
    return false;
}

#else

std::vector<TileChoice> tile_choices() { return {}; }
std::vector<std::string> tile_names() { return {}; }
bool force_tile(const std::string& name) { return name.empty(); }

#endif

}  // namespace attnlab
