#pragma once
// Seeded random inputs shared by the tests.
#include <cmath>
#include <cstddef>
#include <vector>

#include "analysis/gram_rows.h"
#include "base/random.h"

namespace attnlab::test {

// (L, d) with independent standard normal entries.
inline RowMatrixXd gaussian_rows(SplitMix64& rng, int L, int d) {
    RowMatrixXd x(L, d);
    for (int i = 0; i < L; ++i)
        for (int c = 0; c < d; ++c) x(i, c) = rng.normal();
    return x;
}

// Uniform in lo..hi, both included.
inline int uniform_int(SplitMix64& rng, int lo, int hi) { return lo + static_cast<int>(rng.uniform() * (hi - lo + 1)); }

// Log-uniform in lo..hi (0 < lo < hi): each decade as likely as the next.
inline double log_uniform(SplitMix64& rng, double lo, double hi) { return lo * std::pow(hi / lo, rng.uniform()); }

// `count` floats uniform in [-1, 1).
inline std::vector<float> random_values(SplitMix64& rng, size_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
    return v;
}

}  // namespace attnlab::test
