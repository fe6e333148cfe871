"""The course lab: every computation the app shows, importable without Streamlit.

`python -m lab <command>` is the lab guide in executable form (see lab/cli/).
"""
