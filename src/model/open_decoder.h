#pragma once
// The family a checkpoint's config.json names, bound to its tensors: GPT-2 (model_type "gpt2",
// or no config.json at all: the shape is then inferred from the tensors), or Llama, Qwen2 and
// Qwen3 (model/llama.h). The one dispatch on model_type, for the page and the CLI alike; any
// other model_type is refused with the engine's sentence listing the supported ones.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/safetensors.h"
#include "model/decoder.h"
#include "model/gpt2.h"
#include "model/llama.h"

namespace attnlab {

// config.json read for the family its model_type names: one of the two is set (neither for an
// empty text: a GPT-2 whose shape the tensors give). False with the engine's sentence otherwise.
struct DecoderConfig {
    std::optional<Gpt2Config> gpt2;
    std::optional<LlamaConfig> llama;
};
bool parse_decoder_config(std::string_view config_json, const std::string& config_source, DecoderConfig& config, std::string& error);

// `config_json` may be empty (no config.json); `config_source` names it in errors. The reader
// (and the bytes under it) must outlive the model. Warnings (an inferred shape) go to `warnings`.
std::unique_ptr<DecoderModel> open_decoder(const SafetensorsReader& reader, std::string_view config_json, const std::string& config_source,
                                           std::string& error, std::vector<std::string>* warnings = nullptr);

// The weights' dtype: "F32", "F16" or "BF16" when every matrix has it, "mixed" otherwise.
std::string weights_dtype(const SafetensorsReader& reader);

}  // namespace attnlab
