#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "analysis/bootstrap.h"

using namespace attnlab;

TEST_CASE("bootstrap: quantiles interpolate between order statistics as numpy.quantile does", "[bootstrap]") {
    // numpy.quantile([1, 2, 3, 4, 5], [0, 0.025, 0.5, 0.975, 1]) = [1, 1.1, 3, 4.9, 5]: h = 4 p.
    const std::vector<double> v = {1, 2, 3, 4, 5};
    CHECK(quantile_of_sorted(v, 0.0) == 1.0);
    CHECK(quantile_of_sorted(v, 0.025) == Approx(1.1).epsilon(1e-15));
    CHECK(quantile_of_sorted(v, 0.5) == 3.0);
    CHECK(quantile_of_sorted(v, 0.975) == Approx(4.9).epsilon(1e-15));
    CHECK(quantile_of_sorted(v, 1.0) == 5.0);
    CHECK(quantile_of_sorted(std::vector<double>{7.5}, 0.3) == 7.5);
    CHECK(std::isnan(quantile_of_sorted(std::vector<double>{}, 0.5)));
}

TEST_CASE("bootstrap: a given resampling matrix gives the interval worked by hand", "[bootstrap]") {
    // Windows x = (1, 2, 10) over n = (1, 1, 2). Rows and their sum x / sum n, by hand:
    // (0,0,0) 3/3 = 1; (0,1,2) 13/4 = 3.25; (2,2,2) 30/6 = 5; (1,1,2) 14/4 = 3.5; (1,2,2) 22/5 = 4.4.
    const std::vector<double> x = {1, 2, 10}, n = {1, 1, 2};
    const std::vector<int> rows = {0, 0, 0, 0, 1, 2, 2, 2, 2, 1, 1, 2, 1, 2, 2};
    // Sorted 1, 3.25, 3.5, 4.4, 5; at 50% the 25% and 75% quantiles are order statistics 1 and 3.
    const Interval half = ratio_bootstrap(x, n, rows, 0.5);
    CHECK(half.lower == 3.25);
    CHECK(half.upper == 4.4);
    // At 95%: h = 0.1 and 3.9, so 1 + 0.1 x 2.25 and 4.4 + 0.9 x 0.6.
    const Interval ci = ratio_bootstrap(x, n, rows);
    CHECK(ci.lower == Approx(1.225).epsilon(1e-14));
    CHECK(ci.upper == Approx(4.94).epsilon(1e-14));
}

TEST_CASE("bootstrap: a constant sample, and a single window, give an interval of width zero", "[bootstrap]") {
    const std::vector<double> x(12, 0.375), n(12, 1.0);
    const Interval c = ratio_bootstrap(x, n, bootstrap_resamples(12, 500, 7));
    CHECK(c.lower == 0.375);
    CHECK(c.upper == 0.375);
    const std::vector<double> one_x = {5.0}, one_n = {4.0};
    const Interval one = ratio_bootstrap(one_x, one_n, bootstrap_resamples(1, 100, 3));
    CHECK(one.lower == 1.25);
    CHECK(one.upper == 1.25);
}

TEST_CASE("bootstrap: rows with no weight are left out, and none at all gives NaN ends", "[bootstrap]") {
    const std::vector<double> x = {3, 8}, n = {0, 2};
    // Rows (0,0): 3/0, left out; (1,1): 16/4 = 4; (0,1): 11/2 = 5.5. Sorted 4, 5.5; at 50%: h = 0.25, 0.75.
    const Interval ci = ratio_bootstrap(x, n, std::vector<int>{0, 0, 1, 1, 0, 1}, 0.5);
    CHECK(ci.lower == Approx(4.375).epsilon(1e-15));
    CHECK(ci.upper == Approx(5.125).epsilon(1e-15));
    const Interval none = ratio_bootstrap(x, n, std::vector<int>{0, 0}, 0.5);
    CHECK(std::isnan(none.lower));
    CHECK(std::isnan(none.upper));
}

TEST_CASE("bootstrap: the resampling matrix is seeded, in range and uniform", "[bootstrap]") {
    const std::vector<int> a = bootstrap_resamples(10, 2000, 42), b = bootstrap_resamples(10, 2000, 42),
                           c = bootstrap_resamples(10, 2000, 43);
    REQUIRE(a.size() == 20000);
    CHECK(a == b);
    CHECK(a != c);
    std::vector<int> count(10, 0);
    for (int i : a) {
        REQUIRE(i >= 0);
        REQUIRE(i < 10);
        ++count[static_cast<size_t>(i)];
    }
    // 2,000 draws expected per index; the binomial's sd is sqrt(20000 x 0.1 x 0.9) = 42, so 5 sd is 212.
    for (int k : count) CHECK(std::abs(k - 2000) < 212);
}

TEST_CASE("bootstrap: the interval of a mean of many windows matches the normal approximation", "[bootstrap]") {
    // An independent reference: for the mean of m independent windows the bootstrap distribution is
    // close to normal with the plug-in standard error s / sqrt(m), so the 95% interval is close to
    // mean -+ 1.959964 s / sqrt(m). Values: a fixed, skew-free sequence (a sawtooth).
    const int m = 400;
    std::vector<double> x(m), n(m, 1.0);
    double mean = 0;
    for (int i = 0; i < m; ++i) mean += x[static_cast<size_t>(i)] = (i * 37 % 101) / 100.0;
    mean /= m;
    double var = 0;
    for (double v : x) var += (v - mean) * (v - mean);
    const double se = std::sqrt(var / m) / std::sqrt(static_cast<double>(m));
    const Interval ci = ratio_bootstrap(x, n, bootstrap_resamples(m, 4000, 11));
    CHECK(ci.lower == Approx(mean - 1.959964 * se).margin(0.1 * se));
    CHECK(ci.upper == Approx(mean + 1.959964 * se).margin(0.1 * se));
}
