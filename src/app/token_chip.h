#pragma once
// How a token's bytes are shown, the same in the Text panel's chips, the tables and the tour's
// captions. Pure strings: no ImGui, so that tours (attnlab_view_state) can use it too.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

// How a token's bytes are shown on its chip: "·" for a space, "↵" for a newline, "⇥" for a tab,
// "\xNN" for other control bytes and for bytes that are not (complete) UTF-8.
std::string chip_label(std::string_view bytes);
// The exact bytes, escaped for the tooltip: printable ASCII as is (backslash doubled), "\x20"
// for a space, "\n" and "\t", "\xNN" for everything else (so multi-byte characters show as bytes).
std::string escaped_bytes(std::string_view bytes);

// Chips of `widths` px laid out in lines `line_width` px wide, `gap` px apart, as the text panel
// wraps them: a chip goes on the current line when it still fits after the gap, else it starts
// the next line (a chip wider than a line has a line of its own). Returns each line's first chip,
// so that a panel of thousands of tokens lays them out once and draws only the lines in view.
std::vector<int> chip_line_starts(std::span<const float> widths, float gap, float line_width);
// The line that holds chip `index` (line_starts from chip_line_starts; index >= 0).
int chip_line_of(std::span<const int> line_starts, int index);

}  // namespace attnlab
