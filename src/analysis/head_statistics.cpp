#include "analysis/head_statistics.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace attnlab {

double quantile_sorted(std::span<const double> sorted, double q) {
    if (sorted.empty()) return std::nan("");
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double f = pos - static_cast<double>(lo);
    return sorted[lo] + f * (sorted[hi] - sorted[lo]);
}

BoxStats box_stats(std::span<const double> values) {
    std::vector<double> v;
    for (double x : values)
        if (std::isfinite(x)) v.push_back(x);
    std::sort(v.begin(), v.end());
    BoxStats b;
    b.n = static_cast<int>(v.size());
    if (v.empty()) {
        const double nan = std::nan("");
        b.lo_whisker = b.q1 = b.median = b.q3 = b.hi_whisker = b.mean = nan;
        return b;
    }
    b.q1 = quantile_sorted(v, 0.25);
    b.median = quantile_sorted(v, 0.5);
    b.q3 = quantile_sorted(v, 0.75);
    const double iqr = b.q3 - b.q1, lo_fence = b.q1 - 1.5 * iqr, hi_fence = b.q3 + 1.5 * iqr;
    b.lo_whisker = b.q1;
    b.hi_whisker = b.q3;
    double sum = 0.0;
    for (double x : v) {
        sum += x;
        if (x < lo_fence || x > hi_fence) {
            b.outliers.push_back(x);
            continue;
        }
        b.lo_whisker = std::min(b.lo_whisker, x);
        b.hi_whisker = std::max(b.hi_whisker, x);
    }
    b.mean = sum / static_cast<double>(v.size());
    return b;
}

bool critical_n(std::span<const int> Ns, const std::vector<std::vector<double>>& d_means, const std::vector<std::vector<double>>& e_means,
                double level, CriticalN& out, std::string& error) {
    out = CriticalN{};
    if (d_means.size() != Ns.size() || e_means.size() != Ns.size()) {
        error = "critical N: " + std::to_string(Ns.size()) + " values of N but " + std::to_string(d_means.size()) + " and " +
                std::to_string(e_means.size()) + " rows of means";
        return false;
    }
    for (size_t k = 0; k < Ns.size(); ++k) {
        if (k && Ns[k] <= Ns[k - 1]) {
            error = "critical N: the values of N must increase (N = " + std::to_string(Ns[k]) + " after " + std::to_string(Ns[k - 1]) + ")";
            return false;
        }
        if (d_means[k].size() != e_means[k].size()) {
            error = "critical N: at N = " + std::to_string(Ns[k]) + ", " + std::to_string(d_means[k].size()) + " heads of d but " +
                    std::to_string(e_means[k].size()) + " of E[d]";
            return false;
        }
        std::vector<double> d, e;
        for (size_t h = 0; h < d_means[k].size(); ++h)
            if (std::isfinite(d_means[k][h]) && std::isfinite(e_means[k][h])) {
                d.push_back(d_means[k][h]);
                e.push_back(e_means[k][h]);
            }
        if (d.size() < 2) continue;
        CriticalNScan row;
        row.N = Ns[k];
        row.heads = static_cast<int>(d.size());
        if (!ks_two_sample(d, e, row.ks, error)) {
            error = "critical N at N = " + std::to_string(Ns[k]) + ": " + error;
            return false;
        }
        out.scan.push_back(row);
        if (row.ks.p_value >= level && !out.N_star) {
            out.N_star = Ns[k];
            out.at_star = row.ks;
        }
    }
    return true;
}

double normalizer_sensitivity(const Normalizer& n, std::span<const double> logits, std::span<const double> base,
                              std::span<const double> direction, double T, double eps) {
    assert(logits.size() == base.size() && logits.size() == direction.size());
    std::vector<double> moved(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) moved[i] = logits[i] + eps * direction[i];
    const std::vector<double> w = normalize(n, moved, T);
    double sq = 0.0;
    for (size_t i = 0; i < w.size(); ++i) sq += (w[i] - base[i]) * (w[i] - base[i]);
    return std::sqrt(sq) / eps;
}

}  // namespace attnlab
