#pragma once
// Safetensors files, read exactly as the format defines them: an 8-byte little-endian header
// size N, N bytes of a JSON object mapping tensor names to {dtype, shape, data_offsets}
// (plus an optional "__metadata__" of string pairs, checked and otherwise ignored), then the
// data section. Offsets are relative to the data section; sorted by offset, the tensors tile
// it exactly, from byte 0 to the end of the file, without holes or overlaps.
//
// No I/O: the reader indexes bytes the caller holds (an mmap natively, the downloaded
// buffer in the browser) and hands out views into them, so F32 weights need no copy.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/shard_index.h"

namespace attnlab {

// Every dtype the format defines; AttnLab computes with F32, F16 and BF16 (see to_f32).
enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2 };

const char* dtype_name(DType t);
std::size_t dtype_size(DType t);  // bytes per element

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0;  // byte offsets into the data section
    std::uint64_t end = 0;
    int shard = 0;  // which file of a sharded checkpoint holds it (open_shards); 0 for one file

    std::int64_t element_count() const;  // product of the shape (1 for a scalar)
};

class SafetensorsReader {
public:
    // Headers larger than this are refused before any parsing (the real GPT-2 header is ~15 KB).
    static constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;

    // Validates and indexes `file`, all of its bytes; the caller keeps them alive while the
    // reader is used. `source` names the file in messages. On any fault returns false and sets
    // `error` to a sentence that names the source and the tensor or byte offset concerned.
    bool open(std::span<const std::uint8_t> file, std::string source, std::string& error);

    // A sharded checkpoint (base/shard_index.h): every shard validated as a file of its own,
    // shards[i] holding the bytes of index.files[i] (source: its path). Every tensor of the index
    // must be in the shard the index names, and every tensor of a shard named by the index there.
    // On any fault returns false with a message that names the file and the tensor concerned.
    // source() is then the index's.
    struct Shard {
        std::string source;
        std::span<const std::uint8_t> bytes;
    };
    bool open_shards(const ShardIndex& index, std::span<const Shard> shards, std::string& error);

    const std::string& source() const { return source_; }
    // The file that holds t: the shard's for a sharded checkpoint, else source().
    const std::string& source_of(const TensorInfo& t) const;
    const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in data order, shard by shard
    const TensorInfo* find(std::string_view name) const;

    // The tensor's raw bytes.
    std::span<const std::uint8_t> bytes(const TensorInfo& t) const;

    // An F32 tensor seen as floats without copying, if its bytes are 4-byte aligned in memory;
    // empty otherwise (other dtypes, or misaligned data: use to_f32).
    std::span<const float> f32_view(const TensorInfo& t) const;

    // Converts an F32, F16 or BF16 tensor to fp32 into `out` (element_count() floats).
    // Returns false with a message for other dtypes or a wrong output size.
    bool to_f32(const TensorInfo& t, std::span<float> out, std::string& error) const;

private:
    std::string source_;
    std::vector<std::span<const std::uint8_t>> data_;  // each file's data section
    std::vector<std::string> sources_;                 // each file's name
    std::vector<TensorInfo> tensors_;
};

// IEEE half and bfloat16 to float, exact for every input (subnormals, inf, NaN).
float f16_to_f32(std::uint16_t h);
float bf16_to_f32(std::uint16_t b);
// Float to IEEE half and bfloat16, rounded to nearest, ties to even (as PyTorch's .half() and
// .bfloat16() round); overflow gives infinity, NaN stays NaN (quiet).
std::uint16_t f32_to_f16(float f);
std::uint16_t f32_to_bf16(float f);

}  // namespace attnlab
