"""Streamlit glue shared by the pages: language, sidebar, the one cached model loader."""
