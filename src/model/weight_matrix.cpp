// Widening 16-bit weights to fp32: with F16C natively where the compiler targets it, with
// SIMD128 in WebAssembly, and element by element elsewhere. Every path is exact, so they agree
// to the bit (tests/model/weight_matrix_test.cpp checks every 16-bit pattern).
#include "model/weight_matrix.h"

#include <algorithm>
#include <cstring>

#include "base/safetensors.h"

#if defined(__F16C__) && defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attnlab {

namespace {

void widen_f16(const std::uint16_t* in, std::size_t count, float* out) {
    std::size_t i = 0;
#if defined(__F16C__) && defined(__AVX2__)
    for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#elif defined(__wasm_simd128__)
    // Half's exponent and mantissa moved to float's places, then scaled by 2^112 (the bias
    // difference): exact for normal and subnormal halves alike; infinities and NaNs get float's
    // all-ones exponent back; the sign goes on last.
    const v128_t scale = wasm_f32x4_splat(0x1p112f), magnitude_mask = wasm_i32x4_splat(0x7FFF), inf = wasm_i32x4_splat(0x7C00);
    for (; i + 4 <= count; i += 4) {
        const v128_t h = wasm_u32x4_load16x4(in + i);
        const v128_t m = wasm_v128_and(h, magnitude_mask);
        v128_t f = wasm_f32x4_mul(wasm_i32x4_shl(m, 13), scale);
        f = wasm_v128_or(f, wasm_v128_and(wasm_i32x4_ge(m, inf), wasm_i32x4_splat(0x7F800000)));
        wasm_v128_store(out + i, wasm_v128_or(f, wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16)));
    }
#endif
    for (; i < count; ++i) out[i] = f16_to_f32(in[i]);
}

void widen_bf16(const std::uint16_t* in, std::size_t count, float* out) {
    // bfloat16 is a float's top half: a shift the compiler vectorises.
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t u = static_cast<std::uint32_t>(in[i]) << 16;
        std::memcpy(out + i, &u, sizeof u);
    }
}

}  // namespace

const char* weight_type_name(WeightType t) {
    switch (t) {
        case WeightType::f16: return "F16";
        case WeightType::bf16: return "BF16";
        default: return "F32";
    }
}

std::size_t weight_type_size(WeightType t) { return t == WeightType::f32 ? 4 : 2; }

WeightMatrix WeightMatrix::offset(std::size_t elements) const {
    WeightMatrix m = *this;
    m.data = static_cast<const char*>(data) + elements * weight_type_size(type);
    return m;
}

float WeightMatrix::at(std::size_t i) const {
    switch (type) {
        case WeightType::f16: return f16_to_f32(bits16()[i]);
        case WeightType::bf16: return bf16_to_f32(bits16()[i]);
        default: return f32()[i];
    }
}

void widen(WeightMatrix w, std::size_t count, float* out) {
    switch (w.type) {
        case WeightType::f16: return widen_f16(w.bits16(), count, out);
        case WeightType::bf16: return widen_bf16(w.bits16(), count, out);
        default: std::copy(w.f32(), w.f32() + count, out);
    }
}

void widen_block(WeightMatrix w, std::size_t ld, int rows, int cols, float* out, std::size_t ldo) {
    for (int r = 0; r < rows; ++r) widen(w.offset(static_cast<std::size_t>(r) * ld), static_cast<std::size_t>(cols), out + r * ldo);
}

}  // namespace attnlab
