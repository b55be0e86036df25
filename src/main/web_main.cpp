// Entry point of the web page (attnlab.js / attnlab.wasm, loaded by web/index.html).
#include <string>

#include "app/app.h"
#include "platform/ui_host.h"
#include "platform/web_page.h"

int main() {
    static attnlab::AppState app;
    static attnlab::UiHost host;
    const attnlab::CanvasSize canvas = attnlab::canvas_size();
    std::string error;
    if (!host.open("AttnLab", canvas.width, canvas.height, canvas.pixel_ratio, ATTNLAB_FONT_FILE, error)) {
        attnlab::show_fatal_error(error.c_str());
        return 1;
    }
    attnlab::run_web_page(
        host, [] { attnlab::draw_app(app); },
        [](attnlab::json::ObjectBuilder& status) { attnlab::add_app_status(app, host.pixel_ratio(), status); });
}
