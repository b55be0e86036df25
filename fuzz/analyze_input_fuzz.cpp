// libFuzzer target: arbitrary bytes as the JSON input of `attnlab analyze`. Besides crashes,
// sanitizer reports and hangs, it traps when parse_query_input accepts an input that breaks
// its own promises, or when the analysis of an accepted input breaks the paper's invariants:
// weights on the simplex, a top-N selection of N distinct tokens, 0 <= N_s <= N, Theorem 1's
// bound on d_A (softmax), and a report that is valid JSON. Built and run by scripts/fuzz.sh.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/query_analysis.h"
#include "base/json.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

// The analysis costs O(samples * L * d) and more: bigger inputs are only parsed, and the
// Monte Carlo runs at most kMaxSamples subsets (the default, 1000, would otherwise exclude
// every input that does not set "samples"; no invariant below depends on the sample count).
constexpr size_t kMaxL = 64;
constexpr long kMaxD = 16;
constexpr int kMaxSamples = 200;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact-size copy, so AddressSanitizer sees any read one past the end.
    const std::vector<char> text(data, data + size);
    attnlab::QueryInput in;
    std::string error;
    if (!attnlab::parse_query_input(std::string_view(text.data(), text.size()), in, error)) {
        check(!error.empty());
        return 0;
    }
    // What an accepted input promises (query_analysis.h).
    const size_t L = in.logits.size();
    check(L >= 2 && static_cast<size_t>(in.vectors.rows()) == L && in.vectors.cols() >= 1);
    check(in.N >= 1 && static_cast<size_t>(in.N) < L);
    check(std::isfinite(in.T) && in.T > 0.0 && std::isfinite(in.M) && in.M > 0.0 && in.samples >= 1);
    for (double l : in.logits) check(std::isfinite(l));
    check(in.vectors.allFinite());
    for (double e : in.eps) check(std::isfinite(e) && e > 0.0);
    if (L > kMaxL || in.vectors.cols() > kMaxD) return 0;
    in.samples = std::min(in.samples, kMaxSamples);

    attnlab::QueryReport r;
    if (!attnlab::analyze_query(in, r, error)) {
        check(!error.empty());
        return 0;
    }

    // Weights on the simplex.
    check(r.weights.size() == L);
    double total = 0;
    for (double w : r.weights) {
        check(w >= 0.0);
        total += w;
    }
    check(std::abs(total - 1.0) <= 1e-9);

    // I_N: N distinct tokens, none lighter than a token left out.
    check(r.selected.size() == static_cast<size_t>(in.N));
    std::vector<char> in_selection(L, 0);
    for (int i : r.selected) {
        check(i >= 0 && static_cast<size_t>(i) < L && !in_selection[static_cast<size_t>(i)]);
        in_selection[static_cast<size_t>(i)] = 1;
    }
    double lightest_selected = 2.0, heaviest_left_out = -1.0;
    for (size_t i = 0; i < L; ++i) {
        if (in_selection[i]) lightest_selected = std::min(lightest_selected, r.weights[i]);
        else heaviest_left_out = std::max(heaviest_left_out, r.weights[i]);
    }
    check(lightest_selected >= heaviest_left_out);

    // Theorem 2's count.
    check(r.separability.N_s >= 0 && r.separability.N_s <= in.N);

    // Theorem 1, reading A: the bound we derived holds for softmax weights.
    if (in.normalizer.kind == attnlab::NormalizerKind::Softmax) check(r.distance.d_A <= r.distance.bound_A * (1 + 1e-9) + 1e-12);

    // The report is one valid JSON object (non-finite numbers are written as null).
    const std::string report = attnlab::query_report_json(r);
    const auto back = attnlab::json::parse(report);
    check(back.value.has_value() && back.value->is_object());
    return 0;
}
