"""Search backends: each turns a query into normalised hits or raises BackendFailure."""
