#include "base/utf8.h"

namespace attnlab {

int utf8_next(std::string_view s, std::size_t i, char32_t& cp) {
    const unsigned char b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    int more = 0;  // continuation bytes to come
    char32_t c = 0;
    // The first continuation byte has a narrower range after some lead bytes: that is what
    // rules out overlong forms (E0, F0), surrogates (ED) and values past U+10FFFF (F4).
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        more = 1;
        c = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        more = 2;
        c = b0 & 0x0F;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        more = 3;
        c = b0 & 0x07;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        return -1;  // a continuation byte, C0, C1 or F5..FF: never valid as a lead byte
    }
    for (int k = 1; k <= more; ++k) {
        if (i + k >= s.size()) return -k;  // truncated by the end of the input
        const unsigned char b = static_cast<unsigned char>(s[i + k]);
        if (b < lo || b > hi) return -k;
        c = (c << 6) | (b & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    cp = c;
    return more + 1;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace attnlab
