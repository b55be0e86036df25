#include "app/app.h"

#include <imgui.h>

namespace attnlab {

static void draw_about(bool* open) {
    if (!*open) return;
    ImGui::OpenPopup("About AttnLab");
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34, 0), ImGuiCond_Appearing);
    if (ImGui::BeginPopupModal("About AttnLab", open)) {
        ImGui::TextWrapped(
            "AttnLab shows, on real and synthetic attention, what softmax attention can and cannot select. It "
            "follows T. Mudarisov, M. Burtsev, T. Petrova and R. State, \"Limitations of Normalization in "
            "Attention Mechanism\" (NeurIPS 2025, arXiv 2508.17821).");
        ImGui::Spacing();
        ImGui::TextWrapped(
            "Where the paper is loose, AttnLab computes the exact quantity and draws the paper's bound next to "
            "the tight one, each labelled. Example: the paper bounds the softmax Jacobian by min{1/(4T), sqrt 2}; "
            "two tied leading logits reach 1/(2T), which is the tight bound.");
        ImGui::Spacing();
        ImGui::TextDisabled("Dear ImGui %s", ImGui::GetVersion());
        if (ImGui::Button("Close")) *open = false;
        ImGui::EndPopup();
    }
}

void draw_app(AppState& app) {
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_MenuBar |
                                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings;
    ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
    ImGui::Begin("AttnLab", nullptr, flags);
    ImGui::PopStyleVar();

    if (ImGui::BeginMenuBar()) {
        ImGui::TextUnformatted("AttnLab");
        ImGui::TextDisabled("what softmax attention can and cannot select");
        if (ImGui::BeginMenu("Help")) {
            if (ImGui::MenuItem("About AttnLab")) app.show_about = true;
            ImGui::EndMenu();
        }
        ImGui::EndMenuBar();
    }

    if (ImGui::BeginTabBar("##panels")) {
        if (ImGui::BeginTabItem("Softmax playground")) {
            draw_softmax_playground(app.playground, app.widgets);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::End();
    draw_about(&app.show_about);
}

void add_app_status(const AppState& app, float pixel_ratio, json::ObjectBuilder& status) {
    status.add_raw("playground", playground_status_json(app.playground));
    status.add_raw("widgets", widget_rects_json(app.widgets, pixel_ratio));
}

}  // namespace attnlab
