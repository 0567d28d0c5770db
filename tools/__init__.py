"""The project's tools: benchmarks, measurements, screenshots and the PDF printer.

Run one from the project's folder as a module, ``python -m tools.NAME`` (``make bench``, ``make
screenshots`` and ``make lighthouse`` do); the tests and the print hook import them as
``tools.NAME``, so each is one module under one name. Not part of the ``mhalib`` wheel.
"""
