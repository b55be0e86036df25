#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/ks_test.h"
#include "base/random.h"

using namespace attnlab;

// Independent reference for D: at every pooled value x, count each sample's values <= x
// (O((n+m)^2), no sorting, no merge walk).
static double naive_statistic(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> pooled = a;
    pooled.insert(pooled.end(), b.begin(), b.end());
    double d = 0.0;
    for (double x : pooled) {
        const double fa = static_cast<double>(std::count_if(a.begin(), a.end(), [x](double v) { return v <= x; }));
        const double fb = static_cast<double>(std::count_if(b.begin(), b.end(), [x](double v) { return v <= x; }));
        d = std::max(d, std::abs(fa / static_cast<double>(a.size()) - fb / static_cast<double>(b.size())));
    }
    return d;
}

// Independent reference for the p-value: the permutation test itself. Every way of handing
// n of the pooled values to a (a bitmask with n ones) is equally likely under H0; count those
// whose D is at least the observed one. Distinct D values differ by >= 1/(n m) >= 1/36 here.
static double permutation_p_value(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> pooled = a;
    pooled.insert(pooled.end(), b.begin(), b.end());
    const int total = static_cast<int>(pooled.size());
    const double observed = naive_statistic(a, b);
    int hits = 0;
    int orderings = 0;
    for (std::uint32_t mask = 0; mask < (1u << total); ++mask) {
        if (std::popcount(mask) != static_cast<int>(a.size())) continue;
        std::vector<double> pa, pb;
        for (int k = 0; k < total; ++k) ((mask >> k) & 1u ? pa : pb).push_back(pooled[static_cast<std::size_t>(k)]);
        ++orderings;
        if (naive_statistic(pa, pb) >= observed - 1e-12) ++hits;
    }
    return static_cast<double>(hits) / static_cast<double>(orderings);
}

// Independent reference for the lattice tail P(max_prefix |i m - j n| >= h): walk every ordering
// of n a's and m b's (bitmask with n ones) and count.
static double lattice_tail_by_enumeration(int n, int m, int h) {
    int hits = 0;
    int orderings = 0;
    for (std::uint32_t mask = 0; mask < (1u << (n + m)); ++mask) {
        if (std::popcount(mask) != n) continue;
        int i = 0, j = 0, widest = 0;
        for (int k = 0; k < n + m; ++k) {
            ((mask >> k) & 1u) ? ++i : ++j;
            widest = std::max(widest, std::abs(i * m - j * n));
        }
        ++orderings;
        if (widest >= h) ++hits;
    }
    return static_cast<double>(hits) / static_cast<double>(orderings);
}

// Independent reference for n = m (Gnedenko & Korolyuk 1951, by reflection of lattice paths):
// P(D_{n,n} >= k/n) = 2 sum_{j>=1} (-1)^{j-1} C(2n, n - j k) / C(2n, n).
static double equal_size_tail(int n, int k) {
    double sum = 0.0;
    for (int j = 1; n - j * k >= 0; ++j) {
        const double log_ratio = 2.0 * std::lgamma(n + 1.0) - std::lgamma(n - j * k + 1.0) - std::lgamma(n + j * k + 1.0);
        sum += ((j % 2 == 1) ? 1.0 : -1.0) * std::exp(log_ratio);
    }
    return 2.0 * sum;
}

// Q_KS straight from its defining alternating series, many terms, no change of form.
static double tail_by_series(double lambda) {
    double sum = 0.0;
    for (int k = 1; k <= 400; ++k) sum += ((k % 2 == 1) ? 1.0 : -1.0) * std::exp(-2.0 * k * k * lambda * lambda);
    return 2.0 * sum;
}

static KsResult run_ks(const std::vector<double>& a, const std::vector<double>& b) {
    KsResult r{-1.0, -1.0, false};
    std::string error;
    REQUIRE(ks_two_sample(a, b, r, error));
    CHECK(error.empty());
    return r;
}

static std::vector<double> normal_sample(SplitMix64& rng, int size, double shift) {
    std::vector<double> x(static_cast<std::size_t>(size));
    for (double& v : x) v = rng.normal() + shift;
    return x;
}

TEST_CASE("ks: hand-worked statistics and exact p-values", "[ks]") {
    // All a's before all b's: D = 1. Of the C(6,3) = 20 orderings only aaabbb and bbbaaa reach
    // D = 1 (D = 1 needs one ECDF at 1 while the other is at 0): p = 2/20.
    KsResult r = run_ks({1, 2, 3}, {4, 5, 6});
    CHECK(r.statistic == 1.0);
    CHECK(r.p_value == Approx(0.1).epsilon(1e-13));
    CHECK(r.exact);

    // n = 2, m = 1: the orderings aab (D = 1), aba (D = 1/2), baa (D = 1) are equally likely.
    r = run_ks({1, 2}, {3});
    CHECK(r.statistic == 1.0);
    CHECK(r.p_value == Approx(2.0 / 3.0).epsilon(1e-13));

    // n = m = 2, D = 1: aabb and bbaa of C(4,2) = 6.
    r = run_ks({1, 2}, {3, 4});
    CHECK(r.p_value == Approx(1.0 / 3.0).epsilon(1e-13));

    // n = m = 3, a = {1,2,4}, b = {3,5,6}: ECDF gaps after 1,2,3,4,5 are 1/3, 2/3, 1/3, 2/3, 1/3,
    // so D = 2/3. The orderings with every prefix gap |i - j| <= 1 are those built of pairs
    // (ab or ba)(ab or ba)(ab or ba): 8 of 20. The other 12 reach |i - j| = 2: p = 12/20.
    r = run_ks({1, 2, 4}, {3, 5, 6});
    CHECK(r.statistic == Approx(2.0 / 3.0).epsilon(1e-15));
    CHECK(r.p_value == Approx(0.6).epsilon(1e-13));

    // Order of the inputs does not matter.
    r = run_ks({4, 2, 1}, {6, 3, 5});
    CHECK(r.p_value == Approx(0.6).epsilon(1e-13));
}

TEST_CASE("ks: ties within and across samples", "[ks]") {
    // a = {1,2}, b = {2,3}: after x = 1 the gap is 1/2; after x = 2 (both 2s counted) it is
    // |1 - 1/2| = 1/2; after 3 it is 0. D = 1/2. Counting a's 2 before b's would wrongly give 1.
    KsResult r = run_ks({1, 2}, {2, 3});
    CHECK(r.statistic == Approx(0.5).epsilon(1e-15));
    CHECK(r.p_value == Approx(1.0).epsilon(1e-13));  // n = m = 2: the first draw alone gives 1/2

    // a = {1,1,1,2}, b = {1,2,2,2}: after x = 1, 3/4 vs 1/4; after 2, 1 vs 1. D = 1/2.
    // Its p-value for n = m = 4 (reflection formula, by hand): 2 (C(8,2) - C(8,0)) / C(8,4) = 54/70.
    r = run_ks({1, 1, 2, 1}, {2, 1, 2, 2});
    CHECK(r.statistic == Approx(0.5).epsilon(1e-15));
    CHECK(r.p_value == Approx(54.0 / 70.0).epsilon(1e-13));

    // All values equal: the ECDFs jump together, D = 0.
    r = run_ks({0, 0, 0}, {0, 0});
    CHECK(r.statistic == 0.0);
    CHECK(r.p_value == 1.0);

    // Random data on a coarse grid (many ties): D against the naive count, and the continuous
    // p-value is conservative, never below the permutation p-value of the tied data.
    SplitMix64 rng(77);
    for (int trial = 0; trial < 200; ++trial) {
        const int n = 1 + static_cast<int>(rng.next() % 6);
        const int m = 1 + static_cast<int>(rng.next() % 6);
        std::vector<double> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(m));
        for (double& v : a) v = static_cast<double>(rng.next() % 4);
        for (double& v : b) v = static_cast<double>(rng.next() % 4);
        r = run_ks(a, b);
        CHECK(r.statistic == Approx(naive_statistic(a, b)).margin(1e-15));
        CHECK(r.p_value >= permutation_p_value(a, b) - 1e-12);
    }
}

TEST_CASE("ks: exact p-value equals the enumeration of all orderings", "[ks]") {
    SplitMix64 rng(2024);
    int nontrivial = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int n = 1 + static_cast<int>(rng.next() % 6);
        const int m = 1 + static_cast<int>(rng.next() % 6);
        // A location shift on some trials so small p-values are covered too.
        const double shift = (trial % 3 == 0) ? 1.5 : 0.0;
        const std::vector<double> a = normal_sample(rng, n, shift);
        const std::vector<double> b = normal_sample(rng, m, 0.0);
        const KsResult r = run_ks(a, b);
        const double reference = permutation_p_value(a, b);
        INFO("n = " << n << ", m = " << m << ", D = " << r.statistic);
        CHECK(r.statistic == Approx(naive_statistic(a, b)).margin(1e-15));
        CHECK(r.p_value == Approx(reference).epsilon(1e-12));
        CHECK(r.exact);
        if (reference < 0.5) ++nontrivial;
    }
    CHECK(nontrivial > 30);
}

TEST_CASE("ks: equal sizes match the Gnedenko-Korolyuk closed form", "[ks]") {
    for (int n : {1, 3, 10, 37, 144}) {
        for (int k = 1; k <= n; ++k) {
            const double exact = ks_p_value_exact(n, n, static_cast<double>(k) / n);
            const double reference = equal_size_tail(n, k);
            INFO("n = " << n << ", k = " << k << ", reference " << reference);
            if (reference > 1e-250) CHECK(exact == Approx(reference).epsilon(1e-9));
        }
    }
    for (int k : {1, 20, 40, 50, 60, 75, 90, 120, 200, 400}) {
        INFO("n = 1000, k = " << k);
        CHECK(ks_p_value_exact(1000, 1000, k / 1000.0) == Approx(equal_size_tail(1000, k)).epsilon(1e-9));
    }
    // A d that is a lattice value k/n up to rounding (one ulp either side) must count as k/n, not
    // as the next one up; a d strictly between two lattice values counts as the upper one.
    for (int k = 1; k <= 60; ++k) {
        const double d = static_cast<double>(k) / 144;
        INFO("k = " << k);
        CHECK(ks_p_value_exact(144, 144, std::nextafter(d, 2.0)) == Approx(equal_size_tail(144, k)).epsilon(1e-9));
        CHECK(ks_p_value_exact(144, 144, std::nextafter(d, 0.0)) == Approx(equal_size_tail(144, k)).epsilon(1e-9));
        CHECK(ks_p_value_exact(144, 144, (k - 0.5) / 144) == Approx(equal_size_tail(144, k)).epsilon(1e-9));
    }
    // Coprime sizes, where every integer gap h = D n m is a distinct lattice value: a d within an
    // ulp of h/(n m) is h, a d strictly between (h-1)/(n m) and h/(n m) is h too.
    int distinct = 0;
    for (int h = 1; h <= 35; ++h) {
        const double reference = lattice_tail_by_enumeration(5, 7, h);
        if (reference != lattice_tail_by_enumeration(5, 7, h - 1)) ++distinct;
        const double d = h / 35.0;
        INFO("5 vs 7, h = " << h);
        for (double near : {d, std::nextafter(d, 2.0), std::nextafter(d, 0.0), (h - 0.7) / 35.0, (h - 0.3) / 35.0}) {
            CHECK(ks_p_value_exact(5, 7, near) == Approx(reference).epsilon(1e-13));
        }
    }
    CHECK(distinct > 10);
    CHECK(ks_p_value_exact(5, 7, 0.0) == 1.0);
    CHECK(ks_p_value_exact(5, 7, 1.5) == 0.0);
}

TEST_CASE("ks: kolmogorov_tail against its series and the classical critical values", "[ks]") {
    // The 5% and 1% critical values of the limit law: Q(1.358) = 0.05, Q(1.628) = 0.01.
    CHECK(kolmogorov_tail(1.358) == Approx(0.05).margin(1e-4));
    CHECK(kolmogorov_tail(1.628) == Approx(0.01).margin(1e-4));
    // At the rounded values: 2 exp(-2 * 1.36^2) = 0.04950, 2 exp(-2 * 1.63^2) = 0.00984.
    CHECK(kolmogorov_tail(1.36) == Approx(0.0495).margin(2e-5));
    CHECK(kolmogorov_tail(1.63) == Approx(0.00984).margin(1e-5));
    // Tabulated K(1) = 0.7300003, so Q(1) = 0.2699997.
    CHECK(kolmogorov_tail(1.0) == Approx(0.2699997).margin(1e-6));

    for (double lambda = 0.3; lambda <= 4.0; lambda += 0.01) {
        INFO("lambda = " << lambda);
        CHECK(kolmogorov_tail(lambda) == Approx(tail_by_series(lambda)).epsilon(1e-12));
    }
    // Limits: 1 at and below 0, decreasing, and the first term alone far out.
    CHECK(kolmogorov_tail(0.0) == 1.0);
    CHECK(kolmogorov_tail(-2.0) == 1.0);
    CHECK(kolmogorov_tail(1e-3) == 1.0);
    CHECK(kolmogorov_tail(0.2) == Approx(1.0).margin(1e-9));
    CHECK(kolmogorov_tail(6.0) == Approx(2.0 * std::exp(-72.0)).epsilon(1e-12));
    double previous = 1.0;
    for (double lambda = 0.01; lambda <= 8.0; lambda += 0.01) {
        const double q = kolmogorov_tail(lambda);
        CHECK(q <= previous);
        previous = q;
    }
    CHECK(previous < 1e-50);
}

TEST_CASE("ks: exact and asymptotic p-values agree for large samples", "[ks]") {
    // Reference: the exact closed form for n = m. For equal sizes D lives on the coarse lattice
    // k/n and P(D >= k/n) = P(D > (k-1)/n) carries the whole atom at k/n, so a continuous law
    // evaluated at d = k/n sits one step low (Stephens' formula is up to 17% low at n = 144).
    // What must hold: the exact value lies between the asymptotic one at k/n and at (k-1)/n, and
    // mid-step the two agree to a few percent, closer as n grows.
    const struct {
        int n;
        double tolerance;
    } cases[] = {{144, 0.07}, {1000, 0.03}};
    for (const auto& c : cases) {
        int compared = 0;
        for (int k = 2; k <= c.n; ++k) {
            const double exact = equal_size_tail(c.n, k);
            if (exact < 1e-3 || exact > 0.5) continue;
            INFO("n = " << c.n << ", k = " << k << ", exact " << exact);
            CHECK(ks_p_value_asymptotic(c.n, c.n, static_cast<double>(k) / c.n) <= exact);
            CHECK(ks_p_value_asymptotic(c.n, c.n, static_cast<double>(k - 1) / c.n) >= exact);
            CHECK(ks_p_value_asymptotic(c.n, c.n, (k - 0.5) / c.n) == Approx(exact).epsilon(c.tolerance));
            if (k % 7 == 0) {
                CHECK(ks_p_value_exact(c.n, c.n, (k - 0.5) / c.n) ==
                      Approx(ks_p_value_asymptotic(c.n, c.n, (k - 0.5) / c.n)).epsilon(c.tolerance));
            }
            ++compared;
        }
        CHECK(compared > 10);
    }
    // Coprime sizes: D moves in steps of 1/(n m), no atoms to speak of, and Stephens' formula
    // holds at the lattice value itself (2% here).
    for (double lambda : {0.9, 1.1, 1.36, 1.63, 1.8}) {
        const double ne = 997.0 * 1009.0 / (997.0 + 1009.0);
        const double d = lambda / std::sqrt(ne);
        INFO("997 vs 1009, lambda = " << lambda);
        CHECK(ks_p_value_exact(997, 1009, d) == Approx(ks_p_value_asymptotic(997, 1009, d)).epsilon(0.03));
    }
}

TEST_CASE("ks: identical samples and swapped samples", "[ks]") {
    SplitMix64 rng(5);
    const std::vector<double> a = normal_sample(rng, 144, 0.0);
    KsResult r = run_ks(a, a);
    CHECK(r.statistic == 0.0);
    CHECK(r.p_value == 1.0);
    CHECK(r.exact);

    for (int trial = 0; trial < 20; ++trial) {
        const std::vector<double> x = normal_sample(rng, 30 + trial, 0.3);
        const std::vector<double> y = normal_sample(rng, 144, 0.0);
        const KsResult xy = run_ks(x, y);
        const KsResult yx = run_ks(y, x);
        CHECK(xy.statistic == yx.statistic);
        CHECK(xy.p_value == Approx(yx.p_value).epsilon(1e-12));
    }
}

TEST_CASE("ks: falls back to the asymptotic law above kKsExactMaxCells", "[ks]") {
    SplitMix64 rng(9);
    // 4000 x 4000 = 1.6e7 cells: asymptotic.
    const std::vector<double> a = normal_sample(rng, 4000, 0.05);
    const std::vector<double> b = normal_sample(rng, 4000, 0.0);
    const KsResult r = run_ks(a, b);
    CHECK_FALSE(r.exact);
    CHECK(r.statistic == Approx(naive_statistic(a, b)).margin(1e-15));
    const double ne = 2000.0;
    const double lambda = (std::sqrt(ne) + 0.12 + 0.11 / std::sqrt(ne)) * r.statistic;
    CHECK(r.p_value == Approx(tail_by_series(lambda)).epsilon(1e-12));
    // And it is near the exact value (closed form for n = m): within 4% at this size, at worst.
    const int k = static_cast<int>(std::lround(r.statistic * 4000));
    CHECK(r.p_value == Approx(equal_size_tail(4000, k)).epsilon(0.05));

    // 3000 x 3000 = 9e6 cells: still exact.
    const KsResult small = run_ks(std::vector<double>(a.begin(), a.begin() + 3000), std::vector<double>(b.begin(), b.begin() + 3000));
    CHECK(small.exact);
    const int ks = static_cast<int>(std::lround(small.statistic * 3000));
    CHECK(small.p_value == Approx(equal_size_tail(3000, ks)).epsilon(1e-9));
}

TEST_CASE("ks: size under H0 and power against a 1 sd shift", "[ks]") {
    // n = m = 144, level 0.05: D only takes values k/144, so the test rejects when D >= k*/144,
    // k* the smallest k with P(D >= k/144) <= 0.05, and its true size is that probability
    // (closed form, independent of the code under test), at most 0.05.
    int k_star = 1;
    while (equal_size_tail(144, k_star) > 0.05) ++k_star;
    const double size = equal_size_tail(144, k_star);
    REQUIRE(size <= 0.05);
    REQUIRE(size > 0.03);

    SplitMix64 rng(31337);
    const int trials = 1000;
    int rejected = 0;
    int rejected_unequal = 0;
    for (int t = 0; t < trials; ++t) {
        if (run_ks(normal_sample(rng, 144, 0.0), normal_sample(rng, 144, 0.0)).p_value <= 0.05) ++rejected;
        if (run_ks(normal_sample(rng, 37, 0.0), normal_sample(rng, 144, 0.0)).p_value <= 0.05) ++rejected_unequal;
    }
    // Binomial(1000, 0.05): sd = 0.0069. Allow 3 sd above the level, and 3 sd below the size.
    const double sd = std::sqrt(0.05 * 0.95 / trials);
    const double rate = static_cast<double>(rejected) / trials;
    const double rate_unequal = static_cast<double>(rejected_unequal) / trials;
    INFO("rejection rate " << rate << " (true size " << size << "), unequal sizes " << rate_unequal);
    CHECK(rate <= 0.05 + 3 * sd);
    CHECK(rate >= size - 3 * sd);
    CHECK(rate_unequal <= 0.05 + 3 * sd);
    CHECK(rate_unequal >= 0.05 - 4 * sd);  // 37 x 144: a fine lattice, the size is close to 0.05

    // A 1 sd shift at n = m = 144: D is about 0.38 against a 1% critical value of about 0.19.
    int rejected_shifted = 0;
    for (int t = 0; t < 100; ++t) {
        if (run_ks(normal_sample(rng, 144, 1.0), normal_sample(rng, 144, 0.0)).p_value <= 0.01) ++rejected_shifted;
    }
    CHECK(rejected_shifted == 100);
}

TEST_CASE("ks: bad input is refused with a message", "[ks]") {
    KsResult r{0.0, 0.0, false};
    std::string error;
    const std::vector<double> fine = {1.0, 2.0, 3.0};
    const std::vector<double> empty;
    CHECK_FALSE(ks_two_sample(empty, fine, r, error));
    CHECK(error.find("sample a is empty") != std::string::npos);
    error.clear();
    CHECK_FALSE(ks_two_sample(fine, empty, r, error));
    CHECK(error.find("sample b is empty") != std::string::npos);
    error.clear();
    const std::vector<double> with_nan = {1.0, std::nan(""), 3.0};
    CHECK_FALSE(ks_two_sample(with_nan, fine, r, error));
    CHECK(error.find("NaN") != std::string::npos);
    CHECK(error.find("index 1") != std::string::npos);
    error.clear();
    const std::vector<double> with_inf = {1.0, 2.0, -HUGE_VAL};
    CHECK_FALSE(ks_two_sample(fine, with_inf, r, error));
    CHECK(error.find("sample b") != std::string::npos);
    CHECK(error.find("infinity") != std::string::npos);
    CHECK(std::isnan(ks_p_value_exact(0, 3, 0.5)));
    CHECK(std::isnan(kolmogorov_tail(std::nan(""))));
}
