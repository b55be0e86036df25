#include "analysis/attention_map.h"

#include "model/gemm.h"
#include "model/normalize_rows.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace attnlab {

bool normalize_causal_rows(std::span<const float> scores, int L, const Normalizer& n, double T, std::vector<float>& out,
                           std::string& error) {
    if (L < 1 || scores.size() != static_cast<size_t>(L) * L) {
        error = "The score matrix is not L x L (L = " + std::to_string(L) + ").";
        return false;
    }
    return normalize_causal_row_block(scores, L, 0, L, n, T, out, error);
}

bool normalize_causal_row_block(std::span<const float> scores, int L, int r0, int r1, const Normalizer& n, double T,
                                std::vector<float>& out, std::string& error) {
    assert(0 <= r0 && r0 <= r1 && r1 <= L && scores.size() == static_cast<size_t>(r1 - r0) * L);
    std::vector<float> w(static_cast<size_t>(r1 - r0) * L, 0.0f);
    std::vector<double> row;
    for (int i = r0; i < r1; ++i) {
        const float* s = scores.data() + static_cast<size_t>(i - r0) * L;
        row.assign(s, s + i + 1);  // query i sees keys 0..i
        if (!check_normalizer_input(n, row, T, error)) {
            error = "Query " + std::to_string(i) + ": " + error;
            return false;
        }
        const std::vector<double> p = normalize(n, row, T);
        std::copy(p.begin(), p.end(), w.begin() + static_cast<std::ptrdiff_t>(i - r0) * L);
    }
    out = std::move(w);
    return true;
}

void score_rows(std::span<const float> q, std::span<const float> k, int L, int d, int r0, int r1, std::vector<float>& out) {
    assert(0 <= r0 && r0 <= r1 && r1 <= L);
    assert(q.size() == static_cast<size_t>(L) * d && k.size() == static_cast<size_t>(L) * d);
    out.assign(static_cast<size_t>(r1 - r0) * L, 0.0f);
    // (rows, L) = q[r0:r1] (rows, d) @ k^T / sqrt(d)
    gemm(r1 - r0, L, d, q.data() + static_cast<size_t>(r0) * d, d, k.data(), d, true, out.data(), L,
         1.0f / std::sqrt(static_cast<float>(d)));
}

void plan_attention_rows(std::span<const float> q, std::span<const float> k, int L, int d, int r0, int r1, const HeadPlan& how,
                         std::vector<float>& out) {
    assert(0 <= r0 && r0 <= r1 && r1 <= L);
    score_rows(q, k, L, d, r0, r1, out);
    for (int i = r0; i < r1; ++i) {  // query i sees keys 0..i
        float* row = out.data() + static_cast<size_t>(i - r0) * L;
        normalize_row(how, row, i + 1, row);
        std::fill(row + i + 1, row + L, 0.0f);
    }
}

PooledMap empty_pooled_map(int L, int max_bins) {
    PooledMap m;
    m.L = std::max(L, 0);
    m.bins = std::min(m.L, std::max(max_bins, 1));
    m.cells.assign(static_cast<size_t>(m.bins) * m.bins, std::numeric_limits<float>::quiet_NaN());
    return m;
}

void pool_rows_max(PooledMap& map, std::span<const float> rows, int r0, int r1) {
    const int L = map.L, bins = map.bins;
    assert(rows.size() == static_cast<size_t>(r1 - r0) * L);
    for (int i = r0; i < r1; ++i) {
        const float* row = rows.data() + static_cast<size_t>(i - r0) * L;
        float* out = map.cells.data() + static_cast<size_t>(static_cast<long long>(i) * bins / L) * bins;
        for (int j = 0; j <= i; ++j) {
            float& cell = out[static_cast<long long>(j) * bins / L];
            // NaN compares false: the first value replaces it.
            if (!(cell >= row[j])) cell = row[j];
        }
    }
    float top = 0.0f;
    for (float c : map.cells)
        if (c > top) top = c;
    map.max = top;
}

double previous_token_sum(std::span<const float> rows, int L, int r0, int r1) {
    assert(0 <= r0 && r0 <= r1 && r1 <= L && rows.size() == static_cast<size_t>(r1 - r0) * L);
    double sum = 0.0;
    for (int i = std::max(r0, 1); i < r1; ++i) sum += rows[static_cast<size_t>(i - r0) * L + static_cast<size_t>(i - 1)];
    return sum;
}

double previous_token_weight(std::span<const float> map, int L) {
    if (L < 2) return std::numeric_limits<double>::quiet_NaN();
    return previous_token_sum(map, L, 0, L) / (L - 1);
}

namespace {

// score(map) of every head's (L, L) map under the plan the pass ran, layer-major.
template <class Score>
std::vector<double> score_every_head(const AttentionCapture& cap, const AttentionPlan& plan, Score score) {
    assert(plan.n_layer() == cap.layers() && plan.n_head() == cap.n_head());
    std::vector<double> out;
    for (int layer = 0; layer < cap.layers(); ++layer)
        for (int head = 0; head < cap.n_head(); ++head) out.push_back(score(cap.weights(layer, head, plan.at(layer, head))));
    return out;
}

}  // namespace

std::vector<double> previous_token_weights(const AttentionCapture& cap, const AttentionPlan& plan) {
    const int L = cap.length();
    return score_every_head(cap, plan, [L](std::span<const float> map) { return previous_token_weight(map, L); });
}

std::vector<int> induction_targets(std::span<const int> tokens) {
    std::unordered_map<int, int> first;  // token -> its first position
    std::vector<int> targets(tokens.size(), -1);
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
        const auto [at, inserted] = first.try_emplace(tokens[static_cast<size_t>(i)], i);
        if (!inserted) targets[static_cast<size_t>(i)] = at->second + 1;
    }
    return targets;
}

int induction_queries(std::span<const int> targets) {
    return static_cast<int>(std::count_if(targets.begin(), targets.end(), [](int t) { return t >= 0; }));
}

double induction_sum(std::span<const float> rows, std::span<const int> targets, int r0, int r1) {
    const int L = static_cast<int>(targets.size());
    assert(0 <= r0 && r0 <= r1 && r1 <= L && rows.size() == static_cast<size_t>(r1 - r0) * L);
    double sum = 0.0;
    for (int i = r0; i < r1; ++i)
        if (const int t = targets[static_cast<size_t>(i)]; t >= 0) sum += rows[static_cast<size_t>(i - r0) * L + static_cast<size_t>(t)];
    return sum;
}

double induction_score(std::span<const float> map, std::span<const int> targets) {
    const int n = induction_queries(targets), L = static_cast<int>(targets.size());
    if (n == 0) return std::numeric_limits<double>::quiet_NaN();
    return induction_sum(map, targets, 0, L) / n;
}

double uniform_previous_token_weight(int L) {
    if (L < 2) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0.0;
    for (int i = 1; i < L; ++i) sum += 1.0 / (i + 1);
    return sum / (L - 1);
}

double uniform_induction_score(std::span<const int> targets) {
    double sum = 0.0;
    int n = 0;
    for (int i = 0; i < static_cast<int>(targets.size()); ++i)
        if (targets[static_cast<size_t>(i)] >= 0) sum += 1.0 / (i + 1), ++n;
    return n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> induction_scores(const AttentionCapture& cap, std::span<const int> tokens, const AttentionPlan& plan) {
    assert(static_cast<int>(tokens.size()) == cap.length());
    const std::vector<int> targets = induction_targets(tokens);
    return score_every_head(cap, plan, [&targets](std::span<const float> map) { return induction_score(map, targets); });
}

namespace {

// log sum exp of the logits, the normaliser of softmax, in double.
double log_partition(std::span<const float> logits) {
    double top = -std::numeric_limits<double>::infinity();
    for (float l : logits) top = std::max(top, static_cast<double>(l));
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - top);
    return top + std::log(sum);
}

// a ranks before b: larger logit, or the same logit and a lower id.
bool ahead(std::span<const float> logits, int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); }

}  // namespace

std::vector<TokenProbability> top_probabilities(std::span<const float> logits, int k) {
    const int V = static_cast<int>(logits.size());
    k = std::clamp(k, 0, V);
    std::vector<int> ids(static_cast<size_t>(V));
    for (int i = 0; i < V; ++i) ids[static_cast<size_t>(i)] = i;
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int a, int b) { return ahead(logits, a, b); });
    const double lz = log_partition(logits);
    std::vector<TokenProbability> out(static_cast<size_t>(k));
    for (int r = 0; r < k; ++r) {
        const int id = ids[static_cast<size_t>(r)];
        out[static_cast<size_t>(r)] = {id, std::exp(static_cast<double>(logits[id]) - lz), r};
    }
    return out;
}

TokenProbability token_probability(std::span<const float> logits, int id) {
    assert(id >= 0 && static_cast<size_t>(id) < logits.size());
    int rank = 0;
    for (int j = 0; j < static_cast<int>(logits.size()); ++j) rank += ahead(logits, j, id) ? 1 : 0;
    return {id, std::exp(static_cast<double>(logits[id]) - log_partition(logits)), rank};
}

}  // namespace attnlab
