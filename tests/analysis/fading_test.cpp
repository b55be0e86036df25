#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "analysis/fading.h"

using namespace attnlab;

TEST_CASE("fading: one query's largest weight, entropy and previous-token weight, worked by hand", "[fading]") {
    // Entropy by hand: 0.5 ln 2 + 0.25 ln 4 + 2 x 0.125 ln 8 = (0.5 + 0.5 + 0.75) ln 2.
    const std::vector<float> w = {0.5f, 0.25f, 0.125f, 0.125f}, scores = {1.0f, -0.5f, 0.25f, 0.0f};
    FadingSums s;
    add_fading_query(w, scores, 1.0, s);
    CHECK(s.queries == 1);
    CHECK(s.max_weight == 0.5);
    CHECK(s.entropy == Approx(1.75 * std::log(2.0)).epsilon(1e-12));
    CHECK(s.previous_weight == 0.125);  // key L-2, the token before the query
    // Lemma 1 with a = max |l| = 1, T = 1: e^-2 / 4 and e^2 / 4 = 1.847, capped at 1.
    CHECK(s.lemma1_queries == 1);
    CHECK(s.lemma1_lower == Approx(std::exp(-2.0) / 4).epsilon(1e-12));
    CHECK(s.lemma1_upper == 1.0);
    // At T = 4 the upper end is e^0.5 / 4 = 0.412, under 1, and kept.
    FadingSums hot;
    add_fading_query(w, scores, 4.0, hot);
    CHECK(hot.lemma1_upper == Approx(std::exp(0.5) / 4).epsilon(1e-12));
}

TEST_CASE("fading: a softmax head with all-equal logits gives exactly 1/L, ln L, and a band of width zero", "[fading]") {
    for (int L : {8, 16, 24, 1024}) {
        const std::vector<float> w(static_cast<size_t>(L), 1.0f / static_cast<float>(L)), scores(static_cast<size_t>(L), 0.0f);
        FadingSums s;
        add_fading_query(w, scores, 1.0, s);
        add_fading_query(w, scores, 1.0, s);
        CHECK(s.queries == 2);
        CHECK(s.mean(s.max_weight) == static_cast<double>(1.0f / static_cast<float>(L)));
        CHECK(s.mean(s.previous_weight) == static_cast<double>(1.0f / static_cast<float>(L)));
        CHECK(s.mean(s.entropy) == Approx(std::log(static_cast<double>(L))).epsilon(1e-6));
        // a = 0: both ends of Lemma 1's band are 1/L.
        CHECK(s.lemma1_lower / 2 == Approx(1.0 / L).epsilon(1e-15));
        CHECK(s.lemma1_upper / 2 == Approx(1.0 / L).epsilon(1e-15));
    }
}

TEST_CASE("fading: no Lemma 1 band for a head that does not run softmax; exact zeros add no entropy", "[fading]") {
    const std::vector<float> w = {0.0f, 1.0f, 0.0f}, scores = {-3.0f, 2.0f, 0.5f};
    FadingSums s;
    add_fading_query(w, scores, std::nullopt, s);
    CHECK(s.queries == 1);
    CHECK(s.lemma1_queries == 0);
    CHECK(s.lemma1_upper == 0.0);
    CHECK(s.entropy == 0.0);
    CHECK(s.max_weight == 1.0);
    CHECK(s.previous_weight == 1.0);
}

TEST_CASE("fading: the rank of a key's weight counts the strictly larger ones", "[fading]") {
    const std::vector<float> w = {0.1f, 0.4f, 0.4f, 0.05f, 0.05f};
    CHECK(weight_rank(w, 1) == 1);
    CHECK(weight_rank(w, 2) == 1);  // a tie for first place
    CHECK(weight_rank(w, 0) == 3);
    CHECK(weight_rank(w, 4) == 4);
}

TEST_CASE("fading: a causal map query by query, each row's visible entries alone, worked by hand", "[fading]") {
    // L = 3, row-major; the entries above the diagonal are junk that must be ignored.
    const std::vector<float> w = {1.0f,  9.0f,   9.0f,  //
                                  0.25f, 0.75f,  9.0f,  //
                                  0.5f,  0.125f, 0.375f};
    const std::vector<float> scores(9, 0.0f);
    const std::vector<FadingSums> q = fading_by_query(w, scores, 3, std::nullopt);
    REQUIRE(q.size() == 3);
    CHECK(q[0].max_weight == 1.0);
    CHECK(q[1].max_weight == 0.75);
    CHECK(q[2].max_weight == 0.5);
    CHECK(q[1].previous_weight == 0.25);  // key 0, the token before query 1
    CHECK(q[2].previous_weight == 0.125);
    for (const FadingSums& s : q) {
        CHECK(s.queries == 1);
        CHECK(s.lemma1_queries == 0);  // no softmax temperature: no band
    }
    CHECK(q[0].entropy == 0.0);
    CHECK(q[1].entropy == Approx(-(0.25 * std::log(0.25) + 0.75 * std::log(0.75))).epsilon(1e-12));
}
