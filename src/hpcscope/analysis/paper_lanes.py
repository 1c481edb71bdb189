"""The paper's lane-pattern numbers, to put beside simulated ones ("paper vs simulation").

Source: J. L. Träff and S. Hunold, "Decomposing Collectives for Exploiting Multi-lane
Communication" (arXiv 1910.13373, CLUSTER 2020); rows copied from the plain-text
extraction in /work/shared/reference (its captions are lost, so each table is named by
the text that refers to it and by its position):

  HYDRA_TABLE_2     section 2: "The lane pattern benchmark results for the Hydra cluster
                    ... with Open MPI 4.0.1 are shown in Table 2" (the first result table).
  VSC3_TABLE_3      section 2: "A result on the larger VSC-3 system ... with Intel MPI
                    2018 is shown in Table 3" (the second result table).
  JUPITER_TABLE_85  appendix D: "The results can be found in Tables 85, ..., 96" for
                    Jupiter with mvapich; the first of them, in the order of section 2
                    (lane pattern first), whose columns are the lane pattern's. N = 35.

Columns as printed: k virtual lanes, n processes per node, N nodes, p = nN, c elements
(MPI_INT) per node, average and minimum time in microseconds over the repetitions. The
paper gives these times only; the factors t(1)/t(k) below are computed from them. No
number is filled in or smoothed: a (count, k) the paper does not list has no row here,
and the comparison says so.
"""

from __future__ import annotations

from dataclasses import dataclass

HYDRA_TABLE_2_ROWS = (
    # (k, n, N, p, c, avg_us, min_us)
    (1, 32, 36, 1152, 1152, 141.22, 133.77),
    (2, 32, 36, 1152, 1152, 110.63, 104.37),
    (4, 32, 36, 1152, 1152, 95.48, 90.72),
    (8, 32, 36, 1152, 1152, 89.66, 83.32),
    (16, 32, 36, 1152, 1152, 94.96, 80.86),
    (32, 32, 36, 1152, 1152, 97.89, 85.18),
    (1, 32, 36, 1152, 11520, 697.84, 644.32),
    (2, 32, 36, 1152, 11520, 387.72, 351.86),
    (4, 32, 36, 1152, 11520, 324.32, 304.06),
    (8, 32, 36, 1152, 11520, 188.89, 175.76),
    (16, 32, 36, 1152, 11520, 165.29, 150.06),
    (32, 32, 36, 1152, 11520, 157.93, 144.66),
    (1, 32, 36, 1152, 115200, 3377.29, 3260.22),
    (2, 32, 36, 1152, 115200, 2040.01, 1923.35),
    (4, 32, 36, 1152, 115200, 1842.07, 1685.66),
    (8, 32, 36, 1152, 115200, 1384.2, 1283.65),
    (16, 32, 36, 1152, 115200, 1441.0, 1412.02),
    (32, 32, 36, 1152, 115200, 1373.89, 1331.35),
    (1, 32, 36, 1152, 1152000, 26025.29, 24584.8),
    (2, 32, 36, 1152, 1152000, 13760.84, 13249.18),
    (4, 32, 36, 1152, 1152000, 11191.25, 10961.43),
    (8, 32, 36, 1152, 1152000, 10518.3, 10464.52),
    (16, 32, 36, 1152, 1152000, 10272.04, 10202.46),
    (32, 32, 36, 1152, 1152000, 10646.15, 10492.62),
    (1, 32, 36, 1152, 11520000, 203868.07, 202095.87),
    (2, 32, 36, 1152, 11520000, 105835.37, 104168.32),
    (4, 32, 36, 1152, 11520000, 101349.99, 100660.73),
    (8, 32, 36, 1152, 11520000, 101106.96, 100766.08),
    (16, 32, 36, 1152, 11520000, 100646.86, 100264.96),
    (32, 32, 36, 1152, 11520000, 101030.17, 100591.41),
)
VSC3_TABLE_3_ROWS = (
    # (k, n, N, p, c, avg_us, min_us)
    (1, 16, 100, 1600, 16, 191.13, 124.93),
    (2, 16, 100, 1600, 16, 162.71, 126.84),
    (4, 16, 100, 1600, 16, 199.29, 133.04),
    (8, 16, 100, 1600, 16, 181.17, 119.92),
    (16, 16, 100, 1600, 16, 188.98, 123.98),
    (1, 16, 100, 1600, 160, 226.37, 153.06),
    (2, 16, 100, 1600, 160, 189.77, 138.04),
    (4, 16, 100, 1600, 160, 204.43, 133.99),
    (8, 16, 100, 1600, 160, 204.65, 132.08),
    (16, 16, 100, 1600, 160, 335.04, 142.1),
    (1, 16, 100, 1600, 1600, 866.72, 449.18),
    (2, 16, 100, 1600, 1600, 691.91, 370.98),
    (4, 16, 100, 1600, 1600, 300.03, 216.96),
    (8, 16, 100, 1600, 1600, 240.02, 190.02),
    (16, 16, 100, 1600, 1600, 255.62, 177.15),
    (1, 16, 100, 1600, 16000, 3509.08, 2555.13),
    (2, 16, 100, 1600, 16000, 2230.83, 1792.91),
    (4, 16, 100, 1600, 16000, 2278.26, 1677.99),
    (8, 16, 100, 1600, 16000, 1980.68, 1499.89),
    (16, 16, 100, 1600, 16000, 1864.47, 1277.92),
    (1, 16, 100, 1600, 160000, 25752.8, 18226.15),
    (2, 16, 100, 1600, 160000, 17478.72, 14142.99),
    (4, 16, 100, 1600, 160000, 17273.14, 15020.13),
    (8, 16, 100, 1600, 160000, 15398.98, 12808.08),
    (16, 16, 100, 1600, 160000, 27259.58, 12650.97),
    (1, 16, 100, 1600, 1600000, 240925.21, 209810.02),
    (2, 16, 100, 1600, 1600000, 132452.19, 117342.0),
    (4, 16, 100, 1600, 1600000, 151751.88, 150255.92),
    (8, 16, 100, 1600, 1600000, 132714.86, 127789.97),
    (16, 16, 100, 1600, 1600000, 134652.29, 128103.97),
)
JUPITER_TABLE_85_ROWS = (
    # (k, n, N, p, c, avg_us, min_us)
    (1, 16, 35, 560, 56, 242.62, 203.13),
    (2, 16, 35, 560, 56, 288.71, 164.27),
    (4, 16, 35, 560, 56, 242.51, 169.28),
    (8, 16, 35, 560, 56, 273.14, 196.93),
    (16, 16, 35, 560, 56, 458.97, 429.15),
    (1, 16, 35, 560, 560, 367.36, 334.26),
    (2, 16, 35, 560, 560, 336.74, 294.45),
    (4, 16, 35, 560, 560, 308.08, 269.41),
    (8, 16, 35, 560, 560, 325.65, 286.82),
    (16, 16, 35, 560, 560, 538.94, 511.41),
    (1, 16, 35, 560, 5600, 1102.91, 1058.58),
    (2, 16, 35, 560, 5600, 1036.42, 998.74),
    (4, 16, 35, 560, 5600, 823.46, 773.91),
    (8, 16, 35, 560, 5600, 731.7, 705.96),
    (16, 16, 35, 560, 5600, 930.64, 897.41),
    (1, 16, 35, 560, 56000, 5051.42, 4987.48),
    (2, 16, 35, 560, 56000, 4889.84, 4576.44),
    (4, 16, 35, 560, 56000, 5482.81, 5418.06),
    (8, 16, 35, 560, 56000, 5692.7, 5537.51),
    (16, 16, 35, 560, 56000, 6121.68, 5691.77),
    (1, 16, 35, 560, 560000, 43333.85, 43246.75),
    (2, 16, 35, 560, 560000, 44350.01, 42528.87),
    (4, 16, 35, 560, 560000, 45020.53, 44866.8),
    (8, 16, 35, 560, 560000, 44864.57, 44694.19),
    (16, 16, 35, 560, 560000, 53223.24, 52467.58),
    (1, 16, 35, 560, 5600000, 457877.05, 457665.44),
    (2, 16, 35, 560, 5600000, 452755.73, 452425.48),
    (4, 16, 35, 560, 5600000, 451086.13, 450649.74),
    (8, 16, 35, 560, 5600000, 457505.72, 457067.25),
    (16, 16, 35, 560, 5600000, 515301.02, 514506.1),
)


@dataclass(frozen=True)
class PaperTable:
    name: str  # e.g. "Table 2"
    system: str
    mpi: str
    rows: tuple[tuple, ...]  # (k, n, N, p, c, avg_us, min_us)

    def counts(self) -> list[int]:
        return sorted({int(r[4]) for r in self.rows})

    def times(self, count: int) -> dict[int, tuple[float, float]]:
        """{k: (avg_us, min_us)} at c = count; {} when the paper has no such count."""
        return {int(r[0]): (float(r[5]), float(r[6])) for r in self.rows if r[4] == count}

    def factor(self, count: int, k: int, which: str = "min") -> float | None:
        """t(1)/t(k) from the paper's avg or min times; None when it gives no time."""
        times = self.times(count)
        if 1 not in times or k not in times:
            return None
        i = 0 if which == "avg" else 1
        return times[1][i] / times[k][i]


LANE_PATTERN_TABLES: dict[str, PaperTable] = {
    "hydra": PaperTable("Table 2", "Hydra", "Open MPI 4.0.1", HYDRA_TABLE_2_ROWS),
    "vsc3": PaperTable("Table 3", "VSC-3", "Intel MPI 2018", VSC3_TABLE_3_ROWS),
    "jupiter": PaperTable(
        "Table 85", "Jupiter", "mvapich 2-2-3.1 (as printed)", JUPITER_TABLE_85_ROWS
    ),
}
