"""Experiment protocols of the papers (reproductions)."""

from .toys import dr_toy, drlsc_toy

__all__ = ["dr_toy", "drlsc_toy"]
