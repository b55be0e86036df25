#include "model/normalize_rows.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "model/entmax_solve.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attnlab {

namespace {

#if defined(__wasm_simd128__)
// exp of four lanes, Cephes' expf: n = round(x log2 e), r = x - n ln 2 (ln 2 in two parts), a
// degree-5 polynomial, times 2^n built in the exponent bits. Within 3 float epsilons of exp on
// [-87.3, 88.3] (tests/model/attention_plan_test.cpp); 0 below (and for -inf), NaN for NaN. Eigen 3.4 has no WebAssembly backend: its SSE
// exp through Emscripten's SSE headers took 12.7 ns an element in node against 2.3 for this, and
// was 29% of a one-thread prefill at 4,096 tokens (the softmax rows) and 2.5% more (the SiLU).
v128_t exp_lanes(v128_t x) {
    const v128_t nan = wasm_f32x4_ne(x, x), below = wasm_f32x4_lt(x, wasm_f32x4_splat(-87.33654f));
    x = wasm_f32x4_pmax(wasm_f32x4_splat(-87.33654f), wasm_f32x4_pmin(wasm_f32x4_splat(88.37626f), x));
    const v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)));
    v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
    v128_t y = wasm_f32x4_splat(1.9875691500e-4f);
    y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(1.3981999507e-3f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(8.3334519073e-3f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(4.1665795894e-2f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(1.6666665459e-1f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, r), wasm_f32x4_splat(5.0000001201e-1f));
    y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(y, wasm_f32x4_mul(r, r)), r), wasm_f32x4_splat(1.0f));
    const v128_t two_n = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
    y = wasm_v128_andnot(wasm_f32x4_mul(y, two_n), below);
    return wasm_v128_bitselect(wasm_f32x4_splat(std::numeric_limits<float>::quiet_NaN()), y, nan);
}

// x[i] = exp(x[i]) for i < n, n a whole number of lanes.
void exp_in_place(float* x, int n) {
    for (int i = 0; i < n; i += 4) wasm_v128_store(x + i, exp_lanes(wasm_v128_load(x + i)));
}
#else
void exp_in_place(float* x, int n) {
    Eigen::Map<Eigen::ArrayXf> e(x, n);
    e = e.exp();
}
#endif

// Per-thread scratch: the candidates of a row's support, in double; a row of exponents.
thread_local std::vector<double> t_candidates;
thread_local Eigen::ArrayXf t_exponents;

// Eigen's reductions run in SIMD lanes (std::max_element keeps an index, one value at a time); a
// maximum is exact in any order.
float max_of(const float* x, int n) { return Eigen::Map<const Eigen::ArrayXf>(x, n).maxCoeff(); }
float min_of(const float* x, int n) { return Eigen::Map<const Eigen::ArrayXf>(x, n).minCoeff(); }

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

// t_exponents[0..n) = exp(beta (x_i - anchor)), through an aligned copy padded to whole packets,
// so that every element takes the vectorised exp (natively Eigen's: a row's unaligned head or short
// tail would take the scalar one, whose last bit differs, and the bits would depend on where the row lies).
Eigen::ArrayXf& exp_row(const float* x, int n, double beta, double anchor) {
    constexpr int kPacket = 16;
    Eigen::ArrayXf& e = t_exponents;
    const int padded = (n + kPacket - 1) / kPacket * kPacket;
    if (e.size() < padded) e.resize(padded);
    for (int i = 0; i < n; ++i) e[i] = static_cast<float>(beta * (static_cast<double>(x[i]) - anchor));
    for (int i = n; i < padded; ++i) e[i] = 0.0f;
    exp_in_place(e.data(), padded);
    return e;
}

// weights = softmax(beta * (x - anchor)), with the anchor chosen so that every exponent is <= 0,
// and the sum kept in double in a fixed order.
void scaled_softmax(const float* x, int n, double beta, float* w) {
    const Eigen::ArrayXf& e = exp_row(x, n, beta, beta >= 0.0 ? max_of(x, n) : min_of(x, n));
    const double sum = ordered_sum(n, [&](int i) { return static_cast<double>(e[i]); });
    const float inv = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i) w[i] = e[i] * inv;
}

// c[0..) <- the values v(i), i < n, above `floor`, in index order, without a branch per value
// (near-uniform rows make such branches unpredictable).
template <typename Value>
void collect_above(int n, double floor, Value v, std::vector<double>& c) {
    c.resize(static_cast<size_t>(n));
    size_t k = 0;
    for (int i = 0; i < n; ++i) {
        const double z = v(i);
        c[k] = z;
        k += z > floor;
    }
    c.resize(k);
}

// Over the values of c above t: how many (k), the sum of v - t (a) and of (v - t)^2 (b). Four
// lanes by index, summed in a fixed order: no branch per value, and the bits depend on c alone.
void sums_above(const std::vector<double>& c, double t, double& k, double& a, double& b) {
    double kl[4] = {0, 0, 0, 0}, al[4] = {0, 0, 0, 0}, bl[4] = {0, 0, 0, 0};
    const size_t m = c.size();
    size_t i = 0;
    for (; i + 4 <= m; i += 4)
        for (size_t j = 0; j < 4; ++j) {
            const double d = c[i + j] > t ? c[i + j] - t : 0.0;
            kl[j] += c[i + j] > t ? 1.0 : 0.0;
            al[j] += d;
            bl[j] += d * d;
        }
    for (; i < m; ++i) {
        const double d = c[i] > t ? c[i] - t : 0.0;
        kl[i & 3] += c[i] > t ? 1.0 : 0.0;
        al[i & 3] += d;
        bl[i & 3] += d * d;
    }
    k = (kl[0] + kl[1]) + (kl[2] + kl[3]);
    a = (al[0] + al[1]) + (al[2] + al[3]);
    b = (bl[0] + bl[1]) + (bl[2] + bl[3]);
}

// Sparsemax (Martins & Astudillo 2016) on z = (x - max)/T: p_i = max(z_i - tau, 0) with tau the
// root of sum_i max(z_i - tau, 0) = 1. Found without a sort (Michelot 1986; Condat 2016): for
// any set S, (sum_S z - 1)/|S| is at most tau, so starting below the root (tau >= -1: the top z
// is 0), tau <- (sum_S z - 1)/|S| over S = {z > tau} rises to it and stops when S no longer
// shrinks; S is then the support. A sort cost O(n log n) on a near-uniform row, where every key
// is a candidate (70 us a row of 512 on this project's machine).
void sparsemax_row(const float* x, int n, double T, float* w) {
    const double top = max_of(x, n), inv_T = 1.0 / T;
    std::vector<double>& c = t_candidates;
    collect_above(
        n, -1.0, [&](int i) { return (x[i] - top) * inv_T; }, c);
    double tau = -1.0, k = 0.0, a = 0.0, b = 0.0, before = -1.0;
    for (int iter = 0; iter < n + 2; ++iter) {  // |S| shrinks at every step: at most n of them
        sums_above(c, tau, k, a, b);
        if (k == before) break;
        before = k;
        tau += (a - 1.0) / k;  // (sum_S z - 1)/|S|, with sum_S z = a + k tau
    }
    for (int i = 0; i < n; ++i) {
        const double z = (x[i] - top) * inv_T;
        w[i] = z > tau ? static_cast<float>(z - tau) : 0.0f;
    }
}

// The same threshold without a sort: tau is the root of f(t) = sum_{X > t} (X - t)^2 - 1, convex
// and falling, with f(-1) >= 0 (the top X is 0). Newton's steps from t = -1 rise to the root
// without passing it, so S = {X > t} holds the support; at each step the closed form on S,
// mean_S - sqrt((1 - ss_S)/|S|), is the threshold once it leaves S as it is. False (the caller
// sorts) if rounding stalls the steps.
bool entmax15_tau_newton(const std::vector<double>& xs, double& tau) {
    double t = -1.0;
    for (int iter = 0; iter < 64; ++iter) {
        double k = 0.0, a = 0.0, b = 0.0;  // over S = {X > t}: |S|, sum (X - t), sum (X - t)^2
        sums_above(xs, t, k, a, b);
        const double ss = b - a * a / k;  // the squared deviations from S's mean, t + a/k
        if (ss <= 1.0) {
            const double closed = t + a / k - std::sqrt((1.0 - ss) / k);
            int moved = 0;
            for (const double v : xs) moved += (v > t) != (v > closed);
            if (moved == 0) {
                tau = closed;
                return true;
            }
        }
        const double next = t + (b - 1.0) / (2.0 * a);  // Newton: f = b - 1, f' = -2a
        if (!(next > t)) return false;
        t = next;
    }
    return false;
}

// 1.5-entmax on X = z/2, z = (x - max)/T: p_i = max(X_i - tau, 0)^2; the support lies in X > -1.
void entmax15_row(const float* x, int n, double T, float* w) {
    const double top = max_of(x, n), half_inv_T = 0.5 / T;
    std::vector<double>& c = t_candidates;
    collect_above(
        n, -1.0, [&](int i) { return (x[i] - top) * half_inv_T; }, c);
    double tau = 0.0;
    if (!entmax15_tau_newton(c, tau)) tau = entmax15_threshold(c);
    for (int i = 0; i < n; ++i) {
        const double X = (x[i] - top) * half_inv_T;
        w[i] = X > tau ? static_cast<float>((X - tau) * (X - tau)) : 0.0f;
    }
}

// alpha-entmax, any alpha > 1, through the double solver of entmax_solve.h (it sorts the row's
// candidates: per-thread copies of the row in and out).
thread_local std::vector<double> t_row_in, t_row_out;

void entmax_general_row(const float* x, int n, double T, double alpha, float* w) {
    t_row_in.assign(x, x + n);
    t_row_out.resize(static_cast<size_t>(n));
    entmax_relative_to_last_key(t_row_in.data(), n, T, alpha, t_row_out.data());
    for (int i = 0; i < n; ++i) w[i] = static_cast<float>(t_row_out[i]);
}

// SA-softmax, AttnLab's labelled simplex variant (normalizers.h): q = softmax(x/T),
// w_i = (x_i - lo)/(hi - lo) q_i with lo = min(x_min, 0), hi = max(0, x_max), weights w / sum w;
// softmax where sum w = 0. The division by sum w makes softmax's own denominator cancel, so the
// row takes one exp pass and one product pass: w_i = r_i e_i / sum_j r_j e_j with
// e = exp((x - x_max)/T) and r = (x - lo)/(hi - lo) in [0, 1] (formed in double: x - lo may
// pass float's range). The row's scores are read before any weight is written, so in place is fine.
void sa_softmax_row(const float* x, int n, double T, float* w) {
    const double top = max_of(x, n), lo = std::min(static_cast<double>(min_of(x, n)), 0.0), hi = std::max(top, 0.0);
    if (!(hi > lo)) return scaled_softmax(x, n, 1.0 / T, w);  // every score 0
    const double beta = 1.0 / T, inv_range = 1.0 / (hi - lo);
    Eigen::ArrayXf& e = exp_row(x, n, beta, top);
    for (int i = 0; i < n; ++i) e[i] *= static_cast<float>((static_cast<double>(x[i]) - lo) * inv_range);
    const double W = ordered_sum(n, [&](int i) { return static_cast<double>(e[i]); });
    if (!(W > 0.0)) return scaled_softmax(x, n, beta, w);  // every score equal and <= 0
    const float inv = static_cast<float>(1.0 / W);
    for (int i = 0; i < n; ++i) w[i] = e[i] * inv;
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
            else entmax_general_row(scores, n, T, nz.alpha, weights);
            return;
        case NormalizerKind::Ssmax: scaled_softmax(scores, n, nz.scale * std::log(static_cast<double>(n)) / T, weights); return;
        case NormalizerKind::SaSoftmax: sa_softmax_row(scores, n, T, weights); return;
    }
}

const float* exp_scaled(const float* x, int n, double beta, double anchor) { return exp_row(x, n, beta, anchor).data(); }

#if defined(__wasm_simd128__)
void softmax_row(const float* scores, int n, float inv_tau, float* weights) {
    // Lanes by index mod 4 from the row's start, a padded copy for the tail (-inf: weight 0), so
    // the bits depend on the row alone, not on where it lies in memory.
    const int whole = n / 4 * 4;
    float tail[4];
    std::fill(tail, tail + 4, -std::numeric_limits<float>::infinity());
    std::copy(scores + whole, scores + n, tail);
    v128_t top4 = wasm_v128_load(tail);
    for (int i = 0; i < whole; i += 4) top4 = wasm_f32x4_pmax(top4, wasm_v128_load(scores + i));
    const float top = std::max(std::max(wasm_f32x4_extract_lane(top4, 0), wasm_f32x4_extract_lane(top4, 1)),
                               std::max(wasm_f32x4_extract_lane(top4, 2), wasm_f32x4_extract_lane(top4, 3)));
    const v128_t shift = wasm_f32x4_splat(top), scale = wasm_f32x4_splat(inv_tau);
    v128_t sum4 = wasm_f32x4_splat(0.0f);
    for (int i = 0; i < whole; i += 4) {
        const v128_t e = exp_lanes(wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(scores + i), shift), scale));
        wasm_v128_store(weights + i, e);
        sum4 = wasm_f32x4_add(sum4, e);
    }
    const v128_t e = exp_lanes(wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(tail), shift), scale));
    wasm_v128_store(tail, e);
    std::copy(tail, tail + (n - whole), weights + whole);
    sum4 = wasm_f32x4_add(sum4, e);
    const float sum = (wasm_f32x4_extract_lane(sum4, 0) + wasm_f32x4_extract_lane(sum4, 1)) +
                      (wasm_f32x4_extract_lane(sum4, 2) + wasm_f32x4_extract_lane(sum4, 3));
    const v128_t inv = wasm_f32x4_splat(1.0f / sum);
    for (int i = 0; i < whole; i += 4) wasm_v128_store(weights + i, wasm_f32x4_mul(wasm_v128_load(weights + i), inv));
    for (int i = whole; i < n; ++i) weights[i] *= 1.0f / sum;
}
#else
void softmax_row(const float* scores, int n, float inv_tau, float* weights) {
    const auto s = Eigen::Map<const Eigen::ArrayXf>(scores, n);
    auto p = Eigen::Map<Eigen::ArrayXf>(weights, n);
    p = ((s - s.maxCoeff()) * inv_tau).exp();  // Eigen's exp is vectorised
    p *= 1.0f / p.sum();
}
#endif

}  // namespace attnlab
