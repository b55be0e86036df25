#include "platform/png_writer.h"

#include <algorithm>
#include <array>

namespace attnlab {

namespace {

// The table of the reflected polynomial 0xEDB88320, one entry per byte value.
std::array<std::uint32_t, 256> make_crc_table() {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
        std::uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[n] = c;
    }
    return t;
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// A chunk: length, type, data, CRC of type and data.
void put_chunk(std::vector<std::uint8_t>& out, const char type[4], std::span<const std::uint8_t> data) {
    put_u32(out, static_cast<std::uint32_t>(data.size()));
    const std::size_t type_at = out.size();
    out.insert(out.end(), type, type + 4);
    out.insert(out.end(), data.begin(), data.end());
    put_u32(out, crc32(std::span<const std::uint8_t>(out).subspan(type_at)));
}

}  // namespace

std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc) {
    static const std::array<std::uint32_t, 256> table = make_crc_table();
    crc = ~crc;
    for (std::uint8_t b : bytes) crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

std::uint32_t adler32(std::span<const std::uint8_t> bytes) {
    constexpr std::uint32_t kMod = 65521;
    std::uint32_t a = 1, b = 0;
    for (std::uint8_t x : bytes) {
        a = (a + x) % kMod;
        b = (b + a) % kMod;
    }
    return (b << 16) | a;
}

bool encode_png_rgba(int width, int height, std::span<const std::uint8_t> rgba, std::vector<std::uint8_t>& png, std::string& error) {
    constexpr int kMaxSide = 1 << 24;
    if (width <= 0 || height <= 0 || width > kMaxSide || height > kMaxSide) {
        error = "PNG size must be between 1 and 2^24 pixels a side, got " + std::to_string(width) + "x" + std::to_string(height);
        return false;
    }
    const std::size_t row = static_cast<std::size_t>(width) * 4;
    if (rgba.size() != row * static_cast<std::size_t>(height)) {
        error = "PNG pixels: expected " + std::to_string(row * static_cast<std::size_t>(height)) + " bytes of RGBA, got " +
                std::to_string(rgba.size());
        return false;
    }

    // The image data before compression: each row prefixed by filter type 0 (none).
    std::vector<std::uint8_t> raw;
    raw.reserve((row + 1) * static_cast<std::size_t>(height));
    for (int y = 0; y < height; ++y) {
        raw.push_back(0);
        const auto first = rgba.begin() + static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(y));
        raw.insert(raw.end(), first, first + static_cast<std::ptrdiff_t>(row));
    }

    // zlib stream: header (deflate, 32K window, no dictionary; 0x7801 is divisible by 31),
    // stored blocks of at most 65535 bytes (BFINAL on the last, LEN and ~LEN little-endian),
    // then Adler-32 of the raw data, big-endian.
    std::vector<std::uint8_t> z = {0x78, 0x01};
    std::size_t at = 0;
    do {
        const std::size_t n = std::min<std::size_t>(65535, raw.size() - at);
        const bool last = at + n == raw.size();
        z.push_back(last ? 1 : 0);
        z.push_back(static_cast<std::uint8_t>(n & 0xFF));
        z.push_back(static_cast<std::uint8_t>(n >> 8));
        z.push_back(static_cast<std::uint8_t>(~n & 0xFF));
        z.push_back(static_cast<std::uint8_t>((~n >> 8) & 0xFF));
        z.insert(z.end(), raw.begin() + static_cast<std::ptrdiff_t>(at), raw.begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
    } while (at < raw.size());
    put_u32(z, adler32(raw));

    png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    std::vector<std::uint8_t> ihdr;
    put_u32(ihdr, static_cast<std::uint32_t>(width));
    put_u32(ihdr, static_cast<std::uint32_t>(height));
    ihdr.insert(ihdr.end(), {8, 6, 0, 0, 0});  // 8 bits, RGBA, deflate, adaptive filters, no interlace
    put_chunk(png, "IHDR", ihdr);
    put_chunk(png, "IDAT", z);
    put_chunk(png, "IEND", {});
    return true;
}

}  // namespace attnlab
