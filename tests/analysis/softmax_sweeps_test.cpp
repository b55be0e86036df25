#include <catch2/catch.hpp>

#include <cmath>

#include "analysis/softmax.h"
#include "analysis/softmax_sweeps.h"
#include "analysis/synthetic_logits.h"

using namespace attnlab;

TEST_CASE("synthetic logits: presets as specified and streams prefix-consistent", "[sweeps]") {
    const LogitSpec one{LogitPreset::OneStrong, 5, 2.5};
    const auto l = synthetic_logits(one, 4);
    CHECK(l == std::vector<double>{2.5, 0.0, 0.0, 0.0});
    const auto tied = synthetic_logits({LogitPreset::TwoTied, 5, 1.5}, 3);
    CHECK(tied == std::vector<double>{1.5, 1.5, 0.0});

    for (LogitPreset p : {LogitPreset::RandomUniform, LogitPreset::RandomGaussian}) {
        const LogitSpec spec{p, 77, 3.0};
        const auto short_ = synthetic_logits(spec, 10);
        const auto long_ = synthetic_logits(spec, 1000);
        CHECK(std::equal(short_.begin(), short_.end(), long_.begin()));
        CHECK(synthetic_logits({p, 78, 3.0}, 10) != short_);
    }
    for (double x : synthetic_logits({LogitPreset::RandomUniform, 3, 2.0}, 5000)) {
        REQUIRE(x >= -2.0);
        REQUIRE(x <= 2.0);
    }
}

TEST_CASE("fade curve: one strong token follows its closed form", "[sweeps]") {
    // Logits (s, 0, ..., 0): the largest weight is e^{s/T} / (e^{s/T} + L - 1).
    const double s = 2.0, T = 0.7;
    const std::vector<int> Ls = {2, 3, 10, 100, 4096};
    const FadeCurve f = fade_curve({LogitPreset::OneStrong, 1, s}, T, Ls);
    REQUIRE(f.L.size() == Ls.size());
    for (size_t i = 0; i < Ls.size(); ++i) {
        const double e = std::exp(s / T);
        CHECK(f.max_weight[i] == Approx(e / (e + Ls[i] - 1)).epsilon(1e-13));
        CHECK(f.uniform[i] == Approx(1.0 / Ls[i]));
        CHECK(f.band_lower[i] == Approx(std::exp(-2 * s / T) / Ls[i]));
        CHECK(f.band_upper[i] == Approx(std::exp(2 * s / T) / Ls[i]));
        CHECK(f.max_weight[i] <= f.band_upper[i]);
        CHECK(f.max_weight[i] >= f.band_lower[i]);
    }
}

TEST_CASE("fade curve: bounded random logits squeeze the largest weight towards 1/L", "[sweeps]") {
    // Corollary 1: L * max weight stays within e^{+-2a/T} as L grows 1000-fold.
    const LogitSpec spec{LogitPreset::RandomUniform, 11, 1.0};
    const FadeCurve f = fade_curve(spec, 1.0, {4, 4096});
    CHECK(f.max_weight[1] < f.max_weight[0] / 50.0);
    CHECK(f.max_weight[1] * 4096 <= std::exp(2.0));
}

TEST_CASE("sensitivity curve: bounds as printed and exact norm below the tight bound", "[sweeps]") {
    const auto T = log_grid(0.01, 100.0, 41);
    const SensitivityCurve c = sensitivity_curve(synthetic_logits({LogitPreset::TwoTied, 1, 3.0}, 64), T);
    REQUIRE(c.T.size() == 41);
    for (size_t i = 0; i < T.size(); ++i) {
        CHECK(c.bound_tight[i] == Approx(0.5 / T[i]));
        CHECK(c.bound_paper[i] == Approx(std::min(0.25 / T[i], std::sqrt(2.0))));
        CHECK(c.jacobian_norm[i] <= c.bound_tight[i] * (1 + 1e-12));
    }
    // At low T the two tied leaders take all the weight: ||J|| -> 1/(2T), far above the paper.
    CHECK(c.jacobian_norm.front() == Approx(c.bound_tight.front()).epsilon(1e-9));
    CHECK(c.jacobian_norm.front() > 30 * c.bound_paper.front());
}

TEST_CASE("log grids hit their ends and grow geometrically", "[sweeps]") {
    const auto g = log_grid(0.01, 100.0, 5);
    REQUIRE(g.size() == 5);
    CHECK(g[0] == 0.01);
    CHECK(g[1] == Approx(0.1));
    CHECK(g[2] == Approx(1.0));
    CHECK(g[4] == 100.0);
    const auto gi = log_grid_int(2, 4096, 72);
    CHECK(gi.front() == 2);
    CHECK(gi.back() == 4096);
    for (size_t i = 1; i < gi.size(); ++i) REQUIRE(gi[i] > gi[i - 1]);
}
