#pragma once
// Softmax with temperature and the exact quantities the paper bounds (PAPER.md §2, §5).
// Everything here is double precision: these are reference numbers shown to the user,
// not the fp32 hot path of the model.
#include <cstdint>
#include <span>
#include <vector>

namespace attnlab {

// alpha_n = exp(l_n / T) / sum_j exp(l_j / T). Stable for any finite logits and T > 0.
std::vector<double> softmax(std::span<const double> logits, double T);

// Exact ||J||_2 for J = (1/T)(diag(p) - p p^T), the softmax Jacobian w.r.t. the logits.
// J is symmetric positive semi-definite, so the norm is its largest eigenvalue, found from
// the secular equation of the rank-one update in O(L) per iteration (no L x L matrix).
double softmax_jacobian_norm(std::span<const double> weights, double T);

// The paper's Lemma 2 bound as printed: min{1/(4T), sqrt 2}. It is not a valid bound on
// ||J||_2 (two tied leaders reach 1/(2T)); we draw it to show where it fails.
double jacobian_bound_paper(double T);

// The tight bound: sup over the simplex of ||diag(p) - p p^T||_2 is 1/2, so ||J||_2 <= 1/(2T).
double jacobian_bound_tight(double T);

// Lemma 1 / Corollary 1: with |l_i| <= a, every weight lies in [(1/L) e^{-2a/T}, (1/L) e^{2a/T}].
struct Lemma1Band {
    double lower;
    double upper;
};
Lemma1Band lemma1_band(int L, double a, double T);

// Lemma 2's finite-difference metric (paper Algorithm 5):
//   g(T, eps) = ||softmax((l + eps v)/T) - softmax(l/T)|| / eps,  v a unit direction.
// Pass the base weights softmax(l/T) when they are at hand (sweeps over eps reuse them).
double finite_difference_sensitivity(std::span<const double> logits, std::span<const double> base_weights,
                                     std::span<const double> direction, double T, double eps);

// What g can reach: the mean value theorem gives 1/(2T) (the tight Jacobian bound), and two
// points of the simplex are at most sqrt 2 apart, so min{1/(2T), sqrt 2 / eps}.
double sensitivity_bound_tight(double T, double eps);

// A uniformly random direction on the unit sphere in n dimensions, the same on every platform.
std::vector<double> random_unit_vector(int n, std::uint64_t seed);

// The a of Lemma 1 for a concrete vector: max_i |l_i|.
double max_abs(std::span<const double> logits);

}  // namespace attnlab
