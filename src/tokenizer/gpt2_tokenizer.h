#pragma once
// GPT-2's byte-level BPE tokenizer, exactly as OpenAI's encoder.py defines it, built from the
// two files GPT-2 ships: encoder.json (token -> id) and vocab.bpe (the merges, in rank order).
//
// Encoding runs in four steps:
//   1. the input bytes are decoded as UTF-8; invalid sequences become U+FFFD, one per maximal
//      subpart (as Python's bytes.decode('utf-8', errors='replace') and the WHATWG decoder do);
//   2. the text is split on the literal "<|endoftext|>", which becomes its own id (50256), as
//      Hugging Face and tiktoken with special tokens allowed do;
//   3. each piece is pre-tokenized by GPT-2's pattern
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      read with JavaScript's \s (the reference implementations are JavaScript);
//   4. each pre-token's UTF-8 bytes are merged by BPE, lowest merge rank first.
//
// No I/O: load() takes the files' bytes. Tokens are handled as raw bytes throughout; the
// printable-character alias of each byte that the files use (bytes_to_unicode in encoder.py)
// is undone at load time.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnlab {

class Gpt2Tokenizer {
public:
    // Builds the tokenizer from the bytes of encoder.json and vocab.bpe. On a fault returns
    // false, leaves the tokenizer empty, and sets `error` to a sentence naming the file and
    // the problem (a line number for vocab.bpe).
    bool load(std::string_view encoder_json, std::string_view vocab_bpe, std::string& error);
    bool loaded() const { return !vocab_.empty(); }

    // Token ids of any byte sequence. If the bytes are not valid UTF-8, each invalid
    // sequence is read as U+FFFD and, when `warnings` is given, a warning names its byte
    // offset. Safe to call from several threads: the BPE cache lives for one call.
    std::vector<int> encode(std::string_view bytes, std::vector<std::string>* warnings = nullptr) const;

    // The bytes of a sequence of ids, concatenated. Exact: decode(encode(s)) == s for valid
    // UTF-8 s. Ids outside the vocabulary contribute nothing (check with vocab_size() first).
    std::string decode(std::span<const int> ids) const;

    // The bytes of one token; empty for an id outside the vocabulary.
    std::string token_bytes(int id) const;

    int vocab_size() const { return static_cast<int>(vocab_.size()); }
    int eot_id() const { return eot_id_; }  // "<|endoftext|>", 50256 for GPT-2

private:
    // One BPE merge, keyed by the ids of its two halves: its rank (its line in vocab.bpe,
    // lower merges first) and the id of the token it makes.
    struct Merge {
        int rank;
        int merged;
    };
    static std::uint64_t pair_key(int left, int right) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
    }

    // Appends the ids of one pre-token (its UTF-8 bytes) to `out`.
    void bpe(std::string_view piece, std::vector<int>& out) const;
    // Appends the ids of text that is valid UTF-8 and holds no "<|endoftext|>".
    void encode_text(std::string_view text, std::unordered_map<std::string, std::vector<int>>& cache, std::vector<int>& out) const;

    std::vector<std::string> vocab_;  // id -> bytes
    int byte_id_[256] = {};           // id of each single-byte token
    std::unordered_map<std::uint64_t, Merge> merges_;
    int eot_id_ = -1;
};

}  // namespace attnlab
