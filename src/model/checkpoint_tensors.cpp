#include "model/checkpoint_tensors.h"

#include <cstdint>
#include <span>

namespace attnlab {

namespace {

std::string shape_str(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

}  // namespace

WeightMatrix in_place_matrix(const SafetensorsReader& reader, const TensorInfo& t) {
    if (t.dtype == DType::F32) return WeightMatrix(reader.f32_view(t).data());
    if (t.dtype != DType::F16 && t.dtype != DType::BF16) return {};
    const std::span<const std::uint8_t> b = reader.bytes(t);
    if (b.empty() || reinterpret_cast<std::uintptr_t>(b.data()) % alignof(std::uint16_t) != 0) return {};
    return WeightMatrix(reinterpret_cast<const std::uint16_t*>(b.data()), t.dtype == DType::F16 ? WeightType::f16 : WeightType::bf16);
}

void TensorBinding::vector(std::string name, std::vector<std::int64_t> shape, const float** dest) {
    needs_.push_back({std::move(name), std::move(shape), dest, nullptr});
}

void TensorBinding::matrix(std::string name, std::vector<std::int64_t> shape, WeightMatrix* dest) {
    needs_.push_back({std::move(name), std::move(shape), nullptr, dest});
}

bool TensorBinding::check(Need& n, std::string& error) const {
    n.info = reader_.find(n.name);
    if (!n.info) {
        error = reader_.source() + ": missing tensor '" + n.name + "'" + missing_hint_;
        return false;
    }
    if (n.info->shape != n.shape) {
        error = reader_.source_of(*n.info) + ": tensor '" + n.name + "' has shape " + shape_str(n.info->shape) + ", expected " +
                shape_str(n.shape) + shapes_from_;
        return false;
    }
    if (n.info->dtype != DType::F32 && n.info->dtype != DType::F16 && n.info->dtype != DType::BF16) {
        error =
            reader_.source_of(*n.info) + ": tensor '" + n.name + "' is " + dtype_name(n.info->dtype) + "; AttnLab reads F32, F16 and BF16";
        return false;
    }
    return true;
}

bool config_int(const json::Value& root, const std::string& where, const char* key, const char* alt, int lo, int hi, int& out,
                bool required, std::string& error) {
    const json::Value* v = root.find(key);
    if ((!v || v->is_null()) && alt) v = root.find(alt);
    if (!v || v->is_null()) {
        if (required) error = where + ": missing \"" + key + "\"";
        return !required;
    }
    const auto i = v->as_int(lo, hi);
    if (!i) {
        error = where + ": \"" + key + "\" must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
        return false;
    }
    out = static_cast<int>(*i);
    return true;
}

bool TensorBinding::bind(std::vector<float>& owned, std::int64_t& parameters, std::string& error) {
    // Check everything before converting anything, and size the one owned buffer: vectors that
    // are not fp32 in place, and matrices that cannot be used in place (misaligned bytes).
    size_t copies = 0;
    parameters = 0;
    for (Need& n : needs_) {
        if (!check(n, error)) return false;
        if (n.matrix ? in_place_matrix(reader_, *n.info).empty() : reader_.f32_view(*n.info).empty())
            copies += static_cast<size_t>(n.info->element_count());
        parameters += n.info->element_count();
    }
    owned.assign(copies, 0.0f);
    size_t at = 0;
    for (Need& n : needs_) {
        // Zero-copy where the bytes allow: straight from the checkpoint's bytes.
        if (n.matrix && !(*n.matrix = in_place_matrix(reader_, *n.info)).empty()) continue;
        const std::span<const float> view = reader_.f32_view(*n.info);
        if (n.vector && !view.empty()) {
            *n.vector = view.data();
            continue;
        }
        const std::span<float> out(owned.data() + at, static_cast<size_t>(n.info->element_count()));
        if (!reader_.to_f32(*n.info, out, error)) return false;
        if (n.matrix) *n.matrix = WeightMatrix(out.data());
        else *n.vector = out.data();
        at += out.size();
    }
    return true;
}

}  // namespace attnlab
