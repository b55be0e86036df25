#include "base/heap_block.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#if defined(__EMSCRIPTEN__)
#include <unistd.h>
#endif

namespace attnlab {

namespace {

#if defined(__EMSCRIPTEN__)
struct TopBlock {
    std::uint8_t* at;
    std::size_t size;
    bool used;
};

std::mutex g_mutex;
std::vector<TopBlock> g_blocks;  // every block taken from the top, in use or kept for reuse

constexpr std::uintptr_t kAlign = 16;

std::uint8_t* current_top() { return static_cast<std::uint8_t*>(sbrk(0)); }

// n more bytes at the top of the heap (aligned first): their address, or null. sbrk takes an
// intptr_t but reads it as unsigned, so steps of 2 GB or more are fine there.
std::uint8_t* grow_top(std::size_t n) {
    const std::uintptr_t top = reinterpret_cast<std::uintptr_t>(current_top()), pad = (kAlign - top % kAlign) % kAlign;
    void* got = sbrk(static_cast<intptr_t>(n + pad));
    if (got == reinterpret_cast<void*>(-1)) return nullptr;
    return static_cast<std::uint8_t*>(got) + pad;
}

std::uint8_t* take_from_top(std::size_t n) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    // A kept block that fits, the smallest of them.
    TopBlock* best = nullptr;
    for (TopBlock& b : g_blocks)
        if (!b.used && b.size >= n && (!best || b.size < best->size)) best = &b;
    if (best) {
        best->used = true;
        return best->at;
    }
    // A kept block at the very top, grown to n in place. malloc may move the top on another
    // thread meanwhile: then what sbrk gave is not next to the block, and is kept as a block of
    // its own instead (never reused twice, at worst idle).
    for (size_t i = 0; i < g_blocks.size(); ++i) {
        TopBlock b = g_blocks[i];
        if (b.used || b.at + b.size != current_top()) continue;
        void* got = sbrk(static_cast<intptr_t>(n - b.size));
        if (got == reinterpret_cast<void*>(-1)) return nullptr;
        if (got == b.at + b.size) {
            g_blocks[i] = {b.at, n, true};
            return b.at;
        }
        const std::uintptr_t pad = (kAlign - reinterpret_cast<std::uintptr_t>(got) % kAlign) % kAlign;
        if (n - b.size > pad) g_blocks.push_back({static_cast<std::uint8_t*>(got) + pad, n - b.size - pad, false});
        break;
    }
    std::uint8_t* at = grow_top(n);
    if (at) g_blocks.push_back({at, n, true});
    return at;
}

// True when p was taken from the top (it is then marked free for reuse).
bool give_back_to_top(std::uint8_t* p) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    for (TopBlock& b : g_blocks)
        if (b.at == p) {
            b.used = false;
            return true;
        }
    return false;
}
#endif

}  // namespace

std::uint8_t* heap_block_alloc(std::size_t n) {
#if defined(__EMSCRIPTEN__)
    if (n >= kFromTop) return take_from_top(n);
#endif
    return static_cast<std::uint8_t*>(std::malloc(std::max<std::size_t>(n, 1)));
}

std::uint8_t* heap_block_realloc(std::uint8_t* p, std::size_t old_n, std::size_t n) {
    if (!p) return heap_block_alloc(n);
#if defined(__EMSCRIPTEN__)
    if (n >= kFromTop || old_n >= kFromTop) {
        std::uint8_t* moved = heap_block_alloc(n);
        if (!moved) return nullptr;
        std::memcpy(moved, p, std::min(old_n, n));
        heap_block_free(p);
        return moved;
    }
#endif
    (void)old_n;
    return static_cast<std::uint8_t*>(std::realloc(p, std::max<std::size_t>(n, 1)));
}

void heap_block_free(std::uint8_t* p) {
    if (!p) return;
#if defined(__EMSCRIPTEN__)
    if (give_back_to_top(p)) return;
#endif
    std::free(p);
}

std::size_t heap_block_top_bytes(bool in_use_only) {
    std::size_t bytes = 0;
#if defined(__EMSCRIPTEN__)
    const std::lock_guard<std::mutex> lock(g_mutex);
    for (const TopBlock& b : g_blocks)
        if (b.used || !in_use_only) bytes += b.size;
#endif
    (void)in_use_only;
    return bytes;
}

}  // namespace attnlab
