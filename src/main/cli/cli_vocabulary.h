#pragma once
// The GPT-2 vocabulary for CLI commands: --vocab-dir DIR, or the repository's assets/gpt2.
#include <optional>
#include <string>

#include "tokenizer/gpt2_tokenizer.h"

namespace attnlab {

// Reads DIR/encoder.json and DIR/vocab.bpe into `tokenizer` (DIR defaults to the assets folder
// the CLI was built with). Returns false with a message naming the file otherwise.
bool load_vocabulary(const std::optional<std::string>& dir, Gpt2Tokenizer& tokenizer, std::string& error);

}  // namespace attnlab
