"""The model a page opens on when nothing names one (issue 59: "GPT-2 first where it is there").

Its own module: it asks the hosting rules (lab.models.hosting), the memory budget (lab.models.budget) and the
cache (lab.models.hub), and lab.models itself needs none of them.
"""

from __future__ import annotations

from lab.models import DEFAULT_OFFLINE, PREFERRED, budget, hosting, hub, registry


def default_model() -> str:
    """PREFERRED (gpt2) when it loads here without the network (cached whole in the Hugging Face cache, as `python
    -m lab prefetch gpt2` or the hosted image leaves it: hub.is_available), this server offers it and it fits the
    memory budget; else DEFAULT_OFFLINE, as before. Cheap: a few cache look-ups and a weights header read, no model
    load. A link's ?model= and a lesson's model win over it."""
    if (hosting.offered(PREFERRED) and registry.info(PREFERRED).memory_bytes <= budget.budget_bytes()
            and hub.is_available(PREFERRED)):
        return PREFERRED
    return DEFAULT_OFFLINE
