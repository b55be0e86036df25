// open_decoder, the one dispatch on config.json's model_type (the page and the CLI): each family
// opens as itself with its config's shape, no config.json is a GPT-2 whose shape the tensors
// give, and any other model_type is refused naming the supported ones. Expected shapes are the
// configs written here.
#include <catch2/catch.hpp>

#include <string>

#include "model/open_decoder.h"
#include "model/random_checkpoint.h"

using namespace attnlab;

namespace {
// The checkpoint's bytes, indexed (the reader views them: keep both).
struct Opened {
    std::vector<std::uint8_t> file;
    SafetensorsReader reader;
};
void open_bytes(Opened& o) {
    std::string error;
    REQUIRE(o.reader.open(o.file, "model.safetensors", error));
}
}  // namespace

TEST_CASE("open_decoder opens the family config.json names, with its shape and dtype", "[model][open_decoder]") {
    for (const LlamaArch arch : {LlamaArch::Llama, LlamaArch::Qwen2, LlamaArch::Qwen3}) {
        const int head_dim = arch == LlamaArch::Qwen3 ? 16 : 8;
        LlamaConfig c;  // 2 layers and 4 heads by default
        c.arch = arch;
        c.num_key_value_heads = 2;
        c.hidden_size = 32;
        c.head_dim = head_dim;
        c.vocab_size = 100;
        c.max_position_embeddings = 128;
        Opened o{random_checkpoint(c, 3, DType::BF16), {}};
        open_bytes(o);
        std::string error;
        const auto model = open_decoder(o.reader, llama_config_json(c), "config.json", error);
        REQUIRE(model);
        const DecoderShape s = model->shape();
        CHECK(s.arch == arch_name(arch));
        CHECK((s.n_layer == 2 && s.n_head == 4 && s.n_kv_head == 2 && s.head_dim == head_dim && s.hidden == 32 && s.vocab == 100 &&
               s.max_positions == 128));
        CHECK(weights_dtype(o.reader) == "BF16");
    }
}

TEST_CASE("open_decoder reads a checkpoint without config.json as GPT-2, and refuses other model_types", "[model][open_decoder]") {
    Gpt2Config g;
    g.n_layer = 1;
    g.n_head = 2;
    g.n_embd = 128;
    g.n_positions = 32;
    g.vocab_size = 60;
    Opened o{random_checkpoint(g, 1, DType::F32), {}};
    open_bytes(o);
    std::string error;
    std::vector<std::string> warnings;
    const auto model = open_decoder(o.reader, "", "config.json", error, &warnings);
    REQUIRE(model);
    CHECK(model->shape().arch == "gpt2");
    CHECK(model->shape().hidden == 128);
    CHECK(weights_dtype(o.reader) == "F32");

    DecoderConfig config;
    CHECK_FALSE(parse_decoder_config(R"({"model_type": "mistral", "hidden_size": 32})", "x/config.json", config, error));
    CHECK(error == "x/config.json: \"model_type\" \"mistral\" is not supported; supported: gpt2, llama, qwen2, qwen3");
    CHECK_FALSE(open_decoder(o.reader, R"({"model_type": "mistral"})", "config.json", error));
    CHECK(error.find("supported: gpt2, llama, qwen2, qwen3") != std::string::npos);
}
