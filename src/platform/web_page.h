#pragma once
// The browser seam: runs the UI from the page's animation frames, pausing the loop while
// nothing changes, follows the canvas size and devicePixelRatio, and serves
// window.attnlab.status() (see web/index.html).
#include <functional>

#include "model/json.h"
#include "platform/ui_host.h"

namespace attnlab {

struct CanvasSize {
    int width;   // backing pixels = CSS pixels x devicePixelRatio
    int height;
    float pixel_ratio;
};

// The canvas's current CSS size times devicePixelRatio.
CanvasSize canvas_size();

// Tells the page that start-up failed, with a message for the reader.
void show_fatal_error(const char* message);

// Runs the page until it is closed. `status` adds the app's fields to window.attnlab.status().
// Does not return: Emscripten unwinds main() and keeps the runtime alive.
[[noreturn]] void run_web_page(UiHost& host, std::function<void()> draw_ui, std::function<void(json::ObjectBuilder&)> status);

}  // namespace attnlab
