// heap_block (base/heap_block.h): blocks of any size the heap holds. In WebAssembly, one block
// past 2 GB, which Emscripten's malloc refuses, and a freed large block handed out again; natively
// and below 1 GB, plain malloc semantics: contents kept across a realloc, alignment.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>

#include "base/heap_block.h"

using namespace attnlab;

TEST_CASE("heap_block: small blocks keep their bytes across a realloc", "[heap_block]") {
    std::uint8_t* p = heap_block_alloc(1000);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 8 == 0);
    for (int i = 0; i < 1000; ++i) p[i] = static_cast<std::uint8_t>(i * 7);
    p = heap_block_realloc(p, 1000, 5000);
    REQUIRE(p != nullptr);
    int wrong = 0;
    for (int i = 0; i < 1000; ++i) wrong += p[i] != static_cast<std::uint8_t>(i * 7);
    CHECK(wrong == 0);
    heap_block_free(p);
    heap_block_free(nullptr);  // nothing
    CHECK(heap_block_top_bytes(true) == 0);
}

#if defined(__EMSCRIPTEN__)
TEST_CASE("heap_block: one block past 2 GB in WebAssembly, and a freed one handed out again", "[heap_block]") {
    // What the page does with Llama-3.2-1B's 2.47 GB file: malloc alone cannot.
    const std::size_t big = (std::size_t{2} << 30) + (std::size_t{200} << 20);
    void* refused = std::malloc(big);
    CHECK(refused == nullptr);  // the reason heap_block exists; if a newer malloc grants it, this says so
    std::free(refused);

    std::uint8_t* small = heap_block_alloc(1 << 20);  // from malloc, then moved to the top by a realloc past 1 GB
    REQUIRE(small != nullptr);
    small[0] = 11;
    small[(1 << 20) - 1] = 22;
    std::uint8_t* p = heap_block_realloc(small, 1 << 20, big);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 16 == 0);
    CHECK((p[0] == 11 && p[(1 << 20) - 1] == 22));
    p[big - 1] = 33;  // the last byte is there
    CHECK(p[big - 1] == 33);
    CHECK(heap_block_top_bytes(true) == big);
    heap_block_free(p);
    CHECK(heap_block_top_bytes(true) == 0);
    CHECK(heap_block_top_bytes(false) == big);  // kept: a wasm heap never shrinks

    // The next large block that fits is the same one, and the heap did not grow for it.
    std::uint8_t* again = heap_block_alloc(big - (std::size_t{100} << 20));
    CHECK(again == p);
    CHECK(heap_block_top_bytes(false) == big);
    heap_block_free(again);

    // A larger one grows the kept block in place, since it is still the top of the heap.
    std::uint8_t* larger = heap_block_alloc(big + (std::size_t{100} << 20));
    CHECK(larger == p);
    CHECK(heap_block_top_bytes(false) == big + (std::size_t{100} << 20));
    heap_block_free(larger);
    std::uint8_t* after = heap_block_alloc(1000);  // malloc still works beside the top blocks
    CHECK(after != nullptr);
    heap_block_free(after);
}
#endif
