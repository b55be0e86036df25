#pragma once
// Panel 2, Attention map: the layer x head thumbnails, the open head's heatmap, one query's
// weights as bars, the normalizer and temperature controls, "apply to the model" with its scope,
// the model changes (the plan, Reset, the text's perplexity before -> after), and the next-token
// top-10 before and after.
#include <memory>
#include <string>
#include <vector>

#include "analysis/attention_map.h"
#include "app/panel_context.h"
#include "app/panels/head_grid.h"
#include "app/panels/twin_panel.h"
#include "app/plot/heatmap.h"
#include "app/work/model_tasks.h"

namespace attnlab {

struct AttentionPanel {
    HeadGrid grid;  // every head's thumbnail, previous-token heads marked

    // The chosen query's row (the row plot), for slice_key; slice_error says why there is none.
    QuerySlice slice;
    QueryKey slice_key;
    std::string slice_error;

    // The open head: its scores (cached per pass and head) and their re-shaped weights (cached
    // per normalizer and temperature), and the runs drawn from them.
    std::weak_ptr<const ForwardResult> map_pass;
    int map_layer = -1, map_head = -1, L = 0;
    std::vector<float> scores;  // (L, L): q.k / sqrt(d)
    std::string map_normalizer;
    double map_T = 0.0;
    std::vector<float> weights;  // (L, L): the normalizer at T, row by row; 0 above the diagonal
    float max_weight = 0.0f;
    heatmap::CellRuns runs;  // bins x bins (block max-pooled when L x L needs too many runs)
    int bins = 0;
    std::string map_error;
    double reshape_ms = 0.0;  // the last re-shape (normalize every row + runs)

    // The model changes in words, for the plan and trained plan they were made from.
    AttentionPlan words_plan, words_trained;
    std::string plan_words;

    std::string apply_error;
    ApplyScope apply_scope = ApplyScope::Head;

    // The next-token top-10 of the model as it runs (after) and, when the plan changes the model,
    // as trained (before), and each "after" token's rank as trained.
    std::weak_ptr<const ForwardResult> top_pass, top_baseline;
    std::vector<TokenProbability> before, after;
    std::vector<int> was_rank;

    // status()'s next-token lists as JSON, made once per pass: a tour caption that names them
    // reads status() every frame, and each list is a pass over the whole vocabulary's logits.
    struct TopJson {
        std::weak_ptr<const ForwardResult> pass;
        std::string json;
    };
    mutable TopJson top_json_now, top_json_trained;

    TwinPanel twin;  // "Compare with the twin": drawn in place of the map and the row when on
};

void draw_attention_panel(AttentionPanel& panel, PanelContext& ctx);

// The panel's part of window.attnlab.status(): {layer, head, query, T, normalizer, N, row,
// selected, top10, baseline_top10, ...} and the head grid's fields (add_head_grid_status).
std::string attention_status_json(const AttentionPanel& panel, const Session& s);

// window.attnlab.status().model_changes: {spec (view.plan), effective (the plan the model runs,
// relative to its trained plan), error, changed_heads, heads [[layer, head]...], words,
// forward_current, baseline_is_forward, perplexity_before, perplexity_after ({tokens, mean_nll,
// perplexity} or null while computing)}.
std::string model_changes_status_json(const Session& s);

}  // namespace attnlab
