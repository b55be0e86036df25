#pragma once
// The model's long work as Tasks: the forward pass over the text, generation, and the pass
// with one head's temperature overridden ("apply to the model").
#include "app/session.h"

namespace attnlab {

struct TemperatureProbe {
    int layer = 0, head = 0;
    double T = 1.0;
    std::vector<float> logits;  // (V): next-token scores with the override
};

// Called every frame: re-tokenizes the text when it changed and starts a forward pass when
// the tokens (or the model) differ from the last pass's.
void keep_forward_current(Session& s);

}  // namespace attnlab
