"""Service interfaces: the HTTP API (`deepresearch serve`) and the MCP server (`deepresearch mcp`).

Both start runs through one `RunManager` (runs.py), so a run started over HTTP or MCP is the same
graph, the same typed events and the same trace as one started by `ask` or the TUI.
"""
