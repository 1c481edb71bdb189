"""Analysis of stored results: guideline verdicts, lane tables, their figures.

`verdicts` turns coll / lane_pattern / multi_coll samples into paper-shaped rows;
`tables` renders rows as text, Markdown or CSV; `figures` draws them (PNG + SVG).
"""
from hpcscope.analysis.figures import coll_figures, lanes_figures
from hpcscope.analysis.verdicts import coll_table, lanes_table

__all__ = ["coll_table", "lanes_table", "coll_figures", "lanes_figures"]
