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
#include "app/panels/attention_map_view.h"
#include "app/panels/head_grid.h"
#include "app/panels/twin_panel.h"
#include "app/work/model_tasks.h"

namespace attnlab {

struct AttentionPanel {
    HeadGrid grid;  // every head's thumbnail, previous-token heads marked

    // The chosen query's row (the row plot), for slice_key; slice_error says why there is none.
    QuerySlice slice;
    QueryKey slice_key;
    std::string slice_error;

    // The open head's map: blocks of a window of it, zoomed and panned (attention_map_view.h).
    AttentionMapView map;
    // The row plot's key axis: positions (linear), or on a log axis the distance back from the
    // query (1 = the query itself) or the position + 1.
    enum class RowAxis { Position, LogDistance, LogPosition };
    RowAxis row_axis = RowAxis::Position;

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
