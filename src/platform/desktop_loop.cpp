#include "platform/desktop_loop.h"

#include <cstdio>
#include <vector>

#include <GLFW/glfw3.h>

namespace attnlab {

void set_desktop_full_screen(GLFWwindow* window, bool on) {
    static int x = 0, y = 0, w = 1280, h = 800;  // where the window was, to go back to
    if (on == desktop_full_screen(window)) return;
    if (on) {
        GLFWmonitor* monitor = glfwGetPrimaryMonitor();
        const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
        if (!mode) return;
        glfwGetWindowPos(window, &x, &y);
        glfwGetWindowSize(window, &w, &h);
        glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
    } else {
        glfwSetWindowMonitor(window, nullptr, x, y, w, h, GLFW_DONT_CARE);
    }
}

bool desktop_full_screen(GLFWwindow* window) { return glfwGetWindowMonitor(window) != nullptr; }

float desktop_pixel_ratio(GLFWwindow* window) {
    float sx = 1.0f, sy = 1.0f;
    glfwGetWindowContentScale(window, &sx, &sy);
    int w = 0, h = 0, fw = 0, fh = 0;
    glfwGetWindowSize(window, &w, &h);
    glfwGetFramebufferSize(window, &fw, &fh);
    const float fb_scale = (w > 0 && fw > 0) ? static_cast<float>(fw) / static_cast<float>(w) : 1.0f;
    const float ratio = sx / fb_scale;
    return ratio > 0.25f ? ratio : 1.0f;
}

namespace {

bool write_ppm(const std::string& path, int w, int h, const std::vector<unsigned char>& rgb) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    std::fprintf(f, "P6\n%d %d\n255\n", w, h);
    // OpenGL's rows run bottom-up; PPM's top-down.
    bool ok = true;
    for (int y = h - 1; y >= 0 && ok; --y)
        ok = std::fwrite(rgb.data() + static_cast<size_t>(y) * w * 3, 1, static_cast<size_t>(w) * 3, f) == static_cast<size_t>(w) * 3;
    return std::fclose(f) == 0 && ok;
}

}  // namespace

int run_desktop_loop(UiHost& host, const std::function<void()>& draw_ui, const DesktopRun& run) {
    std::vector<unsigned char> pixels;
    int shot_w = 0, shot_h = 0;
    if (run.frames > 0 && !run.screenshot.empty()) {
        host.set_after_render_callback([&](int w, int h) {
            pixels.resize(static_cast<size_t>(w) * h * 3);
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
            shot_w = w;
            shot_h = h;
        });
    }
    while (!glfwWindowShouldClose(host.window())) {
        if (run.frames > 0) host.request_redraw(1);
        // Sleep until something happens; poll only while frames are owed.
        if (host.wants_redraw()) glfwPollEvents();
        else glfwWaitEvents();
        host.frame(draw_ui);
        if (run.frames > 0 && host.frames_drawn() >= run.frames) break;
    }
    if (!run.screenshot.empty()) {
        if (shot_w == 0 || !write_ppm(run.screenshot, shot_w, shot_h, pixels)) {
            std::fprintf(stderr, "attnlab-desktop: could not write the screenshot '%s'\n", run.screenshot.c_str());
            return 1;
        }
        std::printf("attnlab-desktop: %dx%d screenshot written to %s\n", shot_w, shot_h, run.screenshot.c_str());
    }
    return 0;
}

}  // namespace attnlab
