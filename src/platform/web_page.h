#pragma once
// The browser seam: runs the UI from the page's animation frames, pausing the loop while
// nothing changes, follows the canvas size and devicePixelRatio, and serves
// window.attnlab.status() (see web/index.html).
#include <functional>
#include <string>
#include <string_view>

#include "base/json.h"
#include "platform/ui_host.h"

namespace attnlab {

struct CanvasSize {
    int width;  // backing pixels = CSS pixels x devicePixelRatio
    int height;
    float pixel_ratio;
};

// The canvas's current CSS size times devicePixelRatio.
CanvasSize canvas_size();

// Tells the page that start-up failed, with a message for the reader.
void show_fatal_error(const char* message);

// The share state's seam with web/share_state.js (window.attnlab.state/setState/shareLink and
// the #s= links). Set before run_web_page.
struct PageShare {
    std::function<std::string()> get_state;  // the view state as JSON
    // Applies a view state; from_link: it came from the address (errors also go to the banner).
    std::function<bool(std::string_view json, bool from_link, std::string& error)> set_state;
    std::function<void(std::string link, bool copied)> link_ready;  // the answer to page_copy_link
    std::function<void(std::string message)> show_message;          // a link the page could not decode
    // The address's #s= link has been dealt with (applied, or refused with a message); once
    // per page, after the first frame, and only when page_has_share_link() said there is one.
    std::function<void()> link_restored;
};
void set_page_share(PageShare share);

// True when the address carries a link (a hash) that will be applied after the first frame.
bool page_has_share_link();

// Asks the page to put `state_json` in the address (#s=...) and copy the link; the page
// answers through PageShare::link_ready.
void page_copy_link(const std::string& state_json);
// The view changed: the page keeps its address current once it shows a link.
void page_view_changed(const std::string& state_json);

// Tours' seam with web/share_state.js and web/index.html (window.attnlab.tour/setTour/tourStep/
// tourLink/startTour and the #t= links). Set before run_web_page.
struct PageTours {
    std::function<std::string(bool compact)> get_tour;  // tour_json of the tour held; "" when none
    // Plays a tour's JSON from step 1; from_link: it came from the address.
    std::function<bool(std::string_view json, bool from_link, std::string& error)> set_tour;
    std::function<std::string(int k)> show_step;                    // shows step k; the step as JSON, "" when none
    std::function<void()> start_builtin;                            // plays the built-in tour
    std::function<void()> leave;                                    // stops playing, keeps the view
    std::function<void(std::string link, bool copied)> link_ready;  // the answer to page_copy_tour_link
};
void set_page_tours(PageTours tours);
// Asks the page for the #t= link of `tour_json` and to copy it; it answers through link_ready.
void page_copy_tour_link(const std::string& tour_json);
// Opens the browser's file picker for a tour's JSON; a chosen file is played (or refused in the banner).
void page_pick_tour_file();
// The document in full screen (the Fullscreen API), and whether it is.
void page_set_full_screen(bool on);
bool page_is_full_screen();
// One frame `ms` from now (and none before, unless an event asks): for work that wants its progress
// shown at a modest rate, not at the frame rate. With `worth_drawing`, the frame waits, `ms` at a
// time, until it says that something shown has changed.
void page_redraw_in(double ms, std::function<bool()> worth_drawing = {});
// The UI scale that suits this screen (status().device.default_ui_scale: 1.25 on phones and
// tablets, 1 on a desktop); 0 when the page does not say.
float page_screen_ui_scale();
// Why the page computes on one thread, for the reader ("" when it has threads): a browser that
// isolates the page but gives it no SharedArrayBuffer (WebKitGTK), a page not isolated, or WebKit
// (web/index.html, threadsWhy()).
std::string page_threads_note();

// Runs the page until it is closed. `status` adds the app's fields to window.attnlab.status().
// Does not return: Emscripten unwinds main() and keeps the runtime alive.
[[noreturn]] void run_web_page(UiHost& host, std::function<void()> draw_ui, std::function<void(json::ObjectBuilder&)> status);

}  // namespace attnlab
