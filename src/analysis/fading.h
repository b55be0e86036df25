#pragma once
// The fading of attention with context length inside a model (PAPER.md §2, Lemma 1; issue 29):
// what one head does for a query that sees L keys, summed over queries so that a caller can
// average over windows of a text. Pure functions on weights and scores; no I/O.
#include <optional>
#include <span>
#include <vector>

namespace attnlab {

// Running sums over queries of one (L, layer, head) cell.
struct FadingSums {
    double max_weight = 0;                      // sum of the largest weight
    double entropy = 0;                         // sum of -sum_j w_j ln w_j (nats)
    double previous_weight = 0;                 // sum of the weight on the key just before the query
    double lemma1_lower = 0, lemma1_upper = 0;  // sums of Lemma 1's band (upper capped at 1)
    int queries = 0;
    int lemma1_queries = 0;  // queries whose head ran softmax (the band bounds only those)

    double mean(double sum) const { return queries ? sum / queries : 0.0; }
};

// Adds one query: `weights` and `scores` are its L visible entries (key 0 .. key L-1, the query
// itself last), `scores` the logits q.k / sqrt(d) before the head's normalizer. `softmax_T` is the
// head's temperature when it runs softmax, empty otherwise: Lemma 1 holds for a normalizer that
// does not depend on L, and SSMax (or any other normalizer) is not bounded by softmax's band.
void add_fading_query(std::span<const float> weights, std::span<const float> scores, std::optional<double> softmax_T, FadingSums& sums);

// One head's causal (L, L) map query by query (row-major; row i sees keys 0..i, entries above the
// diagonal ignored): for each query i the sums of add_fading_query over row i's i + 1 weights and
// scores alone. The page's fading plot draws them against L = i + 1 keys, one text, one pass.
std::vector<FadingSums> fading_by_query(std::span<const float> weights, std::span<const float> scores, int L,
                                        std::optional<double> softmax_T);

// A per-query series against L (values[i] is the query that sees L = i + 1 keys) reduced to at
// most `max_bins` bins evenly spaced in ln L, so that a log-x plot of thousands of queries draws
// a few dozen points: each bin's queries' mean L, and the mean, least and largest value. While
// L is small every L has a bin of its own. Empty bins are left out.
struct LogBins {
    std::vector<double> L, mean, least, most;
    std::vector<int> first, count;  // the bin's first query index and how many it holds
};
LogBins log_bins(std::span<const double> values, int max_bins);

// The rank of weights[index] among all of them: 1 + the number of strictly larger weights, so a
// tie for first place is rank 1.
int weight_rank(std::span<const float> weights, int index);

}  // namespace attnlab
