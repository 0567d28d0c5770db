"""The figure machinery (private): the contract (:mod:`.contract`), the command line
(:mod:`.cli`), the look (:mod:`.style`), the writers (:mod:`.export`) and the cached,
parallel renderer (:mod:`.build`). Figure scripts import ``cli``, ``style`` and
``export.markdown_table`` from here; nothing here imports a figure script.
"""
