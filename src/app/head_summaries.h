#pragma once
// The all-heads summaries behind panels 3-5, computed in the background for each forward pass.
#include "app/session.h"

namespace attnlab {

struct HeadSummaries {
    const ForwardResult* source = nullptr;  // the pass these were computed from
};

// Called every frame: starts the background computation when `forward` changed.
void keep_summaries_current(Session& s);

}  // namespace attnlab
