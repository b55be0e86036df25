#include "analysis/ks_test.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <vector>

namespace attnlab {

namespace {

// P(max over the path of |i m - j n| >= h), the path a uniformly random ordering of n a's and m b's.
// Walking the ordering one draw at a time is drawing without replacement: at (i, j) the next item is
// an a with probability (n - i) / (n + m - i - j). u(i, j) is the probability of reaching (i, j)
// without having touched the boundary before; a path is absorbed (its mass added to the answer) on
// its first boundary node. Only sums of positive terms: no cancellation, so even tiny p-values keep
// their relative accuracy (unlike 1 - P(inside)), and no C(n+m, n) that would overflow.
double ks_p_value_lattice(std::int64_t n, std::int64_t m, std::int64_t h) {
    const std::int64_t total = n + m;
    std::vector<double> u(static_cast<std::size_t>(m + 1), 0.0);  // row i of u(i, j), j = 0..m
    double outside = 0.0;
    for (std::int64_t i = 0; i <= n; ++i) {
        for (std::int64_t j = 0; j <= m; ++j) {
            double p;
            if (i == 0 && j == 0) {
                p = 1.0;
            } else {
                // Both predecessors, (i-1, j) and (i, j-1), have total - i - j + 1 items left.
                const double left = static_cast<double>(total - i - j + 1);
                p = 0.0;
                if (i > 0) p += u[static_cast<std::size_t>(j)] * static_cast<double>(n - i + 1) / left;
                if (j > 0) p += u[static_cast<std::size_t>(j - 1)] * static_cast<double>(m - j + 1) / left;
            }
            const std::int64_t gap = i * m - j * n;
            if ((gap < 0 ? -gap : gap) >= h) {
                outside += p;
                p = 0.0;
            }
            u[static_cast<std::size_t>(j)] = p;
        }
    }
    return std::clamp(outside, 0.0, 1.0);
}

}  // namespace

double ks_p_value_exact(std::int64_t n, std::int64_t m, double d) {
    if (n < 1 || m < 1 || std::isnan(d)) return std::numeric_limits<double>::quiet_NaN();
    if (d <= 0.0) return 1.0;
    const double cells = static_cast<double>(n) * static_cast<double>(m);
    const double x = d * cells;
    const double nearest = std::round(x);
    const double h = (std::abs(x - nearest) <= 1e-9 * std::max(1.0, x)) ? nearest : std::ceil(x);
    if (h > cells) return 0.0;  // no ordering has D > 1 (and a hair above 1 counts as 1, above)
    return ks_p_value_lattice(n, m, static_cast<std::int64_t>(h));
}

double ks_p_value_asymptotic(std::int64_t n, std::int64_t m, double d) {
    if (n < 1 || m < 1 || std::isnan(d)) return std::numeric_limits<double>::quiet_NaN();
    const double ne = static_cast<double>(n) * static_cast<double>(m) / static_cast<double>(n + m);
    const double root = std::sqrt(ne);
    return std::clamp(kolmogorov_tail((root + 0.12 + 0.11 / root) * d), 0.0, 1.0);
}

double kolmogorov_tail(double lambda) {
    if (std::isnan(lambda)) return lambda;
    if (lambda <= 0.0) return 1.0;
    if (lambda < 1.0) {
        // The alternating series converges slowly for small lambda (terms ~ exp(-2 k^2 lambda^2)).
        // Its Jacobi-theta twin converges fast there: 1 - Q = sqrt(2 pi)/lambda
        // sum_{k>=1} exp(-(2k-1)^2 pi^2 / (8 lambda^2)); at lambda < 1, Q > 0.27 so 1 - sum loses nothing.
        const double c = std::numbers::pi * std::numbers::pi / (8.0 * lambda * lambda);
        double sum = 0.0;
        for (int k = 1; k < 100; ++k) {
            const double odd = 2.0 * k - 1.0;
            const double term = std::exp(-odd * odd * c);
            sum += term;
            if (term <= 1e-17 * sum) break;
        }
        return std::clamp(1.0 - std::sqrt(2.0 * std::numbers::pi) / lambda * sum, 0.0, 1.0);
    }
    // lambda >= 1: exp(-2), exp(-8), exp(-18), ...: five terms reach double precision.
    double sum = 0.0;
    double sign = 1.0;
    for (int k = 1; k < 100; ++k) {
        const double term = std::exp(-2.0 * k * k * lambda * lambda);
        sum += sign * term;
        if (term <= 1e-17 * sum) break;
        sign = -sign;
    }
    return std::clamp(2.0 * sum, 0.0, 1.0);
}

namespace {

// Non-empty, finite, and small enough that i * m - j * n stays inside int64.
bool check_sample(std::span<const double> x, const char* name, std::string& error) {
    if (x.empty()) {
        error = std::string("ks_two_sample: sample ") + name + " is empty";
        return false;
    }
    if (x.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        error = std::string("ks_two_sample: sample ") + name + " has more than 2^31 - 1 values";
        return false;
    }
    for (std::size_t k = 0; k < x.size(); ++k) {
        if (!std::isfinite(x[k])) {
            error = std::string("ks_two_sample: sample ") + name + " has a non-finite value (" + (std::isnan(x[k]) ? "NaN" : "infinity") +
                    ") at index " + std::to_string(k);
            return false;
        }
    }
    return true;
}

}  // namespace

bool ks_two_sample(std::span<const double> a, std::span<const double> b, KsResult& out, std::string& error) {
    if (!check_sample(a, "a", error) || !check_sample(b, "b", error)) return false;
    std::vector<double> sa(a.begin(), a.end());
    std::vector<double> sb(b.begin(), b.end());
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    const std::int64_t n = static_cast<std::int64_t>(sa.size());
    const std::int64_t m = static_cast<std::int64_t>(sb.size());

    // D n m = max |i m - j n| with i, j the counts <= x, taken only after every value equal to x
    // from both samples has been counted (a tie across samples moves both ECDFs at once). Kept in
    // integers so the exact p-value compares against the very same lattice value.
    std::int64_t max_gap = 0;
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < sa.size() && j < sb.size()) {
        const double x = std::min(sa[i], sb[j]);
        while (i < sa.size() && sa[i] <= x) ++i;
        while (j < sb.size() && sb[j] <= x) ++j;
        const std::int64_t gap = static_cast<std::int64_t>(i) * m - static_cast<std::int64_t>(j) * n;
        max_gap = std::max(max_gap, gap < 0 ? -gap : gap);
    }
    // Once one sample is used up its ECDF is 1 and the other's only climbs to 1: |gap| only shrinks.

    out.statistic = static_cast<double>(max_gap) / (static_cast<double>(n) * static_cast<double>(m));
    if (static_cast<double>(n) * static_cast<double>(m) <= kKsExactMaxCells) {
        out.p_value = ks_p_value_lattice(n, m, max_gap);
        out.exact = true;
    } else {
        out.p_value = ks_p_value_asymptotic(n, m, out.statistic);
        out.exact = false;
    }
    return true;
}

}  // namespace attnlab
