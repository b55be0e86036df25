// The Llama family's weights through the loaders' one binding (model/checkpoint_tensors.h): F16
// and BF16 checkpoints stay 16-bit in memory and give the logits of the same values widened to
// F32 beforehand, to the bit (widening is exact); a sharded checkpoint gives the one-file
// checkpoint's logits, and a bad tensor in it is named with its shard.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/shard_index.h"
#include "model/gpt2_fixture.h"
#include "model/llama.h"
#include "model/random_checkpoint.h"

using namespace attnlab;
using attnlab::fixture::check_same_logits;
using attnlab::fixture::NarrowAndWide;

namespace {

// Small shapes of each architecture: GQA, biases (Qwen2's q/k/v; Llama's attention_bias and
// mlp_bias), tied and untied, head_dim apart from hidden / heads (Qwen3).
std::vector<LlamaConfig> configs() {
    std::vector<LlamaConfig> out;
    for (const LlamaArch arch : {LlamaArch::Llama, LlamaArch::Qwen2, LlamaArch::Qwen3}) {
        LlamaConfig c;
        c.arch = arch;
        c.num_hidden_layers = 2;
        c.num_attention_heads = 4;
        c.num_key_value_heads = 2;
        c.hidden_size = 48;
        c.head_dim = arch == LlamaArch::Qwen3 ? 16 : 12;
        c.intermediate_size = 80;
        c.vocab_size = 300;
        c.max_position_embeddings = 64;
        c.tie_word_embeddings = arch == LlamaArch::Qwen3;
        c.attention_bias = c.mlp_bias = arch == LlamaArch::Llama;
        out.push_back(c);
    }
    return out;
}

}  // namespace

TEST_CASE("llama family from F16 and BF16 files: 16-bit in memory, the logits of its values widened to F32", "[llama][weights16]") {
    for (const LlamaConfig& c : configs())
        for (DType dtype : {DType::F16, DType::BF16}) {
            INFO(arch_name(c.arch) << " " << dtype_name(dtype));
            const NarrowAndWide files(random_checkpoint(c, 5, dtype));
            LlamaModel narrow, wide;
            std::string error;
            INFO(error);
            REQUIRE(narrow.load(files.narrow, c, error));
            REQUIRE(wide.load(files.wide, c, error));
            const WeightType type = dtype == DType::F16 ? WeightType::f16 : WeightType::bf16;
            CHECK(narrow.embed.type == type);
            CHECK(narrow.lm_head.type == type);
            for (const LinearWeight* w : {&narrow.layers[1].qkv, &narrow.layers[1].o, &narrow.layers[1].gate, &narrow.layers[1].down})
                CHECK(w->type() == type);
            CHECK(wide.layers[1].qkv.type() == WeightType::f32);
            CHECK(files.in_narrow_file(narrow.embed.data));
            check_same_logits(narrow, wide, 23);
        }
}

TEST_CASE("llama family from shards equals the one-file checkpoint, and a bad tensor is named with its shard", "[llama][shards]") {
    for (const LlamaConfig& c : configs()) {
        INFO(arch_name(c.arch));
        const std::vector<std::uint8_t> one = random_checkpoint(c, 9, DType::BF16);
        const std::vector<CheckpointFile> files = random_checkpoint_files(c, 9, DType::BF16, 3);
        REQUIRE(files.size() == 4);
        ShardIndex index;
        std::string error;
        const std::string text(files.back().bytes.begin(), files.back().bytes.end());
        REQUIRE(parse_shard_index(text, "model.safetensors.index.json", index, error));
        std::vector<SafetensorsReader::Shard> shards;
        for (size_t i = 0; i < 3; ++i) shards.push_back({files[i].name, files[i].bytes});
        SafetensorsReader sharded, single;
        REQUIRE(sharded.open_shards(index, shards, error));
        REQUIRE(single.open(one, "model.safetensors", error));
        LlamaModel a, b;
        INFO(error);
        REQUIRE(a.load(sharded, c, error));
        REQUIRE(b.load(single, c, error));
        check_same_logits(a, b, 23);

        // A config that wants the MLP wider: refused naming the shard that holds the first such tensor.
        LlamaConfig wider = c;
        wider.intermediate_size = c.intermediate_size + 1;
        const std::string gate = "model.layers.0.mlp.gate_proj.weight";
        std::string holder;
        for (const auto& [name, file] : index.weight_map)
            if (name == gate) holder = file;
        REQUIRE_FALSE(holder.empty());
        LlamaModel bad;
        CHECK_FALSE(bad.load(sharded, wider, error));
        CHECK(error == holder + ": tensor '" + gate + "' has shape [80, 48], expected [81, 48] from config.json");
    }
}
