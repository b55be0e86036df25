#pragma once
// The paper's five experiments (PAPER.md §6, Algorithms 1-5) over one model's attention on
// one text, as tidy tables: one row per layer, head and sweep value, with per-query means
// and their spread. No I/O: the CLI writes the tables as CSV and the summary as JSON.
//
// One forward pass serves every context length. GPT-2 is causal, so the first L positions of
// a pass over the whole text are exactly a pass over its first L tokens, and "context length
// L" means: the queries at positions 1..L, each seeing the tokens up to itself. Per-query
// values therefore do not depend on L, and each is computed once.
//
// Work is spread over heads. Every random draw is seeded by (seed, head, query, ...), never
// by thread or order, so the tables are identical whatever the thread count.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/unit_slice.h"
#include "model/attention_capture.h"

namespace attnlab {

enum class ExperimentKind { DistanceVsL, DistanceVsN, CriticalN, Separability, Gradient };

inline constexpr ExperimentKind kAllExperiments[] = {ExperimentKind::DistanceVsL, ExperimentKind::DistanceVsN, ExperimentKind::CriticalN,
                                                     ExperimentKind::Separability, ExperimentKind::Gradient};

const char* experiment_name(ExperimentKind kind);  // "distance-vs-L", ...
bool parse_experiment_name(std::string_view name, ExperimentKind& out, std::string& error);

struct ExperimentOptions {
    bool residual_vectors = false;  // x = the layer's input residual stream instead of the head's values
    std::uint64_t seed = 0;
    std::vector<int> Ls;  // context lengths (distance-vs-L, critical-n)
    int N = 5;            // distance-vs-L
    std::vector<int> Ns;  // distance-vs-N
    std::vector<int> separability_Ns;
    int samples = 8;           // Monte Carlo subsets per query for E[d]
    int critical_samples = 4;  // the same inside the critical-N search, which needs many N
    double ks_level = 0.01;
    int critical_max_n = 256;          // give up on an L whose N* is above this
    std::vector<double> temperatures;  // gradient, in AttnLab's convention (T = 1 is GPT-2)
    std::vector<double> eps = {1e-3, 1e-1, 10.0};
    double M = 1.0;  // sphere radius for separability
    // --shard K/N and `attnlab merge`: the units are the heads (layer * n_head + head); null runs
    // them all. A shard leaves the tables empty and its records in slice->produced.
    UnitSlice* slice = nullptr;
};

// The paper's sweeps, limited to a text of `tokens` tokens:
//   L in {32, 64, ..., 1024} (or just the text's length when it is shorter than 32), N = 5;  N in {1, 5, 10, 20, 100};  separability N
//   in 1..64; T on a log grid from 1e-3 to 1e2 (26 points);  eps in {1e-3, 1e-1, 10}.
ExperimentOptions paper_sweeps(int tokens);

struct Table {
    std::string name;  // file stem, e.g. "distance_vs_L"
    std::vector<std::string> columns;
    std::vector<std::vector<double>> rows;  // integers (layer, head, L, N, counts) are exact
};

struct ExperimentResult {
    ExperimentKind kind = ExperimentKind::DistanceVsL;
    std::vector<Table> tables;
    // Query positions that see fewer than N + 1 tokens have nothing to leave out: they are
    // skipped, and counted, per head and sweep value, summed here.
    long long queries_used = 0, queries_skipped = 0;
    std::vector<std::string> notes;  // what a reader of the output should know
};

// Called as work finishes, from one thread at a time: units done of total, and what runs.
using ExperimentProgress = std::function<void(long long done, long long total, const std::string& stage)>;

// Runs one experiment on the attention captured from one forward pass over the text (with
// keep_residual when options.residual_vectors). False with a message on impossible options.
bool run_experiment(ExperimentKind kind, const AttentionCapture& capture, const ExperimentOptions& options, ExperimentResult& out,
                    std::string& error, const ExperimentProgress& progress = {});

}  // namespace attnlab
