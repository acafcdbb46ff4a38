"""The dataset layouts people download (issue 34 §4): ShareGPT in Parquet, OpenOrca as downloaded, the
MLPerf reference's processed llama2-70b / llama3.1 / gpt-oss-120b files; a file of no known layout
is one line naming the file, the columns it has and the columns expected. The MLPerf column names
are those the reference implementation's scripts read and write (language/llama2-70b/processorca.py,
language/llama3.1-405b/dataset.py and evaluate-accuracy.py, language/llama3.1-8b/download_cnndm.py,
language/gpt-oss-120b/utils/tokenization.py and eval_mlperf_accuracy.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.llm_dataset import LLMSample
from proctor.clients.llm_formats import LAYOUTS, Columns, load_file, pick_columns, samples_of_rows
from proctor.clients.openai import from_params
from proctor.clients.openai_config import OpenAIConfig
from proctor.errors import ConfigError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ROOT = Path(__file__).resolve().parents[2]


def one_line(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_sharegpt_in_parquet_is_read_from_its_conversations_column(tmp_path):
    # the layout of ShareGPT_V3 converted to Parquet: conversations is a list of {from, value} structs
    path = tmp_path / "sharegpt.parquet"
    conversations = [
        [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}],
        [{"from": "system", "value": "be brief"}, {"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}],
        [{"from": "gpt", "value": "no question"}],  # skipped and counted
    ]
    pq.write_table(pa.table({"id": ["a", "b", "c"], "conversations": conversations}), path)
    loaded = load_file(path)
    assert loaded.samples == [LLMSample(prompt="hi", output="hello"),
                              LLMSample(prompt="q", output="a", system="be brief")]
    assert loaded.skipped == 1 and loaded.first_skip == "row 3: no human turn"
    sut, qsl = from_params(url="http://127.0.0.1:9", dataset=str(path), preflight="0")  # was: no column 'prompt'
    sut.close()
    assert qsl.samples == loaded.samples


def test_openorca_as_downloaded_keeps_its_system_prompt(tmp_path):
    path = tmp_path / "1M-GPT4-Augmented.parquet"
    pq.write_table(pa.table({"id": ["niv.1", "t0.2"], "system_prompt": ["You are helpful.", ""],
                             "question": ["Name a colour.", "2+2?"], "response": ["Blue.", "4"]}), path)
    samples = load_file(path).samples
    assert samples == [LLMSample(prompt="Name a colour.", output="Blue.", system="You are helpful."),
                       LLMSample(prompt="2+2?", output="4")]
    chat = orjson.loads(OpenAIConfig(urls=("http://x",), model="m", api="chat").body(samples[0]))
    assert chat["messages"] == [{"role": "system", "content": "You are helpful."},
                                {"role": "user", "content": "Name a colour."}]
    completion = orjson.loads(OpenAIConfig(urls=("http://x",), model="m").body(samples[0]))
    assert completion["prompt"] == "You are helpful.\n\nName a colour."


def test_mlperf_llama2_70b_processed_openorca(tmp_path):
    # processorca.py keeps OpenOrca's columns and adds input (the Llama 2 prompt), tok_input, output
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({
        "id": ["a"], "system_prompt": ["sys"], "question": ["q"], "output": ["answer"],
        "input": ["<s>[INST] <<SYS>>\nsys\n<</SYS>>\n\nq [/INST]"], "tok_input": [[1, 518, 25580]],
        "tok_output": [[29871, 1234]], "origin": ["niv"],
    })
    for name in ("open_orca_gpt4_tokenized_llama.sampled_24576.pkl", "processed.parquet"):
        path = tmp_path / name
        frame.to_pickle(path) if name.endswith(".pkl") else frame.to_parquet(path)
        [s] = load_file(path, allow_pickle=True).samples
        # the token ids are what is sent; the prompt text is kept (chat), never the raw question
        assert s == LLMSample(prompt=frame["input"][0], input_ids=(1, 518, 25580), output="answer"), name
    assert pick_columns(list(frame.columns), Columns(), "x").layout == "MLPerf llama2-70b, llama3.1, gpt-oss-120b"


def test_mlperf_llama3_1_8b_cnn_dailymail_json_and_405b_pickle(tmp_path):
    # download_cnndm.py writes a JSON array of {instruction, input (the article), tok_input, output}
    path = tmp_path / "cnn_eval.json"
    path.write_bytes(orjson.dumps([
        {"instruction": {"llama": "Summarize..."}, "input": "article one", "tok_input": [128000, 9, 8],
         "output": "summary one"},
        {"instruction": {"llama": "Summarize..."}, "input": "article two", "tok_input": [128000, 7],
         "output": "summary two"},
    ]))
    assert load_file(path).samples == [LLMSample("article one", (128000, 9, 8), "summary one"),
                                       LLMSample("article two", (128000, 7), "summary two")]
    # llama3.1-405b: input, tok_input, tok_input_len, and the references as gt_output
    pd = pytest.importorskip("pandas")
    pkl = tmp_path / "mlperf_llama3.1_405b_dataset_8313_processed_fp16_eval.pkl"
    pd.DataFrame({"input": ["p"], "tok_input": [[1, 2]], "tok_input_len": [2], "gt_output": ["ref"],
                  "dataset": ["ruler"], "metric": ["rouge"]}).to_pickle(pkl)
    assert load_file(pkl, allow_pickle=True).samples == [LLMSample("p", (1, 2), "ref")]


def test_mlperf_gpt_oss_parquet_before_and_after_v4(tmp_path):
    # utils/tokenization.py: tok_input before v4.0, input_tokens from v4.0; ground_truth the reference
    for ids_column in ("tok_input", "input_tokens"):
        path = tmp_path / f"{ids_column}.parquet"
        pq.write_table(pa.table({"dataset": ["aime", "gpqa"], ids_column: [[200006, 17], [200006, 4, 5]],
                                 "ground_truth": ["42", "B"]}), path)
        assert load_file(path).samples == [LLMSample(input_ids=(200006, 17), output="42"),
                                           LLMSample(input_ids=(200006, 4, 5), output="B")]


def test_a_file_of_no_known_layout_names_its_columns_and_the_expected_ones(tmp_path):
    path = tmp_path / "mystery.parquet"
    pq.write_table(pa.table({"text": ["a"], "label": [1]}), path)
    with pytest.raises(ConfigError) as exc:
        load_file(path)
    line = one_line(exc)
    assert line.startswith(f"{path}: no prompt column: expected prompt or input_ids (proctor); ")
    assert "question (OpenOrca)" in line and "conversations or messages (ShareGPT)" in line
    assert line.endswith("(columns: text, label); name it with prompt_column= or input_ids_column=")
    # a column the user names and the file lacks: that column, the columns found, the key to fix
    with pytest.raises(ConfigError) as exc:
        load_file(path, cols=Columns(prompt="txt"))
    assert one_line(exc) == f"{path}: no column 'txt' (columns: text, label); fix prompt_column="
    # the name is enough to read it
    assert load_file(path, cols=Columns(prompt="text")).samples == [LLMSample(prompt="a")]
    # hostile column names are shown printable and bounded
    bad = tmp_path / "bad.csv"
    bad.write_text('"a\x1b[2Jb","' + "x" * 500 + '"\n1,2\n')
    with pytest.raises(ConfigError) as exc:
        load_file(bad)
    assert "\x1b" not in one_line(exc) and len(one_line(exc)) < 900


def test_jsonl_records_of_another_layout_are_rows(tmp_path):
    path = tmp_path / "orca.jsonl"
    path.write_bytes(b'{"system_prompt": "s", "question": "q1", "response": "r1"}\n'
                     b'{"system_prompt": "", "question": "q2", "response": "r2"}\n')
    assert load_file(path).samples == [LLMSample(prompt="q1", output="r1", system="s"),
                                       LLMSample(prompt="q2", output="r2")]
    path.write_bytes(b'{"question": "q1"}\n[1]\n')
    with pytest.raises(ConfigError) as exc:
        load_file(path)
    assert one_line(exc) == f"{path}:2: expected a JSON object"


def test_the_layouts_are_named_as_the_reference_names_them():
    by_name = {lay.name: lay for lay in LAYOUTS}
    mlperf = by_name["MLPerf llama2-70b, llama3.1, gpt-oss-120b"]
    assert mlperf.input_ids == ("tok_input", "input_tokens") and "gt_output" in mlperf.output
    assert "ground_truth" in mlperf.output
    assert by_name["OpenOrca"].system == ("system_prompt",) and by_name["ShareGPT"].conversations[0] == "conversations"


# --- hostile inputs -----------------------------------------------------------------------------------

turn = st.fixed_dictionaries({"from": st.sampled_from(["human", "gpt", "system", "x"]),
                              "value": st.text(max_size=4)}) | st.integers() | st.none()
cells = (st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats() | st.text(max_size=5)
         | st.lists(st.integers(-2, 2**33) | st.text(max_size=2), max_size=4) | st.lists(turn, max_size=4))
LAYOUT_COLUMNS = sorted({c for lay in LAYOUTS for c in (*lay.prompt, *lay.input_ids, *lay.output, *lay.system,
                                                       *lay.conversations, *lay.max_tokens)} | {"other"})


@pytest.mark.fuzz
@given(st.lists(st.sampled_from(LAYOUT_COLUMNS), min_size=1, max_size=5, unique=True),
       st.lists(st.lists(cells, min_size=5, max_size=5), max_size=5))
def test_rows_of_any_layout_and_any_cells_are_samples_or_one_named_error(names, rows):
    try:
        loaded = samples_of_rows(enumerate((dict(zip(names, r, strict=False)) for r in rows), 1), names, Columns(),
                                 "t.pq")
    except ConfigError as exc:
        assert str(exc).startswith("t.pq") and "\n" not in str(exc)
    else:
        assert loaded.samples and all(s.prompt or s.input_ids for s in loaded.samples)
        assert all(s.max_tokens is None or 1 <= s.max_tokens <= 1_000_000 for s in loaded.samples)


json_values = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=4),
                           lambda x: st.lists(x, max_size=3) | st.dictionaries(st.sampled_from(LAYOUT_COLUMNS + [
                               "from", "value", "role", "content"]), x, max_size=4), max_leaves=20)


@pytest.mark.fuzz
@given(st.lists(json_values, max_size=5), st.booleans())
def test_json_records_of_any_shape_are_samples_or_one_named_error(tmp_path_factory, records, lines):
    path = tmp_path_factory.mktemp("j") / "d.json"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) if lines else orjson.dumps(records))
    try:
        loaded = load_file(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert loaded.samples and all(s.prompt or s.input_ids for s in loaded.samples)


@pytest.mark.fuzz
@given(st.lists(st.sampled_from(LAYOUT_COLUMNS), min_size=1, max_size=4, unique=True),
       st.lists(st.tuples(st.none() | st.text(max_size=4), st.none() | st.lists(st.integers(0, 2**40), max_size=3)),
                max_size=4))
def test_parquet_of_any_layout_columns_is_samples_or_one_named_error(tmp_path_factory, names, rows):
    # each column text or a list of integers (the two shapes a layout's columns hold), nulls anywhere
    path = tmp_path_factory.mktemp("p") / "d.parquet"
    columns = {n: [r[k % 2] for r in rows] for k, n in enumerate(names)}
    types = {n: pa.string() if k % 2 == 0 else pa.list_(pa.int64()) for k, n in enumerate(names)}
    pq.write_table(pa.table({n: pa.array(v, type=types[n]) for n, v in columns.items()}), path)
    try:
        loaded = load_file(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert loaded.samples and all(s.prompt or s.input_ids for s in loaded.samples)


def test_a_parquet_file_is_read_a_batch_at_a_time_and_only_its_used_columns(tmp_path):
    """Bounded memory: a file whose other column decompresses to 400 MB (a few KB on disk) is read
    without decompressing it; the reader's peak memory grows by far less than that column."""
    path = tmp_path / "wide.parquet"
    n = 2000
    blob = "x" * 200_000
    pq.write_table(pa.table({"prompt": [f"p{i}" for i in range(n)], "extra": [blob] * n}), path,
                   compression="zstd", row_group_size=500)
    assert path.stat().st_size < 5_000_000
    code = (
        "import resource, sys\n"
        "from proctor.clients.llm_formats import load_file\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"samples = load_file({str(path)!r}).samples\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(len(samples), (after - before) // 1024)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    count, grown_mib = map(int, r.stdout.split())
    assert count == n and grown_mib < 100, r.stdout  # the extra column alone is 381 MiB
