"""Experiment protocols of the papers (reproductions)."""

from .srsvm import uci_timing, xor_toy
from .toys import dr_toy, drlsc_toy

__all__ = ["dr_toy", "drlsc_toy", "uci_timing", "xor_toy"]
