#pragma once
// 95% intervals over windows for the tables of the corpus experiments (issue 39, point 3): a
// percentile bootstrap that resamples whole windows with replacement. Windows, not tokens or
// queries, are resampled because positions inside one window are not independent of each other.
//
// The statistic of every table cell that averages over windows is a ratio of sums over the
// windows, sum_w x_w / sum_w n_w (a mean NLL is the NLL summed over a window's predicted tokens
// over their count; a mean over windows has n_w = 1), so one function serves every cell. The
// resampling matrix is drawn once per table from a seed (base/random.h, identical on every
// platform), and a cell's interval depends only on its windows' values and that matrix: a run
// that computes the windows and a merge that reads them from records give the same bits.
// Pure functions; no I/O.
#include <cstdint>
#include <span>
#include <vector>

namespace attnlab {

struct Interval {
    double lower = 0, upper = 0;
};

// `resamples` rows of `windows` indices (row-major), each drawn uniformly from 0..windows-1 with
// replacement by SplitMix64(seed): index = floor(uniform() * windows).
std::vector<int> bootstrap_resamples(int windows, int resamples, std::uint64_t seed);

// The p-quantile (0 <= p <= 1) of sorted values by linear interpolation between order statistics
// (Hyndman and Fan's type 7, numpy.quantile's default): h = (n - 1) p, v[floor h] + (h - floor h)
// (v[floor h + 1] - v[floor h]). NaN for no values.
double quantile_of_sorted(std::span<const double> sorted, double p);

// The percentile interval at `level` (0.95: the 2.5% and 97.5% quantiles) of sum x / sum n over
// each row of `resamples` (from bootstrap_resamples for x.size() windows). NaN ends when a row's
// sum of n is 0 in every row, or when there are no rows; rows whose sum of n is 0 are left out.
Interval ratio_bootstrap(std::span<const double> x, std::span<const double> n, std::span<const int> resamples, double level = 0.95);

}  // namespace attnlab
