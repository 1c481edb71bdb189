"""Analysis of stored results: what the numbers say, before anything is drawn or printed.

verdicts      coll / lane_pattern / multi_coll samples -> paper-shaped rows with guideline
              verdicts; tables renders such rows as text, Markdown or CSV
node_table    the node suite's measured x reference x peak table, one efficiency rule
observations  sentences computed from the numbers (fits, breakpoints, dips, ratios, ...)
tune          lanecoll's tuning table from coll rows
"""
