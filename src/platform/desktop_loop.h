#pragma once
// The desktop seam: an event loop that sleeps until input arrives, and an unattended mode
// that draws a fixed number of frames and saves the last one (for tests and screenshots).
#include <functional>
#include <string>

#include "platform/ui_host.h"

namespace attnlab {

struct DesktopRun {
    int frames = 0;          // > 0: draw this many frames, then exit
    std::string screenshot;  // with frames: write the last frame here as a binary PPM
};

// The pixel ratio for fonts on this screen: the monitor's content scale, divided by the
// framebuffer scale that ImGui already applies (1 on X11, 2 on a Retina Mac).
float desktop_pixel_ratio(GLFWwindow* window);

// The window on the whole primary monitor, or back where it was.
void set_desktop_full_screen(GLFWwindow* window, bool on);
bool desktop_full_screen(GLFWwindow* window);

// Returns the process exit code.
int run_desktop_loop(UiHost& host, const std::function<void()>& draw_ui, const DesktopRun& run);

}  // namespace attnlab
