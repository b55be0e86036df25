#pragma once
// A GPT-2 checkpoint of any shape with random weights, as the bytes of a safetensors file in
// the Hugging Face layout: for benchmarks at GPT-2 small's size, and for tests that need
// shapes the committed fixtures do not have. Weights are uniform in [-0.02, 0.02].
#include <cstdint>
#include <vector>

#include "model/gpt2.h"
#include "model/llama.h"

namespace attnlab {

std::vector<std::uint8_t> random_checkpoint(const Gpt2Config& config, std::uint64_t seed = 1);
// The same for the Llama family (llama, qwen2, qwen3: the tensors config asks for); norm scales
// are 1 +- 0.1 so that the layers' inputs keep their size.
std::vector<std::uint8_t> random_checkpoint(const LlamaConfig& config, std::uint64_t seed = 1);

}  // namespace attnlab
