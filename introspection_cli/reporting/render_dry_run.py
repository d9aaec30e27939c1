"""``judges eval --dry-run``'s text: a table per judge and model (requests, estimated
tokens, estimated cost when the price table has the model), then totals (its JSON is
the body itself, with every request)."""

from __future__ import annotations

from introspection_cli.reporting.outputs import DryRunOutput


def _money(cost: float | None) -> str:
    return "-" if cost is None else f"${cost:,.4f}"


def dry_run_text(output: DryRunOutput) -> str:
    """The requests as a table by judge and model, the totals, what is not sent."""
    body, batch = output.body, output.batch
    header = ("judge", "provider", "model", "requests", "input tokens", "output tokens", "cost")
    rows = [[g["judge"], g["provider"], g["model"], f"{g['requests']:,}",
             f"~{g['input_tokens']:,}", f"~{g['output_tokens']:,}", _money(g["cost"])]
            for g in body["by_judge"]]
    totals = body["totals"]
    rows.append(["total", "", "", f"{totals['requests']:,}", f"~{totals['input_tokens']:,}",
                 f"~{totals['output_tokens']:,}", _money(totals["cost"])])
    widths = [max(len(str(cells[i])) for cells in (header, *rows)) for i in range(len(header))]
    lines = [f"dry run{' (--batch)' if batch else ''}: these requests would be made; none was"]
    for cells in (header, *rows):
        lines.append("  ".join(str(c).ljust(w) if i < 3 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
                     .rstrip())
    lines.append(f"{body['cached']} sample(s) answered by the cache, {body['gated']} row(s) "
                 f"gated (no call), {body['not_sendable']} not sendable (prompt too large or "
                 "gate timed out). Tokens are estimated from text length (about 4 characters "
                 "a token); costs need a price for the model in prices.toml.")
    return "\n".join(lines) + "\n"
