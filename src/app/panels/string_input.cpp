#include "app/panels/string_input.h"

namespace attnlab {

namespace {
// ImGui asks for more room as the text grows.
int resize_string(ImGuiInputTextCallbackData* data) {
    if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
        auto* text = static_cast<std::string*>(data->UserData);
        text->resize(static_cast<size_t>(data->BufTextLen));
        data->Buf = text->data();
    }
    return 0;
}
}  // namespace

bool input_string(const char* label, std::string& text, ImGuiInputTextFlags flags) {
    return ImGui::InputText(label, text.data(), text.capacity() + 1, flags | ImGuiInputTextFlags_CallbackResize, resize_string, &text);
}

bool input_string_multiline(const char* label, std::string& text, const ImVec2& size, ImGuiInputTextFlags flags) {
    return ImGui::InputTextMultiline(label, text.data(), text.capacity() + 1, size, flags | ImGuiInputTextFlags_CallbackResize,
                                     resize_string, &text);
}

}  // namespace attnlab
