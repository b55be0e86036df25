#include "analysis/softmax_sweeps.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "analysis/softmax.h"

namespace attnlab {

FadeCurve fade_curve(const LogitSpec& spec, double T, const std::vector<int>& lengths) {
    FadeCurve c;
    if (lengths.empty()) return c;
    const std::vector<double> all = synthetic_logits(spec, *std::max_element(lengths.begin(), lengths.end()));
    for (int L : lengths) {
        const std::span<const double> visible(all.data(), static_cast<size_t>(L));
        const std::vector<double> w = softmax(visible, T);
        const Lemma1Band band = lemma1_band(L, max_abs(visible), T);
        c.L.push_back(L);
        c.max_weight.push_back(*std::max_element(w.begin(), w.end()));
        c.band_lower.push_back(band.lower);
        c.band_upper.push_back(band.upper);
        c.uniform.push_back(1.0 / L);
    }
    return c;
}

SensitivityCurve sensitivity_curve(const std::vector<double>& logits, const std::vector<double>& temperatures) {
    SensitivityCurve c;
    for (double T : temperatures) {
        c.T.push_back(T);
        c.jacobian_norm.push_back(softmax_jacobian_norm(softmax(logits, T), T));
        c.bound_paper.push_back(jacobian_bound_paper(T));
        c.bound_tight.push_back(jacobian_bound_tight(T));
    }
    return c;
}

std::vector<double> log_grid(double lo, double hi, int n) {
    std::vector<double> g(static_cast<size_t>(n));
    const double a = std::log(lo), b = std::log(hi);
    for (int i = 0; i < n; ++i) g[i] = std::exp(a + (b - a) * i / (n - 1));
    g.front() = lo;  // exact ends, not exp(log(x))
    g.back() = hi;
    return g;
}

std::vector<int> log_grid_int(int lo, int hi, int n) {
    std::vector<int> g;
    for (double x : log_grid(lo, hi, n)) {
        const int v = static_cast<int>(std::lround(x));
        if (g.empty() || v > g.back()) g.push_back(v);
    }
    if (g.back() != hi) g.push_back(hi);
    return g;
}

}  // namespace attnlab
