#pragma once
// A minimal PNG encoder for exporting plots on the desktop: 8-bit RGBA, no filtering, the
// zlib stream made of stored (uncompressed) deflate blocks. Files are about as large as the
// raw pixels, which is fine for a plot; every PNG reader accepts them. Pure bytes in, bytes
// out: no I/O, no ImGui.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

// CRC-32 (ISO 3309, as PNG and zlib use it) and Adler-32 (zlib's checksum), exposed for tests.
std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);
std::uint32_t adler32(std::span<const std::uint8_t> bytes);

// rgba: width*height*4 bytes, rows top to bottom. False (with a reason) for sizes PNG or this
// encoder cannot hold: zero, more than 2^24 pixels a side, or rgba of the wrong length.
bool encode_png_rgba(int width, int height, std::span<const std::uint8_t> rgba, std::vector<std::uint8_t>& png, std::string& error);

}  // namespace attnlab
