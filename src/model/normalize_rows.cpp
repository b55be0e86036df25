#include "model/normalize_rows.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

namespace attnlab {

namespace {

// Per-thread scratch: the candidates of a row's support, in double; a row of exponents.
thread_local std::vector<double> t_candidates;
thread_local Eigen::ArrayXf t_exponents;

float max_of(const float* x, int n) { return *std::max_element(x, x + n); }
float min_of(const float* x, int n) { return *std::min_element(x, x + n); }

// Sum in double of v[0..n) in a fixed order (four running sums, by index mod 4): the bits depend
// on n alone, not on where the row lies in memory.
template <typename Term>
double ordered_sum(int n, Term term) {
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    int i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; ++j) s[j] += term(i + j);
    for (; i < n; ++i) s[i % 4] += term(i);
    return (s[0] + s[1]) + (s[2] + s[3]);
}

// weights = softmax(beta * (x - anchor)), with the anchor chosen so that every exponent is <= 0.
// The exponentials run through an aligned copy padded to whole packets, so that every element
// takes Eigen's vectorised exp (a row's unaligned head or short tail would take the scalar one,
// whose last bit differs, and the bits would depend on where the row lies), and the sum is kept in
// double in a fixed order.
void scaled_softmax(const float* x, int n, double beta, float* w) {
    const double anchor = beta >= 0.0 ? max_of(x, n) : min_of(x, n);
    constexpr int kPacket = 16;
    Eigen::ArrayXf& e = t_exponents;
    const int padded = (n + kPacket - 1) / kPacket * kPacket;
    if (e.size() < padded) e.resize(padded);
    for (int i = 0; i < n; ++i) e[i] = static_cast<float>(beta * (static_cast<double>(x[i]) - anchor));
    for (int i = n; i < padded; ++i) e[i] = 0.0f;
    e.head(padded) = e.head(padded).exp();
    const double sum = ordered_sum(n, [&](int i) { return static_cast<double>(e[i]); });
    const float inv = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i) w[i] = e[i] * inv;
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

// Sparsemax (Martins & Astudillo 2016) on z = (x - max)/T: p_i = max(z_i - tau, 0) with tau the
// root of sum_i max(z_i - tau, 0) = 1. Found without a sort (Michelot 1986; Condat 2016): for
// any set S, (sum_S z - 1)/|S| is at most tau, so starting from the candidates (z > -1: the top z
// is 0 and tau >= -1), tau <- (sum_S z - 1)/|S| over S = {z > tau} rises to the root and stops
// when S no longer shrinks; S is then the support, and tau what the sort-based algorithm gives.
// A sort costs O(n log n) on a near-uniform row, where every key is a candidate.
void sparsemax_row(const float* x, int n, double T, float* w) {
    const double top = max_of(x, n);
    std::vector<double>& c = t_candidates;
    c.clear();
    for (int i = 0; i < n; ++i) {
        const double z = (x[i] - top) / T;
        if (z > -1.0) c.push_back(z);
    }
    double tau = (ordered_sum(static_cast<int>(c.size()), [&](int i) { return c[static_cast<size_t>(i)]; }) - 1.0) / static_cast<double>(c.size());
    for (;;) {
        const size_t before = c.size();
        c.erase(std::remove_if(c.begin(), c.end(), [&](double z) { return !(z > tau); }), c.end());
        if (c.size() == before) break;
        tau = (ordered_sum(static_cast<int>(c.size()), [&](int i) { return c[static_cast<size_t>(i)]; }) - 1.0) / static_cast<double>(c.size());
    }
    for (int i = 0; i < n; ++i) {
        const double z = (x[i] - top) / T;
        w[i] = z > tau ? static_cast<float>(z - tau) : 0.0f;
    }
}

// 1.5-entmax's threshold on X = z/2 (Peters, Niculae & Martins 2019, Alg. 2): the candidates
// sorted descending, tau = mean_k - sqrt((1 - ss_k)/k) for the largest k with tau_k <= X_(k).
double entmax15_tau_sorted(std::vector<double>& xs) {
    std::sort(xs.begin(), xs.end(), std::greater<double>());
    double mean = 0.0, ss = 0.0, tau = 0.0;
    for (size_t k = 1; k <= xs.size(); ++k) {
        const double v = xs[k - 1];
        const double delta = v - mean;
        mean += delta / static_cast<double>(k);
        ss += delta * (v - mean);
        const double tau_k = mean - std::sqrt(std::max((1.0 - ss) / static_cast<double>(k), 0.0));
        if (tau_k <= v) tau = tau_k;
    }
    return tau;
}

// The same threshold without a sort: tau is the root of f(t) = sum_{X > t} (X - t)^2 - 1, convex
// and falling, with f(-1) >= 0 (the top X is 0). Newton's steps from t = -1 rise to the root
// without passing it, so S = {X > t} holds the support; at each step the closed form on S,
// mean_S - sqrt((1 - ss_S)/|S|), is the threshold once it leaves S as it is. False (the caller
// sorts) if rounding stalls the steps.
bool entmax15_tau_newton(const std::vector<double>& xs, double& tau) {
    double t = -1.0;
    for (int iter = 0; iter < 64; ++iter) {
        double k = 0.0, mean = 0.0, ss = 0.0, f = -1.0, slope = 0.0;
        for (double v : xs) {
            if (!(v > t)) continue;
            k += 1.0;
            const double delta = v - mean;
            mean += delta / k;
            ss += delta * (v - mean);
            f += (v - t) * (v - t);
            slope += v - t;
        }
        if (ss <= 1.0) {
            const double closed = mean - std::sqrt((1.0 - ss) / k);
            bool same_set = true;
            for (double v : xs) same_set = same_set && ((v > t) == (v > closed));
            if (same_set) {
                tau = closed;
                return true;
            }
        }
        const double next = t + f / (2.0 * slope);
        if (!(next > t)) return false;
        t = next;
    }
    return false;
}

// 1.5-entmax on X = z/2, z = (x - max)/T: p_i = max(X_i - tau, 0)^2; the support lies in X > -1.
void entmax15_row(const float* x, int n, double T, float* w) {
    const double top = max_of(x, n);
    std::vector<double>& c = t_candidates;
    c.clear();
    for (int i = 0; i < n; ++i) {
        const double X = 0.5 * (x[i] - top) / T;
        if (X > -1.0) c.push_back(X);
    }
    double tau = 0.0;
    if (!entmax15_tau_newton(c, tau)) tau = entmax15_tau_sorted(c);
    for (int i = 0; i < n; ++i) {
        const double X = 0.5 * (x[i] - top) / T;
        w[i] = X > tau ? static_cast<float>((X - tau) * (X - tau)) : 0.0f;
    }
}

// p_i^{alpha-1} = exp(t) + (alpha-1) z_i, as src/analysis/normalizers.cpp's entmax_weight.
double entmax_weight(double z, double am1, double t) {
    if (t >= -std::numbers::ln2) {
        const double y = std::expm1(t) + am1 * z;
        return y > -1.0 ? std::exp(std::log1p(y) / am1) : 0.0;
    }
    const double v = std::exp(t) + am1 * z;
    return v > 0.0 ? std::exp(std::log(v) / am1) : 0.0;
}

// alpha-entmax, any alpha > 1, by bisection on u = log p_max in [-log n, 0] (the support lies in
// z > -1/(alpha-1)); fp32 weights need far fewer halvings than the double reference's 62.
void entmax_bisect_row(const float* x, int n, double T, double alpha, float* w) {
    const double am1 = alpha - 1.0;
    const double top = support_candidates(x, n, T, -1.0 / am1);
    const std::vector<double>& zs = t_candidates;
    const auto mass = [&](double u) {
        double s = 0.0;
        for (double z : zs) s += entmax_weight(z, am1, am1 * u);
        return s;
    };
    double lo = -std::log(static_cast<double>(n)), hi = 0.0;
    for (int iter = 0; iter < 48 && hi - lo > 0x1p-40; ++iter) {
        const double mid = lo + 0.5 * (hi - lo);
        if (mass(mid) < 1.0) lo = mid;
        else hi = mid;
    }
    const double t = am1 * (lo + 0.5 * (hi - lo));
    double sum = 0.0;
    for (double z : zs) sum += entmax_weight(z, am1, t);
    for (int i = 0; i < n; ++i) {
        const double z = (x[i] - top) / T;
        w[i] = z > -1.0 / am1 ? static_cast<float>(entmax_weight(z, am1, t) / sum) : 0.0f;
    }
}

// SA-softmax, AttnLab's labelled simplex variant (normalizers.h): q = softmax(x/T),
// w_i = (x_i - lo) q_i with lo = min(x_min, 0), weights w / sum w; softmax where sum w = 0.
void sa_softmax_row(const float* x, int n, double T, float* w) {
    scaled_softmax(x, n, 1.0 / T, w);
    const double lo = std::min(static_cast<double>(min_of(x, n)), 0.0);
    double W = 0.0;
    for (int i = 0; i < n; ++i) W += (x[i] - lo) / T * w[i];
    if (!(W > 0.0)) return;
    for (int i = 0; i < n; ++i) w[i] = static_cast<float>((x[i] - lo) / T * w[i] / W);
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
