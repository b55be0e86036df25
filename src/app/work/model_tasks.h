#pragma once
// The model's long work as Tasks: the forward pass over the text, generation, and the pass
// with one head's temperature overridden ("apply to the model").
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/session.h"

namespace attnlab {

struct TemperatureProbe {
    int layer = 0, head = 0;
    double T = 1.0;
    std::vector<int> tokens;    // the pass's input: forward->tokens when it was started
    std::vector<float> logits;  // (V): next-token scores with the override
};

// Called every frame: re-tokenizes the text when it changed (clipped to the model's context, or
// to 1024 tokens without a model) and starts a forward pass when the tokens differ from the
// last pass's. A new pass drops the last "apply to the model" result.
void keep_forward_current(Session& s);

// The context the text is clipped to: the model's n_positions, or GPT-2's 1024 without a model.
int context_limit(const Session& s);

// "Apply to the model": the text's pass again with (view.layer, view.head) at temperature view.T
// (softmax; the model has no other normalizer). False with a reason when it cannot start.
bool start_probe(Session& s, std::string& error);

struct GenerateOptions {
    bool sample = false;      // false: greedy
    float temperature = 1.0f;  // sampling only
    int top_k = 0;             // sampling only; 0 = all tokens
    int count = 20;            // new tokens
    std::uint64_t seed = 0;
};

// What the last generation appended to view.text, for the text panel to outline.
struct GeneratedText {
    std::string prefix;        // view.text before
    std::string continuation;  // the bytes appended
    std::vector<int> ids;      // the tokens generated
    bool stopped_at_end = false;  // the model produced <|endoftext|>
};

// Continues the text by up to options.count tokens; on success the continuation is appended
// to view.text and written to *out. False with a reason when it cannot start.
bool start_generation(Session& s, const GenerateOptions& options, std::shared_ptr<GeneratedText> out,
                      std::string& error);

}  // namespace attnlab
