#pragma once
// alpha-entmax for any alpha in (1, 1000], in double, anchored on the last key of the support.
// Both the fp32 rows of the model (normalize_rows.h) and the double reference of the analysis
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

}  // namespace attnlab
