"""Experiment protocols of the papers (reproductions)."""

from .srlsc import srlsc_usps
from .srsvm import bound_figure, uci_timing, xor_toy
from .toys import dr_toy, drlsc_toy

__all__ = ["bound_figure", "dr_toy", "drlsc_toy", "srlsc_usps", "uci_timing", "xor_toy"]
