"""Structure layer: graphs and the penalty matrices built from them."""

from .graphs import (
    between_class_graph,
    class_wise_graph,
    knn_graph,
    laplacian,
    other_class_graph,
    split_by_labels,
    unit_rows,
    within_class_graph,
)
from .penalties import (
    ClassScatterPenalty,
    ClusterScatterPenalty,
    LaplacianPenalty,
    Penalty,
    PrecomputedPenalty,
    build_penalties,
    combine,
    group_scatter,
    smallest_eigenvalue,
)

__all__ = [
    "ClassScatterPenalty",
    "ClusterScatterPenalty",
    "group_scatter",
    "LaplacianPenalty",
    "Penalty",
    "PrecomputedPenalty",
    "between_class_graph",
    "build_penalties",
    "smallest_eigenvalue",
    "class_wise_graph",
    "combine",
    "knn_graph",
    "laplacian",
    "other_class_graph",
    "split_by_labels",
    "unit_rows",
    "within_class_graph",
]
