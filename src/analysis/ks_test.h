#pragma once
// Two-sample Kolmogorov-Smirnov test, for the critical-N experiment (PAPER.md §6, Alg.3): the 144
// per-head means of d against the 144 per-head means of E[d], two-sided, at level 0.01.
//
// Comparing with scipy.stats.ks_2samp (two-sided):
//   - statistic: identical (scipy also evaluates both ECDFs after all values equal to x).
//   - method='exact': the same null probability P(D >= d) for continuous data, so p_value agrees
//     to rounding whenever exact == true here. scipy's default method='auto' is exact only while
//     max(n, m) <= 10000; we decide by n * m instead (kKsExactMaxCells), so for very unequal sizes
//     (say 10 vs 20000) we are exact where scipy's 'auto' is not.
//   - method='asymp': scipy >= 1.5 reports kstwo.sf(D, round(n m / (n + m))), the one-sample
//     finite-size Kolmogorov law at the effective size; our fallback (exact == false) uses the
//     limiting law with Stephens' correction instead (as Numerical Recipes' kstwo does). Neither
//     equals the exact value nor the other. Ours, measured against the exact value for p in
//     [1e-3, 0.5]: within 1.5-3.5% for unequal sizes of a few thousand, up to 4.5% for equal sizes
//     of 3000-4000, where D sits on the coarse lattice k/n and P(D >= k/n) includes the atom at
//     k/n that a continuous law misses (up to 17% low at n = m = 144, which is why small samples
//     always get the exact value). Older scipy (< 1.5) used kstwobign.sf(D sqrt(ne)), the
//     uncorrected limit, which happens to be the better one for equal sizes (0.2% at n = m = 3000)
//     and far worse for coprime sizes (9% at 997 vs 1009).
//
// With ties (equal values, within or across samples) the exact p-value assumes a continuous
// distribution, as scipy's does. Ties can only lower D for any ordering, so the reported p-value
// is then conservative: at least the true permutation p-value.
#include <cstdint>
#include <span>
#include <string>

namespace attnlab {

struct KsResult {
    double statistic;  // D = sup_x |F1(x) - F2(x)|
    double p_value;    // two-sided, P(D' >= D) under H0 (both samples from one continuous law)
    bool exact;        // true when p_value is the exact finite-sample value
};

// Above this many lattice cells (n * m) the exact O(n m) dynamic programme gives way to the
// asymptotic formula: 1e7 cells take a few tens of milliseconds natively.
inline constexpr double kKsExactMaxCells = 1e7;

// Two-sided two-sample KS test. Both samples non-empty and finite (else false + message naming
// the problem). Exact p-value while n * m <= kKsExactMaxCells, else the asymptotic one.
bool ks_two_sample(std::span<const double> a, std::span<const double> b, KsResult& out, std::string& error);

// Exact P(D >= d) under H0 for sample sizes n, m >= 1: the probability that a uniformly random
// ordering of n a's and m b's (a lattice path from (0,0) to (n,m)) reaches |i/n - j/m| >= d.
// The comparison is done in integers, |i m - j n| >= h with h = d n m rounded up, where a
// d n m within 1e-9 (relative) of an integer counts as that integer: D values are multiples of
// 1/(n m), and d n m in floating point can land a hair either side. O(n m) time, O(m) memory,
// at any size (no fallback here). P-values below ~1e-300 underflow to 0. NaN for n or m < 1 or
// a NaN d (also in ks_p_value_asymptotic).
double ks_p_value_exact(std::int64_t n, std::int64_t m, double d);

// Asymptotic P(D >= d): kolmogorov_tail((sqrt(ne) + 0.12 + 0.11 / sqrt(ne)) d), ne = n m / (n + m)
// (Stephens 1970's correction of the limit law for finite samples).
double ks_p_value_asymptotic(std::int64_t n, std::int64_t m, double d);

// Q_KS(lambda) = 2 sum_{k>=1} (-1)^{k-1} exp(-2 k^2 lambda^2), the Kolmogorov limiting
// distribution's tail: P(sqrt(ne) D > lambda) as n, m -> infinity. 1 for lambda <= 0.
double kolmogorov_tail(double lambda);

}  // namespace attnlab
