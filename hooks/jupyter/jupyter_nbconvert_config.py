"""nbconvert settings for the labs, read by mkdocs-jupyter (``hooks/site_notebooks.py`` puts
this folder on ``JUPYTER_CONFIG_PATH``).

A kernel sends a cell's printed text in pieces, one per flush of its output buffer, and
where the flushes fall depends on timing: the same cell could come back as one output
block in one build and two in the next. nbconvert's ``CoalesceStreamsPreprocessor`` joins
consecutive pieces of the same stream; it is off by default and, where it is, runs before
the notebook is executed. Here it is switched on and moved to just after execution, so a
lab page is the same in every build.
"""
from nbconvert.exporters import Exporter

EXECUTE = "nbconvert.preprocessors.ExecutePreprocessor"
COALESCE = "nbconvert.preprocessors.CoalesceStreamsPreprocessor"

order = [name for name in Exporter.class_traits()["default_preprocessors"].default() if name != COALESCE]
order.insert(order.index(EXECUTE) + 1, COALESCE)
c = get_config()  # noqa: F821  (traitlets defines it when it runs a config file)
c.HTMLExporter.default_preprocessors = order
c.CoalesceStreamsPreprocessor.enabled = True
