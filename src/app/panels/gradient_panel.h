#pragma once
// Panel 5, Temperature & gradients (Lemma 2): g(T, eps) on a log-log plot for eps in
// {1e-3, 1e-1, 10}, the exact ||J||_2, the paper's bound (check) and the tight bound, for the
// chosen head and query or, as the paper's Figure 4, the mean over queries and max over heads.
#include <memory>
#include <string>
#include <vector>

#include "app/panel_context.h"

namespace attnlab {

// key, ready, error (ChosenQueryView): what the chosen-query curves were computed for.
struct GradientPanel : ChosenQueryView {
    int mode = 0;                        // 0: the chosen head and query; 1: mean over queries, max over heads
    std::string note;                    // e.g. why ||J|| is left out
    std::vector<double> temperatures;    // the T grid
    std::vector<double> eps;             // the paper's three, plus the view's when different
    std::vector<double> jacobian;        // exact ||J||_2 per T (empty when too costly)
    std::vector<std::vector<double>> g;  // per eps, per T
    std::vector<double> direction;       // the random unit direction of the finite differences

    // At the view's T and eps, shown in the table and the status.
    double T_now = 0, jacobian_now = 0, g_now = 0;
};

void draw_gradient_panel(GradientPanel& panel, PanelContext& ctx);

std::string gradient_status_json(const GradientPanel& panel, const Session& session);

}  // namespace attnlab
