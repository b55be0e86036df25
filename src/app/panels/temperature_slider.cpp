#include "app/panels/temperature_slider.h"

#include <imgui.h>

namespace attnlab {

bool temperature_slider(const char* label, double& T, double lo, double hi) {
    float t = static_cast<float>(T);
    if (!ImGui::SliderFloat(label, &t, static_cast<float>(lo), static_cast<float>(hi), "%.3g",
                            ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp))
        return false;
    T = t;
    return true;
}

}  // namespace attnlab
