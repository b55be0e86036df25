// Entry point of the desktop window (attnlab-desktop): the same panels as the web page.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "app/app.h"
#include "platform/desktop_file_export.h"
#include "platform/desktop_loop.h"
#include "platform/desktop_model_source.h"
#include "platform/ui_host.h"
#include "platform/whole_file.h"

namespace {

void usage(FILE* out) {
    std::fprintf(out,
                 "usage: attnlab-desktop [--model PATH | --no-model] [--panel NAME] [--tour FILE] [--size WxH] [--frames N [--screenshot "
                 "FILE.ppm]]\n"
                 "  --model PATH       load this checkpoint at start: a .safetensors file, or a folder in Hugging Face's\n"
                 "                     layout (model.safetensors or the index and its shards, config.json,\n"
                 "                     tokenizer.json); without it, the built-in AttnLab tiny (trained on the\n"
                 "                     King James Bible and repeated random words, not GPT-2); the window opens\n"
                 "                     on its most learned head\n"
                 "  --no-model         start with no model loaded\n"
                 "  --panel NAME       open this panel: text, attention, distance, separability, gradient,\n"
                 "                     playground or help (default text)\n"
                 "  --tour FILE        play this tour (a tour's JSON, as the page's Export JSON writes it) from\n"
                 "                     step 1; --tour builtin plays \"What softmax can and cannot select\"\n"
                 "  --size WxH         window size in pixels (default 1280x800)\n"
                 "  --frames N         draw N frames, then exit (unattended runs and tests)\n"
                 "  --screenshot FILE  with --frames: save the last frame as a binary PPM\n");
}

bool parse_int(const char* s, int lo, int hi, int& out) {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return false;
    out = static_cast<int>(v);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    int width = 1280, height = 800;
    attnlab::DesktopRun run;
    std::string model_path;
    bool no_model = false;
    attnlab::Panel panel = attnlab::Panel::Text;
    bool panel_given = false;
    std::string tour_path;
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
            usage(stdout);
            return 0;
        } else if (!std::strcmp(arg, "--size") && value) {
            if (std::sscanf(value, "%dx%d", &width, &height) != 2 || width < 200 || height < 150 || width > 16384 || height > 16384) {
                std::fprintf(stderr, "attnlab-desktop: --size wants WxH between 200x150 and 16384x16384, got '%s'\n", value);
                return 2;
            }
            ++i;
        } else if (!std::strcmp(arg, "--panel") && value) {
            panel_given = true;
            if (!attnlab::parse_panel(value, panel)) {
                std::fprintf(stderr,
                             "attnlab-desktop: --panel wants text, attention, distance, separability, gradient, "
                             "playground or help, got '%s'\n",
                             value);
                return 2;
            }
            ++i;
        } else if (!std::strcmp(arg, "--model") && value) {
            model_path = value;
            ++i;
        } else if (!std::strcmp(arg, "--tour") && value) {
            tour_path = value;
            ++i;
        } else if (!std::strcmp(arg, "--no-model")) {
            no_model = true;
        } else if (!std::strcmp(arg, "--frames") && value) {
            if (!parse_int(value, 1, 1000000, run.frames)) {
                std::fprintf(stderr, "attnlab-desktop: --frames wants a whole number from 1 to 1000000, got '%s'\n", value);
                return 2;
            }
            ++i;
        } else if (!std::strcmp(arg, "--screenshot") && value) {
            run.screenshot = value;
            ++i;
        } else {
            std::fprintf(stderr, "attnlab-desktop: unknown or incomplete option '%s'\n", arg);
            usage(stderr);
            return 2;
        }
    }
    if (no_model && !model_path.empty()) {
        std::fprintf(stderr, "attnlab-desktop: --model and --no-model contradict each other: choose one\n");
        return 2;
    }
    // The tour is read before any window opens, so that a bad file is a message, not a window.
    std::string tour_text;
    if (!tour_path.empty() && tour_path != "builtin") {
        std::string why;
        if (!attnlab::read_whole_file(tour_path, tour_text, why)) {
            std::fprintf(stderr, "attnlab-desktop: --tour: %s\n", why.c_str());
            return 2;
        }
    } else if (tour_path == "builtin") {
        tour_text = attnlab::builtin_tour_json();
    }
    if (!tour_text.empty()) {
        attnlab::Tour tour;
        std::string why;
        if (!attnlab::parse_tour(tour_text, attnlab::ViewState(), tour, why)) {
            std::fprintf(stderr, "attnlab-desktop: --tour %s: %s\n", tour_path.c_str(), why.c_str());
            return 2;
        }
    }
    if (!run.screenshot.empty() && run.frames == 0) {
        std::fprintf(stderr, "attnlab-desktop: --screenshot needs --frames N\n");
        return 2;
    }

    attnlab::AppState app;
    app.session.view.panel = panel;
    attnlab::UiHost host;
    std::string error;
    if (!host.open("AttnLab", width, height, 1.0f, ATTNLAB_FONT_FILE, error)) {
        std::fprintf(stderr, "attnlab-desktop: %s\n", error.c_str());
        return 1;
    }
    host.set_pixel_ratio(attnlab::desktop_pixel_ratio(host.window()));
    attnlab::init_app(app, attnlab::read_whole_file(ATTNLAB_ASSETS_DIR "/gpt2/encoder.json"),
                      attnlab::read_whole_file(ATTNLAB_ASSETS_DIR "/gpt2/vocab.bpe"));
    attnlab::DesktopModelSource model_source;
    app.model_source = &model_source;
    // The built-in model (assets/tiny) unless told otherwise: a window with learned attention at once.
    app.builtin_model = ATTNLAB_ASSETS_DIR "/tiny";
    app.twin_model = ATTNLAB_ASSETS_DIR "/tiny-ssmax";  // its SSMax twin, on the model menu
    if (!model_path.empty()) attnlab::start_model_download(app.model_loading, app.session, model_source, model_path);
    else if (!no_model) attnlab::load_builtin_model(app, !panel_given);
    // Exports go to the working folder; PNGs are read back right after a frame is rendered
    // (--screenshot replaces this callback: unattended runs export nothing).
    attnlab::DesktopFileExport file_export;
    app.file_export = &file_export;
    host.set_after_render_callback([&](int w, int h) { file_export.after_render(w, h); });
    app.set_full_screen = [&](bool on) { attnlab::set_desktop_full_screen(host.window(), on); };
    app.is_full_screen = [&] { return attnlab::desktop_full_screen(host.window()); };
    // A tour's steps apply to the view the window opened with (its text, its model).
    if (!tour_text.empty()) {
        std::string why;
        attnlab::apply_tour_json(attnlab::tour_host(app), tour_text, false, why);  // checked above
    }
    return attnlab::run_desktop_loop(
        host,
        [&] {
            attnlab::draw_app(app);
            host.set_ui_scale(app.ui_scale);
            if (attnlab::app_busy(app)) host.request_redraw(1);
        },
        run);
}
