#include "app/model_tasks.h"

namespace attnlab {

void keep_forward_current(Session& s) {
    (void)s;
}

}  // namespace attnlab
