"""``judges label``: the local labelling web app.

    session.py  the queue, each row as shown, writes (byte rule) and undo; no HTTP
    review.py   ``--review REPORT.json``: the rows an eval report disagrees with
    server.py   the HTTP server: 127.0.0.1 only, session token, CSRF, Host and Origin checks
    run.py      start a session, print its address, serve until Ctrl-C
    static/     the page (HTML, CSS, JS; no build step); the transcript renderer it
                uses is :mod:`introspection_cli.webui`'s, shared with other pages
"""
