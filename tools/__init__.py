"""The executors' hands: search, local index and local web, browser, code sandbox, memory, user files."""
