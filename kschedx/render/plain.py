"""Plain text (tabulate) for pipes, files and NO_COLOR: the same report as
the Rich renderer, without colour or terminal control codes."""

from __future__ import annotations

from .blocks import Blank, Line, Table


def cell_text(cell) -> str:
    return "".join(span.text for span in cell)


def render_blocks(blocks, out) -> None:
    from tabulate import tabulate

    for block in blocks:
        if isinstance(block, Blank):
            out.write("\n")
        elif isinstance(block, Line):
            out.write(" " * block.indent + block.text + "\n")
        elif isinstance(block, Table):
            rows = [[cell_text(c) for c in row] for row in block.rows]
            text = tabulate(rows, headers=block.headers, tablefmt="simple", colalign=block.align or None,
                            disable_numparse=True)
            pad = " " * block.indent
            out.write("\n".join(pad + line.rstrip() for line in text.splitlines()) + "\n")
