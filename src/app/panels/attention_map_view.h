#pragma once
// The attention panel's map of the open head: an overview of max or sum blocks (the grid the
// map's pixels allow), zoomed and panned down to single cells, hovered for a block's queries, keys
// and value. The numbers come from app/work/head_map.h, computed when the head, the pass, the
// normalizer, T, the window or the aggregation change, never per frame.
//
// Mouse: the wheel zooms at the pointer; a right or middle drag (or Shift and a left drag) pans; a
// click or a left drag chooses the query row. Touch: two fingers that start over the map zoom it
// about their midpoint (elsewhere they set the UI scale), a tap chooses the row, and a swipe
// scrolls the page; buttons zoom in and out around the chosen query and reset the view.
#include <string>

#include "analysis/block_map.h"
#include "app/panel_context.h"
#include "app/work/head_map.h"
#include "base/json.h"

namespace attnlab {

struct AttentionMapView {
    MapWindow window;  // the part of the map shown; the whole map after a reset or a new length
    int window_L = 0;  // the length `window` is of
    BlockAggregation how = BlockAggregation::Max;
    int max_blocks = 256;  // blocks a side the map's pixels allow (from the last draw)
    HeadMapWork work;

    // The block under the pointer (for the tooltip and status()).
    struct Hover {
        bool on = false;
        int q0 = 0, q1 = 0, k0 = 0, k1 = 0;  // its queries [q0, q1) and keys [k0, k1)
        double value = 0.0;                  // NaN: no key of it is visible
    } hover;
    float pan_x = 0.0f, pan_y = 0.0f;  // a pan drag in flight, in pixels
    int pan_button = -1;               // the mouse button dragging it, or -1
    // A pinch the map took, in flight: the picture scales about the fingers' midpoint (pixels from
    // the map's corner), and the window zooms when they lift.
    float pinch_scale = 0.0f;  // 0: none
    float pinch_x = 0.0f, pinch_y = 0.0f;
};

// The window for a pass of L tokens (a new length shows the whole map), then the map for the open
// head: started when what it shows changed, handed over when done. Once a frame with the panel.
void keep_attention_map_view(AttentionMapView& v, Session& s, int layer, int head);

// Draws the map's title (layer, head, normalizer, T, then `note`), the controls (max / sum, zoom,
// reset), the map with its axes in token positions, its colour bar and what it shows, in a child
// of `size`.
void draw_attention_map_view(AttentionMapView& v, PanelContext& ctx, ImVec2 size, const std::string& note);

// A token as the map's labels show it: its chip text, cut to 14 characters.
std::string short_token_label(const Session& s, int position);

// status().attention.map: {aggregation, window [q0, q1, k0, k1], block_rows, block_cols,
// block_queries, block_keys (tokens a block holds, the largest), exact, computing, progress,
// max, ms, error, pinch (a pinch's scale in flight, 0: none), hover {q0, q1, k0, k1, value} or null}.
std::string attention_map_status_json(const AttentionMapView& v);

}  // namespace attnlab
