"""The fossils table (fossils page, chapter 00): `lab.fossils.report()` (every fossil's configuration, exact
parameters split five ways, FLOPs, memory, cache, GPT-2's paper arithmetic) against the reference way to count
the same models: transformers' LM-head classes built from the same configurations on the meta device, and
`sum(p.numel())`. Target ratio 1.0: reading a configuration must not cost more than building the model.
"""

from __future__ import annotations

from lab.benchmarks import entry, side_by_side


def _reference() -> int:
    import torch
    from transformers import GPT2LMHeadModel, OpenAIGPTLMHeadModel, RobertaForMaskedLM

    from lab import fossils

    classes = {"openai-gpt": OpenAIGPTLMHeadModel, "gpt2": GPT2LMHeadModel, "roberta": RobertaForMaskedLM}
    total = 0
    for f in fossils.FOSSILS:
        with torch.device("meta"):
            model = classes[f.arch](fossils.config(f.name))
        total += sum(p.numel() for p in model.parameters())
    return total


def benchmarks() -> list[dict]:
    """The whole fossils report vs counting the same models' parameters on the meta device."""
    from lab import fossils

    lab_s, ref_s = side_by_side(fossils.report, _reference, repeats=3)
    return [entry("fossils: the whole table (12 models: parameters split five ways, FLOPs, memory, KV cache, GPT-2's "
                  "paper arithmetic) vs building the same models on the meta device and summing p.numel()", lab_s,
                  ref_s, 1.0)]
