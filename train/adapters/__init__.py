"""Adapters once trained: the registry (registry.py: which is served, rollback), the eval gate and publishing
(publish.py), the starter adapter shipped in starter_adapter/ (starter.py), and adapter arithmetic on peft
files (soup.py: averaging, rank cut, scaling; `deepresearch adapters soup|compress|scale`).
"""
