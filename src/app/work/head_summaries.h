#pragma once
// The all-heads summaries behind panels 3-5, computed in the background for each forward pass:
// per head, over a subsample of query positions, with each head's weights as the pass ran them
// (its plan entry; softmax at T = 1 for the model as trained, as the paper's experiments):
//   - mean d_A, d_B, E[d_A], E[d_B] over queries for each N of a fixed grid (Theorem 1), and from
//     those the KS test's critical N (Algorithm 3);
//   - mean N_s/N and its bounds (R) over queries for N = 1..64 (Theorem 2, Figure 3);
//   - mean g(T, eps) and mean ||J||_2 over queries on a T grid (Lemma 2, Figure 4): softmax's
//     own sensitivity, which the lemma is about, on the pass's logits whatever the plan.
// The work goes one unit at a time (a block of one head's Gram matrix, or one query of one
// head) so that a step stays short even at L = 1024 in the single-threaded page.
#include <memory>
#include <string>
#include <vector>

#include "analysis/head_statistics.h"
#include "app/session.h"

namespace attnlab {

// One head's inputs from a forward pass, in double for the analyses.
struct HeadVectors {
    int layer = 0, head = 0, tokens = 0, dim = 0;
    std::vector<float> q, k;  // (T, d)
    RowMatrixXd values;       // (T, d)
    // Query t's logits over the tokens it sees, q_t . k_j / sqrt(d) for j = 0..t: the same
    // numbers as chosen_query_slice.
    std::vector<double> logits(int t) const;
};
HeadVectors head_vectors(const ForwardResult& forward, int layer, int head);

// Up to `count` distinct query positions evenly spaced over 1..T-1 (position 0 sees one token).
std::vector<int> spaced_queries(int T, int count);

struct HeadSummary {
    int layer = 0, head = 0;
    // Per distance_Ns: means over the sampled queries that see more than N tokens (NaN if none).
    std::vector<double> d_A, d_B, expected_A, expected_B;
    // Per separability_Ns: N_s/N and the (R) bounds, means over queries (lower over the
    // queries where it is defined, r > 0).
    std::vector<double> ratio, lower, upper;
    // Per temperature: mean ||J||_2; per (temperature, eps), row-major: mean g.
    std::vector<double> jacobian, g;
    std::string error;  // a head that could not be analysed (e.g. a zero value vector)
};

struct HeadSummaries {
    const ForwardResult* source = nullptr;    // the pass these were computed from
    std::weak_ptr<const ForwardResult> pass;  // the same; tells a new pass at a reused address apart
    // False while the background task runs (or after it was cancelled): the rest is empty then.
    bool complete = false;
    int tokens = 0;
    std::vector<int> queries;  // the sampled query positions
    int samples = 0;           // Monte Carlo subsets per query for E[d]
    std::vector<int> distance_Ns, separability_Ns;
    std::vector<double> temperatures, eps;
    std::vector<HeadSummary> heads;  // layer-major
    CriticalN critical;              // KS of per-head mean d_A against mean E[d_A]
    double ks_level = 0.01;
    std::string error;   // the KS could not run, or a head failed
    double seconds = 0;  // wall time of the computation
};

// Index into distance_Ns of N, or of the grid value nearest to it.
size_t nearest_index(const std::vector<int>& grid, int N);

// The N grid of the critical-N search over a T-token text (Help describes it from here).
std::vector<int> distance_grid(int T);

// Called every frame: starts the background computation when `forward` changed.
void keep_summaries_current(Session& s);

}  // namespace attnlab
