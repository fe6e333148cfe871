"""A language model read as an AI-text detector (chapter 12): the scores, their evaluation, the labelled set."""
