#include "app/tour/tour_player.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/panels/string_input.h"
#include "app/plot/plot.h"
#include "base/json.h"

namespace attnlab {

void play_tour(const TourHost& app, Tour tour, int step) {
    TourPlayer& p = app.player;
    p.tour = std::move(tour);
    p.selected = 0;
    if (p.tour.scale > 0) app.ui_scale = static_cast<float>(p.tour.scale);
    if (!show_tour_step(app, std::clamp(step, 0, static_cast<int>(p.tour.steps.size()) - 1))) p.step = -1;
}

bool apply_tour_json(const TourHost& app, std::string_view json, bool from_link, std::string& error) {
    Tour tour;
    if (!parse_tour(json, app.session.view, tour, error)) {
        if (from_link) app.session.message = "This tour link could not be opened, so AttnLab starts without it: " + error + ".";
        return false;
    }
    play_tour(app, std::move(tour));
    return true;
}

bool show_tour_step(const TourHost& app, int k) {
    TourPlayer& p = app.player;
    if (k < 0 || k >= static_cast<int>(p.tour.steps.size())) return false;
    const TourStep& step = p.tour.steps[static_cast<size_t>(k)];
    std::string error;
    if (!app.apply_view(view_state_json(step.view), error)) {
        app.session.message = "Step " + std::to_string(k + 1) + " of the tour could not be shown: " + error + ".";
        return false;
    }
    p.step = k;
    p.selected = k;
    p.caption.clear();
    p.scroll_pending = !step.highlight.empty();
    p.step_frame = ImGui::GetFrameCount();
    if (step.strongest_head) app.request_learned_head(step.view.panel);
    return true;
}

void leave_tour(TourPlayer& player) { player.step = -1; }

void scroll_page_to_step_widget(const TourHost& app) {
    TourPlayer& p = app.player;
    if (p.step < 0 || !p.scroll_pending) return;
    const auto it = app.widgets.find(p.tour.steps[static_cast<size_t>(p.step)].highlight);
    if (it == app.widgets.end() || it->second.frame <= p.step_frame) return;  // not drawn in the step's layout yet
    p.scroll_pending = false;
    const float top = ImGui::GetWindowPos().y + ImGui::GetFrameHeight() + ImGui::GetFontSize();  // below the menu bar
    ImGui::SetScrollY(ImGui::GetScrollY() + it->second.y - top);
}

void play_builtin_tour(const TourHost& app) {
    std::string error;
    if (!apply_tour_json(app, builtin_tour_json(), false, error)) app.session.message = "The built-in tour did not load: " + error;
}

namespace {

// The caption with its placeholders read from this frame's status: only the top-level keys it
// names are built, and parsed, once a frame.
std::string live_caption(const TourHost& app, const std::string& caption) {
    if (caption.find('{') == std::string::npos) return expand_caption(caption, json::Value());
    json::ObjectBuilder status;
    for (const std::string& key : caption_keys(caption)) status.add_raw(key, app.status_value(key));
    const json::ParseResult parsed = json::parse(status.str());
    return expand_caption(caption, parsed.value ? *parsed.value : json::Value());
}

// Wrapped at spaces only: ImGui's own wrapping also breaks after a '.', which splits "0.0327".
void text_wrapped_at_spaces(const std::string& text, float width) {
    const float space = ImGui::CalcTextSize(" ").x;
    std::size_t line_start = 0, at = 0;
    float line_w = 0;
    auto flush = [&](std::size_t end) {
        ImGui::TextUnformatted(text.data() + line_start, text.data() + end);
        line_w = 0;
    };
    while (at < text.size()) {
        std::size_t end = text.find_first_of(" \n", at);
        if (end == std::string::npos) end = text.size();
        const float w = ImGui::CalcTextSize(text.data() + at, text.data() + end).x;
        if (line_w > 0 && line_w + space + w > width) {
            flush(at - 1);  // the space before this word ends the line
            line_start = at;
        }
        line_w += (line_w > 0 ? space : 0) + w;
        if (end < text.size() && text[end] == '\n') {
            flush(end);
            line_start = end + 1;
        }
        at = end + 1;
    }
    if (line_start < text.size()) flush(text.size());
}

bool keys_free() {
    const ImGuiIO& io = ImGui::GetIO();
    return !io.WantTextInput && !ImGui::IsAnyItemActive();
}

// The height text_wrapped_at_spaces gives `text` at `width`.
float wrapped_height(const std::string& text, float width) {
    const float space = ImGui::CalcTextSize(" ").x;
    int lines = text.empty() ? 0 : 1;
    float line_w = 0;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find_first_of(" \n", at);
        if (end == std::string::npos) end = text.size();
        const float w = ImGui::CalcTextSize(text.data() + at, text.data() + end).x;
        if (line_w > 0 && line_w + space + w > width) {
            ++lines;
            line_w = 0;
        }
        line_w += (line_w > 0 ? space : 0) + w;
        if (end < text.size() && text[end] == '\n') {
            ++lines;
            line_w = 0;
        }
        at = end + 1;
    }
    return static_cast<float>(lines) * ImGui::GetTextLineHeightWithSpacing();
}

struct CardPlace {
    float x = 0, y = 0, width = 0, max_height = 0;
};

// Where the card goes: in the largest part of the work area that the step's widget leaves free
// (below, above, right or left of it), at that part's bottom right, as tall as it allows. With no
// widget on screen, the bottom right of the whole area.
CardPlace card_place(const TourHost& app, const std::string& highlight) {
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float em = ImGui::GetFontSize();
    const float x0 = vp->WorkPos.x, y0 = vp->WorkPos.y, x1 = x0 + vp->WorkSize.x, y1 = y0 + vp->WorkSize.y;
    CardPlace out;
    out.width = std::min(em * 30, vp->WorkSize.x - 2 * em);
    float fx0 = x0, fy0 = y0, fx1 = x1, fy1 = y1;  // the free part chosen
    const auto it = app.widgets.find(highlight);
    if (!highlight.empty() && it != app.widgets.end() && it->second.frame >= ImGui::GetFrameCount() - 1) {
        const WidgetRect& r = it->second;
        const float pad = em * 0.5f;
        const float wx0 = r.x - pad, wy0 = r.y - pad, wx1 = r.x + r.w + pad, wy1 = r.y + r.h + pad;
        struct Part {
            float x0, y0, x1, y1;
        };
        // Each part within the work area: a widget the page has scrolled off screen leaves it all free.
        const Part parts[] = {{x0, std::max(wy1, y0), x1, y1},
                              {x0, y0, x1, std::min(wy0, y1)},
                              {std::max(wx1, x0), y0, x1, y1},
                              {x0, y0, std::min(wx0, x1), y1}};
        float best = -1;
        for (const Part& q : parts) {
            const float w = q.x1 - q.x0, h = q.y1 - q.y0;
            if (w < out.width + 2 * em || h <= 0) continue;
            if (h > best) {
                best = h;
                fx0 = q.x0, fy0 = q.y0, fx1 = q.x1, fy1 = q.y1;
            }
        }
    }
    (void)fx0;
    out.max_height = std::max(em * 8, fy1 - fy0 - 2 * em);
    out.x = fx1 - em;  // the card's bottom right corner
    out.y = fy1 - em;
    return out;
}

void draw_card(const TourHost& app) {
    TourPlayer& p = app.player;
    const int n = static_cast<int>(p.tour.steps.size());
    const TourStep& step = p.tour.steps[static_cast<size_t>(p.step)];
    p.caption = live_caption(app, step.caption);

    const float em = ImGui::GetFontSize();
    const CardPlace place = card_place(app, step.highlight);
    // Its bottom right corner at the free part's, every frame: the card follows the layout.
    ImGui::SetNextWindowPos(ImVec2(place.x, place.y), ImGuiCond_Always, ImVec2(1, 1));
    ImGui::SetNextWindowSize(ImVec2(place.width, 0));
    ImGui::SetNextWindowSizeConstraints(ImVec2(place.width, 0), ImVec2(place.width, place.max_height));
    ImGui::PushStyleColor(ImGuiCol_WindowBg, IM_COL32(255, 251, 235, 250));
    const std::string title = (p.tour.title.empty() ? std::string("Tour") : p.tour.title) + "###tour_card";
    if (ImGui::Begin(title.c_str(), nullptr,
                     ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoResize |
                         ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoMove)) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(120, 60, 0, 255));
        ImGui::TextWrapped("%s", step.title.c_str());
        ImGui::PopStyleColor();
        // The caption scrolls in what the card's height leaves it, so that the buttons stay on screen.
        const float wrap = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
        const float caption_h = wrapped_height(p.caption, wrap);
        const float overhead = p.card_overhead > 0 ? p.card_overhead : em * 8;
        const float room = std::max(em * 3, place.max_height - overhead);
        const float shown_h = std::min(caption_h, room);
        ImGui::BeginChild("##caption", ImVec2(0, shown_h), false, caption_h > room ? 0 : ImGuiWindowFlags_NoScrollbar);
        text_wrapped_at_spaces(p.caption, wrap);
        ImGui::EndChild();
        remember_last_item(app.widgets, "tour.caption");
        ImGui::Separator();
        ImGui::Text("Step %d of %d", p.step + 1, n);
        ImGui::SameLine();
        ImGui::BeginDisabled(p.step == 0);
        if (ImGui::Button("< Back")) show_tour_step(app, p.step - 1);
        remember_last_item(app.widgets, "tour.back");
        ImGui::EndDisabled();
        ImGui::SameLine();
        const bool last = p.step + 1 == n;
        if (ImGui::Button(last ? "Finish" : "Next >")) last ? leave_tour(app.player) : (void)show_tour_step(app, p.step + 1);
        remember_last_item(app.widgets, "tour.next");
        ImGui::SameLine();
        if (ImGui::Button("Leave tour")) leave_tour(app.player);
        remember_last_item(app.widgets, "tour.leave");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Stop the tour and keep this view (Esc)");
        ImGui::TextDisabled("Left and Right arrow keys: back and next");
        const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
        remember_rect(app.widgets, "tour.card", pos, ImVec2(pos.x + size.x, pos.y + size.y));
        p.card_overhead = size.y - shown_h;
    }
    ImGui::End();
    ImGui::PopStyleColor();

    if (p.step >= 0 && keys_free()) {
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow), false) && p.step + 1 < n) show_tour_step(app, p.step + 1);
        else if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow), false) && p.step > 0) show_tour_step(app, p.step - 1);
        else if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) leave_tour(app.player);
    }
}

// An outline around the step's widget, when it was drawn this frame.
void draw_highlight(const TourHost& app) {
    TourPlayer& p = app.player;
    p.highlight_drawn = false;
    if (p.step < 0) return;
    const std::string& name = p.tour.steps[static_cast<size_t>(p.step)].highlight;
    const auto it = app.widgets.find(name);
    if (name.empty() || it == app.widgets.end() || it->second.frame != ImGui::GetFrameCount()) return;
    const WidgetRect& r = it->second;
    const float pad = ImGui::GetFontSize() * 0.25f;
    ImGui::GetForegroundDrawList()->AddRect(ImVec2(r.x - pad, r.y - pad), ImVec2(r.x + r.w + pad, r.y + r.h + pad), plot::colors::orange,
                                            pad, 0, pad * 0.9f);
    p.highlight_drawn = true;
}

void swap_steps(TourPlayer& p, int a, int b) {
    std::swap(p.tour.steps[static_cast<size_t>(a)], p.tour.steps[static_cast<size_t>(b)]);
    if (p.step == a || p.step == b) p.step = p.step == a ? b : a;
    p.selected = b;
}

void add_current_view(const TourHost& app) {
    TourPlayer& p = app.player;
    if (static_cast<int>(p.tour.steps.size()) >= kMaxTourSteps) {
        p.notice = "A tour holds at most " + std::to_string(kMaxTourSteps) + " steps.";
        return;
    }
    TourStep step;
    step.title = "Step " + std::to_string(p.tour.steps.size() + 1);
    step.view = app.session.view;
    p.tour.steps.push_back(std::move(step));
    p.selected = static_cast<int>(p.tour.steps.size()) - 1;
    p.notice = "Added this view as step " + std::to_string(p.selected + 1) + ".";
}

// The scale the recorder uses travels with the tour; at 100% the tour leaves the reader's scale be.
void take_scale(const TourHost& app) { app.player.tour.scale = app.ui_scale != 1.0f ? app.ui_scale : 0.0; }

void share_tour(const TourHost& app) {
    TourPlayer& p = app.player;
    take_scale(app);
    const std::string json = tour_json(p.tour, true);
    if (app.copy_tour_link) {
        app.copy_tour_link(json);
        p.notice.clear();
    } else {
        ImGui::SetClipboardText(json.c_str());
        p.notice = "The tour's JSON is on the clipboard (" + std::to_string(json.size()) + " bytes).";
    }
}

void draw_step_editor(const TourHost& app) {
    TourPlayer& p = app.player;
    TourStep& step = p.tour.steps[static_cast<size_t>(p.selected)];
    ImGui::Text("Step %d", p.selected + 1);
    ImGui::SetNextItemWidth(-1);
    input_string("##step_title", step.title);
    remember_last_item(app.widgets, "tour_editor.step_title");
    ImGui::TextDisabled("Caption: what to look at, and one thing to try. {distance.N_star} shows a live value.");
    input_string_multiline("##step_caption", step.caption, ImVec2(-1, ImGui::GetTextLineHeight() * 5));
    remember_last_item(app.widgets, "tour_editor.step_caption");
    if (const std::string why = check_caption(step.caption); !why.empty())
        ImGui::TextColored(ImVec4(0.75f, 0.1f, 0.1f, 1), "%s", why.c_str());
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
    if (ImGui::BeginCombo("outline", step.highlight.empty() ? "(none)" : step.highlight.c_str())) {
        if (ImGui::Selectable("(none)", step.highlight.empty())) step.highlight.clear();
        for (const auto& [name, rect] : app.widgets)
            if (rect.frame >= ImGui::GetFrameCount() - 1 && name.rfind("tour", 0) != 0 &&
                ImGui::Selectable(name.c_str(), name == step.highlight))
                step.highlight = name;
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The widget to outline during this step (those on screen now)");
    ImGui::SameLine();
    ImGui::Checkbox("strongest head", &step.strongest_head);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show the model's strongest learned head, whatever model plays the tour");
    if (ImGui::Button("Use this view")) step.view = app.session.view;
    remember_last_item(app.widgets, "tour_editor.use_view");
    ImGui::SameLine();
    if (ImGui::Button("Play from here")) show_tour_step(app, p.selected);
    remember_last_item(app.widgets, "tour_editor.play_here");
}

void draw_editor(const TourHost& app) {
    TourPlayer& p = app.player;
    if (!p.editor_open) return;
    const float em = ImGui::GetFontSize();
    // As wide as 30 characters at any UI scale, as tall as its content (within the window).
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowSize(ImVec2(std::min(em * 30, vp->WorkSize.x), 0), ImGuiCond_Always);
    ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(vp->WorkSize.x, vp->WorkSize.y - em * 2));
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + em, vp->WorkPos.y + em * 4), ImGuiCond_Appearing);
    if (!ImGui::Begin("Tour editor", &p.editor_open, ImGuiWindowFlags_NoSavedSettings)) {
        ImGui::End();
        return;
    }
    ImGui::SetNextItemWidth(-em * 4);
    input_string("title", p.tour.title);
    remember_last_item(app.widgets, "tour_editor.title");
    if (ImGui::Button("Add this view as a step")) add_current_view(app);
    remember_last_item(app.widgets, "tour_editor.add");
    ImGui::SameLine();
    ImGui::BeginDisabled(p.tour.steps.empty());
    if (ImGui::Button("Play from step 1")) show_tour_step(app, 0);
    remember_last_item(app.widgets, "tour_editor.play");
    ImGui::EndDisabled();

    const int n = static_cast<int>(p.tour.steps.size());
    p.selected = std::clamp(p.selected, 0, std::max(0, n - 1));
    ImGui::BeginChild("##steps", ImVec2(0, em * 8), true);
    int move_up = -1, move_down = -1, remove = -1;
    for (int i = 0; i < n; ++i) {
        ImGui::PushID(i);
        char label[256];
        std::snprintf(label, sizeof label, "%d. %s%s", i + 1, p.tour.steps[static_cast<size_t>(i)].title.c_str(),
                      i == p.step ? "  (showing)" : "");
        const ImGuiStyle& style = ImGui::GetStyle();
        const float buttons = ImGui::CalcTextSize("updowndelete").x + 6 * style.FramePadding.x + 3 * style.ItemSpacing.x;
        if (ImGui::Selectable(label, i == p.selected, 0, ImVec2(ImGui::GetContentRegionAvail().x - buttons, 0))) p.selected = i;
        ImGui::SameLine();
        if (ImGui::SmallButton("up")) move_up = i;
        remember_last_item(app.widgets, ("tour_editor.up." + std::to_string(i)).c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("down")) move_down = i;
        remember_last_item(app.widgets, ("tour_editor.down." + std::to_string(i)).c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("delete")) remove = i;
        remember_last_item(app.widgets, ("tour_editor.delete." + std::to_string(i)).c_str());
        ImGui::PopID();
    }
    if (n == 0) ImGui::TextDisabled("No steps yet: set up a view, then Add this view as a step.");
    ImGui::EndChild();
    if (move_up > 0) swap_steps(p, move_up, move_up - 1);
    if (move_down >= 0 && move_down + 1 < n) swap_steps(p, move_down, move_down + 1);
    if (remove >= 0) {
        p.tour.steps.erase(p.tour.steps.begin() + remove);
        if (p.step == remove) p.step = -1;
        else if (p.step > remove) --p.step;
    }
    if (!p.tour.steps.empty()) {
        p.selected = std::clamp(p.selected, 0, static_cast<int>(p.tour.steps.size()) - 1);
        draw_step_editor(app);
    }

    ImGui::Separator();
    ImGui::BeginDisabled(p.tour.steps.empty());
    if (ImGui::Button(app.copy_tour_link ? "Copy tour link" : "Copy tour (JSON)")) share_tour(app);
    remember_last_item(app.widgets, "tour_editor.copy_link");
    ImGui::SameLine();
    if (ImGui::Button("Export JSON") && app.file_export) {
        take_scale(app);
        app.file_export->save_text("attnlab-tour.json", "application/json", tour_json(p.tour, true) + "\n");
    }
    remember_last_item(app.widgets, "tour_editor.export");
    ImGui::EndDisabled();
    if (app.pick_tour_file) {
        ImGui::SameLine();
        if (ImGui::Button("Import JSON...")) app.pick_tour_file();
        remember_last_item(app.widgets, "tour_editor.import");
    }
    ImGui::SameLine();
    if (ImGui::Button("New tour")) {
        p.tour = Tour();
        p.step = -1;
        p.notice.clear();
    }
    remember_last_item(app.widgets, "tour_editor.new");
    if (!p.notice.empty()) ImGui::TextWrapped("%s", p.notice.c_str());
    ImGui::End();
}

}  // namespace

void draw_tour(const TourHost& app) {
    TourPlayer& p = app.player;
    if (p.step >= static_cast<int>(p.tour.steps.size())) p.step = -1;
    if (p.step >= 0) draw_card(app);
    draw_editor(app);
    draw_highlight(app);
}

void draw_tour_menu(const TourHost& app) {
    const bool open = ImGui::BeginMenu("Tour");
    remember_last_item(app.widgets, "menu.tour");
    if (!open) return;
    if (ImGui::MenuItem("Play \"What softmax can and cannot select\"")) play_builtin_tour(app);
    remember_last_item(app.widgets, "menu.tour.builtin");
    if (ImGui::MenuItem("Record or edit a tour...", nullptr, app.player.editor_open)) app.player.editor_open = !app.player.editor_open;
    remember_last_item(app.widgets, "menu.tour.editor");
    if (ImGui::MenuItem("Leave tour", "Esc", false, app.player.step >= 0)) leave_tour(app.player);
    ImGui::EndMenu();
}

std::string tour_status_json(const TourPlayer& p) {
    json::ObjectBuilder o;
    o.add("playing", p.step >= 0).add("step", p.step).add("steps", static_cast<int>(p.tour.steps.size()));
    o.add("title", p.tour.title);
    const TourStep* step = p.step >= 0 ? &p.tour.steps[static_cast<size_t>(p.step)] : nullptr;
    o.add("step_title", step ? step->title : std::string());
    o.add("caption", step ? p.caption : std::string());
    o.add("highlight", step ? step->highlight : std::string());
    o.add("highlight_drawn", p.highlight_drawn);
    o.add("editor_open", p.editor_open);
    return o.str();
}

std::string tour_step_json(const TourPlayer& p, int k) {
    const TourStep& step = p.tour.steps.at(static_cast<size_t>(k));
    json::ObjectBuilder o;
    o.add("step", k).add("title", step.title).add("caption", step.caption).add("highlight", step.highlight);
    o.add("strongest_head", step.strongest_head);
    o.add_raw("view", view_state_json(step.view));
    return o.str();
}

}  // namespace attnlab
