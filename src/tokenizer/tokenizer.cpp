#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <deque>

#include "base/utf8.h"
#include "tokenizer/byte_aliases.h"
#include "tokenizer/tokenizer_pipeline.h"
#include "tokenizer/unicode_classes.h"
#include "tokenizer/unicode_nfc.h"

namespace attnlab {

namespace {

// How many invalid UTF-8 sequences encode() describes one by one before it only counts them:
// a binary file would otherwise give one warning per few bytes.
constexpr int kMaxUtf8Warnings = 10;

using Cache = std::unordered_map<std::string, std::vector<int>>;

// The bytes made valid UTF-8, each maximal invalid subpart replaced by U+FFFD (EF BF BD).
// Valid input, the usual case, is returned as a view of itself.
std::string_view repair_utf8(std::string_view bytes, std::string& repaired, std::vector<std::string>* warnings) {
    long invalid = 0;
    for (size_t i = 0; i < bytes.size();) {
        char32_t cp = 0;
        const int len = utf8_next(bytes, i, cp);
        if (len > 0) {
            if (invalid) repaired.append(bytes.substr(i, static_cast<size_t>(len)));
            i += static_cast<size_t>(len);
            continue;
        }
        if (!invalid) repaired.assign(bytes.substr(0, i));
        ++invalid;
        if (warnings && invalid <= kMaxUtf8Warnings) {
            std::string hex;
            for (int k = 0; k < -len; ++k) {
                char b[8];
                std::snprintf(b, sizeof b, k ? " %02X" : "%02X", static_cast<unsigned>(static_cast<unsigned char>(bytes[i + k])));
                hex += b;
            }
            warnings->push_back("invalid UTF-8 at byte offset " + std::to_string(i) + " (" + hex + "), read as U+FFFD");
        }
        repaired.append("\xEF\xBF\xBD");
        i += static_cast<size_t>(-len);
    }
    if (!invalid) return bytes;
    if (warnings && invalid > kMaxUtf8Warnings)
        warnings->push_back("... " + std::to_string(invalid - kMaxUtf8Warnings) + " more invalid UTF-8 sequences (" +
                            std::to_string(invalid) + " in all), each read as U+FFFD");
    return repaired;
}

// JavaScript's trimStart / trimEnd (its \s), which the reference uses for lstrip / rstrip.
std::string_view trim_start(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        char32_t cp = 0;
        const int n = utf8_next(s, i, cp);
        if (n <= 0 || !is_js_space(cp)) break;
        i += static_cast<size_t>(n);
    }
    return s.substr(i);
}
std::string_view trim_end(std::string_view s) {
    size_t end = s.size();
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
        char32_t cp = 0;
        if (utf8_next(s, start, cp) <= 0 || !is_js_space(cp)) break;
        end = start;
    }
    return s.substr(0, end);
}

// A piece of text between added tokens, or an added token (`added` >= 0).
struct Section {
    std::string_view text;
    int added = -1;
};

std::vector<Section> split_added(const TokenizerPipeline& p, const AddedTokenTrie& trie, std::string_view text) {
    std::vector<Section> out;
    size_t start = 0;
    for (size_t i = 0; i < text.size();) {
        size_t len = 0;
        const int hit = trie.match(text, i, len);
        if (hit < 0) {
            ++i;
            continue;
        }
        if (i > start) out.push_back({text.substr(start, i - start)});
        out.push_back({text.substr(i, len), hit});
        i += len;
        start = i;
    }
    if (start < text.size()) out.push_back({text.substr(start)});
    for (size_t k = 0; k < out.size(); ++k) {
        if (out[k].added < 0) continue;
        const AddedToken& t = p.added[static_cast<size_t>(out[k].added)];
        if (t.lstrip && k > 0 && out[k - 1].added < 0) out[k - 1].text = trim_end(out[k - 1].text);
        if (t.rstrip && k + 1 < out.size() && out[k + 1].added < 0) out[k + 1].text = trim_start(out[k + 1].text);
    }
    return out;
}

std::string replace_all(const std::string& s, const std::string& from, std::string_view to) {
    std::string r;
    r.reserve(s.size());
    for (size_t pos = 0;;) {
        const size_t hit = s.find(from, pos);
        r.append(s, pos, hit == std::string::npos ? std::string::npos : hit - pos);
        if (hit == std::string::npos) break;
        r.append(to);
        pos = hit + from.size();
    }
    return r;
}

std::string normalize(const std::vector<NormalizerStep>& steps, std::string_view text) {
    std::string s(text);
    for (const NormalizerStep& step : steps) {
        switch (step.kind) {
            case NormalizerStep::Kind::Nfc: s = nfc(s); break;
            case NormalizerStep::Kind::Prepend: s.insert(0, step.text); break;
            case NormalizerStep::Kind::Replace: s = replace_all(s, step.text, step.replacement); break;
        }
    }
    return s;
}

// One pre-tokenizer step over every piece. New strings (a prefix space) live in `arena`.
void pre_tokenize_step(const PreTokenizerStep& step, std::vector<std::string_view>& pieces, std::deque<std::string>& arena) {
    std::vector<std::string_view> out;
    out.reserve(pieces.size() * 2);
    for (std::string_view piece : pieces) {
        switch (step.kind) {
            case PreTokenizerStep::Kind::Pattern: split_by_pattern(step.pattern, piece, out); break;
            case PreTokenizerStep::Kind::ByteLevel:
                if (step.add_prefix_space && piece.substr(0, 1) != " ") {
                    arena.emplace_back(1, ' ');
                    arena.back().append(piece);
                    piece = arena.back();
                }
                if (step.use_regex) split_by_pattern(step.pattern, piece, out);
                else out.push_back(piece);
                break;
            case PreTokenizerStep::Kind::Digits:
                for (size_t i = 0; i < piece.size();) {
                    const bool digit = piece[i] >= '0' && piece[i] <= '9';
                    size_t j = i + 1;
                    if (!digit || !step.individual_digits)
                        while (j < piece.size() && (piece[j] >= '0' && piece[j] <= '9') == digit) ++j;
                    out.push_back(piece.substr(i, j - i));
                    i = j;
                }
                break;
            case PreTokenizerStep::Kind::Literal: {
                size_t start = 0;  // where the current piece began
                for (size_t pos = 0;;) {
                    const size_t hit = step.literal.empty() ? std::string_view::npos : piece.find(step.literal, pos);
                    if (hit == std::string_view::npos) break;
                    const size_t after = hit + step.literal.size();
                    if (step.behavior == PreTokenizerStep::Behavior::MergedWithPrevious) {
                        out.push_back(piece.substr(start, after - start));
                    } else {
                        if (hit > start) out.push_back(piece.substr(start, hit - start));
                        if (step.behavior == PreTokenizerStep::Behavior::Isolated) out.push_back(piece.substr(hit, after - hit));
                    }
                    start = pos = after;
                }
                if (start < piece.size()) out.push_back(piece.substr(start));
                break;
            }
        }
    }
    pieces.swap(out);
}

// Ids of text between added tokens, after normalization: pre-tokenizer, then the model.
void encode_words(const TokenizerPipeline& p, std::string_view text, Cache& cache, std::vector<int>& out) {
    std::vector<std::string_view> pieces{text};
    std::deque<std::string> arena;  // views into it must stay put
    for (const PreTokenizerStep& step : p.pre_tokenizer) pre_tokenize_step(step, pieces, arena);
    const size_t first = out.size();
    for (std::string_view piece : pieces) p.model.encode(piece, cache, out);
    const int unk = p.model.options().unk_id;
    if (p.model.options().fuse_unk && unk >= 0) {  // runs of the unknown token become one
        size_t w = first;
        for (size_t r = first; r < out.size(); ++r)
            if (!(out[r] == unk && w > first && out[w - 1] == unk)) out[w++] = out[r];
        out.resize(w);
    }
}

// One section that is not an added token: normalized, searched for the added tokens that are
// matched after normalization, and the rest encoded.
void encode_section(const TokenizerPipeline& p, std::string_view text, Cache& cache, std::vector<int>& out) {
    if (text.empty()) return;
    if (const auto it = p.added_by_text.find(std::string(text)); it != p.added_by_text.end()) {
        out.push_back(p.added[static_cast<size_t>(it->second)].id);
        return;
    }
    const std::string normalized = p.normalizer.empty() ? std::string(text) : normalize(p.normalizer, text);
    if (normalized.empty()) return;
    if (p.normalized_trie.empty()) {
        encode_words(p, normalized, cache, out);
        return;
    }
    for (const Section& s : split_added(p, p.normalized_trie, normalized)) {
        if (s.added >= 0) out.push_back(p.added[static_cast<size_t>(s.added)].id);
        else if (!s.text.empty()) {
            const auto it = p.added_by_text.find(std::string(s.text));
            if (it != p.added_by_text.end()) out.push_back(p.added[static_cast<size_t>(it->second)].id);
            else encode_words(p, s.text, cache, out);
        }
    }
}

}  // namespace

void AddedTokenTrie::add(const std::string& content, int token) {
    int node = 0;
    for (unsigned char b : content) {
        int next = -1;
        for (const auto& [byte, kid] : nodes_[static_cast<size_t>(node)].kids)
            if (byte == b) next = kid;
        if (next < 0) {
            next = static_cast<int>(nodes_.size());
            nodes_[static_cast<size_t>(node)].kids.emplace_back(b, next);
            nodes_.emplace_back();
        }
        node = next;
    }
    if (node > 0 && nodes_[static_cast<size_t>(node)].token < 0) nodes_[static_cast<size_t>(node)].token = token;
}

int AddedTokenTrie::match(std::string_view text, size_t i, size_t& len) const {
    int node = 0, best = -1;
    for (size_t j = i; j < text.size(); ++j) {
        int next = -1;
        const unsigned char b = static_cast<unsigned char>(text[j]);
        for (const auto& [byte, kid] : nodes_[static_cast<size_t>(node)].kids)
            if (byte == b) {
                next = kid;
                break;
            }
        if (next < 0) break;
        node = next;
        if (nodes_[static_cast<size_t>(node)].token >= 0) {
            best = nodes_[static_cast<size_t>(node)].token;
            len = j + 1 - i;
        }
    }
    return best;
}

std::vector<int> Tokenizer::encode(std::string_view bytes, std::vector<std::string>* warnings) const {
    std::vector<int> out;
    if (!p_) return out;
    std::string repaired;
    const std::string_view text = repair_utf8(bytes, repaired, warnings);
    out = p_->prefix;
    Cache cache;  // one call's words repeat: BPE each once
    if (p_->raw_trie.empty()) encode_section(*p_, text, cache, out);
    else
        for (const Section& s : split_added(*p_, p_->raw_trie, text)) {
            if (s.added >= 0) out.push_back(p_->added[static_cast<size_t>(s.added)].id);
            else encode_section(*p_, s.text, cache, out);
        }
    out.insert(out.end(), p_->suffix.begin(), p_->suffix.end());
    return out;
}

std::string Tokenizer::decode(std::span<const int> ids) const {
    std::string out;
    for (int id : ids) out += token_bytes(id);
    return out;
}

std::string Tokenizer::token_bytes(int id) const {
    if (!p_ || id < 0 || id >= vocab_size()) return std::string();
    return p_->id_text[static_cast<size_t>(id)];
}

int Tokenizer::vocab_size() const { return p_ ? static_cast<int>(p_->id_text.size()) : 0; }

std::optional<int> Tokenizer::token_id(std::string_view content) const {
    if (!p_) return std::nullopt;
    if (const auto it = p_->added_by_text.find(std::string(content)); it != p_->added_by_text.end())
        return p_->added[static_cast<size_t>(it->second)].id;
    const int id = p_->model.find(content);
    return id >= 0 ? std::optional<int>(id) : std::nullopt;
}

int Tokenizer::eot_id() const { return p_ ? p_->eot_id : -1; }

}  // namespace attnlab

namespace attnlab {

void index_pipeline(TokenizerPipeline& p, const std::string& space) {
    const bool byte_level = p.model.options().byte_level;
    int size = p.model.size();
    for (size_t k = 0; k < p.added.size(); ++k) {
        const AddedToken& t = p.added[k];
        size = std::max(size, t.id + 1);
        (t.normalized && !p.normalizer.empty() ? p.normalized_trie : p.raw_trie).add(t.content, static_cast<int>(k));
        p.added_by_text.emplace(t.content, static_cast<int>(k));
        if (t.normalized && !p.normalizer.empty()) p.added_by_text.emplace(normalize(p.normalizer, t.content), static_cast<int>(k));
        // The reference looks the model's output up by text with added tokens first.
        std::string bytes, why;
        if (!byte_level) p.model.override_token(t.content, t.id);
        else if (unalias_bytes(t.content, bytes, why)) p.model.override_token(bytes, t.id);
        if (t.content == "<|endoftext|>") p.eot_id = t.id;
    }
    p.id_text.assign(static_cast<size_t>(size), std::string());
    const bool fallback = p.model.options().byte_fallback;
    for (int id = 0; id < p.model.size(); ++id) {
        std::string text = p.model.token(id);
        auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
        if (!byte_level && fallback && text.size() == 6 && text.compare(0, 3, "<0x") == 0 && text[5] == '>' && hex(text[3]) >= 0 &&
            hex(text[4]) >= 0)
            text = std::string(1, static_cast<char>(hex(text[3]) * 16 + hex(text[4])));
        else if (!space.empty()) text = replace_all(text, space, " ");
        p.id_text[static_cast<size_t>(id)] = text;
    }
    for (const AddedToken& t : p.added) p.id_text[static_cast<size_t>(t.id)] = t.content;
}

}  // namespace attnlab
