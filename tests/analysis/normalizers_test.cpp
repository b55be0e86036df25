#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "analysis/normalizers.h"
#include "base/random.h"

using namespace attnlab;

// --- independent references, coded differently from the library ------------------------

// Softmax straight from the definition, the max subtracted to avoid overflow.
static std::vector<double> ref_softmax(const std::vector<double>& l, double T) {
    const double top = *std::max_element(l.begin(), l.end());
    std::vector<double> p(l.size());
    double s = 0.0;
    for (size_t i = 0; i < l.size(); ++i) s += (p[i] = std::exp((l[i] - top) / T));
    for (double& x : p) x /= s;
    return p;
}

// alpha-entmax by plain bisection on tau in the paper's own parametrization,
// p_i = [(alpha-1) z_i - tau]_+^{1/(alpha-1)} (alpha = 2: sparsemax). Returns tau with z = l/T
// shifted so that max z = 0; tau lies in [-1, -(1/L)^{alpha-1}].
static double ref_entmax_tau(const std::vector<double>& l, double T, double alpha) {
    const double top = *std::max_element(l.begin(), l.end());
    const double am1 = alpha - 1.0;
    auto mass = [&](double tau) {
        double s = 0.0;
        for (double x : l) {
            const double v = am1 * (x - top) / T - tau;
            if (v > 0.0) s += std::pow(v, 1.0 / am1);
        }
        return s;
    };
    double lo = -1.0, hi = -std::pow(1.0 / static_cast<double>(l.size()), am1);
    for (int i = 0; i < 300; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (mass(mid) > 1.0) lo = mid;
        else hi = mid;  // mass falls as tau rises
    }
    return 0.5 * (lo + hi);
}

static std::vector<double> ref_entmax(const std::vector<double>& l, double T, double alpha) {
    const double top = *std::max_element(l.begin(), l.end());
    const double tau = ref_entmax_tau(l, T, alpha);
    std::vector<double> p(l.size());
    double s = 0.0;
    for (size_t i = 0; i < l.size(); ++i) {
        const double v = (alpha - 1.0) * (l[i] - top) / T - tau;
        s += (p[i] = v > 0.0 ? std::pow(v, 1.0 / (alpha - 1.0)) : 0.0);
    }
    for (double& x : p) x /= s;
    return p;
}

static double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
    double m = 0.0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

// Random logits: L, spread and T log-uniform, with exact ties and constant vectors mixed in.
struct Case {
    std::vector<double> l;
    double T;
};

static Case random_case(SplitMix64& rng, int trial, double log_spread_lo, double log_spread_hi, double log_T_lo, double log_T_hi,
                        const std::vector<int>& lengths) {
    const int L = lengths[static_cast<size_t>(rng.uniform() * static_cast<double>(lengths.size()))];
    const double spread = std::pow(10.0, log_spread_lo + (log_spread_hi - log_spread_lo) * rng.uniform());
    Case c;
    c.T = std::pow(10.0, log_T_lo + (log_T_hi - log_T_lo) * rng.uniform());
    c.l.resize(L);
    for (double& x : c.l) x = spread * rng.normal();
    if (trial % 5 == 1 && L > 1) c.l[L - 1] = c.l[0];                                // a tie
    if (trial % 11 == 2) std::fill(c.l.begin(), c.l.begin() + (L + 1) / 2, c.l[0]);  // many ties
    if (trial % 13 == 3) std::fill(c.l.begin(), c.l.end(), -spread);                 // constant vector
    return c;
}

static std::vector<Normalizer> all_normalizers() {
    std::vector<Normalizer> v;
    v.push_back({NormalizerKind::Softmax, 1.5, 1.0});
    v.push_back({NormalizerKind::Sparsemax, 1.5, 1.0});
    for (double a : {1.5, 1.0001, 1.2, 1.7, 2.0, 2.5, 4.0}) v.push_back({NormalizerKind::Entmax, a, 1.0});
    for (double s : {1.0, 0.3, -0.7}) v.push_back({NormalizerKind::Ssmax, 1.5, s});
    v.push_back({NormalizerKind::SaSoftmax, 1.5, 1.0});
    return v;
}

static std::string describe(const Normalizer& n) {
    return normalizer_name(n) + " alpha=" + std::to_string(n.alpha) + " s=" + std::to_string(n.scale);
}

// --- the simplex ---------------------------------------------------------------------------

TEST_CASE("normalizers: weights are non-negative and sum to 1 on thousands of random cases", "[normalizers]") {
    const std::vector<int> lengths = {1, 2, 3, 5, 17, 64, 300};
    for (const Normalizer& n : all_normalizers()) {
        INFO(describe(n));
        SplitMix64 rng(1234);
        for (int trial = 0; trial < 1500; ++trial) {
            Case c = random_case(rng, trial, -3.0, 3.0, -3.0, 3.0, lengths);
            if (trial % 17 == 4)
                for (double& x : c.l) x += 1e6;  // far from 0: stability
            std::string err;
            REQUIRE(check_normalizer_input(n, c.l, c.T, err));
            const std::vector<double> w = normalize(n, c.l, c.T);
            REQUIRE(w.size() == c.l.size());
            double s = 0.0;
            for (double x : w) {
                REQUIRE(std::isfinite(x));
                REQUIRE(x >= 0.0);
                s += x;
            }
            INFO("trial " << trial << " L=" << c.l.size() << " T=" << c.T);
            REQUIRE(std::abs(s - 1.0) <= 1e-12);
        }
    }
}

TEST_CASE("normalizers: L = 1 gives the single weight 1 and a zero Jacobian", "[normalizers]") {
    for (const Normalizer& n : all_normalizers()) {
        for (double l : {-3.0, 0.0, 2.5}) {
            INFO(describe(n) << " l=" << l);
            const std::vector<double> v = {l};
            const auto w = normalize(n, v, 0.7);
            CHECK(w.size() == 1);
            CHECK(w[0] == Approx(1.0).epsilon(1e-15));
            CHECK(normalizer_jacobian(n, v, 0.7).cwiseAbs().maxCoeff() <= 1e-15);
            CHECK(normalizer_jacobian_norm(n, v, 0.7) <= 1e-15);
        }
    }
}

TEST_CASE("normalizers: no overflow with logits of 1e6 over small temperatures", "[normalizers]") {
    const std::vector<double> l = {1e6, 0.0, -1e6};
    for (const Normalizer& n : all_normalizers()) {
        if (n.kind == NormalizerKind::Ssmax && n.scale < 0) continue;  // ssmax with s < 0 picks the min
        INFO(describe(n));
        const auto w = normalize(n, l, 1e-3);
        CHECK(w[0] == Approx(1.0).epsilon(1e-15));
        CHECK(w[1] == 0.0);
        CHECK(w[2] == 0.0);
    }
    // SSMax with s < 0 favours the smallest logit; even at the ends of the double range.
    const std::vector<double> extreme = {1.5e308, -1.5e308};
    CHECK(ssmax(extreme, 1.0, -1.0) == std::vector<double>{0.0, 1.0});
    CHECK(ssmax(extreme, 1.0, 1.0) == std::vector<double>{1.0, 0.0});
    // A constant offset of 1e6 changes nothing but SA-softmax (which is not shift invariant).
    SplitMix64 rng(5);
    for (int trial = 0; trial < 200; ++trial) {
        Case c = random_case(rng, trial, -1.0, 1.0, -1.0, 1.0, {2, 7, 40});
        std::vector<double> far = c.l;
        for (double& x : far) x += 1e6;
        for (const Normalizer& n : all_normalizers()) {
            if (n.kind == NormalizerKind::SaSoftmax) continue;
            INFO(describe(n));
            // 1e6 + l is rounded to ~1e-10, which moves z = l/T by ~1e-9 at T = 0.1.
            CHECK(max_abs_diff(normalize(n, c.l, c.T), normalize(n, far, c.T)) <= 1e-7);
        }
    }
}

// --- hand-worked values ---------------------------------------------------------------------

TEST_CASE("sparsemax: hand-worked values", "[normalizers]") {
    // (1, 0.5, -1), T = 1: support {1, 2}, tau = (1 + 0.5 - 1)/2 = 0.25.
    const std::vector<double> l = {1.0, 0.5, -1.0};
    const auto p = sparsemax(l, 1.0);
    CHECK(p[0] == Approx(0.75).epsilon(1e-15));
    CHECK(p[1] == Approx(0.25).epsilon(1e-15));
    CHECK(p[2] == 0.0);
    // T = 2: z = (0.5, 0.25, -0.5), tau = (0.75 - 1)/2 = -0.125, p = (0.625, 0.375, 0).
    const auto p2 = sparsemax(l, 2.0);
    CHECK(p2[0] == Approx(0.625).epsilon(1e-15));
    CHECK(p2[1] == Approx(0.375).epsilon(1e-15));
    CHECK(p2[2] == 0.0);
    // T = 10: z = (0.1, 0.05, -0.1), all on the support, tau = (0.05 - 1)/3.
    const auto p3 = sparsemax(l, 10.0);
    const double tau = (0.05 - 1.0) / 3.0;
    CHECK(p3[0] == Approx(0.1 - tau).epsilon(1e-14));
    CHECK(p3[1] == Approx(0.05 - tau).epsilon(1e-14));
    CHECK(p3[2] == Approx(-0.1 - tau).epsilon(1e-14));
    // A gap of 1 or more leaves the top token alone: one-hot.
    const auto p4 = sparsemax(std::vector<double>{3.0, 0.0, 2.0}, 1.0);
    CHECK(p4 == std::vector<double>{1.0, 0.0, 0.0});
    // Ties share equally.
    const auto p5 = sparsemax(std::vector<double>{4.0, 4.0, 4.0, 1.0}, 1.0);
    for (int i = 0; i < 3; ++i) CHECK(p5[i] == Approx(1.0 / 3).epsilon(1e-15));
    CHECK(p5[3] == 0.0);
}

TEST_CASE("1.5-entmax: hand-worked values", "[normalizers]") {
    // z = (2, 1, 0): X = z/2 = (1, 0.5, 0). Support {1, 2}: (1 - t)^2 + (0.5 - t)^2 = 1, i.e.
    // 2t^2 - 3t + 1/4 = 0, t = (3 - sqrt 7)/4 (>= X_3 = 0, so token 3 is out). Then
    // p = ((1 + sqrt 7)/4)^2, ((sqrt 7 - 1)/4)^2, 0) = (1/2 + sqrt7/8, 1/2 - sqrt7/8, 0).
    const std::vector<double> l = {2.0, 1.0, 0.0};
    const double s7 = std::sqrt(7.0);
    for (const auto& p : {entmax15(l, 1.0), entmax_bisect(l, 1.0, 1.5), normalize({NormalizerKind::Entmax, 1.5, 1.0}, l, 1.0)}) {
        CHECK(p[0] == Approx(0.5 + s7 / 8).epsilon(1e-14));
        CHECK(p[1] == Approx(0.5 - s7 / 8).epsilon(1e-14));
        CHECK(p[2] == 0.0);
    }
    // z = (0.2, 0.1, 0): X = (0.1, 0.05, 0), all three on the support:
    // 3t^2 - 2(0.15)t + (0.01 + 0.0025 - 1) = 0, t = (0.3 - sqrt(0.09 + 12 * 0.9875)) / 6.
    const std::vector<double> l2 = {0.4, 0.2, 0.0};  // at T = 2
    const double t = (0.3 - std::sqrt(0.09 + 12.0 * 0.9875)) / 6.0;
    const auto q = entmax15(l2, 2.0);
    CHECK(q[0] == Approx((0.1 - t) * (0.1 - t)).epsilon(1e-14));
    CHECK(q[1] == Approx((0.05 - t) * (0.05 - t)).epsilon(1e-14));
    CHECK(q[2] == Approx(t * t).epsilon(1e-14));
}

TEST_CASE("alpha-entmax: hand-worked two-token values", "[normalizers]") {
    // With both tokens on the support, p_1^{alpha-1} - p_2^{alpha-1} = (alpha-1)(z_1 - z_2).
    // alpha = 3, z = (0.25, 0): p_1^2 - p_2^2 = 0.5 and p_1 + p_2 = 1, so p_1 - p_2 = 0.5.
    const auto p = entmax_bisect(std::vector<double>{0.5, 0.0}, 2.0, 3.0);
    CHECK(p[0] == Approx(0.75).epsilon(1e-14));
    CHECK(p[1] == Approx(0.25).epsilon(1e-14));
    // alpha = 3, z = (1, 0): p_1 - p_2 would be 2: token 2 leaves the support, p = (1, 0).
    const auto p2 = entmax_bisect(std::vector<double>{1.0, 0.0}, 1.0, 3.0);
    CHECK(p2[0] == 1.0);
    CHECK(p2[1] == 0.0);
    // alpha = 1.25, z = (z1, 0): choose p = (0.8, 0.2) and set z1 = (0.8^0.25 - 0.2^0.25)/0.25.
    const double z1 = (std::pow(0.8, 0.25) - std::pow(0.2, 0.25)) / 0.25;
    const auto p3 = entmax_bisect(std::vector<double>{z1, 0.0}, 1.0, 1.25);
    CHECK(p3[0] == Approx(0.8).epsilon(1e-13));
    CHECK(p3[1] == Approx(0.2).epsilon(1e-13));
}

TEST_CASE("SSMax: softmax at temperature T / (s log n)", "[normalizers]") {
    SplitMix64 rng(77);
    for (int L : {2, 5, 100}) {
        for (double s : {0.5, 1.0, 2.0}) {
            std::vector<double> l(L);
            for (double& x : l) x = 2.0 * rng.normal();
            const double T = 0.8;
            const auto w = ssmax(l, T, s);
            const auto ref = ref_softmax(l, T / (s * std::log(static_cast<double>(L))));
            CHECK(max_abs_diff(w, ref) <= 1e-14);
        }
    }
    // s = 1/log 4 at n = 4 is plain softmax: (0, log 3, 0, 0) -> (1, 3, 1, 1)/6.
    const std::vector<double> l = {0.0, std::log(3.0), 0.0, 0.0};
    const auto w = normalize({NormalizerKind::Ssmax, 1.5, 1.0 / std::log(4.0)}, l, 1.0);
    CHECK(w[0] == Approx(1.0 / 6).epsilon(1e-14));
    CHECK(w[1] == Approx(0.5).epsilon(1e-14));
    // s = 0 (or L = 1) flattens to uniform.
    for (double x : ssmax(l, 1.0, 0.0)) CHECK(x == Approx(0.25).epsilon(1e-15));
}

TEST_CASE("SA-softmax: hand-worked values", "[normalizers]") {
    // x = (2, 0, -1): lo = -1, hi = 2, range 3; softmax ~ (e^2, 1, e^-1); factors (3, 1, 0)/3.
    // w ~ (3 e^2, 1, 0)/3, normalized: (3 e^2, 1, 0) / (3 e^2 + 1).
    const double e2 = std::exp(2.0);
    for (const auto& [l, T] : {std::pair{std::vector<double>{2.0, 0.0, -1.0}, 1.0}, std::pair{std::vector<double>{4.0, 0.0, -2.0}, 2.0}}) {
        const auto a = sa_softmax(l, T);
        CHECK(a[0] == Approx(3 * e2 / (3 * e2 + 1)).epsilon(1e-14));
        CHECK(a[1] == Approx(1 / (3 * e2 + 1)).epsilon(1e-14));
        CHECK(a[2] == 0.0);
    }
    // All positive: lo = 0, so alpha_i ~ x_i e^{x_i}: (1, 2, 3) -> (e, 2e^2, 3e^3) / sum.
    const auto b = sa_softmax(std::vector<double>{1.0, 2.0, 3.0}, 1.0);
    const double z = std::exp(1.0) + 2 * std::exp(2.0) + 3 * std::exp(3.0);
    CHECK(b[0] == Approx(std::exp(1.0) / z).epsilon(1e-14));
    CHECK(b[1] == Approx(2 * std::exp(2.0) / z).epsilon(1e-14));
    CHECK(b[2] == Approx(3 * std::exp(3.0) / z).epsilon(1e-14));
    // A tied minimum: both get 0, the rest takes everything.
    CHECK(sa_softmax(std::vector<double>{0.5, -2.0, -2.0}, 1.0) == std::vector<double>{1.0, 0.0, 0.0});
    // Fallbacks: all equal and <= 0 (w = 0), and all zero (range 0): uniform softmax.
    for (double x : sa_softmax(std::vector<double>{-1.0, -1.0, -1.0}, 1.0)) CHECK(x == Approx(1.0 / 3).epsilon(1e-15));
    for (double x : sa_softmax(std::vector<double>{0.0, 0.0}, 1.0)) CHECK(x == Approx(0.5).epsilon(1e-15));
    // All equal and positive: lo = 0, factors all equal: uniform without the fallback.
    for (double x : sa_softmax(std::vector<double>{2.0, 2.0, 2.0, 2.0}, 1.0)) CHECK(x == Approx(0.25).epsilon(1e-15));
}

// --- sparsity, limits and cross-checks ---------------------------------------------------------

TEST_CASE("sparsemax and entmax: exact zeros below the threshold", "[normalizers]") {
    const std::vector<double> l = {10.0, 9.5, 0.0, -1.0, -5.0, -100.0};
    const auto p = sparsemax(l, 1.0);  // tau = (19.5 - 1)/2 = 9.25
    CHECK(p[0] == Approx(0.75).epsilon(1e-15));
    CHECK(p[1] == Approx(0.25).epsilon(1e-15));
    for (int i = 2; i < 6; ++i) CHECK(p[i] == 0.0);

    SplitMix64 rng(31);
    for (double alpha : {2.0, 1.5, 1.3, 3.0}) {
        int zeros = 0, total = 0;
        for (int trial = 0; trial < 50; ++trial) {
            std::vector<double> v(200);
            for (double& x : v) x = 100.0 * rng.normal();
            const double T = 1.0;
            const auto w = alpha == 2.0 ? sparsemax(v, T) : alpha == 1.5 ? entmax15(v, T) : entmax_bisect(v, T, alpha);
            const double top = *std::max_element(v.begin(), v.end());
            const double tau = ref_entmax_tau(v, T, alpha);
            for (size_t i = 0; i < v.size(); ++i) {
                if ((alpha - 1.0) * (v[i] - top) / T - tau < -1e-9) REQUIRE(w[i] == 0.0);
                if (w[i] == 0.0) ++zeros;
                ++total;
            }
        }
        INFO("alpha " << alpha);
        CHECK(zeros > total * 9 / 10);  // spread 100 leaves a handful of tokens on the support
    }
}

TEST_CASE("sparsemax and entmax agree with a plain bisection on tau", "[normalizers]") {
    SplitMix64 rng(404);
    for (int trial = 0; trial < 600; ++trial) {
        const Case c = random_case(rng, trial, -2.0, 2.0, -2.0, 2.0, {1, 2, 3, 10, 50, 200});
        INFO("trial " << trial);
        CHECK(max_abs_diff(sparsemax(c.l, c.T), ref_entmax(c.l, c.T, 2.0)) <= 1e-12);
        CHECK(max_abs_diff(entmax15(c.l, c.T), ref_entmax(c.l, c.T, 1.5)) <= 1e-12);
        // 6: p_max^{alpha-1} down to 200^-5 ~ 3e-12, where rounding relative to 1 instead of
        // to p_max^{alpha-1} would show.
        for (double alpha : {1.2, 1.7, 2.5, 3.5, 6.0}) {
            INFO("alpha " << alpha);
            const auto ours = entmax_bisect(c.l, c.T, alpha);
            const auto ref = ref_entmax(c.l, c.T, alpha);
            // Conditioning: p_i^{alpha-1} = v_i = (alpha-1) z_i - tau is found to an absolute
            // error of a few eps |tau| (every v on the support is <= |tau|). That moves p_i by
            // p_i^{2-alpha} dv / (alpha-1) to first order, and by at most dv^{1/(alpha-1)} when
            // alpha > 2 and v_i ~ dv (p is only Hoelder continuous at the threshold). Keeping the
            // sum at 1 passes those moves on to every token through tau: at most their total.
            const double dv = 64.0 * 0x1p-52 * (-ref_entmax_tau(c.l, c.T, alpha));
            std::vector<double> local(ref.size());
            double total = 0.0;
            for (size_t i = 0; i < ref.size(); ++i) {
                const double first_order =
                    ref[i] > 0.0 ? std::pow(ref[i], 2.0 - alpha) * dv / (alpha - 1.0) : std::numeric_limits<double>::infinity();
                total += local[i] = std::min(first_order, std::pow(dv, 1.0 / (alpha - 1.0)));
            }
            for (size_t i = 0; i < ref.size(); ++i) {
                const double tol = 1e-13 + local[i] + total;
                INFO("token " << i << " p " << ref[i] << " tol " << tol);
                CHECK(std::abs(ours[i] - ref[i]) <= tol);
            }
        }
    }
}

TEST_CASE("entmax bisection keeps relative precision when p^{alpha-1} is tiny", "[normalizers]") {
    // alpha = 6, 200 logits within 1e-12 of each other: the weights are near 1/200 and
    // p^{alpha-1} = (alpha-1) z - tau is near 200^-5 ~ 3e-12, yet the weights still differ
    // by tens of percent. Rounding p^{alpha-1} relative to 1 would cost 1e-4 of each weight.
    std::vector<double> l(200);
    for (size_t i = 0; i < l.size(); ++i) l[i] = -1e-14 * static_cast<double>(i * i % 37);
    const auto ours = entmax_bisect(l, 1.0, 6.0);
    const auto ref = ref_entmax(l, 1.0, 6.0);
    const auto [lo, hi] = std::minmax_element(ref.begin(), ref.end());
    CHECK(*hi / *lo > 1.1);  // the case is not trivially uniform
    for (size_t i = 0; i < l.size(); ++i) CHECK(ours[i] == Approx(ref[i]).epsilon(1e-12));
}

TEST_CASE("entmax bisection: alpha = 1.5 equals the exact algorithm, alpha = 2 equals sparsemax", "[normalizers]") {
    SplitMix64 rng(9);
    for (int trial = 0; trial < 1000; ++trial) {
        const Case c = random_case(rng, trial, -3.0, 3.0, -3.0, 3.0, {1, 2, 4, 30, 300});
        INFO("trial " << trial);
        CHECK(max_abs_diff(entmax_bisect(c.l, c.T, 1.5), entmax15(c.l, c.T)) <= 1e-12);
        CHECK(max_abs_diff(entmax_bisect(c.l, c.T, 2.0), sparsemax(c.l, c.T)) <= 1e-12);
    }
}

TEST_CASE("entmax: alpha -> 1 approaches softmax", "[normalizers]") {
    SplitMix64 rng(11);
    for (int L : {2, 20, 300}) {
        std::vector<double> l(L);
        for (double& x : l) x = 1.5 * rng.normal();
        const auto ref = ref_softmax(l, 1.0);
        double prev = 1.0;
        // Down to alpha - 1 = 1e-12: the power 1/(alpha-1) must not amplify rounding there.
        for (int k = 1; k <= 12; ++k) {
            const double am1 = std::pow(10.0, -k);
            const double err = max_abs_diff(entmax_bisect(l, 1.0, 1.0 + am1), ref);
            INFO("L " << L << " alpha - 1 = " << am1 << " error " << err);
            CHECK(err < prev * 0.2);  // first order in alpha - 1: about 10x per decade
            CHECK(err < 2.0 * am1);
            prev = err;
        }
    }
    // alpha == 1 exactly is softmax itself.
    const std::vector<double> l = {0.3, -1.0, 2.0};
    CHECK(max_abs_diff(normalize({NormalizerKind::Entmax, 1.0, 1.0}, l, 0.5), ref_softmax(l, 0.5)) <= 1e-15);
}

// --- Jacobians -----------------------------------------------------------------------------------

// How far the case is from a kink, in units of (alpha-1) z (sparse normalizers) or of x = l/T
// (SA-softmax): small means a central difference of step 1e-6 could straddle it.
static double kink_margin(const Normalizer& n, const std::vector<double>& l, double T, const std::vector<double>& p) {
    const double inf = std::numeric_limits<double>::infinity();
    const bool sparse = n.kind == NormalizerKind::Sparsemax || (n.kind == NormalizerKind::Entmax && n.alpha > 1.0);
    if (sparse) {
        const double am1 = n.kind == NormalizerKind::Sparsemax ? 1.0 : n.alpha - 1.0;
        // tau from the top token: p_top^{alpha-1} = (alpha-1) z_top - tau.
        const size_t top = static_cast<size_t>(std::max_element(p.begin(), p.end()) - p.begin());
        const double tau = am1 * l[top] / T - std::pow(p[top], am1);
        double m = inf;
        for (size_t i = 0; i < l.size(); ++i) m = std::min(m, std::abs(am1 * l[i] / T - tau));
        return m;
    }
    if (n.kind == NormalizerKind::SaSoftmax) {
        std::vector<double> x = l;
        std::sort(x.begin(), x.end());
        double m = std::abs(x[0] / T);                         // the min crossing 0
        if (x.size() > 1) m = std::min(m, (x[1] - x[0]) / T);  // a tie at the min
        return m;
    }
    return inf;
}

TEST_CASE("normalizer Jacobians match central finite differences away from kinks", "[normalizers][jacobian]") {
    for (const Normalizer& n : all_normalizers()) {
        if (n.kind == NormalizerKind::Entmax && n.alpha < 1.01) continue;  // covered by the softmax limit
        INFO(describe(n));
        SplitMix64 rng(2024);
        int checked = 0;
        const double need_margin = (n.kind == NormalizerKind::Entmax && n.alpha > 2.0) ? 1e-2 : 1e-3;
        for (int trial = 0; trial < 300; ++trial) {
            const Case c = random_case(rng, trial, -1.0, 1.5, -1.0, 1.0, {1, 2, 3, 6, 15, 30});
            const std::vector<double> p = normalize(n, c.l, c.T);
            if (kink_margin(n, c.l, c.T, p) < need_margin) continue;
            const Eigen::MatrixXd J = normalizer_jacobian(n, c.l, c.T);
            const int L = static_cast<int>(c.l.size());
            REQUIRE(J.rows() == L);
            REQUIRE(J.cols() == L);
            Eigen::MatrixXd fd(L, L);
            for (int k = 0; k < L; ++k) {
                std::vector<double> up = c.l, down = c.l;
                up[k] += 1e-6 * c.T;  // 1e-6 in z = l/T
                down[k] -= 1e-6 * c.T;
                const double step = up[k] - down[k];  // the step actually taken after rounding
                const auto pu = normalize(n, up, c.T), pd = normalize(n, down, c.T);
                for (int i = 0; i < L; ++i) fd(i, k) = (pu[i] - pd[i]) / step;
            }
            const double scale = 1.0 + J.cwiseAbs().maxCoeff() * c.T;  // J in units of 1/T
            INFO("trial " << trial << " L=" << L << " T=" << c.T);
            CHECK((J - fd).cwiseAbs().maxCoeff() * c.T <= 1e-6 * scale);
            // Weights stay on the simplex: every column of J sums to 0.
            CHECK(J.colwise().sum().cwiseAbs().maxCoeff() * c.T <= 1e-12 * scale);
            ++checked;
        }
        CHECK(checked >= 100);
    }
}

// The factor c of J = c (diag r - r r^T): the dense reference is built from rounded weights, and
// near one-hot its (top, top) entry c (r_1 - r_1^2) cancels to an absolute error of about eps c,
// so the reference is accurate to eps c, not relative to a tiny ||J||. (SA-softmax: its largest entry.)
static double jacobian_scale(const Normalizer& n, const std::vector<double>& l, double T) {
    const double L = static_cast<double>(l.size());
    switch (n.kind) {
        case NormalizerKind::Ssmax: return std::abs(n.scale * std::log(L) / T);
        case NormalizerKind::Entmax: {
            double G = 0.0;  // sum of p^{2-alpha} over the support
            for (double p : normalize(n, l, T))
                if (p > 0.0) G += std::pow(p, 2.0 - n.alpha);
            return G / T;
        }
        case NormalizerKind::SaSoftmax: return normalizer_jacobian(n, l, T).cwiseAbs().maxCoeff();
        default: return 1.0 / T;
    }
}

TEST_CASE("normalizer Jacobian norm equals the dense largest singular value", "[normalizers][jacobian]") {
    for (const Normalizer& n : all_normalizers()) {
        INFO(describe(n));
        SplitMix64 rng(55);
        for (int trial = 0; trial < 300; ++trial) {
            const Case c = random_case(rng, trial, -2.0, 2.0, -2.0, 2.0, {1, 2, 3, 8, 30, 60});
            const Eigen::MatrixXd J = normalizer_jacobian(n, c.l, c.T);
            const double ref = Eigen::JacobiSVD<Eigen::MatrixXd>(J).singularValues()(0);
            const double ours = normalizer_jacobian_norm(n, c.l, c.T);
            INFO("trial " << trial << " L=" << c.l.size() << " T=" << c.T);
            CHECK(ours == Approx(ref).margin(1e-12 * jacobian_scale(n, c.l, c.T)).epsilon(1e-9));
        }
    }
    // Sparsemax's J/T... is a projection: its norm is 1/T on a support of 2 or more, else 0.
    CHECK(normalizer_jacobian_norm({NormalizerKind::Sparsemax, 1.5, 1.0}, std::vector<double>{1.0, 0.5, -1.0}, 2.0) ==
          Approx(0.5).epsilon(1e-14));
    CHECK(normalizer_jacobian_norm({NormalizerKind::Sparsemax, 1.5, 1.0}, std::vector<double>{3.0, 0.0}, 1.0) == 0.0);
}

// --- names and validation --------------------------------------------------------------------------

TEST_CASE("parse_normalizer and normalizer_name round-trip; unknown names are rejected", "[normalizers]") {
    for (Normalizer n : all_normalizers()) {
        Normalizer back;
        back.alpha = n.alpha;  // "entmax" keeps the caller's alpha
        back.scale = n.scale;
        std::string err;
        REQUIRE(parse_normalizer(normalizer_name(n), back, err));
        CHECK(back.kind == n.kind);
        CHECK(back.alpha == n.alpha);
    }
    Normalizer n;
    n.alpha = 3.0;
    std::string err;
    REQUIRE(parse_normalizer("entmax15", n, err));
    CHECK(n.kind == NormalizerKind::Entmax);
    CHECK(n.alpha == 1.5);
    CHECK(normalizer_name(n) == "entmax-1.5");
    n.alpha = 1.8;
    REQUIRE(parse_normalizer("entmax", n, err));
    CHECK(n.alpha == 1.8);
    CHECK(normalizer_name(n) == "entmax");
    CHECK(normalizer_name({NormalizerKind::SaSoftmax, 1.5, 1.0}) == "sa-softmax");
    CHECK(normalizer_name({NormalizerKind::Ssmax, 1.5, 1.0}) == "ssmax");

    const Normalizer before = n;
    CHECK_FALSE(parse_normalizer("softmaxx", n, err));
    CHECK(err.find("softmaxx") != std::string::npos);
    for (const char* valid : {"softmax", "sparsemax", "entmax-1.5", "entmax", "ssmax", "sa-softmax"})
        CHECK(err.find(valid) != std::string::npos);
    CHECK(n.kind == before.kind);
    CHECK(n.alpha == before.alpha);
    CHECK_FALSE(parse_normalizer("", n, err));
}

TEST_CASE("check_normalizer_input rejects bad values and names them", "[normalizers]") {
    const Normalizer soft{NormalizerKind::Softmax, 1.5, 1.0};
    const std::vector<double> ok = {0.1, -2.0, 3.0};
    std::string err;
    CHECK(check_normalizer_input(soft, ok, 1.0, err));
    CHECK_FALSE(check_normalizer_input(soft, std::vector<double>{}, 1.0, err));
    CHECK(err.find("L") != std::string::npos);
    CHECK_FALSE(check_normalizer_input(soft, std::vector<double>{0.0, std::nan("")}, 1.0, err));
    CHECK(err.find("logit 1") != std::string::npos);
    CHECK(err.find("nan") != std::string::npos);
    CHECK_FALSE(check_normalizer_input(soft, std::vector<double>{-INFINITY}, 1.0, err));
    CHECK(err.find("inf") != std::string::npos);
    for (double T : {0.0, -1.0, std::nan(""), static_cast<double>(INFINITY)}) {
        CHECK_FALSE(check_normalizer_input(soft, ok, T, err));
        CHECK(err.find("T =") != std::string::npos);
    }
    // 1e300: found by the fuzzer; beyond 1e3 the bisection underflowed every weight to NaN.
    for (double a : {0.5, 0.999, 1000.5, 1e300, std::nan(""), static_cast<double>(INFINITY)}) {
        CHECK_FALSE(check_normalizer_input({NormalizerKind::Entmax, a, 1.0}, ok, 1.0, err));
        CHECK(err.find("alpha") != std::string::npos);
    }
    CHECK(check_normalizer_input({NormalizerKind::Entmax, 1.0, 1.0}, ok, 1.0, err));
    CHECK(check_normalizer_input({NormalizerKind::Entmax, 1000.0, 1.0}, ok, 1.0, err));
    for (double w : entmax_bisect(ok, 1.0, 1000.0)) CHECK(std::isfinite(w));
    CHECK_FALSE(check_normalizer_input({NormalizerKind::Ssmax, 1.5, std::nan("")}, ok, 1.0, err));
    CHECK(err.find("scale") != std::string::npos);
    CHECK(check_normalizer_input({NormalizerKind::Ssmax, 1.5, -2.0}, ok, 1.0, err));
}
