"""SUT parameters from typed fields: one parser, one boolean vocabulary, the same refusals for every SUT."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from proctor.errors import ConfigError
from proctor.suts import params, registry
from proctor.suts.params import param, takes


@dataclass(frozen=True)
class Knobs:
    workers: int = param(2, "worker threads", low=1)
    rate: float = param(0.5, "a fraction", low=0, high=1, low_open=True)
    fast: bool = param(False, "go fast")
    mode: str = param("sleep", "how", choices=("sleep", "spin"))
    label: str | None = param(None, "a name", key="name")
    urls: tuple[str, ...] = param((), "endpoints", aliases=r"url\d+", key="url")


@takes(Knobs, "knobs")
def make(p: Knobs) -> tuple[Knobs, None]:
    return p, None


def test_values_parse_by_field_type():
    p = params.parse(Knobs, {"workers": "4", "rate": "1", "fast": "yes", "mode": "spin", "name": "x",
                             "url": "a|b", "url2": "c"}, "knobs")
    assert p == Knobs(workers=4, rate=1.0, fast=True, mode="spin", label="x", urls=("a", "b", "c"))
    assert params.parse(Knobs, {}, "knobs") == Knobs()


@pytest.mark.parametrize(("word", "value"), [(w, True) for w in ("true", "1", "yes", "on", "TRUE", "On")]
                         + [(w, False) for w in ("false", "0", "no", "off", "No")])
def test_one_boolean_vocabulary(word, value):
    assert params.parse(Knobs, {"fast": word}, "knobs").fast is value


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"fast": "maybe"}, ["key 'fast'", "true/false, 1/0, yes/no or on/off"]),
        ({"workers": "two"}, ["key 'workers'", "not an integer"]),
        ({"workers": "0"}, ["key 'workers'", "out of range", ">= 1"]),
        ({"rate": "nan"}, ["key 'rate'", "finite"]),
        ({"rate": "inf"}, ["key 'rate'", "finite"]),
        ({"rate": "0"}, ["key 'rate'", "(0, 1]"]),
        ({"rate": "1.5"}, ["key 'rate'", "(0, 1]"]),
        ({"mode": "spni"}, ["key 'mode'", "one of sleep, spin", "did you mean 'spin'"]),
        ({"wokers": "3"}, ["key 'wokers'", "unknown knobs SUT parameter", "did you mean 'workers'", "known: workers"]),
    ],
)
def test_bad_values_are_one_line_naming_the_key(given, words):
    with pytest.raises(ConfigError) as err:
        params.parse(Knobs, given, "knobs")
    text = str(err.value)
    assert "\n" not in text
    for word in words:
        assert word in text, text


def test_list_suts_text_comes_from_the_fields():
    shown = {p.name: (p.default, p.help) for p in params.describe(Knobs)}
    assert list(shown) == ["workers", "rate", "fast", "mode", "name", "url"]
    assert shown["workers"] == ("2", "worker threads [>= 1]")
    assert shown["rate"] == ("0.5", "a fraction [(0, 1]]")
    assert shown["fast"] == ("0", "go fast [true/false, 1/0, yes/no or on/off]")
    assert shown["mode"] == ("sleep", "how [one of sleep, spin]")
    assert shown["name"] == ("none", "a name")


def test_the_decorated_factory_takes_strings_and_declares_its_fields():
    p, _ = make(workers="3", fast="on")
    assert (p.workers, p.fast) == (3, True)
    assert make.PARAMS is Knobs
    with pytest.raises(ConfigError, match="unknown knobs SUT parameter 'colour'"):
        make(colour="red")


@pytest.mark.parametrize(
    "spec",
    ["synthetic:workers=1,workers=2", "digits:max_batch=8,max_batch=16", "openai:model=a,model=b",
     "network:qsl=digits,qsl=synthetic"],
)
def test_a_repeated_key_is_refused_for_every_builtin_sut(spec):
    key = spec.split(":")[1].split("=")[0]
    with pytest.raises(ConfigError, match=f"key '{key}': given twice"):
        registry.build(spec)


@pytest.mark.parametrize(
    ("spec", "key"),
    [("synthetic:workers=maybe", "workers"), ("digits:max_batch=0", "max_batch"), ("openai:token_ids=perhaps", "token_ids"),
     ("network:binary=2", "binary"), ("synthetic:service_us=inf", "service_us"), ("openai:timeout_s=nan", "timeout_s"),
     ("digits:backend=onx", "backend"), ("network:chunk=0", "chunk"), ("synthetic:wrkers=2", "wrkers")],
)
def test_every_builtin_sut_checks_its_values_before_it_loads(spec, key):
    with pytest.raises(ConfigError, match=f"key '{key}'"):
        registry.build(spec)


def test_builtin_booleans_share_the_vocabulary():
    for word in ("on", "off", "yes", "no", "true", "false", "1", "0"):
        p = params.parse(registry.params_class(registry.factory_of("openai")[1]), {"logprobs": word}, "openai")
        q = params.parse(registry.params_class(registry.factory_of("network")[1]), {"binary": word}, "network")
        assert p.logprobs is q.binary is (word in params.TRUE_WORDS)


def test_a_list_key_may_repeat_and_joins():
    _, _, merged = registry.factory_of("openai:url=http://a:1,url=http://b:2,model=m")
    assert merged["url"] == "http://a:1|http://b:2"
    cls = registry.params_class(registry.factory_of("openai")[1])
    assert params.parse(cls, merged, "openai").url == ("http://a:1", "http://b:2")


def test_the_builtin_defaults_are_the_configs_defaults():
    """Each default is written once: the params dataclass reads the SUT's own config."""
    from proctor.clients.openai import OpenAIConfig, OpenAIParams
    from proctor.suts.synthetic import SyntheticParams, SyntheticSpec

    o, c = OpenAIParams(), OpenAIConfig(urls=("http://x:1",), model="m")
    for name in ("api", "timeout_s", "stall_s", "connect_s", "concurrency", "procs", "http", "warm",
                 "token_ids", "ignore_eos", "tokenizer"):
        assert getattr(o, name) == getattr(c, name), name
    # issue 24: max_tokens is the benchmark's unless given (clients.generation); the config's fallback is 128
    assert o.max_tokens is None and c.max_tokens == 128
    # issue 34 §7: logprobs unset is the preflight's choice (asked for where only they count); the config's is off
    assert o.logprobs is None and c.logprobs is False
    s, d = SyntheticSpec(), SyntheticParams()
    for name in SyntheticParams.__dataclass_fields__:
        assert getattr(s, name) == getattr(d, name), name


def test_a_user_factory_file_may_declare_a_params_dataclass(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "from dataclasses import dataclass\n"
        "from proctor.suts.params import param, takes\n"
        "from proctor.suts.synthetic import InMemoryQSL\n"
        "@dataclass(frozen=True)\n"
        "class P:\n"
        "    n: int = param(8, 'samples', low=1)\n"
        "    loud: bool = param(False, 'say more')\n"
        "@takes(P, 'mine')\n"
        "def make(p):\n"
        "    return p, InMemoryQSL(p.n, p.n)\n",
        encoding="utf-8",
    )
    sut, qsl = registry.build(f"{path}:make:n=4,loud=yes")
    assert (sut.n, sut.loud, qsl.total_sample_count) == (4, True, 4)
    assert [(p.name, p.default) for p in registry.params_of(registry.factory_of(f"{path}:make")[1])] == [
        ("n", "8"), ("loud", "0")]
    with pytest.raises(ConfigError, match="key 'n'.*out of range"):
        registry.build(f"{path}:make:n=0")


def test_a_plain_user_factory_keeps_getting_strings(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text(
        "from proctor.suts.synthetic import InMemoryQSL\n"
        "def make(**params):\n"
        "    assert all(isinstance(v, str) for v in params.values())\n"
        "    return params, InMemoryQSL(4, 4)\n"
        "def fixed(count='4'):\n"
        "    return count, InMemoryQSL(int(count), int(count))\n",
        encoding="utf-8",
    )
    sut, _ = registry.build(f"{path}:make:a=1,b=x")
    assert sut == {"a": "1", "b": "x"}
    with pytest.raises(ConfigError, match="key 'a': given twice"):
        registry.build(f"{path}:make:a=1,a=2")
    with pytest.raises(ConfigError, match="unknown .*fixed SUT parameter 'cuont'; did you mean 'count'"):
        registry.build(f"{path}:fixed:cuont=3")
