#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/random.h"
#include "base/sha256.h"

using namespace attnlab;

static std::string to_hex(const std::array<unsigned char, 32>& d) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (unsigned char b : d) {
        s += kHex[b >> 4];
        s += kHex[b & 15];
    }
    return s;
}

// Byte i of the test pattern: every byte value occurs, and no two neighbouring blocks agree.
static std::vector<unsigned char> pattern(std::size_t n) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 31 + 7) & 0xff);
    return v;
}

// Feeds `data` in chunks of random size 0..max_chunk (zero-length updates included).
static std::string hex_in_chunks(std::span<const unsigned char> data, SplitMix64& rng, std::size_t max_chunk) {
    Sha256 sha;
    std::size_t i = 0;
    while (i < data.size()) {
        const std::size_t take = std::min<std::size_t>(rng.next() % (max_chunk + 1), data.size() - i);
        sha.update(data.subspan(i, take));
        i += take;
    }
    return to_hex(sha.finish());
}

TEST_CASE("SHA-256: FIPS 180-2 / NIST example vectors", "[sha256]") {
    // FIPS 180-2 appendix B and the NIST CSRC "SHA256.pdf" examples.
    CHECK(sha256_hex(std::string_view("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex(std::string_view("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    // 448 bits: the padding no longer fits after the message, so a second block is needed.
    CHECK(sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex(std::string_view("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                                      "klmnopqrlmnopqrsmnopqrstnopqrstu")) ==
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    const std::string million_a(1000000, 'a');
    CHECK(sha256_hex(million_a) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256: one million 'a' fed in 1000-byte and odd-sized chunks", "[sha256]") {
    const std::string expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    Sha256 thousands;
    const std::string chunk(1000, 'a');
    for (int i = 0; i < 1000; ++i) thousands.update(chunk);
    CHECK(to_hex(thousands.finish()) == expected);

    const std::vector<unsigned char> a(1000000, 'a');
    SplitMix64 rng(2025);
    CHECK(hex_in_chunks(a, rng, 4099) == expected);
}

TEST_CASE("SHA-256: pattern bytes of lengths 0..200 agree with coreutils sha256sum", "[sha256]") {
    // Produced once with GNU coreutils' /usr/bin/sha256sum on the pattern above:
    //   for n in 0 1 3 31 55 56 57 63 64 65 100 119 120 127 128 129 200; do
    //     python3 -c "import sys; sys.stdout.buffer.write(bytes((i*31+7)&0xff for i in range($n)))" | sha256sum
    //   done
    // The lengths straddle the padding boundaries (55/56: the length field fits or not; 63/64/65:
    // one byte short of, exactly, one byte past a block) in the first and the second block.
    struct Case {
        std::size_t n;
        const char* hex;
    };
    const Case cases[] = {
        {0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {1, "ca358758f6d27e6cf45272937977a748fd88391db679ceda7dc7bf1f005ee879"},
        {3, "647674a296197442f518bcca323ec605dd8d098b2d4f22ee1fdcdd2bb753a189"},
        {31, "5e5f9fa56d6337115e86a2508477e87c7d5296d0b0743ecfde2d0caeed2db37d"},
        {55, "8aa994584139d128848eeebc4e815639ba5ab6e6e39574195a63ac4f14f7c43b"},
        {56, "ad574708f75c044c9b85de64cb568ee7711ff4f36448c6242f053ba8f6cc2b63"},
        {57, "5b46e502092be01b1100193e089fdda95638c12e19a1d24f308eb2c3d3ae849d"},
        {63, "280ed3e8ff1df845b2e7dfe6ac6cee817bef20e783cc65abc41b818b4d2fe076"},
        {64, "c6ab9724ade5b6a7a1edfffb12f3aa9181351355af8fd08c919952ad211339dd"},
        {65, "788367c73c7ddf4c53f65e68cc0d943e6227ab55b0e78ba63ace822b1c6301c0"},
        {100, "c22e490daa445fb2fba44278c022df135310fd278cabca4ad7919eddcccd1dce"},
        {119, "3d610547d68216dedf7435a4fb6260353911f6b3fd3f18805ddb8be285d726fe"},
        {120, "1f80156a804cb7862ad113e8200e9d74499723e7c7854d5f48776d3148e09656"},
        {127, "192409cd280e14b743642ad1343fbd3e82d9305de72c078117745a679210cc3d"},
        {128, "cc548ca2dec1f6fe4f58b2e27aa9c7521607df1130d140b55a4dad0665302356"},
        {129, "81e89a7b2911aaa7795f9e3d4910cb47d6cd2b00d83b8399481527261a1a7519"},
        {200, "44cae5223d431caed4a9e32271d6abf17c3f2f4abac45fcdb48a99fcc6072a09"},
    };
    SplitMix64 rng(7);
    for (const Case& c : cases) {
        INFO("length " << c.n);
        const std::vector<unsigned char> data = pattern(c.n);
        CHECK(sha256_hex(data) == c.hex);
        CHECK(hex_in_chunks(data, rng, 70) == c.hex);
        // Byte at a time: every update() goes through the partial-block buffer.
        Sha256 bytewise;
        for (unsigned char b : data) bytewise.update(std::span<const unsigned char>(&b, 1));
        CHECK(to_hex(bytewise.finish()) == c.hex);
    }
}

TEST_CASE("SHA-256: random-sized chunks equal one-shot across the padding boundaries", "[sha256]") {
    // Every length near a multiple of 64 up to four blocks, each split at random several times,
    // so chunk edges land before, on and after block edges. Also from an odd offset into a
    // buffer, so that whole blocks read straight from the input are unaligned.
    const std::vector<unsigned char> big = pattern(300);
    SplitMix64 rng(123456789);
    for (std::size_t base : {0u, 64u, 128u, 192u}) {
        for (std::size_t n : {base + 0, base + 1, base + 55, base + 56, base + 57, base + 63, base + 64, base + 65}) {
            for (std::size_t offset : {0u, 1u, 3u}) {
                const std::span<const unsigned char> data(big.data() + offset, n);
                const std::string one_shot = sha256_hex(data);
                for (int trial = 0; trial < 8; ++trial) {
                    INFO("length " << n << ", offset " << offset << ", trial " << trial);
                    CHECK(hex_in_chunks(data, rng, trial < 4 ? 9 : 130) == one_shot);
                }
            }
        }
    }
    // Distinct inputs give distinct digests (a broken length field would collide these).
    CHECK(sha256_hex(std::span<const unsigned char>(big.data(), 55)) != sha256_hex(std::span<const unsigned char>(big.data(), 56)));
}

TEST_CASE("SHA-256: the string_view and byte-span overloads agree", "[sha256]") {
    const std::string s = "The quick brown fox jumps over the lazy dog";
    // Widely published digest of this sentence (e.g. Wikipedia's SHA-2 article).
    const char* expected = "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592";
    CHECK(sha256_hex(s) == expected);
    const std::span<const unsigned char> bytes(reinterpret_cast<const unsigned char*>(s.data()), s.size());
    CHECK(sha256_hex(bytes) == expected);
    Sha256 mixed;
    mixed.update(std::string_view(s).substr(0, 10));
    mixed.update(bytes.subspan(10));
    CHECK(to_hex(mixed.finish()) == expected);
}
