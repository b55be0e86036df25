// libFuzzer target: arbitrary bytes as a Llama-family config.json (llama, qwen2, qwen3). Besides
// crashes and sanitizer reports, it traps when an accepted config breaks the parser's promises
// (heads a multiple of key/value heads, an even head_dim, a known rope type), when the config
// AttnLab writes for it reads back differently, when a small model of that shape with random
// weights (F32, F16 or BF16, picked by the input) does not bind and run to finite logits, or when
// the same checkpoint short of one tensor binds, or is refused without naming that tensor.
// Built and run by scripts/fuzz.sh.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/safetensors.h"
#include "base/safetensors_write.h"
#include "model/llama.h"
#include "model/random_checkpoint.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool same_shape(const attnlab::LlamaConfig& a, const attnlab::LlamaConfig& b) {
    return a.arch == b.arch && a.num_hidden_layers == b.num_hidden_layers && a.num_attention_heads == b.num_attention_heads &&
           a.num_key_value_heads == b.num_key_value_heads && a.hidden_size == b.hidden_size && a.head_dim == b.head_dim &&
           a.intermediate_size == b.intermediate_size && a.vocab_size == b.vocab_size && a.rope_theta == b.rope_theta &&
           a.rope_scaling.type == b.rope_scaling.type && a.tie_word_embeddings == b.tie_word_embeddings && a.qkv_bias() == b.qkv_bias() &&
           a.o_bias() == b.o_bias() && a.mlp_bias == b.mlp_bias;
}

// The checkpoint's tensors without tensor `skip`, as one file.
std::vector<std::uint8_t> without(const attnlab::SafetensorsReader& reader, std::size_t skip) {
    using namespace attnlab;
    std::vector<TensorBytes> ts;
    for (std::size_t i = 0; i < reader.tensors().size(); ++i) {
        if (i == skip) continue;
        const TensorInfo& t = reader.tensors()[i];
        const std::span<const std::uint8_t> b = reader.bytes(t);
        ts.push_back({t.name, t.dtype, t.shape, std::vector<std::uint8_t>(b.begin(), b.end())});
    }
    return safetensors_file(ts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnlab;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    LlamaConfig c;
    std::string error;
    if (!parse_llama_config(text, "config.json", c, error)) {
        check(error.rfind("config.json: ", 0) == 0);
        return 0;
    }
    check(c.num_key_value_heads > 0 && c.num_attention_heads % c.num_key_value_heads == 0);
    check(c.head_dim > 0 && c.head_dim % 2 == 0 && c.rope_theta > 0.0);
    for (double f : rope_inverse_frequencies(c)) check(f > 0.0 && std::isfinite(f));
    LlamaConfig again;
    check(parse_llama_config(llama_config_json(c), "again", again, error));
    check(same_shape(c, again));

    // A model of this shape, when it is small: binds and runs; short of one tensor, refused by name.
    const std::int64_t C = c.hidden_size, V = c.vocab_size, I = c.intermediate_size, qd = std::int64_t{c.num_attention_heads} * c.head_dim;
    if (c.num_hidden_layers > 2 || C > 64 || V > 64 || I > 64 || qd > 64 || c.max_position_embeddings < 3) return 0;
    const DType dtype = size % 3 == 0 ? DType::F32 : size % 3 == 1 ? DType::F16 : DType::BF16;
    const std::vector<std::uint8_t> file = random_checkpoint(c, size, dtype);
    SafetensorsReader reader;
    check(reader.open(file, "model.safetensors", error));
    LlamaModel model;
    check(model.load(reader, c, error));
    LlamaState state(model);
    std::vector<float> logits;
    check(state.forward(std::vector<int>{0, static_cast<int>(V - 1), 0}, logits, error));
    check(logits.size() == static_cast<std::size_t>(V));
    for (float v : logits) check(std::isfinite(v));
    const std::size_t skip = size % reader.tensors().size();
    const std::vector<std::uint8_t> short_file = without(reader, skip);
    SafetensorsReader short_reader;
    check(short_reader.open(short_file, "short.safetensors", error));
    LlamaModel short_model;
    check(!short_model.load(short_reader, c, error));
    check(error.find("'" + reader.tensors()[skip].name + "'") != std::string::npos);
    return 0;
}
