#include "base/safetensors_write.h"

#include <cstring>

#include "base/json.h"

namespace attnlab {

std::vector<std::uint8_t> encode_floats(std::span<const float> values, DType dtype) {
    const bool wide = dtype == DType::F32;
    std::vector<std::uint8_t> out(values.size() * (wide ? 4 : 2));
    for (size_t i = 0; i < values.size(); ++i) {
        if (wide) {
            std::memcpy(out.data() + 4 * i, &values[i], 4);  // little-endian host (safetensors.cpp)
            continue;
        }
        const std::uint16_t h = dtype == DType::F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
        out[2 * i] = static_cast<std::uint8_t>(h);
        out[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
    }
    return out;
}

std::vector<std::uint8_t> safetensors_file(const std::vector<TensorBytes>& tensors) {
    json::ObjectBuilder header;
    std::uint64_t offset = 0;
    for (const TensorBytes& t : tensors) {
        std::string shape = "[";
        for (size_t i = 0; i < t.shape.size(); ++i) shape.append(i ? "," : "").append(std::to_string(t.shape[i]));
        header.add_raw(t.name, "{\"dtype\":\"" + std::string(dtype_name(t.dtype)) + "\",\"shape\":" + shape + "],\"data_offsets\":[" +
                                   std::to_string(offset) + "," + std::to_string(offset + t.bytes.size()) + "]}");
        offset += t.bytes.size();
    }
    std::string text = header.str();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<std::uint8_t> file(8 + text.size());
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
    std::memcpy(file.data() + 8, text.data(), text.size());
    file.reserve(file.size() + offset);
    for (const TensorBytes& t : tensors) file.insert(file.end(), t.bytes.begin(), t.bytes.end());
    return file;
}

std::string shard_index_json(const std::vector<std::pair<std::string, std::string>>& weight_map, std::uint64_t total_size) {
    json::ObjectBuilder map;
    for (const auto& [tensor, file] : weight_map) map.add(tensor, file);
    json::ObjectBuilder metadata;
    metadata.add_raw("total_size", std::to_string(total_size));
    json::ObjectBuilder index;
    index.add_raw("metadata", metadata.str()).add_raw("weight_map", map.str());
    return index.str() + "\n";
}

}  // namespace attnlab
