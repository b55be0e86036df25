#pragma once
// Theorem 2 (PAPER.md §4): how many of the top-N selected tokens a head can tell apart.
// Vectors are first L2-normalized onto the sphere of radius M: xh_i = M x_i / ||x_i||, and
// u_i = alpha_i xh_i, s = sum_{I_N} u_i. Protocol of the paper's Algorithm 4:
//   r   = min_{j not in I_N} ||u_j - s||
//   N_s = #{i in I_N : ||u_i - s|| < r}     (strict)
// The theorem's bounds on E[N_s]/N, reconstructed (R):
//   delta   = min pairwise distance of the selected xh (the paper takes the empirical minimum)
//   xi_i^2  = M^2 a2 + (M^2 - delta^2/2)(a1^2 - a2),  a1 = sum_{I_N\{i}} alpha, a2 = sum_{I_N\{i}} alpha^2
//             (the second term runs over ordered pairs j != k, which is what makes it bound
//             ||sum_{I_N\{i}} alpha_j xh_j||^2 when every inner product is <= M^2 - delta^2/2)
//   lower   = 1 - (1/(r N)) sum_i xi_i                             (Markov + Cauchy-Schwarz)
//   upper   = (1/N) sum_i exp(-((xi_i - r)_+)^2 / (2 M^2))          (Hoeffding, range 2M)
#include <Eigen/Core>
#include <span>
#include <string>
#include <vector>

#include "analysis/gram_rows.h"
#include "analysis/selection.h"

namespace attnlab {

struct Separability {
    int N = 0;
    double r = 0;
    int N_s = 0;
    double ratio = 0;        // N_s / N
    double delta = 0;        // 0 when N = 1 (no pair); callers show it as undefined
    std::vector<double> xi;  // one per selected token, in selection order
    double lower = 0;        // -inf when r = 0: the bound says nothing then
    double upper = 0;
};

// The rows of x scaled onto the sphere of radius M. Returns false naming the first zero row,
// which has no direction to keep.
bool normalize_rows(const Eigen::Ref<const RowMatrixXd>& x, double M, RowMatrixXd& out, std::string& error);

// For each N in Ns (1 <= N < L). `unit` holds rows already on the sphere of radius M
// (normalize_rows); weights: (L), unit: (L, d). The selection grows along the order, and delta
// with it. Without `unit_gram` the distances to s are computed directly, O(L d) per N. With it
// (unit unit^T over at least the first L tokens, shared by all queries of a head) they come from
// |u_i - s|^2 = |u_i|^2 + |s|^2 - 2 u_i . s, O(L) per N; see selection_distances for the
// rounding this trades, and why the experiments accept it.
std::vector<Separability> separability(std::span<const double> weights, const Eigen::Ref<const RowMatrixXd>& unit, std::span<const int> Ns,
                                       double M, const GramRows* unit_gram = nullptr);

}  // namespace attnlab
