// The built-in tour, in the paper's order. Its views name no text and no model, so it plays on
// whatever the reader has open (the built-in model and its start text on a fresh page), and its
// numbers are placeholders read live from window.attnlab.status(): they stay true on any model.
#include "app/tour/tour.h"

namespace attnlab {

const char* builtin_tour_json() {
    return R"json({
  "v": 1, "kind": "attnlab-tour", "title": "What softmax can and cannot select",
  "steps": [
    {
      "title": "A head that selects",
      "caption": "Layer {attention.layer}, head {attention.head} is the head of this model that stands out most from uniform attention. Each row of the map is a query, each column a key it reads. On this text its mean weight on the token just before the query is {attention.chosen.previous_token}, where uniform attention gives {attention.previous_token.uniform}. Try: click a row of the map to choose another query, and read its bars below.",
      "highlight": "attention.heatmap", "strongest_head": true,
      "view": {"panel": "attention", "query": -1, "N": 5, "T": 1, "normalizer": "softmax"}
    },
    {
      "title": "Lemma 1: attention fades as the context grows",
      "caption": "Synthetic logits, bounded in size, over L = {playground.L} tokens at T = {playground.T}. The largest weight is {playground.max_weight}. Lemma 1 holds every weight between {playground.band_lower} and {playground.band_upper}, and both ends fall like 1/L. Try: drag L up to 4096 and watch the largest weight fall with them.",
      "highlight": "playground.length",
      "view": {"panel": "playground"}
    },
    {
      "title": "Theorem 1: the rest comes close to the selection",
      "caption": "For query {distance.query} of layer {distance.layer}, head {distance.head}, the {distance.N} tokens with the largest weights lie at a distance d = {distance.d_A} from the rest (reading A). A random selection of {distance.N} gives {distance.expected_A}, and the bound (R) is {distance.bound_A}. Try: drag top-N up and watch d fall towards the random selection's curve: the more a head selects, the less its selection stands apart.",
      "highlight": "distance.plot_N", "strongest_head": true,
      "view": {"panel": "distance", "N": 5}
    },
    {
      "title": "The critical N",
      "caption": "The summary below runs over every head and many queries. The critical N is the smallest N at which a Kolmogorov-Smirnov test no longer tells the heads' top-N distances from a random selection's: here {distance.N_star_reading}, over {distance.summary_queries} queries. The paper finds about 0.06 L for GPT-2 small. Try: load GPT-2 small in the bar above and see where its N* lands.",
      "highlight": "distance.ks", "strongest_head": true,
      "view": {"panel": "distance", "N": 5}
    },
    {
      "title": "Theorem 2: only part of the selection can be told apart",
      "caption": "A selected token is distinguishable when it lies closer to the head's output s than any token left out. Of the top {separability.N}, {separability.N_s} are: a ratio of {separability.ratio}, between the bounds (R) {separability.lower} and {separability.upper}. Try: raise top-N to 30 and watch the ratio fall; the paper finds it settles at 0.70 to 0.85 on GPT-2 small.",
      "highlight": "separability.plot", "strongest_head": true,
      "view": {"panel": "separability", "N": 5}
    },
    {
      "title": "Lemma 2: sensitivity grows as the temperature falls",
      "caption": "How far the weights move when the logits move. At T = {gradient.T} the exact Jacobian norm of this query is {gradient.jacobian_norm}. The paper's bound min{{1/(4T), sqrt 2}} gives {gradient.bound_paper}; the tight bound 1/(2T) gives {gradient.bound_tight}. Try: drag T below 0.1 and watch all three climb like 1/T.",
      "highlight": "gradient.T", "strongest_head": true,
      "view": {"panel": "gradient", "T": 1, "eps": 0.001}
    },
    {
      "title": "Below T = 0.1",
      "caption": "At T = {gradient.T} the tight bound is {gradient.bound_tight}: a change of {gradient.eps} in the logits can move the weights by {gradient.g} times as much, measured. This is why the paper advises against T <= 0.1. Try: choose max over heads to see the paper's Figure 4 on this model.",
      "highlight": "gradient.mode_heads", "strongest_head": true,
      "view": {"panel": "gradient", "T": 0.05, "eps": 0.001}
    },
    {
      "title": "Other normalizers",
      "caption": "On {playground.L} synthetic logits softmax's largest weight is {playground.max_weight}, and every token keeps some weight. Sparsemax gives {playground.normalizers.sparsemax.max_weight} and leaves weight on {playground.normalizers.sparsemax.support} tokens only, exact zeros elsewhere; SSMax, which scales the logits by log L, gives {playground.normalizers.ssmax.max_weight}. Try: on the Attention map, pick another normalizer and press apply to the model.",
      "view": {"panel": "playground", "T": 1}
    },
    {
      "title": "Sparsemax inside the model",
      "caption": "Now every head of the model itself runs sparsemax, inside the forward pass, so each layer reads what the changed heads before it computed; the model was trained with softmax. The likeliest next token was {attention.baseline_top10.0.token} (p = {attention.baseline_top10.0.p}); now it is {attention.top10.0.token} (p = {attention.top10.0.p}). The text's perplexity goes from {model_changes.perplexity_before.perplexity} to {model_changes.perplexity_after.perplexity}. Try: press Reset under Model changes for the model as trained, or apply sparsemax to one head only and compare.",
      "highlight": "attention.reset_plan",
      "view": {"panel": "attention", "normalizer": "sparsemax", "T": 1, "plan": "all=sparsemax"}
    },
    {
      "title": "The remedy: a model trained with SSMax",
      "caption": "Swapping a normalizer into a trained model shows what the swap costs. The remedy is to train with it: AttnLab tiny-SSMax is AttnLab tiny trained again on the same text, with the same seed and number of steps, but with SSMax, which scales the logits by s log L, in every head. The two were trained apart, so head h of one is not head h of the other: compare layers. The text is Genesis 8, held out of training, ending with \"Gen\", which occurred once before, at the very start; its query sees {twin.last.L} tokens. An induction head looks at what followed it (\"esis\"). The best head of layer 1 puts {twin.retrieval.layers.1.model.weight} of its weight there in {twin.model.label} and {twin.retrieval.layers.1.twin.weight} in {twin.twin.label}; the best of layer 2, {twin.retrieval.layers.2.model.weight} and {twin.retrieval.layers.2.twin.weight}; uniform attention gives {twin.last.uniform}. Try: shorten the text, keeping \"Gen\" last, and see which model's weight on the far token holds up.",
      "highlight": "attention.compare_twin",
      "view": {"panel": "attention", "normalizer": "softmax", "T": 1, "plan": "", "compare": true, "layer": 2, "head": 2, "query": -1,
               "text": "Genesis 8\nAnd God remembered Noah, and every living thing, and all the cattle that was with him in the ark: and God made a wind to pass over the earth, and the waters asswaged;\nThe fountains also of the deep and the windows of heaven were stopped, and the rain from heaven was restrained;\nAnd the waters returned from off the earth continually: and after the end of the hundred and fifty days the waters were abated.\nAnd the ark rested in the seventh month, on the seventeenth day of the month, upon the mountains of Ararat.\nGen"}
    }
  ]
})json";
}

}  // namespace attnlab
