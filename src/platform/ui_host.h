#pragma once
// The seam shared by the web page and the desktop window: a GLFW window (a <canvas> under
// Emscripten) with an OpenGL 3 / WebGL2 context and Dear ImGui on it, fonts rasterised for
// the screen's pixel ratio, and frame pacing that draws only when something changed.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "app/file_export.h"
#include "platform/touch_gestures.h"

struct GLFWwindow;

namespace attnlab {

// A plot asked to be saved as a PNG during a frame; its pixels are read once the frame is rendered.
struct PlotGrab {
    std::string name;
    PixelRect rect;
};

// Reads each of `grabs` from the frame just rendered (its ImGui rectangle scaled to the
// framebuffer of fb_w x fb_h pixels) and hands `take` its opaque RGBA rows, top row first; one
// that lies off screen sets `message` instead. Empties `grabs`. Call before the buffers are swapped.
void read_plot_grabs(std::vector<PlotGrab>& grabs, int fb_w, int fb_h, std::string& message,
                     const std::function<void(const std::string& name, const std::vector<std::uint8_t>& rgba, int w, int h)>& take);

class UiHost {
public:
    UiHost() = default;
    UiHost(const UiHost&) = delete;
    UiHost& operator=(const UiHost&) = delete;
    ~UiHost();

    // Opens the window and ImGui. width/height are in window pixels (backing pixels on the
    // web). font_file: a TTF; when it cannot be read, ImGui's built-in font is used.
    bool open(const char* title, int width, int height, float pixel_ratio, const char* font_file, std::string& error);

    // Draws one frame when there is a reason to (input, resize, a pending redraw) and returns
    // whether it drew. draw_ui issues the ImGui calls.
    bool frame(const std::function<void()>& draw_ui);

    // Asks for `frames` more frames. ImGui needs a few frames to settle after a change.
    void request_redraw(int frames = 3);
    bool wants_redraw() const { return redraw_frames_ > 0; }

    // Called on every input event, after request_redraw (the web page resumes its loop).
    void set_wake_callback(std::function<void()> wake) { wake_ = std::move(wake); }

    // Called after a frame is rendered and before it is shown, with the framebuffer size;
    // the one moment its pixels can be read back (screenshots).
    void set_after_render_callback(std::function<void(int, int)> after) { after_render_ = std::move(after); }

    // The screen's pixel ratio changed (or is first known): fonts and sizes are rebuilt
    // for it before the next frame.
    void set_pixel_ratio(float pixel_ratio);

    // The reader's UI scale (AppState::ui_scale): fonts and sizes are rebuilt at pixel ratio x
    // scale before the next frame.
    void set_ui_scale(float scale);

    // Touches, which the page maps itself (web/touch_input.js): from the next frame on they drive
    // ImGui's mouse through TouchGestures, until a real mouse moves. Positions in window pixels.
    void touch(const TouchEvent& e);
    bool touch_driving() const { return touch_driving_; }
    const char* touch_gesture() const { return touch_.gesture(); }
    // A two-finger pinch (scale 0 when there is none).
    const TouchPinch& pinch() const { return pinch_; }
    // The window a swipe scrolled last, and its scroll after the last frame (pixels).
    struct Scrolled {
        std::string window;
        float y = 0, max_y = 0;
    };
    const Scrolled& touch_scrolled() const { return scrolled_; }

    // A mouse wheel or a trackpad turned, in notches as ImGui counts them: +1 a notch up (or
    // left). The desktop's GLFW gives notches; the page converts the DOM's wheel itself, because
    // the GLFW port of Emscripten 3.1.6 passes the DOM's raw delta (pixels, scrolling down being
    // positive), which ImGui reads as tens of notches upwards (web_page.cpp).
    void wheel(float notches_x, float notches_y);

    // The on-screen keyboard's text and keys (the page's DOM text element), queued as GLFW's are.
    // mods: GLFW_MOD_* bits; Ctrl and Shift are pressed around the key, as ImGui 1.86 reads them.
    void type_text(std::string_view utf8);
    void press_key(int glfw_key, int mods);
    // The keyboard was closed: the text field's edit ends, keeping what was typed (not Escape,
    // which would undo it). Nothing happens if no text field is active.
    void end_text_edit();

    float pixel_ratio() const { return pixel_ratio_; }
    long frames_drawn() const { return frames_drawn_; }
    GLFWwindow* window() const { return window_; }

private:
    void load_fonts_and_style();
    static UiHost* from(GLFWwindow* w);
    static void on_event(GLFWwindow* w);

    // ImGui 1.86 reads keys as levels once per frame and ignores keys on the frame a text field
    // is activated, so a burst of events between two frames (a quick Ctrl+V, a click followed by
    // typing, Ctrl held only around a click) would lose some. Keys, characters and mouse
    // buttons are queued and fed to ImGui a frame at a time, as later ImGui versions do.
    struct InputEvent {
        enum class Kind { Key, Char, MouseButton } kind;
        int code;    // key, character or button
        int action;  // GLFW_PRESS / GLFW_RELEASE / GLFW_REPEAT
        int scancode, mods;
        double x = 0.0, y = 0.0;  // a button's: where the pointer was when it changed
    };
    std::vector<InputEvent> input_queue_;
    void queue_input(const InputEvent& e);
    // Before a frame: as much of the queue as one frame can take. A button fed sets pointer_x_/_y_
    // to where it changed: ImGui 1.86's backend polls the pointer at the frame, so a press and the
    // first move of a drag in one frame would put the press (MouseClickedPos) where the move ended,
    // and a pan would lose that move (the map suite's 6-cell drag panned 5 in 2 of 11 runs).
    void feed_input();
    bool pointer_fed_ = false;
    float pointer_x_ = 0.0f, pointer_y_ = 0.0f;
    void feed_touch();  // after the backend's NewFrame: the touches' mouse replaces GLFW's
    TouchGestures touch_;
    bool touch_driving_ = false;
    TouchPinch pinch_;
    unsigned scroll_window_ = 0;  // the ImGuiID a swipe scrolls
    Scrolled scrolled_;
    bool end_text_edit_ = false;
    GLFWwindow* window_ = nullptr;
    std::string font_file_;
    float pixel_ratio_ = 1.0f;
    float ui_scale_ = 1.0f;
    float fonts_ratio_ = 0.0f;  // the ratio (pixel ratio x UI scale) the font atlas was built for
    int redraw_frames_ = 3;
    long frames_drawn_ = 0;
    bool imgui_ready_ = false;
    std::function<void()> wake_;
    std::function<void(int, int)> after_render_;
};

}  // namespace attnlab
