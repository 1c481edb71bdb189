"""Ships the C sources (bench/, lanecoll/) inside the package as hpcscope/csrc, so that an
installed hpcscope (`pip install .`, pipx) builds its benchmarks from any directory.
Everything else about the package is in pyproject.toml."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

C_SOURCES = ("bench", "lanecoll")
SKIP = shutil.ignore_patterns("build*", "__pycache__", "*.o", "*.so")


class BuildPyWithCSources(build_py):
    def run(self):
        super().run()
        here = Path(__file__).parent
        for folder in C_SOURCES:
            shutil.copytree(here / folder, Path(self.build_lib) / "hpcscope" / "csrc" / folder,
                            ignore=SKIP, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithCSources})
