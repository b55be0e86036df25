#pragma once
// The plan's normalizers in fp32, on one row of attention scores, as the forward pass and the
// capture run them. They follow the double-precision definitions of src/analysis/normalizers.h
// (tested against them to fp32 rounding); each row is computed alone and in a fixed order, so the
// weights do not depend on the thread count or on how a pass is cut into calls.
//
// Softmax rows do not come here in the forward pass: it keeps its own vectorised softmax, so that
// the default plan gives the same bits as before plans existed.
#include "model/attention_plan.h"

namespace attnlab {

// weights[0..n) from scores[0..n), a query's q.k / sqrt(d) over the n keys it sees (n >= 1):
// head.normalizer at temperature head.temperature. SSMax's n is that n. Weights are >= 0 and sum
// to 1 (to rounding); sparsemax and entmax give exact zeros off their support. weights may be
// scores itself (the capture normalizes its rows in place).
//
// Entmax at an alpha other than 1, 1.5 and 2 is solved by bisection on log p_max in double. Against
// a 400-digit reference on a few rows it was within 3e-8 up to alpha 10; at larger alpha a weight
// far below p_max needs p^(alpha-1) finer than double resolves and comes out 0 or too large (1.4e-5
// at alpha 20, 0.27 at alpha 50, for two keys 1e-4 apart); normalizers.h's reference alike.
void normalize_row(const HeadPlan& head, const float* scores, int n, float* weights);

}  // namespace attnlab
