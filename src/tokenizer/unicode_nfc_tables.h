#pragma once
// The tables of Unicode Normalization Form C, generated from node by tools/gen_unicode_nfc.mjs
// (see there for how each is read off JavaScript's String.prototype.normalize).
#include <cstddef>
#include <cstdint>

namespace attnlab::nfc_tables {

struct Decomposition {
    char32_t cp;
    std::uint32_t at;   // index of its full canonical decomposition in kDecompositionPool
    std::uint32_t len;  // its length
};
struct MarkRange {  // combining marks whose combining classes share a rank
    char32_t first, last;
    std::uint32_t rank;  // 1.. in the order of the combining classes
};
struct Composition {  // first + second compose to composite
    char32_t first, second, composite;
};

extern const char32_t kDecompositionPool[];
extern const Decomposition kDecompositions[];
extern const std::size_t kDecompositionCount;
extern const MarkRange kMarks[];
extern const std::size_t kMarkCount;
extern const Composition kCompositions[];
extern const std::size_t kCompositionCount;

}  // namespace attnlab::nfc_tables
