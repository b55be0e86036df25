#include "app/panels/text_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/long_samples.h"
#include "app/panels/pane_layout.h"
#include "app/panels/string_input.h"
#include "app/plot/plot.h"
#include "base/json.h"
#include "base/timing.h"
#include "base/utf8.h"

namespace attnlab {

namespace {

// Sample texts, written for AttnLab: each gives some head something to do.
struct SampleText {
    const char* title;
    const char* text;
};
constexpr SampleText kSamples[] = {
    // First: the start text. The built-in model (AttnLab tiny) was trained on the King James Bible,
    // laid out as here (a chapter title, one verse a line, no verse numbers); Genesis 1 repeats
    // words ("light", "waters", "And God said"), so copying heads have something to find. 139 tokens.
    {"King James Bible",
     "Genesis 1\n"
     "In the beginning God created the heaven and the earth.\n"
     "And the earth was without form, and void; and darkness was upon the face of the deep. And the Spirit of God "
     "moved upon the face of the waters.\n"
     "And God said, Let there be light: and there was light.\n"
     "And God saw the light, that it was good: and God divided the light from the darkness.\n"
     "And God called the light Day, and the darkness he called Night. And the evening and the morning were the first "
     "day.\n"
     "And God said, Let there be a firmament in the midst of the waters, and let it divide the waters from the waters."},
    // A passage and its repeat: an induction head looks from each repeated token to the one that
    // followed it the first time, so its map shows a stripe parallel to the diagonal, and the
    // model predicts the repeat's next word ("bread", which followed "baked"). "baked" is said
    // once: with "bought bread" after "bought apples" the built-in 4-layer model, which copies what
    // followed the last token, left "bread" out of its top 10.
    {"Repeated names",
     "Mary and John went to the market on Saturday. Mary bought apples and John baked bread. On Sunday, Mary "
     "and John went to the market again. Mary bought apples and John baked"},
    {"A long list",
     "Things to pack for the hike: tent, sleeping bag, stove, matches, water filter, map, compass, first-aid kit, "
     "headlamp, spare batteries, rain jacket, warm socks, sunscreen, snacks, and"},
    {"Python code", "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n -"},
    {"A short story",
     "The lighthouse keeper had not seen a ship in eleven days. Each night she climbed the ninety-two steps, lit the "
     "lamp, and wrote one line in the log:"},
};

// The chips' alternating soft backgrounds and the outlines.
constexpr ImU32 kChipFill[2] = {IM_COL32(208, 228, 246, 255), IM_COL32(251, 229, 200, 255)};
constexpr ImU32 kChipText = IM_COL32(20, 20, 20, 255);

void set_text(TextPanel& p, Session& s, std::string text) {
    s.view.text = std::move(text);
    s.view.query = -1;
    p.generated.reset();
}

// "12 / 256 tokens"; with no model yet, no limit (issue 35: GPT-2's 1024 showed during tiny's download).
std::string counter_label(const Session& s, int n) {
    if (!s.model) return std::to_string(n) + " tokens (the model's context limit shows once it is loaded)";
    return std::to_string(n) + " / " + std::to_string(context_limit(s)) + " tokens";
}

void draw_counter(TextPanel& p, const Session& s) {
    const int limit = context_limit(s);
    const int n = static_cast<int>(s.tokens.size());
    // Only a text at the limit can have been clipped: count it whole then (once per change).
    if (p.counted_text != s.tokens_text) {
        p.counted_text = s.tokens_text;
        p.full_count = n >= limit && s.tokenizer.loaded() ? static_cast<int>(s.tokenizer.encode(s.tokens_text).size()) : n;
    }
    const bool clipped = p.full_count > n;
    if (clipped) ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
    ImGui::TextUnformatted(counter_label(s, n).c_str());
    if (clipped) {
        ImGui::SameLine();
        ImGui::Text("(the text is %d tokens; only the first %d are used)", p.full_count, limit);
        ImGui::PopStyleColor();
    }
    if (!s.tokenizer_error.empty()) {  // waiting for a model's tokenizer is said under it, in the chips' place
        ImGui::SameLine();
        ImGui::TextDisabled("(no vocabulary: %s)", s.tokenizer_error.c_str());
    }
}

// The chips' labels, widths and lines, remade only when the tokens, the width or the font change.
void keep_chip_layout(TextPanel::ChipLayout& c, const Session& s, float width, float pad, float gap) {
    const float font = ImGui::GetFontSize();
    if (c.tokens == s.tokens && c.tokenizer == &s.tokenizer && c.width == width && c.font == font) return;
    c.tokens = s.tokens;
    c.tokenizer = &s.tokenizer;
    c.width = width;
    c.font = font;
    c.labels.clear(), c.widths.clear(), c.offsets.clear();
    size_t offset = 0;
    for (int id : s.tokens) {
        const std::string bytes = s.tokenizer.token_bytes(id);
        c.labels.push_back(chip_label(bytes));
        c.widths.push_back(ImGui::CalcTextSize(c.labels.back().c_str()).x + 2 * pad);
        c.offsets.push_back(offset);
        offset += bytes.size();
    }
    c.line_starts = chip_line_starts(c.widths, gap, width);
}

// The chosen query's row for the open head, when the query, the head or the pass changed.
void keep_query_row(TextPanel& p, const Session& s) {
    QuerySlice slice;
    if (!chosen_query_place(s, slice, p.row)) {
        p.row_weights.clear();
        return;
    }
    const QueryKey key = query_key(s, slice, kKeyN | kKeyEps);
    if (p.row.ready && same_query(p.row.key, key)) return;
    p.row.key = key;
    p.row.ready = fill_query_slice(s, slice, p.row.error);
    p.row_weights.assign(slice.weights.begin(), slice.weights.end());
    p.row_max = p.row_weights.empty() ? 0.0f : *std::max_element(p.row_weights.begin(), p.row_weights.end());
}

// A chip's fill: the alternating soft colours, or, for a key the chosen query sees, white to
// orange by its weight relative to the row's largest.
ImU32 chip_fill(const TextPanel& p, int i) {
    if (i >= static_cast<int>(p.row_weights.size()) || p.row_max <= 0.0f) return kChipFill[i % 2];
    const float t = std::clamp(p.row_weights[static_cast<size_t>(i)] / p.row_max, 0.0f, 1.0f);
    const auto mix = [t](int a, int b) { return static_cast<int>(static_cast<float>(a) + (static_cast<float>(b) - a) * t); };
    return IM_COL32(mix(250, 230), mix(250, 120), mix(250, 0), 255);
}

void draw_chip_tooltip(const Session& s, const TextPanel& p, int position, int id, bool generated) {
    const std::string bytes = s.tokenizer.token_bytes(id);
    ImGui::BeginTooltip();
    ImGui::Text("position %d   id %d", position, id);
    ImGui::Text("bytes \"%s\"", escaped_bytes(bytes).c_str());
    ImGui::Text("%d byte%s%s", static_cast<int>(bytes.size()), bytes.size() == 1 ? "" : "s", generated ? ", generated" : "");
    if (position < static_cast<int>(p.row_weights.size()))
        ImGui::Text("weight from the chosen query (layer %d, head %d): %.4g", p.row.key.layer, p.row.key.head,
                    static_cast<double>(p.row_weights[static_cast<size_t>(position)]));
    if (s.forward) ImGui::TextDisabled("Click: make this the chosen query (or move it with the arrow keys).");
    ImGui::EndTooltip();
}

// Left and right arrows move the chosen query while the chips have focus.
void move_query_by_keys(Session& s, int chosen) {
    if (!ImGui::IsWindowFocused() || s.tokens.empty()) return;
    const int last = static_cast<int>(s.tokens.size()) - 1;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) s.view.query = std::max(0, chosen - 1);
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) s.view.query = std::min(last, chosen + 1);
}

// The tokens as wrapped chips, coloured by the chosen query's weights; hover for the details,
// click to choose the query. Only the lines in view are drawn. `height` 0: the rest of the pane.
void draw_chips(TextPanel& p, PanelContext& ctx, float height) {
    const SteadyClock::time_point started = SteadyClock::now();
    Session& s = ctx.session;
    ImGui::BeginChild("##chips", ImVec2(0, height), true);
    if (s.tokens.empty())
        ImGui::TextDisabled(s.tokenizer.loaded()        ? "Type or paste a text above."
                            : s.tokenizer_error.empty() ? "The tokens show once the model's tokenizer is in."
                                                        : "No vocabulary loaded.");
    const float pad = ImGui::GetFontSize() * 0.25f, gap = ImGui::GetFontSize() * 0.2f;
    keep_chip_layout(p.layout, s, ImGui::GetContentRegionAvail().x, pad, gap);
    keep_query_row(p, s);
    const TextPanel::ChipLayout& c = p.layout;
    const int chosen = s.forward || !s.tokens.empty() ? chosen_query(s) : -1;
    // The generated continuation, in bytes of the text, when the text still holds it.
    size_t gen_begin = 0, gen_end = 0;
    if (p.generated && s.tokens_text.compare(0, p.generated->prefix.size() + p.generated->continuation.size(),
                                             p.generated->prefix + p.generated->continuation) == 0) {
        gen_begin = p.generated->prefix.size();
        gen_end = gen_begin + p.generated->continuation.size();
    }
    const float chip_h = ImGui::GetTextLineHeight() + 2 * pad, line_h = chip_h + ImGui::GetStyle().ItemSpacing.y;
    const int lines = static_cast<int>(c.line_starts.size()), n = static_cast<int>(c.labels.size());
    // A query chosen elsewhere (a row click, a link, the arrow keys): bring its line into view.
    // The default query (the last token, view.query -1) moves with every new text and pass: the
    // box then stays where the reader left it.
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    if (s.view.query < 0) p.scrolled_to = chosen;
    if (chosen >= 0 && chosen != p.scrolled_to && lines > 0) {
        p.scrolled_to = chosen;
        // SetScrollFromPosY takes the line's place in the window as it shows now, scrolled.
        const float shown_y = origin.y - ImGui::GetWindowPos().y + chip_line_of(c.line_starts, chosen) * line_h;
        ImGui::SetScrollFromPosY(shown_y + chip_h * 0.5f, 0.5f);
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    p.chips_drawn = 0;
    p.first_line = p.last_line = 0;
    ImGuiListClipper clipper;
    clipper.Begin(lines, line_h);
    while (clipper.Step()) {
        p.first_line = clipper.DisplayStart;
        p.last_line = clipper.DisplayEnd - 1;
        for (int line = clipper.DisplayStart; line < clipper.DisplayEnd; ++line) {
            const ImVec2 line0 = ImGui::GetCursorScreenPos();
            const int end = line + 1 < lines ? c.line_starts[static_cast<size_t>(line) + 1] : n;
            float x = line0.x;
            for (int i = c.line_starts[static_cast<size_t>(line)]; i < end; ++i) {
                const ImVec2 a(x, line0.y), b(x + c.widths[static_cast<size_t>(i)], line0.y + chip_h);
                x = b.x + gap;
                ImGui::SetCursorScreenPos(a);
                ImGui::PushID(i);
                if (ImGui::InvisibleButton("##chip", ImVec2(b.x - a.x, chip_h))) s.view.query = p.scrolled_to = i;
                ImGui::PopID();
                const bool generated = c.offsets[static_cast<size_t>(i)] >= gen_begin && c.offsets[static_cast<size_t>(i)] < gen_end;
                // Square corners: a rounded chip costs ~8x the vertices, and WebGL's draw lists hold 65536.
                dl->AddRectFilled(a, b, chip_fill(p, i));
                if (generated) dl->AddRect(a, b, plot::colors::green, 0.0f, 0, 2.0f);
                if (i == chosen) dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), plot::colors::vermillion, 0.0f, 0, 2.5f);
                if (ImGui::IsItemHovered()) {
                    dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Text));
                    draw_chip_tooltip(s, p, i, s.tokens[static_cast<size_t>(i)], generated);
                }
                dl->AddText(ImVec2(a.x + pad, a.y + pad), kChipText, c.labels[static_cast<size_t>(i)].c_str());
                ++p.chips_drawn;
            }
            ImGui::SetCursorScreenPos(line0);
            ImGui::Dummy(ImVec2(1.0f, chip_h));
        }
    }
    clipper.End();
    move_query_by_keys(s, chosen);
    ImGui::EndChild();
    remember_last_item(ctx.widgets, "text.chips");
    p.chips_ms = ms_since(started);
}

void draw_generation(TextPanel& p, PanelContext& ctx) {
    Session& s = ctx.session;
    ImGui::TextUnformatted("Continue the text");
    int mode = p.sample ? 1 : 0;
    ImGui::RadioButton("greedy", &mode, 0);
    remember_last_item(ctx.widgets, "text.greedy");
    ImGui::SameLine();
    ImGui::RadioButton("sample", &mode, 1);
    remember_last_item(ctx.widgets, "text.sample_mode");
    p.sample = mode == 1;
    ImGui::BeginDisabled(!p.sample);
    ImGui::SliderFloat("temperature", &p.temperature, 0.05f, 2.0f, "%.2f", ImGuiSliderFlags_AlwaysClamp);
    remember_last_item(ctx.widgets, "text.temperature");
    ImGui::SliderInt("top-k", &p.top_k, 0, 200, p.top_k == 0 ? "all" : "%d", ImGuiSliderFlags_AlwaysClamp);
    remember_last_item(ctx.widgets, "text.top_k");
    ImGui::InputInt("seed", &p.seed);
    p.seed = std::max(p.seed, 0);
    ImGui::EndDisabled();
    ImGui::SliderInt("new tokens", &p.count, 1, 200, "%d", ImGuiSliderFlags_AlwaysClamp);
    remember_last_item(ctx.widgets, "text.count");

    const char* reason = !s.model ? "Load a model to generate." : !s.tokenizer.loaded() ? "The vocabulary is not loaded." : nullptr;
    ImGui::BeginDisabled(reason != nullptr);
    if (ImGui::Button("Generate")) {
        GenerateOptions o;
        o.sample = p.sample;
        o.temperature = p.temperature;
        o.top_k = p.top_k;
        o.count = p.count;
        o.seed = static_cast<std::uint64_t>(p.seed);
        auto out = std::make_shared<GeneratedText>();
        p.generate_error.clear();
        if (start_generation(s, o, out, p.generate_error)) p.generated = std::move(out);
    }
    ImGui::EndDisabled();
    remember_last_item(ctx.widgets, "text.generate");
    if (reason) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", reason);
    }
    if (!p.generate_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
        ImGui::TextWrapped("%s", p.generate_error.c_str());
        ImGui::PopStyleColor();
    }
    if (p.generated && !p.generated->ids.empty()) {
        ImGui::TextDisabled("Last: %d new tokens (outlined in green)%s", static_cast<int>(p.generated->ids.size()),
                            p.generated->stopped_at_end ? ", stopped at <|endoftext|>" : "");
    }
}

}  // namespace

const char* start_text() { return kSamples[0].text; }

void draw_text_panel(TextPanel& p, PanelContext& ctx) {
    Session& s = ctx.session;
    const float side_w = ImGui::GetFontSize() * 20.0f;
    const Panes panes = begin_panes("##text_panes", 20.0f, 25.0f);

    begin_pane(panes, "##text_main", -side_w - ImGui::GetStyle().ItemSpacing.x, false);
    // A change from outside (sample, generation, link) while the box has focus would be
    // overwritten by the box's own copy: re-create the box instead.
    if (s.view.text != p.shown_text) ++p.box_epoch;
    ImGui::PushID(p.box_epoch);
    const float line = ImGui::GetTextLineHeight();
    const float box_h =
        panes.stacked ? std::max(line * 5.0f, panes.view_h * 0.3f) : std::max(line * 8.0f, ImGui::GetContentRegionAvail().y * 0.35f);
    input_string_multiline("##text", s.view.text, ImVec2(-1, box_h));
    ImGui::PopID();
    remember_last_item(ctx.widgets, "text.input");
    p.shown_text = s.view.text;
    draw_counter(p, s);
    draw_chips(p, ctx, panes.stacked ? std::max(line * 8.0f, panes.view_h * 0.6f) : 0.0f);
    end_pane(panes);

    beside(panes);
    begin_pane(panes, "##text_side", 0, true);
    ImGui::TextUnformatted("Sample texts");
    for (int i = 0; i < static_cast<int>(std::size(kSamples)); ++i) {
        if (ImGui::Button(kSamples[i].title, ImVec2(-1, 0))) set_text(p, s, kSamples[i].text);
        remember_last_item(ctx.widgets, (std::string("text.sample.") + std::to_string(i)).c_str());
    }
    // The long samples (issue 38): clipped to the model's context like any text, whole on modern models.
    if (ImGui::Button("Genesis 1-10 (about 8,000 tokens)", ImVec2(-1, 0))) set_text(p, s, std::string(genesis_text()));
    remember_last_item(ctx.widgets, "text.sample.genesis");
    if (ImGui::Button("A needle in 8,000 tokens", ImVec2(-1, 0))) set_text(p, s, needle_text(genesis_text()));
    remember_last_item(ctx.widgets, "text.sample.needle");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Genesis with a made-up name planted near the start and its first half repeated ever further on:\n"
            "the Fading panel plots how much weight the repeats put on the name's continuation.");
    if (ImGui::Button("Clear", ImVec2(-1, 0))) set_text(p, s, "");
    remember_last_item(ctx.widgets, "text.clear");
    ImGui::Separator();
    draw_generation(p, ctx);
    ImGui::Separator();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled(
        "Hover a token for its id and bytes; click one to make it the query the other panels analyse. "
        "· is a space, ↵ a newline.");
    ImGui::PopTextWrapPos();
    end_pane(panes);
    end_panes(panes);
}

std::string text_status_json(const TextPanel& p, const Session& s) {
    json::ObjectBuilder o;
    o.add("tokens", static_cast<int>(s.tokens.size()));
    o.add("full_tokens", p.counted_text == s.tokens_text ? p.full_count : static_cast<int>(s.tokens.size()));
    o.add("limit", context_limit(s));
    o.add("counter", counter_label(s, static_cast<int>(s.tokens.size())));
    o.add("clipped", p.counted_text == s.tokens_text && p.full_count > static_cast<int>(s.tokens.size()));
    o.add("generated", p.generated ? static_cast<int>(p.generated->ids.size()) : 0);
    json::ObjectBuilder chips;
    const int chosen = s.tokens.empty() ? -1 : chosen_query(s);
    chips.add("lines", static_cast<int>(p.layout.line_starts.size())).add("first_line", p.first_line).add("last_line", p.last_line);
    chips.add("drawn", p.chips_drawn).add("ms", p.chips_ms);
    chips.add("query_line", chosen >= 0 && !p.layout.line_starts.empty() ? chip_line_of(p.layout.line_starts, chosen) : -1);
    o.add_raw("chips", chips.str());
    json::ObjectBuilder row;
    row.add("ready", p.row.ready && !p.row_weights.empty()).add("query", p.row.key.query).add("layer", p.row.key.layer);
    row.add("head", p.row.key.head).add("max", static_cast<double>(p.row_max));
    o.add_raw("row", row.str());
    // The tokens the model runs on, for checks that need exact ids.
    o.add_raw("ids", json::ArrayBuilder().add_all(s.tokens).str());
    return o.str();
}

}  // namespace attnlab
