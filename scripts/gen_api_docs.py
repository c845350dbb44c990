"""Generate the API reference (HTML) from the docstrings with pdoc: ``pip install -e ".[docs]"``,
then ``python scripts/gen_api_docs.py [OUT_DIR]`` (default ``site/api``; open ``index.html``).

pdoc reads the package as imported (type annotations, signatures, Google-style ``Args:`` /
``Raises:`` sections, doctests shown as examples) with no configuration tree to maintain. The
stages are listed explicitly: ``jalapeno/__init__.py`` resolves its public names lazily, which
pdoc would otherwise stop at.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

#: the package's stages in data-flow order (docs/architecture.md), then the command line
MODULES = [
    "jalapeno",
    "jalapeno.errors",
    "jalapeno.units",
    "jalapeno.specs",
    "jalapeno.deploy",
    "jalapeno.cost",
    "jalapeno.serve",
    "jalapeno.analysis",
    "jalapeno.fit",
    "jalapeno.report",
    "jalapeno.cli",
]


def main(out: str = "site/api") -> Path:
    try:
        import pdoc
        import pdoc.render
    except ImportError:
        sys.exit('pdoc is not installed: pip install -e ".[docs]"')
    pdoc.render.configure(
        docformat="google",
        show_source=True,
        footer_text="jalapeno API reference, generated from the docstrings by pdoc",
    )
    path = Path(out)
    # the lazy public names of jalapeno/__init__.py are documented where they live
    warnings.filterwarnings("ignore", message=r"Found '\w+' in jalapeno.__all__, but it does not resolve")
    pdoc.pdoc(*MODULES, output_directory=path)
    return path


if __name__ == "__main__":
    p = main(*sys.argv[1:2])
    print(f"API reference: {(p / 'index.html').resolve()}")
