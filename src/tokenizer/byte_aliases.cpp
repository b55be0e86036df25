#include "tokenizer/byte_aliases.h"

#include <cstdio>

#include "base/utf8.h"

namespace attnlab {

namespace {

// byte_of[cp] is the byte that code point cp stands for, or -1.
struct ByteAliases {
    int byte_of[256 + 68];
    ByteAliases() {
        for (int& b : byte_of) b = -1;
        int n = 0;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            byte_of[printable ? b : 256 + n++] = b;
        }
    }
};
const ByteAliases kAliases;

}  // namespace

bool unalias_bytes(std::string_view text, std::string& bytes, std::string& why) {
    bytes.clear();
    for (size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const int n = utf8_next(text, i, cp);
        if (n < 0) {
            why = "is not valid UTF-8";
            return false;
        }
        const int b = cp < sizeof(kAliases.byte_of) / sizeof(int) ? kAliases.byte_of[cp] : -1;
        if (b < 0) {
            char hex[16];
            std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
            why = std::string("has the character ") + hex + ", which stands for no byte in the byte-level alphabet";
            return false;
        }
        bytes.push_back(static_cast<char>(b));
        i += static_cast<size_t>(n);
    }
    return true;
}

}  // namespace attnlab
