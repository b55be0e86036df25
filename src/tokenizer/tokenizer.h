#pragma once
// One tokenizer for the BPE models AttnLab runs, read from Hugging Face's tokenizer.json (and
// tokenizer_config.json), or from GPT-2's original encoder.json + vocab.bpe. It encodes as
// Hugging Face's `tokenizer(text)["input_ids"]` does:
//   1. the input bytes are decoded as UTF-8; invalid sequences become U+FFFD, one per maximal
//      subpart (as Python's errors='replace' and the WHATWG decoder do), with a warning;
//   2. added tokens (special or not) are found in the text, longest first from the left, and
//      become their own ids; the text between them is encoded by steps 3 to 5;
//   3. the normalizer (NFC, Prepend, Replace, Sequence);
//   4. the pre-tokenizer: a split pattern (GPT-2's, Llama 3's, Qwen2's), a literal split,
//      Digits, ByteLevel (GPT-2's pattern and/or bytes as symbols), or a Sequence of them;
//   5. the BPE model (byte-level, or code points with byte fallback and "▁" for space);
//   6. the post-processor's special tokens (TemplateProcessing; ByteLevel adds none).
// Anything else in the files is refused with a message naming the field: a component that is
// not implemented is never approximated. No I/O: the load functions take the files' bytes.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

struct TokenizerPipeline;  // the components, tokenizer_pipeline.h

class Tokenizer {
public:
    // From the bytes of tokenizer.json and tokenizer_config.json (the latter may be empty:
    // there is none). On a fault returns false, leaves the tokenizer empty, and sets `error`
    // to a sentence naming the file and the field.
    bool load_json(std::string_view tokenizer_json, std::string_view tokenizer_config_json, std::string& error);

    // From the bytes of GPT-2's encoder.json and vocab.bpe: byte-level BPE with GPT-2's pattern
    // and "<|endoftext|>" as the one added token (what GPT-2's tokenizer.json says).
    bool load(std::string_view encoder_json, std::string_view vocab_bpe, std::string& error);

    bool loaded() const { return p_ != nullptr; }

    // Token ids of any byte sequence, the post-processor's special tokens included. If the
    // bytes are not valid UTF-8, each invalid sequence is read as U+FFFD and, when `warnings`
    // is given, a warning names its byte offset. Safe to call from several threads.
    std::vector<int> encode(std::string_view bytes, std::vector<std::string>* warnings = nullptr) const;

    // The bytes of a sequence of ids, concatenated (byte-level tokens are exact; SentencePiece
    // tokens have "▁" read as a space and "<0xAB>" as the byte). Ids outside contribute nothing.
    std::string decode(std::span<const int> ids) const;
    std::string token_bytes(int id) const;  // empty for an id outside

    int vocab_size() const;  // ids are 0..vocab_size()-1 (added tokens included)
    // The id of an added or model token written as `content`, if there is one.
    std::optional<int> token_id(std::string_view content) const;
    int eot_id() const;  // "<|endoftext|>" (50256 for GPT-2), or -1

private:
    // Immutable once loaded, so copies of a tokenizer share it.
    std::shared_ptr<const TokenizerPipeline> p_;
};

}  // namespace attnlab
