#pragma once
// The two curves of the Softmax playground, as pure functions of a logit stream.
#include <vector>

#include "analysis/synthetic_logits.h"

namespace attnlab {

// Lemma 1 / Corollary 1: the largest weight as the context grows, with the band
// (1/L) e^{+-2a/T}, a = max |l_i| over the L visible logits.
struct FadeCurve {
    std::vector<double> L;           // context lengths (as doubles, for plotting)
    std::vector<double> max_weight;  // max_i alpha_i at that length
    std::vector<double> band_lower;  // (1/L) e^{-2a/T}
    std::vector<double> band_upper;  // (1/L) e^{+2a/T}
    std::vector<double> uniform;     // 1/L, the value every weight is squeezed towards
};
FadeCurve fade_curve(const LogitSpec& spec, double T, const std::vector<int>& lengths);

// Lemma 2 / Corollary 3: ||J||_2 of softmax(l / T) against T, with both bounds.
struct SensitivityCurve {
    std::vector<double> T;
    std::vector<double> jacobian_norm;  // exact
    std::vector<double> bound_paper;    // min{1/(4T), sqrt 2}
    std::vector<double> bound_tight;    // 1/(2T)
};
SensitivityCurve sensitivity_curve(const std::vector<double>& logits, const std::vector<double>& temperatures);

// n points from lo to hi, evenly spaced in log(x). Requires 0 < lo < hi, n >= 2.
std::vector<double> log_grid(double lo, double hi, int n);

// Distinct integers from lo to hi (inclusive), roughly evenly spaced in log, always
// including both ends.
std::vector<int> log_grid_int(int lo, int hi, int n);

}  // namespace attnlab
