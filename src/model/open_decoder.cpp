#include "model/open_decoder.h"

namespace attnlab {

bool parse_decoder_config(std::string_view config_json, const std::string& config_source, DecoderConfig& config, std::string& error) {
    config = DecoderConfig{};
    if (config_json.empty()) return true;
    const std::string type = config_model_type(config_json);
    if (!type.empty() && type != "gpt2") {
        LlamaConfig c;  // refuses any other model_type, naming the supported ones
        if (!parse_llama_config(config_json, config_source, c, error)) return false;
        config.llama = std::move(c);
        return true;
    }
    Gpt2Config c;
    if (!parse_gpt2_config(config_json, config_source, c, error)) return false;
    config.gpt2 = std::move(c);
    return true;
}

std::unique_ptr<DecoderModel> open_decoder(const SafetensorsReader& reader, std::string_view config_json, const std::string& config_source,
                                           std::string& error, std::vector<std::string>* warnings) {
    DecoderConfig config;
    if (!parse_decoder_config(config_json, config_source, config, error)) return nullptr;
    if (config.llama) {
        auto llama = std::make_unique<LlamaModel>();
        if (!llama->load(reader, *config.llama, error)) return nullptr;
        return llama;
    }
    auto gpt2 = std::make_unique<Gpt2Model>();
    if (!gpt2->load(reader, config.gpt2 ? &*config.gpt2 : nullptr, error, warnings)) return nullptr;
    return gpt2;
}

std::string weights_dtype(const SafetensorsReader& reader) {
    std::string out;
    for (const TensorInfo& t : reader.tensors()) {
        if (t.shape.size() < 2) continue;  // norms and biases may be kept F32 beside 16-bit matrices
        const std::string name = dtype_name(t.dtype);
        if (out.empty()) out = name;
        else if (out != name) return "mixed";
    }
    return out;
}

}  // namespace attnlab
