"""``judges label``: the local labelling web app, for one judge or several in one pass.

    items.py     the conversations of a session: each once, matched across the judges'
                 files by conversation_id and snapshot_hash
    judgefile.py one judge's calibration file in a session: as it is now, its gate, writes
    session.py   the queue, each conversation as shown, writes (byte rule) and undo; no HTTP
    blinds.py    who the session labels for (a rater, an adjudication): queue, progress, writes
    writes.py    the writes a page asks for, and what undo keeps of each
    progress.py  per judge, how much of the queue is labelled, and what is left
    views.py     what the page is sent: a conversation with a label row per judge, what is left
    review.py    ``--review REPORT.json``: the rows an eval report disagrees with
    server.py    the HTTP server: 127.0.0.1 only, session token, CSRF, Host and Origin checks
    run.py       start a session, print its address, serve until Ctrl-C
    static/      the page (HTML, CSS, JS; no build step): view.js draws, app.js keeps the
                 queue and the keys; the transcript renderer it uses is
                 :mod:`introspection_cli.webui`'s, shared with other pages
"""
