#pragma once
// UTF-8, read and written exactly as Unicode defines it; shared by every reader of text.
#include <cstddef>
#include <string>
#include <string_view>

namespace attnlab {

// Reads one UTF-8 sequence at s[i]. Returns its length (1..4) and sets `cp` if it is valid.
// Otherwise returns -k, where k >= 1 is the length of the "maximal subpart" to replace by one
// U+FFFD (Unicode ch. 3, "U+FFFD Substitution of Maximal Subparts"; Python's errors='replace'
// and the WHATWG decoder both follow it): the lead byte plus the continuation bytes that
// could still have begun a valid sequence. Overlong forms, surrogates and values past
// U+10FFFF are invalid.
int utf8_next(std::string_view s, std::size_t i, char32_t& cp);

// Appends code point cp (at most U+10FFFF, not a surrogate) as UTF-8.
void append_utf8(std::string& out, char32_t cp);

}  // namespace attnlab
