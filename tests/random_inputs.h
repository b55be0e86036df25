#pragma once
// Seeded random inputs shared by the analysis tests.
#include "analysis/selection.h"
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

}  // namespace attnlab::test
