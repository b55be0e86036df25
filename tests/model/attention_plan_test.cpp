// The attention plan's text (parse_attention_spec, check_attention_spec, attention_spec) and the
// fp32 normalizers the forward pass runs (normalize_row), the latter against the double-precision
// definitions of src/analysis/normalizers.h on rows made to break them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analysis/normalizers.h"
#include "base/random.h"
#include "model/attention_plan.h"
#include "model/head_plans.h"
#include "model/normalize_rows.h"

using namespace attnlab;
using attnlab::test::head;

namespace {

AttentionPlan parsed(std::string_view spec, int L, int H) {
    AttentionPlan plan(L, H);
    std::string error;
    INFO(spec << ": " << error);
    REQUIRE(parse_attention_spec(spec, L, H, plan, error));
    return plan;
}

// A random head plan: every kind, parameters and temperatures of every size the grammar allows.
HeadPlan random_head(SplitMix64& rng) {
    const auto pick = [&](std::initializer_list<double> v) { return v.begin()[rng.next() % v.size()]; };
    const NormalizerKind kinds[] = {NormalizerKind::Softmax, NormalizerKind::Sparsemax, NormalizerKind::Entmax, NormalizerKind::Ssmax,
                                    NormalizerKind::SaSoftmax};
    const NormalizerKind kind = kinds[rng.next() % 5];
    double param = 0.0;
    if (kind == NormalizerKind::Entmax) param = pick({1.5, 1.0000001, 1.3, 2.0, 7.25, 1000.0, 1.0 + rng.uniform()});
    if (kind == NormalizerKind::Ssmax) param = pick({0.43, -1000.0, 0.0, 1e-300, 1000.0, 2.0 * rng.uniform() - 1.0});
    const float T = static_cast<float>(pick({1.0, 1.0, 1e-4, 1e4, 0.5, 3.0, std::exp(10.0 * rng.uniform() - 5.0)}));
    return head(kind, T, param);
}

}  // namespace

// --- the plan's text -----------------------------------------------------------------------

TEST_CASE("attention_spec: parsing a plan's text gives the plan back, and the text is short", "[plan]") {
    CHECK(attention_spec(AttentionPlan(12, 12)).empty());
    CHECK(attention_spec(parsed("all=sparsemax", 3, 4)) == "all=sparsemax");
    // Relative to a base of another shape (none to compare with), or for an empty plan: no reading
    // outside either plan (ASan would tell), and the plan written whole.
    CHECK(attention_spec(parsed("all=sparsemax", 3, 4), AttentionPlan(2, 2)) == "all=sparsemax");
    CHECK(attention_spec(AttentionPlan(), AttentionPlan(3, 4)).empty());
    CHECK(attention_spec(parsed("all=ssmax:0.43,0.*=softmax@0.5", 2, 3)) == "0.*=softmax@0.5,1.*=ssmax:0.43");
    CHECK(attention_spec(parsed("1.2=entmax:1.3@2,0.0=entmax-1.5", 2, 3)) == "0.0=entmax-1.5,1.2=entmax:1.3@2");
    CHECK(attention_spec(parsed("all=sa-softmax@0.1", 1, 1)) == "all=sa-softmax@0.1");
    SplitMix64 rng(26);
    for (int trial = 0; trial < 300; ++trial) {
        const int L = 1 + static_cast<int>(rng.next() % 4), H = 1 + static_cast<int>(rng.next() % 5);
        AttentionPlan plan(L, H);
        // Whole plans, whole layers and single heads, so that every form of item comes out.
        const HeadPlan everywhere = random_head(rng);
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) plan.set(l, h, trial % 3 == 0 ? everywhere : HeadPlan{});
        for (int k = static_cast<int>(rng.next() % 6); k > 0; --k) {
            const int l = static_cast<int>(rng.next() % L);
            const HeadPlan hp = random_head(rng);
            if (rng.next() % 2) {
                for (int h = 0; h < H; ++h) plan.set(l, h, hp);
            } else {
                plan.set(l, static_cast<int>(rng.next() % H), hp);
            }
        }
        const std::string text = attention_spec(plan);
        INFO(text);
        CHECK(parsed(text, L, H) == plan);
        std::string error;
        CHECK(check_attention_spec(text, error));
        CHECK(text.empty() == plan.is_default());
    }
}

TEST_CASE("parse_attention_spec: later items override earlier ones and the plan it starts from", "[plan]") {
    const AttentionPlan p = parsed("all=ssmax:0.43,0.*=softmax@0.5,0.1=sparsemax,1.2=entmax-1.5@2,1.2=sa-softmax", 2, 3);
    CHECK(p.at(0, 0) == head(NormalizerKind::Softmax, 0.5f));
    CHECK(p.at(0, 1) == head(NormalizerKind::Sparsemax));
    CHECK(p.at(0, 2) == head(NormalizerKind::Softmax, 0.5f));
    CHECK(p.at(1, 0) == head(NormalizerKind::Ssmax, 1.0f, 0.43));
    CHECK(p.at(1, 1) == head(NormalizerKind::Ssmax, 1.0f, 0.43));
    CHECK(p.at(1, 2) == head(NormalizerKind::SaSoftmax));
    CHECK(p.changed_heads() == 6);
    CHECK(parsed("0.1=sparsemax,1.*=entmax:3,all=softmax", 2, 3).is_default());
    CHECK(parsed(" all = sparsemax @ 2 , 1.0=softmax ", 2, 3).at(0, 0) == head(NormalizerKind::Sparsemax, 2.0f));

    // The items apply over the plan given, not over the default plan.
    AttentionPlan start = parsed("all=entmax:1.25", 2, 3);
    std::string error;
    REQUIRE(parse_attention_spec("1.0=sparsemax", 2, 3, start, error));
    CHECK(start.at(1, 0) == head(NormalizerKind::Sparsemax));
    CHECK(start.at(1, 1) == head(NormalizerKind::Entmax, 1.0f, 1.25));
    CHECK(start.changed_heads() == 6);
    // A plan of another shape is replaced by the default one first.
    AttentionPlan other = parsed("all=sparsemax", 4, 4);
    REQUIRE(parse_attention_spec("0.0=sa-softmax", 2, 3, other, error));
    CHECK(other.n_layer() == 2);
    CHECK(other.changed_heads() == 1);
    REQUIRE(parse_attention_spec("", 2, 3, other, error));
    CHECK(other.changed_heads() == 1);  // nothing to apply
}

TEST_CASE("parse_attention_spec: each error names the item and what is wrong, and leaves the plan as it was", "[plan]") {
    struct Bad {
        const char* spec;
        const char* message;
    };
    const Bad bad[] = {
        {"all=sparsemax,,1.0=softmax", "item 2 is empty"},
        {"all=sparsemax,", "item 2 is empty"},
        {"all", "item 1 'all': no '='"},
        {"0.0=softmax,sparsemax", "item 2 'sparsemax': no '='"},
        {"2.0=softmax", "item 1 '2.0=softmax': '2.0' names no heads of this model (HEADS is all, L.* or L.H, with layer L from 0 to 1)"},
        {"x.0=softmax", "item 1 'x.0=softmax': 'x.0' names no heads"},
        {"1=softmax", "item 1 '1=softmax': '1' names no heads"},
        {"-1.0=softmax", "'-1.0' names no heads"},
        {"Al=softmax", "'Al' names no heads"},
        {"0.3=softmax", "item 1 '0.3=softmax': head '3' is not * or a head from 0 to 2"},
        {"0.=softmax", "head '' is not * or a head from 0 to 2"},
        {"0.1.2=softmax", "head '1.2' is not *"},
        {"1.*=softmix",
         "item 1 '1.*=softmix': unknown normalizer 'softmix' (valid: softmax, sparsemax, entmax-1.5, entmax:ALPHA, ssmax:S, sa-softmax"},
        {"all=", "unknown normalizer ''"},
        {"all=@2", "unknown normalizer ''"},
        {"all=entmax:0.99", "item 1 'all=entmax:0.99': entmax's alpha must be a number from 1 to 1000, not '0.99'"},
        {"all=entmax:1000.5", "entmax's alpha must be a number from 1 to 1000, not '1000.5'"},
        {"all=entmax:nan", "not 'nan'"},
        {"all=entmax:", "entmax's alpha must be a number"},
        {"all=ssmax:1001", "item 1 'all=ssmax:1001': ssmax's scale s must be a number from -1000 to 1000, not '1001'"},
        {"all=ssmax:inf", "ssmax's scale s must be a number"},
        {"all=ssmax:0x10", "not '0x10'"},
        {"all=sparsemax:2", "item 1 'all=sparsemax:2': only entmax:ALPHA and ssmax:S take a parameter, not 'sparsemax:2'"},
        {"all=softmax@0", "item 1 'all=softmax@0': the temperature after '@' must be a number from 0.0001 to 10000, not '0'"},
        {"all=softmax@-1", "not '-1'"},
        {"all=softmax@9.9e-5", "not '9.9e-5'"},
        {"all=softmax@10000.01", "not '10000.01'"},
        {"all=softmax@1e400", "not '1e400'"},
        {"all=softmax@", "not ''"},
        {"all=softmax@1@2", "unknown normalizer 'softmax@1'"},
        {"all=softmax@two", "not 'two'"},
    };
    for (const Bad& b : bad) {
        INFO(b.spec);
        AttentionPlan plan = parsed("0.1=sa-softmax", 2, 3);
        const AttentionPlan before = plan;
        std::string error;
        CHECK_FALSE(parse_attention_spec(b.spec, 2, 3, plan, error));
        INFO(error);
        CHECK(error.find(b.message) != std::string::npos);
        CHECK(plan == before);
        // Without a model, layer and head numbers are only checked to be whole; the rest is
        // refused alike, naming the same item.
        std::string check_error;
        const bool out_of_model = std::string_view(b.spec) == "2.0=softmax" || std::string_view(b.spec) == "0.3=softmax";
        CHECK(check_attention_spec(b.spec, check_error) == out_of_model);
        if (!out_of_model) CHECK(check_error.rfind(error.substr(0, error.find(": ")), 0) == 0);
    }
}

TEST_CASE("Plan limits: T from 1e-4 to 1e4, entmax's alpha from 1 to 1000, ssmax's s within +-1000", "[plan]") {
    CHECK(parsed("all=softmax@0.0001", 1, 1).at(0, 0).temperature == 1e-4f);
    CHECK(parsed("all=softmax@10000", 1, 1).at(0, 0).temperature == 1e4f);
    CHECK(parsed("all=entmax:1000", 1, 1).at(0, 0).normalizer.alpha == 1000.0);
    CHECK(parsed("all=entmax:1.0000001", 1, 1).at(0, 0).normalizer.alpha == 1.0000001);
    CHECK(parsed("all=ssmax:-1000", 1, 1).at(0, 0).normalizer.scale == -1000.0);
    CHECK(parsed("all=ssmax:0", 1, 1).at(0, 0).normalizer.scale == 0.0);
    CHECK(parsed("all=entmax15", 1, 1).at(0, 0) == head(NormalizerKind::Entmax, 1.0f, 1.5));

    // entmax at alpha 1 is softmax, and at alpha 2 sparsemax (normalizers.h): the same head.
    const AttentionPlan one = parsed("all=entmax:1", 2, 2);
    CHECK(one.at(1, 1) == HeadPlan{});
    CHECK(one.is_default());
    CHECK(attention_spec(one).empty());
    CHECK(parsed("all=entmax:1@2", 1, 1).at(0, 0) == head(NormalizerKind::Softmax, 2.0f));
    CHECK(parsed("all=entmax:2", 1, 1).at(0, 0) == head(NormalizerKind::Sparsemax));
    CHECK_FALSE(parsed("all=entmax:2.0000001", 1, 1).at(0, 0) == head(NormalizerKind::Sparsemax));
    // A parameter the kind does not use does not make two heads differ.
    HeadPlan a = head(NormalizerKind::Sparsemax), b = a;
    b.normalizer.alpha = 7.0;
    b.normalizer.scale = -3.0;
    CHECK(a == b);
}

TEST_CASE("check_attention_spec: the grammar alone, with whole layer and head numbers of any size", "[plan]") {
    std::string error;
    CHECK(check_attention_spec("", error));
    CHECK(check_attention_spec("  ", error));
    CHECK(check_attention_spec("100.200=ssmax:0.43@2,35.*=entmax:1.3", error));
    CHECK(check_attention_spec("65535.65535=softmax", error));
    CHECK_FALSE(check_attention_spec("65536.0=softmax", error));
    CHECK(error.find("'65536.0' names no heads") != std::string::npos);
    CHECK_FALSE(check_attention_spec("1234567890.0=softmax", error));
    CHECK_FALSE(check_attention_spec(std::string(70000, ' ') + "all=softmax", error));
    CHECK(error == "the plan's text is longer than 65536 bytes");
}

// --- the fp32 normalizers against the double definitions ------------------------------------

namespace {

// Rows made to break a normalizer: ties (with the top, at sparsemax's threshold, everywhere), huge
// and tiny magnitudes, a wide range, one key, long rows.
std::vector<std::vector<float>> adversarial_rows() {
    std::vector<std::vector<float>> rows = {
        {0.0f},
        {-3e38f},
        {3e38f},
        {5.0f, 5.0f},
        {1.0f, 1.0f, 1.0f, 1.0f},
        {-2.0f, -2.0f, -2.0f},
        {0.0f, 0.0f, 0.0f},
        {2.0f, 2.0f, 1.0f, -1.0f},
        {1.0f, 0.0f, 0.0f},
        {1.0f, 0.5f, 0.0f},  // z at sparsemax's threshold
        {1e30f, -1e30f, 1e30f},
        {1e6f, -1e6f, 0.0f, 999999.0f},
        {3e38f, -3e38f},
        {1e-30f, -1e-30f, 0.0f},
        {-5.0f, -6.0f, -7.0f, -100.0f},
        {100.0f, 99.999f, 99.998f, 0.0f},
    };
    SplitMix64 rng(1);
    for (int n : {2, 7, 64, 65, 300}) {
        std::vector<float> r(static_cast<size_t>(n));
        for (float& x : r) x = static_cast<float>(4.0 * rng.normal());
        rows.push_back(r);
        for (float& x : r) x = std::round(x);  // many ties
        rows.push_back(r);
        for (float& x : r) x *= 1e4f;
        rows.push_back(r);
    }
    return rows;
}

std::vector<HeadPlan> every_head() {
    std::vector<HeadPlan> heads;
    for (float T : {1.0f, 1e-4f, 0.37f, 5.0f, 1e4f}) {
        heads.push_back(head(NormalizerKind::Softmax, T));
        heads.push_back(head(NormalizerKind::Sparsemax, T));
        for (double alpha : {1.0, 1.0001, 1.25, 1.5, 2.0, 3.0}) heads.push_back(head(NormalizerKind::Entmax, T, alpha));
        for (double s : {0.43, 1.0, -0.7, 0.0}) heads.push_back(head(NormalizerKind::Ssmax, T, s));
        heads.push_back(head(NormalizerKind::SaSoftmax, T));
    }
    return heads;
}

}  // namespace

TEST_CASE("normalize_row agrees with the double definitions of normalizers.h to fp32 rounding", "[plan][normalizers]") {
    double worst = 0.0;
    for (const HeadPlan& h : every_head()) {
        for (const std::vector<float>& row : adversarial_rows()) {
            const int n = static_cast<int>(row.size());
            const std::vector<double> x(row.begin(), row.end());
            std::string why;
            if (!check_normalizer_input(h.normalizer, x, h.temperature, why)) FAIL(why);
            const std::vector<double> ref = normalize(h.normalizer, x, h.temperature);
            std::vector<float> w(row.size(), -1.0f);
            normalize_row(h, row.data(), n, w.data());
            INFO(normalizer_spec(h.normalizer) << " @" << h.temperature << ", row of " << n << " from " << row[0]);
            double err = 0.0, sum = 0.0;
            for (int i = 0; i < n; ++i) {
                err = std::max(err, std::abs(w[static_cast<size_t>(i)] - ref[static_cast<size_t>(i)]));
                sum += w[static_cast<size_t>(i)];
                CHECK(w[static_cast<size_t>(i)] >= 0.0f);
            }
            CHECK(err <= 4 * FLT_EPSILON);
            CHECK(std::abs(sum - 1.0) <= n * FLT_EPSILON);
            worst = std::max(worst, err);

            // In place (the capture normalizes its score rows where they lie): the same bits.
            std::vector<float> in_place = row;
            normalize_row(h, in_place.data(), n, in_place.data());
            CHECK(in_place == w);
        }
    }
    INFO("largest error " << worst);
    CHECK(worst > 0.0);  // the comparison compared something
}

TEST_CASE("normalize_row: exact zeros off the support of sparsemax and entmax", "[plan][normalizers]") {
    const std::vector<float> row = {3.0f, 2.9f, 0.0f, -1e9f, 2.0f};
    std::vector<float> w(row.size());
    normalize_row(head(NormalizerKind::Sparsemax), row.data(), 5, w.data());
    // z - tau with the support {3, 2.9}: tau = (5.9 - 1)/2 = 2.45, weights 0.55 and 0.45.
    CHECK(w[0] == Approx(0.55).epsilon(1e-6));
    CHECK(w[1] == Approx(0.45).epsilon(1e-6));
    CHECK(w[2] == 0.0f);
    CHECK(w[3] == 0.0f);
    CHECK(w[4] == 0.0f);
    normalize_row(head(NormalizerKind::Entmax, 1.0f, 1.5), row.data(), 5, w.data());
    CHECK(w[3] == 0.0f);
    normalize_row(head(NormalizerKind::Entmax, 1.0f, 3.0), row.data(), 5, w.data());
    CHECK(w[3] == 0.0f);
    // SSMax over one key is that key, whatever its score; SA-softmax's minimum below 0 gets 0.
    normalize_row(head(NormalizerKind::Ssmax, 1.0f, 0.43), row.data(), 1, w.data());
    CHECK(w[0] == 1.0f);
    normalize_row(head(NormalizerKind::SaSoftmax), row.data(), 5, w.data());
    CHECK(w[3] == 0.0f);
}

TEST_CASE("normalize_row: entmax at a large alpha gives weights on the simplex, and a row of ties uniform ones", "[plan][normalizers]") {
    // At alpha = 1000, p_max^(alpha-1) underflows for any p_max below 0.47: a row of ties came out
    // 0/0. (How closely the weights follow the exact entmax at such alphas: entmax_reference_test.cpp.)
    for (double alpha : {10.0, 100.0, 1000.0})
        for (float T : {1e-4f, 1.0f, 1e4f})
            for (const std::vector<float>& row : adversarial_rows()) {
                const int n = static_cast<int>(row.size());
                std::vector<float> w(row.size());
                normalize_row(head(NormalizerKind::Entmax, T, alpha), row.data(), n, w.data());
                double sum = 0.0;
                for (float x : w) {
                    CHECK(x >= 0.0f);  // false for NaN
                    sum += x;
                }
                INFO("alpha " << alpha << " T " << T << " row of " << n);
                CHECK(std::abs(sum - 1.0) <= n * FLT_EPSILON);
            }
    for (int n : {2, 3, 7, 100}) {
        const std::vector<float> ties(static_cast<size_t>(n), -2.5f);
        std::vector<float> w(ties.size());
        normalize_row(head(NormalizerKind::Entmax, 1.0f, 1000.0), ties.data(), n, w.data());
        for (float x : w) CHECK(x == Approx(1.0 / n).epsilon(1e-6));
        const std::vector<double> ref = entmax_bisect(std::vector<double>(ties.begin(), ties.end()), 1.0, 1000.0);
        for (double x : ref) CHECK(x == Approx(1.0 / n).epsilon(1e-12));
    }
}

TEST_CASE("exp_scaled is exp to 3 float epsilons over float's range, whatever the row's length", "[plan][normalizers]") {
    // Natively Eigen's exp; in WebAssembly the project's own (normalize_rows.cpp), whose polynomial
    // and range reduction this pins down: every length 1..37 takes the lanes and the padded tail.
    SplitMix64 rng(7);
    double worst = 0.0;
    for (int n = 1; n <= 37; ++n) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = static_cast<float>(-87.0 + 175.0 * rng.uniform());
        x[0] = n % 2 ? 88.3f : -87.3f;  // the ends of the range
        const float* e = exp_scaled(x.data(), n, 1.0, 0.0);
        for (int i = 0; i < n; ++i) {
            const double ref = std::exp(static_cast<double>(x[static_cast<size_t>(i)]));
            INFO("exp(" << x[static_cast<size_t>(i)] << ") = " << e[i] << ", row of " << n);
            const double rel = std::abs(e[i] - ref) / ref;
            CHECK(rel <= 3 * FLT_EPSILON);  // Eigen's exp: 2.4 natively
            worst = std::max(worst, rel);
        }
    }
    INFO("largest relative error " << worst);
    CHECK(worst > 0.0);
    // Below the range: at most float's least normal value (Eigen), or 0.
    const float low[3] = {-100.0f, -1e30f, -std::numeric_limits<float>::infinity()};
    const float* e = exp_scaled(low, 3, 1.0, 0.0);
    for (int i = 0; i < 3; ++i) CHECK(e[i] <= FLT_MIN);
}

TEST_CASE("softmax_row is softmax(scores / tau) to fp32 rounding, the same bits wherever the row lies", "[plan][normalizers]") {
    SplitMix64 rng(11);
    for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 1000}) {
        for (float tau : {1.0f, 0.05f, 20.0f}) {
            std::vector<float> s(static_cast<size_t>(n) + 3);
            for (float& v : s) v = static_cast<float>(-30.0 + 40.0 * rng.uniform());
            std::vector<double> ref(static_cast<size_t>(n));
            const double top = *std::max_element(s.begin(), s.begin() + n);
            double sum = 0.0;
            for (int i = 0; i < n; ++i) sum += (ref[static_cast<size_t>(i)] = std::exp((s[static_cast<size_t>(i)] - top) / tau));
            std::vector<float> w(static_cast<size_t>(n) + 3, -1.0f);
            softmax_row(s.data(), n, 1.0f / tau, w.data());
            INFO("row of " << n << " at tau " << tau);
            double err = 0.0, total = 0.0;
            for (int i = 0; i < n; ++i) {
                err = std::max(err, std::abs(w[static_cast<size_t>(i)] - ref[static_cast<size_t>(i)] / sum));
                total += w[static_cast<size_t>(i)];
            }
            CHECK(err <= 4 * FLT_EPSILON);
            CHECK(std::abs(total - 1.0) <= (n + 4) * FLT_EPSILON);
            CHECK(w[static_cast<size_t>(n)] == -1.0f);  // nothing written past the row
#if defined(__wasm_simd128__)
            // The attention blocks' rows start anywhere in a thread's scratch: the bits must not
            // depend on it (natively Eigen peels an unaligned head, and the scratch is aligned).
            for (int shift = 1; shift <= 3; ++shift) {
                std::vector<float> moved(s.size() + 3), out(w.size() + 3);
                std::copy(s.begin(), s.end(), moved.begin() + shift);
                softmax_row(moved.data() + shift, n, 1.0f / tau, out.data() + shift);
                CHECK(std::equal(w.begin(), w.begin() + n, out.begin() + shift));
            }
#endif
        }
    }
}
