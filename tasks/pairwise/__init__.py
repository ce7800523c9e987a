"""Pairwise-judge tasks (Liu et al., "Aligning with Logic"): task YAML and the REPAIR data tool."""
