"""Build of the optional C kernels in ``engine/_native/`` (everything else is in pyproject.toml).

Each ``engine/_native/<name>.c`` becomes the extension module ``engine._native.<name>``.
They are optional: when no C compiler is at hand the build goes on without them and
:func:`engine._native.load` gives the pure-Python code paths, which stay the reference
(tests hold each kernel to the Python it replaces).
"""

from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).parent
KERNELS = sorted((HERE / "engine" / "_native").glob("*.c"))
HEADERS = sorted((HERE / "engine" / "_native").glob("*.h"))

setup(
    ext_modules=[
        Extension(
            f"engine._native.{src.stem}",
            [str(src.relative_to(HERE))],
            depends=[str(h.relative_to(HERE)) for h in HEADERS],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
        for src in KERNELS
    ]
)
