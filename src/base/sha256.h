#pragma once
// SHA-256 (FIPS 180-4) over bytes in memory. Used to identify a checkpoint by content, so a
// result or a shared link can say which weights produced it. No I/O here: the caller hands
// over bytes (e.g. an mmap'd file, fed in chunks).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace attnlab {

class Sha256 {
public:
    Sha256();
    // Feed any number of chunks of any size; the digest depends only on their concatenation.
    void update(std::span<const unsigned char> bytes);
    void update(std::string_view bytes);
    // Pads, processes the last block(s) and returns the digest. The object is spent afterwards.
    std::array<unsigned char, 32> finish();

private:
    std::array<std::uint32_t, 8> h_;       // the running hash value H(i)
    std::array<unsigned char, 64> block_;  // a partial block carried between update() calls
    std::size_t block_len_ = 0;            // bytes in block_, 0..63
    std::uint64_t total_len_ = 0;          // message length so far, in bytes
};

// The digest as 64 lowercase hex digits, as sha256sum prints it.
std::string sha256_hex(std::span<const unsigned char> bytes);
std::string sha256_hex(std::string_view bytes);

}  // namespace attnlab
