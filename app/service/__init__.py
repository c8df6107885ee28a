"""Service interfaces: the HTTP API (`deepresearch serve`) and the MCP server (`deepresearch mcp`).

Both start runs through one `RunManager` (manager.py), so a run started over HTTP or MCP is the same
graph, the same typed events and the same trace as one started by `ask` or the TUI. models.py bounds what
clients send; admission.py and errors.py decide which requests get in and how every refusal reads;
mcp_stdio.py answers every line an MCP client sends over stdio.
"""
