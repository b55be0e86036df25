#pragma once
// The pre-tokenizer split patterns of the byte-level BPE models, matched by hand-written code
// rather than a regular-expression engine. Each pattern is recognized by its exact text in
// tokenizer.json and any other pattern is refused (docs/architecture.md says why: the
// patterns in use are few, and exact code for them is faster and easier to prove than an
// engine for the Oniguruma subset). Matching follows the reference, Hugging Face's
// JavaScript: the first alternative that matches wins, and \s is \p{White_Space} in
// tokenizer.json patterns but JavaScript's \s in the ByteLevel pre-tokenizer's own pattern.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

struct SplitPattern {
    enum class Family {
        // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
        Gpt2,
        // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,K}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
        // (Llama 3 with K = 3; Qwen2/3 with \p{N} alone, K = 1)
        Llama3,
    };
    Family family = Family::Gpt2;
    bool js_space = false;  // \s is JavaScript's (ByteLevel's built-in pattern), else \p{White_Space}
    int max_digits = 1;     // K above
};

// The pattern a tokenizer.json "Regex" string is, or nullopt if it is not one we implement.
std::optional<SplitPattern> recognize_split_pattern(std::string_view regex);

// The pattern ByteLevel's use_regex applies (GPT-2's, with JavaScript's \s).
SplitPattern byte_level_pattern();

// Splits valid UTF-8 text into the pattern's matches (every character belongs to one), in
// order, appending views of `text` to `out`.
void split_by_pattern(const SplitPattern& pattern, std::string_view text, std::vector<std::string_view>& out);

}  // namespace attnlab
