"""`proctor serve ...`: servers proctor runs so remote SUT paths have a real system to drive.

`serve_app` is shared: other serve commands (`serve node`) register on it too.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from proctor.cli import output, serve_options
from proctor.cli.apps import app, examples
from proctor.errors import ConfigError

serve_app = typer.Typer(
    help="Serve a model or SUT over the network (loopback by default).",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=examples("proctor serve llm --port 8000", "proctor serve node --sut digits --port 8001"),
)
app.add_typer(serve_app, name="serve")


def _register_node() -> None:
    from proctor.cli import serve_node

    serve_node.register(serve_app)


_register_node()


@serve_app.command(
    "llm",
    epilog=examples(
        "proctor serve llm --port 8000",
        "proctor serve llm --port 0 --ttft-ms 80 --tpot-ms 8 --faults 429=0.1,stall=0.05",
        f"proctor serve llm --port 8000 {serve_options.EXAMPLE}",
    ),
)
def serve_llm_cmd(
    host: Annotated[
        str, typer.Option(metavar="HOST", help="address to bind (loopback unless you mean otherwise)")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="TCP port; 0 picks a free one (printed)")] = 8000,
    ttft_ms: Annotated[
        float, typer.Option(metavar="MS", help="time to first token injected per request (ms)")
    ] = 40.0,
    tpot_ms: Annotated[float, typer.Option(metavar="MS", help="time per further output token (ms)")] = 4.0,
    prefill_us_per_token: Annotated[
        float, typer.Option(metavar="US", help="extra TTFT per prompt token (us)")
    ] = 0.0,
    chunk: Annotated[
        str, typer.Option(metavar="N|LO-HI", help="tokens per SSE chunk after the first: N or LO-HI")
    ] = "1",
    jitter_ms: Annotated[
        float, typer.Option(metavar="MS", help="uniform extra delay per request (ms)")
    ] = 0.0,
    timing: Annotated[
        str,
        typer.Option(
            metavar="MODE", help="exact (known per-request truth) or batch (shared decode steps)"
        ),
    ] = "exact",
    batch_cost_us: Annotated[
        float, typer.Option(metavar="US", help="batch timing: step time per running request (us)")
    ] = 0.0,
    usage: Annotated[
        str, typer.Option(metavar="MODE", help="usage record: separate chunk, on the final chunk, or none")
    ] = "separate",
    done: Annotated[bool, typer.Option("--done/--no-done", help="end streams with data: [DONE]")] = True,
    token_ids: Annotated[bool, typer.Option(
        "--token-ids/--no-token-ids", help="send token ids when a request asks (vLLM's return_token_ids)")] = True,
    logprobs: Annotated[bool, typer.Option(
        "--logprobs/--no-logprobs", help="send per-token logprobs when a request asks; --usage none "
        "--no-token-ids acts as llama.cpp's Python server")] = True,
    faults: Annotated[
        str,
        typer.Option(
            metavar="SPEC", help="injected faults, e.g. 429=0.1,500=0.05,stall=0.05,drop=0.05,stall_s=30"
        ),
    ] = "",
    model_name: Annotated[
        str, typer.Option(metavar="NAME", help="the model name the server reports")
    ] = "proctor-tiny",
    vocab: Annotated[int, typer.Option(metavar="N", help="vocabulary size of the tiny model")] = 1024,
    seed: Annotated[int, typer.Option(metavar="SEED", help="model and fault seed")] = 0,
    header_timeout: serve_options.HeaderTimeout = serve_options.HEADER_TIMEOUT_S,
    body_timeout: serve_options.BodyTimeout = serve_options.BODY_TIMEOUT_S,
    idle_timeout: serve_options.IdleTimeout = serve_options.IDLE_TIMEOUT_S,
    send_timeout: serve_options.SendTimeout = serve_options.SEND_TIMEOUT_S,
    max_connections: serve_options.MaxConnections = serve_options.MAX_CONNECTIONS,
) -> None:
    """An OpenAI-compatible streaming LLM server around a tiny deterministic model, with known timing."""
    import asyncio

    from proctor.serving.llm_server import Faults, ServerOptions, parse_chunk, serve_forever

    try:
        limits = serve_options.connection_limits(header_timeout, body_timeout, idle_timeout, send_timeout,
                                                 max_connections)
        opts = ServerOptions(
            model_name=model_name,
            vocab_size=vocab,
            seed=seed,
            timing=timing,
            ttft_ms=ttft_ms,
            tpot_ms=tpot_ms,
            prefill_us_per_token=prefill_us_per_token,
            batch_cost_us=batch_cost_us,
            chunk=parse_chunk(chunk),
            jitter_ms=jitter_ms,
            usage=usage,
            done=done,
            token_ids=token_ids,
            logprobs=logprobs,
            faults=Faults.parse(faults),
        )
    except ConfigError as exc:
        output.fail(str(exc))
    if not 0 <= port <= 65535:
        output.fail(f"--port {port}: expected 0..65535")
    from proctor.serving.binding import check_host

    try:
        warning = check_host(host)
    except ConfigError as exc:
        output.fail(str(exc))
    if warning:
        print(warning, file=sys.stderr, flush=True)

    def ready(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host  # an IPv6 address in a URL is bracketed
        print(f"proctor serve llm: listening on http://{shown}:{bound} (model {model_name})", flush=True)

    try:
        asyncio.run(serve_forever(opts, host, port, ready, limits))
    except OSError as exc:
        output.fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        print("proctor serve llm: stopped", file=sys.stderr)
        raise typer.Exit(output.EXIT_INTERRUPTED) from None
