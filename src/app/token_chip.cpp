#include "app/token_chip.h"

#include <algorithm>
#include <cstdio>

#include "base/utf8.h"

namespace attnlab {

namespace {

void append_hex(std::string& out, unsigned char b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", b);
    out += buf;
}

}  // namespace

std::string chip_label(std::string_view bytes) {
    std::string out;
    size_t i = 0;
    while (i < bytes.size()) {
        char32_t cp = 0;
        const int n = utf8_next(bytes, i, cp);
        if (n < 0) {  // not (complete) UTF-8: show the raw bytes
            for (int k = 0; k < -n; ++k) append_hex(out, static_cast<unsigned char>(bytes[i + static_cast<size_t>(k)]));
            i += static_cast<size_t>(-n);
            continue;
        }
        if (cp == U' ') out += "\u00B7";        // ·
        else if (cp == U'\n') out += "\u21B5";  // ↵
        else if (cp == U'\t') out += "\u21E5";  // ⇥
        else if (cp < 0x20 || cp == 0x7F) append_hex(out, static_cast<unsigned char>(cp));
        else out.append(bytes.substr(i, static_cast<size_t>(n)));
        i += static_cast<size_t>(n);
    }
    return out;
}

std::string escaped_bytes(std::string_view bytes) {
    std::string out;
    for (char c : bytes) {
        const auto b = static_cast<unsigned char>(c);
        if (b == '\\') out += "\\\\";
        else if (b == '"') out += "\\\"";
        else if (b == '\n') out += "\\n";
        else if (b == '\t') out += "\\t";
        else if (b > 0x20 && b < 0x7F) out += c;
        else append_hex(out, b);
    }
    return out;
}

std::vector<int> chip_line_starts(std::span<const float> widths, float gap, float line_width) {
    std::vector<int> starts;
    float x = 0.0f;  // the current line's right edge
    for (int i = 0; i < static_cast<int>(widths.size()); ++i) {
        const float w = widths[static_cast<size_t>(i)];
        if (starts.empty() || x + gap + w > line_width) {
            starts.push_back(i);
            x = w;
        } else {
            x += gap + w;
        }
    }
    return starts;
}

int chip_line_of(std::span<const int> line_starts, int index) {
    const auto after = std::upper_bound(line_starts.begin(), line_starts.end(), index);
    return std::max(0, static_cast<int>(after - line_starts.begin()) - 1);
}

}  // namespace attnlab
