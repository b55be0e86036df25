#pragma once
// A GPT-2 checkpoint on disk, for the CLI commands that run the model.
#include <string>

#include "model/gpt2.h"
#include "base/safetensors.h"
#include "platform/mapped_file.h"

namespace attnlab {

// The file mapped, indexed and bound to a model. Not movable: the model points into the map.
struct Checkpoint {
    MappedFile file;
    SafetensorsReader reader;
    Gpt2Model model;
    std::string path;  // the model.safetensors actually opened
};

// `path` names model.safetensors, or the folder holding it; config.json is read from the
// same folder when it is there (the Hugging Face layout). Warnings go to stderr.
bool open_checkpoint(const std::string& path, Checkpoint& ck, std::string& error);

}  // namespace attnlab
