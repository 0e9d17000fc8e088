"""``python -m app export --out lab.html [--config FILE] [scenario flags]``: write the offline page.

The flags are ``python -m core explain``'s (``--model``, ``--gpu``, ``--batch``,
..., and ``--config`` for a config.json of your own).  The page is a Bokeh
view, so the command lives here beside the other views rather than in ``core``,
which imports no UI library.
"""

import sys
from pathlib import Path

from core.cli import (
    OneLineError,
    OneLineParser,
    add_config_model,
    config_flag,
    one_line,
    scenario_flags,
    scenario_from_args,
)
from core.config_reader import MAX_CONFIG_BYTES

from .byo_view import portable_config
from .standalone import FULL_LAB, standalone_html


def config_text(path: str) -> str:
    """The config.json at ``path`` as a link carries it (read no further than the reader's limit and one byte;
    already read once, and refused if unreadable, by ``--config``), named as ``--config`` names it."""
    with Path(path).open("rb") as f:
        return portable_config(f.read(MAX_CONFIG_BYTES + 1), Path(path).name)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m app", description="Roofline Lab: write the offline standalone page.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    export = sub.add_parser("export", help="write one self-contained HTML file (no server, no network)")
    export.add_argument("--out", default="roofline-lab.html", help="output file (default: roofline-lab.html)")
    export.add_argument("--lab-url", default=FULL_LAB,
                        help="where the page's 'Open this scenario in the full lab' goes: an http(s) address, or a "
                             "path from the page (default: ../app, a class page served beside the lab); '' for no "
                             "link (a page hosted away from any lab)")
    scenario_flags(export)
    config_flag(export)
    try:
        args = parser.parse_args(argv)
        scenario = scenario_from_args(args)
        add_config_model(scenario, args)
        if scenario.phase != "decode":
            raise OneLineError("--phase prefill: the offline page shows decode only; accepted: decode")
        html = standalone_html(scenario, config_text(args.config) if args.config else None, args.lab_url)
        Path(args.out).write_text(html, encoding="utf-8")
    except (OneLineError, ValueError) as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {one_line(f'--out {args.out}: {exc.strerror}')}", file=sys.stderr)
        return 2
    print(one_line(f"wrote {args.out} ({len(html.encode()) / 1e6:.2f} MB)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
