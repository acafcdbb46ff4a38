"""The one `--sut` parser (suts/spec.py) on hostile text: it round-trips what it renders, never
raises anything but a one-line ConfigError, and names the key it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from proctor.app.session import sut_spec
from proctor.errors import ConfigError
from proctor.suts import registry
from proctor.suts.spec import SutSpec, parse_sut_spec, quote

pytestmark = pytest.mark.fuzz

KEYS = st.from_regex(r"[A-Za-z0-9_.\-]{1,12}", fullmatch=True)
VALUES = st.text(max_size=40)  # anything: commas, quotes, backslashes, spaces, control characters
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
PAIRS = st.lists(st.tuples(KEYS, VALUES), max_size=6).map(tuple)


@st.composite
def specs(draw: st.DrawFn) -> SutSpec:
    kind = draw(st.sampled_from(["name", "module", "file"]))
    name, factory = draw(NAMES), draw(NAMES)
    if kind == "module" and name == "py":  # `pkg.py:f` is the file form by the grammar (a part ending
        name = "py_"  # in `.py` is a file): no module spec can be rendered so, so none is drawn
    target = {"name": name, "module": f"pkg.{name}:{factory}", "file": f"dir/{name}.py:{factory}"}[kind]
    return SutSpec(kind, target, draw(PAIRS))  # type: ignore[arg-type]


@given(specs())
def test_what_the_parser_renders_it_reads_back(spec: SutSpec) -> None:
    text = spec.render()
    back = parse_sut_spec(text)
    assert back == spec
    assert back.text == text and str(back) == text


@given(st.text(max_size=120))
def test_any_text_is_a_spec_or_one_bounded_line(text: str) -> None:
    try:
        spec = parse_sut_spec(text)
    except ConfigError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) < 400
        assert message.startswith("key '--sut': ")
        event("refused")
        return
    event(f"accepted as {spec.kind}")
    assert parse_sut_spec(spec.render()) == spec  # whatever it accepted, it writes back the same


@given(st.text(alphabet='ab,="\\ :', max_size=40))
def test_quote_like_text_is_a_spec_or_a_config_error(text: str) -> None:
    for candidate in (text, f"synthetic:{text}", f"synthetic:k={text}", f"m:f:k={text}"):
        try:
            spec = parse_sut_spec(candidate)
        except ConfigError as exc:
            assert "\n" not in str(exc)
            event("a form refused")
        else:
            assert parse_sut_spec(spec.render()) == spec
            event("a form accepted")


@given(VALUES)
def test_quote_reads_back_as_the_value(value: str) -> None:
    assert parse_sut_spec(f"x:k={quote(value)}").params == (("k", value),)


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ('openai:prompt="a, b",model=m', (("prompt", "a, b"), ("model", "m"))),
        ('openai:p="say \\"hi\\"",q=1', (("p", 'say "hi"'), ("q", "1"))),
        ('openai:p="C:\\dir\\x, y"', (("p", "C:\\dir\\x, y"),)),
        ('openai:p="back\\\\slash"', (("p", "back\\slash"),)),
        ("openai:url=http://h:1,,model=m,", (("url", "http://h:1"), ("model", "m"))),
        ('openai:p=a"b', (("p", 'a"b'),)),
        ('openai:p = "x" ,q=2', (("p", "x"), ("q", "2"))),
        ("pkg.mod:make:url=http://h:1", (("url", "http://h:1"),)),
    ],
)
def test_a_value_may_hold_a_comma_when_quoted(text: str, params: tuple[tuple[str, str], ...]) -> None:
    assert parse_sut_spec(text).params == params


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('synthetic:workers="4', "workers"),  # the quote is never closed
        ('synthetic:workers="4"x,total=8', "workers"),  # text after the closing quote
        ("synthetic:workers=4,oops", "oops"),  # no '='
        ("synthetic:wor kers=4", "wor kers"),  # not a name
        ("dir/sut.py", "dir/sut.py"),  # no factory
        (":x=1", ":x=1"),  # no SUT
    ],
)
def test_an_error_is_one_line_naming_the_key(text: str, named: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_sut_spec(text)
    assert named in str(info.value) and "\n" not in str(info.value)


def test_a_file_with_a_comma_in_its_name_is_a_dataset(tmp_path: Path) -> None:
    """`--dataset FILE` used to be refused for a ',' in the name; the spec now quotes it."""
    data = tmp_path / "a,b \"c\".jsonl"
    data.write_text("{}\n")
    spec = sut_spec("openai:url=http://h:1", data)
    assert spec.value("dataset") == str(data)
    assert parse_sut_spec(str(spec)) == spec
    with pytest.raises(ConfigError, match="given twice"):
        sut_spec(f"openai:dataset={quote(str(data))}", data)


def test_a_quoted_comma_reaches_the_factory(tmp_path: Path) -> None:
    factory = tmp_path / "my_sut.py"
    factory.write_text("def make(label='', n='1'):\n    return None, None\n")
    _, _, params = registry.factory_of(f'{factory}:make:label="a,b",n=2')
    assert params == {"label": "a,b", "n": "2"}
