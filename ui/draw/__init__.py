"""What pages draw: widget groups and page sections that call Streamlit (their data comes from ui.cached)."""
