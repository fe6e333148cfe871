"""The bare benchmark pages' model, loaded once per server process: a plain functools cache in an imported
module (it outlives each script run), so the app's ui/model_loader keeps the only Streamlit resource cache."""

import functools

from lab.models import load

model = functools.cache(load)
