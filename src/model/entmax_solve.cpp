#include "model/entmax_solve.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace attnlab {

namespace {

// The candidates of a row's support, sorted descending, and log d_i (per thread: rows run in
// parallel).
thread_local std::vector<double> t_sorted;
thread_local std::vector<double> t_log_d;  // log d_i on the support

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

// log p_i = log(d_i + t) / (alpha-1) from log d_i (-inf on ties with key k) and sigma = log t,
// without forming t (alpha = 1000: p_k = 0.25 gives t = 0.25^999) nor d_i + t.
double log_weight(double log_d, double sigma, double am1) {
    const double big = std::max(log_d, sigma), small = std::min(log_d, sigma);
    return (big + std::log1p(std::exp(small - big))) / am1;
}

// sigma = log t = (alpha-1) log p_k with sum_{i<k} p_i = 1. log mass is increasing and convex in
// sigma (each log p_i is a log-sum-exp), nearly linear where the weights are near a softmax
// (alpha -> 1), >= 0 at sigma = (alpha-1) log(1/k) (every p_i >= p_k), and tends to log sum
// d_i^{1/(alpha-1)} < 0 (key k is on the support) as sigma -> -inf. Newton's method on it from the
// top of the bracket: its step where it shrinks at least as fast as bisection would (far above
// the root it is flat and Newton crawls), else bisection.
double log_t_of_last_key(const std::vector<double>& log_d, double am1) {
    const auto log_mass = [&](double sigma, double& slope) {
        double m = 0.0, dm = 0.0;
        for (double ld : log_d) {
            const double p = std::exp(log_weight(ld, sigma, am1));
            m += p;
            dm += p / (1.0 + std::exp(ld - sigma));  // d log p_i / d sigma = sigmoid(sigma - log d_i) / am1
        }
        slope = dm / (am1 * m);
        return std::log(m);
    };
    double hi = am1 * -std::log(static_cast<double>(log_d.size())), slope = 0.0;
    double step = 1.0, lo = hi - step;
    while (log_mass(lo, slope) >= 0.0) {  // the lower end, stepped down
        if (step > 0x1p1000) return lo;   // the mass at t = 0 rounds to 1: p_k is 0 to double
        step *= 2.0;
        lo = hi - step;
    }
    double sigma = hi, dx_old = hi - lo, dx = dx_old;
    double f = log_mass(sigma, slope);
    // Done when the mass is 1 to a few ulp, or sigma is fixed to double precision.
    for (int iter = 0; iter < 200 && std::abs(f) > 0x1p-51; ++iter) {
        const double newton = sigma - f / slope;
        if (std::abs(2.0 * f) > std::abs(dx_old * slope) || !(newton >= lo && newton <= hi)) {
            dx_old = dx;
            dx = 0.5 * (hi - lo);
            sigma = lo + dx;
        } else {
            dx_old = dx;
            dx = sigma - newton;
            sigma = newton;
        }
        if (std::abs(dx) <= 0x1p-52 * std::max(1.0, std::abs(sigma)) || hi - lo <= 0x1p-52 * std::abs(lo)) break;
        f = log_mass(sigma, slope);
        (f < 0.0 ? lo : hi) = sigma;
    }
    return sigma;
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
    const double lk = c[k - 1];
    std::vector<double>& log_d = t_log_d;
    log_d.resize(k);
    for (size_t i = 0; i < k; ++i) log_d[i] = std::log(scale * (c[i] - lk));
    const double sigma = log_t_of_last_key(log_d, am1);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        p[i] = l[i] >= lk ? std::exp(log_weight(std::log(scale * (l[i] - lk)), sigma, am1)) : 0.0;
        sum += p[i];
    }
    // sigma is right to ~1e-16; renormalizing puts the sum on 1 to rounding.
    for (int i = 0; i < n; ++i) p[i] /= sum;
}

double entmax15_threshold(std::vector<double>& xs) {
    std::sort(xs.begin(), xs.end(), std::greater<double>());
    double mean = 0.0, ss = 0.0, tau = 0.0;
    for (size_t k = 1; k <= xs.size(); ++k) {
        const double v = xs[k - 1];
        const double delta = v - mean;
        mean += delta / static_cast<double>(k);
        ss += delta * (v - mean);
        const double tau_k = mean - std::sqrt(std::max((1.0 - ss) / static_cast<double>(k), 0.0));
        if (tau_k <= v) tau = tau_k;  // k = 1 always qualifies (tau_1 = X_(1) - 1)
    }
    return tau;
}

}  // namespace attnlab
