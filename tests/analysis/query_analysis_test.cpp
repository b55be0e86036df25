// Every per-query quantity of PAPER.md §2-§5 on random queries, Lemma 2's (check), and the
// bring-your-own-attention entry point (parse_query_input, analyze_query).
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/query_analysis.h"
#include "analysis/selection.h"
#include "analysis/separability.h"
#include "analysis/softmax.h"
#include "base/json.h"
#include "base/random.h"
#include "random_inputs.h"

using namespace attnlab;
using attnlab::test::gaussian_rows;
using attnlab::test::log_uniform;
using attnlab::test::uniform_int;

namespace {
using Vec = std::vector<double>;
}  // namespace

// ---- Properties on thousands of random queries ------------------------------------------

TEST_CASE("bounds hold on random queries: Theorem 1, Lemma 1, Lemma 2, Theorem 2 ranges", "[selection][separability][sensitivity]") {
    SplitMix64 rng(20250817);
    const int Ls[] = {2, 3, 4, 5, 7, 10, 16, 30, 64, 100};
    const int ds[] = {1, 2, 3, 4, 8, 16, 32, 64};
    const double eps_grid[] = {1e-3, 1e-1, 10.0};
    int cases = 0;
    for (int trial = 0; trial < 2500; ++trial) {
        // 20 cases at L = 300: without `gram` each call forms x x^T, L^2 d flops.
        const int L = trial % 125 == 0 ? 300 : Ls[trial % 10], d = ds[uniform_int(rng, 0, 7)];
        const int N = std::min(L - 1, static_cast<int>(log_uniform(rng, 1.0, L)));
        const double T = trial % 10 == 0 ? 1e-3 : trial % 10 == 1 ? 1e3 : log_uniform(rng, 1e-3, 1e3);
        Vec logits(static_cast<size_t>(L));
        const double spread = log_uniform(rng, 1e-2, 30.0);
        for (double& l : logits) l = spread * rng.normal();
        if (trial % 4 == 0)  // ties: logits on a coarse grid
            for (double& l : logits) l = std::round(l / spread);
        if (trial % 6 == 1) logits[1] = logits[0];
        RowMatrixXd x = gaussian_rows(rng, L, d);
        for (int i = 0; i < L; ++i) x.row(i) *= std::pow(10.0, -6.0 + 12.0 * rng.uniform());  // wild norms
        if (trial % 3 == 0)                                                                   // repeated vectors
            for (int i = 1; i < L; i += 2) x.row(i) = x.row(uniform_int(rng, 0, i - 1));
        if (trial % 17 == 0) x.rowwise() = x.row(0);  // all tokens the same vector
        const Vec w = softmax(logits, T);
        INFO("trial " << trial << " L " << L << " d " << d << " N " << N << " T " << T);

        // Lemma 1: every weight in (1/L) e^{+-2a/T}.
        const Lemma1Band band = lemma1_band(L, max_abs(logits), T);
        for (double a : w) {
            CHECK(a >= band.lower * (1.0 - 1e-12) - 1e-300);
            CHECK(a <= band.upper * (1.0 + 1e-12));
        }

        // Theorem 1: d <= bound for both readings.
        const int one[] = {N};
        const SelectionDistance r = selection_distances(w, x, one, DistanceOptions{}).front();
        // Slack: 1e-12 of the terms the bounds add up before they cancel. With near-uniform
        // weights X (abar (L - N) - (1 - abar)) is a small difference of large numbers, and in the
        // equality case (all vectors the same) d and its bound round differently.
        const double terms_A = r.bound_A + r.X * (r.abar * (L - N) + 1.0) + (1.0 - r.abar) * r.d_1;
        const double terms_B = r.bound_B + r.X * (1.0 + 2.0 * r.abar) + (1.0 - r.abar) * r.d_1;
        const bool holds_A = r.d_A <= r.bound_A + 1e-12 * terms_A, holds_B = r.d_B <= r.bound_B + 1e-12 * terms_B;
        std::ostringstream why;  // on failure: the numbers, and the weight left out summed directly
        if (!holds_A || !holds_B) {
            const std::vector<int> order = selection_order(w);
            double outside = 0.0;
            for (size_t k = static_cast<size_t>(N); k < order.size(); ++k) outside += w[static_cast<size_t>(order[k])];
            why << std::setprecision(17) << "d_A " << r.d_A << " bound_A " << r.bound_A << " d_B " << r.d_B << " bound_B " << r.bound_B
                << " d_1 " << r.d_1 << " X " << r.X << " 1 - abar " << 1.0 - r.abar << " sum of the weights left out " << outside;
        }
        {
            INFO(why.str());
            CHECK(holds_A);
            CHECK(holds_B);
        }

        // Lemma 2 (corrected): ||J||_2 <= 1/(2T); J is PSD, so ||J||_2 >= its largest diagonal entry.
        const double jn = softmax_jacobian_norm(w, T);
        CHECK(jn <= jacobian_bound_tight(T) * (1.0 + 1e-12));
        double diag = 0.0;
        for (double a : w) diag = std::max(diag, a * (1.0 - a) / T);
        {
            Vec sorted = w;
            std::sort(sorted.rbegin(), sorted.rend());
            INFO(std::setprecision(17) << "||J|| " << jn << " largest diagonal entry " << diag << " p(1) " << sorted[0] << " p(2) "
                                       << sorted[1]);
            CHECK(jn >= diag * (1.0 - 1e-12));
        }
        const Vec v = random_unit_vector(L, derive_seed(9, static_cast<std::uint64_t>(trial)));
        for (double eps : eps_grid) {
            const double g = finite_difference_sensitivity(logits, w, v, T, eps);
            // Rounding of the weight difference, divided by eps.
            CHECK(g <= sensitivity_bound_tight(T, eps) * (1.0 + 1e-12) + 4e-16 * std::sqrt(L) / eps);
            CHECK(g >= 0.0);
        }

        // Theorem 2's quantities stay in their ranges.
        RowMatrixXd unit;
        std::string error;
        REQUIRE(normalize_rows(x, 1.0, unit, error));
        const Separability s = separability(w, unit, one, 1.0).front();
        CHECK(s.N_s >= 0);
        CHECK(s.N_s <= N);
        CHECK(s.ratio == static_cast<double>(s.N_s) / N);
        CHECK(s.upper >= 0.0);
        CHECK(s.upper <= 1.0);
        CHECK(s.lower <= 1.0);
        CHECK(s.r >= 0.0);
        CHECK(s.xi.size() == static_cast<size_t>(N));
        ++cases;
    }
    CHECK(cases == 2500);
}

// ---- Lemma 2: the paper's 1/(4T) is not a bound (check) ---------------------------------

TEST_CASE("Lemma 2 (check): two tied leading logits exceed the paper's 1/(4T) and its sqrt 2 cap", "[sensitivity]") {
    for (const double T : {1.0, 0.1, 0.01}) {
        // logits (0, 0, -40 T): p ~ (1/2, 1/2, 0). J = (1/T)(diag p - p p^T) has the eigenvector
        // (1, -1, 0)/sqrt 2 with eigenvalue (1/T)(1/2) (p3 ~ e^-40 shifts it by ~1e-18).
        const Vec logits = {0.0, 0.0, -40.0 * T};
        const Vec w = softmax(logits, T);
        const double jn = softmax_jacobian_norm(w, T);
        CHECK(jn == Approx(0.5 / T).epsilon(1e-12));
        CHECK(jn > jacobian_bound_paper(T));
        CHECK(jn > 1.0 / (4.0 * T));
        CHECK(jn <= jacobian_bound_tight(T) * (1.0 + 1e-12));
        // g along that eigenvector: the leading pair moves to (e, -e)/sqrt 2, so
        // p1 = sigmoid(sqrt 2 e / T) and |delta p| = sqrt 2 (p1 - 1/2):
        //   g = sqrt 2 (sigmoid(sqrt 2 eps/T) - 1/2) / eps  ->  1/(2T) as eps -> 0.
        const Vec v = {1.0 / std::numbers::sqrt2, -1.0 / std::numbers::sqrt2, 0.0};
        const double eps = 1e-3;
        const double g = finite_difference_sensitivity(logits, w, v, T, eps);
        const double expected = std::numbers::sqrt2 * (1.0 / (1.0 + std::exp(-std::numbers::sqrt2 * eps / T)) - 0.5) / eps;
        CHECK(g == Approx(expected).epsilon(1e-8));
        CHECK(g > 1.0 / (4.0 * T));
        CHECK(g > jacobian_bound_paper(T));  // at T = 0.01: g ~ 49.9 against min{25, sqrt 2}
        CHECK(g <= sensitivity_bound_tight(T, eps));
    }
}

TEST_CASE("Jacobian norm: a second weight far below 1e-162 (p = (1, e^-460)) is still exact", "[sensitivity]") {
    // logits (0, -460 T) at T: p = (1, e^-460 ~ 1e-200) in double. For L = 2 the norm is 2 p1 p2 / T
    // (eigenvalues 0 and 2 p(1 - p)), and as for any PSD matrix it is at least the largest
    // diagonal entry p2 (1 - p2) / T. A bracketed root search must not leave [p2, p1] here,
    // e.g. through a geometric mean sqrt(lo * hi) whose product underflows to 0.
    for (const double T : {1.0, 1e-3}) {
        const Vec w = softmax(Vec{0.0, -460.0 * T}, T);
        REQUIRE(w[1] > 0.0);
        REQUIRE(w[1] < 1e-199);
        const double jn = softmax_jacobian_norm(w, T);
        INFO("T " << T << " p2 " << w[1] << " ||J|| " << jn);
        CHECK(jn == Approx(2.0 * w[1] / T).epsilon(1e-9));
        CHECK(jn >= w[1] * (1.0 - w[1]) / T);
    }
}

// ---- query_analysis: input validation and the report ------------------------------------

TEST_CASE("parse_query_input: bad input is rejected with a message naming the problem", "[query]") {
    const std::string vec3 = R"("vectors": [[1, 0], [0, 1], [1, 1]])";
    const auto rejects = [](const std::string& text, const std::vector<std::string>& needles) {
        QueryInput in;
        in.N = -7;  // untouched on failure
        std::string error;
        INFO("input: " << text);
        CHECK_FALSE(parse_query_input(text, in, error));
        INFO("error: " << error);
        CHECK(in.N == -7);
        for (const std::string& needle : needles) CHECK(error.find(needle) != std::string::npos);
    };
    rejects(R"({"logits": [1, 2, 3], "vectors": [[1, 0], [0, 1]], "N": 1, "T": 1})", {"vectors has 2 rows", "logits has 3"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 0, "T": 1})", {"N must be", "1 to L - 1 = 2", "got 0"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 3, "T": 1})", {"N must be", "got 3"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1.5, "T": 1})", {"N must be a whole number"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "T": 0})", {"T must be > 0"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "T": -2.5})", {"T must be > 0", "-2.5"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "T": "hot"})", {"T must be a number", "string"});
    rejects(R"({"logits": [1, "two", 3], )" + vec3 + R"(, "N": 1, "T": 1})", {"logits[1]", "must be a number"});
    rejects(R"({"logits": [1, 2, 3], "vectors": [[1, 0], [0, null], [1, 1]], "N": 1, "T": 1})", {"vectors[1][1]", "must be a number"});
    rejects(R"({"logits": [1, 2, 1e400], )" + vec3 + R"(, "N": 1, "T": 1})", {"1e400", "out of range"});
    rejects(R"({"logits": [1, 2, NaN], )" + vec3 + R"(, "N": 1, "T": 1})", {"not valid JSON"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "T": 1, "temperature": 2})", {"unknown key", "temperature"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "N": 2, "T": 1})", {"\"N\"", "twice"});
    rejects(R"({"logits": [1, 2, 3], "vectors": [[1, 0], [0, 1, 2], [1, 1]], "N": 1, "T": 1})",
            {"vectors[1] has 3 numbers", "vectors[0] has 2"});
    rejects(R"({"logits": [1, 2], "vectors": [[], []], "N": 1, "T": 1})", {"vectors[0] is empty"});
    rejects(R"({"logits": [], "vectors": [], "N": 1, "T": 1})", {"logits has 0 entries"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1})", {"missing \"T\""});
    rejects("{}", {"missing \"logits\""});
    rejects("", {"not valid JSON"});
    rejects("[1, 2]", {"must be a JSON object"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "T": 1, "eps": [0.1, 0]})", {"eps[1]"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "T": 1, "M": 0})", {"M"});
    rejects(R"({"logits": [1, 2, 3], )" + vec3 + R"(, "N": 1, "T": 1, "samples": 0})", {"samples"});
}

TEST_CASE("analyze_query: the report equals the direct function calls", "[query]") {
    const std::string text = R"({"logits": [1.0, 0.5, -0.25, 2.0, 0.5], "vectors": [[1, 0, 2], [0, 1, -1], [3, 1, 0],
        [-1, -2, 0.5], [0.5, 0.5, 0.5]], "N": 2, "T": 0.7, "seed": 42, "samples": 500, "M": 1.5, "eps": [0.01, 1]})";
    QueryInput in;
    std::string error;
    REQUIRE(parse_query_input(text, in, error));
    CHECK(in.logits == Vec{1.0, 0.5, -0.25, 2.0, 0.5});
    CHECK(in.vectors.rows() == 5);
    CHECK(in.vectors.cols() == 3);
    CHECK(in.vectors(3, 2) == 0.5);
    CHECK(in.N == 2);
    CHECK(in.T == 0.7);
    CHECK(in.seed == 42u);
    CHECK(in.samples == 500);
    CHECK(in.M == 1.5);
    CHECK(in.eps == Vec{0.01, 1.0});
    CHECK(in.normalizer.kind == NormalizerKind::Softmax);

    QueryReport rep;
    REQUIRE(analyze_query(in, rep, error));
    const Vec w = softmax(in.logits, in.T);
    REQUIRE(rep.weights.size() == w.size());
    for (size_t i = 0; i < w.size(); ++i) CHECK(rep.weights[i] == Approx(w[i]).epsilon(1e-15));
    // Top 2 by hand: logits 2.0 (index 3), then 1.0 (index 0).
    CHECK(rep.selected == std::vector<int>{3, 0});

    DistanceOptions options;
    options.samples = 500;
    options.seed = 42;
    const int one[] = {2};
    const SelectionDistance dist = selection_distances(w, in.vectors, one, options).front();
    CHECK(rep.distance.N == 2);
    CHECK(rep.distance.d_A == Approx(dist.d_A).epsilon(1e-14));
    CHECK(rep.distance.d_B == Approx(dist.d_B).epsilon(1e-14));
    CHECK(rep.distance.bound_A == Approx(dist.bound_A).epsilon(1e-14));
    CHECK(rep.distance.bound_B == Approx(dist.bound_B).epsilon(1e-14));
    CHECK(rep.distance.approx_A == Approx(dist.approx_A).epsilon(1e-14));
    CHECK(rep.distance.expected_A == Approx(dist.expected_A).epsilon(1e-14));
    CHECK(rep.distance.expected_B_se == Approx(dist.expected_B_se).epsilon(1e-12));
    CHECK(rep.sum_weighted_norms == Approx(sum_weighted_norms(w, in.vectors)).epsilon(1e-14));

    RowMatrixXd unit;
    REQUIRE(normalize_rows(in.vectors, 1.5, unit, error));
    const Separability sep = separability(w, unit, one, 1.5).front();
    CHECK(rep.separability.r == Approx(sep.r).epsilon(1e-14));
    CHECK(rep.separability.N_s == sep.N_s);
    CHECK(rep.separability.delta == Approx(sep.delta).epsilon(1e-14));
    CHECK(rep.separability.lower == Approx(sep.lower).epsilon(1e-14));
    CHECK(rep.separability.upper == Approx(sep.upper).epsilon(1e-14));

    CHECK(rep.jacobian_norm == Approx(softmax_jacobian_norm(w, 0.7)).epsilon(1e-14));
    CHECK(rep.bound_paper == jacobian_bound_paper(0.7));
    CHECK(rep.bound_tight == Approx(1.0 / 1.4).epsilon(1e-15));
    REQUIRE(rep.lemma1_a.has_value());
    CHECK(*rep.lemma1_a == 2.0);
    CHECK(*rep.lemma1_lower == Approx(0.2 * std::exp(-4.0 / 0.7)).epsilon(1e-14));
    CHECK(*rep.lemma1_upper == Approx(0.2 * std::exp(4.0 / 0.7)).epsilon(1e-14));
    REQUIRE(rep.sensitivity.size() == 2);
    // The report's direction (query_analysis.cpp): random_unit_vector(L, derive_seed(seed, 0x67)).
    const Vec v = random_unit_vector(5, derive_seed(42, 0x67));
    for (size_t k = 0; k < 2; ++k) {
        CHECK(rep.sensitivity[k].eps == in.eps[k]);
        CHECK(rep.sensitivity[k].g == Approx(finite_difference_sensitivity(in.logits, w, v, 0.7, in.eps[k])).epsilon(1e-13));
        CHECK(rep.sensitivity[k].bound == sensitivity_bound_tight(0.7, in.eps[k]));
        CHECK(rep.sensitivity[k].g <= rep.sensitivity[k].bound);
    }

    // The JSON report carries the same numbers.
    const json::ParseResult parsed = json::parse(query_report_json(rep));
    REQUIRE(parsed.value);
    const json::Value& o = *parsed.value;
    REQUIRE(o.find("d_A"));
    CHECK(o.find("d_A")->as_number() == Approx(dist.d_A).epsilon(1e-12));
    CHECK(o.find("N_s")->as_number() == sep.N_s);
    CHECK(o.find("expected_A")->find("mean")->as_number() == Approx(dist.expected_A).epsilon(1e-12));
    CHECK(o.find("delta")->is_number());
    CHECK(o.find("selected")->items().size() == 2);

    // Defaults when the optional keys are left out.
    QueryInput defaults;
    REQUIRE(parse_query_input(R"({"logits": [0, 1], "vectors": [[1], [2]], "N": 1, "T": 1})", defaults, error));
    CHECK(defaults.samples == 1000);
    CHECK(defaults.M == 1.0);
    CHECK(defaults.seed == 0u);
    CHECK(defaults.eps == Vec{1e-3, 1e-1, 10.0});
}

TEST_CASE("analyze_query: a zero vector fails with a message naming its index", "[query]") {
    QueryInput in;
    std::string error;
    REQUIRE(parse_query_input(R"({"logits": [0, 1, 2, 3], "vectors": [[1, 2], [3, 4], [0, 0], [5, 6]], "N": 2, "T": 1})", in, error));
    QueryReport rep;
    CHECK_FALSE(analyze_query(in, rep, error));
    INFO("error: " << error);
    CHECK(error.find("vector 2") != std::string::npos);
    CHECK(error.find("zero") != std::string::npos);
}
