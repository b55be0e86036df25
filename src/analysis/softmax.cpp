#include "analysis/softmax.h"

#include <Eigen/Core>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <numbers>

#include "base/random.h"

namespace attnlab {

namespace {

// exp of z <= 0, vectorised, with two things done right:
// - Equal inputs give equal outputs. Eigen sends the elements after the last full packet
//   through the scalar std::exp, which differs from its packet exp in the last bit, so tied
//   logits got weights that were not tied (and a top-N that depended on the position). The
//   input is padded to a whole number of packets (16 doubles covers every vector unit).
// - Underflow: the packet exp clamps its argument near -709 (on SSE and wasm SIMD128), so
//   exp(-1e5) came out as 1e-308, not 0. Below -700 the scalar std::exp gives the denormal or
//   the exact 0; every element there takes that path, so ties stay ties.
Eigen::ArrayXd exp_nonpositive(const Eigen::ArrayXd& z) {
    const Eigen::Index n = z.size(), padded = (n + 15) / 16 * 16;
    Eigen::ArrayXd e = Eigen::ArrayXd::Zero(padded);
    e.head(n) = z;
    e = e.exp();
    e.conservativeResize(n);
    for (Eigen::Index i = 0; i < n; ++i)
        if (z[i] < -700.0) e[i] = std::exp(z[i]);
    return e;
}

}  // namespace

std::vector<double> softmax(std::span<const double> logits, double T) {
    assert(T > 0.0);
    if (logits.empty()) return {};
    // Eigen's vectorised exp: the gradient experiment calls this ~10^8 times per run. The sum
    // runs over an Eigen-owned (aligned) array: a vectorised sum over a std::vector's memory
    // would split its terms by the address, and results would change with the allocator.
    const Eigen::Map<const Eigen::ArrayXd> l(logits.data(), static_cast<Eigen::Index>(logits.size()));
    Eigen::ArrayXd e = exp_nonpositive((l - l.maxCoeff()) / T);
    e /= e.sum();
    return std::vector<double>(e.data(), e.data() + e.size());
}

namespace {

// Largest eigenvalue of D - p p^T with D = diag(p), sum p = 1.
//
// det(D - p p^T - lambda I) = det(D - lambda I) * (1 - sum_i p_i^2 / (p_i - lambda)), and
// because sum p_i = 1 the second factor equals -lambda * g(lambda) with
//     g(lambda) = sum_i p_i / (p_i - lambda),
// which avoids the cancellation in "1 - ..." when one weight is close to 1 (low T). Weights
// are taken to sum to exactly 1, as softmax's do before rounding: at tiny T the top weight
// rounds to 1 while the others are ~1e-300, and the answer is that of the exact weights.
// By interlacing the largest eigenvalue lies in [p(2), p(1)], the two largest weights; g
// rises from -inf to +inf there, so a bracketed Newton iteration finds its single root.
double largest_eigenvalue_diag_minus_outer(std::span<const double> p) {
    double p1 = 0.0, p2 = 0.0;  // largest and second largest
    for (double x : p) {
        if (x > p1) {
            p2 = p1;
            p1 = x;
        } else if (x > p2) {
            p2 = x;
        }
    }
    if (p1 == p2) return p1;    // a tie at the top: p(1) itself is an eigenvalue
    if (p2 == 0.0) return 0.0;  // one-hot: J = 0

    const Eigen::Map<const Eigen::ArrayXd> w(p.data(), static_cast<Eigen::Index>(p.size()));
    double lo = p2, hi = p1;
    double lambda = 0.5 * (lo + hi);
    for (int iter = 0; iter < 200; ++iter) {
        // Zero weights add 0 / (0 - lambda) = 0: lambda > p2 > 0 here. (Dividing, not
        // multiplying by 1 / (w - lambda), which overflows when lambda is denormal-small.)
        const Eigen::ArrayXd diff = w - lambda;
        const Eigen::ArrayXd term = w / diff;
        const double g = term.sum(), dg = (term / diff).sum();
        if (g > 0.0) hi = lambda;
        else lo = lambda;
        double next = lambda - g / dg;
        // Fall back to bisection whenever Newton leaves the bracket. Geometric bisection when
        // the bracket spans orders of magnitude keeps relative accuracy for tiny eigenvalues.
        if (!(next > lo && next < hi)) next = (hi > 4.0 * lo) ? std::sqrt(lo) * std::sqrt(hi) : 0.5 * (lo + hi);  // lo * hi may underflow
        if (std::abs(next - lambda) <= 1e-15 * lambda || hi - lo <= 1e-16 * hi) return next;
        lambda = next;
    }
    return lambda;
}

}  // namespace

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

double finite_difference_sensitivity(std::span<const double> logits, std::span<const double> base_weights,
                                     std::span<const double> direction, double T, double eps) {
    const Eigen::Index n = static_cast<Eigen::Index>(logits.size());
    const Eigen::Map<const Eigen::ArrayXd> l(logits.data(), n), v(direction.data(), n), base(base_weights.data(), n);
    const Eigen::ArrayXd moved = l + eps * v;
    Eigen::ArrayXd w = exp_nonpositive((moved - moved.maxCoeff()) / T);
    w /= w.sum();
    return std::sqrt((w - base).square().sum()) / eps;
}

double sensitivity_bound_tight(double T, double eps) { return std::min(jacobian_bound_tight(T), std::numbers::sqrt2 / eps); }

std::vector<double> random_unit_vector(int n, std::uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<double> v(static_cast<size_t>(n));
    double sq = 0.0;
    while (!(sq > 0.0)) {  // an all-zero draw is as good as impossible, but never divide by it
        sq = 0.0;
        for (double& x : v) {
            x = rng.normal();
            sq += x * x;
        }
    }
    const double inv = 1.0 / std::sqrt(sq);
    for (double& x : v) x *= inv;
    return v;
}

double max_abs(std::span<const double> logits) {
    double a = 0.0;
    for (double x : logits) a = std::max(a, std::abs(x));
    return a;
}

}  // namespace attnlab
