#pragma once
// The attention map's layer x head grid: every head's map as trained, computed in the
// background, with the previous-token heads and the induction heads marked (the analyses are
// previous_token_weight and induction_score in src/analysis/attention_map.h).
#include <memory>
#include <string>
#include <vector>

#include "analysis/attention_map.h"
#include "app/plot/heatmap.h"
#include "app/panel_context.h"
#include "app/work/task_runner.h"
#include "base/json.h"

namespace attnlab {

// Every head's map as trained (softmax, T = 1), each max-pooled to at most kThumbnailBins
// square blocks, for one forward pass.
struct AttentionThumbnails {
    // 20 x 20 blocks: a thumbnail is ~40 pixels wide, and 144 of them are redrawn every frame.
    static constexpr int kThumbnailBins = 20;
    std::weak_ptr<const ForwardResult> pass;
    int layers = 0, heads = 0;
    std::vector<PooledMap> maps;           // layer-major
    std::vector<heatmap::CellRuns> runs;   // the same, as coloured runs (each map to its own max)
    std::vector<double> previous_token;    // layer-major: each head's mean weight on the previous
                                           // token (previous_token_weight; NaN when L < 2)
    std::vector<double> induction;         // layer-major: each head's induction_score on the pass's
                                           // tokens (NaN when no token occurs twice)
    double uniform[2] = {0.0, 0.0};       // what uniform attention scores: [0] previous-token,
                                           // [1] induction (uniform_previous_token_weight, ...)
    double seconds = 0;                    // wall time of the computation
};

struct HeadGrid {
    // The thumbnails of the current pass once complete (null while computing).
    std::shared_ptr<const AttentionThumbnails> thumbnails;
    std::weak_ptr<const ForwardResult> thumbnails_pass;  // the pass the running or last task is for
    int pumped_frame = -1;
    // The heads the grid marked, in the frame `marked_frame`, for the thumbnails `marked_for`:
    // what was shown, for the status (and so the browser test). [0] previous-token heads,
    // [1] induction heads (head_grid.cpp's kPatterns).
    struct Mark {
        int layer = 0, head = 0;
        double weight = 0.0;
    };
    std::vector<Mark> marked[2];
    int marked_frame = -1;
    std::weak_ptr<const AttentionThumbnails> marked_for;
    // Declared after `thumbnails`: destroyed first, so a running task never outlives its target.
    TaskRunner work;
};

// Starts the thumbnails' background computation when the forward pass changed, and hands its
// results over. Call once per frame (the panel calls it too; repeated calls are harmless).
void keep_head_grid(HeadGrid& grid, Session& s);

// The grid, `width` wide; a click opens a head (view.layer, view.head). Needs s.forward.
void draw_head_grid(HeadGrid& grid, PanelContext& ctx, float width);

// status().attention's grid fields: thumbnails_ready, thumbnails_seconds, and once ready,
// previous_token and induction, each {threshold, uniform (what uniform attention scores), weights
// (per layer, per head), best {layer, head, weight}, marked [{layer, head, weight}]: the heads the
// grid drew a mark on in the last frame}.
void add_head_grid_status(const HeadGrid& grid, const Session& s, json::ObjectBuilder& o);

// The head whose previous-token or induction score stands out most from uniform attention's
// (the largest ratio to AttentionThumbnails::uniform), as {layer, head}; false when no head is at
// least kLearnedOverUniform times uniform, that is, when no head has learned either pattern.
bool strongest_learned_head(const AttentionThumbnails& t, int& layer, int& head);

}  // namespace attnlab
