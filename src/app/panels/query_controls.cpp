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

bool begin_top_n_update(const Session& s, TopNQueryView& v, const char* query_zero, QuerySlice& slice) {
    if (!chosen_query_place(s, slice, v)) return false;
    const QueryKey key = query_key(s, slice, kKeyEps);
    if (same_query(v.key, key)) return false;
    v.key = key;
    v.ready = false;
    const int L = slice.query + 1;
    if (L < 2) {
        v.error = query_zero;
        return false;
    }
    if (!fill_query_slice(s, slice, v.error)) return false;
    v.N_used = std::clamp(s.view.N, 1, L - 1);
    return true;
}

void begin_top_n_controls(const Panes& panes, Session& s, WidgetRects& widgets, const TopNQueryView& v, const char* id, const char* theorem,
                          const char* n_widget) {
    begin_pane(panes, id, ImGui::GetFontSize() * kControlsEm, true);
    text_wrapped("%s Layer %d, head %d, query %d (%s, T = %.3g).", theorem, v.key.layer, v.key.head, v.key.query, s.view.normalizer.c_str(),
                 s.view.T);
    // These panels read the model as it runs: say so when it is not the model as trained.
    if (s.forward && s.model && s.forward->plan != s.model->model->trained_plan())
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(IM_COL32(204, 121, 167, 255)),
                           "The model is changed (%s): see Model changes on the Attention map.", s.view.plan.c_str());
    draw_top_n_slider(s, widgets, n_widget);
}

void end_top_n_controls(const Panes& panes, const char* note) {
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", note);
    ImGui::PopStyleColor();
    end_pane(panes);
    beside(panes);
}

bool draw_why_or_lowered_n(const TopNQueryView& v, const Session& s) {
    ImGui::Separator();
    if (!v.ready) {
        ImGui::TextWrapped("%s", v.error.c_str());
        return false;
    }
    if (v.N_used != s.view.N)
        ImGui::TextColored(ImVec4(0.84f, 0.37f, 0.0f, 1.0f), "This query sees %d tokens: N lowered to %d.", v.key.query + 1, v.N_used);
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
