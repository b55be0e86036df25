// The per-query quantities of the fading experiment (analysis/fading.h).
#include "analysis/fading.h"

#include <algorithm>
#include <cmath>

#include "analysis/softmax.h"

namespace attnlab {

void add_fading_query(std::span<const float> weights, std::span<const float> scores, std::optional<double> softmax_T, FadingSums& sums) {
    const int L = static_cast<int>(weights.size());
    double top = 0, entropy = 0;
    for (float w : weights) {
        top = std::max(top, static_cast<double>(w));
        // 0 ln 0 = 0: sparsemax and entmax give exact zeros.
        if (w > 0) entropy -= static_cast<double>(w) * std::log(static_cast<double>(w));
    }
    sums.max_weight += top;
    sums.entropy += entropy;
    sums.previous_weight += L >= 2 ? static_cast<double>(weights[static_cast<size_t>(L - 2)]) : 0.0;
    ++sums.queries;
    if (!softmax_T) return;
    // a = max |l_i|, the smallest a for which the lemma's assumption holds (docs/science.md §3).
    double a = 0;
    for (float s : scores) a = std::max(a, std::abs(static_cast<double>(s)));
    const Lemma1Band band = lemma1_band(L, a, *softmax_T);
    sums.lemma1_lower += band.lower;
    // No weight exceeds 1, so an upper end above 1 says nothing; capping keeps the mean readable.
    sums.lemma1_upper += std::min(band.upper, 1.0);
    ++sums.lemma1_queries;
}

std::vector<FadingSums> fading_by_query(std::span<const float> weights, std::span<const float> scores, int L,
                                        std::optional<double> softmax_T) {
    std::vector<FadingSums> out(static_cast<size_t>(L));
    for (int i = 0; i < L; ++i) {
        const size_t row = static_cast<size_t>(i) * static_cast<size_t>(L), n = static_cast<size_t>(i) + 1;
        add_fading_query(weights.subspan(row, n), scores.subspan(row, n), softmax_T, out[static_cast<size_t>(i)]);
    }
    return out;
}

LogBins log_bins(std::span<const double> values, int max_bins) {
    LogBins out;
    const int n = static_cast<int>(values.size());
    if (n == 0 || max_bins < 1) return out;
    const double step = std::log(static_cast<double>(n) + 1.0) / max_bins;  // bin b: ln L in [b step, (b + 1) step)
    int i = 0;
    for (int b = 0; b < max_bins && i < n; ++b) {
        // The queries whose L = i + 1 lies below the bin's upper edge (the last bin takes the rest).
        const double edge = b + 1 == max_bins ? static_cast<double>(n) + 1.0 : std::exp((b + 1) * step);
        const int first = i;
        double sum_L = 0, sum = 0, least = 0, most = 0;
        for (; i < n && static_cast<double>(i + 1) < edge; ++i) {
            const double v = values[static_cast<size_t>(i)];
            least = i == first ? v : std::min(least, v);
            most = i == first ? v : std::max(most, v);
            sum += v;
            sum_L += i + 1;
        }
        if (i == first) continue;
        const int count = i - first;
        out.L.push_back(sum_L / count);
        out.mean.push_back(sum / count);
        out.least.push_back(least);
        out.most.push_back(most);
        out.first.push_back(first);
        out.count.push_back(count);
    }
    return out;
}

int weight_rank(std::span<const float> weights, int index) {
    const float w = weights[static_cast<size_t>(index)];
    return 1 + static_cast<int>(std::count_if(weights.begin(), weights.end(), [w](float x) { return x > w; }));
}

}  // namespace attnlab
