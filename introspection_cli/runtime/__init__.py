"""The runtime API: login, credentials, and exporting conversations (SPEC §3.3).

Modules, by responsibility::

    interface.py    RuntimeApi protocol and its frozen values (Identity, ExportBatch...)
    credentials.py  where the login lives, env overrides, URL and token rules
    client.py       HttpRuntimeClient: the RuntimeApi over httpx, with retries
    wirejson.py     an export answer decoded leniently: each object as the exact line written
    auth.py         login / logout
    ids.py          reading an ids file
    appendfile.py   reading an existing calibration file and appending to it untouched
    accept.py       which exported objects are written, which requested ids failed, warnings
    export.py       ``conversations get``: fetch, verify, write

Nothing here imports httpx at package import time; only ``client.py`` does.
"""
