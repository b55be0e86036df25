// Tokenizer::load: GPT-2's original files, encoder.json (token -> id) and vocab.bpe (the
// merges in rank order), read into the same pipeline that GPT-2's tokenizer.json describes:
// byte-level BPE with GPT-2's pattern and "<|endoftext|>" as the one added token.
#include <cstdio>

#include "base/json.h"
#include "tokenizer/byte_aliases.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_pipeline.h"

namespace attnlab {

namespace {

constexpr std::string_view kEndOfText = "<|endoftext|>";

bool unalias(std::string_view text, std::string& bytes, std::string& why) { return unalias_bytes(text, bytes, why); }

}  // namespace

bool Tokenizer::load(std::string_view encoder_json, std::string_view vocab_bpe, std::string& error) {
    p_.reset();  // empty unless everything below succeeds

    // --- encoder.json: {"token": id, ...}, ids numbering the tokens 0..N-1 ---
    const json::ParseResult parsed = json::parse(encoder_json);
    if (!parsed.value) {
        error = "encoder.json: not valid JSON: " + parsed.error;
        return false;
    }
    if (!parsed.value->is_object()) {
        error =
            std::string("encoder.json: expected an object mapping tokens to ids, found ") + json::Value::type_name(parsed.value->type());
        return false;
    }
    const auto& members = parsed.value->members();
    if (members.empty()) {
        error = "encoder.json: holds no tokens";
        return false;
    }
    const std::int64_t n_vocab = static_cast<std::int64_t>(members.size());
    std::vector<std::string> vocab(members.size());
    std::vector<const std::string*> written(members.size(), nullptr);  // each id's token as the file writes it
    std::string bytes, why;
    for (const auto& [token, value] : members) {
        if (token.empty()) {
            error = "encoder.json: has an empty token";
            return false;
        }
        if (!unalias(token, bytes, why)) {
            error = "encoder.json: token " + json::quote(token) + " " + why;
            return false;
        }
        // N distinct ids in 0..N-1 number the tokens without gaps.
        const auto id = value.as_int(0, n_vocab - 1);
        if (!id) {
            error = "encoder.json: token " + json::quote(token) + " has " +
                    (value.is_number() ? "id " + value.as_string() : std::string(json::Value::type_name(value.type())) + " for id") +
                    ", expected a whole number from 0 to " + std::to_string(n_vocab - 1);
            return false;
        }
        if (written[*id]) {
            error = "encoder.json: id " + std::to_string(*id) + " is given to two tokens";
            return false;
        }
        written[*id] = &token;
        vocab[*id] = bytes;
    }
    auto p = std::make_shared<TokenizerPipeline>();
    if (const int repeat = p->model.set_tokens(std::move(vocab)); repeat >= 0) {
        error = "encoder.json: token " + json::quote(*written[repeat]) + " appears twice";
        return false;
    }
    const BpeModel& model = p->model;
    // Byte-level BPE starts from single bytes, so all 256 must be tokens.
    for (int b = 0; b < 256; ++b) {
        if (model.find(std::string(1, static_cast<char>(b))) < 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", b);
            error = std::string("encoder.json: no token for the byte ") + hex + " (byte-level BPE needs all 256)";
            return false;
        }
    }
    const int eot = model.find(kEndOfText);
    if (eot < 0) {
        error = "encoder.json: no \"<|endoftext|>\" token";
        return false;
    }

    // --- vocab.bpe: "#version: 0.2", then one merge "left right" per line, by rank ---
    std::vector<std::pair<int, int>> merges;
    std::unordered_map<std::uint64_t, int> merge_line;  // (left id, right id) -> its line, to name repeats
    merges.reserve(64 * 1024);
    merge_line.reserve(64 * 1024);
    std::string left, right, joined;
    int line_no = 0;
    for (size_t pos = 0; pos < vocab_bpe.size();) {
        const size_t eol = vocab_bpe.find('\n', pos);
        std::string_view line = vocab_bpe.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
        pos = eol == std::string_view::npos ? vocab_bpe.size() : eol + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line_no == 1 && line.substr(0, 8) == "#version") continue;
        if (line.empty()) continue;  // the file ends with a newline
        const auto where = [line_no] { return "vocab.bpe line " + std::to_string(line_no) + ": "; };
        const size_t space = line.find(' ');
        if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
            line.find(' ', space + 1) != std::string_view::npos) {
            error = where() + "expected two tokens separated by one space, found " + json::quote(line);
            return false;
        }
        const std::string_view left_text = line.substr(0, space), right_text = line.substr(space + 1);
        if (!unalias(left_text, left, why)) {
            error = where() + json::quote(left_text) + " " + why;
            return false;
        }
        if (!unalias(right_text, right, why)) {
            error = where() + json::quote(right_text) + " " + why;
            return false;
        }
        // Symbols are handled as token ids, so both halves and the result must be tokens.
        joined.assign(left).append(right);
        const int l = model.find(left), r = model.find(right);
        if (l < 0 || r < 0) {
            error = where() + json::quote(l < 0 ? left_text : right_text) + " is not a token of encoder.json";
            return false;
        }
        if (model.find(joined) < 0) {
            error = where() + "the merge makes " + json::quote(std::string(left_text) + std::string(right_text)) +
                    ", which is not a token of encoder.json";
            return false;
        }
        merges.emplace_back(l, r);
        const std::uint64_t pair = (static_cast<std::uint64_t>(l) << 32) | static_cast<std::uint32_t>(r);
        if (const auto [first, added] = merge_line.emplace(pair, line_no); !added) {
            error = where() + "the merge " + json::quote(line) + " appears twice (first on line " + std::to_string(first->second) + ")";
            return false;
        }
    }
    if (merges.empty()) {
        error = "vocab.bpe: holds no merges";
        return false;
    }

    BpeModel::Options options;
    options.byte_level = true;
    if (!p->model.set_merges(merges, options, error)) {
        error = "vocab.bpe: " + error;
        return false;
    }
    PreTokenizerStep byte_level;
    byte_level.kind = PreTokenizerStep::Kind::ByteLevel;
    byte_level.use_regex = true;
    byte_level.pattern = byte_level_pattern();
    p->pre_tokenizer.push_back(byte_level);
    p->added.push_back(AddedToken{std::string(kEndOfText), eot, true, false, false, false});
    index_pipeline(*p, "");
    p_ = std::move(p);
    return true;
}

}  // namespace attnlab
