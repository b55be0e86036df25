#include "tokenizer/split_patterns.h"

#include "base/utf8.h"
#include "tokenizer/unicode_classes.h"

namespace attnlab {

namespace {

constexpr std::string_view kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// What the patterns need to know about a code point. Letters, numbers and white space are
// disjoint (checked by the generator for JavaScript's \s; \p{White_Space} has no L or N).
enum CharClass : unsigned char { kOther, kLetter, kNumber, kSpace };

struct Chars {
    std::vector<char32_t> cp;
    std::vector<CharClass> cls;
    std::vector<size_t> at;  // byte offset of each, plus the end
};

Chars read_chars(std::string_view text, bool js_space) {
    Chars c;
    c.cp.reserve(text.size());
    c.cls.reserve(text.size());
    c.at.reserve(text.size() + 1);
    for (size_t i = 0; i < text.size();) {
        char32_t cp = 0xFFFD;
        const int len = utf8_next(text, i, cp);  // the caller made the text valid
        CharClass k = kOther;
        if (cp < 0x80) {
            if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) k = kLetter;
            else if (cp >= '0' && cp <= '9') k = kNumber;
            else if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) k = kSpace;
        } else if (is_letter(cp)) k = kLetter;
        else if (is_number(cp)) k = kNumber;
        else if (js_space ? is_js_space(cp) : is_white_space(cp)) k = kSpace;
        c.cp.push_back(cp);
        c.cls.push_back(k);
        c.at.push_back(i);
        i += static_cast<size_t>(len > 0 ? len : -len);
    }
    c.at.push_back(text.size());
    return c;
}

char32_t ascii_lower(char32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// Length of a contraction ('s 't 're 've 'm 'll 'd) at i, or 0; `fold` reads the letters
// case-insensitively (ASCII only, as the reference's rewrite of (?i:...) does).
size_t contraction_length(const Chars& c, size_t i, bool fold) {
    const size_t n = c.cp.size();
    if (c.cp[i] != U'\'' || i + 1 >= n) return 0;
    auto at = [&](size_t k) { return fold ? ascii_lower(c.cp[k]) : c.cp[k]; };
    const char32_t a = at(i + 1);
    if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
    if (i + 2 < n) {
        const char32_t b = at(i + 2);
        if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
    }
    return 0;
}

size_t run_end(const Chars& c, size_t j, CharClass k) {
    while (j < c.cls.size() && c.cls[j] == k) ++j;
    return j;
}

// \s+(?!\S) then \s+ at white space i: the run, less its last character when a non-space
// follows and the run is longer than one (that character then prefixes the next piece).
size_t space_run(const Chars& c, size_t i) {
    const size_t j = run_end(c, i, kSpace);
    return (j == c.cls.size() || j - i == 1) ? j : j - 1;
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t gpt2_match(const Chars& c, size_t i) {
    const size_t n = c.cp.size();
    if (const size_t k = contraction_length(c, i, false)) return i + k;
    if (c.cls[i] != kSpace) return run_end(c, i, c.cls[i]);
    if (c.cp[i] == U' ' && i + 1 < n && c.cls[i + 1] != kSpace) return run_end(c, i + 1, c.cls[i + 1]);
    return space_run(c, i);
}

bool is_cr_lf(char32_t c) { return c == U'\r' || c == U'\n'; }

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,K}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t llama3_match(const Chars& c, size_t i, int max_digits) {
    const size_t n = c.cp.size();
    if (const size_t k = contraction_length(c, i, true)) return i + k;
    const CharClass k = c.cls[i];
    // [^\r\n\p{L}\p{N}]?\p{L}+ : a letter run, with one non-letter, non-number, non-CR/LF
    // character (white space included) in front.
    if (k == kLetter) return run_end(c, i, kLetter);
    if (k != kNumber && !is_cr_lf(c.cp[i]) && i + 1 < n && c.cls[i + 1] == kLetter) return run_end(c, i + 1, kLetter);
    // \p{N}{1,K}
    if (k == kNumber) {
        size_t j = i;
        while (j < n && c.cls[j] == kNumber && static_cast<int>(j - i) < max_digits) ++j;
        return j;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    size_t j = i;
    if (c.cp[j] == U' ' && j + 1 < n && c.cls[j + 1] == kOther) ++j;
    if (c.cls[j] == kOther) {
        j = run_end(c, j, kOther);
        while (j < n && is_cr_lf(c.cp[j])) ++j;
        return j;
    }
    // White space from here. \s*[\r\n]+ : up to the last CR or LF of the run.
    const size_t end = run_end(c, i, kSpace);
    for (size_t m = end; m > i; --m)
        if (is_cr_lf(c.cp[m - 1])) return m;
    return space_run(c, i);
}

}  // namespace

std::optional<SplitPattern> recognize_split_pattern(std::string_view regex) {
    if (regex == kGpt2Regex) return SplitPattern{SplitPattern::Family::Gpt2, false, 0};
    if (regex == kLlama3Regex) return SplitPattern{SplitPattern::Family::Llama3, false, 3};
    if (regex == kQwen2Regex) return SplitPattern{SplitPattern::Family::Llama3, false, 1};
    return std::nullopt;
}

SplitPattern byte_level_pattern() { return SplitPattern{SplitPattern::Family::Gpt2, true, 0}; }

void split_by_pattern(const SplitPattern& pattern, std::string_view text, std::vector<std::string_view>& out) {
    const Chars c = read_chars(text, pattern.js_space);
    const size_t n = c.cp.size();
    for (size_t i = 0; i < n;) {
        const size_t end = pattern.family == SplitPattern::Family::Gpt2 ? gpt2_match(c, i) : llama3_match(c, i, pattern.max_digits);
        out.push_back(text.substr(c.at[i], c.at[end] - c.at[i]));
        i = end;
    }
}

}  // namespace attnlab
