#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "analysis/selection.h"
#include "analysis/softmax.h"
#include "base/random.h"
#include "random_inputs.h"

using namespace attnlab;
using attnlab::test::gaussian_rows;
using attnlab::test::log_uniform;
using attnlab::test::uniform_int;

namespace {

using Vec = std::vector<double>;

// ---- An independent reference: the definitions of PAPER.md §3 as plain loops ------------
// No Gram trick, no matrix products, no shared code with selection.cpp.

double norm(const Vec& v) {
    double sq = 0.0;
    for (double a : v) sq += a * a;
    return std::sqrt(sq);
}

Vec weighted_row(const RowMatrixXd& x, int i, double a) {  // a x_i
    Vec v(static_cast<size_t>(x.cols()));
    for (size_t c = 0; c < v.size(); ++c) v[c] = a * x(i, static_cast<Eigen::Index>(c));
    return v;
}

Vec minus(const Vec& a, const Vec& b) {
    Vec v(a.size());
    for (size_t c = 0; c < v.size(); ++c) v[c] = a[c] - b[c];
    return v;
}

void add_to(Vec& acc, const Vec& v) {
    for (size_t c = 0; c < v.size(); ++c) acc[c] += v[c];
}

// Top-N by repeated scans: the largest weight not yet taken; on equal weights the first index
// scanned (the lower one) wins, as the header promises.
std::vector<int> reference_top(const Vec& w, int N) {
    std::vector<char> taken(w.size(), 0);
    std::vector<int> top;
    for (int k = 0; k < N; ++k) {
        int best = -1;
        for (int i = 0; i < static_cast<int>(w.size()); ++i)
            if (!taken[static_cast<size_t>(i)] && (best < 0 || w[static_cast<size_t>(i)] > w[static_cast<size_t>(best)])) best = i;
        taken[static_cast<size_t>(best)] = 1;
        top.push_back(best);
    }
    return top;
}

// d_A and d_B for any subset `in` of the tokens (the top-N or a random one).
void subset_distances(const Vec& w, const RowMatrixXd& x, const std::vector<char>& in, double& d_A, double& d_B) {
    const int L = static_cast<int>(w.size());
    Vec s(static_cast<size_t>(x.cols()), 0.0), rest = s;
    for (int j = 0; j < L; ++j)
        if (in[static_cast<size_t>(j)]) add_to(s, weighted_row(x, j, w[static_cast<size_t>(j)]));
    d_A = 0.0;
    for (int i = 0; i < L; ++i) {
        if (in[static_cast<size_t>(i)]) continue;
        const Vec y = weighted_row(x, i, w[static_cast<size_t>(i)]);
        d_A += norm(minus(y, s));
        add_to(rest, y);
    }
    d_B = norm(minus(rest, s));
}

struct Reference {
    double abar = 0, d_A = 0, d_B = 0, d_1 = 0, X = 0, bound_A = 0, bound_B = 0, approx_A = 0;
};

Reference reference_distance(const Vec& w, const RowMatrixXd& x, int N) {
    const int L = static_cast<int>(w.size());
    const std::vector<int> top = reference_top(w, N);
    std::vector<char> in(static_cast<size_t>(L), 0);
    Reference r;
    for (int j : top) {
        in[static_cast<size_t>(j)] = 1;
        r.abar += w[static_cast<size_t>(j)];
        r.X = std::max(r.X, norm(weighted_row(x, j, 1.0)));
    }
    subset_distances(w, x, in, r.d_A, r.d_B);
    for (int i = 0; i < L; ++i)
        if (!in[static_cast<size_t>(i)])
            for (int j : top) r.d_1 = std::max(r.d_1, norm(minus(weighted_row(x, i, 1.0), weighted_row(x, j, 1.0))));
    // The bounds term by term: sum over the L - N outside tokens of (abar - alpha_i) is
    // abar (L - N) - (1 - abar); sum of alpha_i is 1 - abar.
    double slack_sum = 0.0, outside = 0.0;
    for (int i = 0; i < L; ++i)
        if (!in[static_cast<size_t>(i)]) {
            slack_sum += r.abar - w[static_cast<size_t>(i)];
            outside += w[static_cast<size_t>(i)];
        }
    r.bound_A = outside * r.d_1 + r.X * slack_sum;
    r.bound_B = outside * r.d_1 + r.X * std::abs(outside - r.abar);
    // approx_A = ((L - N)/L) sum_i || y_i - (N/(L-1)) sum_{j != i} y_j ||, the inner sum looped.
    double sum = 0.0;
    for (int i = 0; i < L; ++i) {
        Vec others(static_cast<size_t>(x.cols()), 0.0);
        for (int j = 0; j < L; ++j)
            if (j != i) add_to(others, weighted_row(x, j, w[static_cast<size_t>(j)] * N / (L - 1.0)));
        sum += norm(minus(weighted_row(x, i, w[static_cast<size_t>(i)]), others));
    }
    r.approx_A = (L - N) / static_cast<double>(L) * sum;
    return r;
}

// The exact E[d_A], E[d_B] and their standard deviations over all C(L, N) subsets (L <= 12).
struct Exact {
    double mean_A = 0, mean_B = 0, sd_A = 0, sd_B = 0;
};

Exact exact_expectation(const Vec& w, const RowMatrixXd& x, int N) {
    const int L = static_cast<int>(w.size());
    Vec all_A, all_B;
    std::vector<char> in(static_cast<size_t>(L));
    for (unsigned mask = 0; mask < (1u << L); ++mask) {
        int members = 0;
        for (int i = 0; i < L; ++i) members += (in[static_cast<size_t>(i)] = (mask >> i) & 1u);
        if (members != N) continue;
        double dA, dB;
        subset_distances(w, x, in, dA, dB);
        all_A.push_back(dA);
        all_B.push_back(dB);
    }
    // Two passes (mean, then squared deviations): E[d^2] - E[d]^2 would cancel to noise.
    const auto mean_sd = [](const Vec& v, double& mean, double& sd) {
        mean = 0.0;
        for (double a : v) mean += a / static_cast<double>(v.size());
        double sq = 0.0;
        for (double a : v) sq += (a - mean) * (a - mean) / static_cast<double>(v.size());
        sd = std::sqrt(sq);
    };
    Exact e;
    mean_sd(all_A, e.mean_A, e.sd_A);
    mean_sd(all_B, e.mean_B, e.sd_B);
    return e;
}

// |a - b| within 1e-10 of the larger, plus 1e-13 of `scale` (the size of the vectors summed)
// for the cancellation any order of summation suffers when a norm of a sum is small.
bool close(double a, double b, double scale) { return std::abs(a - b) <= 1e-10 * std::max(std::abs(a), std::abs(b)) + 1e-13 * scale; }
}  // namespace

// ---- Hand-worked cases ------------------------------------------------------------------

TEST_CASE("selection_order: largest first, ties to the lower index", "[selection]") {
    CHECK(selection_order(Vec{0.2, 0.5, 0.2, 0.5, 0.1}) == std::vector<int>{1, 3, 0, 2, 4});
    CHECK(selection_order(Vec{0.25, 0.25, 0.25, 0.25}) == std::vector<int>{0, 1, 2, 3});
    CHECK(selection_order(Vec{0.1, 0.2, 0.3, 0.4}) == std::vector<int>{3, 2, 1, 0});
    CHECK(selection_order(Vec{0.0, 1.0, 0.0}) == std::vector<int>{1, 0, 2});
}

TEST_CASE("selection: hand-worked L = 3, d = 1 through softmax(log w)", "[selection]") {
    // w = (0.5, 0.3, 0.2) from logits log w at T = 1; x = (1, 2, -1); y = w x = (0.5, 0.6, -0.2).
    const Vec logits = {std::log(0.5), std::log(0.3), std::log(0.2)};
    const Vec w = softmax(logits, 1.0);
    REQUIRE(w[0] == Approx(0.5).epsilon(1e-15));
    REQUIRE(w[1] == Approx(0.3).epsilon(1e-15));
    REQUIRE(w[2] == Approx(0.2).epsilon(1e-15));
    RowMatrixXd x(3, 1);
    x << 1.0, 2.0, -1.0;
    DistanceOptions options;
    const int Ns[] = {1, 2};
    const auto r = selection_distances(w, x, Ns, options);
    REQUIRE(r.size() == 2);
    // N = 1: I = {0}, s = 0.5, abar = 0.5.
    //   d_A = |0.6 - 0.5| + |-0.2 - 0.5| = 0.1 + 0.7 = 0.8;  d_B = |0.6 - 0.2 - 0.5| = 0.1
    //   d_1 = max(|2 - 1|, |-1 - 1|) = 2;  X = 1
    //   bound_A = 0.5 * 2 + 1 * (0.5 * 2 - 0.5) = 1.5;  bound_B = 0.5 * 2 + 1 * |1 - 1| = 1
    //   approx_A: c = N/(L-1) = 1/2, total = 0.9, y_i - c (total - y_i) = 0.3, 0.45, -0.75;
    //             (2/3) * 1.5 = 1.0
    CHECK(r[0].N == 1);
    CHECK(r[0].abar == Approx(0.5).epsilon(1e-14));
    CHECK(r[0].d_A == Approx(0.8).epsilon(1e-13));
    CHECK(r[0].d_B == Approx(0.1).epsilon(1e-12));
    CHECK(r[0].d_1 == Approx(2.0).epsilon(1e-14));
    CHECK(r[0].X == Approx(1.0).epsilon(1e-14));
    CHECK(r[0].bound_A == Approx(1.5).epsilon(1e-13));
    CHECK(r[0].bound_B == Approx(1.0).epsilon(1e-13));
    CHECK(r[0].approx_A == Approx(1.0).epsilon(1e-13));
    // N = 2: I = {0, 1}, s = 1.1, abar = 0.8.
    //   d_A = d_B = |-0.2 - 1.1| = 1.3;  d_1 = max(|-1 - 1|, |-1 - 2|) = 3;  X = 2
    //   bound_A = 0.2 * 3 + 2 * (0.8 * 1 - 0.2) = 1.8;  bound_B = 0.6 + 2 * |1 - 1.6| = 1.8
    //   approx_A: c = 1, 2 y_i - total = 0.1, 0.3, -1.3; (1/3) * 1.7
    CHECK(r[1].abar == Approx(0.8).epsilon(1e-14));
    CHECK(r[1].d_A == Approx(1.3).epsilon(1e-13));
    CHECK(r[1].d_B == Approx(1.3).epsilon(1e-13));
    CHECK(r[1].d_1 == Approx(3.0).epsilon(1e-14));
    CHECK(r[1].X == Approx(2.0).epsilon(1e-14));
    CHECK(r[1].bound_A == Approx(1.8).epsilon(1e-13));
    CHECK(r[1].bound_B == Approx(1.8).epsilon(1e-13));
    CHECK(r[1].approx_A == Approx(1.7 / 3.0).epsilon(1e-13));
    // E[d] over the three 1-subsets: s = 0.5 gives (0.8, 0.1); s = 0.6 gives d_A = 0.1 + 0.8,
    // d_B = |0.5 - 0.2 - 0.6| = 0.3; s = -0.2 gives d_A = 0.7 + 0.8, d_B = 1.3.
    // E[d_A] = 3.2/3, E[d_B] = 1.7/3. 20000 samples: se ~ 0.3/sqrt(20000) ~ 0.002.
    options.samples = 20000;
    options.seed = 11;
    const auto mc = selection_distances(w, x, Ns, options);
    CHECK(std::abs(mc[0].expected_A - 3.2 / 3.0) < 5.0 * mc[0].expected_A_se);
    CHECK(std::abs(mc[0].expected_B - 1.7 / 3.0) < 5.0 * mc[0].expected_B_se);
    CHECK(mc[0].expected_A_se > 0.0);
    CHECK(mc[0].expected_A_se < 0.01);
}

TEST_CASE("selection: hand-worked L = 3, d = 2 with a tie in the weights", "[selection]") {
    // w = (0.25, 0.5, 0.25): order 1, 0, 2 (token 0 beats token 2 on the tie).
    // x0 = (1, 0), x1 = (0, 2), x2 = (3, 4); y0 = (0.25, 0), y1 = (0, 1), y2 = (0.75, 1).
    const Vec w = {0.25, 0.5, 0.25};
    RowMatrixXd x(3, 2);
    x << 1, 0, 0, 2, 3, 4;
    const int Ns[] = {1, 2};
    const auto r = selection_distances(w, x, Ns, DistanceOptions{});
    // N = 1: s = y1, abar = 0.5. d_A = |(0.25, -1)| + |(0.75, 0)| = sqrt(1.0625) + 0.75;
    //   d_B = |y0 + y2 - y1| = |(1, 0)| = 1; d_1 = max(|x0 - x1| = sqrt 5, |x2 - x1| = sqrt 13);
    //   X = 2; bound_A = 0.5 sqrt 13 + 2 (0.5 * 2 - 0.5); bound_B = 0.5 sqrt 13 + 2 * 0.
    //   approx_A: c = 1/2, total = (1, 2), 1.5 y_i - 0.5 total = (-0.125, -1), (-0.5, 0.5),
    //   (0.625, 0.5), times 2/3.
    CHECK(r[0].d_A == Approx(std::sqrt(1.0625) + 0.75).epsilon(1e-13));
    CHECK(r[0].d_B == Approx(1.0).epsilon(1e-13));
    CHECK(r[0].d_1 == Approx(std::sqrt(13.0)).epsilon(1e-14));
    CHECK(r[0].X == Approx(2.0).epsilon(1e-14));
    CHECK(r[0].bound_A == Approx(0.5 * std::sqrt(13.0) + 1.0).epsilon(1e-13));
    CHECK(r[0].bound_B == Approx(0.5 * std::sqrt(13.0)).epsilon(1e-13));
    CHECK(r[0].approx_A == Approx(2.0 / 3.0 * (std::sqrt(1.015625) + std::sqrt(0.5) + std::sqrt(0.640625))).epsilon(1e-13));
    // N = 2: I = {1, 0}, s = (0.25, 1), abar = 0.75. d_A = d_B = |y2 - s| = |(0.5, 0)| = 0.5;
    //   d_1 = max(|x2 - x1| = sqrt 13, |x2 - x0| = sqrt 20); X = max(2, 1) = 2;
    //   bound_A = 0.25 sqrt 20 + 2 (0.75 - 0.25); bound_B = 0.25 sqrt 20 + 2 |1 - 1.5|.
    //   approx_A: c = 1, 2 y_i - total = (-0.5, -2), (-1, 0), (0.5, 0), times 1/3.
    CHECK(r[1].abar == Approx(0.75).epsilon(1e-15));
    CHECK(r[1].d_A == Approx(0.5).epsilon(1e-13));
    CHECK(r[1].d_B == Approx(0.5).epsilon(1e-13));
    CHECK(r[1].d_1 == Approx(std::sqrt(20.0)).epsilon(1e-14));
    CHECK(r[1].bound_A == Approx(0.25 * std::sqrt(20.0) + 1.0).epsilon(1e-13));
    CHECK(r[1].bound_B == Approx(0.25 * std::sqrt(20.0) + 1.0).epsilon(1e-13));
    CHECK(r[1].approx_A == Approx((std::sqrt(4.25) + 1.5) / 3.0).epsilon(1e-13));
    CHECK(sum_weighted_norms(w, x) == Approx(0.25 + 1.0 + 1.25).epsilon(1e-14));
}

TEST_CASE("selection: d_1 of near-duplicate vectors, and bound_A >= d_A there", "[selection]") {
    // x0 = 1, x1 = 1 + 2^-30 (d = 1), w = (0.5, 0.5), N = 1: I = {0}.
    //   d_A = d_B = |0.5 x1 - 0.5 x0| = 2^-31;  d_1 = |x1 - x0| = 2^-30;  X = 1;
    //   bound_A = 0.5 * 2^-30 + 1 * (0.5 * 1 - 0.5) = 2^-31 = d_A (the bound is tight here).
    // The Gram form |x1|^2 + |x0|^2 - 2 x0 x1 = (1 + 2^-29 [+ 2^-60 rounded away]) + 1 - 2 (1 + 2^-30)
    // cancels to 0, which would give d_1 = 0 and a "bound" of 0 below d_A.
    const Vec w = {0.5, 0.5};
    RowMatrixXd x(2, 1);
    x << 1.0, 1.0 + std::ldexp(1.0, -30);
    const int Ns[] = {1};
    const SelectionDistance r = selection_distances(w, x, Ns, DistanceOptions{}).front();
    CHECK(r.d_A == std::ldexp(1.0, -31));
    CHECK(r.d_1 == Approx(std::ldexp(1.0, -30)).epsilon(1e-9));
    CHECK(r.d_A <= r.bound_A * (1.0 + 1e-12));
    CHECK(r.d_B <= r.bound_B * (1.0 + 1e-12));
}

TEST_CASE("selection: the bounds count the weight left out even when abar rounds to 1", "[selection]") {
    // logits (0, -40) at T = 1: in double alpha_0 = 1/(1 + e^-40) = 1 exactly, alpha_1 = e^-40 = 4.25e-18.
    // x = (1, -1e12): y = (1, -4.25e-6). N = 1: s = 1.
    //   d_A = d_B = |y_1 - s| = 1 + 1e12 e^-40.
    //   The weight outside is alpha_1 (not 1 - abar = 0 in double); d_1 = 1e12 + 1, X = 1:
    //   bound_A = alpha_1 d_1 + X (abar - alpha_1) = 1e12 e^-40 + 1 - e^-40 ~ 1 + 4.25e-6 = d_A (tight);
    //   bound_B = alpha_1 d_1 + X |alpha_1 - abar| = the same.
    // With the outside weight taken as 1 - abar = 0 both bounds come out as 1, below d_A.
    const Vec w = softmax(Vec{0.0, -40.0}, 1.0);
    REQUIRE(w[0] == 1.0);
    REQUIRE(w[1] == Approx(std::exp(-40.0)).epsilon(1e-15));
    RowMatrixXd x(2, 1);
    x << 1.0, -1e12;
    const int Ns[] = {1};
    const SelectionDistance r = selection_distances(w, x, Ns, DistanceOptions{}).front();
    const double expected = 1.0 + 1e12 * std::exp(-40.0);
    CHECK(r.d_A == Approx(expected).epsilon(1e-14));
    CHECK(r.d_B == Approx(expected).epsilon(1e-14));
    CHECK(r.d_1 == Approx(1e12 + 1.0).epsilon(1e-14));
    CHECK(r.bound_A == Approx(expected).epsilon(1e-12));
    CHECK(r.bound_B == Approx(expected).epsilon(1e-12));
    CHECK(r.d_A <= r.bound_A * (1.0 + 1e-12));
    CHECK(r.d_B <= r.bound_B * (1.0 + 1e-12));
}

// ---- Against the brute-force reference --------------------------------------------------

TEST_CASE("selection: every field equals the brute-force reference, E[d] the exact enumeration", "[selection]") {
    SplitMix64 rng(0x5e1ec7);
    int compared = 0, mc_checked = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int L = uniform_int(rng, 2, 10), d = uniform_int(rng, 1, 5);
        // Weights with exact ties in a third of the cases; vectors with norms over 4 decades.
        Vec logits(static_cast<size_t>(L));
        for (double& l : logits) l = rng.normal();
        if (trial % 3 == 0) logits[static_cast<size_t>(L - 1)] = logits[0];
        if (trial % 5 == 0) std::fill(logits.begin(), logits.begin() + L / 2, logits[static_cast<size_t>(L / 2)]);
        const Vec w = softmax(logits, log_uniform(rng, 0.1, 10.0));
        RowMatrixXd x = gaussian_rows(rng, L, d);
        for (int i = 0; i < L; ++i) x.row(i) *= std::pow(10.0, -2.0 + 4.0 * rng.uniform());
        double scale = 0.0;  // sum_i |y_i|: the size of what the distances sum
        for (int i = 0; i < L; ++i) scale += w[static_cast<size_t>(i)] * x.row(i).norm();

        std::vector<int> Ns;
        for (int N = 1; N < L; ++N) Ns.push_back(N);
        const auto all = selection_distances(w, x, Ns, DistanceOptions{});
        REQUIRE(all.size() == Ns.size());
        const std::vector<int> order = selection_order(w);
        CHECK(std::vector<int>(order.begin(), order.end() - 1) == reference_top(w, L - 1));
        for (const SelectionDistance& r : all) {
            const Reference ref = reference_distance(w, x, r.N);
            INFO("trial " << trial << " L " << L << " d " << d << " N " << r.N);
            CHECK(close(r.abar, ref.abar, 1.0));
            CHECK(close(r.d_A, ref.d_A, scale));
            CHECK(close(r.d_B, ref.d_B, scale));
            CHECK(close(r.d_1, ref.d_1, 0.0));
            CHECK(close(r.X, ref.X, 0.0));
            CHECK(close(r.bound_A, ref.bound_A, scale));
            CHECK(close(r.bound_B, ref.bound_B, scale));
            CHECK(close(r.approx_A, ref.approx_A, scale));
            ++compared;
        }

        // Monte Carlo for one N against the exact expectation over all C(L, N) subsets.
        const int N = uniform_int(rng, 1, L - 1), S = 2000;
        DistanceOptions options;
        options.samples = S;
        options.seed = static_cast<std::uint64_t>(trial);
        const int one[] = {N};
        const SelectionDistance mc = selection_distances(w, x, one, options).front();
        CHECK(mc.d_A == all[static_cast<size_t>(N - 1)].d_A);  // the Monte Carlo run changes nothing else
        const Exact ex = exact_expectation(w, x, N);
        INFO("trial " << trial << " L " << L << " N " << N << " exact E[d_A] " << ex.mean_A << " sd " << ex.sd_A << " MC " << mc.expected_A
                      << " se " << mc.expected_A_se);
        // The Monte Carlo distances go through |y|^2 + |s|^2 - 2 y.s, whose absolute error is
        // about sqrt(eps) |y| per distance: allow 1e-7 of the scale on top of 5 standard errors.
        CHECK(std::abs(mc.expected_A - ex.mean_A) <= 5.0 * mc.expected_A_se + 1e-7 * scale);
        CHECK(std::abs(mc.expected_B - ex.mean_B) <= 5.0 * mc.expected_B_se + 1e-7 * scale);
        // se = sample sd / sqrt(S): compare with the exact sd when the subsets differ at all.
        if (ex.sd_A > 1e-9 * scale) {
            CHECK(mc.expected_A_se > 0.0);
            CHECK(mc.expected_A_se * std::sqrt(S) / ex.sd_A == Approx(1.0).margin(0.25));
            ++mc_checked;
        }
        if (ex.sd_B > 1e-9 * scale) CHECK(mc.expected_B_se * std::sqrt(S) / ex.sd_B == Approx(1.0).margin(0.25));
        // By the triangle inequality E[d_A] <= sum_{i} P(i out) |y_i| + (L - N) E|s|, and
        // E|s| <= (N/L) sum |y_i|: E[d_A] <= (L - N)(N + 1)/L * sum |y_i|.
        CHECK(ex.mean_A <= (L - N) * (N + 1.0) / L * scale * (1.0 + 1e-12));
    }
    CHECK(compared > 1000);
    CHECK(mc_checked > 250);
}

TEST_CASE("selection: Monte Carlo se falls as 1/sqrt(samples); seeds reproduce; gram gives the same d_1", "[selection]") {
    SplitMix64 rng(77);
    const int L = 9, d = 4, N = 3;
    Vec logits(L);
    for (double& l : logits) l = rng.normal();
    const Vec w = softmax(logits, 1.0);
    const RowMatrixXd x = gaussian_rows(rng, L, d);
    const Exact ex = exact_expectation(w, x, N);
    const int one[] = {N};
    double se_first = 0.0, se_last = 0.0;
    for (int S : {250, 1000, 4000, 16000}) {
        DistanceOptions options;
        options.samples = S;
        options.seed = 5;
        const SelectionDistance r = selection_distances(w, x, one, options).front();
        INFO("S " << S << " se " << r.expected_A_se << " exact sd " << ex.sd_A);
        CHECK(r.expected_A_se * std::sqrt(S) == Approx(ex.sd_A).epsilon(0.15));
        CHECK(std::abs(r.expected_A - ex.mean_A) < 5.0 * r.expected_A_se);
        if (S == 250) se_first = r.expected_A_se;
        se_last = r.expected_A_se;
    }
    CHECK(se_first / se_last == Approx(8.0).epsilon(0.2));  // 64x the samples, 1/8 the error

    // The same seed gives the same numbers, bit for bit; another seed other subsets.
    DistanceOptions options;
    options.samples = 300;
    options.seed = 123;
    const int Ns[] = {1, 4, 8};
    const auto a = selection_distances(w, x, Ns, options), b = selection_distances(w, x, Ns, options);
    options.seed = 124;
    const auto c = selection_distances(w, x, Ns, options);
    for (size_t k = 0; k < a.size(); ++k) {
        CHECK(a[k].expected_A == b[k].expected_A);
        CHECK(a[k].expected_A_se == b[k].expected_A_se);
        CHECK(a[k].expected_B == b[k].expected_B);
        CHECK(a[k].expected_B_se == b[k].expected_B_se);
        CHECK(a[k].expected_A != c[k].expected_A);
    }

    // A Gram matrix over more tokens than the query sees (one per head, shared by its queries).
    RowMatrixXd x_more(L + 3, d);
    x_more.topRows(L) = x;
    x_more.bottomRows(3) = gaussian_rows(rng, 3, d) * 100.0;
    RowMatrixXd gram(L + 3, L + 3);
    for (int i = 0; i < L + 3; ++i)
        for (int j = 0; j < L + 3; ++j) {
            double dot = 0.0;
            for (int k = 0; k < d; ++k) dot += x_more(i, k) * x_more(j, k);
            gram(i, j) = dot;
        }
    options.samples = 0;
    const auto without = selection_distances(w, x, Ns, options);
    const GramRows whole(gram);
    const auto with = selection_distances(w, x, Ns, options, &whole);
    for (size_t k = 0; k < without.size(); ++k) {
        CHECK(with[k].d_1 == Approx(without[k].d_1).epsilon(1e-12));
        CHECK(with[k].d_1 == Approx(reference_distance(w, x, Ns[k]).d_1).epsilon(1e-12));
        CHECK(with[k].bound_A == Approx(without[k].bound_A).epsilon(1e-12));
        // With gram the top-N distances come from the Gram form too (header: rounding of about
        // 1e-16 |s|^2 / |y_i - s| per distance): the same numbers to well within 1e-9 here.
        CHECK(with[k].d_A == Approx(without[k].d_A).epsilon(1e-9));
        CHECK(with[k].d_B == Approx(without[k].d_B).epsilon(1e-9));
        CHECK(with[k].approx_A == Approx(without[k].approx_A).epsilon(1e-12));
    }
}

TEST_CASE("selection: Gram rows computed as read give the whole Gram matrix's numbers, Monte Carlo included", "[selection]") {
    // The page's summaries past kWholeGramTokens read rows of x x^T computed per query rather
    // than a (T, T) matrix, and take the Monte Carlo through one product Y S^T rather than rows
    // of G. The same subsets (one seed) must then give the same numbers as the whole matrix's
    // row-by-row sums, and the top-N distances those computed directly; d_1 the brute-force one.
    SplitMix64 rng(77);
    for (int trial = 0; trial < 40; ++trial) {
        const int L = 3 + static_cast<int>(rng.uniform() * 120), d = 1 + static_cast<int>(rng.uniform() * 24);
        std::vector<double> logits(static_cast<size_t>(L));
        for (double& l : logits) l = 2.0 * rng.normal();
        const std::vector<double> w = softmax(logits, 1.0);
        const RowMatrixXd x = gaussian_rows(rng, L, d);
        std::vector<int> Ns;
        for (int N = 1; N < L; N += 1 + N / 2) Ns.push_back(N);
        DistanceOptions options;
        options.samples = 6;
        options.seed = 5 + static_cast<std::uint64_t>(trial);
        options.bounds = trial % 2 == 0;  // d_1 then directly: nearly equal vectors keep their true distance
        const RowMatrixXd gram = x * x.transpose();
        const GramRows whole(gram);
        const GramRows as_read = GramRows::computed_from(x);
        CHECK_FALSE(as_read.whole());
        const auto a = selection_distances(w, x, Ns, options, &whole);
        const auto b = selection_distances(w, x, Ns, options, &as_read);
        const auto direct = selection_distances(w, x, Ns, options);
        for (size_t k = 0; k < Ns.size(); ++k) {
            INFO("trial " << trial << " L " << L << " d " << d << " N " << Ns[k]);
            CHECK(b[k].d_A == Approx(a[k].d_A).epsilon(1e-9));
            CHECK(b[k].d_B == Approx(a[k].d_B).epsilon(1e-12));
            CHECK(b[k].d_A == Approx(direct[k].d_A).epsilon(1e-9));
            CHECK(b[k].expected_A == Approx(a[k].expected_A).epsilon(1e-9));
            CHECK(b[k].expected_B == Approx(a[k].expected_B).epsilon(1e-12));
            CHECK(b[k].expected_A_se == Approx(a[k].expected_A_se).epsilon(1e-6).margin(1e-12));
            if (options.bounds) {
                CHECK(b[k].d_1 == Approx(reference_distance(w, x, Ns[k]).d_1).epsilon(1e-12));
                CHECK(b[k].bound_A == Approx(direct[k].bound_A).epsilon(1e-12));
            }
        }
    }
}

// ---- Corollary 2 as behaviour -----------------------------------------------------------

TEST_CASE("Corollary 2: N fixed, L growing; L fixed, N -> L - 1", "[selection]") {
    // Logits N(0, 1) at T = 1, x ~ N(0, I_8), N = 5. As L grows every alpha ~ e^l / (L E e^l),
    // so the paper's main term approx_A tends to sum_i |alpha_i x_i| (the mean of s vanishes
    // faster than each term). The true E[d_A] does not: s is a sum of N terms of the same order
    // as each alpha_i x_i, and E[d_A] / sum |alpha_i x_i| tends to
    //   R = E|e^{l0} x0 - sum_{k=1..N} e^{lk} xk| / E|e^{l0} x0|   (all l, x independent),
    // estimated here by direct simulation, independently of the code under test.
    const int N = 5, d = 8;
    SplitMix64 sim(404);
    double num = 0.0, den = 0.0;
    for (int t = 0; t < 20000; ++t) {
        Vec y0(d), diff(d);
        const double a0 = std::exp(sim.normal());
        for (int c = 0; c < d; ++c) diff[static_cast<size_t>(c)] = y0[static_cast<size_t>(c)] = a0 * sim.normal();
        for (int k = 1; k <= N; ++k) {
            const double a = std::exp(sim.normal());
            for (int c = 0; c < d; ++c) diff[static_cast<size_t>(c)] -= a * sim.normal();
        }
        num += norm(diff);
        den += norm(y0);
    }
    const double R = num / den;
    REQUIRE(R > 2.0);  // far from 1

    // Ratios to sum |alpha_i x_i| at L = 20, 1000 and 2000, averaged over 3 seeds. E[d] needs
    // the L x L Gram matrix, so it stops at L = 1000; approx_A alone is O(L d).
    double approx_20 = 0, approx_2000 = 0, expected_20 = 0, expected_1000 = 0, se_1000 = 0;
    const int seeds = 3;
    for (int seed = 1; seed <= seeds; ++seed) {
        for (const int L : {20, 1000, 2000}) {
            SplitMix64 rng(static_cast<std::uint64_t>(seed * 7919 + L));
            Vec logits(static_cast<size_t>(L));
            for (double& l : logits) l = rng.normal();
            const Vec w = softmax(logits, 1.0);
            const RowMatrixXd x = gaussian_rows(rng, L, d);
            DistanceOptions options;
            options.samples = L == 2000 ? 0 : 400;
            options.bounds = false;
            options.seed = static_cast<std::uint64_t>(seed);
            const int one[] = {N};
            const SelectionDistance r = selection_distances(w, x, one, options).front();
            const double swn = sum_weighted_norms(w, x);
            double direct = 0.0;
            for (int i = 0; i < L; ++i) direct += w[static_cast<size_t>(i)] * norm(weighted_row(x, i, 1.0));
            CHECK(swn == Approx(direct).epsilon(1e-12));
            if (L == 20) approx_20 += r.approx_A / swn / seeds, expected_20 += r.expected_A / swn / seeds;
            if (L == 1000) expected_1000 += r.expected_A / swn / seeds, se_1000 += r.expected_A_se / swn / seeds;
            if (L == 2000) approx_2000 += r.approx_A / swn / seeds;
        }
    }
    INFO("approx_A / sum|y|: L=20 " << approx_20 << ", L=2000 " << approx_2000 << "; E[d_A] / sum|y|: L=20 " << expected_20 << ", L=1000 "
                                    << expected_1000 << " (se " << se_1000 << "), predicted limit " << R);
    CHECK(std::abs(approx_2000 - 1.0) < std::abs(approx_20 - 1.0));
    CHECK(std::abs(approx_2000 - 1.0) < 0.1);
    CHECK(expected_1000 == Approx(R).epsilon(0.1));
    CHECK(std::abs(expected_1000 - 1.0) > std::abs(expected_20 - 1.0));  // moving away from 1, not towards it

    // L fixed, N -> L - 1: the distance shrinks to a single term.
    for (int seed = 1; seed <= 4; ++seed) {
        const int L = 50;
        SplitMix64 rng(static_cast<std::uint64_t>(seed));
        Vec logits(L);
        for (double& l : logits) l = rng.normal();
        const Vec w = softmax(logits, 1.0);
        const RowMatrixXd x = gaussian_rows(rng, L, d);
        DistanceOptions options;
        options.samples = 400;
        options.seed = 3;
        const int Ns[] = {1, L / 2, L - 1};
        const auto r = selection_distances(w, x, Ns, options);
        const Reference last = reference_distance(w, x, L - 1);
        INFO("seed " << seed << ": d_A at N = 1, L/2, L-1: " << r[0].d_A << ", " << r[1].d_A << ", " << r[2].d_A
                     << "; E[d_A]: " << r[0].expected_A << ", " << r[1].expected_A << ", " << r[2].expected_A);
        CHECK(r[2].d_A == Approx(last.d_A).epsilon(1e-12));
        CHECK(r[2].d_A == Approx(r[2].d_B).epsilon(1e-12));  // one term: both readings agree
        CHECK(r[2].d_A < 0.2 * r[0].d_A);
        CHECK(r[2].d_A < 0.1 * r[1].d_A);
        CHECK(r[2].expected_A < 0.3 * r[0].expected_A);
        CHECK(r[2].expected_A < 0.1 * r[1].expected_A);
    }
}
