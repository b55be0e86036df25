#pragma once
// Choosing the next token from GPT-2's logits: greedy, or sampled with a temperature,
// top-k and top-p (nucleus) filtering, as Hugging Face's generate() applies them.
#include <cstdint>
#include <span>
#include <vector>

namespace attnlab {

struct SamplingOptions {
    float temperature = 0.0f;  // 0: greedy (argmax, lowest id on ties)
    int top_k = 0;             // keep the k most likely tokens; 0: all
    float top_p = 1.0f;        // keep the fewest most likely tokens whose mass reaches p; 1: all
};

// The next token. `u` is a uniform random number in [0, 1), unused when greedy.
int sample_token(std::span<const float> logits, const SamplingOptions& options, double u);

// The distribution sample_token draws from: 0 for filtered tokens, the rest renormalised.
// (For greedy decoding: 1 on the argmax.)
std::vector<double> sampling_distribution(std::span<const float> logits, const SamplingOptions& options);

}  // namespace attnlab
