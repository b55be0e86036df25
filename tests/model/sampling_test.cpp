#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "base/random.h"
#include "model/sampling.h"

using namespace attnlab;

// Logits 0, ln 2, ln 3: softmax gives 1/6, 2/6, 3/6 (worked by hand).
static const std::vector<float> kLogits = {0.0f, std::log(2.0f), std::log(3.0f)};

TEST_CASE("sampling: greedy takes the argmax, lowest id on ties", "[sampling]") {
    CHECK(sample_token(kLogits, {}, 0.99) == 2);
    const std::vector<float> tied = {1.0f, 5.0f, 5.0f};
    CHECK(sample_token(tied, {}, 0.5) == 1);
}

TEST_CASE("sampling: temperature, top-k and top-p distributions worked by hand", "[sampling]") {
    auto p = sampling_distribution(kLogits, {1.0f, 0, 1.0f});
    CHECK(p[0] == Approx(1.0 / 6));
    CHECK(p[1] == Approx(2.0 / 6));
    CHECK(p[2] == Approx(3.0 / 6));
    // T = 0.5 squares the odds: 1 : 4 : 9.
    p = sampling_distribution(kLogits, {0.5f, 0, 1.0f});
    CHECK(p[0] == Approx(1.0 / 14));
    CHECK(p[2] == Approx(9.0 / 14));
    // top-k = 2 drops id 0 and renormalises 2 : 3.
    p = sampling_distribution(kLogits, {1.0f, 2, 1.0f});
    CHECK(p[0] == 0.0);
    CHECK(p[1] == Approx(0.4));
    CHECK(p[2] == Approx(0.6));
    // top-p = 0.5: id 2 alone carries 0.5, so it is the whole nucleus.
    p = sampling_distribution(kLogits, {1.0f, 0, 0.5f});
    CHECK(p == std::vector<double>{0.0, 0.0, 1.0});
    // top-p = 0.6 needs id 1 as well.
    p = sampling_distribution(kLogits, {1.0f, 0, 0.6f});
    CHECK(p[0] == 0.0);
    CHECK(p[1] == Approx(0.4));
    // top-p = 0 still keeps the most likely token.
    p = sampling_distribution(kLogits, {1.0f, 0, 0.0f});
    CHECK(p[2] == 1.0);
}

TEST_CASE("sampling: draws follow the distribution and a seed repeats them", "[sampling]") {
    const int n = 60000;
    std::vector<int> counts(3, 0), first_run;
    SplitMix64 rng(9);
    for (int i = 0; i < n; ++i) {
        const int t = sample_token(kLogits, {1.0f, 0, 1.0f}, rng.uniform());
        ++counts[static_cast<size_t>(t)];
        if (i < 50) first_run.push_back(t);
    }
    for (int k = 0; k < 3; ++k) CHECK(counts[static_cast<size_t>(k)] / double(n) == Approx((k + 1) / 6.0).margin(0.01));
    SplitMix64 again(9);
    std::vector<int> second_run;
    for (int i = 0; i < 50; ++i) second_run.push_back(sample_token(kLogits, {1.0f, 0, 1.0f}, again.uniform()));
    CHECK(first_run == second_run);
}
