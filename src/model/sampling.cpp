#include "model/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab {

std::vector<double> sampling_distribution(std::span<const float> logits, const SamplingOptions& o) {
    const size_t V = logits.size();
    std::vector<double> p(V, 0.0);
    if (V == 0) return p;
    if (o.temperature <= 0.0f) {
        p[static_cast<size_t>(std::max_element(logits.begin(), logits.end()) - logits.begin())] = 1.0;
        return p;
    }
    // Most likely first; equal logits keep id order, so filtering is deterministic.
    std::vector<size_t> order(V);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] > logits[b]; });
    size_t keep = V;
    if (o.top_k > 0) keep = std::min(keep, static_cast<size_t>(o.top_k));

    const double top = logits[order[0]];
    double sum = 0.0;
    for (size_t r = 0; r < keep; ++r) sum += (p[order[r]] = std::exp((logits[order[r]] - top) / o.temperature));
    if (o.top_p < 1.0f) {
        // Keep tokens while the mass before them is below p (so at least one survives).
        double mass = 0.0;
        size_t r = 0;
        for (; r < keep && (r == 0 || mass < o.top_p * sum); ++r) mass += p[order[r]];
        for (size_t q = r; q < keep; ++q) p[order[q]] = 0.0;
        keep = r;
        sum = mass;
    }
    for (size_t r = 0; r < keep; ++r) p[order[r]] /= sum;
    return p;
}

int sample_token(std::span<const float> logits, const SamplingOptions& o, double u) {
    const std::vector<double> p = sampling_distribution(logits, o);
    double cumulative = 0.0;
    int last = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] <= 0.0) continue;
        cumulative += p[i];
        last = static_cast<int>(i);
        if (u < cumulative) return last;
    }
    return last;  // u within rounding of 1
}

}  // namespace attnlab
