#pragma once
// The BPE model of a tokenizer: a vocabulary, ranked merges, and what happens to a symbol the
// vocabulary lacks (byte fallback, the unknown token, or nothing). Symbols are either the
// bytes of a pre-token (byte-level BPE, GPT-2 style: the vocabulary's printable aliases of
// bytes are undone at load time) or its code points (SentencePiece style, "▁" for space).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/token_index.h"

namespace attnlab {

class BpeModel {
public:
    struct Options {
        bool byte_level = false;     // symbols are bytes (else code points)
        bool byte_fallback = false;  // a missing symbol becomes its bytes' "<0xAB>" tokens
        bool ignore_merges = false;  // a pre-token that is a token is taken whole
        bool fuse_unk = false;       // consecutive unknown tokens become one
        int unk_id = -1;             // the unknown token, or -1 (missing symbols vanish)
    };

    // Built in two steps, so that a loader can find() the merges' halves in the model's own
    // index. First `tokens[id]`, the tokens as the model writes them (raw bytes for byte-level:
    // the caller undid the aliases); returns the first id whose text repeats an earlier
    // token's, or -1. Then the merges, pairs of ids by rank; false with a message if a merge's
    // result is not a token or a merge repeats.
    int set_tokens(std::vector<std::string> tokens);
    bool set_merges(const std::vector<std::pair<int, int>>& merges, const Options& options, std::string& error);

    // Makes `content` (as the model writes it) map to `id` wherever the model looks a token up
    // by its text (added tokens do this in the reference).
    void override_token(const std::string& content, int id);

    // Appends the ids of one pre-token. `cache` lives for one encode call.
    void encode(std::string_view piece, std::unordered_map<std::string, std::vector<int>>& cache, std::vector<int>& out) const;

    int size() const { return static_cast<int>(tokens_.size()); }
    const std::string& token(int id) const { return tokens_[static_cast<size_t>(id)]; }
    int find(std::string_view text) const;  // -1 if not a token
    const Options& options() const { return options_; }

private:
    struct Merge {
        int rank;
        int merged;
    };
    static std::uint64_t pair_key(int left, int right) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
    }
    void bpe(std::string_view piece, std::vector<int>& out) const;
    void missing_symbol(std::string_view text, std::vector<int>& out) const;
    int final_id(int id) const { return id < static_cast<int>(final_id_.size()) ? final_id_[static_cast<size_t>(id)] : id; }

    Options options_;
    std::vector<std::string> tokens_;
    TokenIndex index_;                                 // text -> id of tokens_
    std::unordered_map<std::string, int> overridden_;  // text -> id, for added tokens (looked up first)
    std::vector<int> final_id_;                        // model id -> id reported (overrides)
    std::unordered_map<std::uint64_t, Merge> merges_;
    int byte_id_[256] = {};                      // byte-level: each byte's token, or -1
    int fallback_id_[256] = {};                  // byte fallback: "<0xAB>" tokens, or -1
    std::unordered_map<char32_t, int> char_id_;  // code-point symbols' tokens
};

}  // namespace attnlab
