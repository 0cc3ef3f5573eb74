"""Clustering layer used by structure builders: fuzzy c-means; Ward + knee point."""

from .fcm import FuzzyCMeans, fuzzy_cmeans
from .ward import class_clusters, kernel_ward_distances, l_method, merge_curve, ward_knee

__all__ = [
    "FuzzyCMeans",
    "class_clusters",
    "fuzzy_cmeans",
    "kernel_ward_distances",
    "l_method",
    "merge_curve",
    "ward_knee",
]
