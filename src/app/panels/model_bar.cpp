#include "app/panels/model_bar.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "app/panels/pane_layout.h"
#include "app/plot/plot.h"
#include "base/json.h"

namespace attnlab {

namespace {

const char* phase_name(FetchStatus::Phase p) {
    switch (p) {
        case FetchStatus::Phase::Idle: return "idle";
        case FetchStatus::Phase::Probing: return "probing";
        case FetchStatus::Phase::Confirm: return "confirm";
        case FetchStatus::Phase::Downloading: return "downloading";
        case FetchStatus::Phase::Ready: return "ready";
        case FetchStatus::Phase::Failed: return "failed";
    }
    return "idle";
}

// "548", "12.3", "0.4": megabytes of 2^20 bytes, as browsers and file managers count them.
std::string mb_number(double bytes) {
    const double mb = bytes / (1024.0 * 1024.0);
    char buf[32];
    std::snprintf(buf, sizeof buf, mb >= 100 ? "%.0f" : "%.1f", mb);
    return buf;
}

std::string megabytes(double bytes) { return mb_number(bytes) + " MB"; }

// The last path segment of a URL or path, without ?query or #fragment.
std::string file_name(const std::string& url) {
    if (is_hub_repo_id(url)) return url;  // a Hugging Face model: its whole name
    if (url.ends_with("/")) return url;   // a folder: its address
    std::string s = url.substr(0, url.find_first_of("?#"));
    const size_t slash = s.find_last_of("/\\");
    return slash == std::string::npos ? s : s.substr(slash + 1);
}

// The source as the bar shows it: without "https://", the middle elided when long.
std::string short_source(const std::string& source) {
    std::string s = source;
    const size_t scheme = s.find("://");
    if (scheme != std::string::npos) s = s.substr(scheme + 3);
    constexpr size_t kMax = 64;
    if (s.size() <= kMax) return s;
    const size_t slash = s.find('/');
    const std::string head = s.substr(0, std::min<size_t>(slash == std::string::npos ? 20 : slash, 24));
    return head + "/…" + s.substr(s.size() - (kMax - head.size() - 2));
}

// GPT-2 small itself: its shape, and no AttnLab name (AttnLab's own models carry one).
bool is_gpt2_small(const LoadedModel& m) {
    const DecoderShape& c = m.shape;
    return m.name.empty() && c.arch == "gpt2" && c.n_layer == 12 && c.n_head == 12 && c.hidden == 768 && c.max_positions == 1024;
}

// "Load GPT-2 small (523 MB)": one click, no second question (the button names the size).
// On the web only: the desktop build loads files, not addresses.
bool gpt2_button_shown(const Session& s, const ModelSource* source) {
    return source && source->can_pick_file() && !(s.model && is_gpt2_small(*s.model));
}
std::string gpt2_button_label() { return "Load GPT-2 small (" + megabytes(kDefaultModelBytes) + ")"; }

// Placed by the caller (draw_model_bar's first line).
void draw_gpt2_button(ModelLoading& loading, PanelContext& ctx, ModelSource* source) {
    Session& s = ctx.session;
    if (!gpt2_button_shown(s, source)) return;
    const FetchStatus st = source->status();
    const bool on_its_way =
        st.url == kDefaultModelUrl &&
        (st.phase == FetchStatus::Phase::Probing || st.phase == FetchStatus::Phase::Downloading || st.phase == FetchStatus::Phase::Ready);
    const std::string label = gpt2_button_label();
    ImGui::BeginDisabled(on_its_way);
    if (ImGui::Button(label.c_str())) start_model_download(loading, s, *source, kDefaultModelUrl);
    ImGui::EndDisabled();
    remember_last_item(ctx.widgets, "model.load_gpt2");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", on_its_way ? "GPT-2 small is on its way (progress below)."
                                           : "OpenAI's GPT-2 small (124 M parameters) from huggingface.co; kept in this "
                                             "browser's cache afterwards. The model the paper measures.");
}

// The model menu: the two models shipped with AttnLab. AttnLab tiny-SSMax is fetched from the
// site (read from disk on the desktop) on first use, with the progress row below.
float builtin_menu_width() {
    return ImGui::CalcTextSize("AttnLab tiny-SSMax").x + ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().FramePadding.x;
}

// Placed by the caller (draw_model_bar's first line).
void draw_builtin_menu(ModelBar& bar, PanelContext& ctx, const ModelSource& source) {
    const Session& s = ctx.session;
    const BuiltinModel loaded = s.model ? s.model->which : BuiltinModel::None;
    const FetchStatus st = source.status();
    const bool busy = st.phase == FetchStatus::Phase::Probing || st.phase == FetchStatus::Phase::Downloading;
    // The menu names what it holds that is loaded: a built-in model, or one of its Hugging Face models (its name after ORG/).
    const HubModel* hub = nullptr;
    for (const HubModel& m : kHubModels)
        if (s.model && s.model->source == m.id) hub = &m;
    const char* preview = loaded != BuiltinModel::None ? builtin_model_label(loaded)
                          : hub                        ? std::strchr(hub->id, '/') + 1
                                                       : "Built-in models";
    ImGui::SetNextItemWidth(builtin_menu_width());
    const bool open = ImGui::BeginCombo("##builtin_model", preview);
    remember_last_item(ctx.widgets, "model.builtin");
    if (ImGui::IsItemHovered() && !open)
        ImGui::SetTooltip(
            "The models shipped with AttnLab: AttnLab tiny, and its twin trained with SSMax attention (%s); "
            "and models on Hugging Face, by name",
            "same architecture, data, seed and steps");
    if (!open) return;
    for (const BuiltinModel m : {BuiltinModel::Tiny, BuiltinModel::TinySsmax}) {
        ImGui::BeginDisabled(busy);
        if (ImGui::Selectable(builtin_model_label(m), m == loaded) && m != loaded) bar.chosen = m;
        ImGui::EndDisabled();
        remember_last_item(ctx.widgets, m == BuiltinModel::Tiny ? "model.builtin.tiny" : "model.builtin.tiny-ssmax");
    }
    if (source.can_pick_file()) {  // the web: models on Hugging Face, by name, with their download's size
        ImGui::Separator();
        ImGui::TextDisabled("From Hugging Face");
        for (const HubModel& m : kHubModels) {
            const std::string label = std::string(m.id) + " (" + megabytes(m.bytes) + ")";
            const bool shown = s.model && s.model->source == m.id;
            ImGui::BeginDisabled(busy);
            if (ImGui::Selectable(label.c_str(), shown) && !shown) bar.chosen_hub = m.id;
            ImGui::EndDisabled();
            remember_last_item(ctx.widgets, (std::string("model.hub.") + m.id).c_str());
        }
    }
    ImGui::EndCombo();
}

// A screen too short to give the bar four lines (a phone held sideways): the model's shape and the
// address row fold behind a button, so that the panel keeps the height.
bool short_screen() { return ImGui::GetMainViewport()->WorkSize.y < ImGui::GetFontSize() * 28.0f; }

// `text` cut to `width` pixels with "…" when it is longer (at a UTF-8 character's start).
std::string fit_width(std::string text, float width) {
    if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
    while (!text.empty() && ImGui::CalcTextSize((text + "…").c_str()).x > width) {
        while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
        if (!text.empty()) text.pop_back();
    }
    return text + "…";
}

// Whether an item `w` px wide fits on this line before screen x `right`; then SameLine().
bool same_line_before(float right, float w) {
    const float x = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x;
    if (x + w > right) return false;
    ImGui::SameLine();
    return true;
}

// The bar's line while no model is loaded: one is on its way (issue 35: "No model loaded" during
// the first download read as a broken page), or none is.
const char* no_model_line(const FetchStatus* fetch) {
    using P = FetchStatus::Phase;
    const bool arriving = fetch && (fetch->phase == P::Probing || fetch->phase == P::Downloading || fetch->phase == P::Ready);
    return arriving ? "Loading the model (progress below)…" : "No model loaded — the Softmax playground and Help work without one.";
}

std::string loaded_model_line(const Session& s) {
    return "Model: " + (!s.model->name.empty() ? s.model->name : short_source(s.model->source));
}

// "Model: AttnLab tiny (…), not GPT-2 · 4 layers × 4 heads · 128 dims · …" (the shape when
// `shape_shown`), or the no-model line: one line that ends before screen x `right`, however long
// the name (issue 35: a long name wrapped the bar and moved every panel down a row). The name is
// cut with "…" and the shape left out when they do not fit; the tooltip has them whole.
void draw_loaded_model(const Session& s, const FetchStatus* fetch, bool shape_shown, float right) {
    ImGui::AlignTextToFramePadding();
    const float room = right - ImGui::GetCursorScreenPos().x;
    if (!s.model) {
        ImGui::TextDisabled("%s", fit_width(no_model_line(fetch), room).c_str());
        return;
    }
    const DecoderShape& c = s.model->shape;
    char shape[200];
    std::snprintf(shape, sizeof shape, "· %s · %d layers × %d heads · %d dims · context %d · %.1f M parameters", c.arch.c_str(), c.n_layer,
                  c.n_head, c.hidden, c.max_positions, static_cast<double>(s.model->model->parameter_count()) / 1e6);
    const std::string name = loaded_model_line(s);
    ImGui::TextUnformatted(fit_width(name, room).c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s\n%s\n%s%s", name.c_str(), shape, s.model->builtin ? "Built into AttnLab (no download): " : "",
                          s.model->source.c_str());
    if (shape_shown && same_line_before(right, ImGui::CalcTextSize(shape).x)) ImGui::TextDisabled("%s", shape);
    if (!s.model->warnings.empty() && same_line_before(right, ImGui::CalcTextSize("(00 warnings)").x)) {
        ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
        ImGui::Text("(%d warning%s)", static_cast<int>(s.model->warnings.size()), s.model->warnings.size() == 1 ? "" : "s");
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
            for (const std::string& w : s.model->warnings) ImGui::BulletText("%s", w.c_str());
            ImGui::PopTextWrapPos();
            ImGui::EndTooltip();
        }
    }
}

const char* cache_copy_name(FetchStatus::CacheCopy c) {
    switch (c) {
        case FetchStatus::CacheCopy::None: return "none";
        case FetchStatus::CacheCopy::Waiting: return "waiting";
        case FetchStatus::CacheCopy::Saving: return "saving";
        case FetchStatus::CacheCopy::Kept: return "kept";
    }
    return "none";
}

// Beside the loaded model: whether the next visit can read it from this browser. While the copy is
// being written, a reload would download it again, so that state is shown until it ends.
void draw_cache_copy(const Session& s, const FetchStatus& st, float right) {
    if (!s.model || s.model->source != st.url || st.phase != FetchStatus::Phase::Idle) return;
    if (st.cache_copy == FetchStatus::CacheCopy::Waiting) {
        constexpr const char* waiting = "· a copy is saved in this browser after the first pass";
        if (!same_line_before(right, ImGui::CalcTextSize(waiting).x)) return;
        ImGui::TextDisabled("%s", waiting);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "Writing it now would slow the first pass down. Until it is saved, reloading the page downloads the model again.");
    } else if (st.cache_copy == FetchStatus::CacheCopy::Saving) {
        const std::string done =
            "· saving a copy in this browser (" + mb_number(st.cache_saved_bytes) + " / " + megabytes(st.total_bytes) + ")…";
        if (!same_line_before(right, ImGui::CalcTextSize(done.c_str()).x)) return;
        ImGui::TextDisabled("%s", done.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Until it is saved, reloading the page downloads the model again.");
    } else if (st.cache_copy == FetchStatus::CacheCopy::Kept) {
        if (!same_line_before(right, ImGui::CalcTextSize("· kept in this browser").x)) return;
        ImGui::TextDisabled("· kept in this browser");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "The next visit reads it from this browser's cache, without downloading it. "
                "\"Clear cached model\" frees the space.");
    }
}

// The field and the buttons: Load, Open file…, Clear cached model.
void draw_source_row(ModelBar& bar, ModelLoading& loading, PanelContext& ctx, ModelSource& source) {
    const bool web = source.can_pick_file();  // the desktop build takes paths instead
    const ImGuiStyle& style = ImGui::GetStyle();
    float buttons = ImGui::CalcTextSize("Load").x + 2 * style.FramePadding.x + style.ItemSpacing.x;
    if (web) buttons += ImGui::CalcTextSize("Open file…").x + 2 * style.FramePadding.x + style.ItemSpacing.x;
    if (web) buttons += ImGui::CalcTextSize("Clear cached model").x + 2 * style.FramePadding.x + style.ItemSpacing.x;

    ImGui::AlignTextToFramePadding();
    const char* label = web ? "Model URL" : "Model file";
    ImGui::TextUnformatted(label);
    ImGui::SameLine();
    // The buttons beside the field when it keeps 14 font sizes; else the field takes the line
    // and the buttons wrap below it (a phone).
    const float room = ImGui::GetContentRegionAvail().x - buttons;
    const bool one_row = room >= ImGui::GetFontSize() * 14;
    const auto next_button = [one_row](const char* text) {
        if (one_row) ImGui::SameLine();
        else same_line_if_fits(button_width(text));
    };
    ImGui::SetNextItemWidth(one_row ? std::max(ImGui::GetFontSize() * 10, room) : -1.0f);
    const bool enter = ImGui::InputTextWithHint(
        "##model_url",
        web ? "https://…/model.safetensors, a folder …/ or ORG/NAME" : "a model folder (Hugging Face layout) or a .safetensors file",
        bar.url, sizeof bar.url, ImGuiInputTextFlags_EnterReturnsTrue);
    remember_last_item(ctx.widgets, "model.url");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            web ? "A .safetensors checkpoint (config.json and tokenizer.json are fetched from the same folder when present), "
                  "a folder's address ending in /, or a Hugging Face model by name (Qwen/Qwen3-0.6B); ?hub=BASE names another server."
                : "A .safetensors checkpoint on disk; config.json beside it is read when present.");
    next_button("Load");
    const std::string url(bar.url);
    ImGui::BeginDisabled(url.empty());
    const bool load = ImGui::Button("Load");
    ImGui::EndDisabled();
    remember_last_item(ctx.widgets, "model.load");
    if ((load || enter) && !url.empty()) begin_load(loading, ctx.session, source, url);
    if (web) {
        next_button("Open file…");
        if (ImGui::Button("Open file…")) {
            forget_failure(loading, ctx.session);
            source.pick_file();
        }
        remember_last_item(ctx.widgets, "model.open_file");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Choose a .safetensors file (and its config.json), or drop it anywhere on the page.");
        next_button("Clear cached model");
        ImGui::BeginDisabled(!source.has_cache());
        if (ImGui::Button("Clear cached model")) {
            loading.shown_notice.clear();
            source.clear_cache();
        }
        ImGui::EndDisabled();
        remember_last_item(ctx.widgets, "model.clear_cache");
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip(source.has_cache() ? "Frees the space the downloaded checkpoint takes in this browser."
                                                 : "Nothing is cached in this browser.");
    }
}

// What the fetch is doing: asking, waiting for "Download", bytes arriving, or why it failed.
void draw_fetch_row(PanelContext& ctx, ModelSource& source, const FetchStatus& st) {
    const std::string name = file_name(st.url);
    switch (st.phase) {
        case FetchStatus::Phase::Idle:
        case FetchStatus::Phase::Ready: break;
        case FetchStatus::Phase::Probing:
            ImGui::AlignTextToFramePadding();
            if (!st.host.empty()) ImGui::Text("Asking %s for the size of %s…", st.host.c_str(), name.c_str());
            else ImGui::Text("Asking for the size of %s…", name.c_str());
            same_line_if_fits(button_width("Cancel"));
            if (ImGui::Button("Cancel")) source.cancel();
            remember_last_item(ctx.widgets, "model.cancel");
            break;
        case FetchStatus::Phase::Confirm: {
            ImGui::AlignTextToFramePadding();
            if (st.total_bytes >= 0)
                ImGui::Text("%s is %s on %s (cached: %s). Download?", name.c_str(), megabytes(st.total_bytes).c_str(), st.host.c_str(),
                            st.cached ? "yes" : "no");
            else ImGui::Text("%s: the server does not say how large it is (cached: %s). Download?", name.c_str(), st.cached ? "yes" : "no");
            same_line_if_fits(button_width("Download"));
            if (ImGui::Button("Download")) source.download(st.url);
            remember_last_item(ctx.widgets, "model.confirm");
            same_line_if_fits(button_width("Cancel"));
            if (ImGui::Button("Cancel")) source.cancel();
            remember_last_item(ctx.widgets, "model.cancel");
            break;
        }
        case FetchStatus::Phase::Downloading: {
            char overlay[128];
            const bool known = st.total_bytes > 0;
            const float fraction = known ? static_cast<float>(std::clamp(st.done_bytes / st.total_bytes, 0.0, 1.0)) : 0.0f;
            // "123 / 548 MB · 12.3 MB/s · 35 s left"
            std::string text = known ? mb_number(st.done_bytes) + " / " + megabytes(st.total_bytes) : megabytes(st.done_bytes);
            if (st.bytes_per_second > 0) {
                std::snprintf(overlay, sizeof overlay, " · %s/s", megabytes(st.bytes_per_second).c_str());
                text += overlay;
                if (known && st.done_bytes < st.total_bytes) {
                    std::snprintf(overlay, sizeof overlay, " · %.0f s left", (st.total_bytes - st.done_bytes) / st.bytes_per_second);
                    text += overlay;
                }
            }
            ImGui::AlignTextToFramePadding();
            if (st.cached) ImGui::Text("Reading %s from this browser's cache", name.c_str());
            else if (!st.host.empty()) ImGui::Text("Downloading %s from %s", name.c_str(), st.host.c_str());
            else ImGui::Text("Downloading %s", name.c_str());
            same_line_if_fits(ImGui::GetFontSize() * 22);
            ImGui::ProgressBar(fraction, ImVec2(ImGui::GetFontSize() * 22, 0), text.c_str());
            same_line_if_fits(button_width("Cancel"));
            if (ImGui::Button("Cancel")) source.cancel();
            remember_last_item(ctx.widgets, "model.cancel");
            break;
        }
        case FetchStatus::Phase::Failed: break;  // the message banner below shows it
    }
}

}  // namespace

void draw_model_bar(ModelBar& bar, ModelLoading& loading, PanelContext& ctx, ModelSource* source) {
    Session& s = ctx.session;
    ImGui::PushID("model_bar");
    const bool folded = short_screen() && !bar.unfolded;
    // The first line: the model, and its menu and buttons at the line's end, the same wherever
    // the name is long or short (on a phone, they go under it).
    const ImGuiStyle& style = ImGui::GetStyle();
    const float gap = style.ItemSpacing.x;
    const std::vector<float> tail_w = {source ? builtin_menu_width() : -1.0f,
                                       gpt2_button_shown(s, source) ? button_width(gpt2_button_label().c_str()) : -1.0f,
                                       short_screen() ? std::max(button_width("More…"), button_width("Less")) : -1.0f};
    float tail = 0.0f;
    for (const float w : tail_w) tail += w >= 0.0f ? w + gap : 0.0f;
    const float win_x = ImGui::GetWindowPos().x, right = win_x + ImGui::GetWindowContentRegionMax().x;
    const bool one_line = right - ImGui::GetCursorScreenPos().x - tail >= ImGui::GetFontSize() * 12.0f;
    const float text_right = one_line ? right - tail : right;
    FetchStatus fetch;
    if (source) fetch = source->status();
    draw_loaded_model(s, source ? &fetch : nullptr, !folded, text_right);
    if (source) draw_cache_copy(s, source->status(), text_right);
    bool first = true;
    const auto place = [&](float w) {
        if (one_line) ImGui::SameLine(first ? text_right + gap - win_x : 0.0f);
        else if (!first) same_line_if_fits(w);
        first = false;
    };
    if (source) {
        place(tail_w[0]);
        draw_builtin_menu(bar, ctx, *source);
    }
    if (gpt2_button_shown(s, source)) {
        place(tail_w[1]);
        draw_gpt2_button(loading, ctx, source);
    }
    if (short_screen()) {
        place(tail_w[2]);
        if (ImGui::Button(folded ? "More…" : "Less", ImVec2(tail_w[2], 0))) bar.unfolded = !bar.unfolded;
        remember_last_item(ctx.widgets, "model.more");
    }
    if (!source) {
        ImGui::TextDisabled("This build cannot load models.");
        ImGui::PopID();
        return;
    }
    if (loading.requested_url != bar.shown_request) {  // a link or a button asked for an address: show it
        bar.shown_request = loading.requested_url;
        std::snprintf(bar.url, sizeof bar.url, "%s", loading.requested_url.c_str());
    }
    if (s.model.get() != bar.shown_model) {  // a model arrived: the field names it, never another (issue 35)
        bar.shown_model = s.model.get();
        std::snprintf(bar.url, sizeof bar.url, "%s", s.view.model_url.c_str());  // "" for the built-in tiny
    }

    if (!folded) draw_source_row(bar, loading, ctx, *source);
    ImGui::PushTextWrapPos(0.0f);                    // a phone wraps the longer sentences
    draw_fetch_row(ctx, *source, source->status());  // after this frame's clicks
    ImGui::PopTextWrapPos();
    ImGui::PopID();
    ImGui::Separator();
}

std::string model_bar_status_json(const ModelBar& bar, const Session& s, const ModelSource* source) {
    FetchStatus fetch;
    if (source) fetch = source->status();
    return json::ObjectBuilder()
        .add("line", s.model ? loaded_model_line(s) : std::string(no_model_line(source ? &fetch : nullptr)))
        .add("url", std::string(bar.url))
        .str();
}

std::string model_fetch_status_json(const ModelSource* source) {
    json::ObjectBuilder o;
    const FetchStatus st = source ? source->status() : FetchStatus{};
    o.add("phase", phase_name(st.phase));
    o.add("url", st.url);
    o.add("host", st.host);
    o.add("total_bytes", st.total_bytes);
    o.add("done_bytes", st.done_bytes);
    o.add("bytes_per_second", st.bytes_per_second);
    o.add("cached", st.cached);
    o.add("cache_copy", cache_copy_name(st.cache_copy));
    o.add("cache_saved_bytes", st.cache_saved_bytes);
    o.add("error", st.error);
    o.add("notice", st.notice);
    o.add("has_cache", source != nullptr && source->has_cache());
    return o.str();
}

}  // namespace attnlab
