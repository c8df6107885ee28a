"""How a document is read: its units (sentences, table rows, items, fields) as text, when each was written."""
