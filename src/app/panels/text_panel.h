#pragma once
// Panel 1, Text & tokens: the text box, the tokens as chips, the context counter, generation
// and sample texts.
#include <memory>
#include <string>

#include "app/panel_context.h"
#include "app/token_chip.h"  // chip_label and escaped_bytes, which the panels read through this header
#include "app/work/model_tasks.h"

namespace attnlab {

struct TextPanel {
    // Generation controls.
    bool sample = false;  // false: greedy
    float temperature = 0.8f;
    int top_k = 40;
    int count = 20;
    int seed = 0;
    std::shared_ptr<GeneratedText> generated;  // the last continuation (its chips are outlined)
    std::string generate_error;                // why the last "Generate" could not start

    // The text's full token count (before clipping), recounted only when the text changes.
    std::string counted_text;
    int full_count = 0;

    // The text box keeps its own copy while it has focus; when the text changes from outside
    // (a sample, generation, a link) the box is re-created under a new id to show the new text.
    std::string shown_text;
    int box_epoch = 0;
};

void draw_text_panel(TextPanel& panel, PanelContext& ctx);

// The text an empty view starts with: the "King James Bible" sample (Genesis 1:1-6), which the
// built-in model knows.
const char* start_text();

// The panel's part of window.attnlab.status(): {tokens, full_tokens, limit, clipped, generated}.
std::string text_status_json(const TextPanel& panel, const Session& s);

}  // namespace attnlab
