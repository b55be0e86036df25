#pragma once
// The text panel's long samples (issue 38): about 8,000 tokens of Genesis (assets/texts, the King
// James Version, public domain), and "a needle in 8,000 tokens": a distinctive phrase planted near
// the start, whose first half comes back at growing distances, so that an induction head's weight
// from each repeat's last token to the needle's continuation can be read against the distance.
// Pure strings and token ids: no ImGui, so that the unit tests link it alone.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

// Genesis 1-10 (KJV) laid out as the start sample is: a chapter title, one verse a line. 31,714
// bytes, 8,016 GPT-2 tokens. Compiled in from assets/texts/genesis-1-10.txt (CMake).
std::string_view genesis_text();

// The needle: its first half (what the repeats say) and its continuation (what only the planted
// copy says). Each starts with a space, so that it tokenizes alike wherever it stands.
inline constexpr std::string_view kNeedleFirstHalf = " Zorblax Quenthimble";
inline constexpr std::string_view kNeedleContinuation = " keeps the brass key under the ninth stone.";

// The repeats' distances from the needle, in bytes of filler (about 4 bytes a token): 20 to
// 7,500 tokens, so that a model with 256 positions sees the first few and one with 8,192 all.
inline constexpr int kNeedleRepeatBytes[] = {80, 200, 400, 800, 1600, 3200, 6400, 12800, 25600};

// `filler` (lines of text) with the needle planted after its first line and the first half
// repeated at the end of the line on which each kNeedleRepeatBytes distance is reached, and
// once more at the very end (where the model must predict the continuation).
std::string needle_text(std::string_view filler);

// One query of the needle plot: the position of a repeat's last token, and the key it should
// find (the needle's continuation: the token after the planted first half).
struct NeedleProbe {
    int query = 0, key = 0;
    int distance() const { return query - key; }
};

// Where `first_half` (token ids) occurs in `tokens`: the first occurrence is the planted needle
// (its next token is the key), each later one a query. Empty when it occurs fewer than twice or
// the first occurrence is the text's last token.
std::vector<NeedleProbe> needle_probes(std::span<const int> tokens, std::span<const int> first_half);

}  // namespace attnlab
