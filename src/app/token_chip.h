#pragma once
// How a token's bytes are shown, the same in the Text panel's chips, the tables and the tour's
// captions. Pure strings: no ImGui, so that tours (attnlab_view_state) can use it too.
#include <string>
#include <string_view>

namespace attnlab {

// How a token's bytes are shown on its chip: "·" for a space, "↵" for a newline, "⇥" for a tab,
// "\xNN" for other control bytes and for bytes that are not (complete) UTF-8.
std::string chip_label(std::string_view bytes);
// The exact bytes, escaped for the tooltip: printable ASCII as is (backslash doubled), "\x20"
// for a space, "\n" and "\t", "\xNN" for everything else (so multi-byte characters show as bytes).
std::string escaped_bytes(std::string_view bytes);

}  // namespace attnlab
