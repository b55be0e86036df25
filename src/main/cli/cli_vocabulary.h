#pragma once
// Tokenizers for CLI commands: GPT-2's vocabulary (--vocab-dir DIR, or the repository's
// assets/gpt2), or a model folder's tokenizer.json (--model DIR).
#include <optional>
#include <string>

#include "main/cli/cli_args.h"
#include "tokenizer/gpt2_tokenizer.h"

namespace attnlab {

// Reads DIR/encoder.json and DIR/vocab.bpe into `tokenizer` (DIR defaults to the assets folder
// the CLI was built with). Returns false with a message naming the file otherwise.
bool load_vocabulary(const std::optional<std::string>& dir, Gpt2Tokenizer& tokenizer, std::string& error);

// Reads DIR/tokenizer.json and, if present, DIR/tokenizer_config.json; a folder with GPT-2's
// encoder.json and vocab.bpe instead is read as those. No weights are needed.
bool load_model_tokenizer(const std::string& dir, Tokenizer& tokenizer, std::string& error);

// The tokenizer a command's --text goes through: --vocab-dir's GPT-2 vocabulary when given, else
// the tokenizer.json beside --model (its folder, or the folder of its file), else GPT-2's. Without
// this a Llama or Qwen model read its text in GPT-2's ids, wrong tokens that its vocabulary of
// 150k accepted without a word.
bool load_text_tokenizer(const CliArgs& args, Tokenizer& tokenizer, std::string& error);

}  // namespace attnlab
