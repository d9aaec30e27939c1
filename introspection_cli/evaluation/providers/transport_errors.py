"""The two transport failures no retry can mend, as the SDKs pass them on unretried.

Kept apart from :mod:`.http_client` (which imports httpx2 and aiohttp) so that
recognising them costs no import: :mod:`.sdk_errors` is imported by runs that
may never build a client.
"""

from __future__ import annotations

__all__ = ["CertificateFailure", "ReplyTooLarge", "sdk_errors"]


class ReplyTooLarge(Exception):
    """The reply was larger than the cap. Raised as a subclass of the SDK's base error
    (see :func:`sdk_errors`), so the SDK does not retry it."""

    def __init__(self, limit: int) -> None:
        from introspection_cli.httpbounds import describe_size  # loaded with the client

        super().__init__(f"larger than {describe_size(limit)}")
        self.limit = limit


class CertificateFailure(Exception):
    """The server's certificate did not verify; raised as :class:`ReplyTooLarge` is."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"certificate verify failed for {host} ({reason})")
        self.host = host
        self.reason = reason


_SDK_ERRORS: dict[type[Exception], tuple[type[ReplyTooLarge], type[CertificateFailure]]] = {}


def sdk_errors(base_error: type[Exception]
               ) -> tuple[type[ReplyTooLarge], type[CertificateFailure]]:
    """:class:`ReplyTooLarge` and :class:`CertificateFailure` as ``base_error``s too."""
    if base_error not in _SDK_ERRORS:
        _SDK_ERRORS[base_error] = (
            type("ReplyTooLarge", (ReplyTooLarge, base_error), {}),
            type("CertificateFailure", (CertificateFailure, base_error), {}))
    return _SDK_ERRORS[base_error]
