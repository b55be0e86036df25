// Entry point of the web page (attnlab.js / attnlab.wasm, loaded by web/index.html).
#include <string>

#include "app/app.h"
#include "platform/ui_host.h"
#include "platform/web_page.h"
#include "platform/whole_file.h"

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
    attnlab::run_web_page(
        host,
        [] {
            attnlab::draw_app(app);
            if (attnlab::app_busy(app)) host.request_redraw(1);
        },
        [](attnlab::json::ObjectBuilder& status) { attnlab::add_app_status(app, host.pixel_ratio(), status); });
}
