// libFuzzer target: arbitrary bytes as a safetensors file. Besides crashes and sanitizer
// reports, it traps on any broken promise of the reader's interface, so that a logic slip
// (an accepted file whose tensors do not tile the data) is a finding too.
// Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "base/safetensors.h"

namespace {
// An accepted tensor's bytes are in the input, so its element count is bounded by the input
// length; the cap only bounds the work per input if the fuzzer is run with a large -max_len.
constexpr std::int64_t kMaxElements = 1 << 20;

void check(bool ok) {
    if (!ok) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A copy in a buffer of exactly `size` bytes, so AddressSanitizer sees any read past it.
    std::vector<std::uint8_t> file(data, data + size);
    attnlab::SafetensorsReader reader;
    std::string error;
    if (!reader.open(file, "fuzz.safetensors", error)) {
        check(error.rfind("fuzz.safetensors: ", 0) == 0 && error.size() > 18);
        check(reader.tensors().empty());
        return 0;
    }

    // Accepted: the tensors tile the data section, which ends at the end of the file.
    std::uint64_t at = 0;
    for (const attnlab::TensorInfo& t : reader.tensors()) {
        check(t.begin == at && t.end >= t.begin);
        const std::span<const std::uint8_t> b = reader.bytes(t);
        check(b.size() == t.end - t.begin);
        check(b.size() == static_cast<std::uint64_t>(t.element_count()) * attnlab::dtype_size(t.dtype));
        check(reader.find(t.name) == &t);
        at = t.end;

        const bool floats = t.dtype == attnlab::DType::F32 || t.dtype == attnlab::DType::F16 || t.dtype == attnlab::DType::BF16;
        if (!floats || t.element_count() > kMaxElements) continue;
        std::vector<float> out(static_cast<std::size_t>(t.element_count()));
        check(reader.to_f32(t, out, error));
        // The zero-copy view, when there is one, holds the same bits as the copy.
        const std::span<const float> view = reader.f32_view(t);
        if (!view.empty()) check(std::memcmp(view.data(), out.data(), out.size() * sizeof(float)) == 0);
    }
    // ...and the last one ends exactly at the end of the file (an empty span still points
    // at its offset, so this holds for a trailing empty tensor too).
    if (!reader.tensors().empty()) {
        const std::span<const std::uint8_t> last = reader.bytes(reader.tensors().back());
        check(last.data() + last.size() == file.data() + file.size());
    }
    return 0;
}
