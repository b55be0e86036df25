#pragma once
// Panel 2, Attention map: the layer x head thumbnails, the open head's heatmap, one query's
// weights as bars, the normalizer and temperature controls, and "apply to the model".
#include <memory>
#include <string>
#include <vector>

#include "analysis/attention_map.h"
#include "app/heatmap.h"
#include "app/panel_context.h"

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
    double seconds = 0;                    // wall time of the computation
};

struct AttentionPanel {
    // The thumbnails of the current pass once complete (null while computing).
    std::shared_ptr<const AttentionThumbnails> thumbnails;
    std::weak_ptr<const ForwardResult> thumbnails_pass;  // the pass the running or last task is for
    int pumped_frame = -1;
    // Declared after `thumbnails`: destroyed first, so a running task never outlives its target.
    TaskRunner thumbnail_work;

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

// Starts the thumbnails' background computation when the forward pass changed, and hands its
// results over. Call once per frame (the panel calls it too; repeated calls are harmless).
void keep_attention_thumbnails(AttentionPanel& panel, Session& s);

// The panel's part of window.attnlab.status(): {layer, head, query, T, normalizer, N, row,
// selected, thumbnails_ready, top10, probe_top10, ...}.
std::string attention_status_json(const AttentionPanel& panel, const Session& s);

}  // namespace attnlab
