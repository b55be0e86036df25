#include "model/random_checkpoint.h"

#include <cstdio>
#include <string>

#include "base/random.h"
#include "base/safetensors_write.h"

namespace attnlab {

namespace {

struct Draw {
    std::string name;
    std::vector<std::int64_t> shape;
    bool norm = false;  // a Llama-family norm's scale: around 1, not around 0
};

// The tensors in list order with their random values, drawn one after another from one stream.
std::vector<TensorBytes> random_tensors(const std::vector<Draw>& draws, std::uint64_t seed, DType dtype) {
    SplitMix64 rng(seed);
    std::vector<TensorBytes> ts;
    std::vector<float> values;
    for (const Draw& d : draws) {
        std::int64_t n = 1;
        for (std::int64_t s : d.shape) n *= s;
        values.resize(static_cast<size_t>(n));
        for (float& v : values)
            // The norm's product in double, then one float add: 1.0f + x * 0.2f let g++ fuse a
            // multiply-add natively but not in wasm, and the two builds wrote different bytes.
            v = d.norm ? 1.0f + static_cast<float>((rng.uniform() - 0.5) * 0.2) : static_cast<float>(rng.uniform() - 0.5) * 0.04f;
        ts.push_back({d.name, dtype, d.shape, encode_floats(values, dtype)});
    }
    return ts;
}

// Every tensor of the Hugging Face GPT-2 layout, in file order.
std::vector<Draw> tensors_of(const Gpt2Config& c) {
    const std::int64_t C = c.n_embd;
    std::vector<Draw> ts = {{"wte.weight", {c.vocab_size, C}}, {"wpe.weight", {c.n_positions, C}}};
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        for (const Draw& t : std::vector<Draw>{{h + "ln_1.weight", {C}},
                                               {h + "ln_1.bias", {C}},
                                               {h + "attn.c_attn.weight", {C, 3 * C}},
                                               {h + "attn.c_attn.bias", {3 * C}},
                                               {h + "attn.c_proj.weight", {C, C}},
                                               {h + "attn.c_proj.bias", {C}},
                                               {h + "ln_2.weight", {C}},
                                               {h + "ln_2.bias", {C}},
                                               {h + "mlp.c_fc.weight", {C, 4 * C}},
                                               {h + "mlp.c_fc.bias", {4 * C}},
                                               {h + "mlp.c_proj.weight", {4 * C, C}},
                                               {h + "mlp.c_proj.bias", {C}}})
            ts.push_back(t);
    }
    ts.push_back({"ln_f.weight", {C}});
    ts.push_back({"ln_f.bias", {C}});
    return ts;
}

// The tensors a Llama-family config asks for, in the order Hugging Face saves them.
std::vector<Draw> tensors_of(const LlamaConfig& c) {
    const std::int64_t C = c.hidden_size, Q = std::int64_t{c.num_attention_heads} * c.head_dim,
                       K = std::int64_t{c.num_key_value_heads} * c.head_dim, I = c.intermediate_size, d = c.head_dim;
    std::vector<Draw> ts = {{"model.embed_tokens.weight", {c.vocab_size, C}}};
    for (int l = 0; l < c.num_hidden_layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        ts.push_back({p + "input_layernorm.weight", {C}, true});
        const std::int64_t outs[3] = {Q, K, K};
        const char* names[3] = {"q_proj", "k_proj", "v_proj"};
        for (int i = 0; i < 3; ++i) {
            ts.push_back({p + "self_attn." + names[i] + ".weight", {outs[i], C}});
            if (c.qkv_bias()) ts.push_back({p + "self_attn." + names[i] + ".bias", {outs[i]}});
        }
        if (c.qk_norm()) {
            ts.push_back({p + "self_attn.q_norm.weight", {d}, true});
            ts.push_back({p + "self_attn.k_norm.weight", {d}, true});
        }
        ts.push_back({p + "self_attn.o_proj.weight", {C, Q}});
        if (c.o_bias()) ts.push_back({p + "self_attn.o_proj.bias", {C}});
        ts.push_back({p + "post_attention_layernorm.weight", {C}, true});
        ts.push_back({p + "mlp.gate_proj.weight", {I, C}});
        ts.push_back({p + "mlp.up_proj.weight", {I, C}});
        ts.push_back({p + "mlp.down_proj.weight", {C, I}});
        if (c.mlp_bias)
            for (const char* m : {"gate_proj", "up_proj", "down_proj"})
                ts.push_back({p + "mlp." + m + ".bias", {std::string(m) == "down_proj" ? C : I}});
    }
    ts.push_back({"model.norm.weight", {C}, true});
    if (!c.tie_word_embeddings) ts.push_back({"lm_head.weight", {c.vocab_size, C}});
    return ts;
}

std::vector<CheckpointFile> files_of(std::vector<TensorBytes> ts, int shards) {
    if (shards <= 1) return {{"model.safetensors", safetensors_file(ts)}};
    std::uint64_t total = 0;
    for (const TensorBytes& t : ts) total += t.bytes.size();
    std::vector<CheckpointFile> files;
    std::vector<std::pair<std::string, std::string>> weight_map;
    std::vector<TensorBytes> shard;
    std::uint64_t written = 0;
    for (size_t i = 0; i < ts.size(); ++i) {
        written += ts[i].bytes.size();
        shard.push_back(std::move(ts[i]));
        const int s = static_cast<int>(files.size()) + 1;
        // A shard closes once it holds its share of the bytes, or when each later shard needs one
        // of the tensors left; the last takes the rest.
        const size_t left = ts.size() - i - 1;
        const bool close = s == shards ? left == 0
                                       : written * static_cast<std::uint64_t>(shards) >= total * static_cast<std::uint64_t>(s) ||
                                             left == static_cast<size_t>(shards - s);
        if (!close) continue;
        char name[64];
        std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s, shards);
        for (const TensorBytes& t : shard) weight_map.emplace_back(t.name, name);
        files.push_back({name, safetensors_file(shard)});
        shard.clear();
    }
    const std::string index = shard_index_json(weight_map, total);
    files.push_back({"model.safetensors.index.json", std::vector<std::uint8_t>(index.begin(), index.end())});
    return files;
}

}  // namespace

std::vector<std::uint8_t> random_checkpoint(const Gpt2Config& c, std::uint64_t seed, DType dtype) {
    return safetensors_file(random_tensors(tensors_of(c), seed, dtype));
}

std::vector<std::uint8_t> random_checkpoint(const LlamaConfig& c, std::uint64_t seed, DType dtype) {
    return safetensors_file(random_tensors(tensors_of(c), seed, dtype));
}

std::vector<CheckpointFile> random_checkpoint_files(const Gpt2Config& c, std::uint64_t seed, DType dtype, int shards) {
    return files_of(random_tensors(tensors_of(c), seed, dtype), shards);
}

std::vector<CheckpointFile> random_checkpoint_files(const LlamaConfig& c, std::uint64_t seed, DType dtype, int shards) {
    return files_of(random_tensors(tensors_of(c), seed, dtype), shards);
}

int random_checkpoint_tensors(const Gpt2Config& c) { return static_cast<int>(tensors_of(c).size()); }
int random_checkpoint_tensors(const LlamaConfig& c) { return static_cast<int>(tensors_of(c).size()); }

}  // namespace attnlab
