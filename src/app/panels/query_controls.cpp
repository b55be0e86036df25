#include "app/panels/query_controls.h"

#include <imgui.h>

#include <algorithm>

#include "app/work/head_summaries.h"

namespace attnlab {

bool draw_needs_attention(const Session& s, const char* title, const char* about) {
    if (s.forward) return true;
    ImGui::TextWrapped("%s needs a model's attention: %s", title,
                       s.model ? "waiting for the forward pass over the text." : "load a model (the bar above) and type a text.");
    ImGui::TextWrapped("%s", about);
    return false;
}

void draw_top_n_slider(Session& s, WidgetRects& widgets, const char* widget) {
    const int max_N = std::max(1, static_cast<int>(s.forward->tokens.size()) - 1);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
    ImGui::SliderInt("top-N", &s.view.N, 1, max_N, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    remember_last_item(widgets, widget);
}

bool draw_why_or_lowered_n(const ChosenQueryView& v, int N_used, const Session& s) {
    ImGui::Separator();
    if (!v.ready) {
        ImGui::TextWrapped("%s", v.error.c_str());
        return false;
    }
    if (N_used != s.view.N)
        ImGui::TextColored(ImVec4(0.84f, 0.37f, 0.0f, 1.0f), "This query sees %d tokens: N lowered to %d.", v.key.query + 1, N_used);
    return true;
}

void draw_summaries_pending(Session& s, const char* id, const char* title, const char* live_note, ImVec2 size) {
    ImGui::BeginChild(id, size, true);
    ImGui::TextUnformatted(title);
    if (s.background.busy()) {
        ImGui::ProgressBar(static_cast<float>(s.background.progress()), ImVec2(ImGui::GetFontSize() * 16, 0));
        ImGui::TextWrapped("Computing in the background (%s).", live_note);
    } else if (s.summaries) {
        ImGui::TextWrapped("The all-heads summaries were cancelled.");
        if (ImGui::Button("Compute them again")) s.summaries.reset();
    } else {
        ImGui::TextWrapped("They start after the forward pass.");
    }
    ImGui::EndChild();
}

}  // namespace attnlab
