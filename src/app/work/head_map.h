#pragma once
// The attention panel's map of the open head: its causal weights under the view's normalizer and
// temperature (the panel's preview), as max or sum blocks of a window of the map (analysis/
// block_map.h), computed a few query rows at a time from the pass's kept queries and keys. Memory
// grows with L (the head's q and k, a block of rows, the blocks), never L^2: an 8,192-token map's
// weights would take 268 MB. A small window (a few hundred rows of a short text) is computed at
// once; a larger one on a worker (TaskRunner), with progress, the panel showing the last map
// meanwhile.
#include <memory>
#include <string>

#include "analysis/block_map.h"
#include "app/plot/heatmap.h"
#include "app/session.h"
#include "app/work/task_runner.h"

namespace attnlab {

// What the panel asks for: one head of one pass, its normalizer and T, a window of the map, and at
// most max_blocks blocks a side (the map's pixels), aggregated `how`.
struct HeadMapRequest {
    std::weak_ptr<const ForwardResult> pass;  // weak: a finished map does not keep an old pass's Q/K/V alive
    int layer = -1, head = -1;
    std::string normalizer;
    double T = 1.0;
    MapWindow window;
    int max_blocks = 256;
    BlockAggregation how = BlockAggregation::Max;
};
bool same_request(const HeadMapRequest& a, const HeadMapRequest& b);

// A computed map: the blocks (halved until their runs fit heatmap::kMaxRuns) and their runs, or
// the error of the first row the normalizer refused.
struct HeadMap {
    HeadMapRequest request;
    BlockMap blocks;
    heatmap::CellRuns runs;
    std::string error;
    double ms = 0.0;  // wall time of the computation
};

struct HeadMapWork {
    std::shared_ptr<const HeadMap> done;  // the last map finished (perhaps for an older request)
    HeadMapRequest wanted;                // the request computed or in flight
    TaskRunner work;                      // declared last: destroyed first

    bool computing() const { return work.busy(); }
    double progress() const { return work.progress(); }
};

// Windows of at most this many query rows x L keys are computed at once, on the UI thread (about
// the cost of the old whole-map re-shape at 1,024 tokens); larger ones on the runner.
inline constexpr long long kHeadMapCellsAtOnce = 1024LL * 1024;

// Starts the map for `r` when it differs from what was asked for last (a small window at once).
// Once a frame while the panel shows the map; never computes when nothing changed.
void keep_head_map(HeadMapWork& w, Session& s, const HeadMapRequest& r);
// Steps a long map (without threads) and hands it over when done: once a frame from the frame
// loop, whether the panel is shown or not, so that a map started never waits for the panel.
void pump_head_map(HeadMapWork& w, Session& s);

}  // namespace attnlab
