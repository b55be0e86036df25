#include "app/head_summaries.h"

namespace attnlab {

void keep_summaries_current(Session& s) {
    (void)s;
}

}  // namespace attnlab
