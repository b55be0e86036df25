#pragma once
// What the experiments share: one head's inputs, per-query summaries, and the loop that
// spreads heads over the cores. Internal to src/analysis/experiment_*.cpp.
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/experiments.h"
#include "analysis/selection.h"
#include "base/parallel.h"

namespace attnlab {

// One head of one forward pass, in double: the model runs in fp32, the analysis in fp64.
struct HeadInputs {
    int layer = 0, head = 0;
    int index = 0;              // layer * n_head + head: the head's coordinate in every seed
    int T = 0;                  // tokens
    std::vector<float> scores;  // (T, T): q.k / sqrt(d_head), causal; T = 1 softmax is GPT-2
    RowMatrixXd x;              // (T, d): the head's values, or (T, C): the layer's input residual

    // Query row t sees tokens 0..t.
    std::vector<double> logits(int t) const {
        const float* row = scores.data() + static_cast<size_t>(t) * T;
        return std::vector<double>(row, row + t + 1);
    }
};

HeadInputs head_inputs(const AttentionCapture& capture, int layer, int head, bool residual_vectors);

// Mean and spread over queries (Welford: no cancellation over a thousand values).
struct Summary {
    long long n = 0;
    double mean = 0, m2 = 0;
    void add(double v) {
        ++n;
        const double delta = v - mean;
        mean += delta / static_cast<double>(n);
        m2 += delta * (v - mean);
    }
    double sd() const { return n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0.0; }
    double mean_or_nan() const { return n ? mean : std::nan(""); }
};

// Runs fn(head_index) for every head of the capture that the run computes (all, or a shard's
// slice), spread over the cores, and reports each finished head. fn must write only to its own
// head's slot.
template <typename Fn>
void for_each_head(const UnitSlice* slice, int heads, const ExperimentProgress& progress, long long& done, long long total,
                   const std::string& stage, Fn&& fn) {
    std::mutex lock;
    parallel_for(heads, [&](int h) {
        if (computes_unit(slice, h)) fn(h);
        if (progress) {
            std::lock_guard<std::mutex> guard(lock);
            progress(++done, total, stage);
        }
    });
}

// A head's rows as one record (rows of `columns` values each), and back.
inline std::vector<double> flatten_rows(const std::vector<std::vector<double>>& rows) {
    std::vector<double> out;
    for (const auto& row : rows) out.insert(out.end(), row.begin(), row.end());
    return out;
}
inline bool unflatten_rows(const std::vector<double>& record, size_t columns, std::vector<std::vector<double>>& rows) {
    if (columns == 0 || record.size() % columns) return false;
    rows.clear();
    for (size_t at = 0; at < record.size(); at += columns) rows.emplace_back(record.begin() + at, record.begin() + at + columns);
    return true;
}

// Tables per head, joined in head order so that the output does not depend on scheduling.
inline void append_in_order(std::vector<std::vector<std::vector<double>>>& per_head, Table& table) {
    for (auto& rows : per_head)
        for (auto& row : rows) table.rows.push_back(std::move(row));
}

// The experiments, one function each (experiment_distance.cpp, experiment_geometry.cpp).
bool run_distance_vs_L(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                       const ExperimentProgress& progress);
bool run_distance_vs_N(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                       const ExperimentProgress& progress);
bool run_critical_n(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                    const ExperimentProgress& progress);
bool run_separability(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                      const ExperimentProgress& progress);
bool run_gradient(const AttentionCapture& c, const ExperimentOptions& o, ExperimentResult& out, std::string& error,
                  const ExperimentProgress& progress);

}  // namespace attnlab
