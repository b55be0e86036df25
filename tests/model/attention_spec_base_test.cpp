// attention_spec(plan, base): a plan's text relative to a model's trained plan, as the page's
// share links carry it. The expected texts are written out by hand from the grammar in
// attention_plan.h; each is also parsed back into the base to give the plan exactly.
#include <catch2/catch.hpp>

#include <string>

#include "model/attention_plan.h"
#include "model/head_plans.h"

using namespace attnlab;
using attnlab::test::head;

namespace {
AttentionPlan parsed(const std::string& spec, AttentionPlan start) {
    std::string error;
    REQUIRE(parse_attention_spec(spec, start.n_layer(), start.n_head(), start, error));
    return start;
}
}  // namespace

TEST_CASE("attention_spec relative to a default base is attention_spec", "[attention_plan]") {
    AttentionPlan plan(3, 2);
    plan.set(1, 0, head(NormalizerKind::Sparsemax));
    plan.set(1, 1, head(NormalizerKind::Sparsemax));
    plan.set(2, 1, head(NormalizerKind::Softmax, 0.5f));
    CHECK(attention_spec(plan, AttentionPlan(3, 2)) == "1.*=sparsemax,2.1=softmax@0.5");
    CHECK(attention_spec(plan) == "1.*=sparsemax,2.1=softmax@0.5");
    CHECK(attention_spec(AttentionPlan(3, 2), AttentionPlan(3, 2)).empty());
}

TEST_CASE("attention_spec relative to a trained plan lists only the differences", "[attention_plan]") {
    // A model trained with SSMax in every head (config.json "attnlab_attention": "all=ssmax:0.43").
    const AttentionPlan trained = parsed("all=ssmax:0.43", AttentionPlan(3, 2));
    CHECK(attention_spec(trained, trained).empty());  // as trained: nothing to say

    AttentionPlan plan = trained;
    plan.set(0, 1, head(NormalizerKind::Sparsemax));
    // The default plan would need every head: relative to the base, one.
    CHECK(attention_spec(plan, trained) == "0.1=sparsemax");
    CHECK(parsed(attention_spec(plan, trained), trained) == plan);

    // Back to softmax is a change from this base, and must be written as one.
    plan = trained;
    plan.set(2, 0, HeadPlan{});
    CHECK(attention_spec(plan, trained) == "2.0=softmax");
    CHECK(parsed(attention_spec(plan, trained), trained) == plan);

    // A whole layer changed to one setting: one item.
    plan = trained;
    plan.set(1, 0, head(NormalizerKind::Entmax));
    plan.set(1, 1, head(NormalizerKind::Entmax));
    CHECK(attention_spec(plan, trained) == "1.*=entmax-1.5");
    CHECK(parsed(attention_spec(plan, trained), trained) == plan);

    // Every head to one setting: "all".
    const AttentionPlan sparse = parsed("all=sparsemax@2", AttentionPlan(3, 2));
    CHECK(attention_spec(sparse, trained) == "all=sparsemax@2");
    CHECK(parsed(attention_spec(sparse, trained), trained) == sparse);
}

TEST_CASE("attention_spec relative to a mixed base round-trips", "[attention_plan]") {
    const AttentionPlan base = parsed("0.*=sparsemax,1.1=ssmax:2@0.5", AttentionPlan(2, 3));
    AttentionPlan plan = base;
    plan.set(0, 2, HeadPlan{});                       // one head of a changed layer
    plan.set(1, 1, head(NormalizerKind::SaSoftmax));  // another setting for a changed head
    CHECK(attention_spec(plan, base) == "0.2=softmax,1.1=sa-softmax");
    CHECK(parsed(attention_spec(plan, base), base) == plan);
    CHECK(parsed(attention_spec(base, AttentionPlan(2, 3)), AttentionPlan(2, 3)) == base);
}
