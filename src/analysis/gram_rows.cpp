#include "analysis/gram_rows.h"

namespace attnlab {

const double* GramRows::row(int j) const {
    if (whole_) return whole_->row(j).data();
    int& at = index_[static_cast<size_t>(j)];
    if (at < 0) {
        at = static_cast<int>(rows_.size());
        rows_.emplace_back(x_ * x_.row(j).transpose());  // (L)
    }
    return rows_[static_cast<size_t>(at)].data();
}

Eigen::VectorXd GramRows::diagonal(Eigen::Index L) const {
    if (whole_) return whole_->diagonal().head(L);
    return x_.topRows(L).rowwise().squaredNorm();
}

}  // namespace attnlab
