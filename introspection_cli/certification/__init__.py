"""Judge certificates: the decision (:mod:`.decision`), the file (:mod:`.certificate`) and
whether a certificate still holds (:mod:`.state`), all without a model call or a heavy import.
"""
