// Entry point of the web page (attnlab.js / attnlab.wasm, loaded by web/index.html).
#include <emscripten.h>

#include <string>

#include "app/app.h"
#include "platform/ui_host.h"
#include "platform/web_file_export.h"
#include "platform/web_model_source.h"
#include "platform/web_page.h"
#include "platform/whole_file.h"

// The built-in model, relative to the page: the build copies assets/ into the site. Relative, so
// the site works from any folder, and share links made with it name no model (the default one).
static constexpr const char* kBuiltinModelAddress = "assets/tiny/model.safetensors";
// Its SSMax twin, fetched on first use (the model menu, a link naming it: attnlab::kTwinLinkName).
static constexpr const char* kTwinModelAddress = attnlab::kTwinLinkName;

// Out of memory with no model to fall back on (a link named one too large for this device): the
// built-in model, so that the page stays usable. Called after the frame's model bar, which has put
// the failure in the banner by then. Once per failed address.
static void fall_back_after_running_out(attnlab::AppState& app, const attnlab::ModelSource& source) {
    static std::string fell_back_for;
    const attnlab::FetchStatus f = source.status();
    if (f.phase != attnlab::FetchStatus::Phase::Failed || app.session.model || f.error.rfind("Not enough memory", 0) != 0 ||
        fell_back_for == f.url)
        return;
    fell_back_for = f.url;
    const std::string failure = app.session.message;
    attnlab::load_builtin_model(app);
    // The failure stays in the banner, saying what happens now (starting a download clears the
    // banner, and the model bar forgets a failure once a new download begins while it is still
    // the model's error).
    app.session.model_error.clear();
    app.session.message = failure + " The built-in model is loaded instead.";
}

int main() {
    static attnlab::AppState app;
    static attnlab::UiHost host;
    const attnlab::CanvasSize canvas = attnlab::canvas_size();
    std::string error;
    if (!host.open("AttnLab", canvas.width, canvas.height, canvas.pixel_ratio, ATTNLAB_FONT_FILE, error)) {
        attnlab::show_fatal_error(error.c_str());
        return 1;
    }
    // The vocabulary is embedded in the module (its own file system).
    attnlab::init_app(app, attnlab::read_whole_file(ATTNLAB_ASSETS_DIR "/gpt2/encoder.json"),
                      attnlab::read_whole_file(ATTNLAB_ASSETS_DIR "/gpt2/vocab.bpe"));
    // Models arrive by fetch(), the file picker or drag-and-drop; ?model=URL loads at once.
    // Without one, the built-in model (assets/tiny, ~15 MB from the page's own site) loads with
    // no question, unless a share link is still to be applied: it may name another model, so
    // the built-in one waits for it (link_restored below) instead of downloading both.
    static attnlab::WebModelSource model_source;
    app.model_source = &model_source;
    app.threads_note = attnlab::page_threads_note();  // isolation is fixed for the page's life
    app.builtin_model = kBuiltinModelAddress;
    app.twin_model = kTwinModelAddress;
    model_source.add_uncached(kBuiltinModelAddress);  // the browser's HTTP cache keeps them fresh
    model_source.add_uncached(kTwinModelAddress);
    const std::string model_url = model_source.init_page();
    if (!model_url.empty()) attnlab::start_model_download(app.model_loading, app.session, model_source, model_url);
    else if (!attnlab::page_has_share_link()) attnlab::load_builtin_model(app, true);
    // Exports download through the browser; PNGs are read from the canvas right after rendering.
    static attnlab::WebFileExport file_export;
    app.file_export = &file_export;
    host.set_after_render_callback([](int w, int h) { file_export.after_render(w, h); });
    // Share links and window.attnlab.state()/setState() (web/share_state.js).
    app.copy_link = attnlab::page_copy_link;
    app.view_changed = attnlab::page_view_changed;
    attnlab::set_page_share({
        [] { return attnlab::view_state_json(app.session.view); },
        [](std::string_view json, bool from_link, std::string& error) { return attnlab::apply_view_state(app, json, from_link, error); },
        [](std::string link, bool copied) { attnlab::show_share_link(app, std::move(link), copied); },
        [](std::string message) { app.session.message = std::move(message); },
        [] {
            // The link named no model (or could not be read): the built-in one, as without a link.
            if (!app.session.model && app.session.view.model_url.empty()) attnlab::load_builtin_model(app);
        },
    });
    // Tours: #t= links, window.attnlab.tour()/setTour()/tourStep()/tourLink()/startTour().
    app.copy_tour_link = attnlab::page_copy_tour_link;
    app.pick_tour_file = attnlab::page_pick_tour_file;
    app.set_full_screen = attnlab::page_set_full_screen;
    app.is_full_screen = attnlab::page_is_full_screen;
    attnlab::set_page_tours({
        [](bool compact) { return app.tour.tour.steps.empty() ? std::string() : attnlab::tour_json(app.tour.tour, compact); },
        [](std::string_view json, bool from_link, std::string& error) {
            return attnlab::apply_tour_json(attnlab::tour_host(app), json, from_link, error);
        },
        [](int k) { return attnlab::show_tour_step(attnlab::tour_host(app), k) ? attnlab::tour_step_json(app.tour, k) : std::string(); },
        [] { attnlab::play_builtin_tour(attnlab::tour_host(app)); },
        [] { attnlab::leave_tour(app.tour); },
        [](std::string link, bool copied) { attnlab::show_share_link(app, std::move(link), copied, true); },
    });
    attnlab::run_web_page(
        host,
        [] {
            // Two fingers (web/touch_input.js): the map zooms or the UI scale follows (draw_app).
            app.pinch.scale = host.pinch().scale;
            app.pinch.x = host.pinch().x;
            app.pinch.y = host.pinch().y;
            app.screen_ui_scale = attnlab::page_screen_ui_scale();
            attnlab::draw_app(app);
            fall_back_after_running_out(app, model_source);
            host.set_ui_scale(app.ui_scale);
            if (attnlab::app_busy(app)) {
                const attnlab::FramePace pace = attnlab::app_frame_pace(app);
                if (pace.interval_ms <= 0) host.request_redraw(1);
                else if (!pace.when_progress_moves) attnlab::page_redraw_in(pace.interval_ms);
                else
                    attnlab::page_redraw_in(pace.interval_ms, [shown = attnlab::app_progress_shown(app), at = emscripten_get_now()] {
                        return attnlab::app_progress_shown(app) != shown || emscripten_get_now() - at >= 1000.0;
                    });
            }
        },
        [](attnlab::json::ObjectBuilder& status) { attnlab::add_app_status(app, host.pixel_ratio(), status); });
}
