#pragma once
// Bring your own attention: every per-query quantity of the paper (§2-§5) for one query's
// logits and vectors, from whatever model they came from. `attnlab analyze` reads the input
// as JSON and prints the report as JSON; the page will do the same with a dropped file.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/normalizers.h"
#include "analysis/selection.h"
#include "analysis/separability.h"

namespace attnlab {

struct QueryInput {
    std::vector<double> logits;  // (L)
    RowMatrixXd vectors;         // (L, d): value vectors, residual vectors, anything
    int N = 0;                   // selection size, 1 <= N < L
    double T = 1.0;              // temperature, > 0
    Normalizer normalizer;
    std::uint64_t seed = 0;                        // Monte Carlo subsets and the finite-difference direction
    int samples = 1000;                            // Monte Carlo subsets for E[d]
    double M = 1.0;                                // sphere radius for the separability analysis
    std::vector<double> eps = {1e-3, 1e-1, 10.0};  // finite-difference steps of g(T, eps)
};

// The JSON the CLI reads:
//   {"logits": [...], "vectors": [[...], ...], "N": n, "T": t, "normalizer": "softmax",
//    "alpha": 1.5 (entmax), "s": 1 (ssmax), "seed": 0, "samples": 1000, "M": 1, "eps": [...]}
// Every problem (wrong type, mismatched lengths, N out of range, T <= 0, a non-finite number,
// an unknown key) is a message naming the key and, for arrays, the index.
bool parse_query_input(std::string_view json_text, QueryInput& out, std::string& error);

struct SensitivityPoint {
    double eps = 0, g = 0, bound = 0;  // bound = min{1/(2T), sqrt 2 / eps}
};

struct QueryReport {
    QueryInput input;
    std::vector<double> weights;
    std::vector<int> selected;                                   // I_N in selection order
    SelectionDistance distance;                                  // Theorem 1, E[d], the approximation
    double sum_weighted_norms = 0;                               // Corollary 2
    Separability separability;                                   // Theorem 2
    double jacobian_norm = 0;                                    // exact ||d alpha / d l||_2 for the chosen normalizer
    double bound_paper = 0;                                      // softmax, as printed: min{1/(4T), sqrt 2}
    double bound_tight = 0;                                      // softmax, tight: 1/(2T)
    std::optional<double> lemma1_a, lemma1_lower, lemma1_upper;  // softmax only
    std::vector<SensitivityPoint> sensitivity;
};

// Runs every analysis. Fails (with a message) only where the input cannot be analysed, e.g.
// a zero vector that separability cannot put on the sphere.
bool analyze_query(const QueryInput& input, QueryReport& out, std::string& error);

// One JSON object with the keys documented in docs/science.md; each bound carries its label.
std::string query_report_json(const QueryReport& report);

}  // namespace attnlab
