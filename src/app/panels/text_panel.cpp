#include "app/panels/text_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/panels/pane_layout.h"
#include "app/panels/string_input.h"
#include "app/plot/plot.h"
#include "base/json.h"
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
    if (!s.tokenizer.loaded()) {
        ImGui::SameLine();
        ImGui::TextDisabled("(no vocabulary: %s)", s.tokenizer_error.c_str());
    }
}

void draw_chip_tooltip(const Session& s, int position, int id, const std::string& bytes, bool generated) {
    ImGui::BeginTooltip();
    ImGui::Text("position %d   id %d", position, id);
    ImGui::Text("bytes \"%s\"", escaped_bytes(bytes).c_str());
    ImGui::Text("%d byte%s%s", static_cast<int>(bytes.size()), bytes.size() == 1 ? "" : "s", generated ? ", generated" : "");
    if (s.forward) ImGui::TextDisabled("Click: make this the chosen query.");
    ImGui::EndTooltip();
}

// The tokens as wrapped chips; hover for the details, click to choose the query.
// `height` 0: the rest of the pane.
void draw_chips(TextPanel& p, PanelContext& ctx, float height) {
    Session& s = ctx.session;
    ImGui::BeginChild("##chips", ImVec2(0, height), true);
    if (s.tokens.empty()) ImGui::TextDisabled(s.tokenizer.loaded() ? "Type or paste a text above." : "No vocabulary loaded.");
    const float pad = ImGui::GetFontSize() * 0.25f, gap = ImGui::GetFontSize() * 0.2f;
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    const int chosen = s.forward || !s.tokens.empty() ? chosen_query(s) : -1;
    // The generated continuation, in bytes of the text, when the text still holds it.
    size_t gen_begin = 0, gen_end = 0;
    if (p.generated && s.tokens_text.compare(0, p.generated->prefix.size() + p.generated->continuation.size(),
                                             p.generated->prefix + p.generated->continuation) == 0) {
        gen_begin = p.generated->prefix.size();
        gen_end = gen_begin + p.generated->continuation.size();
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    size_t offset = 0;  // byte offset of the token in the text
    float last_right = 0.0f;
    for (int i = 0; i < static_cast<int>(s.tokens.size()); ++i) {
        const int id = s.tokens[static_cast<size_t>(i)];
        const std::string bytes = s.tokenizer.token_bytes(id);
        const std::string label = chip_label(bytes);
        const ImVec2 text_size = ImGui::CalcTextSize(label.c_str());
        const ImVec2 size(text_size.x + 2 * pad, text_size.y + 2 * pad);
        if (i > 0 && last_right + gap + size.x <= right) ImGui::SameLine(0, gap);
        ImGui::PushID(i);
        const bool clicked = ImGui::InvisibleButton("##chip", size);
        ImGui::PopID();
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        last_right = b.x;
        const bool generated = offset >= gen_begin && offset < gen_end;
        offset += bytes.size();
        if (clicked) s.view.query = i;
        if (!ImGui::IsItemVisible()) continue;  // scrolled out of the box: nothing to draw
        // Square corners: a rounded chip costs ~8x the vertices, and WebGL's draw lists hold 65536.
        dl->AddRectFilled(a, b, kChipFill[i % 2]);
        if (generated) dl->AddRect(a, b, plot::colors::green, 0.0f, 0, 2.0f);
        if (i == chosen) dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), plot::colors::vermillion, 0.0f, 0, 2.5f);
        if (ImGui::IsItemHovered()) {
            dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Text));
            draw_chip_tooltip(s, i, id, bytes, generated);
        }
        dl->AddText(ImVec2(a.x + pad, a.y + pad), kChipText, label.c_str());
    }
    ImGui::EndChild();
    remember_last_item(ctx.widgets, "text.chips");
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
    // The tokens the model runs on, for checks that need exact ids.
    o.add_raw("ids", json::ArrayBuilder().add_all(s.tokens).str());
    return o.str();
}

}  // namespace attnlab
