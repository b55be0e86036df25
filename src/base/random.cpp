#include "base/random.h"

#include <cmath>
#include <numbers>

namespace attnlab {

double SplitMix64::normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace attnlab
