"""Clustering layer used by structure builders: fuzzy c-means; later Ward + knee point."""

from .fcm import FuzzyCMeans, fuzzy_cmeans

__all__ = ["FuzzyCMeans", "fuzzy_cmeans"]
