"""lab.embeddings and `python -m lab analogy / neighbours` against numpy, gensim and transformers' own layout."""

import gc
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from lab import embeddings as E
from lab.cli import main
from lab.testing import random_models

ROOT = Path(__file__).resolve().parents[1]
PLANT = ("king", "man", "woman", "queen")


def planted(arch: str):
    """A tiny random model whose embeddings make " king" − " man" + " woman" = " queen" by construction.

    Every other row is zero on the first four dimensions (so its cosine with the planted directions
    is 0); the four words live there: royal e0, male e1, female e2, and " queen" has a detour e3
    that makes the input " woman" score higher than " queen" itself when inputs are not excluded.
    """
    model, tok = random_models.build(arch, "tiny")
    ids = {w: tok(" " + w, add_special_tokens=False)["input_ids"] for w in PLANT}
    assert all(len(i) == 1 for i in ids.values())  # the plant needs single tokens
    ids = {w: i[0] for w, i in ids.items()}
    w = model.get_input_embeddings().weight  # this test's own model: planting is not mutating a shared one
    with torch.no_grad():
        w[:, :4] = 0
        rows = {"king": [1, 1, 0, 0], "man": [0, 1, 0, 0], "woman": [0, 0, 1, 0], "queen": [1, 0, 1, 1.2]}
        for word, row in rows.items():
            w[ids[word]] = 0
            w[ids[word], :4] = torch.tensor(row, dtype=w.dtype)
    return model, tok, ids


def numpy_scores(model, method: str, ids, eps: float = E.EPS_MUL) -> np.ndarray:
    """3CosAdd / 3CosMul written directly in float64 numpy from the raw embedding matrix."""
    w = model.get_input_embeddings().weight.detach().numpy().astype(np.float64)
    norms = np.linalg.norm(w, axis=1, keepdims=True)
    u = w / np.where(norms == 0, 1, norms)
    a, b, c = (u[i] for i in ids)
    if method == "add":
        q = a - b + c
        return u @ q / np.linalg.norm(q)
    ca, cb, cc = ((1 + u @ v) / 2 for v in (a, b, c))
    return ca * cc / (cb + eps)


@pytest.mark.parametrize("arch", ["gpt2", "roberta"])
@pytest.mark.parametrize("method", ["add", "mul"])
def test_planted_analogy_found_and_scores_match_numpy(arch, method):
    model, tok, ids = planted(arch)
    out = E.analogy(model, tok, "king", "man", "woman", k=5, method=method)
    assert out["tokens"] == [[ids["king"]], [ids["man"]], [ids["woman"]]]
    assert out["results"][0]["id"] == ids["queen"] and out["results"][0]["token"] == " queen"
    ref = numpy_scores(model, method, [ids[w] for w in PLANT[:3]])
    for r in out["results"]:
        assert r["score"] == pytest.approx(ref[r["id"]], abs=1e-5)
    q = E.analogy_scores(model, tok, "king", "man", "woman", method)
    np.testing.assert_allclose(q["scores"], ref[:len(q["scores"])], atol=1e-5)


def test_exclusion_on_and_off_as_documented():
    model, tok, ids = planted("gpt2")
    inputs = {ids["king"], ids["man"], ids["woman"]}
    on = E.analogy(model, tok, "king", "man", "woman", k=10)
    assert not inputs & {r["id"] for r in on["results"]}  # no input word among the answers
    off = E.analogy(model, tok, "king", "man", "woman", k=10, exclude=False)
    assert off["results"][0]["id"] == ids["woman"]  # the plant: c itself wins without exclusion
    assert off["results"][1]["id"] == ids["queen"]
    ref = numpy_scores(model, "add", [ids["king"], ids["man"], ids["woman"]])
    assert [r["id"] for r in off["results"][:2]] == list(np.argsort(-ref)[:2])
    q = E.analogy_scores(model, tok, "king", "man", "woman")
    rank = E.expected_rank(tok, q, "queen")
    assert (rank["rank"], rank["rank_all"]) == (1, 2)
    assert E.expected_rank(tok, q, "woman")["rank"] is None  # an input: excluded, no rank


def test_rank_and_top_against_numpy_sorting():
    rng = np.random.default_rng(0)
    s = rng.standard_normal(1000).astype(np.float32)
    order = np.argsort(-s, kind="stable")
    drop = set(order[:3].tolist())
    assert [i for i, _ in E.top(s, 7)] == order[:7].tolist()
    assert [i for i, _ in E.top(s, 7, drop)] == [i for i in order if i not in drop][:7]
    for pos in (0, 5, 500, 999):
        tid = int(order[pos])
        assert E.rank(s, tid) == pos + 1
        assert E.rank(s, tid, drop) == (None if tid in drop else pos + 1 - sum(1 for d in drop if s[d] > s[tid]))


def test_gensim_reproduces_3cosadd_and_3cosmul_on_a_hand_made_example():
    from gensim.models import KeyedVectors

    words = ["king", "queen", "man", "woman", "prince", "apple", "car", "girl"]
    vecs = np.array([[5, 1, 0.2], [4.8, -1, 0.1], [0.3, 2, -0.1], [0.2, -2.1, 0.3], [3, 1.5, 1],
                     [-1, 0.1, 4], [-2, -0.3, -3], [0.5, -1.5, 1]], dtype=np.float32)
    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(words, vecs)
    unit = torch.tensor(vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    vectors = [unit[words.index(w)] for w in ("king", "man", "woman")]
    add = E.cos_add(unit, vectors).numpy()
    np.testing.assert_allclose(add, kv.most_similar(positive=["king", "woman"], negative=["man"], topn=None), atol=1e-6)
    mul = E.cos_mul(unit, vectors, eps=1e-6).numpy()  # gensim's ε
    np.testing.assert_allclose(mul, kv.most_similar_cosmul(positive=["king", "woman"], negative=["man"], topn=None),
                               rtol=1e-5)
    inputs = {words.index(w) for w in ("king", "man", "woman")}
    for ours, theirs in ((add, kv.most_similar(positive=["king", "woman"], negative=["man"], topn=4)),
                         (mul, kv.most_similar_cosmul(positive=["king", "woman"], negative=["man"], topn=4))):
        assert [words[i] for i, _ in E.top(ours, 4, inputs)] == [w for w, _ in theirs]


@pytest.mark.parametrize("arch", ["gpt2", "roberta"])
def test_whole_vocabulary_agrees_with_gensim(arch):
    """A random tiny model's whole embedding matrix in gensim: same top 10, same scores, both methods."""
    from gensim.models import KeyedVectors

    model, tok = random_models.build(arch, "tiny", seed=3)
    w = model.get_input_embeddings().weight.detach().numpy()[:len(tok)]
    kv = KeyedVectors(vector_size=w.shape[1])
    kv.add_vectors([str(i) for i in range(len(w))], w)
    out = E.analogy(model, tok, "Paris", "France", "Italy", k=10)
    keys = [str(ids[0]) for ids in out["tokens"]]
    ref = kv.most_similar(positive=[keys[0], keys[2]], negative=[keys[1]], topn=10)
    assert [r["id"] for r in out["results"]] == [int(k) for k, _ in ref]
    np.testing.assert_allclose([r["score"] for r in out["results"]], [s for _, s in ref], atol=1e-5)
    mul = E.analogy(model, tok, "Paris", "France", "Italy", k=10, method="mul", eps=1e-6)
    ref = kv.most_similar_cosmul(positive=[keys[0], keys[2]], negative=[keys[1]], topn=10)
    assert [r["id"] for r in mul["results"]] == [int(k) for k, _ in ref]
    nb = E.neighbours(model, tok, "Paris", k=10)
    assert [r["id"] for r in nb["results"]] == [int(k) for k, _ in kv.most_similar(keys[0], topn=10)]


def test_the_matrix_is_the_models_own_input_embeddings():
    gpt2, _ = random_models.build("gpt2", "tiny")
    roberta, _ = random_models.build("roberta", "tiny")
    assert E.embedding_matrix(gpt2) is gpt2.transformer.wte.weight
    assert E.embedding_matrix(roberta) is roberta.roberta.embeddings.word_embeddings.weight


def test_unit_matrix_cached_once_never_mutates_and_dies_with_the_model():
    model, tok = random_models.build("gpt2", "tiny")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    config = model.config.to_dict()
    u = E.unit_matrix(model)
    assert E.unit_matrix(model) is u  # computed once
    w = model.get_input_embeddings().weight.detach().numpy()
    np.testing.assert_allclose(u.numpy(), w / np.linalg.norm(w, axis=1, keepdims=True), atol=1e-6)
    E.analogy(model, tok, "king", "man", "woman")
    E.neighbours(model, tok, "king")
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert model.config.to_dict() == config and not model.training
    n = len(E._UNIT)
    del model
    gc.collect()
    assert len(E._UNIT) == n - 1


def test_leading_space_and_multi_token_words():
    _, tok = random_models.build("gpt2", "tiny")
    assert E.lookup(tok, "king") == tok(" king")["input_ids"]
    assert E.lookup(tok, "  king ") == tok(" king")["input_ids"]  # trimmed
    assert E.lookup(tok, "king", space=False) == tok("king")["input_ids"] != E.lookup(tok, "king")
    with pytest.raises(E.EmbeddingError) as err:
        E.lookup(tok, "   ")
    assert err.value.reason == "empty"
    model, tok = random_models.build("gpt2", "tiny")
    ids = tok(" rainha")["input_ids"]
    assert len(ids) > 1  # Portuguese: several GPT-2 tokens
    with pytest.raises(E.EmbeddingError) as err:
        E.analogy(model, tok, "king", "man", "rainha")
    assert err.value.reason == "multi_token" and err.value.details["ids"] == ids
    assert "".join(err.value.details["pieces"]) == " rainha"
    out = E.analogy_scores(model, tok, "king", "man", "rainha", mean_pieces=True)
    w = model.get_input_embeddings().weight.detach().numpy().astype(np.float64)
    mean = w[ids].mean(0)
    np.testing.assert_allclose(out["vectors"][2], mean / np.linalg.norm(mean), atol=1e-6)
    assert out["tokens"][2] == ids
    assert E.excluded(out) == {*ids, *E.lookup(tok, "king"), *E.lookup(tok, "man")}  # every piece is an input


def test_pca_agrees_with_the_covariance_eigenvectors():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 40)) @ np.diag(np.linspace(3, 0.1, 40))
    coords, kept = E.pca2(x)
    centred = x - x.mean(0)
    vals, vecs = np.linalg.eigh(np.cov(centred.T))
    top = vecs[:, ::-1][:, :2]
    assert kept == pytest.approx(vals[::-1][:2].sum() / vals.sum(), rel=1e-9)
    np.testing.assert_allclose(np.abs(coords), np.abs(centred @ top), atol=1e-9)


def test_picture_keeps_the_parallelogram():
    model, tok, ids = planted("gpt2")
    q = E.analogy_scores(model, tok, "king", "man", "woman")
    pic = E.picture(model, q, E.top(q["scores"], 5, E.excluded(q)), tok)
    p = np.array([[pt["x"], pt["y"]] for pt in pic["points"]])
    np.testing.assert_allclose(p[0] - p[1], p[3] - p[2], atol=1e-9)  # b→a equals c→(a − b + c)
    assert [pt["role"] for pt in pic["points"][:5]] == ["a", "b", "c", "target", "result"]
    assert 0 < pic["kept"] <= 1


def test_every_preset_does_what_its_label_says_on_both_course_models():
    """Each preset's verdict (the selectbox label's claim) rerun on the shipped models with the page's defaults:
    "holds" = the expected word first; "fails" = asked, not first; "refused" = a word has no row of its own."""
    from lab.models import load

    seen = {}
    for name in ("course-gpt2", "course-roberta"):
        m = load(name)
        rare, _ = E.rare_rows(m.model, m.tokenizer)
        for key, (a, b, c, d, mean) in E.PRESETS.items():
            try:
                q = E.analogy_scores(m.model, m.tokenizer, a, b, c, mean_pieces=mean)
            except E.EmbeddingError:
                got = "refused"
            else:
                exp = E.expected_rank(m.tokenizer, q, d, leave_out=rare)
                got = "refused" if exp["rank_all"] is None else "holds" if exp["rank"] == 1 else "fails"
            seen[name, key] = got
            assert got == E.verdict(key), (name, key, got)
    assert seen["course-gpt2", "do_no"] == "holds" and E.PRESET_LANGUAGES["do_no"] == "pt"  # Portuguese holds


def run_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_analogy_and_neighbours_json(capsys, tiny_model_dirs):
    from lab.models import load

    path = str(tiny_model_dirs["gpt2"])
    m = load(path)
    out = run_json(capsys, "analogy", "--json", "--model", path, "king", "man", "woman", "--k", "4")
    assert set(out) == {"words", "tokens", "results", "left_out"} and out["words"] == ["king", "man", "woman"]
    assert out["tokens"] == [m.tokenizer(" " + w)["input_ids"] for w in ("king", "man", "woman")]
    assert len(out["results"]) == 4 and all(set(r) == {"token", "id", "score"} for r in out["results"])
    ref = numpy_scores(m.model, "add", [i[0] for i in out["tokens"]])
    ref[[i[0] for i in out["tokens"]]] = -np.inf
    assert [r["id"] for r in out["results"]] == list(np.argsort(-ref)[:4])
    assert [r["token"] for r in out["results"]] == [m.tokenizer.decode([r["id"]]) for r in out["results"]]
    mul = run_json(capsys, "analogy", "--json", "--model", path, "king", "man", "woman", "--method", "mul",
                   "--no-exclude", "--no-space", "--expected", "queen")
    assert mul["tokens"] == [m.tokenizer(w)["input_ids"] for w in ("king", "man", "woman")]
    assert set(mul["expected"]) == {"word", "tokens", "rank", "rank_without_exclusion"}
    ref = numpy_scores(m.model, "mul", [i[0] for i in mul["tokens"]])
    assert [r["id"] for r in mul["results"]] == list(np.argsort(-ref)[:10])
    nb = run_json(capsys, "neighbours", "--json", "--model", path, "king", "--k", "3")
    assert set(nb) == {"words", "tokens", "results", "left_out"} and len(nb["results"]) == 3
    enc = run_json(capsys, "neighbours", "--json", "--model", str(tiny_model_dirs["roberta"]), "rainha",
                   "--mean-pieces")
    assert len(enc["tokens"][0]) > 1 and not set(enc["tokens"][0]) & {r["id"] for r in enc["results"]}


@pytest.mark.parametrize("argv,message", [
    (["analogy", "king", "man", "rainha"], "is 2 tokens"),
    (["analogy", "king", " ", "woman"], "a word is empty"),
    (["neighbours", ""], "a word is empty"),
    (["analogy", "king", "man", "woman", "--k", "0"], "--k must be at least 1"),
])
def test_cli_bad_input_exits_2_with_one_line(tiny_model_dirs, argv, message):
    proc = subprocess.run([sys.executable, "-m", "lab", *argv, "--json", "--model", str(tiny_model_dirs["gpt2"])],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_charts_build():
    from viz import embeddings as viz

    model, tok, ids = planted("gpt2")
    q = E.analogy_scores(model, tok, "king", "man", "woman")
    best = E.top(q["scores"], 5, E.excluded(q))
    pic = E.picture(model, q, best, tok)
    spec = viz.analogy_chart(pic, "t", "keeps 50%").to_dict()
    assert spec["title"]["subtitle"] == "keeps 50%"
    bars = viz.scores_chart(E.results(tok, best), highlight=ids["queen"]).to_dict()
    assert "␣queen" in json.dumps(bars, ensure_ascii=False)


def test_picture_labels_do_not_overlap_on_the_course_model():
    """The 2D picture's labels, read back from the Vega-Lite spec's data and measured with a real font
    (DejaVu Sans 12 px through Pillow): no two label boxes overlap, on presets whose dots pile up."""
    from PIL import ImageFont

    from lab.models import load
    from viz import embeddings as viz

    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 12)
    m = load("course-gpt2")
    rare, _ = E.rare_rows(m.model, m.tokenizer, all_tokens=True)
    for words in (("king", "man", "woman"), ("files", "file", "user"), ("bigger", "big", "small")):
        q = E.analogy_scores(m.model, m.tokenizer, *words)
        pic = E.picture(m.model, q, E.top(q["scores"], 5, E.excluded(q) | rare), m.tokenizer)
        spec = viz.analogy_chart(pic, size=460).to_dict()
        rows = max((v for v in spec["datasets"].values() if v and "lx" in v[0]), key=len)
        scale = next(la["encoding"]["x"]["scale"]["domain"] for la in spec["layer"] if la["mark"]["type"] == "text")
        yscale = next(la["encoding"]["y"]["scale"]["domain"] for la in spec["layer"] if la["mark"]["type"] == "text")
        px = 460 / (scale[1] - scale[0])
        boxes = []
        for r in rows:
            left, top, right, bottom = font.getbbox(r["label"])
            x0, y0 = (r["lx"] - scale[0]) * px, (yscale[1] - r["ly"]) * px
            boxes.append((x0, y0 - 7, x0 + right - left, y0 + 7, r["label"]))
        assert len(boxes) == len(pic["points"]) >= 9
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
                assert apart, (words, a, b)
