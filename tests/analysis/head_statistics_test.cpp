// Box plots, the critical N from per-head means, and g(T, eps) for any normalizer.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "analysis/head_statistics.h"
#include "analysis/softmax.h"

using namespace attnlab;

TEST_CASE("box_stats: hand-worked quartiles, whiskers and an outlier", "[head_statistics]") {
    // 1..5: positions q (n - 1) = 1, 2, 3 -> q1 = 2, median 3, q3 = 4; whiskers at the ends.
    const std::vector<double> a = {5, 3, 1, 4, 2};
    const BoxStats b = box_stats(a);
    CHECK(b.n == 5);
    CHECK(b.q1 == 2.0);
    CHECK(b.median == 3.0);
    CHECK(b.q3 == 4.0);
    CHECK(b.lo_whisker == 1.0);
    CHECK(b.hi_whisker == 5.0);
    CHECK(b.mean == 3.0);
    CHECK(b.outliers.empty());
    // {1, 2, 3, 4, 100}: IQR 2, upper fence 4 + 3 = 7: 100 is an outlier, the whisker stops at 4.
    const std::vector<double> c = {1, 2, 3, 4, 100, std::nan("")};
    const BoxStats d = box_stats(c);
    CHECK(d.n == 5);
    CHECK(d.hi_whisker == 4.0);
    REQUIRE(d.outliers.size() == 1);
    CHECK(d.outliers[0] == 100.0);
    CHECK(d.mean == 22.0);
    // Interpolation: {0, 10}: q1 = 2.5, median 5, q3 = 7.5.
    const std::vector<double> e = {10, 0};
    CHECK(box_stats(e).q1 == 2.5);
    CHECK(box_stats(e).median == 5.0);
    CHECK(box_stats(e).q3 == 7.5);
    CHECK(std::isnan(box_stats(std::vector<double>{}).median));
}

TEST_CASE("critical_n: the first N whose KS test does not reject, matching direct tests", "[head_statistics]") {
    // 20 heads. At N = 1, 2 every d sits far above every E[d] (D = 1, rejected); from N = 3 on
    // the two samples interleave (D = 1/20, p = 1).
    const int Ns[] = {1, 2, 3, 4};
    std::vector<std::vector<double>> d(4), e(4);
    for (int k = 0; k < 4; ++k)
        for (int h = 0; h < 20; ++h) {
            e[k].push_back(h);
            d[k].push_back(k < 2 ? 100.0 + h : h + 0.5);
        }
    CriticalN c;
    std::string error;
    REQUIRE(critical_n(Ns, d, e, 0.01, c, error));
    CHECK(c.N_star == 3);
    REQUIRE(c.scan.size() == 4);  // the scan goes on past N*
    KsResult direct;
    REQUIRE(ks_two_sample(d[0], e[0], direct, error));
    CHECK(c.scan[0].ks.p_value == direct.p_value);
    CHECK(c.scan[0].ks.statistic == 1.0);
    CHECK(c.scan[0].ks.p_value < 0.01);
    REQUIRE(ks_two_sample(d[2], e[2], direct, error));
    CHECK(c.at_star.p_value == direct.p_value);
    CHECK(c.at_star.statistic == Approx(0.05));
}

TEST_CASE("critical_n: heads without a value are left out, and never finding N* is not an error", "[head_statistics]") {
    const int Ns[] = {1, 8};
    const double nan = std::nan("");
    std::vector<std::vector<double>> d = {{10, 11, 12, nan}, {10, 11, nan, nan}};
    std::vector<std::vector<double>> e = {{0, 1, 2, 3}, {0, 1, 2, nan}};
    CriticalN c;
    std::string error;
    REQUIRE(critical_n(Ns, d, e, 0.5, c, error));
    CHECK(c.N_star == 0);
    REQUIRE(c.scan.size() == 2);
    CHECK(c.scan[0].heads == 3);
    CHECK(c.scan[1].heads == 2);
    const int bad[] = {2, 1};
    CHECK_FALSE(critical_n(bad, d, e, 0.01, c, error));
    CHECK(error.find("increase") != std::string::npos);
}

TEST_CASE("normalizer_sensitivity: softmax agrees with finite_difference_sensitivity; sparsemax by hand", "[head_statistics]") {
    const std::vector<double> l = {0.3, -1.2, 2.0, 0.7}, v = {0.5, -0.5, 0.5, 0.5};
    Normalizer soft;
    for (double T : {0.1, 1.0, 5.0})
        for (double eps : {1e-3, 0.1, 10.0}) {
            const std::vector<double> base = softmax(l, T);
            CHECK(normalizer_sensitivity(soft, l, base, v, T, eps) ==
                  Approx(finite_difference_sensitivity(l, base, v, T, eps)).epsilon(1e-12));
        }
    // sparsemax of (0, 0) is (1/2, 1/2); of (0.1, 0): z - tau with 0.1 - 2 tau = 1, tau = -0.45,
    // so (0.55, 0.45). The change (0.05, -0.05) has norm 0.05 sqrt 2; over eps = 0.1: sqrt(2)/2.
    Normalizer sparse;
    sparse.kind = NormalizerKind::Sparsemax;
    const std::vector<double> z = {0, 0}, dir = {1, 0}, base = {0.5, 0.5};
    CHECK(normalizer_sensitivity(sparse, z, base, dir, 1.0, 0.1) == Approx(std::sqrt(0.5)).epsilon(1e-12));
}
