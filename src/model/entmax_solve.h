#pragma once
#include <vector>
// alpha-entmax for any alpha in (1, 1000], in double, anchored on the last key of the support,
// and 1.5-entmax's exact threshold. Both the fp32 rows of the model (normalize_rows.h) and the double reference of the analysis
// (normalizers.h) come here; tests/fixtures/entmax holds 50-digit weights it is checked against.

namespace attnlab {

// p[0..n) = alpha-entmax(l / T): p_i = [(alpha-1) l_i / T - tau]_+^{1/(alpha-1)}, sum p = 1
// (Peters, Niculae & Martins 2019). n >= 1, T > 0, 1 < alpha; -inf scores weigh 0, at least one
// score must be finite. p may not alias l.
//
// tau is written as x_k - t, with x_k = (alpha-1) l_k / T the smallest x on the support, so that
// p_i^{alpha-1} = d_i + t with d_i = (alpha-1)(l_i - l_k)/T >= 0 formed from the scores, not from
// two large x: at alpha = 1000 a weight of 0.5 sits 2^-999 above tau, which no double tau near
// x_i resolves (bisection on log p_max lost all digits past alpha ~ 20, for keys 1e-4 apart). The
// unknown is sigma = log t, and log p_i = log(exp(log d_i) + exp(sigma)) / (alpha-1), which neither
// overflows nor underflows at any alpha. O(n log n): a sort, a binary search for the support's
// size, and Newton's method (a few steps; bisection where it would crawl).
void entmax_relative_to_last_key(const double* l, int n, double T, double alpha, double* p);

// 1.5-entmax's threshold tau on X = (alpha-1) z = z/2, exactly (Peters, Niculae & Martins 2019,
// Alg. 2): with X sorted descending and the support the top k, sum_{j<=k} (X_j - tau)^2 = 1 is a
// quadratic in tau whose smaller root is tau_k = mean_k - sqrt((1 - ss_k)/k), ss_k = sum_{j<=k}
// (X_j - mean_k)^2, and k is on the support when tau_k <= X_(k). ss_k is kept by Welford's update
// instead of sum X^2 - k mean^2, which cancels catastrophically once the scan passes logits far
// below the support. Sorts xs (descending) in place; p_i = [X_i - tau]_+^2.
double entmax15_threshold(std::vector<double>& xs);

}  // namespace attnlab
