#pragma once
// Panel 1, Text & tokens: the text box, the tokens as chips, the context counter, generation
// and sample texts.
#include <memory>
#include <string>
#include <vector>

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

    // The chips laid out once per change of the tokens, the box's width or the font (thousands of
    // tokens: each frame draws only the lines in view).
    struct ChipLayout {
        std::vector<int> tokens;
        const void* tokenizer = nullptr;  // the tokenizer the labels were made with
        float width = 0.0f, font = 0.0f;
        std::vector<std::string> labels;
        std::vector<float> widths;
        std::vector<size_t> offsets;  // each token's first byte in the text
        std::vector<int> line_starts;
    } layout;
    // The chosen query's weights on the keys it sees (the open head's row, under the view's
    // normalizer and T), remade when the query, the head or the pass changes.
    ChosenQueryView row;
    std::vector<float> row_weights;
    float row_max = 0.0f;
    int scrolled_to = -1;  // the query the chips were last scrolled to
    // What the last frame drew, for the status: the lines in view and the time the chips took.
    int first_line = 0, last_line = 0, chips_drawn = 0;
    double chips_ms = 0.0;
};

void draw_text_panel(TextPanel& panel, PanelContext& ctx);

// The text an empty view starts with: the "King James Bible" sample (Genesis 1:1-6), which the
// built-in model knows.
const char* start_text();

// The panel's part of window.attnlab.status(): {tokens, full_tokens, limit, clipped, generated,
// chips: {lines, first_line, last_line, drawn, ms, query_line}, row: {query, layer, head, max}}.
std::string text_status_json(const TextPanel& panel, const Session& s);

}  // namespace attnlab
