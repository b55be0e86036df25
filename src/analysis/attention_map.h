#pragma once
// The arithmetic behind the attention map panel: one head's causal L x L map under any
// normalizer and temperature, block-pooled thumbnails of every head, and the next-token top-k
// with ranks ("apply to the model"). Pure functions on spans; the panel only draws them.
#include <span>
#include <string>
#include <vector>

#include "analysis/normalizers.h"
#include "model/attention_capture.h"

namespace attnlab {

// Row i of a causal map sees keys 0..i. `scores` is (L, L) row-major, q.k / sqrt(d) (entries
// above the diagonal are ignored). Writes (L, L) weights: normalizer `n` at temperature T applied
// to each row's visible scores, 0 above the diagonal. False (out untouched) with a message naming
// the row when a row is not valid input (non-finite scores, bad T).
bool normalize_causal_rows(std::span<const float> scores, int L, const Normalizer& n, double T, std::vector<float>& out,
                           std::string& error);
// The same for rows r0..r1-1 alone: `scores` and `out` are (r1 - r0, L), row r being query
// r0 + r's. What a view that streams over the rows uses, never holding L x L.
bool normalize_causal_row_block(std::span<const float> scores, int L, int r0, int r1, const Normalizer& n, double T,
                                std::vector<float>& out, std::string& error);

// Rows r0..r1-1 of one head's scores q.k / sqrt(d), scaled as the forward pass scales them, from
// its queries and keys (both (L, d) row-major): out is (r1 - r0, L), every key's score (a caller
// reads keys 0..i of row i).
void score_rows(std::span<const float> q, std::span<const float> k, int L, int d, int r0, int r1, std::vector<float>& out);

// Rows r0..r1-1 of one head's attention under its plan entry (normalizer and temperature; HeadPlan{}
// for the head as trained, softmax at T = 1), computed from its queries and keys (both (L, d)
// row-major): out is (r1 - r0, L), 0 above the diagonal. Each row goes through the forward pass's
// normalize_row (its vectorised exp: a scalar exp a key made the head grid's thumbnails of 270
// heads at 4,096 tokens take a minute in the page); for a default head that is
// AttentionCapture::weights to fp32 rounding, not bit for bit (the pass's softmax_row keeps
// Eigen's expression natively). A block of rows at a time, so that a caller can keep each piece
// of work short.
void plan_attention_rows(std::span<const float> q, std::span<const float> k, int L, int d, int r0, int r1, const HeadPlan& how,
                         std::vector<float>& out);

// A causal map reduced to bins x bins blocks, each the largest weight among its cells on or
// below the diagonal (max-pooling keeps a single sharp key visible in a small picture). Position
// i falls in block i * bins / L. Blocks with no cell on or below the diagonal are NaN.
struct PooledMap {
    int L = 0, bins = 0;
    std::vector<float> cells;  // (bins, bins) row-major
    float max = 0.0f;          // the largest cell (0 when empty)
};

// An all-NaN map of min(L, max_bins) bins, ready for pool_rows_max.
PooledMap empty_pooled_map(int L, int max_bins);
// Folds rows r0..r1-1 of the map ((r1 - r0, L) row-major, as plan_attention_rows writes) in.
void pool_rows_max(PooledMap& map, std::span<const float> rows, int r0, int r1);

// A previous-token head puts its weight on the token just before the query. Its score is the
// mean over queries i = 1..L-1 of A(i, i-1), A the (L, L) causal map (rows = queries); query 0
// has no previous token and is left out. 1 for an exact previous-token head, mean of 1/(i+1)
// for uniform causal attention (0.214 at L = 10). NaN when L < 2: no query has a previous token.
double previous_token_weight(std::span<const float> map, int L);
// A head counts as a previous-token head above this score: more than half of each query's
// weight, on average, on the token just before it.
inline constexpr double kPreviousTokenThreshold = 0.5;
// The same a block of rows at a time, as the thumbnails are computed: the sum of A(i, i-1) over
// rows r0..r1-1 (row 0 adds nothing) of `rows` ((r1 - r0, L) row-major). Divide the total by L - 1.
double previous_token_sum(std::span<const float> rows, int L, int r0, int r1);
// Every head's score (layer-major, layers x n_head) on the weights the pass used: each head's
// normalizer and temperature from `plan`, the plan the pass ran (a model trained with SSMax has
// SSMax in its trained plan; softmax there would score other weights). For tests and the command
// line; the panel gets the same numbers from its thumbnail task.
std::vector<double> previous_token_weights(const AttentionCapture& cap, const AttentionPlan& plan);

// An induction head looks back to what followed the current token's earlier occurrence, and so
// continues a repeat. targets[i] is the key that followed the first occurrence of tokens[i]:
// j + 1 for the smallest j < i with tokens[j] == tokens[i], or -1 when tokens[i] is new. For a
// run of n distinct tokens repeated once, the queries with a target are the second copy, and
// query i's target is i - n + 1.
std::vector<int> induction_targets(std::span<const int> tokens);
// The induction score: the mean over queries with a target of A(i, targets[i]), A the (L, L)
// causal map. 1 for an exact induction head; NaN when no token occurs twice.
double induction_score(std::span<const float> map, std::span<const int> targets);
// A head counts as an induction head above this score, on a repeated random sequence (uniform
// attention gives about 0.017 on 40 tokens repeated once).
inline constexpr double kInductionThreshold = 0.3;
// The sum of A(i, targets[i]) over rows r0..r1-1 of `rows` ((r1 - r0, L) row-major), for the
// thumbnails' blocks of rows. Divide the total by induction_queries(targets).
double induction_sum(std::span<const float> rows, std::span<const int> targets, int r0, int r1);
int induction_queries(std::span<const int> targets);
// Every head's score (layer-major) on the tokens the capture ran, as previous_token_weights.
std::vector<double> induction_scores(const AttentionCapture& cap, std::span<const int> tokens, const AttentionPlan& plan);

// What uniform causal attention (A(i, j) = 1 / (i + 1)) scores: the level a learned head stands
// out from. NaN where the score itself is (L < 2; no token twice).
double uniform_previous_token_weight(int L);
double uniform_induction_score(std::span<const int> targets);
// A head counts as having learned a pattern when its score is at least this many times the
// uniform level (below the patterns' thresholds, a head can be learned without being labelled).
inline constexpr double kLearnedOverUniform = 4.0;

// One entry of a next-token list: the token id, its softmax probability, and its rank
// (0 = most likely; ties broken by the lower id, as greedy decoding breaks them).
struct TokenProbability {
    int id = 0;
    double p = 0.0;
    int rank = 0;
};

// The k most likely tokens under softmax(logits), most likely first (fewer when V < k).
std::vector<TokenProbability> top_probabilities(std::span<const float> logits, int k);
// The rank and probability of token `id` under softmax(logits); id must be in range.
TokenProbability token_probability(std::span<const float> logits, int id);

}  // namespace attnlab
