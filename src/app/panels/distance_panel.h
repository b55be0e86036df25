#pragma once
// Panel 3, Selection distance (Theorem 1): for the chosen head and query, the distances d_A and
// d_B between the top-N selection and the rest, their bounds (R) and E[d] of a random selection,
// against N and against the context length; and the all-heads summary with the KS critical N.
#include <memory>
#include <string>
#include <vector>

#include "analysis/selection.h"
#include "app/panel_context.h"
#include "app/panels/query_controls.h"
#include "app/work/head_summaries.h"

namespace attnlab {

// key, ready, error (ChosenQueryView): what the curves below were computed for.
struct DistancePanel : TopNQueryView {
    int reading = 0;  // 0: (A) sum of norms, 1: (B) norm of the sum

    // The chosen head's vectors and Gram matrix, kept while the pass and the head stay.
    std::weak_ptr<const ForwardResult> head_pass;
    int head_layer = -1, head_head = -1;
    HeadVectors vectors;
    RowMatrixXd gram;  // (T, T) = values values^T, up to kWholeGramTokens (else empty)

    SelectionDistance at_N;  // the chosen query at N_used
    double sum_norms = 0;    // Corollary 2: sum_i |alpha_i x_i|
    std::vector<double> Ns;  // x of the curve against N
    std::vector<SelectionDistance> by_N;
    std::vector<double> Ls;  // x of the curve against the context length (prefix length)
    std::vector<SelectionDistance> by_L;
    double compute_ms = 0;  // the last recomputation, of which gram_ms for the head's Gram matrix
    double gram_ms = 0;

    // The all-heads footnote (what the summary's weights are, and its N grid), kept per summary.
    std::weak_ptr<const ForwardResult> summary_footnote_pass;
    std::string summary_footnote;
};

void draw_distance_panel(DistancePanel& panel, PanelContext& ctx);

// The critical-N search's grid in words, for the panel's footnote and Help.
std::string n_grid_in_words(const std::vector<int>& Ns);

// The numbers shown, for window.attnlab.status().
std::string distance_status_json(const DistancePanel& panel, const Session& session);

}  // namespace attnlab
