#pragma once
// Panel 2, Attention map: the layer x head thumbnails, the open head's heatmap, one query's
// weights as bars, the normalizer and temperature controls, and "apply to the model".
#include <memory>
#include <string>
#include <vector>

#include "analysis/attention_map.h"
#include "app/panels/head_grid.h"
#include "app/plot/heatmap.h"
#include "app/panel_context.h"

namespace attnlab {

struct AttentionPanel {
    HeadGrid grid;  // every head's thumbnail, previous-token heads marked

    // The open head: its scores (cached per pass and head) and their re-shaped weights (cached
    // per normalizer and temperature), and the runs drawn from them.
    std::weak_ptr<const ForwardResult> map_pass;
    int map_layer = -1, map_head = -1, L = 0;
    std::vector<float> scores;   // (L, L): q.k / sqrt(d)
    std::string map_normalizer;
    double map_T = 0.0;
    std::vector<float> weights;  // (L, L): the normalizer at T, row by row; 0 above the diagonal
    float max_weight = 0.0f;
    heatmap::CellRuns runs;      // bins x bins (block max-pooled when L x L needs too many runs)
    int bins = 0;
    std::string map_error;
    double reshape_ms = 0.0;  // the last re-shape (normalize every row + runs)

    std::string apply_error;

    // The next-token top-10 as trained and with the probe, and each "after" token's rank as trained.
    std::weak_ptr<const ForwardResult> top_pass;
    std::weak_ptr<const TemperatureProbe> top_probe;
    std::vector<TokenProbability> before, after;
    std::vector<int> was_rank;
};

void draw_attention_panel(AttentionPanel& panel, PanelContext& ctx);

// The panel's part of window.attnlab.status(): {layer, head, query, T, normalizer, N, row,
// selected, top10, probe_top10, ...} and the head grid's fields (add_head_grid_status).
std::string attention_status_json(const AttentionPanel& panel, const Session& s);

}  // namespace attnlab
