#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "analysis/softmax.h"
#include "base/random.h"

using namespace attnlab;

// Independent reference: the largest eigenvalue of the dense L x L Jacobian from Eigen's
// symmetric eigensolver, built straight from J = (1/T)(diag(p) - p p^T).
static double dense_jacobian_norm(const std::vector<double>& p, double T) {
    const Eigen::Index n = static_cast<Eigen::Index>(p.size());
    const Eigen::Map<const Eigen::VectorXd> v(p.data(), n);
    const Eigen::MatrixXd J = (Eigen::MatrixXd(v.asDiagonal()) - v * v.transpose()) / T;
    return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(J, Eigen::EigenvaluesOnly).eigenvalues().cwiseAbs().maxCoeff();
}

TEST_CASE("softmax: hand-worked values", "[softmax]") {
    // exp(0) : exp(ln 3) = 1 : 3.
    const std::vector<double> l = {0.0, std::log(3.0)};
    const auto w = softmax(l, 1.0);
    CHECK(w[0] == Approx(0.25).epsilon(1e-15));
    CHECK(w[1] == Approx(0.75).epsilon(1e-15));
    // Doubling logits and temperature changes nothing.
    const std::vector<double> l2 = {0.0, 2.0 * std::log(3.0)};
    const auto w2 = softmax(l2, 2.0);
    CHECK(w2[1] == Approx(0.75).epsilon(1e-15));
    // Equal logits give 1/L at any temperature.
    const std::vector<double> flat(7, 3.5);
    for (double x : softmax(flat, 0.01)) CHECK(x == Approx(1.0 / 7).epsilon(1e-15));
}

TEST_CASE("softmax: no overflow at huge logits or tiny temperatures", "[softmax]") {
    const std::vector<double> l = {1000.0, 0.0, -1000.0};
    const auto w = softmax(l, 0.01);
    CHECK(w[0] == 1.0);
    CHECK(w[1] == 0.0);
    CHECK(w[2] == 0.0);
    const auto w1 = softmax(l, 1000.0);  // exp(1), exp(0), exp(-1) normalised
    const double z = std::exp(1.0) + 1.0 + std::exp(-1.0);
    CHECK(w1[0] == Approx(std::exp(1.0) / z).epsilon(1e-14));
    CHECK(w1[2] == Approx(std::exp(-1.0) / z).epsilon(1e-14));
}

TEST_CASE("Jacobian norm: hand-worked two-token case", "[softmax][jacobian]") {
    // For L = 2, J = (p(1-p)/T) [[1, -1], [-1, 1]], whose eigenvalues are 0 and 2p(1-p)/T.
    for (double p : {0.5, 0.25, 0.9, 1e-6}) {
        for (double T : {0.01, 1.0, 37.0}) {
            const std::vector<double> w = {p, 1.0 - p};
            CHECK(softmax_jacobian_norm(w, T) == Approx(2.0 * p * (1.0 - p) / T).epsilon(1e-12));
        }
    }
}

TEST_CASE("Jacobian norm: one-hot and uniform limits", "[softmax][jacobian]") {
    CHECK(softmax_jacobian_norm(std::vector<double>{1.0, 0.0, 0.0}, 0.5) == 0.0);
    // Uniform p = 1/L: diag(p) - p p^T has eigenvalue 1/L (on vectors orthogonal to 1).
    for (int L : {2, 3, 10, 1000}) {
        const std::vector<double> w(L, 1.0 / L);
        CHECK(softmax_jacobian_norm(w, 2.0) == Approx(1.0 / L / 2.0).epsilon(1e-12));
    }
}

TEST_CASE("Jacobian norm equals the dense eigensolver on random cases, ties included", "[softmax][jacobian]") {
    SplitMix64 rng(2025);
    int checked = 0;
    for (int trial = 0; trial < 1500; ++trial) {
        const int L = 2 + static_cast<int>(rng.uniform() * 80);
        const double spread = std::pow(10.0, -1.0 + 3.0 * rng.uniform());
        const double T = std::pow(10.0, -2.0 + 4.0 * rng.uniform());
        std::vector<double> l(L);
        for (double& x : l) x = spread * rng.normal();
        if (trial % 5 == 0) l[1] = l[0];  // exact ties at random places
        if (trial % 7 == 0) std::fill(l.begin(), l.begin() + L / 2, l[0]);
        const std::vector<double> w = softmax(l, T);
        const double ours = softmax_jacobian_norm(w, T);
        const double ref = dense_jacobian_norm(w, T);
        // The dense solver is accurate to about eps * ||J||; compare on that scale.
        CHECK(ours == Approx(ref).margin(1e-12 / T + 1e-9 * ref));
        ++checked;
    }
    CHECK(checked == 1500);
}

TEST_CASE("Jacobian norm keeps relative accuracy when it is tiny", "[softmax][jacobian]") {
    // p = (1 - e, e/2, e/2): J's eigenvalues are roots of a quadratic we can solve by hand.
    // The block on span{e1, (e2+e3)/sqrt2} is [[p1 - p1^2, -p1 q sqrt2], [-p1 q sqrt2, q - 2 q^2]]
    // with q = e/2; the other eigenvalue is q, on (e2-e3)/sqrt2. 1 - p1 is taken as e, not as
    // the rounded 1 - (1 - e): the weights are a point of the simplex.
    for (double e : {1e-3, 1e-8, 1e-14}) {
        const std::vector<double> w = {1.0 - e, e / 2, e / 2};
        const double q = e / 2, p1 = 1.0 - e;
        const double a = p1 * e, d = q - 2 * q * q, b = p1 * q * std::numbers::sqrt2;
        const double top = 0.5 * (a + d) + std::sqrt(0.25 * (a - d) * (a - d) + b * b);
        CHECK(softmax_jacobian_norm(w, 1.0) == Approx(std::max(top, q)).epsilon(1e-6));
    }
}

TEST_CASE("||J||_2 <= 1/(2T) always, and two tied leaders reach it", "[softmax][jacobian][bounds]") {
    SplitMix64 rng(7);
    for (int trial = 0; trial < 3000; ++trial) {
        const int L = 2 + static_cast<int>(rng.uniform() * 300);
        const double T = std::pow(10.0, -2.0 + 4.0 * rng.uniform());
        std::vector<double> l(L);
        for (double& x : l) x = 5.0 * rng.normal();
        if (trial % 3 == 0) l[0] = l[L - 1] = 20.0;
        const std::vector<double> w = softmax(l, T);
        REQUIRE(softmax_jacobian_norm(w, T) <= jacobian_bound_tight(T) * (1.0 + 1e-12));
    }
    const std::vector<double> tied = {0.5, 0.5};
    for (double T : {0.01, 1.0, 100.0}) CHECK(softmax_jacobian_norm(tied, T) == Approx(jacobian_bound_tight(T)).epsilon(1e-15));
}

TEST_CASE("The paper's min{1/(4T), sqrt 2} is exceeded by a concrete case", "[softmax][jacobian][bounds][paper]") {
    // Logits (0, 0) at T = 1: weights (1/2, 1/2), ||J||_2 = 1/2, while the paper's bound gives 1/4.
    const std::vector<double> l = {0.0, 0.0};
    const double T = 1.0;
    const double norm = softmax_jacobian_norm(softmax(l, T), T);
    CHECK(jacobian_bound_paper(T) == 0.25);
    CHECK(norm == Approx(0.5).epsilon(1e-15));
    CHECK(norm > jacobian_bound_paper(T));
    // Also at small T, where the sqrt 2 cap is the paper's active term: T = 0.1 gives
    // min{2.5, 1.414} = 1.414 against an exact 5.
    CHECK(jacobian_bound_paper(0.1) == Approx(std::numbers::sqrt2));
    CHECK(softmax_jacobian_norm(softmax(l, 0.1), 0.1) == Approx(5.0).epsilon(1e-14));
}

TEST_CASE("Lemma 1 band holds for every weight", "[softmax][bounds]") {
    SplitMix64 rng(99);
    for (int trial = 0; trial < 2000; ++trial) {
        const int L = 1 + static_cast<int>(rng.uniform() * 500);
        const double T = std::pow(10.0, -1.0 + 3.0 * rng.uniform());
        std::vector<double> l(L);
        for (double& x : l) x = 3.0 * (2.0 * rng.uniform() - 1.0);
        const auto band = lemma1_band(L, max_abs(l), T);
        for (double w : softmax(l, T)) {
            REQUIRE(w >= band.lower * (1.0 - 1e-12));
            REQUIRE(w <= band.upper * (1.0 + 1e-12));
        }
    }
    // Equal logits sit on 1/L, inside the band.
    const auto band = lemma1_band(4, 0.0, 1.0);
    CHECK(band.lower == 0.25);
    CHECK(band.upper == 0.25);
}

TEST_CASE("softmax: tied logits get exactly equal weights wherever they stand", "[softmax]") {
    // Eigen computes the elements after the last full packet with the scalar exp, which can
    // differ in the last bit: a tie between the first and the last element broke, and with it
    // the top-N order (found by the numpy reference test on an SSE build).
    SplitMix64 rng(5);
    for (int L = 2; L <= 40; ++L) {
        std::vector<double> l(static_cast<size_t>(L));
        for (double& x : l) x = rng.normal();
        l.back() = l.front() = 0.123456789;
        for (double T : {0.3, 1.0}) {
            const std::vector<double> w = softmax(l, T);
            INFO("L = " << L << ", T = " << T);
            CHECK(w.front() == w.back());
        }
    }
}
