#pragma once
// The plan's normalizers in fp32, on one row of attention scores, as the forward pass and the
// capture run them. They follow the double-precision definitions of src/analysis/normalizers.h
// (tested against them to fp32 rounding); each row is computed alone and in a fixed order, so the
// weights do not depend on the thread count or on how a pass is cut into calls.
//
// Softmax rows at temperature tau do not come here in the forward pass: they take softmax_row,
// which natively gives the same bits as before plans existed.
#include "model/attention_plan.h"

namespace attnlab {

// weights[0..n) from scores[0..n), a query's q.k / sqrt(d) over the n keys it sees (n >= 1):
// head.normalizer at temperature head.temperature. SSMax's n is that n. Weights are >= 0 and sum
// to 1 (to rounding); sparsemax and entmax give exact zeros off their support. weights may be
// scores itself (the capture normalizes its rows in place).
//
// Entmax at an alpha other than 1, 1.5 and 2 is solved in double relative to the last key of its
// support (entmax_solve.h): within 1e-6 of 50-digit weights (tests/fixtures/entmax) for alpha up to
// 1000 and T from 1e-4 to 1e4.
void normalize_row(const HeadPlan& head, const float* scores, int n, float* weights);

// exp(beta (x_i - anchor)) for i < n, each through the vectorised exp (Eigen's natively, normalize_rows.cpp's
// in WebAssembly) whatever n and wherever x lies, so the bits depend on the value alone (the softmax rows
// here, Llama's SiLU). The result is the calling thread's scratch: valid until its next call on that thread.
const float* exp_scaled(const float* x, int n, double beta, double anchor);

// weights[0..n) = softmax(scores[0..n) * inv_tau), in fp32 (the forward pass's default heads; n >= 1).
// Natively Eigen's vectorised expression as it always was; in WebAssembly an exp of its own
// (Eigen has no WebAssembly backend), whose bits depend on the row alone.
void softmax_row(const float* scores, int n, float inv_tau, float* weights);

}  // namespace attnlab
