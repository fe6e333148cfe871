"""Making a lesson in the app (docs/teaching.md): "Add this view to a lesson" in the sidebar records the page and
its inputs (what its link carries) with a note; the home page edits the draft (title, notes, order), downloads it
as a lesson file and uploads one back. The draft lives in the session; a file that cannot be used leaves it as it
was and says why. The file format and its checks are lab/lessons.py's: an upload is checked like a shipped file.
"""

from __future__ import annotations

import itertools
import re
import secrets
import threading
import unicodedata
from collections import OrderedDict

import streamlit as st

from lab import lessons
from ui import messages, url_state
from ui.i18n import lang, num, t
from ui.model_loader import MODEL_KEY
from viz.format import markdown_literal

# Streamlit's uploader writes its own words in English ("Upload", "200MB per file"): in Portuguese a script puts the
# app's words in their place (the text itself, so a screen reader reads them too), again whenever React redraws them
UPLOADER_PT = """<script>
(() => {
  const root = (window.parent || window).document;
  const words = {"Upload": "Enviar", "200MB per file": "Até 200 KB por arquivo · YAML, YML"};
  const fix = () => root.querySelectorAll(".st-key-maker_upload p, .st-key-maker_upload span").forEach((e) => {
    if (e.children.length === 0 && words[e.textContent.trim()]) e.textContent = words[e.textContent.trim()]; });
  fix();
  const box = root.querySelector(".st-key-maker_upload");
  if (box && !box.__ptWords) { box.__ptWords = new MutationObserver(fix); box.__ptWords.observe(box,
    {childList: true, subtree: true, characterData: true}); }
})();
</script>"""
DRAFT = "lesson_draft"  # session: {"title": {en, pt}, "model", "steps": [{"id", "step": a file's step}]}
NOTICE = "_lesson_maker_notice"  # session: (kind, words) shown once by the editor or the sidebar
_ids = itertools.count(1)  # a step's widgets keep their keys when the steps are reordered
DEFAULT_TITLE = {"en": "My lesson", "pt": "Minha lição"}
# A reload keeps the draft: the browser holds a random id (a cookie, this app only), this process the draft under
# it (the session's own dict, so every edit is kept as it is made). At most KEPT drafts, the oldest dropped first;
# another replica of a hosted demo does not have it (docs/teaching.md).
COOKIE, KEPT = "lab_draft", 200
_kept: OrderedDict[str, dict] = OrderedDict()
_kept_lock = threading.Lock()


def _draft() -> dict:
    if DRAFT not in st.session_state:
        st.session_state[DRAFT] = {"title": dict(DEFAULT_TITLE), "model": st.session_state.get(MODEL_KEY), "steps": []}
        _keep(st.session_state[DRAFT])
    return st.session_state[DRAFT]


def _keep(draft: dict) -> None:
    """Keep `draft` for this browser (its cookie's id, made now when it has none)."""
    who = (st.context.cookies or {}).get(COOKIE) or st.session_state.setdefault("_draft_id", secrets.token_hex(12))
    with _kept_lock:
        _kept[who] = draft
        _kept.move_to_end(who)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    if not (st.context.cookies or {}).get(COOKIE):
        st.session_state["_draft_cookie"] = who


def restore() -> None:
    """After a reload: this browser's draft, if this process kept it (app.py calls this on every run; cheap)."""
    if DRAFT in st.session_state:
        return
    who = (st.context.cookies or {}).get(COOKIE)
    with _kept_lock:
        found = _kept.get(who) if who else None
    if found is not None:
        st.session_state[DRAFT] = found


def _cookie() -> None:
    """Write the draft's cookie (a script; the page has no other way to set one), on every run of the editor until
    the browser sends it: a run cut short by the next one may never have shown the script, and a reload then
    finds no draft."""
    who = st.session_state.get("_draft_cookie")
    if who and (st.context.cookies or {}).get(COOKIE) != who:
        st.html(f"<script>(window.parent || window).document.cookie = '{COOKIE}={who}; path=/; max-age=604800; "
                "SameSite=Strict';</script>", unsafe_allow_javascript=True)


def _add(here: str) -> None:
    """The view now shown (its page and the inputs its link carries) as the draft's last step."""
    draft = _draft()
    if len(draft["steps"]) >= lessons.MAX_STEPS:
        st.session_state[NOTICE] = ("warning", t(f"A lesson has at most {lessons.MAX_STEPS} steps.",
                                                 f"Uma lição tem no máximo {lessons.MAX_STEPS} passos."))
        return
    k = len(draft["steps"]) + 1
    note = (st.session_state.get("maker_note") or "").strip()[:lessons.MAX_WORDS] or t(f"Step {k}.", f"Passo {k}.")
    params = url_state.address()
    draft["steps"].append({"id": next(_ids), "step": lessons.step_data(here, params, {"en": note, "pt": note})})
    st.session_state["maker_note"] = ""
    st.session_state[NOTICE] = ("success", t(f"Added as step {k}. Edit the draft on the home page.",
                                             f"Adicionada como passo {k}. Edite o rascunho na página inicial."))


def add_view(here: str) -> None:
    """The sidebar's part: a note and "Add this view to a lesson" (`here`: the page's url path)."""
    if here not in lessons.PAGES:
        return
    with st.sidebar.expander(t("Make a lesson", "Montar uma lição")):
        st.text_input(t("Note for the teacher (this step)", "Nota para o professor (este passo)"), key="maker_note",
                      max_chars=lessons.MAX_WORDS)
        st.button(t("Add this view to a lesson", "Adicionar esta vista a uma lição"), key="maker_add",
                  on_click=_add, args=(here,), icon=":material/playlist_add:")
        steps = len(st.session_state.get(DRAFT, {}).get("steps", []))
        if NOTICE in st.session_state and here != "home":
            kind, words = st.session_state.pop(NOTICE)
            getattr(st, kind)(words)
        if steps:
            st.page_link("app_pages/home.py", label=t(f"Edit the draft ({steps_words(steps)})",
                                                      f"Editar o rascunho ({steps_words(steps)})"),
                         icon=":material/edit:")


def steps_words(n: int) -> str:
    """"1 step" / "3 steps" ("1 passo" / "3 passos")."""
    return t(f"{n} step" + "s" * (n != 1), f"{n} passo" + "s" * (n != 1))


def file_name(title: str) -> str:
    """A lesson's file name from its title: lowercase letters, digits and dashes (lab.lessons.NAME), accents
    dropped ("Atenção, passo a passo" -> "atencao-passo-a-passo")."""
    plain = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")[:60].strip("-")
    return slug if lessons.NAME.fullmatch(slug or "-") else "my-lesson"


def checked(draft: dict) -> lessons.Lesson:
    """The draft as a lesson, checked as a file is (LessonError names the step and field)."""
    data = {"title": draft["title"], **({"model": draft["model"]} if draft.get("model") else {}),
            "steps": [s["step"] for s in draft["steps"]]}
    return lessons.parse(data, file_name(draft["title"][lang()]), lessons.registry_models())


def _upload() -> None:
    """An uploaded file becomes the draft when it is a lesson; otherwise the draft stays and the notice says why."""
    f = st.session_state.get("maker_upload")
    if f is None:
        return
    try:
        lesson = lessons.from_bytes(f.getvalue(), file_name(f.name.rsplit(".", 1)[0]), f.name)
    except lessons.LessonError as e:
        st.session_state[NOTICE] = ("error", t("This file is not a lesson the app can use; your draft is unchanged. ",
                                               "Este arquivo não é uma lição que o app possa usar; seu rascunho "
                                               "continua como estava. ") + messages.text(e))
        return
    data = lessons.data(lesson)
    st.session_state[DRAFT] = {"title": data["title"], "model": data.get("model"),
                               "steps": [{"id": next(_ids), "step": s} for s in data["steps"]]}
    _keep(st.session_state[DRAFT])
    st.session_state[NOTICE] = ("success", t(f"Loaded: {steps_words(len(lesson.steps))}.",
                                             f"Carregada: {steps_words(len(lesson.steps))}."))


def _moved(i: int, by: int) -> None:
    steps = st.session_state[DRAFT]["steps"]
    if 0 <= i + by < len(steps):
        steps[i], steps[i + by] = steps[i + by], steps[i]


def _removed(i: int) -> None:
    del st.session_state[DRAFT]["steps"][i]


def _edited(where: dict, field: str, key: str) -> None:
    """A text box's new value into the draft (`where[field]`); a title typed in one language also becomes the
    other's while that one is still the default (a Portuguese teacher's lesson is not titled "My lesson")."""
    where[field] = st.session_state[key]
    if where is st.session_state.get(DRAFT, {}).get("title"):
        for code in lessons.LANGS:
            if code != field and where[code] == DEFAULT_TITLE[code]:
                where[code] = st.session_state[f"maker_title_{code}"] = where[field]  # the box shows it too


def _words(where: dict, key: str, label: str) -> None:
    """Two text boxes, English and Portuguese, bound to `where` ({en, pt}); the UI language's first."""
    for code in sorted(lessons.LANGS, key=lambda c: c != lang()):
        st.text_input(f"{label} ({code})", value=where[code], key=f"{key}_{code}", max_chars=lessons.MAX_WORDS,
                      on_change=_edited, args=(where, code, f"{key}_{code}"))


def _step_row(i: int, item: dict, n: int) -> None:
    """One step of the draft: its page and inputs, its notes, and up, down, remove."""
    step = item["step"]
    with st.container(border=True, key=f"maker_step_{item['id']}"):
        head, up, down, out = st.columns([8, 1, 1, 1], vertical_alignment="center")
        shown = ", ".join(f"{k}={v[:60]}" for k, v in lessons.link_params(lessons.Step(**step)).items())
        head.markdown(f"**{i + 1}.** `{step['page']}`" + (f" · {markdown_literal(shown)}" if shown else ""))
        up.button("↑", key=f"maker_up_{item['id']}", on_click=_moved, args=(i, -1), disabled=i == 0,
                  help=t("Move up", "Subir"))
        down.button("↓", key=f"maker_down_{item['id']}", on_click=_moved, args=(i, 1), disabled=i == n - 1,
                    help=t("Move down", "Descer"))
        out.button("✕", key=f"maker_out_{item['id']}", on_click=_removed, args=(i,), help=t("Remove", "Remover"))
        _words(step["note"], f"maker_note_{item['id']}", t("Teacher's note", "Nota para o professor"))


def editor() -> None:
    """The home page's part: upload a lesson file, or edit the draft and download it."""
    st.subheader(t("Make your own lesson", "Monte a sua lição"))
    st.caption(t("On any page, open \"Make a lesson\" in the sidebar and add the view you see: its page and inputs "
                 "become a step. Edit the draft here, download it as a file, share it; a file uploaded here is "
                 "checked like a shipped lesson.",
                 "Em qualquer página, abra \"Montar uma lição\" na barra lateral e adicione a vista que você vê: a "
                 "página e as entradas viram um passo. Edite o rascunho aqui, baixe-o como arquivo, compartilhe; "
                 "um arquivo enviado aqui é verificado como uma lição do app."))
    _cookie()
    # no type=: Streamlit's own refusal ("application/octet-stream files are not allowed") is English only; the
    # file's name is checked with the rest (lab.lessons.from_bytes), in the reader's language
    kb = num(lessons.MAX_FILE_BYTES // 1000)
    st.file_uploader(t("Upload a lesson file (.yaml)", "Enviar um arquivo de lição (.yaml)"), key="maker_upload",
                     on_change=_upload, help=t(f"A lesson file, .yaml or .yml, up to {kb} KB.",
                                               f"Um arquivo de lição, .yaml ou .yml, de até {kb} KB."))
    if lang() == "pt":
        st.html(UPLOADER_PT, unsafe_allow_javascript=True)
    if NOTICE in st.session_state:
        kind, words = st.session_state.pop(NOTICE)
        getattr(st, kind)(words)
        st.toast(words, icon="⚠️" if kind != "success" else "✅")  # seen where the teacher is, scrolled or not
    draft = st.session_state.get(DRAFT)
    if not draft or not draft["steps"]:
        st.caption(t("No draft yet.", "Nenhum rascunho ainda."))
        return
    _words(draft["title"], "maker_title", t("Title", "Título"))
    for i, item in enumerate(draft["steps"]):
        _step_row(i, item, len(draft["steps"]))
    try:
        lesson = checked(draft)
    except lessons.LessonError as e:
        st.warning(t("The draft cannot be saved yet: ", "O rascunho ainda não pode ser salvo: ") + messages.text(e))
        return
    st.download_button(t("Download the lesson file", "Baixar o arquivo da lição"), lessons.dumps(lesson),
                       file_name=f"{lesson.name}.yaml", mime="application/x-yaml", key="maker_download",
                       on_click="ignore", icon=":material/download:")
