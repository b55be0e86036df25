#include "tokenizer/token_index.h"

#include <functional>

namespace attnlab {

// The slot holding `text`, or the empty slot where it would go (linear probing).
size_t TokenIndex::slot_of(std::string_view text, const std::vector<std::string>& tokens) const {
    const size_t mask = slots_.size() - 1;
    for (size_t at = std::hash<std::string_view>{}(text)&mask;; at = (at + 1) & mask) {
        const int id = slots_[at];
        if (id < 0 || tokens[static_cast<size_t>(id)] == text) return at;
    }
}

int TokenIndex::build(const std::vector<std::string>& tokens) {
    size_t capacity = 16;
    while (capacity < 2 * tokens.size()) capacity *= 2;
    slots_.assign(capacity, -1);
    int repeat = -1;
    for (size_t id = 0; id < tokens.size(); ++id) {
        int& slot = slots_[slot_of(tokens[id], tokens)];
        if (slot < 0) slot = static_cast<int>(id);
        else if (repeat < 0) repeat = static_cast<int>(id);
    }
    return repeat;
}

int TokenIndex::find(std::string_view text, const std::vector<std::string>& tokens) const {
    return slots_.empty() ? -1 : slots_[slot_of(text, tokens)];
}

}  // namespace attnlab
