#include "tokenizer/gpt2_tokenizer.h"

#include <cstdio>
#include <functional>
#include <queue>

#include "base/json.h"
#include "base/utf8.h"
#include "tokenizer/unicode_classes.h"

namespace attnlab {

namespace {

constexpr std::string_view kEndOfText = "<|endoftext|>";

// How many invalid UTF-8 sequences encode() describes one by one before it only counts them:
// a binary file would otherwise give one warning per few bytes.
constexpr int kMaxUtf8Warnings = 10;

// GPT-2's files write every byte as a printable character (bytes_to_unicode in encoder.py):
// the bytes that Latin-1 prints ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for
// themselves, and the other 68 (controls, space, DEL, the C1 block, NBSP, soft hyphen) are
// written as U+0100, U+0101, ... in byte order. So a space is "Ġ" (U+0120) and "\n" is "Ċ".
// byte_of[cp] is the byte that code point cp stands for, or -1.
struct ByteAliases {
    int byte_of[256 + 68];
    ByteAliases() {
        for (int& b : byte_of) b = -1;
        int n = 0;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            byte_of[printable ? b : 256 + n++] = b;
        }
    }
};
const ByteAliases kAliases;

// Turns a token as the files write it into its bytes. On failure says why.
bool unalias(std::string_view text, std::string& bytes, std::string& why) {
    bytes.clear();
    for (size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const int n = utf8_next(text, i, cp);
        if (n < 0) {
            why = "is not valid UTF-8";
            return false;
        }
        const int b = cp < sizeof(kAliases.byte_of) / sizeof(int) ? kAliases.byte_of[cp] : -1;
        if (b < 0) {
            char hex[16];
            std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
            why = std::string("has the character ") + hex + ", which stands for no byte in GPT-2's byte alphabet";
            return false;
        }
        bytes.push_back(static_cast<char>(b));
        i += static_cast<size_t>(n);
    }
    return true;
}

// What the pre-tokenizer needs to know about a code point.
enum CharClass : unsigned char { kOther, kLetter, kNumber, kSpace };

CharClass classify(char32_t c) {
    if (is_letter(c)) return kLetter;
    if (is_number(c)) return kNumber;
    if (is_js_space(c)) return kSpace;
    return kOther;
}

// Length in code points of a contraction ('s 't 're 've 'm 'll 'd, lower case and ASCII
// apostrophe only, as the pattern has them) starting at cps[i], or 0.
size_t contraction_length(const std::vector<char32_t>& cps, size_t i) {
    const size_t n = cps.size();
    if (cps[i] != U'\'' || i + 1 >= n) return 0;
    const char32_t a = cps[i + 1];
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if (i + 2 < n) {
        const char32_t b = cps[i + 2];
        if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
    }
    return 0;
}

}  // namespace

bool Gpt2Tokenizer::load(std::string_view encoder_json, std::string_view vocab_bpe, std::string& error) {
    *this = Gpt2Tokenizer();  // empty unless everything below succeeds

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
    std::vector<char> has_id(members.size(), 0);
    std::unordered_map<std::string, int> id_of;
    id_of.reserve(members.size());
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
        if (has_id[*id]) {
            error = "encoder.json: id " + std::to_string(*id) + " is given to two tokens";
            return false;
        }
        if (!id_of.emplace(bytes, static_cast<int>(*id)).second) {
            error = "encoder.json: token " + json::quote(token) + " appears twice";
            return false;
        }
        has_id[*id] = 1;
        vocab[*id] = bytes;
    }
    // Byte-level BPE starts from single bytes, so all 256 must be tokens.
    int byte_id[256];
    for (int b = 0; b < 256; ++b) {
        const auto it = id_of.find(std::string(1, static_cast<char>(b)));
        if (it == id_of.end()) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", b);
            error = std::string("encoder.json: no token for the byte ") + hex + " (byte-level BPE needs all 256)";
            return false;
        }
        byte_id[b] = it->second;
    }
    const auto eot = id_of.find(std::string(kEndOfText));
    if (eot == id_of.end()) {
        error = "encoder.json: no \"<|endoftext|>\" token";
        return false;
    }

    // --- vocab.bpe: "#version: 0.2", then one merge "left right" per line, by rank ---
    std::unordered_map<std::uint64_t, Merge> merges;
    merges.reserve(64 * 1024);
    std::string left, right;
    int line_no = 0;
    for (size_t pos = 0; pos < vocab_bpe.size();) {
        const size_t eol = vocab_bpe.find('\n', pos);
        std::string_view line = vocab_bpe.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
        pos = eol == std::string_view::npos ? vocab_bpe.size() : eol + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line_no == 1 && line.substr(0, 8) == "#version") continue;
        if (line.empty()) continue;  // the file ends with a newline
        const std::string where = "vocab.bpe line " + std::to_string(line_no) + ": ";
        const size_t space = line.find(' ');
        if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
            line.find(' ', space + 1) != std::string_view::npos) {
            error = where + "expected two tokens separated by one space, found " + json::quote(line);
            return false;
        }
        const std::string_view left_text = line.substr(0, space), right_text = line.substr(space + 1);
        if (!unalias(left_text, left, why)) {
            error = where + json::quote(left_text) + " " + why;
            return false;
        }
        if (!unalias(right_text, right, why)) {
            error = where + json::quote(right_text) + " " + why;
            return false;
        }
        // Symbols are handled as token ids, so both halves and the result must be tokens.
        const auto l = id_of.find(left), r = id_of.find(right), m = id_of.find(left + right);
        if (l == id_of.end() || r == id_of.end()) {
            error = where + json::quote(l == id_of.end() ? left_text : right_text) + " is not a token of encoder.json";
            return false;
        }
        if (m == id_of.end()) {
            error = where + "the merge makes " + json::quote(std::string(left_text) + std::string(right_text)) +
                    ", which is not a token of encoder.json";
            return false;
        }
        const int rank = static_cast<int>(merges.size());
        if (!merges.emplace(pair_key(l->second, r->second), Merge{rank, m->second}).second) {
            error = where + "the merge " + json::quote(line) + " appears twice";
            return false;
        }
    }
    if (merges.empty()) {
        error = "vocab.bpe: holds no merges";
        return false;
    }

    vocab_ = std::move(vocab);
    for (int b = 0; b < 256; ++b) byte_id_[b] = byte_id[b];
    merges_ = std::move(merges);
    eot_id_ = eot->second;
    return true;
}

// Byte-level BPE of one pre-token, with exactly the semantics of encoder.py's loop: find the
// adjacent pair with the lowest merge rank, merge every occurrence of it from left to right,
// repeat until no adjacent pair is a merge. Done with a heap of candidate pairs over a linked
// list of symbols, so a long pre-token (a run of a million spaces) costs n log n, not n^2.
void Gpt2Tokenizer::bpe(std::string_view piece, std::vector<int>& out) const {
    const int n = static_cast<int>(piece.size());
    if (n == 0) return;
    std::vector<int> id(n), next(n), prev(n);
    for (int i = 0; i < n; ++i) {
        id[i] = byte_id_[static_cast<unsigned char>(piece[i])];
        next[i] = i + 1 < n ? i + 1 : -1;
        prev[i] = i - 1;
    }
    // A pair (left symbol at `pos`, its right neighbour) as it was when it was seen. Symbols
    // keep the position of their first byte, so ordering by position is left to right.
    struct Candidate {
        int rank, pos, left, right, merged;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
    std::vector<Candidate> fresh;
    auto consider = [&](int pos, std::vector<Candidate>& into) {
        const int right = next[pos];
        const auto it = merges_.find(pair_key(id[pos], id[right]));
        if (it != merges_.end()) into.push_back({it->second.rank, pos, id[pos], id[right], it->second.merged});
    };
    for (int i = 0; i + 1 < n; ++i) consider(i, fresh);
    for (const Candidate& c : fresh) heap.push(c);

    while (!heap.empty()) {
        // One round of encoder.py's loop: every occurrence of the lowest-ranked pair, left to
        // right. Pairs these merges create wait for the next round, as they do in encoder.py.
        const int rank = heap.top().rank;
        fresh.clear();
        while (!heap.empty() && heap.top().rank == rank) {
            const Candidate c = heap.top();
            heap.pop();
            // Skip pairs that earlier merges changed: a symbol's id only ever changes by
            // merging, and its right neighbour only by merging with it, so the ids say it all.
            const int right = next[c.pos];
            if (id[c.pos] != c.left || right < 0 || id[right] != c.right) continue;
            id[c.pos] = c.merged;
            id[right] = -1;
            next[c.pos] = next[right];
            if (next[right] >= 0) prev[next[right]] = c.pos;
            if (prev[c.pos] >= 0) consider(prev[c.pos], fresh);
            if (next[c.pos] >= 0) consider(c.pos, fresh);
        }
        for (const Candidate& c : fresh) heap.push(c);
    }
    for (int i = 0; i >= 0; i = next[i]) out.push_back(id[i]);
}

void Gpt2Tokenizer::encode_text(std::string_view text, std::unordered_map<std::string, std::vector<int>>& cache,
                                std::vector<int>& out) const {
    // Code points, their classes, and where each starts in `text` (plus the end).
    std::vector<char32_t> cps;
    std::vector<CharClass> cls;
    std::vector<size_t> at;
    cps.reserve(text.size());
    cls.reserve(text.size());
    at.reserve(text.size() + 1);
    for (size_t i = 0; i < text.size();) {
        char32_t c = 0xFFFD;
        const int len = utf8_next(text, i, c);  // the caller made the text valid
        cps.push_back(c);
        cls.push_back(classify(c));
        at.push_back(i);
        i += static_cast<size_t>(len > 0 ? len : -len);
    }
    at.push_back(text.size());

    // GPT-2's pattern, one alternative at a time, in its order (the first that matches wins):
    //   's|'t|'re|'ve|'m|'ll|'d | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ | \s+(?!\S) | \s+
    // Every code point is exactly one of letter, number, space or other, so at a non-space
    // the match is a contraction or the run of that class; at a space " " the optional space
    // joins the run after it; otherwise a run of white space is taken.
    const size_t n = cps.size();
    auto run_end = [&](size_t j, CharClass c) {
        while (j < n && cls[j] == c) ++j;
        return j;
    };
    for (size_t i = 0; i < n;) {
        size_t end = i + contraction_length(cps, i);
        if (end > i) {
            // a contraction
        } else if (cls[i] != kSpace) {
            end = run_end(i, cls[i]);
        } else if (cps[i] == U' ' && i + 1 < n && cls[i + 1] != kSpace) {
            end = run_end(i + 1, cls[i + 1]);
        } else {
            // \s+(?!\S) backtracks off the last white space when a non-space follows the run,
            // leaving it to prefix the next word (" world"); a single white space before a
            // non-space fails that and is taken alone by \s+.
            const size_t j = run_end(i, kSpace);
            end = (j == n || j - i == 1) ? j : j - 1;
        }
        const std::string_view piece = text.substr(at[i], at[end] - at[i]);
        auto it = cache.find(std::string(piece));
        if (it == cache.end()) {
            std::vector<int> ids;
            bpe(piece, ids);
            it = cache.emplace(std::string(piece), std::move(ids)).first;
        }
        out.insert(out.end(), it->second.begin(), it->second.end());
        i = end;
    }
}

std::vector<int> Gpt2Tokenizer::encode(std::string_view bytes, std::vector<std::string>* warnings) const {
    std::vector<int> out;
    if (!loaded()) return out;

    // Step 1: make the input valid UTF-8, replacing each maximal invalid subpart by U+FFFD
    // (EF BF BD). Valid input, the usual case, is used as it is.
    std::string repaired;
    std::string_view text = bytes;
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
    if (invalid) {
        text = repaired;
        if (warnings && invalid > kMaxUtf8Warnings)
            warnings->push_back("... " + std::to_string(invalid - kMaxUtf8Warnings) + " more invalid UTF-8 sequences (" +
                                std::to_string(invalid) + " in all), each read as U+FFFD");
    }

    // Step 2: "<|endoftext|>" is a token of its own wherever it appears. Steps 3 and 4 run on
    // the text between, with one BPE cache for the whole call (a document repeats its words).
    std::unordered_map<std::string, std::vector<int>> cache;
    for (size_t pos = 0;;) {
        const size_t hit = text.find(kEndOfText, pos);
        encode_text(text.substr(pos, hit == std::string_view::npos ? std::string_view::npos : hit - pos), cache, out);
        if (hit == std::string_view::npos) break;
        out.push_back(eot_id_);
        pos = hit + kEndOfText.size();
    }
    return out;
}

std::string Gpt2Tokenizer::decode(std::span<const int> ids) const {
    std::string out;
    for (int id : ids)
        if (id >= 0 && id < vocab_size()) out += vocab_[static_cast<size_t>(id)];
    return out;
}

std::string Gpt2Tokenizer::token_bytes(int id) const {
    if (id < 0 || id >= vocab_size()) return std::string();
    return vocab_[static_cast<size_t>(id)];
}

}  // namespace attnlab
