#include "platform/ui_host.h"

#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>  // what the pressed item is (touch), and ending a text edit

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <GLFW/glfw3.h>
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

#include "base/utf8.h"

namespace attnlab {

namespace {

constexpr float kFontPixels = 15.0f;  // at pixel ratio 1; the plot kit scales from this

// Latin, Greek and the mathematical symbols the panels print (alpha, sqrt, <=, ||, ...).
const ImWchar kGlyphRanges[] = {
    0x0020, 0x00FF,  // Basic Latin + Latin-1
    0x0370, 0x03FF,  // Greek
    0x2000, 0x206F,  // General punctuation
    0x2070, 0x209F,  // Superscripts and subscripts
    0x2190, 0x21FF,  // Arrows
    0x2200, 0x22FF,  // Mathematical operators
    0,
};

bool file_readable(const std::string& path) { return !path.empty() && std::ifstream(path, std::ios::binary).good(); }

// Milliseconds on the clock the page stamps touches with (performance.now() on the web).
double now_ms() {
#ifdef __EMSCRIPTEN__
    return emscripten_get_now();
#else
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

// What the item a finger pressed does with a drag, and whether the window under the finger (or
// one around it) can scroll; ImGui's state after the frame that saw the press. `scroll_window`:
// the innermost of those windows that can scroll (0: none), which a swipe then scrolls.
TouchItem pressed_item(ImGuiID& scroll_window) {
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    TouchItem it;
    // Sliders, drags and text fields claim the arrow keys while active (ImGui 1.86's
    // ActiveIdUsingNavDirMask); buttons, selectables and plots do not. A press on a window's empty
    // space claims them too, as the start of moving the window (even one that cannot move): not a drag.
    const bool moving_window = g.ActiveIdWindow && g.ActiveId == g.ActiveIdWindow->MoveId;
    it.takes_drag = g.ActiveId != 0 && !moving_window && g.ActiveIdUsingNavDirMask != 0;
    scroll_window = 0;
    for (const ImGuiWindow* w = g.HoveredWindow; w; w = w->ParentWindow) {
        it.can_scroll_x |= w->ScrollMax.x > 0.0f;
        it.can_scroll_y |= w->ScrollMax.y > 0.0f;
        if (!scroll_window && (w->ScrollMax.x > 0.0f || w->ScrollMax.y > 0.0f)) scroll_window = w->ID;
        if (!(w->Flags & ImGuiWindowFlags_ChildWindow)) break;
    }
    return it;
}

}  // namespace

UiHost::~UiHost() {
    if (imgui_ready_) {
        ImGui_ImplOpenGL3_Shutdown();
        ImGui_ImplGlfw_Shutdown();
        ImGui::DestroyContext();
    }
    if (window_) glfwDestroyWindow(window_);
    if (window_) glfwTerminate();
}

UiHost* UiHost::from(GLFWwindow* w) { return static_cast<UiHost*>(glfwGetWindowUserPointer(w)); }

// Every input or window event means the picture may change.
void UiHost::on_event(GLFWwindow* w) {
    UiHost* host = from(w);
    if (!host) return;
    host->request_redraw();
    if (host->wake_) host->wake_();
}

void UiHost::queue_input(const InputEvent& e) {
    input_queue_.push_back(e);
    request_redraw();
    if (wake_) wake_();
}

void UiHost::feed_input() {
    using Kind = InputEvent::Kind;
    std::vector<int> keys_changed, buttons_changed;
    bool keyboard_used = false, button_pressed = false;
    size_t taken = 0;
    for (; taken < input_queue_.size(); ++taken) {
        const InputEvent& e = input_queue_[taken];
        const auto seen = [](const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); };
        if (e.kind == Kind::MouseButton) {
            // A click gets a frame of its own, ahead of any typing it makes possible.
            if (keyboard_used || seen(buttons_changed, e.code)) break;
            ImGui_ImplGlfw_MouseButtonCallback(window_, e.code, e.action, e.mods);
            buttons_changed.push_back(e.code);
            pointer_fed_ = true;
            pointer_x_ = static_cast<float>(e.x);
            pointer_y_ = static_cast<float>(e.y);
            button_pressed |= e.action == GLFW_PRESS;
        } else {
            if (button_pressed) break;  // the field a click activates takes keys from the next frame
            if (e.kind == Kind::Key) {
                if (seen(keys_changed, e.code)) break;  // one change per key per frame
                ImGui_ImplGlfw_KeyCallback(window_, e.code, e.scancode, e.action, e.mods);
                keys_changed.push_back(e.code);
            } else {
                ImGui_ImplGlfw_CharCallback(window_, static_cast<unsigned int>(e.code));
            }
            keyboard_used = true;
        }
    }
    input_queue_.erase(input_queue_.begin(), input_queue_.begin() + static_cast<std::ptrdiff_t>(taken));
    if (!input_queue_.empty()) request_redraw(2);  // the rest goes into the next frames
}

void UiHost::touch(const TouchEvent& e) {
    touch_.add(e);
    touch_driving_ = true;
    request_redraw();
    if (wake_) wake_();
}

void UiHost::feed_touch() {
    if (!touch_driving_) return;
    touch_.set_slop(10.0f * pixel_ratio_);  // 10 CSS pixels
    const TouchFrame f = touch_.next_frame(now_ms(), [this] { return pressed_item(scroll_window_); });
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = f.present ? ImVec2(f.x, f.y) : ImVec2(-FLT_MAX, -FLT_MAX);
    io.MouseDown[ImGuiMouseButton_Left] = f.down;
    // A swipe moves the pane's content with the finger, pixel for pixel.
    if (ImGuiWindow* w = scroll_window_ ? ImGui::FindWindowByID(scroll_window_) : nullptr) {
        if (f.scroll_x != 0.0f) ImGui::SetScrollX(w, std::clamp(w->Scroll.x - f.scroll_x, 0.0f, w->ScrollMax.x));
        if (f.scroll_y != 0.0f) ImGui::SetScrollY(w, std::clamp(w->Scroll.y - f.scroll_y, 0.0f, w->ScrollMax.y));
    }
    pinch_ = f.pinch;
    if (touch_.pending()) request_redraw(2);
}

void UiHost::wheel(float notches_x, float notches_y) {
    ImGuiIO& io = ImGui::GetIO();
    io.MouseWheelH += notches_x;
    io.MouseWheel += notches_y;
    request_redraw();
    if (wake_) wake_();
}

void UiHost::type_text(std::string_view utf8) {
    for (std::size_t i = 0; i < utf8.size();) {
        char32_t cp = 0xFFFD;
        const int n = utf8_next(utf8, i, cp);
        i += static_cast<std::size_t>(n > 0 ? n : -n);
        if (n < 0) cp = 0xFFFD;
        queue_input({InputEvent::Kind::Char, static_cast<int>(cp), 0, 0, 0});
    }
}

void UiHost::press_key(int glfw_key, int mods) {
    const bool ctrl = (mods & GLFW_MOD_CONTROL) != 0, shift = (mods & GLFW_MOD_SHIFT) != 0;
    if (ctrl) queue_input({InputEvent::Kind::Key, GLFW_KEY_LEFT_CONTROL, GLFW_PRESS, 0, mods});
    if (shift) queue_input({InputEvent::Kind::Key, GLFW_KEY_LEFT_SHIFT, GLFW_PRESS, 0, mods});
    queue_input({InputEvent::Kind::Key, glfw_key, GLFW_PRESS, 0, mods});
    queue_input({InputEvent::Kind::Key, glfw_key, GLFW_RELEASE, 0, mods});
    if (shift) queue_input({InputEvent::Kind::Key, GLFW_KEY_LEFT_SHIFT, GLFW_RELEASE, 0, 0});
    if (ctrl) queue_input({InputEvent::Kind::Key, GLFW_KEY_LEFT_CONTROL, GLFW_RELEASE, 0, 0});
}

void UiHost::end_text_edit() {
    end_text_edit_ = true;
    request_redraw();
    if (wake_) wake_();
}

void UiHost::request_redraw(int frames) {
    if (frames > redraw_frames_) redraw_frames_ = frames;
}

bool UiHost::open(const char* title, int width, int height, float pixel_ratio, const char* font_file, std::string& error) {
    glfwSetErrorCallback([](int code, const char* what) { std::fprintf(stderr, "GLFW error %d: %s\n", code, what); });
    if (!glfwInit()) {
        error = "could not initialise GLFW (is there a display?)";
        return false;
    }
#ifdef __EMSCRIPTEN__
    const char* glsl_version = "#version 300 es";
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
#else
    const char* glsl_version = "#version 130";
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
#endif
    window_ = glfwCreateWindow(width, height, title, nullptr, nullptr);
    if (!window_) {
        error = "could not create an OpenGL 3 window (WebGL2 in the browser)";
        glfwTerminate();
        return false;
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(1);
    glfwSetWindowUserPointer(window_, this);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // layout comes from the code (and later from the shared link)
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    // Our callbacks feed ImGui's backend themselves: every event also asks for a redraw, and
    // keys, characters and buttons go through a queue (see feed_input).
    ImGui_ImplGlfw_InitForOpenGL(window_, false);
    glfwSetCursorPosCallback(window_, [](GLFWwindow* w, double, double) {
        if (UiHost* host = from(w)) host->touch_driving_ = false;  // a real mouse moved: it drives again
        on_event(w);
    });
    glfwSetMouseButtonCallback(window_, [](GLFWwindow* w, int button, int action, int mods) {
        double x = 0.0, y = 0.0;
        glfwGetCursorPos(w, &x, &y);  // the pointer as of this event, not of the next frame
        if (UiHost* host = from(w)) host->queue_input({InputEvent::Kind::MouseButton, button, action, 0, mods, x, y});
    });
    glfwSetKeyCallback(window_, [](GLFWwindow* w, int key, int scancode, int action, int mods) {
        if (UiHost* host = from(w)) host->queue_input({InputEvent::Kind::Key, key, action, scancode, mods});
    });
    glfwSetCharCallback(window_, [](GLFWwindow* w, unsigned int c) {
        if (UiHost* host = from(w)) host->queue_input({InputEvent::Kind::Char, static_cast<int>(c), 0, 0, 0});
    });
#ifndef __EMSCRIPTEN__  // the page reads the wheel itself (see wheel())
    glfwSetScrollCallback(window_, [](GLFWwindow* w, double dx, double dy) {
        if (UiHost* host = from(w)) host->wheel(static_cast<float>(dx), static_cast<float>(dy));
    });
#endif
    glfwSetCursorEnterCallback(window_, [](GLFWwindow* w, int entered) {
        ImGui_ImplGlfw_CursorEnterCallback(w, entered);
        on_event(w);
    });
    glfwSetWindowFocusCallback(window_, [](GLFWwindow* w, int focused) {
        ImGui_ImplGlfw_WindowFocusCallback(w, focused);
        on_event(w);
    });
    glfwSetWindowSizeCallback(window_, [](GLFWwindow* w, int, int) { on_event(w); });
    glfwSetWindowRefreshCallback(window_, [](GLFWwindow* w) { on_event(w); });
    ImGui_ImplOpenGL3_Init(glsl_version);
    imgui_ready_ = true;

    font_file_ = font_file ? font_file : "";
    if (!file_readable(font_file_))
        std::fprintf(stderr, "attnlab: UI font '%s' not readable; using ImGui's built-in font\n", font_file_.c_str());
    pixel_ratio_ = pixel_ratio > 0.0f ? pixel_ratio : 1.0f;
    return true;
}

void UiHost::set_pixel_ratio(float pixel_ratio) {
    if (pixel_ratio > 0.0f) pixel_ratio_ = pixel_ratio;
    request_redraw();
}

void UiHost::set_ui_scale(float scale) {
    if (!(scale > 0.0f) || scale == ui_scale_) return;
    ui_scale_ = scale;
    request_redraw();
}

void UiHost::load_fonts_and_style() {
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    ImFontConfig cfg;
    cfg.OversampleH = 2;
    cfg.PixelSnapH = false;
    const float ratio = pixel_ratio_ * ui_scale_;  // the UI scale enlarges everything, crisply
    const float px = std::round(kFontPixels * ratio);
    ImFont* font = nullptr;
    if (file_readable(font_file_)) font = io.Fonts->AddFontFromFileTTF(font_file_.c_str(), px, &cfg, kGlyphRanges);
    if (!font) {
        ImFontConfig fallback;
        fallback.SizePixels = px;
        io.Fonts->AddFontDefault(&fallback);
    }
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();

    ImGuiStyle style;
    ImGui::StyleColorsLight(&style);
    style.WindowRounding = 4.0f;
    style.FrameRounding = 3.0f;
    style.GrabRounding = 3.0f;
    style.ChildRounding = 4.0f;
    style.FramePadding = ImVec2(6.0f, 4.0f);
    style.ItemSpacing = ImVec2(8.0f, 6.0f);
    style.ScaleAllSizes(ratio);
    ImGui::GetStyle() = style;
    fonts_ratio_ = ratio;
}

bool UiHost::frame(const std::function<void()>& draw_ui) {
    if (redraw_frames_ <= 0) return false;
    if (fonts_ratio_ != pixel_ratio_ * ui_scale_) load_fonts_and_style();

    // This frame pays for itself before drawing, so that a request made while drawing
    // (long work asking for the next frame) is owed to a later frame.
    --redraw_frames_;
    pointer_fed_ = false;
    feed_input();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (pointer_fed_ && ImGui::GetIO().MousePos.x > -FLT_MAX) {
        ImGuiIO& io = ImGui::GetIO();
        // The move since the button changed is the next frame's.
        if (io.MousePos.x != pointer_x_ || io.MousePos.y != pointer_y_) request_redraw(2);
        io.MousePos = ImVec2(pointer_x_, pointer_y_);
    }
    feed_touch();
    ImGui::NewFrame();
    if (end_text_edit_) {
        // Inside the frame, so that the field sees itself deactivated (and its edit is kept).
        end_text_edit_ = false;
        const ImGuiContext& g = *ImGui::GetCurrentContext();
        if (g.ActiveId != 0 && g.ActiveId == g.InputTextState.ID) ImGui::ClearActiveID();
    }
    draw_ui();
    ImGui::Render();
    if (const ImGuiWindow* w = scroll_window_ ? ImGui::FindWindowByID(scroll_window_) : nullptr)
        scrolled_ = {w->Name, w->Scroll.y, w->ScrollMax.y};

    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window_, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.94f, 0.94f, 0.94f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (after_render_) after_render_(fb_w, fb_h);
    glfwSwapBuffers(window_);

    ++frames_drawn_;

    // While the user holds a widget (dragging a slider), keep drawing: the mouse may be still
    // while the value is still being applied. A focused text box is active too, but it
    // changes only on key events, which wake the loop themselves.
    const bool holding = ImGui::IsAnyItemActive() && !ImGui::GetIO().WantTextInput;
    if (holding || ImGui::IsMouseDown(ImGuiMouseButton_Left)) request_redraw(1);
    return true;
}

namespace {

// A rectangle of the framebuffer (its pixels, origin top-left) as opaque RGBA rows, top row first.
// False when the rectangle lies outside the framebuffer.
bool read_framebuffer_rgba(float x, float y, float w, float h, int fb_w, int fb_h, std::vector<std::uint8_t>& rgba, int& out_w,
                           int& out_h) {
    const int x0 = std::clamp(static_cast<int>(std::floor(x)), 0, fb_w);
    const int y0 = std::clamp(static_cast<int>(std::floor(y)), 0, fb_h);
    const int x1 = std::clamp(static_cast<int>(std::ceil(x + w)), 0, fb_w);
    const int y1 = std::clamp(static_cast<int>(std::ceil(y + h)), 0, fb_h);
    out_w = x1 - x0;
    out_h = y1 - y0;
    if (out_w <= 0 || out_h <= 0) return false;
    // GL rows run bottom-up from the framebuffer's lower edge; pictures are stored top-down.
    std::vector<std::uint8_t> bottom_up(static_cast<size_t>(out_w) * out_h * 4);
    rgba.resize(bottom_up.size());
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(x0, fb_h - y1, out_w, out_h, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
    const size_t row = static_cast<size_t>(out_w) * 4;
    for (int r = 0; r < out_h; ++r)
        std::copy_n(bottom_up.data() + row * static_cast<size_t>(out_h - 1 - r), row, rgba.data() + row * static_cast<size_t>(r));
    for (size_t i = 3; i < rgba.size(); i += 4) rgba[i] = 255;  // the window is opaque
    return true;
}

}  // namespace

void read_plot_grabs(std::vector<PlotGrab>& grabs, int fb_w, int fb_h, std::string& message,
                     const std::function<void(const std::string& name, const std::vector<std::uint8_t>& rgba, int w, int h)>& take) {
    if (fb_w <= 0 || fb_h <= 0) return;  // minimised: keep them for a frame that is drawn
    // ImGui's coordinates are window pixels; the framebuffer may be larger (Retina). On the web
    // the scale is 1: ImGui works in backing pixels there.
    const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
    for (const PlotGrab& g : grabs) {
        std::vector<std::uint8_t> rgba;
        int w = 0, h = 0;
        if (read_framebuffer_rgba(g.rect.x * scale.x, g.rect.y * scale.y, g.rect.w * scale.x, g.rect.h * scale.y, fb_w, fb_h, rgba, w, h))
            take(g.name, rgba, w, h);
        else message = g.name + ": the plot is not on screen, nothing to save.";
    }
    grabs.clear();
}

}  // namespace attnlab
