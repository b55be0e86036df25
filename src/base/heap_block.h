#pragma once
// Blocks for a model's bytes, of any size the heap can hold.
//
// In WebAssembly, Emscripten's malloc (dlmalloc) refuses any one request of 2 GB or more: it asks
// sbrk for less than half the address space at a time. A checkpoint over 2 GB in one file
// (Llama-3.2-1B's is 2.47 GB) could then not be one buffer, and the page failed to load it with
// 1.7 GB of a 4 GB heap still free. So from kFromTop bytes on, a block is taken from the top of
// the heap (sbrk) instead. A wasm heap never shrinks, so a freed block is kept and handed out
// again to the next large one that fits; one at the top grows in place when it is too small.
// Below kFromTop, and natively always, a block is plain malloc.
//
// Thread-safe: a model's bytes are freed wherever its last user lets go, a worker thread included.
#include <cstddef>
#include <cstdint>

namespace attnlab {

constexpr std::size_t kFromTop = std::size_t{1} << 30;  // 1 GB: well inside what dlmalloc still grants

// A block of n bytes, 16-byte aligned; null when the heap cannot give that much.
std::uint8_t* heap_block_alloc(std::size_t n);
// The block p (of old_n bytes, from heap_block_alloc or this) as n bytes, its first
// min(old_n, n) bytes kept; null, with p still valid and unchanged, when the heap cannot.
std::uint8_t* heap_block_realloc(std::uint8_t* p, std::size_t old_n, std::size_t n);
// Frees what heap_block_alloc or heap_block_realloc gave (null: nothing).
void heap_block_free(std::uint8_t* p);
// Bytes taken from the top of the heap for large blocks, all of them or those in use now (0
// natively): malloc's own counts (mallinfo, malloc_footprint) do not see them.
std::size_t heap_block_top_bytes(bool in_use_only);

}  // namespace attnlab
