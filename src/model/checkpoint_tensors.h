#pragma once
// Binding a checkpoint's tensors to a family's weights, the one way every loader does it
// (gpt2_load.cpp, llama_load.cpp): each tensor the family needs is looked up, its shape and dtype
// checked, all before anything is converted; then matrices become views of the checkpoint's
// bytes of its type (F16 and BF16 stay 16-bit, weight_matrix.h) and vectors views when F32,
// fp32 copies in one owned buffer otherwise. A sharded checkpoint's reader (base/safetensors.h)
// names the shard a bad tensor is in.
#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/safetensors.h"
#include "model/weight_matrix.h"

namespace attnlab {

// A whole-number field of a config.json (`root`, read from `where`) in [lo, hi], or its older
// name `alt`. Missing or null: an error naming it when required, else `out` keeps its default.
bool config_int(const json::Value& root, const std::string& where, const char* key, const char* alt, int lo, int hi, int& out,
                bool required, std::string& error);

class TensorBinding {
public:
    // `shapes_from` is said after an expected shape in errors (" from config.json"), may be "";
    // `missing_hint` after a missing tensor's name.
    TensorBinding(const SafetensorsReader& reader, std::string shapes_from, std::string missing_hint = "")
        : reader_(reader), shapes_from_(std::move(shapes_from)), missing_hint_(std::move(missing_hint)) {}

    void vector(std::string name, std::vector<std::int64_t> shape, const float** dest);
    void matrix(std::string name, std::vector<std::int64_t> shape, WeightMatrix* dest);

    // Checks every tensor asked for, then binds them; `owned` receives the fp32 copies (it must
    // outlive the weights, as must the reader's bytes). `parameters`: the elements bound.
    bool bind(std::vector<float>& owned, std::int64_t& parameters, std::string& error);

private:
    struct Need {
        std::string name;
        std::vector<std::int64_t> shape;
        const float** vector = nullptr;
        WeightMatrix* matrix = nullptr;
        const TensorInfo* info = nullptr;
    };
    bool check(Need& n, std::string& error) const;

    const SafetensorsReader& reader_;
    std::string shapes_from_, missing_hint_;
    std::vector<Need> needs_;
};

// A matrix straight from the checkpoint's bytes, of its type: F32 4-byte aligned, or F16 and
// BF16 2-byte aligned (kept 16-bit, widened by the kernels); empty otherwise.
WeightMatrix in_place_matrix(const SafetensorsReader& reader, const TensorInfo& t);

}  // namespace attnlab
