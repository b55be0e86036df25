// The desktop's PNG encoder, against published checksums, a file made by Python's zlib, and a
// reader of stored deflate blocks written here (not the encoder's code).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

#include "platform/png_writer.h"

using namespace attnlab;

namespace {
std::span<const std::uint8_t> bytes_of(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

std::uint32_t be32(const std::vector<std::uint8_t>& b, std::size_t at) {
    return (std::uint32_t(b[at]) << 24) | (std::uint32_t(b[at + 1]) << 16) | (std::uint32_t(b[at + 2]) << 8) | b[at + 3];
}

// Bit-at-a-time CRC-32, the textbook definition (the encoder uses a table).
std::uint32_t crc32_bitwise(const std::uint8_t* p, std::size_t n) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}
}  // namespace

TEST_CASE("png: CRC-32 and Adler-32 of the standard check strings", "[png]") {
    CHECK(crc32(bytes_of("123456789")) == 0xCBF43926u);
    CHECK(crc32(bytes_of("")) == 0u);
    CHECK(adler32(bytes_of("Wikipedia")) == 0x11E60398u);
    CHECK(adler32(bytes_of("")) == 1u);
    // Incremental CRC equals the one-shot CRC.
    CHECK(crc32(bytes_of("6789"), crc32(bytes_of("12345"))) == 0xCBF43926u);
}

TEST_CASE("png: a 2x1 image is byte-identical to Python's zlib at level 0", "[png]") {
    // struct + zlib.compress(raw, 0) + zlib.crc32, for pixels (255,0,0,255) and (0,0,128,64).
    const std::vector<std::uint8_t> expected = {
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0xF4, 0x22, 0x7F, 0x8A, 0x00, 0x00, 0x00, 0x14, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x01, 0x01, 0x09, 0x00, 0xF6, 0xFF, 0x00, 0xFF, 0x00, 0x00, 0xFF, 0x00, 0x00, 0x80, 0x40, 0x0E, 0x3C, 0x02,
        0xBF, 0x60, 0xDC, 0x72, 0xB3, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82};
    const std::vector<std::uint8_t> rgba = {255, 0, 0, 255, 0, 0, 128, 64};
    std::vector<std::uint8_t> png;
    std::string error;
    REQUIRE(encode_png_rgba(2, 1, rgba, png, error));
    CHECK(png == expected);
}

TEST_CASE("png: a large image spans several stored blocks and decodes back", "[png]") {
    const int w = 300, h = 120;  // 120 rows of 1201 bytes = 144120 bytes: three blocks
    std::vector<std::uint8_t> rgba(static_cast<std::size_t>(w) * h * 4);
    for (std::size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<std::uint8_t>((i * 7 + i / 1000) & 0xFF);
    std::vector<std::uint8_t> png;
    std::string error;
    REQUIRE(encode_png_rgba(w, h, rgba, png, error));

    // Walk the chunks, checking each CRC with the bitwise definition.
    std::size_t at = 8;
    std::vector<std::uint8_t> idat;
    std::vector<std::string> types;
    while (at < png.size()) {
        const std::uint32_t len = be32(png, at);
        const std::string type(png.begin() + static_cast<std::ptrdiff_t>(at + 4), png.begin() + static_cast<std::ptrdiff_t>(at + 8));
        types.push_back(type);
        CHECK(be32(png, at + 8 + len) == crc32_bitwise(&png[at + 4], len + 4));
        if (type == "IDAT")
            idat.insert(idat.end(), png.begin() + static_cast<std::ptrdiff_t>(at + 8),
                        png.begin() + static_cast<std::ptrdiff_t>(at + 8 + len));
        at += 12 + len;
    }
    CHECK(at == png.size());
    CHECK(types == std::vector<std::string>{"IHDR", "IDAT", "IEND"});
    CHECK(be32(png, 16) == 300u);
    CHECK(be32(png, 20) == 120u);

    // Inflate the stored blocks by hand.
    REQUIRE(idat.size() > 6);
    CHECK((idat[0] * 256 + idat[1]) % 31 == 0);
    std::vector<std::uint8_t> raw;
    std::size_t p = 2;
    int blocks = 0;
    for (bool final = false; !final;) {
        final = idat[p] & 1;
        CHECK((idat[p] >> 1) == 0);  // BTYPE 00: stored
        const unsigned len = idat[p + 1] | (idat[p + 2] << 8), nlen = idat[p + 3] | (idat[p + 4] << 8);
        CHECK((len ^ nlen) == 0xFFFFu);
        raw.insert(raw.end(), idat.begin() + static_cast<std::ptrdiff_t>(p + 5), idat.begin() + static_cast<std::ptrdiff_t>(p + 5 + len));
        p += 5 + len;
        ++blocks;
    }
    CHECK(blocks == 3);
    CHECK(p + 4 == idat.size());
    CHECK(be32(idat, p) == adler32(raw));
    REQUIRE(raw.size() == static_cast<std::size_t>(h) * (w * 4 + 1));
    for (int y = 0; y < h; ++y) {
        const std::size_t r = static_cast<std::size_t>(y) * (w * 4 + 1);
        CHECK(raw[r] == 0);
        CHECK(std::equal(rgba.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(y) * w * 4),
                         rgba.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(y + 1) * w * 4),
                         raw.begin() + static_cast<std::ptrdiff_t>(r + 1)));
    }
}

TEST_CASE("png: bad sizes are refused with a reason", "[png]") {
    std::vector<std::uint8_t> png;
    std::string error;
    const std::vector<std::uint8_t> four(4, 0);
    CHECK_FALSE(encode_png_rgba(0, 1, four, png, error));
    CHECK(error.find("0x1") != std::string::npos);
    CHECK_FALSE(encode_png_rgba(2, 1, four, png, error));
    CHECK(error.find("expected 8 bytes") != std::string::npos);
    CHECK_FALSE(encode_png_rgba(1, -3, four, png, error));
}
