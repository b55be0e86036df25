#pragma once
// Token text -> id over a vocabulary held elsewhere: an open-addressing table of ids, so that a
// lookup costs one probe into a few hundred kilobytes and one comparison, with no node or key
// copy per token. std::unordered_map<std::string, int> made up about a third of loading a
// 50,000-token vocabulary (a node and a string per token, and a cache miss per lookup), and
// the CLI loads one on every start.
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

class TokenIndex {
public:
    // Indexes tokens[0..n). Returns the first id whose text repeats an earlier token's (that
    // id is not indexed: find() gives the earlier one), or -1 when all are distinct.
    int build(const std::vector<std::string>& tokens);
    // The id of `text` in the `tokens` given to build(), or -1.
    int find(std::string_view text, const std::vector<std::string>& tokens) const;

private:
    size_t slot_of(std::string_view text, const std::vector<std::string>& tokens) const;
    std::vector<int> slots_;  // ids, -1 where empty; a power of two at least twice the tokens
};

}  // namespace attnlab
