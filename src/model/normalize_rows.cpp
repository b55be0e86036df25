#include "model/normalize_rows.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace attnlab {

namespace {

// Per-thread scratch: the candidates of a row's support, or SA-softmax's factors, in double.
thread_local std::vector<double> t_candidates;

float max_of(const float* x, int n) { return *std::max_element(x, x + n); }
float min_of(const float* x, int n) { return *std::min_element(x, x + n); }

// weights = softmax(beta * (x - anchor)), with the anchor chosen so that every exponent is <= 0.
// The sum is kept in double, in order, so the weights do not depend on the row's alignment.
void scaled_softmax(const float* x, int n, double beta, float* w) {
    const double anchor = beta >= 0.0 ? max_of(x, n) : min_of(x, n);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        const float e = std::exp(static_cast<float>(beta * (static_cast<double>(x[i]) - anchor)));
        w[i] = e;
        sum += e;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i) w[i] *= inv;
}

// z_i = (x_i - max x) / T in double, for the ones above `floor` (the others cannot be on the
// support), sorted descending into t_candidates. Returns the row's max.
double support_candidates(const float* x, int n, double T, double floor) {
    const double top = max_of(x, n);
    std::vector<double>& c = t_candidates;
    c.clear();
    for (int i = 0; i < n; ++i) {
        const double z = (x[i] - top) / T;
        if (z > floor) c.push_back(z);
    }
    std::sort(c.begin(), c.end(), std::greater<double>());
    return top;
}

// Sparsemax (Martins & Astudillo 2016, Alg. 1) on z = (x - max)/T: tau from the sorted support
// candidates (z > -1: the top z is 0 and tau >= -1), then p_i = max(z_i - tau, 0).
void sparsemax_row(const float* x, int n, double T, float* w) {
    const double top = support_candidates(x, n, T, -1.0);
    const std::vector<double>& zs = t_candidates;
    double cumsum = 0.0, support_sum = 0.0;
    size_t support = 1;
    for (size_t k = 1; k <= zs.size(); ++k) {
        cumsum += zs[k - 1];
        if (1.0 + static_cast<double>(k) * zs[k - 1] > cumsum) support = k, support_sum = cumsum;
    }
    const double tau = (support_sum - 1.0) / static_cast<double>(support);
    for (int i = 0; i < n; ++i) {
        const double z = (x[i] - top) / T;
        w[i] = z > tau ? static_cast<float>(z - tau) : 0.0f;
    }
}

// 1.5-entmax (Peters, Niculae & Martins 2019, Alg. 2) on X = z/2: the support lies in X > -1.
void entmax15_row(const float* x, int n, double T, float* w) {
    const double top = support_candidates(x, n, T, -2.0);
    double mean = 0.0, ss = 0.0, tau = 0.0;
    const std::vector<double>& zs = t_candidates;
    for (size_t k = 1; k <= zs.size(); ++k) {
        const double v = 0.5 * zs[k - 1];
        const double delta = v - mean;
        mean += delta / static_cast<double>(k);
        ss += delta * (v - mean);
        const double tau_k = mean - std::sqrt(std::max((1.0 - ss) / static_cast<double>(k), 0.0));
        if (tau_k <= v) tau = tau_k;
    }
    for (int i = 0; i < n; ++i) {
        const double X = 0.5 * (x[i] - top) / T;
        w[i] = X > tau ? static_cast<float>((X - tau) * (X - tau)) : 0.0f;
    }
}

// p_i for p_max = exp(u) (the top's z is 0): p_i^{alpha-1} = p_max^{alpha-1} + (alpha-1) z_i, written
// as p_i = p_max (1 - (alpha-1)|z_i| / p_max^{alpha-1})^{1/(alpha-1)} with the ratio in logs, so that
// p_max^{alpha-1} never has to be formed: at alpha = 1000 it underflows for any p_max < 0.47,
// and a row of ties (p_max = 1/n) then weighed 0 everywhere and came out 0/0.
double entmax_weight(double z, double am1, double u) {
    if (z == 0.0) return std::exp(u);
    const double log_ratio = std::log(-am1 * z) - am1 * u;
    if (log_ratio >= 0.0) return 0.0;  // off the support
    return std::exp(u + std::log1p(-std::exp(log_ratio)) / am1);
}

// alpha-entmax, any alpha > 1, by bisection on u = log p_max in [-log n, 0] (the support lies in
// z > -1/(alpha-1)); fp32 weights need far fewer halvings than the double reference's 62.
void entmax_bisect_row(const float* x, int n, double T, double alpha, float* w) {
    const double am1 = alpha - 1.0;
    const double top = support_candidates(x, n, T, -1.0 / am1);
    const std::vector<double>& zs = t_candidates;
    const auto mass = [&](double u) {
        double s = 0.0;
        for (double z : zs) s += entmax_weight(z, am1, u);
        return s;
    };
    double lo = -std::log(static_cast<double>(n)), hi = 0.0;
    for (int iter = 0; iter < 48 && hi - lo > 0x1p-40; ++iter) {
        const double mid = lo + 0.5 * (hi - lo);
        if (mass(mid) < 1.0) lo = mid;
        else hi = mid;
    }
    const double u = lo + 0.5 * (hi - lo);
    double sum = 0.0;
    for (double z : zs) sum += entmax_weight(z, am1, u);
    for (int i = 0; i < n; ++i) {
        const double z = (x[i] - top) / T;
        w[i] = z > -1.0 / am1 ? static_cast<float>(entmax_weight(z, am1, u) / sum) : 0.0f;
    }
}

// SA-softmax, AttnLab's labelled simplex variant (normalizers.h): q = softmax(x/T),
// w_i = (x_i - lo) q_i with lo = min(x_min, 0), weights w / sum w; softmax where sum w = 0.
// The factors (x_i - lo)/T are kept before q is written: the capture normalizes a row in place,
// where q overwrote the scores that the factors were then read from.
void sa_softmax_row(const float* x, int n, double T, float* w) {
    const double lo = std::min(static_cast<double>(min_of(x, n)), 0.0);
    std::vector<double>& factor = t_candidates;
    factor.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) factor[static_cast<size_t>(i)] = (x[i] - lo) / T;
    scaled_softmax(x, n, 1.0 / T, w);
    double W = 0.0;
    for (int i = 0; i < n; ++i) W += factor[static_cast<size_t>(i)] * w[i];
    if (!(W > 0.0)) return;
    for (int i = 0; i < n; ++i) w[i] = static_cast<float>(factor[static_cast<size_t>(i)] * w[i] / W);
}

}  // namespace

void normalize_row(const HeadPlan& head, const float* scores, int n, float* weights) {
    const Normalizer& nz = head.normalizer;
    const double T = head.temperature;
    switch (nz.kind) {
        case NormalizerKind::Softmax: scaled_softmax(scores, n, 1.0 / T, weights); return;
        case NormalizerKind::Sparsemax: sparsemax_row(scores, n, T, weights); return;
        case NormalizerKind::Entmax:
            if (nz.alpha == 1.0) scaled_softmax(scores, n, 1.0 / T, weights);
            else if (nz.alpha == 1.5) entmax15_row(scores, n, T, weights);
            else if (nz.alpha == 2.0) sparsemax_row(scores, n, T, weights);
            else entmax_bisect_row(scores, n, T, nz.alpha, weights);
            return;
        case NormalizerKind::Ssmax: scaled_softmax(scores, n, nz.scale * std::log(static_cast<double>(n)) / T, weights); return;
        case NormalizerKind::SaSoftmax: sa_softmax_row(scores, n, T, weights); return;
    }
}

}  // namespace attnlab
