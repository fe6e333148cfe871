"""What a page runs when the reader asks, drawing a progress bar while it runs: results kept process-wide by a
key (perplexity, the detector's set) or in the session (serving's measurements). Not st.cache_data: a progress
bar drawn inside a cached function would be replayed on every later hit."""
