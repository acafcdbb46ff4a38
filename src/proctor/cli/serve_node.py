"""`proctor serve node`: serve any proctor SUT to a Network-division QDL over KServe V2 REST.

`register(serve_app)` adds the command to the `serve` sub-app (called from cli/serve.py).
"""

from __future__ import annotations

import typer

from proctor.cli import serve_options
from proctor.cli.apps import examples
from proctor.errors import ProctorError


def register(serve_app: typer.Typer) -> None:
    @serve_app.command(
        "node",
        epilog=examples(
            "proctor serve node --sut digits --port 8001",
            "proctor serve node --sut synthetic:service_us=200 --port 8002 --name node-b",
            f"proctor serve node --sut digits --port 8001 {serve_options.EXAMPLE}",
        ),
    )
    def node(
        sut: str = typer.Option(
            "digits", "--sut", metavar="SPEC", help="The SUT to serve, as for run: NAME[:k=v,...]."
        ),
        host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="Address to bind."),
        port: int = typer.Option(
            8001, "--port", min=0, max=65535, metavar="PORT", help="Port to bind (0: any free one)."
        ),
        name: str | None = typer.Option(
            None, "--name", metavar="NAME", help="This node's unique name (default: SUT name@host:port)."
        ),
        model: str | None = typer.Option(
            None, "--model-name", metavar="NAME", help="V2 model name (default: the SUT's name)."
        ),
        # the old spelling; --model-name is serve llm's (and `run --model` names the benchmark)
        model_alias: str | None = typer.Option(
            None, "--model", hidden=True, help="old spelling of --model-name"
        ),
        header_timeout: serve_options.HeaderTimeout = serve_options.HEADER_TIMEOUT_S,
        body_timeout: serve_options.BodyTimeout = serve_options.BODY_TIMEOUT_S,
        idle_timeout: serve_options.IdleTimeout = serve_options.IDLE_TIMEOUT_S,
        send_timeout: serve_options.SendTimeout = serve_options.SEND_TIMEOUT_S,
        max_connections: serve_options.MaxConnections = serve_options.MAX_CONNECTIONS,
    ) -> None:
        """Serve a proctor SUT over KServe V2 REST (binary tensor extension and JSON) as one node
        of a Network-division SUT; stop with Ctrl-C."""
        from proctor.cli import output
        from proctor.serving import node_server
        from proctor.serving.binding import check_host
        from proctor.suts.spec import parse_sut_spec

        try:
            spec = parse_sut_spec(sut)  # the one parse; the node gets the SutSpec
            warning = check_host(host)
            limits = serve_options.connection_limits(header_timeout, body_timeout, idle_timeout, send_timeout,
                                                     max_connections)
        except ProctorError as exc:
            output.fail(str(exc))
        if warning:
            output.console(stderr=True).print(warning, markup=False)

        def ready(n: node_server.Node) -> None:
            output.console(stderr=True).print(
                f"serving {n.model.model_name} ({n.model.mode} mode) as node '{n.name}' on {n.url}"
            )

        try:
            node_server.serve(spec, host, port, name, model_name=model or model_alias, on_ready=ready,
                              limits=limits)
        except ProctorError as exc:
            output.fail(f"--sut {sut}: {exc}")
        except OSError as exc:
            output.fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")
