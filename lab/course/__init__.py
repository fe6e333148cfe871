"""The course-model factory: how the offline models in models/ were made (chapters 08 and 15).

corpus (Debian documentation -> bilingual prose and token streams), tokenizer (GPT-2's BPE cut to
its first merges), train (decoder and encoder, `python -m lab train`), evaluate (held-out numbers,
`python -m lab course-eval`) and plots (the PNGs in docs/). The app's pages never import this.
"""
