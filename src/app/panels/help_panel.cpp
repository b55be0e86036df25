#include "app/panels/help_panel.h"

#include <imgui.h>

#include <iterator>
#include <string>

#include "app/panels/distance_panel.h"
#include "app/panels/pane_layout.h"
#include "app/session.h"
#include "app/work/head_summaries.h"

namespace attnlab {

namespace {

struct Topic {
    const char* title;
    const char* text;
};

// What each panel shows. Kept short: docs/science.md has the formulas and worked examples.
constexpr Topic kPanels[] = {
    {"Text & tokens",
     "Type or paste a text. The model reads it as tokens, shown as chips (hover one for its id and bytes); the counter "
     "shows how much of the model's context (above: the open model's length) it fills. Generation continues the text "
     "greedily or by sampling (temperature, top-k). Every other model panel analyses this text."},
    {"Attention map",
     "One thumbnail per layer and head (layers x heads of the open model, above); click one to open it. The open head is a causal "
     "L x L heatmap: row i holds the weights query i gives to tokens 0..i, coloured from 0 to the largest weight. "
     "Click a row to see that query's weights as bars, its top-N highlighted, with the uniform level 1/L drawn for "
     "comparison. The normalizer and the temperature T re-shape the chosen head from its stored queries and keys; "
     "\"Apply to the model\" runs that normalizer at that T inside the model, for this head, this layer or every "
     "head: later layers read what the changed heads compute, and every panel, the grid (changed heads tagged \"chg\" "
     "in blue), the summaries and generation use the changed model. \"Model changes\" lists them, compares the text's "
     "perplexity and the next-token top-10 with the model as trained, and Reset undoes them at once. "
     "A thumbnail outlined in green and tagged \"prev\" is a previous-token head: averaged over the queries, it puts "
     "more than half its weight on the token just before the query. One outlined in pink and tagged \"ind\" is an "
     "induction head: when a token has occurred before, it looks at the token that followed that first occurrence "
     "(more than 0.3 of its weight, on average), and so continues a repeat; type a passage twice, or open the "
     "\"Repeated names\" sample, to see one (AttnLab tiny then predicts \"bread\" next, the word that followed "
     "\"baked\" the first time). Hover a thumbnail for both scores. With one of AttnLab's two "
     "built-in models open (AttnLab tiny, or AttnLab tiny-SSMax: the same model trained with SSMax in every head), "
     "\"Compare with the twin\" shows the open head of both side by side on the text, and plots each query's "
     "largest weight against the L keys it sees, with 1/L: where a head's weights sink towards 1/L as L grows "
     "(Lemma 1), and whether training with SSMax holds them up."},
    {"Fading (Lemma 1)",
     "For the open head of whatever model is loaded, up to its context: each query's largest weight against L, the keys it "
     "sees, on log axes (a few dozen log-spaced bins, each the mean of its queries), beside the mean over heads, 1/L "
     "(uniform attention) and Lemma 1's band (for a softmax head, with a = half the query's logit range). Computed with "
     "the grid's thumbnails, one block of queries at a time, so no L x L map is kept. With the \"A needle in 8,000 tokens\" "
     "sample, a second plot gives the weight from each repeat of the needle's first half to its continuation, against the "
     "distance, for the open head and the best one."},
    {"Selection distance (Theorem 1)",
     "Attention has to single out N tokens (the top-N by weight) from L. How far is what it returns from what the "
     "selected tokens alone would give? d_A sums the norms of the unselected weighted vectors, d_B is the norm of "
     "their sum; both are drawn with their bounds (R) and with E[d], the same distance for a random selection of N "
     "(Monte Carlo mean and standard error), against N and against the context length. The summary over all heads "
     "shows the per-head means and the critical N of the Kolmogorov-Smirnov test: the smallest N at which the top-N "
     "distance is no longer told apart from a random selection."},
    {"Separability (Theorem 2)",
     "Can the selected tokens still be told apart once they are averaged? The 2-D view is a PCA projection of the "
     "weighted vectors alpha_i x_i with the context vector s and the ball B_r(s), r the distance to the nearest "
     "unselected token; selected tokens outside the ball are distinguishable (ringed). N_s/N is plotted against N "
     "with the lower and upper bounds (R), and box plots over heads mirror the paper's Figure 3 with its 0.70-0.85 "
     "band."},
    {"Temperature & gradients (Lemma 2)",
     "Low temperature makes attention sharp, and its gradient large. g(T, eps) is the finite-difference sensitivity "
     "of the weights to a logit change of size eps (eps = 1e-3, 1e-1, 10), on log-log axes, next to the exact "
     "||J||_2 of the chosen head and query. The paper's bound min{1/(4T), sqrt 2} is drawn and labelled (check), "
     "next to the tight bound 1/(2T). Curves are the mean over queries and the maximum over heads, as in the paper, "
     "or the chosen head alone."},
    {"Softmax playground",
     "Synthetic logits instead of a model: see how softmax spreads its weight as L grows (Lemma 1: the largest "
     "weight fades like 1/L) and how the other normalizers (sparsemax, entmax-1.5, SSMax, SA-softmax) compare on "
     "the same logits. Works without a model."},
};

// Where AttnLab departs from the paper: docs/science.md section 9, in short.
constexpr Topic kDepartures[] = {
    {"Temperature",
     "T divides the model's scaled logits q.k / sqrt(d_head), so T = 1 is the model as trained; the paper's "
     "T is T sqrt(d_head) (8 T on GPT-2 small; the Temperature panel gives the open model's factor)."},
    {"Two distances",
     "The paper's d can be read two ways; AttnLab shows both, d_A (sum of norms, the default) and "
     "d_B (norm of the sum), labelled."},
    {"(R) reconstructed bounds",
     "Where a printed formula could not be read in full (Theorem 1's bounds, Eq. 8's "
     "approximation, Theorem 2's bounds), it was derived again from the paper's proof "
     "and is labelled (R). Eq. 8 is shown as its main term only, next to the Monte "
     "Carlo E[d_A]."},
    {"(check) Lemma 2",
     "The paper bounds the softmax Jacobian by min{1/(4T), sqrt 2}; two tied leading logits reach "
     "1/(2T) (50 at T = 0.01, against 1.414). AttnLab computes the exact ||J||_2 and draws both "
     "bounds, labelled."},
    {"E[d]",
     "A seeded Monte Carlo estimate (mean and standard error) rather than the exact expectation; one random "
     "ordering per sample serves every N."},
    {"Lemma 1's a",
     "a = max |l_i| from the logits, the narrowest band the lemma allows, instead of "
     "||q|| max ||k_j||."},
    {"SA-softmax and SSMax",
     "SA-softmax's weights are rescaled to sum to 1 so that all normalizers live on the "
     "simplex; SSMax's s is a parameter (default 1), not learned."},
    {"Context length",
     "The first L queries of one causal forward pass stand for L-token contexts (the same as "
     "running every prefix)."},
    {"Vectors x_i",
     "The head's value vectors by default (the paper says \"token embeddings\", aggregated like "
     "values)."},
};

// Our own findings: docs/science.md section 10, in short.
constexpr Topic kFindings[] = {
    {"Corollary 2",
     "As worded it does not hold for E[d_A]: the ratio E[d_A] / sum ||alpha_i x_i|| moves away from "
     "1 (towards about 3.3 at N = 5) as L grows. It holds for the paper's main term."},
    {"Theorem 2 in practice",
     "On synthetic data the bounds hold on average but leave most of the range open: the "
     "lower bound is below 0 from about N = 4 at small d, the upper bound stays near 1."},
};

// The departure the critical-N search makes, with its grid from the search's own code.
const Topic& critical_n_topic() {
    static const std::string text = "Searched on a fixed grid, " + n_grid_in_words(distance_grid(1 << 20)) +
                                    ", capped by the text's length, for a bounded run time; the KS p-value is exact up to 1e7 "
                                    "lattice cells.";
    static const Topic topic = {"Critical N", text.c_str()};
    return topic;
}

// The open model's shape, which the panels' descriptions refer to.
void draw_model_shape(const Session& s) {
    if (!s.model) {
        ImGui::TextDisabled("No model is open yet: the model panels wait for one (the playground works without).");
        return;
    }
    const DecoderShape& c = s.model->shape;
    ImGui::TextWrapped("The open model: %s, %d layers x %d heads (d_head = %d), a context of %d tokens.",
                       (s.model->name.empty() ? s.model->source : s.model->name).c_str(), c.n_layer, c.n_head, c.head_dim, c.max_positions);
}

void topics(const Topic* list, size_t n, float wrap) {
    for (size_t i = 0; i < n; ++i) {
        ImGui::Bullet();
        ImGui::SameLine();
        ImGui::PushTextWrapPos(wrap);
        ImGui::TextColored(ImVec4(0.0f, 0.30f, 0.55f, 1.0f), "%s.", list[i].title);
        ImGui::SameLine();
        ImGui::TextWrapped("%s", list[i].text);
        ImGui::PopTextWrapPos();
    }
}

// A section's header: `title`, or `short_title` where the panel is too narrow for it (a phone):
// a header's title does not wrap. The id stays the same either way.
bool section(const char* title, const char* short_title, ImGuiTreeNodeFlags flags) {
    const bool fits = ImGui::CalcTextSize(title).x + ImGui::GetFontSize() * 2.0f <= ImGui::GetContentRegionAvail().x;
    ImGui::PushID(title);
    const std::string label = std::string(fits ? title : short_title) + "###section";
    const bool open = ImGui::CollapsingHeader(label.c_str(), flags);
    ImGui::PopID();
    return open;
}

}  // namespace

void draw_help_panel(HelpPanel& panel, PanelContext& ctx) {
    // Its own scrolling window, unless the whole page scrolls (a phone): then in the page.
    const bool own_window = !page_scroll().on;
    if (own_window) ImGui::BeginChild("##help", ImVec2(0, 0), false);
    const float wrap = ImGui::GetContentRegionAvail().x - ImGui::GetFontSize();
    ImGui::PushTextWrapPos(wrap);  // every line, titles too: a phone is narrower than some
    ImGui::PushTextWrapPos(wrap);
    ImGui::TextWrapped(
        "AttnLab is a companion to \"Limitations of Normalization in Attention Mechanism\" (Mudarisov, Burtsev, "
        "Petrova, State; NeurIPS 2025). It shows, on GPT-2-class models and on synthetic logits, what softmax attention can and "
        "cannot select. Bounds are labelled (R) when reconstructed from the paper's proof and (check) when our own "
        "check shows the printed bound is wrong or loose; everything else is an exact computation.");
    ImGui::PopTextWrapPos();
    draw_model_shape(ctx.session);
    ImGui::Spacing();

    if (ImGui::CollapsingHeader("The panels", ImGuiTreeNodeFlags_DefaultOpen))
        for (const Topic& t : kPanels) {
            ImGui::TextColored(ImVec4(0.0f, 0.30f, 0.55f, 1.0f), "%s", t.title);
            ImGui::PushTextWrapPos(wrap);
            ImGui::Indent();
            ImGui::TextWrapped("%s", t.text);
            ImGui::Unindent();
            ImGui::PopTextWrapPos();
            ImGui::Spacing();
        }
    if (section("Where AttnLab departs from the paper", "Departures from the paper", ImGuiTreeNodeFlags_DefaultOpen)) {
        topics(kDepartures, std::size(kDepartures), wrap);
        topics(&critical_n_topic(), 1, wrap);
    }
    if (ImGui::CollapsingHeader("Findings of our own checks")) topics(kFindings, std::size(kFindings), wrap);
    if (section("Tours: a guided path through the paper, for a class", "Tours", ImGuiTreeNodeFlags_DefaultOpen)) {
        ImGui::PushTextWrapPos(wrap);
        ImGui::TextWrapped(
            "Tour > Play \"What softmax can and cannot select\" walks through the paper in %zu live steps on the model "
            "and text you have open; Next and Back (or the arrow keys) change the view, and every slider stays yours. "
            "To make your own: Tour > Record or edit a tour, set up a view, press \"Add this view as a step\", give it a "
            "title and a caption (what to look at, one thing to try; {gradient.T} or {distance.N_star} show live values), "
            "and repeat. \"Copy tour link\" puts the whole tour in one link that opens it at step 1; Export JSON saves it "
            "as a file (Import JSON, or attnlab-desktop --tour FILE, plays it). View > UI scale (100-250%%) and Full screen "
            "make it readable from the back of a room, and the scale travels in the tour's link. A link carries up to 64 "
            "steps and about 2 MB; a longer tour goes as a file.",
            panel.tour_steps);
        ImGui::PopTextWrapPos();
    }
    if (ImGui::CollapsingHeader("Sharing, exporting, scripting")) {
        ImGui::PushTextWrapPos(wrap);
        ImGui::TextWrapped(
            "\"Copy link\" in the menu bar puts the whole view (text, model address, panel, layer, head, query, N, T, "
            "normalizer, eps) into the page's address, compressed, and copies it: opening the link restores the view "
            "and reloads the model from the browser's cache or its address. Every plot has a download button in its "
            "corner (and a right-click menu) for a PNG picture or its data as CSV; \"Export analysis (JSON)\" saves "
            "the view, the model, the tokens and every quantity for the chosen head and query. Scripts can use "
            "window.attnlab: status(), state(), setState(obj), shareLink(), and for tours tour(), setTour(obj), "
            "tourStep(k), tourLink(), startTour().");
        ImGui::PopTextWrapPos();
    }
    ImGui::TextDisabled(
        "The formulas, worked examples and the full table of differences: docs/science.md in AttnLab's source "
        "repository (it is not part of this site).");
    ImGui::PopTextWrapPos();
    if (own_window) ImGui::EndChild();
}

}  // namespace attnlab
