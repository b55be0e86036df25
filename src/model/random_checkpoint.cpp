#include "model/random_checkpoint.h"

#include <cstring>
#include <string>

#include "base/json.h"
#include "base/random.h"

namespace attnlab {

namespace {

struct T {
    std::string name;
    std::vector<std::int64_t> shape;
    bool norm = false;  // a norm's scale: around 1, not around 0
};

// The safetensors bytes of `ts`, F32, in list order, uniform in [-0.02, 0.02] (norms 1 +- 0.1).
std::vector<std::uint8_t> safetensors_of(const std::vector<T>& ts, std::uint64_t seed) {
    json::ObjectBuilder header;
    std::uint64_t offset = 0;
    std::vector<std::pair<std::uint64_t, bool>> spans;  // (floats, norm) per tensor
    for (const T& t : ts) {
        std::int64_t n = 1;
        std::string shape = "[";
        for (size_t i = 0; i < t.shape.size(); ++i) {
            n *= t.shape[i];
            if (i) shape += ',';
            shape += std::to_string(t.shape[i]);
        }
        const std::uint64_t bytes = static_cast<std::uint64_t>(n) * 4;
        header.add_raw(t.name, "{\"dtype\":\"F32\",\"shape\":" + shape + "],\"data_offsets\":[" + std::to_string(offset) + "," +
                                   std::to_string(offset + bytes) + "]}");
        offset += bytes;
        spans.emplace_back(static_cast<std::uint64_t>(n), t.norm);
    }
    std::string text = header.str();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<std::uint8_t> file(8 + text.size() + offset);
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
    std::memcpy(file.data() + 8, text.data(), text.size());
    float* data = reinterpret_cast<float*>(file.data() + 8 + text.size());
    SplitMix64 rng(seed);
    for (const auto& [count, norm] : spans)
        for (std::uint64_t i = 0; i < count; ++i, ++data)
            *data = norm ? 1.0f + static_cast<float>(rng.uniform() - 0.5) * 0.2f : static_cast<float>(rng.uniform() - 0.5) * 0.04f;
    return file;
}

}  // namespace

std::vector<std::uint8_t> random_checkpoint(const Gpt2Config& c, std::uint64_t seed) {
    const std::int64_t C = c.n_embd;
    std::vector<T> ts = {{"wte.weight", {c.vocab_size, C}}, {"wpe.weight", {c.n_positions, C}}};
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        for (const T& t : std::vector<T>{{h + "ln_1.weight", {C}},
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
    return safetensors_of(ts, seed);
}

std::vector<std::uint8_t> random_checkpoint(const LlamaConfig& c, std::uint64_t seed) {
    const std::int64_t C = c.hidden_size, Q = std::int64_t{c.num_attention_heads} * c.head_dim,
                       K = std::int64_t{c.num_key_value_heads} * c.head_dim, I = c.intermediate_size, d = c.head_dim;
    std::vector<T> ts = {{"model.embed_tokens.weight", {c.vocab_size, C}}};
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
    return safetensors_of(ts, seed);
}

}  // namespace attnlab
