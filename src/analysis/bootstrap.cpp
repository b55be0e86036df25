#include "analysis/bootstrap.h"

#include <algorithm>
#include <cmath>

#include "base/random.h"

namespace attnlab {

std::vector<int> bootstrap_resamples(int windows, int resamples, std::uint64_t seed) {
    std::vector<int> out(static_cast<size_t>(windows) * static_cast<size_t>(resamples));
    SplitMix64 g(seed);
    for (int& i : out) i = std::min(windows - 1, static_cast<int>(g.uniform() * windows));
    return out;
}

double quantile_of_sorted(std::span<const double> sorted, double p) {
    if (sorted.empty()) return std::nan("");
    const double h = static_cast<double>(sorted.size() - 1) * p;
    const size_t lo = static_cast<size_t>(std::floor(h));
    if (lo + 1 >= sorted.size()) return sorted.back();
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

Interval ratio_bootstrap(std::span<const double> x, std::span<const double> n, std::span<const int> resamples, double level) {
    const size_t windows = x.size();
    std::vector<double> stats;
    if (windows > 0) {
        stats.reserve(resamples.size() / windows);
        for (size_t row = 0; row + windows <= resamples.size(); row += windows) {
            double sx = 0, sn = 0;
            for (size_t k = 0; k < windows; ++k) {
                const size_t w = static_cast<size_t>(resamples[row + k]);
                sx += x[w];
                sn += n[w];
            }
            if (sn != 0) stats.push_back(sx / sn);
        }
    }
    std::sort(stats.begin(), stats.end());
    const double tail = (1 - level) / 2;
    return {quantile_of_sorted(stats, tail), quantile_of_sorted(stats, 1 - tail)};
}

}  // namespace attnlab
