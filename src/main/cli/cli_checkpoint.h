#pragma once
// A checkpoint on disk (GPT-2, Llama, Qwen2 or Qwen3), for the CLI commands that run the model.
#include <optional>
#include <string>
#include <vector>

#include "base/safetensors.h"
#include "model/gpt2.h"
#include "model/llama.h"
#include "platform/mapped_file.h"

namespace attnlab {

// The file mapped, indexed and bound to a model. Not movable: the model points into the map.
struct Checkpoint {
    MappedFile file;
    std::vector<MappedFile> shards;  // a sharded checkpoint's files, in its index's order
    SafetensorsReader reader;
    Gpt2Model model;                        // GPT-2 checkpoints (what the experiments read)
    LlamaModel llama;                       // llama, qwen2, qwen3
    const DecoderModel* decoder = nullptr;  // whichever of the two is loaded
    std::string path;                       // the model.safetensors actually opened
};

// `path` names model.safetensors, model.safetensors.index.json (a sharded checkpoint, its files
// beside it), or the folder holding either; config.json is read from the same folder when it is
// there (the Hugging Face layout). Warnings go to stderr. A checkpoint of any family config.json's
// model_type names ("gpt2", or no config.json: GPT-2); sets ck.decoder.
bool open_checkpoint(const std::string& path, Checkpoint& ck, std::string& error);

// The plan a command runs: the model's trained plan (config.json's "attnlab_attention"), then the
// --attention SPEC's items over it when given. On a bad spec, false with "--attention: " and the
// parser's message, which names the item and what is wrong with it.
bool attention_plan_option(const std::optional<std::string>& spec, const DecoderModel& model, AttentionPlan& plan, std::string& error);

// The --attention option's one-line help, shared by the commands that take it.
inline constexpr const char* kAttentionOptionHelp =
    "--attention SPEC   run the heads under an attention plan: comma-separated HEADS=NORMALIZER[@T], HEADS all, L.* or L.H,\n"
    "                   NORMALIZER softmax, sparsemax, entmax-1.5, entmax:ALPHA, ssmax:S or sa-softmax, @T a temperature\n"
    "                   (default 1); later items override earlier ones, e.g. all=ssmax:0.43,0.*=softmax@0.5\n";

}  // namespace attnlab
