"""The local web: an index served as a website on 127.0.0.1 (SearxNG-compatible search + one page per doc)."""
