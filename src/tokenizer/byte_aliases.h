#pragma once
// Byte-level BPE files write every byte as a printable character (bytes_to_unicode in GPT-2's
// encoder.py): the bytes that Latin-1 prints ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand
// for themselves, and the other 68 (controls, space, DEL, the C1 block, NBSP, soft hyphen) are
// written as U+0100, U+0101, ... in byte order. So a space is "Ġ" (U+0120) and "\n" is "Ċ".
#include <string>
#include <string_view>

namespace attnlab {

// Turns a token as the files write it into its bytes. On failure says why in `why` (a
// phrase: "is not valid UTF-8", "has the character U+0020, which stands for no byte ...").
bool unalias_bytes(std::string_view text, std::string& bytes, std::string& why);

}  // namespace attnlab
