"""How one page input travels in a link's query string: lab/link_codec.py, the one codec that links and lesson
files share (issue 51), re-exported under the name the pages and tests have used."""

from lab.link_codec import (  # noqa: F401  (re-exported)
    MAX_LINK_TEXT,
    Codec,
    LinkValueError,
    boolean,
    choice,
    choices,
    integer,
    real,
    text,
)
