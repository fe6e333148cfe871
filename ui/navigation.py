"""The app's navigation, read from the page manifest (lab/pages.py): one st.Page per entry, in its order.

Titles in the UI language; icons as Material Symbols names (app.py ships the page icon itself as a file). The
sidebar lists every page (expanded: no "View more"), in the course's order, so the newest pages are one click away
like the first ones. One flat list: Streamlit 1.67 draws navigation sections as <div>s inside the list's <ul>,
which a screen reader cannot read as one list (axe: list, listitem; docs/accessibility.md)."""

from __future__ import annotations

import streamlit as st

from lab import pages as manifest
from ui.i18n import t


def page(entry: manifest.Page) -> st.Page:
    """The manifest entry's st.Page: its script, its title in the UI language, its icon."""
    kw = {"default": True} if entry.default else {}
    return st.Page(entry.script, title=t(*entry.title), icon=f":material/{entry.icon}:", **kw)


def pages() -> list[st.Page]:
    """Every page of the manifest, in its order (st.navigation's list)."""
    return [page(entry) for entry in manifest.PAGES]
