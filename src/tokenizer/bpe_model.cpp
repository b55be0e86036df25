#include "tokenizer/bpe_model.h"

#include <functional>
#include <queue>

#include "base/json.h"
#include "base/utf8.h"

namespace attnlab {

namespace {

// Pre-tokens longer than this are not cached: the cache is for words, which repeat.
constexpr size_t kMaxCachedPiece = 256;

std::string fallback_token(int byte) {
    static const char* hex = "0123456789ABCDEF";
    return std::string("<0x") + hex[byte >> 4] + hex[byte & 15] + ">";
}

}  // namespace

int BpeModel::set_tokens(std::vector<std::string> tokens) {
    tokens_ = std::move(tokens);
    overridden_.clear();
    final_id_.clear();
    return index_.build(tokens_);
}

bool BpeModel::set_merges(const std::vector<std::pair<int, int>>& merges, const Options& options, std::string& error) {
    options_ = options;
    merges_.clear();
    merges_.reserve(merges.size());
    std::string joined;  // one buffer for all merges: a string each was much of a load's time
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const auto [l, r] = merges[rank];
        const std::string &left = tokens_[static_cast<size_t>(l)], &right = tokens_[static_cast<size_t>(r)];
        joined.assign(left).append(right);
        const int made = index_.find(joined, tokens_);
        if (made < 0 || !merges_.emplace(pair_key(l, r), Merge{static_cast<int>(rank), made}).second) {
            error = "merge " + std::to_string(rank) + " (" + json::quote(left) + " + " + json::quote(right) + ")" +
                    (made >= 0 ? " appears twice" : " makes a string that is not in the vocabulary");
            return false;
        }
    }
    for (int b = 0; b < 256; ++b)
        (options_.byte_level ? byte_id_ : fallback_id_)[b] =
            index_.find(options_.byte_level ? std::string(1, static_cast<char>(b)) : fallback_token(b), tokens_);
    char_id_.clear();
    if (!options_.byte_level) {
        for (size_t id = 0; id < tokens_.size(); ++id) {
            const std::string& t = tokens_[id];
            char32_t cp = 0;
            if (!t.empty() && utf8_next(t, 0, cp) == static_cast<int>(t.size())) char_id_.emplace(cp, static_cast<int>(id));
        }
    }
    return true;
}

void BpeModel::override_token(const std::string& content, int id) {
    const int was = find(content);
    if (was >= 0 && was < size()) {
        if (final_id_.empty()) {
            final_id_.resize(tokens_.size());
            for (size_t i = 0; i < final_id_.size(); ++i) final_id_[i] = static_cast<int>(i);
        }
        final_id_[static_cast<size_t>(was)] = id;
    }
    overridden_[content] = id;  // a single byte keeps its model id in byte_id_: bpe() maps it through final_id()
}

int BpeModel::find(std::string_view text) const {
    if (!overridden_.empty())
        if (const auto it = overridden_.find(std::string(text)); it != overridden_.end()) return it->second;
    return index_.find(text, tokens_);
}

// A symbol the vocabulary lacks: its "<0xAB>" tokens if byte fallback has them all, else the
// unknown token, else nothing (as the reference does).
void BpeModel::missing_symbol(std::string_view text, std::vector<int>& out) const {
    const int whole = find(text);  // an added token may name it
    if (whole >= 0) {
        out.push_back(whole);
        return;
    }
    if (options_.byte_fallback) {
        bool all = true;
        for (unsigned char b : text) all = all && fallback_id_[b] >= 0;
        if (all) {
            for (unsigned char b : text) out.push_back(final_id(fallback_id_[b]));
            return;
        }
    }
    if (options_.unk_id >= 0) out.push_back(options_.unk_id);
}

void BpeModel::encode(std::string_view piece, std::unordered_map<std::string, std::vector<int>>& cache, std::vector<int>& out) const {
    if (piece.empty()) return;
    if (options_.ignore_merges) {
        const int id = find(piece);
        if (id >= 0) {
            out.push_back(id);
            return;
        }
    }
    if (piece.size() > kMaxCachedPiece) {
        bpe(piece, out);
        return;
    }
    auto it = cache.find(std::string(piece));
    if (it == cache.end()) {
        std::vector<int> ids;
        bpe(piece, ids);
        it = cache.emplace(std::string(piece), std::move(ids)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
}

// BPE of one pre-token: repeatedly merge the adjacent pair with the lowest rank, the leftmost
// first, until no adjacent pair is a merge (the reference's order: rank, then position). A heap
// of candidate pairs over a linked list of symbols makes it n log n, so a pre-token of a
// million characters (SentencePiece models see whole texts) is fast.
void BpeModel::bpe(std::string_view piece, std::vector<int>& out) const {
    std::vector<int> id, next, prev;
    std::vector<size_t> start;  // byte offset of each symbol
    const size_t reserve = piece.size();
    id.reserve(reserve);
    start.reserve(reserve + 1);
    if (options_.byte_level) {
        for (size_t i = 0; i < piece.size(); ++i) {
            id.push_back(byte_id_[static_cast<unsigned char>(piece[i])]);
            start.push_back(i);
        }
    } else {
        for (size_t i = 0; i < piece.size();) {
            char32_t cp = 0xFFFD;
            const int len = utf8_next(piece, i, cp);
            const auto it = char_id_.find(cp);
            id.push_back(it == char_id_.end() ? -1 : it->second);
            start.push_back(i);
            i += static_cast<size_t>(len > 0 ? len : -len);
        }
    }
    start.push_back(piece.size());
    const int n = static_cast<int>(id.size());
    next.resize(n);
    prev.resize(n);
    for (int i = 0; i < n; ++i) {
        next[i] = i + 1 < n ? i + 1 : -1;
        prev[i] = i - 1;
    }
    struct Candidate {
        int rank, pos, left, right, merged;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
    auto consider = [&](int pos) {
        const int right = next[pos];
        if (id[pos] < 0 || id[right] < 0) return;
        const auto it = merges_.find(pair_key(id[pos], id[right]));
        if (it != merges_.end()) heap.push({it->second.rank, pos, id[pos], id[right], it->second.merged});
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);
    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        // Skip pairs that earlier merges changed: a symbol's id only changes by merging, and
        // its right neighbour only by merging with it, so the ids say it all.
        const int right = next[c.pos];
        if (id[c.pos] != c.left || right < 0 || id[right] != c.right) continue;
        id[c.pos] = c.merged;
        id[right] = -2;
        next[c.pos] = next[right];
        if (next[right] >= 0) prev[next[right]] = c.pos;
        if (prev[c.pos] >= 0) consider(prev[c.pos]);
        if (next[c.pos] >= 0) consider(c.pos);
    }
    for (int i = 0; i >= 0; i = next[i]) {
        if (id[i] >= 0) out.push_back(final_id(id[i]));
        else missing_symbol(piece.substr(start[i], start[i + 1] - start[i]), out);
    }
}

}  // namespace attnlab
