#pragma once
// What the all-heads summaries of panels 3-5 compute on top of the per-query analyses:
// box-plot statistics over heads (the paper's Figure 3), the critical N of the KS test from
// per-head means (Algorithm 3), and Lemma 2's finite-difference metric for any normalizer.
// Pure functions, double precision, no I/O.
#include <span>
#include <string>
#include <vector>

#include "analysis/ks_test.h"
#include "analysis/normalizers.h"

namespace attnlab {

// Tukey's box plot of a sample. Quartiles by linear interpolation between order statistics
// (numpy's default, "type 7": the q-quantile sits at position q (n - 1) of the sorted values);
// whiskers reach the most extreme values within 1.5 IQR of the box; values beyond are outliers.
// Non-finite values are left out (n counts the rest); with n == 0 every field is NaN.
struct BoxStats {
    int n = 0;
    double lo_whisker = 0, q1 = 0, median = 0, q3 = 0, hi_whisker = 0, mean = 0;
    std::vector<double> outliers;  // in increasing order
};
BoxStats box_stats(std::span<const double> values);

// The q-quantile (0 <= q <= 1) of finite sorted values by the same interpolation. NaN if empty.
double quantile_sorted(std::span<const double> sorted, double q);

// Algorithm 3 on per-head means: for Ns in increasing order, d_means[k] and e_means[k] hold
// one value per head (the mean over queries of d_A and of E[d_A] at Ns[k]). N* is the first
// N at which the two-sided two-sample KS test does not reject at `level`. Heads whose pair of
// values is not finite at that N (no query saw N + 1 tokens) are left out of that N's test;
// an N with fewer than 2 heads left is skipped. scan holds the test at every N, in order, also
// past N* (the panel plots the p-value against N).
struct CriticalNScan {
    int N = 0;
    int heads = 0;
    KsResult ks{0, 0, false};
};
struct CriticalN {
    int N_star = 0;  // 0 when every tested N rejects
    KsResult at_star{0, 0, false};
    std::vector<CriticalNScan> scan;
};
bool critical_n(std::span<const int> Ns, const std::vector<std::vector<double>>& d_means, const std::vector<std::vector<double>>& e_means,
                double level, CriticalN& out, std::string& error);

// g(T, eps) = ||normalize(l + eps v) - normalize(l)|| / eps for any normalizer (paper Algorithm 5
// generalised; for softmax it equals finite_difference_sensitivity). `base` = normalize(n, l, T).
double normalizer_sensitivity(const Normalizer& n, std::span<const double> logits, std::span<const double> base,
                              std::span<const double> direction, double T, double eps);

}  // namespace attnlab
