#include "model/random_checkpoint.h"

#include <cstdio>
#include <string>

#include "base/random.h"
#include "base/safetensors_write.h"

namespace attnlab {

namespace {

// Every tensor of the Hugging Face GPT-2 layout, in file order, with its random values.
std::vector<TensorBytes> random_tensors(const Gpt2Config& c, std::uint64_t seed, DType dtype) {
    const std::int64_t C = c.n_embd;
    std::vector<TensorBytes> ts = {{"wte.weight", dtype, {c.vocab_size, C}, {}}, {"wpe.weight", dtype, {c.n_positions, C}, {}}};
    for (int l = 0; l < c.n_layer; ++l) {
        const std::string h = "h." + std::to_string(l) + ".";
        for (const auto& [name, shape] :
             std::vector<std::pair<std::string, std::vector<std::int64_t>>>{{h + "ln_1.weight", {C}},
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
            ts.push_back({name, dtype, shape, {}});
    }
    ts.push_back({"ln_f.weight", dtype, {C}, {}});
    ts.push_back({"ln_f.bias", dtype, {C}, {}});
    SplitMix64 rng(seed);
    std::vector<float> values;
    for (TensorBytes& t : ts) {
        std::int64_t n = 1;
        for (std::int64_t d : t.shape) n *= d;
        values.resize(static_cast<size_t>(n));
        for (float& v : values) v = static_cast<float>(rng.uniform() - 0.5) * 0.04f;
        t.bytes = encode_floats(values, dtype);
    }
    return ts;
}

}  // namespace

std::vector<std::uint8_t> random_checkpoint(const Gpt2Config& c, std::uint64_t seed, DType dtype) {
    return safetensors_file(random_tensors(c, seed, dtype));
}

std::vector<CheckpointFile> random_checkpoint_files(const Gpt2Config& c, std::uint64_t seed, DType dtype, int shards) {
    std::vector<TensorBytes> ts = random_tensors(c, seed, dtype);
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

}  // namespace attnlab
