#pragma once
// Logit vectors for exploring softmax without a model (the Softmax playground).
#include <cstdint>
#include <vector>

namespace attnlab {

enum class LogitPreset {
    RandomUniform,   // l_i ~ U[-spread, spread]
    RandomGaussian,  // l_i ~ N(0, spread^2)
    OneStrong,       // l_1 = spread, the other L-1 logits 0
    TwoTied,         // l_1 = l_2 = spread, the other L-2 logits 0: the worst case of Lemma 2
};

struct LogitSpec {
    LogitPreset preset = LogitPreset::RandomGaussian;
    std::uint64_t seed = 1;
    double spread = 1.0;
};

// The first L logits of the stream the spec describes. Streams are prefix-consistent:
// the first L logits are the same whatever length is asked for, so "grow the context"
// means appending tokens, as in a real prompt.
std::vector<double> synthetic_logits(const LogitSpec& spec, int L);

const char* preset_name(LogitPreset preset);

}  // namespace attnlab
