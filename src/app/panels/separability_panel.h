#pragma once
// Panel 4, Separability (Theorem 2): a 2-D PCA view of the weighted unit vectors alpha_i x_i
// with the context vector s and the ball B_r(s); N_s/N against N with its bounds (R); box
// plots over heads as the paper's Figure 3.
#include <memory>
#include <string>
#include <vector>

#include "analysis/separability.h"
#include "app/panel_context.h"
#include "app/panels/query_controls.h"

namespace attnlab {

// key, ready, error (ChosenQueryView): what the view below was computed for.
struct SeparabilityPanel : TopNQueryView {
    int picture = 0;  // 0: the PCA plane; 1: each token's distance to s against its weight (exact)
    // The 2-D view: every token's alpha_i x_i (x on the unit sphere) on the top two principal axes.
    std::vector<double> px, py;                   // (L)
    std::vector<double> weight;                   // (L) alpha_i
    std::vector<double> distance;                 // (L) |alpha_i x_i - s| in the full space
    std::vector<char> selected, distinguishable;  // (L)
    double sx = 0, sy = 0;                        // s projected
    double explained = 0;                         // share of the variance the two axes keep
    Separability at_N;
    // Against N for the chosen query.
    std::vector<double> Ns, ratio, lower, upper;
};

void draw_separability_panel(SeparabilityPanel& panel, PanelContext& ctx);

std::string separability_status_json(const SeparabilityPanel& panel, const Session& session);

}  // namespace attnlab
