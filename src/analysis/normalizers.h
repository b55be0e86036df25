#pragma once
// The normalizers the paper points to as alternatives to softmax (PAPER.md §7), with their
// Jacobians, so that the product can compare them on the same logits. Double precision:
// these are reference numbers, not the fp32 hot path of the model.
//
// Every normalizer takes raw logits l (length L >= 1) and a temperature T > 0 and returns
// weights on the simplex (non-negative, summing to 1):
//
//   softmax      alpha = softmax(l / T)                                   O(L)
//   sparsemax    Euclidean projection of z = l/T onto the simplex,        O(L log L) (a sort)
//                p_i = [z_i - tau]_+ (Martins & Astudillo 2016). Exact zeros.
//   entmax       p_i = [(alpha-1) z_i - tau]_+^{1/(alpha-1)}, z = l/T,
//                tau such that sum p = 1 (Peters, Niculae & Martins 2019). Exact zeros.
//                alpha == 1 is softmax, alpha == 2 is sparsemax (the exact algorithm is used),
//                alpha == 1.5 the exact sort-based algorithm             O(L log L),
//                any other alpha > 1 solved relative to the support's last key (entmax_solve.h),
//                within 1e-6 of 50-digit weights up to alpha 1000       O(L log L).
//   ssmax        Scalable-Softmax (Nakanishi 2025): softmax(s log(n) l / T), n = L the number
//                of visible tokens, s the scale. L = 1 gives log 1 = 0: uniform, i.e. [1]. O(L)
//   sa-softmax   self-adjusting softmax (Zheng et al. 2025), the range-normalized variant of
//                PAPER.md §7 with x = l/T, lo = min(x_min, 0), hi = max(0, x_max):
//                    w_i = (x_i - lo) / (hi - lo) * softmax(x)_i.                        O(L)
//                DELIBERATE, LABELLED DEVIATION from the original: its w does not sum to 1,
//                and AttnLab compares weights on the simplex, so we return w / sum(w).
//                After that division the range 1/(hi - lo) cancels: the weights are
//                (x_i - lo) softmax(x)_i / sum_j (x_j - lo) softmax(x)_j. The token at the
//                minimum gets exactly 0 when x_min < 0. When the range is 0 (all x = 0) or
//                sum w = 0 (all x equal and <= 0) the re-weighting is undefined and we fall
//                back to softmax(x), which is uniform there. Unlike the others it is not
//                invariant to a constant shift of the logits.
//
// Stability: every normalizer subtracts the largest logit first, so logits of any magnitude
// (tested to 1e6 and l/T ranges of 1e9) give no overflow.
//
// Callers validate their inputs with check_normalizer_input(); the functions below assert.
#include <Eigen/Core>
#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/attention_plan.h"

namespace attnlab {

// NormalizerKind, Normalizer, kNormalizerNames, parse_normalizer, normalizer_name and
// normalizer_spec are in model/attention_plan.h: the engine runs the same normalizers.

// Weights on the simplex, length L.
std::vector<double> normalize(const Normalizer& n, std::span<const double> logits, double T);

// d alpha / d l, L x L, row i = d alpha_i / d l: with respect to the raw logits, so the 1/T
// factor is inside. Closed forms (g = the "generalized weights", S = the support):
//   softmax     (1/T)(diag p - p p^T)
//   sparsemax   (1/T)(diag s - s s^T / |S|), s the support indicator
//   entmax      (1/T)(diag g - g g^T / sum g), g_i = p_i^{2-alpha} on S, 0 off it
//   ssmax       beta (diag p - p p^T), beta = s log(L) / T
//   sa-softmax  product and quotient rule; lo = min(x_min, 0) is piecewise: the token
//               attaining x_min < 0 gets the extra -d lo/d x term (see normalizers.cpp).
// Sparsemax and entmax are not differentiable where a logit sits exactly on the threshold,
// SA-softmax where the minimum is tied or crosses 0: there we return one of the one-sided
// Jacobians (the one of the support/argmin found). Where SA-softmax falls back to softmax (all
// logits equal and <= 0) we return softmax's Jacobian. O(L^2) to fill.
Eigen::MatrixXd normalizer_jacobian(const Normalizer& n, std::span<const double> logits, double T);

// ||J||_2, the largest singular value of normalizer_jacobian(). Softmax, sparsemax, entmax
// and ssmax all have J = c (diag(r) - r r^T) with r on the simplex, so the exact O(L)
// softmax_jacobian_norm() applies (no L x L matrix; at L = 1024 per query a dense SVD would
// cost seconds). SA-softmax's J is not symmetric: sqrt of the largest eigenvalue of the dense
// J^T J, O(L^3): about 0.3 s natively at L = 1024, so call it per query only for short contexts.
double normalizer_jacobian_norm(const Normalizer& n, std::span<const double> logits, double T);

// Checks what normalize() and the Jacobians assume: L >= 1, finite logits, 0 < T < inf, and
// the parameters the kind uses (entmax: finite alpha >= 1; ssmax: finite scale). The error
// names the bad value.
bool check_normalizer_input(const Normalizer& n, std::span<const double> logits, double T, std::string& error);

// The individual algorithms (normalize() dispatches to these). Exposed so that tests can set
// the exact and the bisection algorithms against each other.
std::vector<double> sparsemax(std::span<const double> logits, double T);
std::vector<double> entmax15(std::span<const double> logits, double T);                     // exact, sort-based
std::vector<double> entmax_bisect(std::span<const double> logits, double T, double alpha);  // any alpha > 1
std::vector<double> ssmax(std::span<const double> logits, double T, double scale);
std::vector<double> sa_softmax(std::span<const double> logits, double T);

}  // namespace attnlab
