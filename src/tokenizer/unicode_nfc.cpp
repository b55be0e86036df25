#include "tokenizer/unicode_nfc.h"

#include <algorithm>
#include <vector>

#include "base/utf8.h"
#include "tokenizer/unicode_nfc_tables.h"

namespace attnlab {

namespace {

using namespace nfc_tables;

// Hangul syllables compose and decompose by arithmetic (Unicode ch. 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// Rank of the combining class of c; 0 for starters.
std::uint32_t mark_rank(char32_t c) {
    if (c < 0x300) return 0;
    const MarkRange* end = kMarks + kMarkCount;
    const MarkRange* it = std::lower_bound(kMarks, end, c, [](const MarkRange& r, char32_t v) { return r.last < v; });
    return it != end && it->first <= c ? it->rank : 0;
}

void decompose(char32_t c, std::vector<char32_t>& out) {
    if (c >= kSBase && c < kSBase + kSCount) {
        const char32_t s = c - kSBase;
        out.push_back(kLBase + s / kNCount);
        out.push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount) out.push_back(kTBase + s % kTCount);
        return;
    }
    const Decomposition* end = kDecompositions + kDecompositionCount;
    const Decomposition* it = std::lower_bound(kDecompositions, end, c, [](const Decomposition& d, char32_t v) { return d.cp < v; });
    if (it == end || it->cp != c) {
        out.push_back(c);
        return;
    }
    out.insert(out.end(), kDecompositionPool + it->at, kDecompositionPool + it->at + it->len);
}

// The primary composite of a + b, or 0.
char32_t compose(char32_t a, char32_t b) {
    if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
        return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) return a + (b - kTBase);
    const Composition* end = kCompositions + kCompositionCount;
    const Composition* it =
        std::lower_bound(kCompositions, end, std::make_pair(a, b), [](const Composition& c, const std::pair<char32_t, char32_t>& v) {
            return c.first != v.first ? c.first < v.first : c.second < v.second;
        });
    return it != end && it->first == a && it->second == b ? it->composite : 0;
}

}  // namespace

std::string nfc(std::string_view utf8) {
    // Text below U+0300 is in NFC whatever surrounds it, and nothing composes with it... except
    // that a base letter below U+0300 composes with a following mark. So only pure ASCII /
    // Latin-1 text is returned as it is; the rest goes through the full algorithm.
    bool simple = true;
    for (unsigned char b : utf8)
        if (b >= 0xCC) {  // lead bytes of U+0300 and above
            simple = false;
            break;
        }
    if (simple) return std::string(utf8);

    // 1. Full canonical decomposition.
    std::vector<char32_t> d;
    d.reserve(utf8.size());
    for (size_t i = 0; i < utf8.size();) {
        char32_t c = 0xFFFD;
        const int n = utf8_next(utf8, i, c);
        decompose(c, d);
        i += static_cast<size_t>(n > 0 ? n : -n);
    }
    // 2. Canonical ordering: each run of marks sorted, stably, by combining class.
    std::vector<std::uint32_t> rank(d.size());
    for (size_t i = 0; i < d.size(); ++i) rank[i] = mark_rank(d[i]);
    for (size_t i = 0; i < d.size();) {
        if (!rank[i]) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < d.size() && rank[j]) ++j;
        for (size_t a = i + 1; a < j; ++a)  // insertion sort: runs are short
            for (size_t b = a; b > i && rank[b - 1] > rank[b]; --b) {
                std::swap(d[b - 1], d[b]);
                std::swap(rank[b - 1], rank[b]);
            }
        i = j;
    }
    // 3. Canonical composition: each character joins the last starter unless a character
    // between them is blocking (a starter, or a mark of the same or a higher class).
    std::vector<char32_t> out;
    std::vector<std::uint32_t> out_rank;
    out.reserve(d.size());
    long starter = -1;
    for (size_t i = 0; i < d.size(); ++i) {
        const char32_t c = d[i];
        const std::uint32_t r = rank[i];
        if (starter >= 0) {
            const bool adjacent = static_cast<size_t>(starter) + 1 == out.size();
            const std::uint32_t last = out_rank.back();
            if (adjacent || (last != 0 && last < r)) {
                if (const char32_t p = compose(out[static_cast<size_t>(starter)], c)) {
                    out[static_cast<size_t>(starter)] = p;
                    continue;
                }
            }
        }
        if (r == 0) starter = static_cast<long>(out.size());
        out.push_back(c);
        out_rank.push_back(r);
    }
    std::string result;
    result.reserve(utf8.size());
    for (char32_t c : out) append_utf8(result, c);
    return result;
}

}  // namespace attnlab
