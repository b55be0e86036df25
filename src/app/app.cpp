#include "app/app.h"

#include <imgui.h>
#include <imgui_internal.h>  // the tab bar's selection, set before its layout (draw_tab_bar)

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/analysis_export.h"
#include "app/panels/pane_layout.h"
#include "app/plot/plot.h"
#include "app/work/head_summaries.h"
#include "app/work/model_tasks.h"
#include "app/work/twin_compare.h"
#include "base/parallel.h"

namespace attnlab {

void init_app(AppState& app, std::string encoder_json, std::string vocab_bpe) {
    Session& s = app.session;
    s.gpt2_encoder_json = std::move(encoder_json);
    s.gpt2_vocab_bpe = std::move(vocab_bpe);
    // Something to analyse from the first frame: a passage the built-in model was trained on.
    if (s.view.text.empty()) s.view.text = start_text();
}

void load_builtin_model(AppState& app, bool first_open) {
    if (!app.model_source || app.builtin_model.empty()) return;
    start_builtin_model(app.model_loading, app.session, *app.model_source, app.builtin_model);
    if (first_open) request_learned_head(app, Panel::Attention, true);
}

void load_builtin(AppState& app, BuiltinModel which) {
    if (swap_with_twin(app.session, which)) return;  // held beside the model for the comparison already
    if (which == BuiltinModel::Tiny) return load_builtin_model(app);
    if (which != BuiltinModel::TinySsmax || !app.model_source || app.twin_model.empty()) return;
    start_builtin_model(app.model_loading, app.session, *app.model_source, app.twin_model, which);
}

void request_learned_head(AppState& app, Panel panel, bool first_view) { app.learned_head = {true, app.session.view, panel, first_view}; }

namespace {

// See AppState::learned_head. Gives up, without moving the view, as soon as the view or the
// model is no longer the one asked about.
void show_learned_head(AppState& app) {
    AppState::LearnedHeadRequest& r = app.learned_head;
    if (!r.pending) return;
    Session& s = app.session;
    const ViewState& v = s.view;
    const ViewState& o = r.from;
    if (v.panel != o.panel || v.layer != o.layer || v.head != o.head || v.text != o.text || v.model_url != o.model_url ||
        (r.first_view && s.model && !s.model->builtin)) {
        r.pending = false;
        return;
    }
    const std::shared_ptr<const AttentionThumbnails>& t = app.attention.grid.thumbnails.done;
    if (!s.model || !s.forward || !t || t->pass.lock() != s.forward) return;  // not yet
    r.pending = false;
    int layer = 0, head = 0;
    if (!(r.first_view ? first_view_head(*t, layer, head) : strongest_learned_head(*t, layer, head))) return;
    s.view.panel = r.panel;
    pick_head(s, layer, head);
}

// `em` font sizes, or the screen's width less a margin on a phone.
float popup_width(float em) {
    const float font = ImGui::GetFontSize();
    return std::min(font * em, ImGui::GetMainViewport()->WorkSize.x - font * 2.0f);
}

void draw_about(AppState& app) {
    bool* open = &app.show_about;
    if (!*open) return;
    ImGui::OpenPopup("About AttnLab");
    ImGui::SetNextWindowSize(ImVec2(popup_width(34.0f), 0), ImGuiCond_Appearing);
    if (ImGui::BeginPopupModal("About AttnLab", open)) {
        ImGui::TextWrapped(
            "AttnLab shows, on real and synthetic attention, what softmax attention can and cannot select. It "
            "follows T. Mudarisov, M. Burtsev, T. Petrova and R. State, \"Limitations of Normalization in "
            "Attention Mechanism\" (NeurIPS 2025, arXiv 2508.17821).");
        ImGui::Spacing();
        ImGui::TextWrapped(
            "Where the paper is loose, AttnLab computes the exact quantity and draws the paper's bound next to "
            "the tight one, each labelled. Example: the paper bounds the softmax Jacobian by min{1/(4T), sqrt 2}; "
            "two tied leading logits reach 1/(2T), which is the tight bound.");
        ImGui::Spacing();
        const int threads = max_threads();
        ImGui::TextDisabled("Computing on %d thread%s.", threads, threads == 1 ? "" : "s");
        if (!app.threads_note.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
            ImGui::TextWrapped("%s", app.threads_note.c_str());
            ImGui::PopStyleColor();
        }
        ImGui::TextDisabled("Dear ImGui %s", ImGui::GetVersion());
        if (ImGui::Button("Close")) *open = false;
        ImGui::EndPopup();
    }
}

// The link "Copy link" made: confirmed, or in a field to copy by hand when the clipboard
// refused (browsers may, e.g. without a recent click or in an insecure context).
void draw_share_popup(AppState& app) {
    AppState::SharePopup& share = app.share;
    if (share.open) {
        ImGui::OpenPopup("Share this view");
        share.open = false;
    }
    ImGui::SetNextWindowSize(ImVec2(popup_width(36.0f), 0), ImGuiCond_Appearing);
    if (!ImGui::BeginPopup("Share this view")) return;
    if (share.tour)
        ImGui::TextWrapped(share.copied ? "The tour's link is on the clipboard. Opening it plays the tour from step 1, with "
                                          "each step's view live."
                                        : "The browser did not let AttnLab use the clipboard. Select the tour's link below "
                                          "and press Ctrl+C (Cmd+C on a Mac), or use the button.");
    else if (!app.copy_link)
        ImGui::TextWrapped(
            "The view state is on the clipboard, as JSON: window.attnlab.setState() and the web page's links "
            "read it.");
    else if (share.copied)
        ImGui::TextWrapped(
            "The link is on the clipboard. It reopens this exact view: text, model, the model changes, panel, "
            "head, query, N, T, normalizer and eps.");
    else
        ImGui::TextWrapped(
            "The browser did not let AttnLab use the clipboard. Select the link below and press Ctrl+C "
            "(Cmd+C on a Mac), or use the button.");
    ImGui::SetNextItemWidth(-1);
    ImGui::InputText("##share_link", share.link.data(), share.link.size() + 1,
                     ImGuiInputTextFlags_ReadOnly | ImGuiInputTextFlags_AutoSelectAll);
    remember_last_item(app.widgets, "share.link");
    if (ImGui::Button("Copy")) ImGui::SetClipboardText(share.link.c_str());
    ImGui::SameLine();
    if (ImGui::Button("Close")) ImGui::CloseCurrentPopup();
    remember_last_item(app.widgets, "share.close");
    ImGui::EndPopup();
}

// The menu bar's own commands: share the view, export the analysis.
void draw_share_and_export_menu(AppState& app) {
    Session& s = app.session;
    if (app.copy_link) {
        if (ImGui::MenuItem("Copy link")) app.copy_link(view_state_json(s.view));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("A link that reopens this exact view (the state is in the address, compressed)");
    } else {
        // No address to put it in: the state itself, which setState() and links read.
        if (ImGui::MenuItem("Copy view state")) {
            ImGui::SetClipboardText(view_state_json(s.view).c_str());
            show_share_link(app, view_state_json(s.view), true);
        }
    }
    remember_last_item(app.widgets, "menu.copy_link");
    const bool can_export = app.file_export != nullptr;
    if (ImGui::MenuItem("Export analysis (JSON)", nullptr, false, can_export)) {
        app.file_export->save_text("attnlab-analysis.json", "application/json", analysis_json(s));
    }
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(can_export ? "The view, the model, the tokens and every quantity of the paper for the chosen head and query"
                                     : "This build cannot save files");
    remember_last_item(app.widgets, "menu.export_json");
    // Where the last export went ("Saved ./attnlab-fade.png (12.3 KB).").
    if (can_export && !app.file_export->last_message().empty()) ImGui::TextDisabled("%s", app.file_export->last_message().c_str());
}

// Readable from the back of a room: the UI scale, and full screen where the platform has it.
void draw_view_menu(AppState& app) {
    const bool open = ImGui::BeginMenu("View");
    remember_last_item(app.widgets, "menu.view");
    if (!open) return;
    for (const int percent : {100, 125, 150, 175, 200, 250}) {
        char label[32];
        std::snprintf(label, sizeof label, "UI scale %d%%", percent);
        if (ImGui::MenuItem(label, nullptr, std::lround(app.ui_scale * 100) == percent))
            app.ui_scale = static_cast<float>(percent) / 100.0f;
        remember_last_item(app.widgets, ("menu.scale." + std::to_string(percent)).c_str());
    }
    ImGui::Separator();
    const bool can = app.set_full_screen && app.is_full_screen;
    if (ImGui::MenuItem("Full screen", nullptr, can && app.is_full_screen(), can)) app.set_full_screen(!app.is_full_screen());
    remember_last_item(app.widgets, "menu.full_screen");
    ImGui::EndMenu();
}

// The reader's message (an error, a notice), until dismissed.
void draw_message(AppState& app) {
    std::string& message = app.session.message;
    if (message.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(253, 236, 206, 255));
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float width = ImGui::GetContentRegionAvail().x;
    const float text_h = ImGui::CalcTextSize(message.c_str(), nullptr, false, width - 8 * line).y;
    ImGui::BeginChild("##message", ImVec2(0, text_h + line), true);
    ImGui::PushTextWrapPos(width - 6 * line);
    ImGui::TextUnformatted(message.c_str());
    ImGui::PopTextWrapPos();
    ImGui::SameLine(width - 5 * line);
    if (ImGui::SmallButton("Dismiss")) message.clear();
    remember_last_item(app.widgets, "message.dismiss");
    ImGui::EndChild();
    ImGui::PopStyleColor();
}

// Progress of the model's work and of the background summaries, each with a cancel button, at the
// right end of the menu bar: the bar keeps its height, so nothing below moves when work starts or
// ends (a row of its own moved every panel by 36 px, and a tap aimed then landed a row low). The
// labels give way where the bar is short of room (a phone); the progress bar's tooltip has them.
void draw_work(AppState& app) {
    Session& s = app.session;
    const struct {
        TaskRunner& runner;
        const char* id;
    } runners[] = {{s.model_work, "model"}, {s.background, "background"}, {s.twin_work, "twin"}};
    const float font = ImGui::GetFontSize(), gap = ImGui::GetStyle().ItemSpacing.x;
    const float cancel_w = ImGui::CalcTextSize("Cancel").x + 2.0f * ImGui::GetStyle().FramePadding.x;
    float bar_w = font * 8.0f, labels = 0.0f, bars = 0.0f;
    for (const auto& r : runners)
        if (r.runner.busy()) labels += ImGui::CalcTextSize(r.runner.label().c_str()).x + gap, bars += bar_w + cancel_w + 2.0f * gap;
    if (bars == 0.0f) return;
    const float x = ImGui::GetCursorPosX(), right = ImGui::GetWindowContentRegionMax().x;
    const bool with_labels = x + bars + labels <= right;
    if (x + bars > right) bar_w = std::max(font * 3.0f, bar_w - (x + bars - right));
    ImGui::SetCursorPosX(std::max(x, right - (with_labels ? bars + labels : bars) + gap));
    for (const auto& r : runners) {
        if (!r.runner.busy()) continue;
        ImGui::PushID(r.id);
        char overlay[32];
        std::snprintf(overlay, sizeof overlay, "%.0f%%", 100.0 * r.runner.progress());
        ImGui::ProgressBar(static_cast<float>(r.runner.progress()), ImVec2(bar_w, 0), overlay);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.runner.label().c_str());
        if (with_labels) ImGui::TextUnformatted(r.runner.label().c_str());
        if (ImGui::SmallButton("Cancel")) {
            if (&r.runner == &s.model_work) cancel_model_work(s);  // a new plan's pass: the change is abandoned, not retried
            else r.runner.cancel();
        }
        remember_last_item(app.widgets, (std::string("work.cancel.") + r.id).c_str());
        ImGui::PopID();
    }
}

}  // namespace

struct Tab {
    Panel panel;
    const char* title;
    const char* short_title;  // where the titles do not fit on one line
};
constexpr Tab kTabs[] = {
    {Panel::Text, "Text & tokens", "Text"},
    {Panel::Attention, "Attention map", "Attention"},
    {Panel::Fading, "Fading", "Fading"},
    {Panel::Distance, "Selection distance", "Distance"},
    {Panel::Separability, "Separability", "Separability"},
    {Panel::Gradient, "Temperature & gradients", "Gradients"},
    {Panel::Playground, "Softmax playground", "Playground"},
    {Panel::Help, "Help", "Help"},
};

namespace {

void draw_panel(AppState& app, Panel panel, PanelContext& ctx) {
    switch (panel) {
        case Panel::Text: draw_text_panel(app.text, ctx); break;
        case Panel::Attention: draw_attention_panel(app.attention, ctx); break;
        case Panel::Distance: draw_distance_panel(app.distance, ctx); break;
        case Panel::Fading: draw_fading_panel(app.fading, app.attention.grid.thumbnails, ctx); break;
        case Panel::Separability: draw_separability_panel(app.separability, ctx); break;
        case Panel::Gradient: draw_gradient_panel(app.gradient, ctx); break;
        case Panel::Playground: draw_softmax_playground(app.playground, app.widgets); break;
        case Panel::Help:
            app.help.tour_steps = builtin_tour_steps();
            draw_help_panel(app.help, ctx);
            break;
    }
}

// Whether ImGui's tab bar shows every title whole on one line (its tabs shrink when they do not).
bool tab_titles_fit() {
    const ImGuiStyle& style = ImGui::GetStyle();
    float w = 0.0f;
    for (const Tab& tab : kTabs) w += ImGui::CalcTextSize(tab.title).x + 2.0f * style.FramePadding.x + 1.0f + style.ItemInnerSpacing.x;
    return w <= ImGui::GetContentRegionAvail().x;
}

void draw_tab_bar(AppState& app, PanelContext& ctx) {
    Session& s = app.session;
    // A tab chosen from outside (a link, setState, the first view's move) is selected once;
    // afterwards clicks rule. Selected in this frame: ImGui's SetSelected would wait for the next
    // one, and a view set in between (a reader's setState) would then be undone by it.
    const bool external = s.view.panel != app.shown_panel;
    if (!ImGui::BeginTabBar("##panels")) return;
    if (external)
        for (const Tab& tab : kTabs)
            if (tab.panel == s.view.panel) GImGui->CurrentTabBar->NextSelectedTabId = ImGui::GetID(tab.title);  // read by the first tab
    for (const Tab& tab : kTabs) {
        const bool open = ImGui::BeginTabItem(tab.title);
        remember_last_item(app.widgets, (std::string("tab.") + panel_name(tab.panel)).c_str());
        if (!open) continue;
        if (!external) s.view.panel = tab.panel;
        app.shown_panel = tab.panel;
        draw_panel(app, tab.panel, ctx);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

// On a narrow screen: the short titles as buttons that wrap onto a second line, the open one lit.
void draw_wrapped_tabs(AppState& app, PanelContext& ctx) {
    Session& s = app.session;
    for (const Tab& tab : kTabs) {
        if (&tab != kTabs) same_line_if_fits(button_width(tab.short_title));
        const bool open = tab.panel == s.view.panel;
        ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetColorU32(open ? ImGuiCol_TabActive : ImGuiCol_Tab));
        if (ImGui::Button(tab.short_title)) s.view.panel = tab.panel;
        ImGui::PopStyleColor();
        remember_last_item(app.widgets, (std::string("tab.") + panel_name(tab.panel)).c_str());
    }
    ImGui::Separator();
    // app.shown_panel stays the tab bar's: should the bar come back (a tablet turned), it
    // selects the panel chosen here.
    ImGui::PushID("##panel");
    draw_panel(app, s.view.panel, ctx);
    ImGui::PopID();
}

// The menu bar: every command in it on a wide screen; without the subtitle when that does not
// fit; on a phone, all of them folded into one menu.
void draw_menu_bar(AppState& app) {
    if (!ImGui::BeginMenuBar()) return;
    const char* subtitle = "what softmax attention can and cannot select";
    const float pad = ImGui::GetStyle().ItemSpacing.x * 2.0f;
    const auto text_w = [](const char* t) { return ImGui::CalcTextSize(t).x; };
    float commands = text_w("AttnLab") + text_w(app.copy_link ? "Copy link" : "Copy view state") + text_w("Export analysis (JSON)") +
                     text_w("TourViewHelp") + 6.0f * pad;
    if (app.file_export) commands += text_w(app.file_export->last_message().c_str()) + pad;
    const float room = ImGui::GetWindowWidth();
    ImGui::TextUnformatted("AttnLab");
    if (commands + text_w(subtitle) + pad <= room) ImGui::TextDisabled("%s", subtitle);
    const bool folded = commands > room;
    const bool open = !folded || ImGui::BeginMenu("Menu");
    if (folded) remember_last_item(app.widgets, "menu.menu");
    if (open) {
        draw_share_and_export_menu(app);
        draw_tour_menu(tour_host(app));
        draw_view_menu(app);
        if (ImGui::BeginMenu("Help")) {
            if (ImGui::MenuItem("About AttnLab")) app.show_about = true;
            ImGui::EndMenu();
        }
        if (folded) ImGui::EndMenu();
    }
    draw_work(app);
    ImGui::EndMenuBar();
}

// Until the reader chooses a UI scale, the one that suits the screen.
void keep_ui_scale(AppState& app) {
    if (app.ui_scale != app.ui_scale_set) app.ui_scale_chosen = true;  // changed since the last frame
    if (!app.ui_scale_chosen && app.screen_ui_scale > 0.0f) app.ui_scale = app.screen_ui_scale;
    app.ui_scale_set = app.ui_scale;
}

// A pinch that no panel took in its first frame sets the UI scale: from the scale at its start, in
// quarter steps from 100% to 250% (the View menu's range), each drawn sharp.
void follow_pinch(AppState& app) {
    Pinch& p = app.pinch;
    if (p.scale <= 0.0f) {
        p.taker = Pinch::Taker::None;
        return;
    }
    if (p.taker == Pinch::Taker::None) p.taker = Pinch::Taker::UiScale, p.ui_scale_at_start = app.ui_scale;
    if (p.taker == Pinch::Taker::UiScale) app.ui_scale = std::clamp(std::round(p.ui_scale_at_start * p.scale * 4.0f) / 4.0f, 1.0f, 2.5f);
}

// Whether this frame carries a press or a release of the reader's. Without threads a step of long
// work can take the whole frame (a chunk of a pass: 100 ms and more on GPT-2 small), and a click
// needs a frame for its press and one for its release; stepping in those frames let a pass end
// between the press on Cancel and its release, so that the click was lost. The reader's action wins.
bool reader_pressing() {
    for (int b = 0; b < ImGuiMouseButton_COUNT; ++b)
        if (ImGui::IsMouseClicked(b) || ImGui::IsMouseReleased(b)) return true;
    return false;
}

}  // namespace

void draw_app(AppState& app) {
    Session& s = app.session;
    // Long work first, so that this frame shows its latest results.
    constexpr double kWorkBudgetMs = 30.0;  // without threads: at most this much per frame
    const bool step_work = !reader_pressing();
    // The text's perplexity (logits over the whole vocabulary at every position: most of the
    // model's work on a long text) comes after the head grid's thumbnails (Fading's data too) and
    // the all-heads summaries: without threads its steps wait while they run; with threads
    // those are handed over while it runs. Anything else the model does comes first.
    HeadThumbnails& thumbnails = app.attention.grid.thumbnails;
    const auto views_may_run = [&s] { return !s.model_work.busy() || computing_perplexity(s); };
    const bool views_computing = s.background.busy() || thumbnails.work.busy();
    if (step_work && !(computing_perplexity(s) && views_computing)) s.model_work.pump(s, kWorkBudgetMs);
    keep_model_loading(app.model_loading, s, app.model_source);
    keep_forward_current(s);
    // A downloaded model's copy for the next visit waits for the first pass on it (or for a text
    // that needs none): the write would take CPU from that pass.
    if (app.model_source && (!s.model_work.busy() || pass_current(s))) app.model_source->start_cache_copy();
    keep_twin_current(app.model_loading, s, app.model_source, {app.builtin_model, app.twin_model});
    if (step_work) s.twin_work.pump(s, kWorkBudgetMs);
    clamp_view(s);
    if (step_work && views_may_run()) s.background.pump(s, kWorkBudgetMs);
    keep_summaries_current(s);
    keep_head_thumbnails(thumbnails, s);
    constexpr double kThumbnailBudgetMs = 20.0;
    if (views_may_run()) thumbnails.work.pump(s, kThumbnailBudgetMs);
    if (step_work) pump_head_map(app.attention.map.work, s);
    show_learned_head(app);
    keep_ui_scale(app);

    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    // On a phone, a tablet or a short window the page itself scrolls (pane_layout.h's PageScroll),
    // with its scrollbar always there so that the width does not change with the content.
    const ImGuiStyle& style = ImGui::GetStyle();
    const PageScroll page{page_scrolls_for(vp->WorkSize.x, vp->WorkSize.y, ImGui::GetFontSize()),
                          vp->WorkSize.y - ImGui::GetFrameHeight() - 2.0f * style.WindowPadding.y};
    set_page_scroll(page);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   (page.on ? ImGuiWindowFlags_AlwaysVerticalScrollbar : ImGuiWindowFlags_NoScrollbar) |
                                   ImGuiWindowFlags_NoMove | ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                   ImGuiWindowFlags_NoSavedSettings;
    ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
    ImGui::Begin("AttnLab", nullptr, flags);
    ImGui::PopStyleVar();

    draw_menu_bar(app);

    plot::set_file_export(app.file_export);
    plot::set_widget_rects(&app.widgets);
    PanelContext ctx{s, app.widgets, app.file_export, app.pinch};
    draw_model_bar(app.model_bar, app.model_loading, ctx, app.model_source);
    if (app.model_bar.chosen != BuiltinModel::None) {  // the model menu's choice
        load_builtin(app, app.model_bar.chosen);
        app.model_bar.chosen = BuiltinModel::None;
    }
    if (!app.model_bar.chosen_hub.empty() && app.model_source) {  // a Hugging Face model from the menu: no second question
        start_model_download(app.model_loading, s, *app.model_source, app.model_bar.chosen_hub);
        app.model_bar.chosen_hub.clear();
    }
    draw_message(app);

    if (tab_titles_fit()) draw_tab_bar(app, ctx);
    else draw_wrapped_tabs(app, ctx);
    if (page.on) scroll_page_to_step_widget(tour_host(app));
    ImGui::End();
    draw_about(app);
    draw_share_popup(app);
    draw_tour(tour_host(app));
    follow_pinch(app);
    if (s.view != app.settled_view) {
        app.settled_view = s.view;
        app.settle_frames = 3;
    } else if (app.settle_frames > 0) {
        --app.settle_frames;
    }

    // Keep the page's address current (the page waits a moment and skips unchanged states).
    if (app.view_changed) {
        std::string state = view_state_json(s.view);
        if (state != app.published_state) {
            app.published_state = std::move(state);
            app.view_changed(app.published_state);
        }
    }
}

bool apply_view_state(AppState& app, std::string_view json, bool from_link, std::string& error) {
    Session& s = app.session;
    ViewState view = s.view;
    if (!parse_view_state(json, view, error)) {
        if (from_link) s.message = "This link's view could not be restored, so AttnLab starts with the defaults: " + error + ".";
        return false;
    }
    const std::string old_url = s.view.model_url;
    if (view.model_url.empty() && !old_url.empty()) {
        // "" names the built-in AttnLab tiny in links (or no model); keeping another model loaded
        // while answering ok would misstate what runs (issue 35).
        error = "model \"\" names the built-in AttnLab tiny (or no model), but " + old_url +
                " is loaded and the page cannot unload it; choose AttnLab tiny from the model menu instead";
        return false;
    }
    s.view = view;
    // A view set by the reader (setState, a link, a tour step) replaces any automatic choice still
    // waiting, even when it equals the view that choice was asked from: otherwise the first view's
    // move to the strongest head could undo it once the head grid is ready. A tour step that wants
    // that head asks again after this (show_tour_step).
    app.learned_head.pending = false;
    // The model: keep it when it is the one named (loaded or on its way), else fetch it (from
    // the cache when there).
    const std::string& url = view.model_url;
    if (linked_builtin(url) == BuiltinModel::TinySsmax && app.model_source) {
        // The twin: named by its relative address, found where this build keeps it.
        const FetchStatus st = app.model_source->status();
        const bool on_its_way = !app.model_loading.twin_source.empty() && st.url == app.model_loading.twin_source &&
                                (st.phase == FetchStatus::Phase::Downloading || st.phase == FetchStatus::Phase::Ready);
        const bool loaded = s.model && s.model->which == BuiltinModel::TinySsmax;
        if (!loaded && !on_its_way) load_builtin(app, BuiltinModel::TinySsmax);
    } else if (!url.empty() && app.model_source) {
        const FetchStatus st = app.model_source->status();
        const bool on_its_way = st.url == url && (st.phase == FetchStatus::Phase::Probing || st.phase == FetchStatus::Phase::Downloading ||
                                                  st.phase == FetchStatus::Phase::Ready);
        const bool loaded = s.model && s.model->source == url;
        if (!loaded && !on_its_way) start_model_download(app.model_loading, s, *app.model_source, url);
    } else if (url.empty()) {
        s.view.model_url = old_url;  // a link without a model keeps the one loaded
    }
    return true;
}

void show_share_link(AppState& app, std::string link, bool copied, bool tour) {
    app.share.link = std::move(link);
    app.share.copied = copied;
    app.share.tour = tour;
    app.share.open = true;
}

namespace {
FetchStatus::Phase fetch_phase(const AppState& app) {
    return app.model_source ? app.model_source->status().phase : FetchStatus::Phase::Idle;
}
bool app_computing(const AppState& app) {
    return app.session.model_work.busy() || app.session.background.busy() || app.session.twin_work.busy() ||
           app.attention.grid.thumbnails.work.busy() || app.attention.map.work.computing() || app.settle_frames > 0 ||
           plot::export_pending();
}
}  // namespace

bool app_busy(const AppState& app) {
    const FetchStatus::Phase phase = fetch_phase(app);
    return app_computing(app) || phase == FetchStatus::Phase::Probing || phase == FetchStatus::Phase::Downloading ||
           phase == FetchStatus::Phase::Ready;
}

long long app_progress_shown(const AppState& app) {
    const Session& s = app.session;
    const HeadThumbnails& thumbnails = app.attention.grid.thumbnails;
    // A finished task counts as a change too: the frame that hands its results over shows them.
    const TaskRunner* works[] = {&s.model_work, &s.background, &s.twin_work, &thumbnails.work, &app.attention.map.work.work};
    long long shown = 0;
    for (const TaskRunner* w : works) shown = shown * 103 + (!w->busy() ? 0 : w->finished() ? 102 : 1 + std::lround(100.0 * w->progress()));
    return shown;
}

FramePace app_frame_pace(const AppState& app) {
    constexpr double kProgressMs = 200.0;
    if (!app_computing(app)) return {fetch_phase(app) == FetchStatus::Phase::Downloading ? kProgressMs : 0.0, false};
    const bool in_frames = !TaskRunner::threaded() || app.settle_frames > 0 || plot::export_pending();
    return in_frames ? FramePace{} : FramePace{kProgressMs, fetch_phase(app) != FetchStatus::Phase::Downloading};
}

namespace {

std::string json_bool(bool v) { return v ? "true" : "false"; }

// window.attnlab.status()'s members that the app writes, in order, each made only when asked for:
// emit(key, its JSON) for every key, or for `only` alone when it is not empty.
template <typename Emit>
void app_status_members(const AppState& app, float pixel_ratio, std::string_view only, Emit&& emit) {
    const Session& s = app.session;
    const auto part = [&](std::string_view key, auto&& make) {
        if (only.empty() || only == key) emit(key, make());
    };
    part("busy", [&] { return json_bool(app_busy(app)); });
    part("tokens", [&] { return std::to_string(s.tokens.size()); });
    part("forward_tokens", [&] { return std::to_string(s.forward ? s.forward->tokens.size() : 0); });
    // What the model is doing now ("" when nothing) and how far it is, 0..1: a test can see frames
    // drawn while a pass is part-done.
    const auto work_json = [](const TaskRunner& r) {
        json::ObjectBuilder work;
        work.add("label", r.label()).add("progress", r.progress());
        return work.str();
    };
    part("model_work", [&] { return work_json(s.model_work); });
    part("background_work", [&] { return work_json(s.background); });  // the all-heads summaries
    part("error", [&] { return json::quote(s.message); });
    part("threads", [&] { return std::to_string(max_threads()); });  // the model's: 1, or the worker pool's size in the threaded page
    part("threads_note", [&] { return json::quote(app.threads_note); });
    part("model", [&] {
        json::ObjectBuilder model;
        model.add("loaded", s.model != nullptr);
        if (s.model) {
            const DecoderShape& c = s.model->shape;
            model.add("model_type", c.arch).add("n_layer", c.n_layer).add("n_head", c.n_head).add("n_kv_head", c.n_kv_head);
            model.add("head_dim", c.head_dim)
                .add("n_embd", c.hidden)
                .add("n_positions", c.max_positions)
                .add("max_positions", c.max_positions);
            model.add("vocab_size", c.vocab).add("dtype", s.model->dtype).add("own_tokenizer", s.model->tokenizer.loaded());
            model.add("source", s.model->source);
            model.add("name", s.model->name);
            model.add("builtin", s.model->builtin);
            model.add("builtin_name", builtin_model_label(s.model->which));  // "AttnLab tiny", "AttnLab tiny-SSMax", ""
        }
        return model.str();
    });
    part("model_bar", [&] { return model_bar_status_json(app.model_bar, s, app.model_source); });
    part("model_fetch", [&] { return model_fetch_status_json(app.model_source); });
    part("panel", [&] { return json::quote(panel_name(s.view.panel)); });
    part("playground", [&] { return playground_status_json(app.playground); });
    part("text", [&] { return text_status_json(app.text, s); });
    part("attention", [&] { return attention_status_json(app.attention, s); });
    part("model_changes", [&] { return model_changes_status_json(s); });
    part("twin", [&] { return twin_status_json(app.attention.twin, s); });
    part("distance", [&] { return distance_status_json(app.distance, s); });
    part("fading", [&] { return fading_status_json(app.fading, app.attention.grid.thumbnails, s); });
    part("separability", [&] { return separability_status_json(app.separability, s); });
    part("gradient", [&] { return gradient_status_json(app.gradient, s); });
    part("last_export", [&] {
        json::ObjectBuilder last_export;
        const ExportRecord record = app.file_export ? app.file_export->last_export() : ExportRecord{};
        last_export.add("name", record.name).add("mime", record.mime).add("bytes", record.bytes);
        return last_export.str();
    });
    part("share", [&] {
        json::ObjectBuilder share;
        share.add("link", app.share.link).add("copied", app.share.copied).add("tour", app.share.tour);
        return share.str();
    });
    part("tour", [&] { return tour_status_json(app.tour); });
    part("ui_scale", [&] { return json::number(static_cast<double>(app.ui_scale)); });
    part("widgets", [&] { return widget_rects_json(app.widgets, pixel_ratio); });
    part("windows", [&] { return drawn_windows_json(pixel_ratio); });
}

}  // namespace

void add_app_status(const AppState& app, float pixel_ratio, json::ObjectBuilder& status) {
    app_status_members(app, pixel_ratio, {}, [&](std::string_view key, const std::string& value) { status.add_raw(key, value); });
}

std::string app_status_value(const AppState& app, std::string_view key) {
    std::string value = "null";
    app_status_members(app, 1.0f, key, [&](std::string_view, std::string v) { value = std::move(v); });
    return value;
}

TourHost tour_host(AppState& app) {
    return TourHost{
        app.tour,
        app.session,
        app.widgets,
        app.file_export,
        app.ui_scale,
        [&app](std::string_view view_json, std::string& error) { return apply_view_state(app, view_json, false, error); },
        [&app](Panel panel) { request_learned_head(app, panel); },
        [&app](std::string_view key) { return app_status_value(app, key); },
        app.copy_tour_link,
        app.pick_tour_file,
    };
}

}  // namespace attnlab
