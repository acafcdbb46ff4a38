"""The LLM dataset readers besides JSONL: ShareGPT, CSV, Parquet, pickled DataFrames, lengths files.
Each error is one line naming the file (and row) and what to do; hostile files never raise anything
else, never hang, and are read under proctor's bounds."""

from __future__ import annotations

import builtins
import importlib.util
import json
import pickle
import sys

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients import llm_formats
from proctor.clients.llm_dataset import LLMSample, parse_length, read_lengths, synthetic
from proctor.clients.llm_formats import (
    Columns,
    conversation_sample,
    format_of,
    load_csv,
    load_dataset,
    load_file,
    load_pickle,
    load_sharegpt,
    samples_of_rows,
)
from proctor.clients.openai import from_params
from proctor.errors import ConfigError

HAS_PANDAS = importlib.util.find_spec("pandas") is not None
HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None


def one_line(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


# --- ShareGPT ---------------------------------------------------------------------------------------


def conv(*turns: tuple[str, str]) -> dict:
    return {"id": "x", "conversations": [{"from": r, "value": v} for r, v in turns]}


def test_sharegpt_first_human_turn_is_the_prompt_and_first_gpt_turn_the_output(tmp_path):
    path = tmp_path / "sg.json"
    data = [
        conv(("system", "be nice"), ("human", "hi there"), ("gpt", "hello"), ("human", "more"), ("gpt", "no")),
        conv(("gpt", "I start"), ("human", "q"), ("gpt", "a")),
        {"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "v"}]},
        conv(("human", "only a question")),
        conv(("gpt", "no human here")),  # skipped
        {"conversations": "nope"},  # skipped
        [1, 2],  # skipped
        conv(("human", "")),  # skipped: empty prompt
    ]
    path.write_bytes(orjson.dumps(data))
    loaded = load_sharegpt(path)
    assert loaded.samples == [
        LLMSample(prompt="hi there", output="hello", system="be nice"),  # a system turn: the system prompt
        LLMSample(prompt="q", output="a"),
        LLMSample(prompt="u", output="v"),
        LLMSample(prompt="only a question"),
    ]
    assert loaded.skipped == 4 and loaded.first_skip == "conversation 5: no human turn"
    assert load_file(path).samples == loaded.samples  # .json: records, ShareGPT by their conversations


def test_sharegpt_jsonl_and_all_malformed(tmp_path):
    path = tmp_path / "sg.jsonl"
    path.write_bytes(orjson.dumps(conv(("human", "a"), ("gpt", "b"))) + b"\n{bad\n\n")
    loaded = load_file(path, "sharegpt")
    assert loaded.samples == [LLMSample(prompt="a", output="b")] and loaded.skipped == 1
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps([conv(("gpt", "x")), {"x": 1}]))
    with pytest.raises(ConfigError) as exc:
        load_sharegpt(bad)
    assert one_line(exc).startswith(f"{bad}: the dataset holds no conversation with a human turn (2 skipped")
    broken = tmp_path / "broken.json"
    broken.write_bytes(b"[{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_sharegpt(broken)


def test_the_openai_sut_takes_a_sharegpt_file_and_says_what_it_skipped(tmp_path, caplog):
    path = tmp_path / "sg.json"
    path.write_bytes(orjson.dumps([conv(("human", "a"), ("gpt", "b")), conv(("gpt", "x"))]))
    sut, qsl = from_params(url="http://127.0.0.1:9", dataset=str(path), preflight="0")
    try:
        assert qsl.samples == [LLMSample(prompt="a", output="b")] and qsl.name == "sg.json"
    finally:
        sut.close()
    assert "1 conversation(s) skipped (first: conversation 2: no human turn)" in caplog.text


@pytest.mark.fuzz
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                    lambda x: st.lists(x, max_size=4) | st.dictionaries(
                        st.sampled_from(["conversations", "messages", "from", "value", "role", "content",
                                         "human", "gpt"]), x, max_size=4), max_leaves=25))
def test_a_conversation_of_any_shape_is_a_sample_or_a_reason(obj):
    s = conversation_sample(obj)
    assert isinstance(s, str) or (isinstance(s, LLMSample) and s.prompt)


# --- CSV --------------------------------------------------------------------------------------------


def test_csv_with_named_columns(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('\ufeffid,question,answer,budget\n1,"what, if",yes,5\n2,"multi\nline",,\n\n3,plain,no,7\n',
                    encoding="utf-8")
    cols = Columns(prompt="question", output="answer", max_tokens="budget")
    assert load_csv(path, cols).samples == [
        LLMSample(prompt="what, if", output="yes", max_tokens=5),
        LLMSample(prompt="multi\nline"),
        LLMSample(prompt="plain", output="no", max_tokens=7),
    ]
    default = tmp_path / "p.csv"
    default.write_text("prompt,output,max_tokens\nhi,there,3\n")
    assert load_file(default).samples == [LLMSample(prompt="hi", output="there", max_tokens=3)]


@pytest.mark.parametrize(
    ("text", "cols", "words"),
    [
        ("q,a\nx,y\n", Columns(), "no prompt column: expected prompt or input_ids (proctor); conversations or "
         "messages (ShareGPT); input or input_text or tok_input or input_tokens (MLPerf llama2-70b, llama3.1, "
         "gpt-oss-120b); question (OpenOrca) (columns: q, a); name it with prompt_column= or input_ids_column="),
        ("q,a\nx,y\n", Columns(prompt="q", output="b"), "no column 'b' (columns: q, a); fix output_column="),
        ("prompt,max_tokens\nx,0\n", Columns(), ":2: column 'max_tokens' must be an integer 1..1000000"),
        ("prompt,max_tokens\nx,1\ny,abc\n", Columns(), ":3: column 'max_tokens' must be an integer"),
        ("prompt,output\nx,y\n,z\n", Columns(), ":3: column 'prompt' is empty"),
        ('prompt,max_tokens\n"a\nb",1\n"c",x\n', Columns(), ":4: column 'max_tokens' must be an integer"),
        ("prompt\nx,y\n", Columns(), ":2: 2 fields where the header names 1"),
        ("", Columns(), "no header row"),
        ("prompt\n", Columns(), "the dataset holds no samples"),
    ],
)
def test_bad_csv_is_named_by_file_and_row(tmp_path, text, cols, words):
    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_csv(path, cols)
    assert one_line(exc).startswith(str(path)) and words in str(exc.value)


def test_files_over_the_bounds_are_refused_unread(tmp_path, monkeypatch):
    # the size is checked before a byte is parsed: a huge file costs no memory
    monkeypatch.setattr(llm_formats, "MAX_JSON_BYTES", 1 << 20)
    monkeypatch.setattr(llm_formats, "MAX_FILE_BYTES", 1 << 20)
    for name in ("big.json", "big.csv", "big.pkl"):
        path = tmp_path / name
        with open(path, "wb") as f:
            f.truncate((1 << 20) + 1)
        with pytest.raises(ConfigError) as exc:
            load_file(path, allow_pickle=True)
        assert one_line(exc) == f"{path}: the file is over 1 MiB; split the dataset"


def test_csv_not_utf8_and_a_huge_field(tmp_path, monkeypatch):
    path = tmp_path / "d.csv"
    path.write_bytes(b"prompt\nok\n\xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8 text; save the CSV as UTF-8"):
        load_csv(path)
    monkeypatch.setattr(llm_formats, "MAX_LINE_BYTES", 64)
    path.write_text("prompt\n" + "x" * 100 + "\n")
    with pytest.raises(ConfigError, match="not valid CSV"):
        load_csv(path)


@pytest.mark.fuzz
@given(st.binary(max_size=300) | st.text(',"\n\r a1\x00\u00e9', max_size=60).map(str.encode))
def test_csv_reader_takes_any_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("c") / "d.csv"
    path.write_bytes(b"prompt,output,max_tokens\n" + raw)
    try:
        loaded = load_csv(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert all(s.prompt for s in loaded.samples)


@pytest.mark.fuzz
@given(st.binary(max_size=300), st.sampled_from(["d.json", "d.jsonl"]))
def test_json_readers_take_any_bytes(tmp_path_factory, raw, name):
    path = tmp_path_factory.mktemp("s") / name
    path.write_bytes(raw)
    try:
        loaded = load_file(path)  # sniffed, then ShareGPT or JSONL
    except ConfigError as exc:
        assert str(exc).startswith(str(path))
    else:
        assert loaded.samples and all(s.prompt for s in loaded.samples)


cells = st.none() | st.booleans() | st.integers(-5, 2**40) | st.floats() | st.text(max_size=5) | st.lists(
    st.integers(-2, 2**33) | st.floats() | st.text(max_size=2), max_size=4)


@pytest.mark.fuzz
@given(st.lists(st.dictionaries(st.sampled_from(["prompt", "output", "max_tokens", "ids"]), cells), max_size=5))
def test_rows_of_any_cells_are_samples_or_a_named_row(rows):
    try:
        out = samples_of_rows(enumerate(rows, 1), ["prompt", "output", "max_tokens", "ids"], Columns(input_ids="ids"),
                              "t.pq").samples
    except ConfigError as exc:
        assert str(exc).startswith("t.pq")
    else:
        for s in out:
            assert s.prompt or s.input_ids
            assert s.max_tokens is None or 1 <= s.max_tokens <= 1_000_000


# --- format choice ----------------------------------------------------------------------------------


def test_format_by_extension_or_given(tmp_path):
    assert [format_of(f"x{e}") for e in (".jsonl", ".JSON", ".csv", ".parquet", ".pkl")] == [
        "jsonl", "json", "csv", "parquet", "pickle"]
    assert format_of("x.txt", "csv") == "csv"
    with pytest.raises(ConfigError, match=r"x.txt: cannot tell the dataset format from '.txt': give format="):
        format_of("x.txt")
    with pytest.raises(ConfigError, match="format='xml': expected one of jsonl, json, sharegpt"):
        format_of("x.csv", "xml")
    path = tmp_path / "data.txt"
    path.write_text("prompt\nhello\n")
    sut, qsl = from_params(url="http://127.0.0.1:9", dataset=str(path), format="csv", preflight="0")
    sut.close()
    assert qsl.samples == [LLMSample(prompt="hello")]


def test_json_and_jsonl_are_told_apart_by_their_content(tmp_path):
    prompts = tmp_path / "prompts.json"  # proctor's JSONL under a .json name (read as JSONL before)
    prompts.write_bytes(b'{"prompt": "a", "output": "b"}\n{"prompt": "c"}\n')
    assert load_file(prompts).samples == [LLMSample(prompt="a", output="b"), LLMSample(prompt="c")]
    convs = tmp_path / "sharegpt.jsonl"  # ShareGPT one conversation per line
    convs.write_bytes(orjson.dumps(conv(("human", "q"), ("gpt", "a"))) + b"\n")
    assert load_file(convs).samples == [LLMSample(prompt="q", output="a")]
    with pytest.raises(ConfigError, match="needs 'prompt'"):  # an explicit format is not second-guessed
        load_file(convs, "jsonl")


# --- Parquet ----------------------------------------------------------------------------------------


def test_parquet_without_pyarrow_is_one_line_with_the_install_hint(tmp_path, monkeypatch):
    for name in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)  # as where it is not installed: the import fails
    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(ConfigError) as exc:
        load_file(path)
    assert one_line(exc) == f"{path}: a Parquet dataset needs pyarrow: pip install proctor[parquet]"


@pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow (the optional extra 'parquet') is not installed")
def test_parquet_with_named_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"q": ["a", "b"], "ids": [[1, 2], [3]], "n": [4, None]}), path)
    assert load_file(path, cols=Columns(prompt="q", max_tokens="n")).samples == [
        LLMSample(prompt="a", max_tokens=4), LLMSample(prompt="b")]
    assert load_file(path, cols=Columns(prompt="zz", input_ids="ids")).samples == [
        LLMSample(input_ids=(1, 2)), LLMSample(input_ids=(3,))]
    path.write_bytes(b"PAR1 not parquet")
    with pytest.raises(ConfigError, match="not a readable Parquet file"):
        load_file(path)


# --- the official pickled DataFrames ----------------------------------------------------------------


def test_a_pickle_is_refused_without_allow_pickle_and_says_why(tmp_path):
    path = tmp_path / "open_orca.pkl"
    path.write_bytes(pickle.dumps({"x": 1}))
    with pytest.raises(ConfigError) as exc:
        load_file(path)
    assert one_line(exc) == (f"{path}: loading a pickle runs code from the file: give allow_pickle=1 "
                             "(--allow-pickle) only for a file you trust")
    with pytest.raises(ConfigError, match="allow_pickle=1"):  # through the SUT's parameters too
        from_params(url="http://127.0.0.1:9", dataset=str(path), preflight="0")


def test_a_pickle_without_pandas_is_one_line_with_the_install_hint(tmp_path, monkeypatch):
    path = tmp_path / "d.pkl"
    path.write_bytes(b"x")
    real = builtins.__import__

    def no_pandas(name, *a, **kw):
        if name == "pandas":
            raise ImportError("no pandas")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    monkeypatch.setattr(llm_formats.importlib, "import_module", lambda m: no_pandas(m))
    with pytest.raises(ConfigError) as exc:
        load_pickle(path, allow_pickle=True)
    assert one_line(exc) == f"{path}: a pickled DataFrame needs pandas: pip install pandas"


@pytest.mark.skipif(not HAS_PANDAS, reason="pandas is not installed")
def test_the_official_dataframe_shape_is_read_with_allow_pickle(tmp_path):
    import pandas as pd

    path = tmp_path / "mlperf.pkl"
    # the official llama2-70b file's columns (processorca.py): input, tok_input, output, ...
    pd.DataFrame({"system_prompt": ["s", "s"], "question": ["q1", "q2"], "input": ["<s> q1", "<s> q2"],
                  "tok_input": [np.array([1, 5, 9]), [1, 7]], "output": ["a1", "a2"], "origin": ["o", "o"]},
                 ).to_pickle(path)
    samples = load_file(path, allow_pickle=True).samples
    assert samples == [LLMSample("<s> q1", (1, 5, 9), "a1"), LLMSample("<s> q2", (1, 7), "a2")]
    sut, qsl = from_params(url="http://127.0.0.1:9", dataset=str(path), allow_pickle="1", preflight="0")
    sut.close()
    assert qsl.samples == samples
    path.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(ConfigError, match="the pickle holds a list, not a pandas DataFrame"):
        load_file(path, allow_pickle=True)
    path.write_bytes(b"not a pickle")
    with pytest.raises(ConfigError, match="not a readable pickled DataFrame"):
        load_file(path, allow_pickle=True)


# --- synthetic lengths ------------------------------------------------------------------------------


def test_lengths_from_a_file_are_drawn_from_it_by_seed(tmp_path):
    path = tmp_path / "lens.txt"
    path.write_text("# input lengths of a trace\n5\n50\n\n500  # long\n")
    assert read_lengths(str(path), "in").tolist() == [5, 50, 500]
    a = synthetic(200, f"file:{path}", "fixed:3", seed=7)
    b = load_dataset(("synthetic", 200, f"file:{path}", "const:3", 7))
    assert a == b  # same seed, same dataset; fixed is const
    lens = {len(s.prompt.split()) for s in a}
    assert lens == {5, 50, 500} and {s.max_tokens for s in a} == {3}
    assert synthetic(200, f"file:{path}", "const:3", seed=8) != a


@pytest.mark.parametrize(
    ("text", "words"),
    [("5\nx\n", ":2: b'x' is not a length"), ("0\n", ":1: b'0' is not a length"), ("# none\n", "holds no lengths"),
     ("1" * 300, ":1: the line is too long")],
)
def test_bad_lengths_files_are_named(tmp_path, text, words):
    path = tmp_path / "l.txt"
    path.write_text(text)
    with pytest.raises(ConfigError, match=words.replace("(", r"\(")):
        parse_length(f"file:{path}", "out")


def test_distributions_stay_in_bounds():
    rng = np.random.default_rng(0)
    from proctor.clients.llm_dataset import draw_lengths

    for spec in ("normal:10:100", "lognormal:1000000:5", "uniform:3:10", "exp:1000000"):
        x = draw_lengths(parse_length(spec, "in"), 1000, rng)
        assert x.min() >= 1 and x.max() <= 1_000_000, spec
    with pytest.raises(ConfigError, match="or file:PATH"):
        parse_length("poisson:3", "in")


@pytest.mark.fuzz
@given(st.binary(max_size=200))
def test_lengths_reader_takes_any_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("l") / "l.txt"
    path.write_bytes(raw)
    try:
        values = read_lengths(str(path), "in")
    except ConfigError as exc:
        assert str(path) in str(exc)
    else:
        assert values.min() >= 1 and values.max() <= 1_000_000


def test_json_ids_in_a_csv_are_text_not_ids(tmp_path):
    # CSV cells are text: a prompt column holding "[1, 2]" is sent as that text
    path = tmp_path / "d.csv"
    path.write_text('prompt\n"' + json.dumps([1, 2]) + '"\n')
    assert load_csv(path).samples == [LLMSample(prompt="[1, 2]")]


def test_the_cli_refuses_a_pickle_without_allow_pickle(cli, tmp_path):
    # one line, exit 2, before anything runs; with --allow-pickle the file is read (here: not pandas-shaped)
    path = tmp_path / "d.pkl"
    path.write_bytes(pickle.dumps([1]))
    args = ["run", "--scenario", "Offline", "--sut", "openai:url=http://127.0.0.1:9,preflight=0",
            "--dataset", str(path), "--output", str(tmp_path / "logs")]
    r = cli(*args)
    assert r.rc == 2 and "loading a pickle runs code from the file" in r.err, r.out + r.err
    assert len(r.err.strip().splitlines()) == 1
    r = cli(*args, "--allow-pickle")
    assert r.rc == 2 and "runs code" not in r.err, r.out + r.err
    assert ("not a pandas DataFrame" if HAS_PANDAS else "pip install pandas") in r.err
