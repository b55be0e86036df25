#pragma once
// A matrix of weights as the checkpoint stores it: fp32, or 16-bit (IEEE half or bfloat16) that
// stays 16-bit in memory and is widened to fp32 only where a kernel packs or reads it (linear.h,
// gemm.h). A 16-bit model then takes about its file's size in memory, not twice that.
//
// Widening a half or a bfloat16 to float is exact, so a product with 16-bit weights has the
// bits of the same product with those weights widened beforehand: the kernels' order of
// summation (gemm.h) does not depend on the type the weights are stored in.
#include <cstddef>
#include <cstdint>

namespace attnlab {

enum class WeightType { f32, f16, bf16 };

const char* weight_type_name(WeightType t);  // "F32", "F16", "BF16", as safetensors spells them
std::size_t weight_type_size(WeightType t);  // bytes per element

struct WeightMatrix {
    const void* data = nullptr;  // 4-byte aligned floats, or 2-byte aligned 16-bit values
    WeightType type = WeightType::f32;

    WeightMatrix() = default;
    WeightMatrix(const float* f) : data(f) {}  // NOLINT: a float pointer is an fp32 matrix
    WeightMatrix(const std::uint16_t* bits, WeightType t) : data(bits), type(t) {}

    bool empty() const { return data == nullptr; }
    const float* f32() const { return type == WeightType::f32 ? static_cast<const float*>(data) : nullptr; }
    const std::uint16_t* bits16() const { return type == WeightType::f32 ? nullptr : static_cast<const std::uint16_t*>(data); }
    // The matrix from element `elements` on (row-major index), same type.
    WeightMatrix offset(std::size_t elements) const;
    // Element i, widened.
    float at(std::size_t i) const;
};

// out[0..count) = elements 0..count - 1 of w, widened (a copy for fp32).
void widen(WeightMatrix w, std::size_t count, float* out);

// rows x cols of w (row stride ld) into out (row stride ldo), widened.
void widen_block(WeightMatrix w, std::size_t ld, int rows, int cols, float* out, std::size_t ldo);

}  // namespace attnlab
