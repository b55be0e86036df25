#pragma once
// A seeded random source whose output is the same on every platform and compiler.
// std::*_distribution is implementation-defined, so libstdc++ (native) and libc++ (wasm)
// would give different "random" logits for the same seed; we need identical numbers so a
// shared link or a test case means the same thing in the browser and on the desktop.
#include <cstdint>
#include <initializer_list>

namespace attnlab {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, full-period, passes BigCrush.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

    // Uniform in [0, 1), 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    // Standard normal by Box-Muller; uses 1 - u so the log never sees 0.
    double normal();

private:
    std::uint64_t state_;
};

// A seed for one piece of a larger computation, e.g. (run seed, head, query): the pieces get
// independent streams, and each stream depends only on its own coordinates, not on the order
// or the thread in which the pieces are computed.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
    SplitMix64 g(seed);
    std::uint64_t h = g.next();
    for (std::uint64_t v : {a, b, c}) h = SplitMix64(h ^ (v * 0xD1B54A32D192ED03ULL)).next();
    return h;
}

}  // namespace attnlab
