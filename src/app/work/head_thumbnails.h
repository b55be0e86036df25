#pragma once
// The head grid's background work: every head's map as the pass ran it (its plan), for one forward pass, max-pooled
// into thumbnails and scored for the two patterns the grid marks (previous-token and induction
// heads; the analyses are previous_token_weight and induction_score in src/analysis/attention_map.h).
#include <memory>
#include <vector>

#include "analysis/attention_map.h"
#include "app/long_samples.h"
#include "app/plot/heatmap.h"
#include "app/session.h"
#include "app/work/task_runner.h"

namespace attnlab {

// The two patterns the grid marks.
enum class HeadPattern { PreviousToken, Induction };
inline constexpr HeadPattern kHeadPatterns[] = {HeadPattern::PreviousToken, HeadPattern::Induction};

// One value per pattern, read by name or by pattern.
template <typename T>
struct ByPattern {
    T previous_token{}, induction{};
    T& operator[](HeadPattern p) { return p == HeadPattern::PreviousToken ? previous_token : induction; }
    const T& operator[](HeadPattern p) const { return p == HeadPattern::PreviousToken ? previous_token : induction; }
};

// Every head's map under the pass's plan (softmax at T = 1 as trained), each max-pooled to at most kThumbnailBins
// square blocks, for one forward pass.
struct AttentionThumbnails {
    // 20 x 20 blocks: a thumbnail is ~40 pixels wide, and 144 of them are redrawn every frame.
    static constexpr int kThumbnailBins = 20;
    std::weak_ptr<const ForwardResult> pass;
    int layers = 0, heads = 0;
    std::vector<PooledMap> maps;          // layer-major
    std::vector<heatmap::CellRuns> runs;  // the same, as coloured runs (each map to its own max)
    // Layer-major, per pattern: each head's mean weight on the previous token
    // (previous_token_weight; NaN when L < 2), and its induction_score on the pass's tokens (NaN
    // when no token occurs twice).
    ByPattern<std::vector<double>> scores;
    ByPattern<double> uniform;  // what uniform attention scores (uniform_previous_token_weight, ...)
    // Fading (PAPER.md §2, the Fading panel), from the same rows: each head's (layer-major, L
    // entries a head) largest and smallest weight of each query i over its i + 1 keys.
    int L = 0;
    std::vector<float> largest, smallest;
    // The needle sample's queries (needle_probes on the pass's tokens; empty for other texts) and
    // each head's weight from each query to the needle's key: heads x probes, layer-major.
    std::vector<NeedleProbe> probes;
    std::vector<float> probe_weights;
    double seconds = 0;  // wall time of the computation
};

struct HeadThumbnails {
    // The thumbnails of the current pass once complete (null while computing).
    std::shared_ptr<const AttentionThumbnails> done;
    std::weak_ptr<const ForwardResult> pass;  // the pass the running or last task is for
    // Declared after `done`: destroyed first, so a running task never outlives its target.
    TaskRunner work;
};

// The task keep_head_thumbnails starts for `forward`: every head's rows a block at a time, into
// *slot when finished. Exposed for the tests, which run its steps alone.
std::unique_ptr<Task> thumbnail_task(std::shared_ptr<const ForwardResult> forward, std::shared_ptr<const AttentionThumbnails>* slot,
                                     std::vector<NeedleProbe> probes);

// The needle's queries in `tokens` under the session's tokenizer (empty without the needle).
std::vector<NeedleProbe> session_needle_probes(const Session& s, std::span<const int> tokens);

// Starts the thumbnails' background computation when the forward pass changed. Once a frame, with
// the other keep_* steps; the caller pumps t.work, which hands the results over (draw_app: after
// the model's pass, before the text's perplexity).
void keep_head_thumbnails(HeadThumbnails& t, Session& s);

// The head with the largest score of a pattern (layer-major index), -1 when no score is a number.
int best_head(const AttentionThumbnails& t, HeadPattern p);

// The head whose previous-token or induction score stands out most from uniform attention's
// (the largest ratio to AttentionThumbnails::uniform), as {layer, head}; false when no head is at
// least kLearnedOverUniform times uniform, that is, when no head has learned either pattern.
bool strongest_learned_head(const AttentionThumbnails& t, int& layer, int& head);

// The head a first visit opens on: the strongest induction head when one is learned, else
// strongest_learned_head. A previous-token head puts nearly all its weight on one key, so its
// bars, the sparsemax preview and the Theorem 2 picture show nothing to compare; an induction
// head splits its weight over every earlier occurrence's successor, which is the paper's subject.
bool first_view_head(const AttentionThumbnails& t, int& layer, int& head);

}  // namespace attnlab
