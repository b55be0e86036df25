#include "model/random_checkpoint.h"

#include <cstring>
#include <string>

#include "base/json.h"
#include "base/random.h"

namespace attnlab {

std::vector<std::uint8_t> random_checkpoint(const Gpt2Config& c, std::uint64_t seed) {
    struct T {
        std::string name;
        std::vector<std::int64_t> shape;
    };
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
    json::ObjectBuilder header;
    std::uint64_t offset = 0;
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
    }
    std::string text = header.str();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<std::uint8_t> file(8 + text.size() + offset);
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
    std::memcpy(file.data() + 8, text.data(), text.size());
    float* data = reinterpret_cast<float*>(file.data() + 8 + text.size());
    SplitMix64 rng(seed);
    for (std::uint64_t i = 0; i < offset / 4; ++i) data[i] = static_cast<float>(rng.uniform() - 0.5) * 0.04f;
    return file;
}

}  // namespace attnlab
