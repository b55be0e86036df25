#include "analysis/softmax.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numbers>

namespace attnlab {

std::vector<double> softmax(std::span<const double> logits, double T) {
    assert(T > 0.0);
    std::vector<double> w(logits.size());
    if (logits.empty()) return w;
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (size_t i = 0; i < logits.size(); ++i) {
        w[i] = std::exp((logits[i] - top) / T);
        sum += w[i];
    }
    for (double& x : w) x /= sum;
    return w;
}

// Largest eigenvalue of D - p p^T with D = diag(p), sum p = 1.
//
// det(D - p p^T - lambda I) = det(D - lambda I) * (1 - sum_i p_i^2 / (p_i - lambda)), and
// because sum p_i = 1 the second factor equals -lambda * g(lambda) with
//     g(lambda) = sum_i p_i / (p_i - lambda),
// which avoids the cancellation in "1 - ..." when one weight is close to 1 (low T).
// By interlacing the largest eigenvalue lies in [p(2), p(1)], the two largest weights; g
// rises from -inf to +inf there, so a bracketed Newton iteration finds its single root.
static double largest_eigenvalue_diag_minus_outer(std::span<const double> p) {
    double p1 = 0.0, p2 = 0.0;  // largest and second largest
    for (double x : p) {
        if (x > p1) { p2 = p1; p1 = x; }
        else if (x > p2) { p2 = x; }
    }
    if (p1 == p2) return p1;  // a tie at the top: p(1) itself is an eigenvalue
    if (p2 == 0.0) return 0.0;  // one-hot: J = 0

    double lo = p2, hi = p1;
    double lambda = 0.5 * (lo + hi);
    for (int iter = 0; iter < 200; ++iter) {
        double g = 0.0, dg = 0.0;
        for (double x : p) {
            if (x == 0.0) continue;
            const double inv = 1.0 / (x - lambda);
            g += x * inv;
            dg += x * inv * inv;
        }
        if (g > 0.0) hi = lambda; else lo = lambda;
        double next = lambda - g / dg;
        // Fall back to bisection whenever Newton leaves the bracket. Geometric bisection when
        // the bracket spans orders of magnitude keeps relative accuracy for tiny eigenvalues.
        if (!(next > lo && next < hi)) next = (hi > 4.0 * lo) ? std::sqrt(lo * hi) : 0.5 * (lo + hi);
        if (std::abs(next - lambda) <= 1e-15 * lambda || hi - lo <= 1e-16 * hi) return next;
        lambda = next;
    }
    return lambda;
}

double softmax_jacobian_norm(std::span<const double> weights, double T) {
    assert(T > 0.0);
    return largest_eigenvalue_diag_minus_outer(weights) / T;
}

double jacobian_bound_paper(double T) { return std::min(1.0 / (4.0 * T), std::numbers::sqrt2); }

double jacobian_bound_tight(double T) { return 1.0 / (2.0 * T); }

Lemma1Band lemma1_band(int L, double a, double T) {
    const double base = 1.0 / static_cast<double>(L);
    return {base * std::exp(-2.0 * a / T), base * std::exp(2.0 * a / T)};
}

double max_abs(std::span<const double> logits) {
    double a = 0.0;
    for (double x : logits) a = std::max(a, std::abs(x));
    return a;
}

}  // namespace attnlab
