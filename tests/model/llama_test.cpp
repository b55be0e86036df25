// The Llama family (llama, qwen2, qwen3) against tests/reference/make_llama_fixtures.py: numpy in
// float64 written from Hugging Face's definitions, not from this engine's code.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "model/attention_capture.h"
#include "model/gpt2_fixture.h"
#include "model/llama.h"
#include "model/random_checkpoint.h"

using namespace attnlab;
using attnlab::fixture::AllHeads;
using attnlab::fixture::flatten;
using attnlab::fixture::relative_error;

namespace {

const char* const kCases[] = {"llama-gqa-f32", "llama3-bias-tied-f16", "qwen2-linear-f32", "qwen3-qknorm-bf16", "llama-unaligned-f32"};

struct LlamaFixture {
    std::string bytes, config_text;
    SafetensorsReader reader;
    LlamaModel model;
    json::Value expected;
    std::vector<int> tokens;

    explicit LlamaFixture(const std::string& name) {
        const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/" + name;
        bytes = read_whole_file(dir + "/model.safetensors");
        config_text = read_whole_file(dir + "/config.json");
        std::string error;
        REQUIRE(reader.open({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, name, error));
        LlamaConfig config;
        INFO(error);
        REQUIRE(parse_llama_config(config_text, name + "/config.json", config, error));
        REQUIRE(model.load(reader, config, error));
        const json::ParseResult e = json::parse(read_whole_file(dir + "/expected.json"));
        REQUIRE(e.value);
        expected = *e.value;
        for (const json::Value& t : expected.find("tokens")->items()) tokens.push_back(static_cast<int>(t.as_number()));
    }
};

// Every head's weights as a (L, H, T, T) list, in the reference's order.
std::vector<float> all_weights(const AllHeads& seen) {
    std::vector<float> out;
    for (const std::vector<float>& w : seen.weights) out.insert(out.end(), w.begin(), w.end());
    return out;
}

struct Residual final : AttentionObserver {
    int C;
    std::vector<float> x;
    explicit Residual(int width) : C(width) {}
    void on_layer(const LayerQkv&) override {}
    void on_output(int, int n, const float* r) override { x.assign(r, r + static_cast<size_t>(n) * C); }
};

}  // namespace

TEST_CASE("llama family: logits, attention, final norm and perplexity match the numpy reference", "[llama]") {
    for (const char* name : kCases) {
        INFO(name);
        LlamaFixture f(name);
        LlamaState state(f.model);
        AllHeads seen;
        std::vector<float> logits;
        std::string error;
        REQUIRE(state.forward(f.tokens, logits, error, true, &seen));
        CHECK(relative_error(logits, flatten(*f.expected.find("logits"))) <= 1e-4);
        CHECK(relative_error(all_weights(seen), flatten(*f.expected.find("attention"))) <= 1e-4);
        CHECK(relative_error(state.final_hidden(), flatten(*f.expected.find("final_norm"))) <= 1e-4);

        LlamaState again(f.model);
        Residual residual(f.model.config().hidden_size);
        REQUIRE(again.prefill(f.tokens, error, &residual));
        std::vector<int> targets(f.tokens.begin() + 1, f.tokens.end());
        std::vector<double> nll;
        next_token_nll(f.model, residual.x.data(), static_cast<int>(f.tokens.size()) - 1, targets, nll);
        CHECK(relative_error(nll, flatten(*f.expected.find("nll"))) <= 1e-4);
    }
}

TEST_CASE("llama family: decoding with the KV cache gives the prefill's logits", "[llama]") {
    for (const char* name : kCases) {
        INFO(name);
        LlamaFixture f(name);
        const std::vector<double> ref = flatten(*f.expected.find("logits"));
        const int V = f.model.config().vocab_size;
        LlamaState state(f.model);
        std::string error;
        std::vector<float> step, all;
        // A prefill of 5, then one token at a time: each step's logits against the reference's row.
        REQUIRE(state.forward(std::span<const int>(f.tokens).first(5), step, error, true));
        all = step;
        for (size_t i = 5; i < f.tokens.size(); ++i) {
            REQUIRE(state.forward(std::span<const int>(f.tokens).subspan(i, 1), step, error));
            all.insert(all.end(), step.begin(), step.end());
        }
        REQUIRE(all.size() == f.tokens.size() * static_cast<size_t>(V));
        CHECK(relative_error(all, ref) <= 1e-4);
    }
}

TEST_CASE("llama family: every normalizer of a plan matches the reference", "[llama][plan]") {
    LlamaFixture f("qwen3-qknorm-bf16");
    const json::Value* plans = f.expected.find("plans");
    REQUIRE(plans);
    REQUIRE(plans->items().size() == 3);
    for (const json::Value& run : plans->items()) {
        const std::string spec = run.find("spec")->as_string();
        INFO(spec);
        LlamaState state(f.model);
        std::string error;
        REQUIRE(parse_attention_spec(spec, f.model.config().num_hidden_layers, f.model.config().num_attention_heads, state.plan, error));
        AllHeads seen;
        std::vector<float> logits;
        REQUIRE(state.forward(f.tokens, logits, error, true, &seen));
        CHECK(relative_error(logits, flatten(*run.find("logits"))) <= 1e-4);
        CHECK(relative_error(all_weights(seen), flatten(*run.find("attention"))) <= 1e-4);
    }
}

TEST_CASE("llama family: the same bits on 1, 2 and 3 threads", "[llama][threads]") {
    for (const char* name : kCases) {
        INFO(name);
        LlamaFixture f(name);
        const int before = max_threads();
        std::vector<float> first;
        for (int threads = 1; threads <= 3; ++threads) {
            set_max_threads(threads);
            LlamaState state(f.model);
            std::vector<float> logits;
            std::string error;
            REQUIRE(state.forward(f.tokens, logits, error, true));
            if (threads == 1) first = logits;
            else CHECK(logits == first);
        }
        set_max_threads(before);
    }
}

TEST_CASE("llama family: config.json fields this engine does not compute are refused by name", "[llama]") {
    const std::string base = read_whole_file(std::string(ATTNLAB_FIXTURES_DIR) + "/llama-gqa-f32/config.json");
    const auto refused = [&](const std::string& from, const std::string& to) {
        std::string text = base;
        const size_t at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        LlamaConfig c;
        std::string error;
        CHECK_FALSE(parse_llama_config(text, "config.json", c, error));
        return error;
    };
    std::string e = refused("\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}");
    CHECK(e.find("rope_scaling.rope_type") != std::string::npos);
    CHECK(e.find("yarn") != std::string::npos);
    CHECK(e.find("llama3") != std::string::npos);  // lists what is supported
    e = refused("\"silu\"", "\"gelu\"");
    CHECK(e.find("hidden_act") != std::string::npos);
    e = refused("\"model_type\": \"llama\"", "\"model_type\": \"mistral\"");
    CHECK(e.find("mistral") != std::string::npos);
    CHECK(e.find("qwen3") != std::string::npos);
    e = refused("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3");
    CHECK(e.find("num_key_value_heads") != std::string::npos);
}

TEST_CASE("llama family: absent fields take Hugging Face's defaults; rope_parameters as transformers 5 writes it", "[llama]") {
    const auto parsed = [](const std::string& text) {
        LlamaConfig c;
        std::string error;
        INFO(text << ": " << error);
        REQUIRE(parse_llama_config(text, "config.json", c, error));
        return c;
    };
    const std::string shape =
        R"("num_hidden_layers": 1, "num_attention_heads": 16, "hidden_size": 64, "intermediate_size": 8, "vocab_size": 10)";
    // LlamaConfig: num_key_value_heads = heads, head_dim = hidden / heads. Qwen2Config, Qwen3Config:
    // num_key_value_heads 32 (null: the heads); Qwen3Config head_dim 128.
    LlamaConfig c = parsed(R"({"model_type": "llama", )" + shape + "}");
    CHECK(c.num_key_value_heads == 16);
    CHECK(c.head_dim == 4);
    const std::string shape16 =
        R"("num_hidden_layers": 1, "num_attention_heads": 64, "hidden_size": 128, "intermediate_size": 8, "vocab_size": 10)";
    c = parsed(R"({"model_type": "qwen2", )" + shape16 + "}");
    CHECK(c.num_key_value_heads == 32);
    CHECK(c.head_dim == 2);
    c = parsed(R"({"model_type": "qwen2", "num_key_value_heads": null, )" + shape16 + "}");
    CHECK(c.num_key_value_heads == 64);
    c = parsed(R"({"model_type": "qwen3", )" + shape16 + "}");
    CHECK(c.num_key_value_heads == 32);
    CHECK(c.head_dim == 128);
    // Qwen2's and Qwen3's MLPs have no biases, whatever mlp_bias says; Llama's follow it.
    CHECK_FALSE(parsed(R"({"model_type": "qwen3", "mlp_bias": true, )" + shape16 + "}").mlp_bias);
    CHECK(parsed(R"({"model_type": "llama", "mlp_bias": true, )" + shape + "}").mlp_bias);
    // rope_parameters: its rope_theta wins over the top-level one; no rope_type is "default".
    c = parsed(R"({"model_type": "qwen3", "rope_theta": 10000, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000}, )" +
               shape16 + "}");
    CHECK(c.rope_theta == 1e6);
    CHECK(c.rope_scaling.type == RopeScaling::Type::None);
    c = parsed(R"({"model_type": "llama", "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 500000}, )" + shape +
               "}");
    CHECK(c.rope_scaling.type == RopeScaling::Type::Linear);
    CHECK(c.rope_theta == 5e5);
    CHECK(parsed(R"({"model_type": "llama", "rope_scaling": {"factor": 2.0}, )" + shape + "}").rope_scaling.type ==
          RopeScaling::Type::None);
    // Sliding-window layers are refused by name.
    LlamaConfig refused;
    std::string error;
    CHECK_FALSE(parse_llama_config(R"({"model_type": "qwen2", "layer_types": ["full_attention", "sliding_attention"], )" + shape16 + "}",
                                   "config.json", refused, error));
    CHECK(error.find("layer_types") != std::string::npos);
    CHECK_FALSE(parse_llama_config(R"({"model_type": "qwen3", "rope_parameters": {"rope_type": "yarn", "factor": 4.0}, )" + shape16 + "}",
                                   "config.json", refused, error));
    CHECK(error.find("rope_parameters.rope_type") != std::string::npos);
}

TEST_CASE("llama family: random checkpoints of every architecture load and run", "[llama]") {
    for (const LlamaArch arch : {LlamaArch::Llama, LlamaArch::Qwen2, LlamaArch::Qwen3}) {
        LlamaConfig c;
        c.arch = arch;
        c.num_key_value_heads = 2;
        c.tie_word_embeddings = arch == LlamaArch::Qwen3;
        c.attention_bias = arch == LlamaArch::Llama;
        INFO(arch_name(arch));
        const std::vector<std::uint8_t> file = random_checkpoint(c, 3);
        SafetensorsReader reader;
        std::string error;
        REQUIRE(reader.open(file, "random", error));
        LlamaConfig parsed;
        REQUIRE(parse_llama_config(llama_config_json(c), "config.json", parsed, error));
        LlamaModel model;
        INFO(error);
        REQUIRE(model.load(reader, parsed, error));
        LlamaState state(model);
        std::vector<float> logits;
        REQUIRE(state.forward(std::vector<int>{1, 2, 3}, logits, error));
        REQUIRE(logits.size() == static_cast<size_t>(c.vocab_size));
        for (float v : logits) REQUIRE(std::isfinite(v));
    }
}

TEST_CASE("llama family: past 2,048 positions, prefill and KV-cache decoding match the reference", "[llama][long]") {
    LlamaFixture f("llama-long-f32");
    const int tail = static_cast<int>(f.expected.find("tail")->as_number());
    const std::vector<double> ref = flatten(*f.expected.find("logits_tail"));
    const int T = static_cast<int>(f.tokens.size()), V = f.model.config().vocab_size;
    REQUIRE(T > 2048);
    std::string error;
    LlamaState whole(f.model);
    std::vector<float> logits;
    REQUIRE(whole.forward(f.tokens, logits, error, true));
    CHECK(relative_error(std::vector<float>(logits.end() - static_cast<std::ptrdiff_t>(tail) * V, logits.end()), ref) <= 1e-4);

    LlamaState stepped(f.model);
    REQUIRE(stepped.prefill(std::span<const int>(f.tokens).first(static_cast<size_t>(T - tail)), error));
    std::vector<float> decoded, step;
    for (int i = T - tail; i < T; ++i) {
        REQUIRE(stepped.forward(std::span<const int>(f.tokens).subspan(static_cast<size_t>(i), 1), step, error));
        decoded.insert(decoded.end(), step.begin(), step.end());
    }
    CHECK(relative_error(decoded, ref) <= 1e-4);

    Residual residual(f.model.config().hidden_size);
    LlamaState again(f.model);
    REQUIRE(again.prefill(f.tokens, error, &residual));
    std::vector<double> nll;
    next_token_nll(f.model, residual.x.data(), T - 1, std::span<const int>(f.tokens).subspan(1), nll);
    CHECK(relative_error(nll, flatten(*f.expected.find("nll"))) <= 1e-4);
}

TEST_CASE("llama family: the attention capture reads each query head's key/value group", "[llama][capture]") {
    LlamaFixture f("llama-gqa-f32");
    REQUIRE(f.model.config().num_key_value_heads < f.model.config().num_attention_heads);
    LlamaState state(f.model);
    AttentionCapture capture;
    std::vector<float> logits;
    std::string error;
    REQUIRE(state.forward(f.tokens, logits, error, false, &capture));
    REQUIRE(capture.n_kv_head() == f.model.config().num_key_value_heads);
    std::vector<float> all;
    for (int l = 0; l < f.model.config().num_hidden_layers; ++l)
        for (int h = 0; h < f.model.config().num_attention_heads; ++h) {
            const std::vector<float> w = capture.weights(l, h);
            all.insert(all.end(), w.begin(), w.end());
        }
    CHECK(relative_error(all, flatten(*f.expected.find("attention"))) <= 1e-4);
}
