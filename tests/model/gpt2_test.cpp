// GPT-2 forward pass against an independent implementation: tests/reference/make_gpt2_fixtures.py
// (numpy, float64, written from the Hugging Face formulas) made random checkpoints of several
// shapes, dtypes and naming conventions, and recorded what GPT-2 computes on them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/parallel.h"
#include "base/random.h"
#include "base/safetensors.h"
#include "model/attention_capture.h"
#include "model/gpt2.h"
#include "model/gpt2_fixture.h"
#include "model/random_checkpoint.h"
#include "platform/whole_file.h"

using namespace attnlab;
using namespace attnlab::fixture;

namespace {

const char* const kFixtures[] = {"tiny-f32", "prefixed-untied-f32", "inferred-f16", "bf16-eps"};

}  // namespace

TEST_CASE("GPT-2 logits, attention and final layer norm match the numpy reference", "[gpt2]") {
    for (const char* name : kFixtures) {
        SECTION(name) {
            Fixture f(name);
            const Gpt2Config& c = f.model.config();
            const json::Value& ec = *f.expected.find("config");
            CHECK(c.n_embd == ec.find("n_embd")->as_number());
            CHECK(c.n_head == ec.find("n_head")->as_number());
            CHECK(c.n_layer == ec.find("n_layer")->as_number());
            CHECK(c.vocab_size == ec.find("vocab_size")->as_number());
            CHECK(c.layer_norm_epsilon == Approx(f.expected.find("layer_norm_epsilon")->as_number()));

            Gpt2State state(f.model);
            AllHeads heads;
            std::vector<float> logits;
            std::string error;
            REQUIRE(state.forward(f.tokens, logits, error, true, &heads));
            const double logit_err = relative_error(logits, flatten(*f.expected.find("logits")));
            INFO(name << ": logits relative error " << logit_err);
            CHECK(logit_err < 1e-4);
            CHECK(relative_error(state.final_hidden(), flatten(*f.expected.find("ln_f"))) < 1e-4);

            std::vector<float> all;
            for (const auto& w : heads.weights) all.insert(all.end(), w.begin(), w.end());
            const double att_err = relative_error(all, flatten(*f.expected.find("attention")));
            INFO(name << ": attention relative error " << att_err);
            CHECK(att_err < 1e-4);
        }
    }
}

TEST_CASE("GPT-2 per-head temperature overrides match the numpy reference", "[gpt2]") {
    for (const char* name : kFixtures) {
        SECTION(name) {
            Fixture f(name);
            Gpt2State state(f.model);
            for (const json::Value& o : f.expected.find("temperature_overrides")->items()) {
                const int l = static_cast<int>(o.find("layer")->as_number()), h = static_cast<int>(o.find("head")->as_number());
                state.plan.set(l, h, HeadPlan{Normalizer{}, static_cast<float>(o.find("temperature")->as_number())});
            }
            AllHeads heads;
            std::vector<float> logits;
            std::string error;
            REQUIRE(state.forward(f.tokens, logits, error, true, &heads));
            CHECK(relative_error(logits, flatten(*f.expected.find("logits_with_overrides"))) < 1e-4);
            std::vector<float> all;
            for (const auto& w : heads.weights) all.insert(all.end(), w.begin(), w.end());
            CHECK(relative_error(all, flatten(*f.expected.find("attention_with_overrides"))) < 1e-4);
            // And the overrides changed something, or this test would prove nothing.
            CHECK(relative_error(logits, flatten(*f.expected.find("logits"))) > 1e-3);
        }
    }
}

TEST_CASE("Incremental decoding with the KV cache equals a full recompute", "[gpt2]") {
    for (const char* name : kFixtures) {
        SECTION(name) {
            Fixture f(name);
            std::string error;
            std::vector<float> full, step;
            Gpt2State whole(f.model);
            REQUIRE(whole.forward(f.tokens, full, error, true));
            const int V = f.model.config().vocab_size, T = static_cast<int>(f.tokens.size());
            Gpt2State cached(f.model);
            const int prompt = T / 2;
            REQUIRE(cached.forward(std::span<const int>(f.tokens).first(static_cast<size_t>(prompt)), step, error));
            double worst = 0.0;
            for (int t = prompt; t < T; ++t) {
                REQUIRE(cached.forward(std::span<const int>(f.tokens).subspan(static_cast<size_t>(t), 1), step, error));
                const std::vector<double> ref(full.begin() + static_cast<std::ptrdiff_t>(t) * V,
                                              full.begin() + static_cast<std::ptrdiff_t>(t + 1) * V);
                worst = std::max(worst, relative_error(step, ref));
            }
            INFO(name << ": worst relative difference " << worst);
            CHECK(worst < 1e-5);
            CHECK(cached.length() == T);
        }
    }
}

TEST_CASE("A prefill in chunks without logits, then the last chunk, gives the reference's last logits", "[gpt2]") {
    for (const char* name : kFixtures) {
        SECTION(name) {
            Fixture f(name);
            const int V = f.model.config().vocab_size, T = static_cast<int>(f.tokens.size());
            const std::vector<double> all = flatten(*f.expected.find("logits"));
            const std::vector<double> last(all.end() - V, all.end());
            std::string error;
            std::vector<float> logits(static_cast<size_t>(V), -1.0f);
            Gpt2State state(f.model);
            // Chunks of 1, 2, 3, ... tokens, as the page feeds a pass; the last one through forward().
            int at = 0;
            for (int size = 1; at + size < T; at += size++) {
                REQUIRE(state.prefill(std::span<const int>(f.tokens).subspan(static_cast<size_t>(at), static_cast<size_t>(size)), error));
                CHECK(state.length() == at + size);
            }
            REQUIRE(state.forward(std::span<const int>(f.tokens).subspan(static_cast<size_t>(at)), logits, error));
            REQUIRE(logits.size() == static_cast<size_t>(V));
            const double err = relative_error(logits, last);
            INFO(name << ": relative error " << err);
            CHECK(err < 1e-4);
            // prefill() checks its tokens like forward() and consumes nothing when it refuses them.
            Gpt2State fresh(f.model);
            CHECK_FALSE(fresh.prefill(std::vector<int>{V}, error));
            CHECK(fresh.length() == 0);
        }
    }
}

TEST_CASE("AttentionCapture recomputes any head from cached Q/K, at any temperature", "[gpt2][capture]") {
    Fixture f("tiny-f32");
    const int H = f.model.config().n_head, T = static_cast<int>(f.tokens.size());
    AttentionCapture capture;
    Gpt2State state(f.model);
    std::vector<float> logits;
    std::string error;
    // Capture across a prefill and two decode steps: the cache must stitch them together.
    REQUIRE(state.forward(std::span<const int>(f.tokens).first(static_cast<size_t>(T - 2)), logits, error, false, &capture));
    REQUIRE(state.forward(std::span<const int>(f.tokens).subspan(static_cast<size_t>(T - 2), 1), logits, error, false, &capture));
    REQUIRE(state.forward(std::span<const int>(f.tokens).subspan(static_cast<size_t>(T - 1), 1), logits, error, false, &capture));
    REQUIRE(capture.length() == T);

    const std::vector<double> ref = flatten(*f.expected.find("attention"));
    const std::vector<double> ref_t = flatten(*f.expected.find("attention_with_overrides"));
    const size_t TT = static_cast<size_t>(T) * T;
    for (int l = 0; l < f.model.config().n_layer; ++l)
        for (int h = 0; h < H; ++h) {
            const size_t at = (static_cast<size_t>(l) * H + h) * TT;
            CHECK(relative_error(capture.weights(l, h), std::vector<double>(ref.begin() + at, ref.begin() + at + TT)) < 1e-4);
        }
    // Layer 0's inputs do not depend on any override, so its head H-1 at temperature 0.5
    // is exactly the reference's overridden head.
    const size_t at = static_cast<size_t>(H - 1) * TT;
    CHECK(relative_error(capture.weights(0, H - 1, HeadPlan{Normalizer{}, 0.5f}),
                         std::vector<double>(ref_t.begin() + at, ref_t.begin() + at + TT)) < 1e-4);
    const std::vector<float> s = capture.scores(0, 0);
    CHECK(std::isinf(s[1]));  // above the diagonal
    CHECK(std::isfinite(s[static_cast<size_t>(T)]));
}

TEST_CASE("GPT-2 refuses what it cannot run, with a message", "[gpt2]") {
    Fixture f("tiny-f32");
    const Gpt2Config& c = f.model.config();
    Gpt2State state(f.model);
    std::vector<float> logits;
    std::string error;
    const std::vector<int> bad = {1, c.vocab_size};
    CHECK_FALSE(state.forward(bad, logits, error));
    CHECK(error.find("outside the vocabulary") != std::string::npos);
    const std::vector<int> too_long(static_cast<size_t>(c.n_positions) + 1, 3);
    CHECK_FALSE(state.forward(too_long, logits, error));
    CHECK(error.find("at most " + std::to_string(c.n_positions)) != std::string::npos);
    CHECK(state.length() == 0);  // nothing was consumed
    const std::vector<int> fits(static_cast<size_t>(c.n_positions), 3);
    CHECK(state.forward(fits, logits, error));
    CHECK_FALSE(state.forward(std::vector<int>{1}, logits, error));  // the cache is full
}

TEST_CASE("GPT-2 config: inferred when absent (with a warning), checked when present", "[gpt2]") {
    Fixture inferred("inferred-f16");
    REQUIRE(inferred.warnings.size() == 1);
    CHECK(inferred.warnings[0].find("n_head 2") != std::string::npos);

    Gpt2Config c;
    std::string error;
    CHECK_FALSE(parse_gpt2_config(R"({"n_layer": 2, "n_head": 3, "n_embd": 32, "n_positions": 8, "vocab_size": 10})", "c.json", c, error));
    CHECK(error == "c.json: n_embd 32 is not a multiple of n_head 3");
    CHECK_FALSE(parse_gpt2_config(R"({"n_layer": 2, "n_head": 2, "n_embd": 32, "vocab_size": 10})", "c.json", c, error));
    CHECK(error == "c.json: missing \"n_positions\"");
    CHECK_FALSE(parse_gpt2_config(R"({"n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 8, "vocab_size": 10,
                                     "activation_function": "relu"})",
                                  "c.json", c, error));
    CHECK(error.find("relu") != std::string::npos);
    CHECK_FALSE(parse_gpt2_config("{", "c.json", c, error));
    CHECK(error.find("c.json: not valid JSON") == 0);

    // A config that disagrees with the tensors is an error naming the tensor.
    Fixture f("tiny-f32");
    Gpt2Config wrong = f.model.config();
    wrong.n_positions += 1;
    Gpt2Model m;
    CHECK_FALSE(m.load(f.reader, &wrong, error));
    CHECK(error.find("'wpe.weight' has shape") != std::string::npos);
}

TEST_CASE("gpt2: the forward pass gives the same bits on any number of threads", "[gpt2][threads]") {
    // A shape the fixtures lack: several query blocks, linear() panels with a ragged last one,
    // and head and block counts that do not divide evenly among threads.
    Gpt2Config config;
    config.n_layer = 2;
    config.n_head = 3;
    config.n_embd = 48;
    config.n_positions = 200;
    config.vocab_size = 300;
    const std::vector<std::uint8_t> file = random_checkpoint(config, 11);
    SafetensorsReader reader;
    Gpt2Model model;
    std::string error;
    REQUIRE(reader.open(file, "random", error));
    REQUIRE(model.load(reader, &config, error));
    std::vector<int> tokens(150);
    SplitMix64 rng(3);
    for (int& t : tokens) t = static_cast<int>(rng.next() % 300);
    const int before = max_threads();
    std::vector<std::vector<float>> logits(2), hidden(2), weights(2);
    for (int run = 0; run < 2; ++run) {
        set_max_threads(run == 0 ? 1 : 3);
        if (run > 0) REQUIRE(max_threads() > 1);  // more than one thread ran: the comparison compares something
        Gpt2State state(model);
        AttentionCapture capture;
        REQUIRE(state.forward(tokens, logits[static_cast<size_t>(run)], error, true, &capture));
        hidden[static_cast<size_t>(run)] = state.final_hidden();
        weights[static_cast<size_t>(run)] = capture.weights(1, 2);
    }
    set_max_threads(before);
    CHECK(logits[0] == logits[1]);
    CHECK(hidden[0] == hidden[1]);
    CHECK(weights[0] == weights[1]);
}
