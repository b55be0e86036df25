#pragma once
// Rows of a Gram matrix G = x x^T, by token, for the selection analyses (selection.h,
// separability.h), which read G(j, 0..L-1) for the tokens j they select. Either the whole
// matrix, held by the caller and shared by all of a head's queries, or rows computed on first
// use for one query's L tokens: the whole matrix costs L^2 doubles (1 GB for two of them at
// L = 8,192), the rows a query reads about 200 x L.
#include <Eigen/Core>
#include <vector>

namespace attnlab {

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The page keeps a head's whole Gram matrix up to this many tokens (32 MB), the summaries'
// and the distance panel's numbers then those of the CLI's experiments; beyond it, rows as read.
constexpr int kWholeGramTokens = 2048;

class GramRows {
public:
    GramRows(const GramRows&) = delete;
    GramRows& operator=(const GramRows&) = delete;
    // Every row of `whole` (x x^T over at least the first L tokens), which must outlive this.
    explicit GramRows(const RowMatrixXd& whole) : whole_(&whole), x_(whole) {}
    // Rows of x x^T (x: (L, d), a matrix or a block of rows of one, which must outlive the
    // result), each computed when first read. Not for use by two threads at once.
    static GramRows computed_from(const Eigen::Ref<const RowMatrixXd>& x) { return GramRows(x, 0); }

    bool whole() const { return whole_ != nullptr; }
    // G(j, 0..): at least L values (contiguous).
    const double* row(int j) const;
    // G(i, i) for i < L: the whole matrix's diagonal, or |x_i|^2.
    Eigen::VectorXd diagonal(Eigen::Index L) const;

private:
    GramRows(const Eigen::Ref<const RowMatrixXd>& x, int) : x_(x), index_(static_cast<size_t>(x.rows()), -1) {}

    const RowMatrixXd* whole_ = nullptr;
    Eigen::Ref<const RowMatrixXd> x_;
    mutable std::vector<int> index_;             // token -> its row in rows_, or -1
    mutable std::vector<Eigen::VectorXd> rows_;  // the rows computed so far
};

}  // namespace attnlab
