#pragma once
// Theorem 1 and Corollary 2 (PAPER.md §3): how far the tokens a head did not select lie from
// what it selected. One query at a time: its weights alpha over the L tokens it sees and
// their vectors x (L x d). y_i = alpha_i x_i; the top-N selection I_N carries abar = sum alpha
// and aggregates to s = sum_{I_N} y_i.
//
// Both readings of the paper's distance are computed and labelled:
//   (A) d_A = sum_{i not in I_N} ||y_i - s||        (sum of norms; the default)
//   (B) d_B = ||sum_{i not in I_N} y_i - s||        (norm of the sum)
// with the bounds we derived for each, marked (R) in PAPER.md:
//   bound_A = (1 - abar) d_1 + X (abar (L - N) - (1 - abar))
//   bound_B = (1 - abar) d_1 + X |1 - 2 abar|
// d_1 = max_{i not in I_N, j in I_N} ||x_i - x_j||, X = max_{j in I_N} ||x_j||.
#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/gram_rows.h"

namespace attnlab {

// Token indices by weight, largest first, ties broken by the lower index. I_N is the first N.
std::vector<int> selection_order(std::span<const double> weights);

struct SelectionDistance {
    int N = 0;
    double abar = 0, d_A = 0, d_B = 0;
    double d_1 = 0, X = 0, bound_A = 0, bound_B = 0;
    // E[d] over a uniformly random N-subset instead of the top-N (paper Eq.8), by Monte
    // Carlo: sample mean and its standard error. Zero samples leave them 0.
    double expected_A = 0, expected_A_se = 0, expected_B = 0, expected_B_se = 0;
    // The paper's main-term approximation of E[d_A] (R):
    //   ((L - N)/L) sum_i ||y_i - (N/(L-1)) sum_{j != i} y_j||
    double approx_A = 0;
};

struct DistanceOptions {
    int samples = 0;         // Monte Carlo subsets per N for E[d]; 0 skips it
    std::uint64_t seed = 0;  // the subsets are a function of (seed, sample number) only
    bool bounds = true;      // d_1, X and the two bounds
    bool approx = true;      // approx_A
};

// Everything above for each N in Ns (each 1 <= N < L). weights: (L), x: (L, d).
//
// Monte Carlo: sample b draws one uniformly random ordering of the tokens, and its first N
// tokens are the random N-subset for every N at once. Each N still gets uniform subsets (the
// estimate of each E[d] is unbiased); estimates for different N are correlated, which no
// analysis here relies on. Distances to the random aggregates come from the Gram matrix:
// |y_i - s|^2 = |y_i|^2 + |s|^2 - 2 alpha_i sum_{j in S} alpha_j (x_i . x_j).
//
// `gram` (x x^T over at least the first L tokens: the whole matrix, which the experiments keep
// per head and share by all its queries, or its rows computed as read, gram_rows.h) switches the
// top-N distances to that Gram form too: O(L) per N instead of
// O(L d), with a rounding error of about 1e-16 |s|^2 / |y_i - s| on each distance, harmless in
// means over queries. Without it the top-N distances are computed directly, exact to
// rounding even for repeated tokens (what `attnlab analyze` wants), and the Gram block the
// Monte Carlo and d_1 need is computed here. With rows computed as read (not the whole matrix),
// the Monte Carlo takes its distances through one product Y S^T rather than reading a row per
// sampled token, and d_1 is computed directly.
std::vector<SelectionDistance> selection_distances(std::span<const double> weights, const Eigen::Ref<const RowMatrixXd>& x,
                                                   std::span<const int> Ns, const DistanceOptions& options, const GramRows* gram = nullptr);

// Corollary 2's large-L term: sum_i ||alpha_i x_i||, which E[d] approaches as L grows with
// N fixed (E[d] goes to 0 as N -> L).
double sum_weighted_norms(std::span<const double> weights, const Eigen::Ref<const RowMatrixXd>& x);

}  // namespace attnlab
