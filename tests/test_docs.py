"""The definitions page, docs/measures.md, covers every measure, and every pointer into it
from the source names a section that exists."""

import inspect
import re
from pathlib import Path

import pytest

import sapwood
from sapwood import importance, selection

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "measures.md"
SOURCE = Path(sapwood.__file__).resolve().parent
# "docs/measures.md, section 'Held-out permutation importance'", possibly wrapped over
# lines of a docstring.
POINTER = re.compile(r"docs/measures\.md,\s+section\s+'([^']+)'")
# The measures today. A new public function that returns an ImportanceResult or a
# BorutaResult is found without this list; the list only guards the finding itself.
KNOWN_MEASURES = {
    "altmann_pvalues", "boruta", "conditional_permutation_importance",
    "drop_column_importance", "friedman_importance", "air",
    "janitza_pvalues", "mdi", "native_importance", "oob_permutation_importance",
    "permutation_importance", "tree_shap", "ufi",
}


def _one_line(text):
    return " ".join(text.split())


def headings(text):
    """The section titles of a Markdown page (any level), whitespace collapsed."""
    return {_one_line(line.lstrip("#")) for line in text.splitlines()
            if re.match(r"#{1,6} ", line)}


def pointers(text):
    """The section titles ``text`` points to."""
    return [_one_line(title) for title in POINTER.findall(text)]


def _returns_a_result(function):
    """Whether ``function`` computes a measure: it returns an ImportanceResult or a
    BorutaResult, by its annotation or its docstring's Returns section."""
    annotation = inspect.signature(function).return_annotation
    if annotation in (importance.ImportanceResult, selection.BorutaResult, "ImportanceResult",
                      "BorutaResult"):
        return True
    match = re.search(r"Returns\n\s*-+\n\s*(\S+)", inspect.getdoc(function) or "")
    return match is not None and match.group(1) in ("ImportanceResult", "BorutaResult")


def public_measures():
    found = {}
    for module in (importance, selection):
        for name in module.__all__:
            member = getattr(module, name)
            if inspect.isfunction(member) and _returns_a_result(member):
                found[name] = member
    return found


MEASURES = public_measures()


def test_the_helpers_find_what_they_should():
    page = "# Title\n## A (b `c`)\ntext ## not a heading\n### D  e\n"
    assert headings(page) == {"Title", "A (b `c`)", "D e"}
    assert pointers("see docs/measures.md, section\n    'Long\n    title'.") == ["Long title"]
    assert pointers("docs/measures.md (section 'x')") == []


def test_every_current_measure_is_found():
    assert KNOWN_MEASURES <= set(MEASURES), KNOWN_MEASURES - set(MEASURES)
    assert "compare" not in MEASURES and "side_by_side" not in MEASURES


@pytest.mark.parametrize("name", sorted(MEASURES))
def test_every_measure_points_to_its_section(name):
    sections = headings(PAGE.read_text(encoding="utf-8"))
    named = pointers(inspect.getdoc(MEASURES[name]) or "")
    assert named, (f"{name}'s docstring has no \"Definition: docs/measures.md, section "
                   f"'...'\" line")
    missing = [title for title in named if title not in sections]
    assert not missing, f"{name} points to sections docs/measures.md lacks: {missing}"


def test_every_pointer_in_the_source_names_a_section():
    sections = headings(PAGE.read_text(encoding="utf-8"))
    seen = 0
    broken = []
    for path in sorted(SOURCE.rglob("*.py")):
        for title in pointers(path.read_text(encoding="utf-8")):
            seen += 1
            if title not in sections:
                broken.append(f"{path.relative_to(SOURCE)}: {title!r}")
    assert seen >= len(KNOWN_MEASURES)
    assert not broken, "pointers to missing sections of docs/measures.md:\n" + "\n".join(
        broken)


def test_no_source_cites_the_spec_outside_the_repository():
    citing = [str(path.relative_to(SOURCE)) for path in sorted(SOURCE.rglob("*.py"))
              if "MEASURES.md" in path.read_text(encoding="utf-8")]
    assert not citing, f"cite docs/measures.md instead of MEASURES.md in {citing}"


def test_every_measure_section_cites_a_reference():
    """Each section a measure points to names its source: a DOI, an arXiv number, or
    the library whose numbers it reproduces."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.split(r"^## ", text, flags=re.MULTILINE)
    by_title = {_one_line(block.split("\n", 1)[0]): block for block in blocks[1:]}
    for name, function in MEASURES.items():
        for title in pointers(inspect.getdoc(function) or ""):
            block = by_title.get(title)
            assert block is not None, f"{name}: {title!r} is not a level-2 section"
            assert re.search(r"doi:10\.\d{4,}/\S+|arXiv:\d{4}\.\d{4,5}", block), (
                f"section {title!r} ({name}) cites no DOI or arXiv number")


@pytest.mark.parametrize("name", sorted(importance.MEASURES))
def test_every_registered_measure_points_to_its_section(name):
    sections = headings(PAGE.read_text(encoding="utf-8"))
    function = getattr(importance, importance.MEASURES[name].function)
    named = pointers(inspect.getdoc(function) or "")
    assert named and all(title in sections for title in named), (name, named)
