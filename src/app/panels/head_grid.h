#pragma once
// The attention map's layer x head grid: every head's map as the model runs now, under its plan
// (src/app/work/head_thumbnails.h),
// with the previous-token heads and the induction heads marked.
#include <memory>
#include <string>
#include <vector>

#include "app/panel_context.h"
#include "app/work/head_thumbnails.h"
#include "base/json.h"

namespace attnlab {

struct HeadGrid {
    HeadThumbnails thumbnails;  // computed in the background (app.cpp keeps them current)
    // The heads the grid marked, in the frame `marked_frame`, for the thumbnails `marked_for`:
    // what was shown, for the status (and so the browser test).
    struct Mark {
        int layer = 0, head = 0;
        double weight = 0.0;
    };
    ByPattern<std::vector<Mark>> marked;
    int marked_frame = -1;
    std::weak_ptr<const AttentionThumbnails> marked_for;
    // "attention.thumb.L.H" for each head (layer-major), for a grid of names_layers x names_heads.
    std::vector<std::string> thumb_names;
    int names_layers = 0, names_heads = 0;
    // What each cell shows. Thumbnails while a model has at most kThumbnailHeads heads; beyond,
    // each head is a cell coloured by one summary, so that 270-450 heads stay readable.
    enum class Cells { Auto, Thumbnails, Summary };
    Cells cells = Cells::Auto;
    int summary = 0;  // index into the summaries the grid offers (head_grid.cpp's kSummaries)
};
inline constexpr int kThumbnailHeads = 144;  // GPT-2 small: 12 x 12

// The grid, `width` wide; a click opens a head (view.layer, view.head). Needs s.forward.
void draw_head_grid(HeadGrid& grid, PanelContext& ctx, float width);

// status().attention's grid fields: cells ("thumbnails" or "summary"), summary (its name), layers, heads, thumbnails_ready,
// thumbnails_seconds, and once ready, previous_token and induction, each {threshold, uniform (what uniform attention scores), weights (per
// layer, per head), best {layer, head, weight}, marked [{layer, head, weight}]: the heads the grid drew a mark on in the last frame}.
void add_head_grid_status(const HeadGrid& grid, const Session& s, json::ObjectBuilder& o);

}  // namespace attnlab
