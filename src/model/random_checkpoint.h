#pragma once
// A checkpoint of any shape with random weights, as the bytes of safetensors files in the Hugging
// Face layout of its family (GPT-2, or Llama, Qwen2 and Qwen3): for benchmarks at real models'
// sizes, and for tests that need shapes the committed fixtures do not have. Weights are uniform
// in [-0.02, 0.02] (a Llama-family norm's scale 1 +- 0.1, so that the layers' inputs keep their
// size), stored as F32, F16 or BF16 (rounded to nearest even); the same seed draws the same values
// in each.
#include <cstdint>
#include <string>
#include <vector>

#include "base/safetensors.h"
#include "model/gpt2.h"
#include "model/llama.h"

namespace attnlab {

std::vector<std::uint8_t> random_checkpoint(const Gpt2Config& config, std::uint64_t seed = 1, DType dtype = DType::F32);
std::vector<std::uint8_t> random_checkpoint(const LlamaConfig& config, std::uint64_t seed = 1, DType dtype = DType::F32);

// The same checkpoint as files: model.safetensors alone for one shard; for more, the tensors in
// order split into `shards` files of about equal size, named as Hugging Face names them
// (model-00001-of-00003.safetensors, ...), then model.safetensors.index.json.
struct CheckpointFile {
    std::string name;
    std::vector<std::uint8_t> bytes;
};
std::vector<CheckpointFile> random_checkpoint_files(const Gpt2Config& config, std::uint64_t seed, DType dtype, int shards);
std::vector<CheckpointFile> random_checkpoint_files(const LlamaConfig& config, std::uint64_t seed, DType dtype, int shards);

// How many tensors such a checkpoint has: at most that many shards.
int random_checkpoint_tensors(const Gpt2Config& config);
int random_checkpoint_tensors(const LlamaConfig& config);

}  // namespace attnlab
