#pragma once
// One head's plan, as the attention-plan tests write them.
#include <cmath>

#include "model/attention_plan.h"

namespace attnlab::test {

// `kind` at temperature T; param is entmax's alpha or SSMax's scale (NaN: the normalizer's default).
inline HeadPlan head(NormalizerKind kind, float T = 1.0f, double param = std::nan("")) {
    HeadPlan h;
    h.normalizer.kind = kind;
    if (kind == NormalizerKind::Entmax && !std::isnan(param)) h.normalizer.alpha = param;
    if (kind == NormalizerKind::Ssmax && !std::isnan(param)) h.normalizer.scale = param;
    h.temperature = T;
    return h;
}

}  // namespace attnlab::test
