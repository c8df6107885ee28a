"""The report of an open question (explain, compare, summarise, list), and of any question with
agent.report.style = written: shape.py says which report a question gets; extractive.py and written.py build its
sections, sentence_check.py checks every line, compose.py puts it together, render.py writes its markdown.

Nothing is imported here: the graph's events import report_events.py, which must not pull the rest in.
"""
