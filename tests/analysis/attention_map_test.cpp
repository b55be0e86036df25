#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "analysis/attention_map.h"
#include "analysis/normalizers.h"
#include "base/random.h"
#include "base/safetensors.h"
#include "model/attention_capture.h"
#include "model/gpt2.h"
#include "platform/whole_file.h"

using namespace attnlab;

namespace {

// The numpy-made 2-layer x 4-head checkpoint (tests/fixtures/tiny-f32); bytes holds the file.
void load_tiny_f32(std::string& bytes, Gpt2Config& config, Gpt2Model& model) {
    const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/tiny-f32";
    bytes = read_whole_file(dir + "/model.safetensors");
    SafetensorsReader reader;
    std::string error;
    REQUIRE(reader.open({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "tiny", error));
    REQUIRE(parse_gpt2_config(read_whole_file(dir + "/config.json"), "config.json", config, error));
    REQUIRE(model.load(reader, &config, error));
}

// Independent reference: softmax attention of query i over keys 0..i, plain loops in double.
std::vector<double> reference_row(const std::vector<float>& q, const std::vector<float>& k, int d, int i) {
    std::vector<double> s(static_cast<size_t>(i) + 1);
    double top = -1e300;
    for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int c = 0; c < d; ++c) dot += double(q[size_t(i) * d + c]) * k[size_t(j) * d + c];
        s[size_t(j)] = dot / std::sqrt(double(d));
        top = std::max(top, s[size_t(j)]);
    }
    double sum = 0;
    for (double& v : s) sum += (v = std::exp(v - top));
    for (double& v : s) v /= sum;
    return s;
}

std::vector<float> gaussian(int n, std::uint64_t seed, double scale) {
    SplitMix64 g(seed);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = static_cast<float>(scale * g.normal());
    return v;
}

}  // namespace

TEST_CASE("plan_attention_rows of the head as trained matches plain loops, in any row blocks", "[attention_map]") {
    const int L = 23, d = 8;
    const std::vector<float> q = gaussian(L * d, 1, 2.0), k = gaussian(L * d, 2, 2.0);
    for (int block : {1, 5, 23}) {
        for (int r0 = 0; r0 < L; r0 += block) {
            const int r1 = std::min(L, r0 + block);
            std::vector<float> rows;
            plan_attention_rows(q, k, L, d, r0, r1, HeadPlan{}, rows);
            REQUIRE(rows.size() == size_t(r1 - r0) * L);
            for (int i = r0; i < r1; ++i) {
                const std::vector<double> ref = reference_row(q, k, d, i);
                for (int j = 0; j < L; ++j) {
                    const float got = rows[size_t(i - r0) * L + j];
                    if (j <= i) REQUIRE(got == Approx(ref[size_t(j)]).margin(1e-6));
                    else REQUIRE(got == 0.0f);  // causal: nothing above the diagonal
                }
            }
        }
    }
}

TEST_CASE("plan_attention_rows: a head's plan entry, against the double-precision normalizers", "[attention_map]") {
    const int L = 19, d = 8;
    const std::vector<float> q = gaussian(L * d, 11, 2.0), k = gaussian(L * d, 12, 2.0);
    for (const char* spec : {"softmax", "softmax@0.5", "sparsemax", "entmax-1.5@2", "ssmax:0.43", "sa-softmax"}) {
        INFO(spec);
        AttentionPlan plan(1, 1);
        std::string error;
        REQUIRE(parse_attention_spec(std::string("all=") + spec, 1, 1, plan, error));
        const HeadPlan& how = plan.at(0, 0);
        for (int block : {4, 19}) {
            for (int r0 = 0; r0 < L; r0 += block) {
                const int r1 = std::min(L, r0 + block);
                std::vector<float> rows;
                plan_attention_rows(q, k, L, d, r0, r1, how, rows);
                REQUIRE(rows.size() == size_t(r1 - r0) * L);
                for (int i = r0; i < r1; ++i) {
                    // The scores in double from the same q and k, then the analysis layer's normalizer.
                    std::vector<double> scores(size_t(i) + 1);
                    for (int j = 0; j <= i; ++j) {
                        double dot = 0;
                        for (int c = 0; c < d; ++c) dot += double(q[size_t(i) * d + c]) * k[size_t(j) * d + c];
                        scores[size_t(j)] = dot / std::sqrt(double(d));
                    }
                    const std::vector<double> ref = normalize(how.normalizer, scores, how.temperature);
                    for (int j = 0; j < L; ++j) {
                        const float got = rows[size_t(i - r0) * L + j];
                        if (j <= i) REQUIRE(got == Approx(ref[size_t(j)]).margin(1e-5));  // fp32 scores of size ~10
                        else REQUIRE(got == 0.0f);
                    }
                }
            }
        }
    }
}

TEST_CASE("normalize_causal_rows applies the normalizer to each row's visible scores", "[attention_map]") {
    const int L = 9;
    std::vector<float> scores = gaussian(L * L, 7, 3.0);
    for (int i = 0; i < L; ++i)  // the model writes -inf above the diagonal: it must be ignored
        for (int j = i + 1; j < L; ++j) scores[size_t(i) * L + j] = -std::numeric_limits<float>::infinity();
    for (const char* name : {"softmax", "sparsemax", "entmax-1.5", "ssmax", "sa-softmax"}) {
        Normalizer n;
        std::string error;
        REQUIRE(parse_normalizer(name, n, error));
        for (double T : {0.05, 1.0, 20.0}) {
            std::vector<float> w;
            REQUIRE(normalize_causal_rows(scores, L, n, T, w, error));
            for (int i = 0; i < L; ++i) {
                std::vector<double> row(scores.begin() + i * L, scores.begin() + i * L + i + 1);
                const std::vector<double> ref = normalize(n, row, T);
                double sum = 0;
                for (int j = 0; j < L; ++j) {
                    const float got = w[size_t(i) * L + j];
                    if (j <= i) {
                        REQUIRE(got == Approx(ref[size_t(j)]).margin(1e-6));
                        sum += got;
                    } else {
                        REQUIRE(got == 0.0f);
                    }
                }
                REQUIRE(sum == Approx(1.0).margin(1e-5));
            }
        }
    }
    // Softmax at T = 1 from the scores gives the model's own weights.
    Normalizer softmax_n;
    std::vector<float> w;
    std::string error;
    std::vector<float> one = {0.0f, 0.0f, 0.0f, std::log(3.0f)};  // L = 2: row 1 sees {0, ln 3}
    REQUIRE(normalize_causal_rows(one, 2, softmax_n, 1.0, w, error));
    REQUIRE(w[0] == 1.0f);
    REQUIRE(w[2] == Approx(0.25));
    REQUIRE(w[3] == Approx(0.75));
}

TEST_CASE("normalize_causal_rows rejects bad input with a message naming it", "[attention_map]") {
    Normalizer n;
    std::vector<float> w = {9.0f}, scores = {0.0f, 0.0f, std::nanf(""), 1.0f};
    std::string error;
    REQUIRE_FALSE(normalize_causal_rows(scores, 2, n, 1.0, w, error));
    REQUIRE(error.find("Query 1") != std::string::npos);
    REQUIRE(w == std::vector<float>{9.0f});                                         // untouched
    REQUIRE_FALSE(normalize_causal_rows(scores, 3, n, 1.0, w, error));              // not 3 x 3
    REQUIRE_FALSE(normalize_causal_rows({scores.data(), 1}, 1, n, 0.0, w, error));  // T = 0
}

TEST_CASE("pool_rows_max: hand-worked 5 x 5 map into 2 x 2 blocks", "[attention_map]") {
    // Blocks: positions 0,1,2 -> bin 0 (i*2/5 = 0,0,0), positions 3,4 -> bin 1.
    const int L = 5;
    std::vector<float> m(L * L, 0.0f);
    // row 0: [1]; row 1: [.4 .6]; row 2: [.1 .2 .7]; row 3: [.3 .05 .05 .6]; row 4: [.1 .1 .5 .2 .1]
    const float rows[5][5] = {
        {1, 0, 0, 0, 0}, {.4f, .6f, 0, 0, 0}, {.1f, .2f, .7f, 0, 0}, {.3f, .05f, .05f, .6f, 0}, {.1f, .1f, .5f, .2f, .1f}};
    for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j) m[size_t(i) * L + j] = rows[i][j];
    PooledMap p = empty_pooled_map(L, 2);
    REQUIRE(p.bins == 2);
    // In two pieces, as the background task does.
    pool_rows_max(p, {m.data(), size_t(2 * L)}, 0, 2);
    pool_rows_max(p, {m.data() + 2 * L, size_t(3 * L)}, 2, 5);
    REQUIRE(p.cells[0] == 1.0f);      // rows 0-2, keys 0-2
    REQUIRE(std::isnan(p.cells[1]));  // rows 0-2, keys 3-4: all above the diagonal
    REQUIRE(p.cells[2] == 0.5f);      // rows 3-4, keys 0-2
    REQUIRE(p.cells[3] == 0.6f);      // rows 3-4, keys 3-4
    REQUIRE(p.max == 1.0f);
    // Fewer positions than bins: one block per position.
    REQUIRE(empty_pooled_map(3, 32).bins == 3);
}

TEST_CASE("top_probabilities and token_probability: hand-worked", "[attention_map]") {
    // exp(logits) = 1, 3, 3, 2: p = 1/9, 3/9, 3/9, 2/9; ids 1 and 2 tie, the lower id ranks first.
    const std::vector<float> logits = {0.0f, std::log(3.0f), std::log(3.0f), std::log(2.0f)};
    const std::vector<TokenProbability> top = top_probabilities(logits, 3);
    REQUIRE(top.size() == 3);
    REQUIRE(top[0].id == 1);
    REQUIRE(top[1].id == 2);
    REQUIRE(top[2].id == 3);
    REQUIRE(top[0].p == Approx(3.0 / 9));
    REQUIRE(top[2].p == Approx(2.0 / 9));
    REQUIRE(top[2].rank == 2);
    const TokenProbability last = token_probability(logits, 0);
    REQUIRE(last.rank == 3);
    REQUIRE(last.p == Approx(1.0 / 9));
    REQUIRE(token_probability(logits, 2).rank == 1);
    REQUIRE(top_probabilities(logits, 10).size() == 4);
    // Large logits do not overflow.
    const std::vector<float> big = {1000.0f, 1000.0f};
    REQUIRE(top_probabilities(big, 1)[0].p == Approx(0.5));
}

TEST_CASE("previous_token_weight: hand-worked 3 x 3 and 4 x 4 maps", "[attention_map]") {
    // Rows are queries. A(1,0) = .3, A(2,1) = .5: mean (.3 + .5) / 2 = .4. The 9 above the diagonal
    // and the diagonal itself must not count.
    const std::vector<float> a3 = {1.0f, 9.0f, 0.0f,  //
                                   0.3f, 0.7f, 0.0f,  //
                                   0.2f, 0.5f, 0.3f};
    REQUIRE(previous_token_weight(a3, 3) == Approx(0.4));
    // A(1,0) = .9, A(2,1) = .6, A(3,2) = .25: (.9 + .6 + .25) / 3 = 1.75 / 3.
    const std::vector<float> a4 = {1.0f,  0.0f,  0.0f,  0.0f,  //
                                   0.9f,  0.1f,  0.0f,  0.0f,  //
                                   0.1f,  0.6f,  0.3f,  0.0f,  //
                                   0.25f, 0.25f, 0.25f, 0.25f};
    REQUIRE(previous_token_weight(a4, 4) == Approx(1.75 / 3));
    // In two blocks of rows, as the thumbnail task sees them: rows 0-1 give .9, rows 2-3 give .85.
    REQUIRE(previous_token_sum({a4.data(), 8}, 4, 0, 2) == Approx(0.9));
    REQUIRE(previous_token_sum({a4.data() + 8, 8}, 4, 2, 4) == Approx(0.85));
    REQUIRE(previous_token_sum(std::span<const float>(a4.data(), size_t{0}), 4, 1, 1) == 0.0);  // an empty block
}

TEST_CASE("previous_token_weight: exact previous-token head, uniform attention, L = 1", "[attention_map]") {
    const int L = 7;
    std::vector<float> shifted(L * L, 0.0f);  // identity shifted one left; query 0 can only see itself
    shifted[0] = 1.0f;
    for (int i = 1; i < L; ++i) shifted[size_t(i) * L + size_t(i - 1)] = 1.0f;
    REQUIRE(previous_token_weight(shifted, L) == 1.0);
    std::vector<float> diagonal(L * L, 0.0f);  // every query on itself: nothing on the previous token
    for (int i = 0; i < L; ++i) diagonal[size_t(i) * L + size_t(i)] = 1.0f;
    REQUIRE(previous_token_weight(diagonal, L) == 0.0);

    const int n = 10;
    std::vector<float> uniform(n * n, 0.0f);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) uniform[size_t(i) * n + size_t(j)] = 1.0f / float(i + 1);
    double expected = 0.0;  // mean over i = 1..n-1 of 1/(i+1)
    for (int i = 1; i < n; ++i) expected += 1.0 / (i + 1);
    expected /= n - 1;
    REQUIRE(previous_token_weight(uniform, n) == Approx(expected).epsilon(1e-6));
    REQUIRE(expected == Approx(0.2143).margin(1e-4));  // (H_10 - 1) / 9, the figure the header quotes

    // No query has a previous token: NaN, not 0 (which would read as "never looks back").
    REQUIRE(std::isnan(previous_token_weight(std::vector<float>{1.0f}, 1)));
    REQUIRE(std::isnan(previous_token_weight({}, 0)));
}

TEST_CASE("previous_token_weights: every head, on the weights the thumbnails show", "[attention_map]") {
    // The numpy-made 2 x 4 checkpoint run over 12 seeded tokens: fewer than a thumbnail's 20
    // bins, so each thumbnail block is one cell of the map.
    std::string bytes, error;
    Gpt2Config config;
    Gpt2Model model;
    load_tiny_f32(bytes, config, model);
    const int L = 12, bins = 20;
    std::vector<int> tokens(static_cast<size_t>(L));
    SplitMix64 rng(11);
    for (int& t : tokens) t = static_cast<int>(rng.next() % static_cast<std::uint64_t>(config.vocab_size));
    Gpt2State state(model);
    AttentionCapture cap;
    std::vector<float> logits;
    REQUIRE(state.forward(tokens, logits, error, false, &cap));

    const std::vector<double> got = previous_token_weights(cap, model.trained_plan());
    REQUIRE(got.size() == size_t(cap.layers() * cap.n_head()));
    for (int l = 0; l < cap.layers(); ++l)
        for (int h = 0; h < cap.n_head(); ++h) {
            const double score = got[size_t(l * cap.n_head() + h)];
            // Independent: the model's own softmax (AttentionCapture::weights), plain loop.
            const std::vector<float> w = cap.weights(l, h);
            double ref = 0.0;
            for (int i = 1; i < L; ++i) ref += w[size_t(i) * L + size_t(i - 1)];
            REQUIRE(score == Approx(ref / (L - 1)).margin(1e-6));
            // The thumbnail as the panel's task builds it (blocks of 5 rows), and the score summed
            // over the same blocks: the thumbnail's own sub-diagonal cells give the same mean.
            const std::vector<float> q = cap.queries(l, h), k = cap.keys(l, h);
            PooledMap thumb = empty_pooled_map(L, bins);
            REQUIRE(thumb.bins == L);
            double sum = 0.0;
            for (int r0 = 0; r0 < L; r0 += 5) {
                const int r1 = std::min(L, r0 + 5);
                std::vector<float> rows;
                plan_attention_rows(q, k, L, cap.head_dim(), r0, r1, HeadPlan{}, rows);
                pool_rows_max(thumb, rows, r0, r1);
                sum += previous_token_sum(rows, L, r0, r1);
            }
            REQUIRE(sum / (L - 1) == Approx(score).margin(1e-6));
            double shown = 0.0;
            for (int i = 1; i < L; ++i) shown += thumb.cells[size_t(i) * L + size_t(i - 1)];
            REQUIRE(shown / (L - 1) == Approx(score).margin(1e-6));
        }
}

TEST_CASE("induction_targets: the key after the first occurrence", "[attention_map]") {
    // 5 7 9 5 7 9: a run of 3 repeated, so queries 3..5 look at keys 1..3 (i - 3 + 1).
    REQUIRE(induction_targets(std::vector<int>{5, 7, 9, 5, 7, 9}) == std::vector<int>{-1, -1, -1, 1, 2, 3});
    // Token 1 three times: both later copies look after the *first* one (key 1), not the latest.
    REQUIRE(induction_targets(std::vector<int>{1, 2, 1, 3, 1}) == std::vector<int>{-1, -1, 1, -1, 1});
    // A token repeated at once: its target is the query itself.
    REQUIRE(induction_targets(std::vector<int>{4, 4}) == std::vector<int>{-1, 1});
    REQUIRE(induction_targets(std::vector<int>{}).empty());
}

TEST_CASE("induction_score: hand-worked maps, blocks of rows, no repeats", "[attention_map]") {
    // Tokens 1 2 1 3 1: queries 2 and 4 have target key 1. A(2,1) = .6, A(4,1) = .2: mean .4.
    const std::vector<int> targets = induction_targets(std::vector<int>{1, 2, 1, 3, 1});
    const std::vector<float> a5 = {1.0f, 0.0f, 0.0f, 0.0f, 0.0f,  //
                                   0.5f, 0.5f, 0.0f, 0.0f, 0.0f,  //
                                   0.1f, 0.6f, 0.3f, 0.0f, 0.0f,  //
                                   0.9f, 0.1f, 0.0f, 0.0f, 0.0f,  //
                                   0.2f, 0.2f, 0.2f, 0.2f, 0.2f};
    REQUIRE(induction_queries(targets) == 2);
    REQUIRE(induction_score(a5, targets) == Approx(0.4));
    REQUIRE(induction_sum({a5.data(), 15}, targets, 0, 3) == Approx(0.6));
    REQUIRE(induction_sum({a5.data() + 15, 10}, targets, 3, 5) == Approx(0.2));

    // 40 distinct tokens repeated once: an exact induction head scores 1, uniform attention the
    // mean of 1/(i+1) over the second copy (0.0172: the figure the header quotes).
    const int n = 40, L = 2 * n;
    std::vector<int> tokens(L);
    for (int i = 0; i < L; ++i) tokens[size_t(i)] = 100 + i % n;
    const std::vector<int> t80 = induction_targets(tokens);
    std::vector<float> exact(size_t(L) * L, 0.0f), uniform(size_t(L) * L, 0.0f);
    for (int i = 0; i < L; ++i) {
        exact[size_t(i) * L + size_t(i >= n ? i - n + 1 : i)] = 1.0f;
        for (int j = 0; j <= i; ++j) uniform[size_t(i) * L + size_t(j)] = 1.0f / float(i + 1);
    }
    REQUIRE(induction_score(exact, t80) == 1.0);
    double expected = 0.0;
    for (int i = n; i < L; ++i) expected += 1.0 / (i + 1);
    REQUIRE(induction_score(uniform, t80) == Approx(expected / n).epsilon(1e-6));
    REQUIRE(expected / n == Approx(0.0172).margin(1e-4));
    REQUIRE(uniform_induction_score(t80) == Approx(induction_score(uniform, t80)).epsilon(1e-6));
    REQUIRE(uniform_previous_token_weight(L) == Approx(previous_token_weight(uniform, L)).epsilon(1e-6));
    REQUIRE(uniform_previous_token_weight(10) == Approx(0.2143).margin(1e-4));
    REQUIRE(std::isnan(uniform_previous_token_weight(1)));
    REQUIRE(std::isnan(uniform_induction_score(induction_targets(std::vector<int>{1, 2}))));
    // An exact previous-token head is no induction head: it looks at i - 1, not i - n + 1.
    std::vector<float> previous(size_t(L) * L, 0.0f);
    previous[0] = 1.0f;
    for (int i = 1; i < L; ++i) previous[size_t(i) * L + size_t(i - 1)] = 1.0f;
    REQUIRE(induction_score(previous, t80) == 0.0);
    // No token twice: NaN, not 0.
    REQUIRE(std::isnan(induction_score(std::vector<float>{1.0f, 0.0f, 0.5f, 0.5f}, induction_targets(std::vector<int>{1, 2}))));
}

TEST_CASE("induction_scores: every head, against the model's own softmax", "[attention_map]") {
    std::string bytes, error;
    Gpt2Config config;
    Gpt2Model model;
    load_tiny_f32(bytes, config, model);
    // 7 seeded tokens, then the same 7 again.
    const int n = 7, L = 2 * n;
    std::vector<int> tokens(static_cast<size_t>(L));
    SplitMix64 rng(5);
    for (int i = 0; i < n; ++i) tokens[size_t(i)] = tokens[size_t(i + n)] = static_cast<int>(rng.next() % 13) * 7 + i;  // distinct, < 96
    Gpt2State state(model);
    AttentionCapture cap;
    std::vector<float> logits;
    REQUIRE(state.forward(tokens, logits, error, false, &cap));
    const std::vector<double> got = induction_scores(cap, tokens, model.trained_plan());
    REQUIRE(got.size() == size_t(cap.layers() * cap.n_head()));
    for (int l = 0; l < cap.layers(); ++l)
        for (int h = 0; h < cap.n_head(); ++h) {
            const std::vector<float> w = cap.weights(l, h);
            double ref = 0.0;  // the second copy's weight on the key i - n + 1, a plain loop
            for (int i = n; i < L; ++i) ref += w[size_t(i) * L + size_t(i - n + 1)];
            REQUIRE(got[size_t(l * cap.n_head() + h)] == Approx(ref / n).margin(1e-6));
        }
}
