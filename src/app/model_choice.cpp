#include "app/model_choice.h"

#include <algorithm>
#include <cctype>

namespace attnlab {

const char* builtin_model_label(BuiltinModel m) {
    switch (m) {
        case BuiltinModel::None: return "";
        case BuiltinModel::Tiny: return "AttnLab tiny";
        case BuiltinModel::TinySsmax: return "AttnLab tiny-SSMax";
    }
    return "";
}

BuiltinModel other_twin(BuiltinModel m) {
    switch (m) {
        case BuiltinModel::None: return BuiltinModel::None;
        case BuiltinModel::Tiny: return BuiltinModel::TinySsmax;
        case BuiltinModel::TinySsmax: return BuiltinModel::Tiny;
    }
    return BuiltinModel::None;
}

std::string model_link_name(const std::string& source, BuiltinModel which) {
    if (which == BuiltinModel::TinySsmax) return kTwinLinkName;
    if (which == BuiltinModel::Tiny) return {};
    return source.find("://") != std::string::npos || is_hub_repo_id(source) ? source : std::string();
}

bool is_hub_repo_id(std::string_view a) {
    const auto word = [](std::string_view w) {
        const auto ok = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; };
        return !w.empty() && std::isalnum(static_cast<unsigned char>(w[0])) && std::all_of(w.begin(), w.end(), ok);
    };
    const size_t slash = a.find('/');
    if (slash == std::string_view::npos || !word(a.substr(0, slash)) || !word(a.substr(slash + 1))) return false;
    return !a.ends_with(".safetensors") && !a.ends_with(".json");
}

BuiltinModel linked_builtin(std::string_view model_url) {
    return model_url == kTwinLinkName ? BuiltinModel::TinySsmax : BuiltinModel::None;
}

bool view_follows_trained(const ViewState& view, const AttentionPlan& trained) {
    if (view.layer < 0 || view.head < 0 || view.layer >= trained.n_layer() || view.head >= trained.n_head()) return false;
    const HeadPlan& h = trained.at(view.layer, view.head);
    return view.normalizer == normalizer_spec(h.normalizer) && view.T == static_cast<double>(h.temperature);
}

void follow_trained(ViewState& view, const AttentionPlan& trained) {
    if (trained.n_layer() == 0 || trained.n_head() == 0) return;
    const HeadPlan& h = trained.at(std::clamp(view.layer, 0, trained.n_layer() - 1), std::clamp(view.head, 0, trained.n_head() - 1));
    view.normalizer = normalizer_spec(h.normalizer);
    view.T = h.temperature;
}

}  // namespace attnlab
