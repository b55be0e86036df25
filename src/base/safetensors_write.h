#pragma once
// Writing safetensors files (the format safetensors.h reads), and the index of a sharded
// checkpoint (shard_index.h): for the random checkpoints of tests and benchmarks. No I/O: bytes
// and text for the caller to write.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/safetensors.h"

namespace attnlab {

struct TensorBytes {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    std::vector<std::uint8_t> bytes;  // little-endian, element_count * dtype_size bytes
};

// values as F32, F16 or BF16 (rounded to nearest, ties to even), little-endian.
std::vector<std::uint8_t> encode_floats(std::span<const float> values, DType dtype);

// A safetensors file of the tensors, in this order, its header padded to 8 bytes.
std::vector<std::uint8_t> safetensors_file(const std::vector<TensorBytes>& tensors);

// model.safetensors.index.json for tensor -> file pairs, as Hugging Face writes it.
std::string shard_index_json(const std::vector<std::pair<std::string, std::string>>& weight_map, std::uint64_t total_size);

}  // namespace attnlab
