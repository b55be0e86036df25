// PCA for the separability panel: hand-worked point sets, the sign rule, and a brute-force
// check that the first axis maximises the variance over directions.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <cmath>

#include "analysis/pca.h"
#include "base/random.h"
#include "random_inputs.h"

using namespace attnlab;

namespace {

// Population variance of the rows of X along the unit vector u.
double variance_along(const RowMatrixXd& X, const Eigen::RowVectorXd& u) {
    const Eigen::RowVectorXd mean = X.colwise().mean();
    double sum = 0.0;
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
        const double p = (X.row(i) - mean).dot(u);
        sum += p * p;
    }
    return sum / static_cast<double>(X.rows());
}

}  // namespace

TEST_CASE("pca: a cross of four points has its axes on the coordinate axes", "[pca]") {
    // (±2, 0), (0, ±1) around (1, 1): mean (1, 1); variance along x = (4 + 4)/4 = 2,
    // along y = (1 + 1)/4 = 0.5; total 2.5.
    RowMatrixXd X(4, 2);
    X << 3, 1, -1, 1, 1, 2, 1, 0;
    const Pca2 p = pca2(X);
    CHECK(p.mean[0] == Approx(1.0));
    CHECK(p.mean[1] == Approx(1.0));
    CHECK(p.variance[0] == Approx(2.0));
    CHECK(p.variance[1] == Approx(0.5));
    CHECK(p.total_variance == Approx(2.5));
    // The sign rule makes the largest entry positive: (1, 0) and (0, 1), not their negatives.
    CHECK(p.axis[0][0] == Approx(1.0));
    CHECK(p.axis[0][1] == Approx(0.0).margin(1e-12));
    CHECK(p.axis[1][1] == Approx(1.0));
    const auto a = project(p, X.row(0));
    CHECK(a[0] == Approx(2.0));
    CHECK(a[1] == Approx(0.0).margin(1e-12));
    const auto b = project(p, X.row(3));
    CHECK(b[0] == Approx(0.0).margin(1e-12));
    CHECK(b[1] == Approx(-1.0));
}

TEST_CASE("pca: points on a diagonal line in 3-d", "[pca]") {
    // x_k = k (1, 1, 0) for k = -2..2 - (shifted by (5, 5, 5)): one axis (1, 1, 0)/sqrt 2 with variance
    // 2 * mean(k^2) = 2 * 2 = 4, nothing along any other direction.
    RowMatrixXd X(5, 3);
    for (int k = -2; k <= 2; ++k) X.row(k + 2) << k + 5.0, k + 5.0, 5.0;
    const Pca2 p = pca2(X);
    CHECK(p.variance[0] == Approx(4.0));
    CHECK(p.variance[1] == Approx(0.0).margin(1e-12));
    CHECK(p.axis[0][0] == Approx(std::sqrt(0.5)));
    CHECK(p.axis[0][1] == Approx(std::sqrt(0.5)));
    CHECK(p.axis[0][2] == Approx(0.0).margin(1e-12));
    // The projection of x_2 = (7, 7, 5) on the first axis is its distance 2 sqrt 2 from the mean.
    CHECK(project(p, X.row(4))[0] == Approx(2.0 * std::sqrt(2.0)));
}

TEST_CASE("pca: the sign rule, the largest entry of each axis is positive", "[pca]") {
    // The eigen-solver's signs are arbitrary; over a few random sets some come out negative
    // unless the rule is applied.
    SplitMix64 rng(7);
    for (int trial = 0; trial < 20; ++trial) {
        const RowMatrixXd X = test::gaussian_rows(rng, 30, 4);
        const Pca2 a = pca2(X);
        for (int k = 0; k < 2; ++k) {
            const Eigen::RowVectorXd& v = a.axis[static_cast<size_t>(k)];
            Eigen::Index best = 0;
            v.cwiseAbs().maxCoeff(&best);
            CHECK(v[best] > 0.0);
        }
        // Flipping the points leaves the covariance, so also the axes, as they were.
        const Pca2 b = pca2(-X);
        for (int k = 0; k < 2; ++k)
            for (int c = 0; c < 4; ++c) CHECK(a.axis[static_cast<size_t>(k)][c] == Approx(b.axis[static_cast<size_t>(k)][c]).margin(1e-9));
    }
}

TEST_CASE("pca: one dimension and one point", "[pca]") {
    RowMatrixXd X(3, 1);
    X << 1, 2, 6;
    const Pca2 p = pca2(X);
    CHECK(p.axis[0][0] == 1.0);
    CHECK(p.axis[1].size() == 1);
    CHECK(p.axis[1][0] == 0.0);
    CHECK(p.variance[0] == Approx(14.0 / 3.0));  // mean 3; (4 + 1 + 9)/3
    RowMatrixXd one(1, 3);
    one << 1, 2, 3;
    const Pca2 q = pca2(one);
    CHECK(q.variance[0] == 0.0);
    CHECK(project(q, one.row(0))[0] == 0.0);
}

TEST_CASE("pca: against brute force on random points", "[pca]") {
    SplitMix64 rng(11);
    for (int trial = 0; trial < 5; ++trial) {
        const int n = test::uniform_int(rng, 5, 40), d = test::uniform_int(rng, 2, 6);
        RowMatrixXd X = test::gaussian_rows(rng, n, d);
        for (int c = 0; c < d; ++c) X.col(c) *= (c + 1.0);  // unequal spreads
        const Pca2 p = pca2(X);
        // Orthonormal axes, variances equal to the variance along them, in decreasing order.
        CHECK(p.axis[0].norm() == Approx(1.0));
        CHECK(p.axis[1].norm() == Approx(1.0));
        CHECK(p.axis[0].dot(p.axis[1]) == Approx(0.0).margin(1e-10));
        CHECK(variance_along(X, p.axis[0]) == Approx(p.variance[0]));
        CHECK(variance_along(X, p.axis[1]) == Approx(p.variance[1]));
        CHECK(p.variance[0] >= p.variance[1]);
        // No random direction has more variance than the first axis; the best of many comes close.
        double best = 0.0;
        for (int k = 0; k < 20000; ++k) {
            Eigen::RowVectorXd u(d);
            for (int c = 0; c < d; ++c) u[c] = rng.normal();
            u.normalize();
            const double v = variance_along(X, u);
            CHECK(v <= p.variance[0] * (1 + 1e-12));
            best = std::max(best, v);
        }
        CHECK(best >= 0.9 * p.variance[0]);
        // The same largest eigenvalue by power iteration on the covariance.
        const RowMatrixXd centered = X.rowwise() - X.colwise().mean();
        const Eigen::MatrixXd C = centered.transpose() * centered / static_cast<double>(n);
        Eigen::VectorXd v = Eigen::VectorXd::Ones(d);
        for (int it = 0; it < 2000; ++it) v = (C * v).normalized();
        CHECK(v.dot(C * v) == Approx(p.variance[0]).epsilon(1e-6));
    }
}
