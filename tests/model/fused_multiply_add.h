#pragma once
// x * y + z rounded once to float: the reference for the fused chains of gemm() and LinearWeight.
//
// Not std::fma: Emscripten 3.1.6's fmaf rounds twice (to double, then to float) when x * y + z
// rounded to double falls exactly halfway between two floats, and the relaxed-SIMD build's
// kernel, whose fused multiply-add rounds once, then differed from it (1 element in about 10^7).
// Here the product is exact in double (24 + 24 bits), the sum's rounding error is taken exactly
// (TwoSum), the sum is rounded to odd, and then to float: correct for any float inputs whose
// result is normal, on any platform.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnlab {

inline float fused_multiply_add(float x, float y, float z) {
    const double xy = static_cast<double>(x) * y, sum = xy + z;
    const double z_part = sum - xy, error = (xy - (sum - z_part)) + (z - z_part);  // sum + error == xy + z exactly
    std::uint64_t bits;
    std::memcpy(&bits, &sum, sizeof bits);  // (std::bit_cast is missing from Emscripten 3.1.6's libc++)
    const double to_odd = error != 0.0 && (bits & 1) == 0 ? std::nextafter(sum, error > 0.0 ? INFINITY : -INFINITY) : sum;
    return static_cast<float>(to_odd);
}

}  // namespace attnlab
