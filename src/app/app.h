#pragma once
// The whole UI: the model bar, then a tab per panel. Each panel's state sits next to its code
// (one file per panel); what they share is the Session.
#include <functional>
#include <string>
#include <string_view>

#include "app/file_export.h"
#include "app/model_source.h"
#include "app/panels/attention_panel.h"
#include "app/panels/distance_panel.h"
#include "app/panels/fading_panel.h"
#include "app/panels/gradient_panel.h"
#include "app/panels/help_panel.h"
#include "app/panels/model_bar.h"
#include "app/panels/separability_panel.h"
#include "app/panels/softmax_playground.h"
#include "app/panels/text_panel.h"
#include "app/pinch.h"
#include "app/session.h"
#include "app/tour/tour_player.h"
#include "app/widget_rects.h"
#include "base/json.h"

namespace attnlab {

struct AppState {
    Session session;
    ModelBar model_bar;
    ModelLoading model_loading;
    TextPanel text;
    AttentionPanel attention;
    DistancePanel distance;
    FadingPanel fading;
    SeparabilityPanel separability;
    GradientPanel gradient;
    SoftmaxPlayground playground;
    HelpPanel help;
    WidgetRects widgets;

    // Set by the entry point; either may stay null.
    ModelSource* model_source = nullptr;
    FileExport* file_export = nullptr;
    // Where the built-in model (assets/tiny) is, as model_source takes it: the site's relative
    // address on the web, a folder on the desktop. "" = none.
    std::string builtin_model;
    // Where its SSMax twin (assets/tiny-ssmax) is, the same way; not in the page's start-up
    // download: fetched on first use (the model menu, a link naming it). "" = none.
    std::string twin_model;

    // The page's share-link half (web/share_state.js); both null natively.
    // copy_link: put this view state in the URL's hash and copy the link; the page answers with
    // show_share_link(). view_changed: the view state changed (checked once a frame), so the
    // page can keep its hash current.
    std::function<void(const std::string& state_json)> copy_link;
    std::function<void(const std::string& state_json)> view_changed;
    std::string published_state;  // the state last handed to view_changed

    struct SharePopup {
        bool open = false;
        bool copied = false;  // the clipboard took it; otherwise the reader copies by hand
        bool tour = false;    // a tour's link, not a view's
        std::string link;
    } share;

    // Show a learned head once the head grid is ready: on a first open with the built-in model,
    // first_view_head on the Attention map (so the first thing a visitor sees is a head that
    // selects among several keys), and for a tour step that asks for it, the strongest one. Only while the view is still `from` and no
    // view was set since (apply_view_state): a choice made meanwhile wins.
    struct LearnedHeadRequest {
        bool pending = false;
        ViewState from;
        Panel panel = Panel::Attention;  // the panel to show it on
        // A first visit: first_view_head, not strongest_learned_head, and only on the built-in
        // model (give up if another model comes instead).
        bool first_view = false;
    } learned_head;

    TourPlayer tour;
    // Two fingers on a touch screen, set by the platform before each frame.
    Pinch pinch;
    // The UI scale (1 = 100%), for a room: the platform rebuilds its fonts when it changes.
    float ui_scale = 1.0f;
    // The scale that suits the screen (status().device.default_ui_scale on the web; 0: none
    // known), which ui_scale follows until the reader chooses one (View, a pinch, a tour's scale).
    float screen_ui_scale = 0.0f;
    bool ui_scale_chosen = false;
    float ui_scale_set = 1.0f;  // ui_scale as keep_ui_scale left it: a change since is a choice
    // Full screen, where the platform can (null: it cannot). The answer to is_full_screen.
    std::function<void(bool on)> set_full_screen;
    std::function<bool()> is_full_screen;
    // The page's tour half (web/share_state.js): the #t= link of a tour; file picker for a
    // tour's JSON. Null natively.
    std::function<void(const std::string& tour_json)> copy_tour_link;
    std::function<void()> pick_tour_file;

    // The view as the last frame left it. A view changed during a frame (a tour's Next, the
    // learned head found) opens its tab a frame later, and its panel starts work the frame after:
    // app_busy keeps frames coming until the view has stayed put for settle_frames frames.
    ViewState settled_view;
    int settle_frames = 0;

    bool show_about = false;
    // Why the page computes on one thread, in About and status().threads_note ("" when it has
    // its worker pool, and natively): set by the platform.
    std::string threads_note;
    Panel shown_panel = Panel::Text;  // the tab drawn last frame, to notice setState() changes
};

// Keeps the GPT-2 vocabulary files' bytes (assets/gpt2) for the tokenizer of models without
// tokenizer.json and of the text before a model is loaded (built when first needed:
// gpt2_vocabulary in session.h), and gives an empty view the start text.
void init_app(AppState& app, std::string encoder_json, std::string vocab_bpe);

// Starts loading app.builtin_model (no question asked); nothing when there is none. first_open:
// the page or window opened with nothing chosen, so the view may move to the model's strongest
// learned head once it is known (AppState::learned_head).
void load_builtin_model(AppState& app, bool first_open = false);
// Starts loading one of the two built-in models (the model menu): AttnLab tiny or its SSMax twin.
// Nothing when its location is unknown.
void load_builtin(AppState& app, BuiltinModel which);

void draw_app(AppState& app);

// Applies a view state (window.attnlab.setState, a shared link's hash): parse_view_state into
// the session's view, and load view.model_url when it names a model other than the one loaded
// or loading. On failure the view is unchanged; from_link also puts the error in the banner.
bool apply_view_state(AppState& app, std::string_view json, bool from_link, std::string& error);

// Asks for the model's strongest learned head on `panel` once it is known (AppState::learned_head);
// first_view: the page's first open, with the built-in model only, on first_view_head.
void request_learned_head(AppState& app, Panel panel, bool first_view = false);

// The page's answer to copy_link (and copy_tour_link): the link, and whether the clipboard took it.
void show_share_link(AppState& app, std::string link, bool copied, bool tour = false);

// True while work is in flight: the platform keeps drawing frames.
bool app_busy(const AppState& app);
// While busy, when the app wants its next frame. Every animation frame for work done in frames,
// or a view settling. When all of the work goes on elsewhere, frames only show its progress, 5 a
// second at most. A download's chunks arrive on the main thread between frames: full-rate frames
// slowed a 498 MB download from 1.4 s to 51 s (bench/page_load.mjs). Tasks on worker threads share
// the cores with the drawing: in Chromium without a GPU a frame of the 1280 x 800 page took about
// 60 ms of the GPU process's CPU and 35 ms of the main thread's, and at full rate a pass of 1,019
// tokens on 2 threads took 2.5x its time in node (bench/RESULTS.md); for them a frame is drawn only
// when the progress it shows has moved (app_progress_shown), or a second has passed.
struct FramePace {
    double interval_ms = 0;            // 0: the next animation frame
    bool when_progress_moves = false;  // and then only if app_progress_shown has changed
};
FramePace app_frame_pace(const AppState& app);
// The progress of the work in flight as frames show it (whole percents, and whether a task has
// finished), folded into one number.
long long app_progress_shown(const AppState& app);

// The app's part of window.attnlab.status().
void add_app_status(const AppState& app, float pixel_ratio, json::ObjectBuilder& status);
// One top-level member of that part as JSON ("distance", "tokens"), made alone; "null" when there
// is no such member.
std::string app_status_value(const AppState& app, std::string_view key);

// The tour player's view of the app (src/app/tour/tour_player.h), for one call.
TourHost tour_host(AppState& app);

}  // namespace attnlab
