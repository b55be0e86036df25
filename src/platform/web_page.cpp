#include "platform/web_page.h"

#include <emscripten.h>
#include <emscripten/heap.h>
#include <emscripten/html5.h>
#include <malloc.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>  // where the active text field's cursor is (for the on-screen keyboard)

#include "base/heap_block.h"

// The page (web/index.html) defines these hooks on Module.
// clang-format off
EM_JS(void, js_first_frame, (), { if (Module.onFirstFrame) Module.onFirstFrame(); });
EM_JS(void, js_fatal_error, (const char* message), { if (Module.onFatalError) Module.onFatalError(UTF8ToString(message)); });
// clang-format on
// The system clipboard. Browsers let a page write it during a key press, but read it only in
// a 'paste' event, which arrives right after the Ctrl+V key-down and before the next frame:
// we keep its text, and ImGui reads that copy when it handles the key.
// clang-format off
EM_JS(void, js_write_clipboard, (const char* text), {
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(UTF8ToString(text)).catch(() => {});
});
EM_JS(void, js_listen_for_paste, (), {
    window.addEventListener("paste", (event) => {
        const text = event.clipboardData ? event.clipboardData.getData("text") : "";
        const size = lengthBytesUTF8(text) + 1;
        const ptr = _malloc(size);
        stringToUTF8(text, ptr, size);
        _attnlab_on_paste(ptr);
        _free(ptr);
        event.preventDefault();
    });
});
// clang-format on
// The share-link half of the page (web/share_state.js).
// clang-format off
EM_JS(void, js_copy_link, (const char* json), {
    if (window.attnlabShare) window.attnlabShare.copyLink(UTF8ToString(json));
    else ccall("attnlab_link_ready", null, ["string", "number"], ["", 0]);
});
EM_JS(void, js_view_changed, (const char* json), {
    if (window.attnlabShare) window.attnlabShare.viewChanged(UTF8ToString(json));
});
EM_JS(int, js_has_share_link, (), { return window.attnlabShare && window.attnlabShare.hasLink() ? 1 : 0; });
// clang-format on
// Tours (web/share_state.js makes the #t= links).
// clang-format off
EM_JS(void, js_copy_tour_link, (const char* json), {
    if (window.attnlabShare) window.attnlabShare.copyTourLink(UTF8ToString(json));
});
EM_JS(void, js_pick_tour_file, (), {
    const input = document.createElement("input");
    input.type = "file";
    input.accept = ".json,application/json";
    input.addEventListener("change", async () => {
        const file = input.files && input.files[0];
        if (!file) return;
        let text = null;
        try { text = await file.text(); } catch (e) { text = null; }
        const why = text === null ? "the browser could not read it"
                                  : ccall("attnlab_set_tour", "string", ["string", "number"], [text, 0]);
        if (why) ccall("attnlab_link_error", null, ["string"], ["The tour file “" + file.name + "” could not be opened: " + why + "."]);
    });
    input.click();
});
EM_JS(void, js_set_full_screen, (int on), {
    const done = () => ccall("attnlab_request_redraw", null, [], []);
    if (on && !document.fullscreenElement && document.documentElement.requestFullscreen)
        document.documentElement.requestFullscreen().then(done, (e) => {
            ccall("attnlab_link_error", null, ["string"], ["The browser did not allow full screen (" + e.message + "); press F11 instead."]);
        });
    else if (!on && document.fullscreenElement) document.exitFullscreen().then(done, done);
});
EM_JS(int, js_is_full_screen, (), { return document.fullscreenElement ? 1 : 0; });
// clang-format on
// Touches and the on-screen keyboard (web/touch_input.js): a text field became active or inactive;
// x, y: its cursor, in CSS pixels.
// clang-format off
EM_JS(void, js_text_input_wanted, (int wanted, double x, double y, double line), {
    if (window.attnlabTouch) window.attnlabTouch.textInputWanted(wanted !== 0, x, y, line);
});
EM_JS(int, js_text_input_focused, (), { return window.attnlabTouch && window.attnlabTouch.textInputFocused() ? 1 : 0; });
// clang-format on
// What the page knows of the device: its size class and default UI scale, and its memory.
// clang-format off
EM_JS(char*, js_device_json, (), {
    const json = JSON.stringify(window.attnlabTouch ? window.attnlabTouch.device() : {});
    const size = lengthBytesUTF8(json) + 1;
    const ptr = _malloc(size);
    stringToUTF8(json, ptr, size);
    return ptr;
});
// Why web/index.html chose the single-threaded build (its threadsWhy()): 0 it did not, 1 isolated
// but without SharedArrayBuffer, 2 not isolated, 3 WebKit.
EM_JS(int, js_thread_limit, (), {
    return ["", "no-shared-memory", "not-isolated", "webkit"].indexOf(Module.attnlabThreadsWhy || "");
});
EM_JS(double, js_screen_ui_scale, (), {
    return window.attnlabTouch ? Number(window.attnlabTouch.defaultUiScale()) || 0 : 0;
});
// clang-format on
// Sets the canvas's backing store; GLFW hears of it through Browser's resize listeners.
// (glfwSetWindowSize would ask for fullscreen whenever the size equals the screen's.)
// clang-format off
EM_JS(void, js_set_canvas_size, (int width, int height), { Browser.setCanvasSize(width, height); });
// clang-format on

namespace attnlab {

namespace {

struct Page {
    UiHost* host = nullptr;
    std::function<void()> draw_ui;
    std::function<void(json::ObjectBuilder&)> status;
    bool paused = false;
    std::string status_json;  // kept alive for the JS caller
    std::string clipboard;    // last text copied in the app or pasted into the page
    PageShare share;
    std::string state_json;  // kept alive for the JS caller
    std::string state_error;
    PageTours tours;
    std::string tour_json;  // kept alive for the JS caller
    std::string tour_error;
    bool text_wanted = false;  // a text field was active in the last frame
    ImVec2 text_at{-1, -1};    // where its cursor was
};
Page g_page;

// A text field became active (or moved): the page focuses its DOM text element there, which
// opens a phone's on-screen keyboard; inactive: the element lets go, and the keyboard closes.
void follow_text_input() {
    Page& p = g_page;
    const bool wanted = ImGui::GetIO().WantTextInput;
    const ImVec2 at = ImGui::GetCurrentContext()->PlatformImePos;
    if (wanted == p.text_wanted && (!wanted || (at.x == p.text_at.x && at.y == p.text_at.y))) return;
    p.text_wanted = wanted;
    p.text_at = at;
    const float r = p.host->pixel_ratio();
    js_text_input_wanted(wanted ? 1 : 0, at.x / r, at.y / r, ImGui::GetFontSize() / r);
}

void main_loop() {
    Page& p = g_page;
    if (!p.host->wants_redraw()) {
        // Nothing to draw: stop asking for animation frames until an event wakes us.
        emscripten_pause_main_loop();
        p.paused = true;
        return;
    }
    p.host->frame(p.draw_ui);
    if (p.host->frames_drawn() == 1) js_first_frame();
    follow_text_input();
}

// The DOM's wheel in ImGui's notches (+1 a notch up), by the convention browsers share with
// SDL's and later ImGui's Emscripten backends: 100 pixels, or 3 lines, a notch. (GLFW's port
// would pass the raw pixels, with the sign of scrolling down.) True: the page does not scroll.
EM_BOOL on_wheel(int, const EmscriptenWheelEvent* e, void*) {
    const double per_notch = e->deltaMode == DOM_DELTA_PIXEL ? 100.0 : e->deltaMode == DOM_DELTA_LINE ? 3.0 : 1.0 / 80.0;
    if (g_page.host) g_page.host->wheel(static_cast<float>(-e->deltaX / per_notch), static_cast<float>(-e->deltaY / per_notch));
    return EM_TRUE;
}

void wake() {
    if (g_page.paused) {
        g_page.paused = false;
        emscripten_resume_main_loop();
    }
}

// setState() and setTour() from the page: "" when `apply` took the JSON, else why not. `error`
// keeps the answer alive for the JS caller.
using ApplyJson = std::function<bool(std::string_view json, bool from_link, std::string& error)>;
const char* apply_from_page(const ApplyJson& apply, const char* json, int from_link, const char* refused, std::string& error) {
    error.clear();
    if (!apply) error = "AttnLab is still starting";
    else if (!apply(json, from_link != 0, error) && error.empty()) error = refused;
    if (g_page.host) g_page.host->request_redraw();
    wake();
    return error.c_str();
}

}  // namespace

void set_page_share(PageShare share) { g_page.share = std::move(share); }
namespace {
struct TimedRedraw {
    bool pending = false;  // one timer at a time
    double ms = 0;
    std::function<bool()> worth_drawing;
};
TimedRedraw g_timed_redraw;

void timed_redraw(void*) {
    TimedRedraw& r = g_timed_redraw;
    if (r.worth_drawing && !r.worth_drawing()) {
        emscripten_set_timeout(timed_redraw, r.ms, nullptr);
        return;
    }
    r.pending = false;
    if (g_page.host) g_page.host->request_redraw(1);
    wake();
}
}  // namespace

void page_redraw_in(double ms, std::function<bool()> worth_drawing) {
    TimedRedraw& r = g_timed_redraw;
    r.worth_drawing = std::move(worth_drawing);  // the latest frame's say
    if (r.pending) return;
    r.pending = true;
    r.ms = ms;
    emscripten_set_timeout(timed_redraw, ms, nullptr);
}

void page_copy_link(const std::string& state_json) { js_copy_link(state_json.c_str()); }
void page_view_changed(const std::string& state_json) { js_view_changed(state_json.c_str()); }
bool page_has_share_link() { return js_has_share_link() != 0; }
void set_page_tours(PageTours tours) { g_page.tours = std::move(tours); }
void page_copy_tour_link(const std::string& tour_json) { js_copy_tour_link(tour_json.c_str()); }
void page_pick_tour_file() { js_pick_tour_file(); }
void page_set_full_screen(bool on) { js_set_full_screen(on ? 1 : 0); }
bool page_is_full_screen() { return js_is_full_screen() != 0; }

float page_screen_ui_scale() { return static_cast<float>(js_screen_ui_scale()); }

std::string page_threads_note() {
    switch (js_thread_limit()) {
        case 1:
            return "This browser isolates the page but gives it no SharedArrayBuffer, which threads need, so AttnLab computes on "
                   "one thread. WebKitGTK browsers (Epiphany, GNOME Web) do so as shipped: WebKit bug 317847.";
        case 2:
            return "The page is not cross-origin isolated (its site sends no COOP/COEP headers, and its service worker is not "
                   "in charge), so AttnLab computes on one thread.";
        case 3:
            return "In WebKit (Safari, and every browser on iPhone and iPad) a page's memory, grown by one thread while others "
                   "run, can fail with \"Out of bounds memory access\", so AttnLab computes on one thread here. Add ?threads=on "
                   "to the address to try threads all the same.";
        default: return {};
    }
}

CanvasSize canvas_size() {
    double css_w = 0, css_h = 0;
    emscripten_get_element_css_size("#canvas", &css_w, &css_h);
    const double dpr = emscripten_get_device_pixel_ratio();
    return {static_cast<int>(std::lround(css_w * dpr)), static_cast<int>(std::lround(css_h * dpr)), static_cast<float>(dpr)};
}

void show_fatal_error(const char* message) { js_fatal_error(message); }

void run_web_page(UiHost& host, std::function<void()> draw_ui, std::function<void(json::ObjectBuilder&)> status) {
    g_page.host = &host;
    g_page.draw_ui = std::move(draw_ui);
    g_page.status = std::move(status);
    host.set_wake_callback(wake);
    ImGuiIO& io = ImGui::GetIO();
    io.SetClipboardTextFn = [](void*, const char* text) {
        g_page.clipboard = text;
        js_write_clipboard(text);
    };
    io.GetClipboardTextFn = [](void*) { return g_page.clipboard.c_str(); };
    js_listen_for_paste();
    emscripten_set_wheel_callback("#canvas", nullptr, true, on_wheel);
    emscripten_set_main_loop(main_loop, 0, true);
    __builtin_unreachable();
}

}  // namespace attnlab

// --- called from web/index.html ------------------------------------------------------------

extern "C" {

// dlmalloc's (emscripten's malloc) records of the memory it took from the system, now and at most.
size_t malloc_footprint(void);
size_t malloc_max_footprint(void);

// The JSON behind window.attnlab.status().
EMSCRIPTEN_KEEPALIVE const char* attnlab_status_json() {
    using attnlab::g_page;
    attnlab::json::ObjectBuilder o;
    const long frames = g_page.host ? g_page.host->frames_drawn() : 0;
    o.add("ready", frames > 0);
    o.add("frames", static_cast<double>(frames));
    o.add("idle", g_page.paused);
    // The wasm memory (it only grows) and the bytes malloc has handed out, so that a test can see
    // whether loading a model frees the one before. The bytes in use only in the single-threaded
    // build (-1 in the threaded one): mallinfo() walks the whole heap, and a threaded page once hung
    // with its main thread at 100% in a status() poll while the workers ran a pass.
    // A model's bytes from 1 GB on come from the top of the heap, outside malloc (base/heap_block.h).
    const double top_all = static_cast<double>(attnlab::heap_block_top_bytes(false));
#ifdef __EMSCRIPTEN_PTHREADS__
    const double in_use = -1.0;
#else
    const double in_use =
        static_cast<double>(static_cast<unsigned>(mallinfo().uordblks)) + static_cast<double>(attnlab::heap_block_top_bytes(true));
#endif
    attnlab::json::ObjectBuilder heap;
    heap.add("memory_bytes", static_cast<double>(emscripten_get_heap_size()));
    heap.add("in_use_bytes", in_use);
    o.add_raw("heap", heap.str());
    // status().memory (issue 38): heap_bytes, the bytes in use now, and peak_heap_bytes, the most
    // the heap has held since the page opened: dlmalloc's high-water mark of what it took from
    // the wasm memory (emscripten's never gives any back), free fragments included, so what the
    // browser had to provide. In use now comes from mallinfo() in the single-threaded build; the
    // threaded build cannot walk its heap while workers allocate (above), and reports the heap's
    // current extent instead, which heap_bytes_counts names.
    attnlab::json::ObjectBuilder memory;
#ifdef __EMSCRIPTEN_PTHREADS__
    memory.add("heap_bytes", static_cast<double>(malloc_footprint()) + top_all).add("heap_bytes_counts", "footprint");
#else
    memory.add("heap_bytes", in_use).add("heap_bytes_counts", "in_use");
#endif
    memory.add("peak_heap_bytes", static_cast<double>(malloc_max_footprint()) + top_all);
    o.add_raw("memory", memory.str());
    if (g_page.host) {
        int w = 0, h = 0;
        glfwGetWindowSize(g_page.host->window(), &w, &h);
        o.add("width", w);  // backing pixels
        o.add("height", h);
        o.add("pixel_ratio", static_cast<double>(g_page.host->pixel_ratio()));
        // Touch and the on-screen keyboard: whether touches drive the mouse, whether a text field
        // wants typing, whether the page's DOM text element (the keyboard's) has the focus.
        attnlab::json::ObjectBuilder input;
        input.add("touch", g_page.host->touch_driving());
        input.add("gesture", g_page.host->touch_gesture());
        input.add("text_wanted", g_page.text_wanted);
        input.add("text_focused", js_text_input_focused() != 0);
        input.add("pinch", static_cast<double>(g_page.host->pinch().scale));
        // The pointer ImGui saw last, and whether a tooltip was shown (what a long press is for).
        const ImGuiIO& io = ImGui::GetIO();
        const float r = g_page.host->pixel_ratio();
        attnlab::json::ObjectBuilder mouse;
        const bool present = ImGui::IsMousePosValid(&io.MousePos);
        mouse.add("present", present).add("x", present ? io.MousePos.x / r : -1.0).add("y", present ? io.MousePos.y / r : -1.0);
        mouse.add("down", io.MouseDown[ImGuiMouseButton_Left]);
        input.add_raw("mouse", mouse.str());
        bool tooltip = false;
        for (const ImGuiWindow* win : ImGui::GetCurrentContext()->Windows)
            tooltip |= win->Active && (win->Flags & ImGuiWindowFlags_Tooltip);
        input.add("tooltip", tooltip);
        const attnlab::UiHost::Scrolled& scrolled = g_page.host->touch_scrolled();
        attnlab::json::ObjectBuilder swipe;
        swipe.add("window", scrolled.window).add("y", static_cast<double>(scrolled.y)).add("max_y", static_cast<double>(scrolled.max_y));
        input.add_raw("scrolled", swipe.str());
        o.add_raw("input", input.str());
        char* device = js_device_json();
        o.add_raw("device", device);
        std::free(device);
        if (g_page.status) g_page.status(o);
    }
    g_page.status_json = o.str();
    return g_page.status_json.c_str();
}

// The page calls this on resize and when devicePixelRatio changes (zoom, another screen).
EMSCRIPTEN_KEEPALIVE void attnlab_set_canvas_size(double css_width, double css_height, double pixel_ratio) {
    if (!attnlab::g_page.host || css_width <= 0 || css_height <= 0 || pixel_ratio <= 0) return;
    js_set_canvas_size(static_cast<int>(std::lround(css_width * pixel_ratio)), static_cast<int>(std::lround(css_height * pixel_ratio)));
    attnlab::g_page.host->set_pixel_ratio(static_cast<float>(pixel_ratio));
    attnlab::wake();
}

EMSCRIPTEN_KEEPALIVE void attnlab_on_paste(const char* text) {
    attnlab::g_page.clipboard = text;
    if (attnlab::g_page.host) attnlab::g_page.host->request_redraw();
    attnlab::wake();
}

void attnlab_request_redraw();

// web/touch_input.js: a finger went down (0), moved (1), lifted (2) or was taken by the browser
// (3); x, y in CSS pixels; ms on performance.now()'s clock.
EMSCRIPTEN_KEEPALIVE void attnlab_touch(int phase, int id, double x, double y, double ms) {
    using Phase = attnlab::TouchEvent::Phase;
    if (!attnlab::g_page.host || phase < 0 || phase > 3) return;
    const float r = attnlab::g_page.host->pixel_ratio();
    attnlab::g_page.host->touch({static_cast<Phase>(phase), id, static_cast<float>(x) * r, static_cast<float>(y) * r, ms});
}

// The on-screen keyboard's text (committed characters, a paste), its keys (GLFW key codes and
// GLFW_MOD_* bits), and its closing.
EMSCRIPTEN_KEEPALIVE void attnlab_text_chars(const char* utf8) {
    if (attnlab::g_page.host) attnlab::g_page.host->type_text(utf8);
}
EMSCRIPTEN_KEEPALIVE void attnlab_text_key(int glfw_key, int mods) {
    if (attnlab::g_page.host) attnlab::g_page.host->press_key(glfw_key, mods);
}
EMSCRIPTEN_KEEPALIVE void attnlab_text_blur() {
    if (attnlab::g_page.host) attnlab::g_page.host->end_text_edit();
}
// Whether a text field was active in the last frame: asked in a touch's end, where a focus()
// may still open the on-screen keyboard (iOS allows it only inside the user's gesture).
EMSCRIPTEN_KEEPALIVE int attnlab_text_wanted() { return ImGui::GetCurrentContext() && ImGui::GetIO().WantTextInput ? 1 : 0; }

// window.attnlab.state(): the view state as JSON ("" before the app is up).
EMSCRIPTEN_KEEPALIVE const char* attnlab_get_state() {
    using attnlab::g_page;
    g_page.state_json = g_page.share.get_state ? g_page.share.get_state() : std::string();
    return g_page.state_json.c_str();
}

// window.attnlab.setState() and the #s= links: "" when applied, else why not.
EMSCRIPTEN_KEEPALIVE const char* attnlab_set_state(const char* json, int from_link) {
    return attnlab::apply_from_page(attnlab::g_page.share.set_state, json, from_link, "the view state was refused",
                                    attnlab::g_page.state_error);
}

// window.attnlab.tour() (compact = 0) and tourLink() (compact = 1): "" when no tour is held.
EMSCRIPTEN_KEEPALIVE const char* attnlab_get_tour(int compact) {
    using attnlab::g_page;
    g_page.tour_json = g_page.tours.get_tour ? g_page.tours.get_tour(compact != 0) : std::string();
    return g_page.tour_json.c_str();
}

// window.attnlab.setTour() and the #t= links: "" when it plays, else why not.
EMSCRIPTEN_KEEPALIVE const char* attnlab_set_tour(const char* json, int from_link) {
    return attnlab::apply_from_page(attnlab::g_page.tours.set_tour, json, from_link, "the tour was refused", attnlab::g_page.tour_error);
}

// window.attnlab.tourStep(k): the step now shown, as JSON; "" when there is no such step.
EMSCRIPTEN_KEEPALIVE const char* attnlab_tour_step(int k) {
    using attnlab::g_page;
    g_page.tour_json = g_page.tours.show_step ? g_page.tours.show_step(k) : std::string();
    attnlab_request_redraw();
    return g_page.tour_json.c_str();
}

EMSCRIPTEN_KEEPALIVE void attnlab_start_tour() {
    if (attnlab::g_page.tours.start_builtin) attnlab::g_page.tours.start_builtin();
    attnlab_request_redraw();
}

EMSCRIPTEN_KEEPALIVE void attnlab_leave_tour() {
    if (attnlab::g_page.tours.leave) attnlab::g_page.tours.leave();
    attnlab_request_redraw();
}

EMSCRIPTEN_KEEPALIVE void attnlab_tour_link_ready(const char* link, int copied) {
    if (attnlab::g_page.tours.link_ready && *link) attnlab::g_page.tours.link_ready(link, copied != 0);
    attnlab_request_redraw();
}

EMSCRIPTEN_KEEPALIVE void attnlab_link_ready(const char* link, int copied) {
    if (attnlab::g_page.share.link_ready && *link) attnlab::g_page.share.link_ready(link, copied != 0);
    attnlab_request_redraw();
}

EMSCRIPTEN_KEEPALIVE void attnlab_link_error(const char* message) {
    if (attnlab::g_page.share.show_message) attnlab::g_page.share.show_message(message);
    attnlab_request_redraw();
}

// The address's link has been applied, refused, or there was none (web/share_state.js).
EMSCRIPTEN_KEEPALIVE void attnlab_link_restored() {
    if (attnlab::g_page.share.link_restored) attnlab::g_page.share.link_restored();
    attnlab_request_redraw();
}

EMSCRIPTEN_KEEPALIVE void attnlab_request_redraw() {
    if (!attnlab::g_page.host) return;
    attnlab::g_page.host->request_redraw();
    attnlab::wake();
}

}  // extern "C"
