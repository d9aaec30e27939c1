"""The fence around the conversation in the user message.

Constants only, so the judge fingerprint (part of its harness, with the
templates: :mod:`introspection_cli.evaluation.fingerprint`) can name them
without compiling the neutraliser's patterns.
"""

BEGIN_MARKER = "[BEGIN EVALUATED MATERIAL: conversation]"
END_MARKER = "[END EVALUATED MATERIAL]"
