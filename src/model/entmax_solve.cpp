#include "model/entmax_solve.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace attnlab {

namespace {

// The candidates of a row's support, sorted descending (per thread: rows run in parallel).
thread_local std::vector<double> t_sorted;

double softplus(double r) { return r > 0.0 ? r + std::log1p(std::exp(-r)) : std::log1p(std::exp(r)); }

// The size of the support among the sorted candidates c: key j is on it iff the mass at
// tau = x_j, sum_{i<j} (scale (c_i - c_j))^{1/(alpha-1)}, is below 1 (the mass falls as tau
// rises, so the sum is 1 at a tau below x_j). That sum rises with j: a binary search.
size_t support_size(const std::vector<double>& c, double scale, double am1) {
    const auto mass_at = [&](size_t j) {
        double s = 0.0;
        for (size_t i = 0; i < j; ++i) s += std::exp(std::log(scale * (c[i] - c[j])) / am1);  // ties: exp(-inf) = 0
        return s;
    };
    size_t lo = 0, hi = c.size() - 1;  // key 0 is always on it
    while (lo < hi) {
        const size_t mid = lo + (hi - lo + 1) / 2;
        if (mass_at(mid) < 1.0) lo = mid;
        else hi = mid - 1;
    }
    return lo + 1;
}

// s = log p_k with sum_{i<k} p_i = 1, p_i = exp(s + softplus(log d_i - am1 s) / am1), d_i =
// scale (c_i - c_{k-1}). log mass is increasing and convex in s (each log p_i is), linear near
// softmax (alpha -> 1), and >= 0 at s = -log k (every p_i >= p_k). Newton's method on it, from
// there: its step where it shrinks at least as fast as bisection would (far above the root it is
// flat and Newton crawls), else bisection; below s = -745 p_k is 0 in double.
double log_last_weight(const std::vector<double>& c, size_t k, double scale, double am1) {
    const double ck = c[k - 1];
    const auto log_mass = [&](double s, double& slope) {
        double m = 0.0, dm = 0.0;
        for (size_t i = 0; i < k; ++i) {
            const double r = std::log(scale * (c[i] - ck)) - am1 * s;  // -inf for ties with key k
            const double p = std::exp(s + softplus(r) / am1);
            m += p;
            dm += p / (1.0 + std::exp(r));  // d log p_i / ds = sigmoid(-r)
        }
        slope = dm / m;
        return std::log(m);
    };
    double lo = -745.0, hi = -std::log(static_cast<double>(k)), slope = 0.0;
    if (log_mass(lo, slope) >= 0.0) return lo;
    double s = hi, dx_old = hi - lo, dx = dx_old;
    double f = log_mass(s, slope);
    // Done when the mass is 1 to a few ulp, or s is fixed to double precision.
    for (int iter = 0; iter < 200 && std::abs(f) > 0x1p-51; ++iter) {
        const double newton = s - f / slope;
        if (std::abs(2.0 * f) > std::abs(dx_old * slope) || !(newton >= lo && newton <= hi)) {
            dx_old = dx;
            dx = 0.5 * (hi - lo);
            s = lo + dx;
        } else {
            dx_old = dx;
            dx = s - newton;
            s = newton;
        }
        if (std::abs(dx) <= 0x1p-52 * std::max(1.0, std::abs(s)) || hi - lo <= 0x1p-52 * std::abs(lo)) break;
        f = log_mass(s, slope);
        (f < 0.0 ? lo : hi) = s;
    }
    return s;
}

}  // namespace

void entmax_relative_to_last_key(const double* l, int n, double T, double alpha, double* p) {
    const double am1 = alpha - 1.0, scale = am1 / T;
    const double top = *std::max_element(l, l + n);
    // p_top <= 1 puts tau at or above x_top - 1: the support lies in scale (l_top - l_i) < 1.
    std::vector<double>& c = t_sorted;
    c.clear();
    for (int i = 0; i < n; ++i)
        if (scale * (top - l[i]) < 1.0) c.push_back(l[i]);
    std::sort(c.begin(), c.end(), std::greater<double>());
    const size_t k = support_size(c, scale, am1);
    const double lk = c[k - 1], s = log_last_weight(c, k, scale, am1);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        p[i] = l[i] >= lk ? std::exp(s + softplus(std::log(scale * (l[i] - lk)) - am1 * s) / am1) : 0.0;
        sum += p[i];
    }
    // s is right to ~1e-15; renormalizing puts the sum on 1 to rounding.
    for (int i = 0; i < n; ++i) p[i] /= sum;
}

}  // namespace attnlab
