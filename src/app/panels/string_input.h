#pragma once
// ImGui text fields over a std::string, which grows as the reader types (ImGui 1.86 has no
// std::string overloads outside misc/cpp).
#include <string>

#include <imgui.h>

namespace attnlab {

bool input_string(const char* label, std::string& text, ImGuiInputTextFlags flags = 0);
bool input_string_multiline(const char* label, std::string& text, const ImVec2& size, ImGuiInputTextFlags flags = 0);

}  // namespace attnlab
