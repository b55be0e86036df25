#pragma once
// The components of a loaded tokenizer (see tokenizer.h for the order they run in), built by
// tokenizer_json.cpp from tokenizer.json and by gpt2_files.cpp from GPT-2's files.
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/split_patterns.h"

namespace attnlab {

struct NormalizerStep {
    enum class Kind { Nfc, Prepend, Replace };
    Kind kind;
    std::string text;         // Prepend: what; Replace: the literal to replace
    std::string replacement;  // Replace
};

struct PreTokenizerStep {
    enum class Kind { Pattern, Literal, Digits, ByteLevel };
    enum class Behavior { Isolated, Removed, MergedWithPrevious };
    Kind kind;
    SplitPattern pattern;  // Pattern; ByteLevel with use_regex
    std::string literal;   // Literal
    Behavior behavior = Behavior::Isolated;
    bool individual_digits = false;  // Digits
    bool use_regex = false;          // ByteLevel
    bool add_prefix_space = false;   // ByteLevel
};

struct AddedToken {
    std::string content;
    int id;
    bool special, lstrip, rstrip, normalized;
};

// Finds added tokens in text: the longest at each place, from the left.
class AddedTokenTrie {
public:
    void add(const std::string& content, int token);  // token: an index into added tokens
    bool empty() const { return nodes_.size() <= 1; }
    // The longest token starting at text[i]: its index, and its length in `len`; or -1.
    int match(std::string_view text, size_t i, size_t& len) const;

private:
    struct Node {
        int token = -1;
        std::vector<std::pair<unsigned char, int>> kids;
    };
    std::vector<Node> nodes_{1};
};

struct TokenizerPipeline {
    std::vector<NormalizerStep> normalizer;
    std::vector<PreTokenizerStep> pre_tokenizer;
    BpeModel model;
    std::vector<AddedToken> added;
    AddedTokenTrie raw_trie;                             // added tokens found before normalization
    AddedTokenTrie normalized_trie;                      // those found after it ("normalized": true)
    std::unordered_map<std::string, int> added_by_text;  // content (and normalized content) -> index
    std::vector<int> prefix, suffix;                     // the post-processor's ids around the text
    std::vector<std::string> id_text;                    // id -> bytes, for decoding
    int eot_id = -1;
};

}  // namespace attnlab

namespace attnlab {

// Completes a pipeline whose model, added tokens and components are set: indexes the added
// tokens (tries, texts, the model's lookups) and the text of every id. `space` is what the
// normalizer writes for a space ("▁"), read back as a space when decoding; empty if none.
void index_pipeline(TokenizerPipeline& p, const std::string& space);

}  // namespace attnlab
