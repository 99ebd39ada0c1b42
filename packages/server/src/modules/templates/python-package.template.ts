import type { ProjectTemplate } from './project-template.js';

const README = `# tempconv

A small Python package in the src layout: temperature conversions with a
command-line entry point. Standard library only.

## Use

\`\`\`sh
PYTHONPATH=src python3 -m tempconv 100C     # 212.00F
PYTHONPATH=src python3 -m tempconv 32F      # 0.00C
\`\`\`

Or install it (a virtual environment is a good idea) and use the \`tempconv\` command:

\`\`\`sh
python3 -m venv .venv && . .venv/bin/activate
pip install -e .
tempconv 451F
\`\`\`

## Test

The tests are plain \`unittest\` tests, so they need nothing installed:

\`\`\`sh
PYTHONPATH=src python3 -m unittest discover -s tests
\`\`\`

pytest runs them too (\`pyproject.toml\` puts \`src\` on its path):

\`\`\`sh
pip install pytest && pytest
\`\`\`

## Layout

- \`src/tempconv/convert.py\`: the conversions.
- \`src/tempconv/__main__.py\`: the command line (\`python -m tempconv\`, \`tempconv\`).
- \`tests/\`: unittest tests.
`;

const PYPROJECT = `[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "tempconv"
version = "0.1.0"
description = "Temperature conversions"
readme = "README.md"
requires-python = ">=3.9"

[project.scripts]
tempconv = "tempconv.__main__:main"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
`;

const INIT = `"""Temperature conversions between Celsius and Fahrenheit."""

from .convert import ABSOLUTE_ZERO_C, celsius_to_fahrenheit, fahrenheit_to_celsius

__all__ = ["ABSOLUTE_ZERO_C", "celsius_to_fahrenheit", "fahrenheit_to_celsius"]
__version__ = "0.1.0"
`;

const CONVERT = `ABSOLUTE_ZERO_C = -273.15


def _check(celsius: float) -> float:
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError(f"{celsius} C is below absolute zero")
    return celsius


def celsius_to_fahrenheit(celsius: float) -> float:
    return _check(celsius) * 9 / 5 + 32


def fahrenheit_to_celsius(fahrenheit: float) -> float:
    return _check((fahrenheit - 32) * 5 / 9)
`;

const MAIN = `"""Command line: tempconv 100C prints 212.00F."""

import argparse
import sys
from typing import List, Optional

from .convert import celsius_to_fahrenheit, fahrenheit_to_celsius


def convert(reading: str) -> str:
    value, unit = reading[:-1], reading[-1:].upper()
    if unit not in ("C", "F"):
        raise ValueError(f"{reading!r} should end in C or F")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a number") from None
    if unit == "C":
        return f"{celsius_to_fahrenheit(number):.2f}F"
    return f"{fahrenheit_to_celsius(number):.2f}C"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="tempconv", description="Convert temperatures between C and F.")
    parser.add_argument("readings", nargs="+", metavar="READING", help="a temperature such as 100C or 32F")
    args = parser.parse_args(argv)
    status = 0
    for reading in args.readings:
        try:
            print(convert(reading))
        except ValueError as err:
            print(f"tempconv: {err}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
`;

const TEST_CONVERT = `import unittest

from tempconv import celsius_to_fahrenheit, fahrenheit_to_celsius


class ConvertTest(unittest.TestCase):
    def test_known_points(self):
        self.assertEqual(celsius_to_fahrenheit(100), 212)
        self.assertEqual(celsius_to_fahrenheit(0), 32)
        self.assertAlmostEqual(fahrenheit_to_celsius(-40), -40)

    def test_round_trip(self):
        for celsius in (-273, -10.5, 0, 37, 1000):
            self.assertAlmostEqual(fahrenheit_to_celsius(celsius_to_fahrenheit(celsius)), celsius)

    def test_below_absolute_zero(self):
        with self.assertRaises(ValueError):
            celsius_to_fahrenheit(-300)
        with self.assertRaises(ValueError):
            fahrenheit_to_celsius(-500)


if __name__ == "__main__":
    unittest.main()
`;

const TEST_CLI = `import contextlib
import io
import unittest

from tempconv.__main__ import convert, main


class CommandLineTest(unittest.TestCase):
    def test_convert(self):
        self.assertEqual(convert("100C"), "212.00F")
        self.assertEqual(convert("32f"), "0.00C")
        with self.assertRaises(ValueError):
            convert("12K")
        with self.assertRaises(ValueError):
            convert("abcC")

    def test_main_prints_each_reading(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(main(["0C", "212F"]), 0)
        self.assertEqual(out.getvalue().split(), ["32.00F", "100.00C"])

    def test_main_reports_bad_readings(self):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            self.assertEqual(main(["nonsense"]), 1)
        self.assertIn("tempconv:", err.getvalue())


if __name__ == "__main__":
    unittest.main()
`;

export const pythonPackage: ProjectTemplate = {
  id: 'python-package',
  name: 'Python package',
  description: 'A src-layout Python package (temperature conversions and a CLI) with pyproject.toml and tests that run under unittest and pytest.',
  language: 'python',
  files: [
    { path: '.gitignore', content: '__pycache__/\n*.py[cod]\n*.egg-info/\n.venv/\nbuild/\ndist/\n.pytest_cache/\n' },
    { path: 'pyproject.toml', content: PYPROJECT },
    { path: 'README.md', content: README },
    { path: 'src/tempconv/__init__.py', content: INIT },
    { path: 'src/tempconv/convert.py', content: CONVERT },
    { path: 'src/tempconv/__main__.py', content: MAIN },
    { path: 'tests/test_convert.py', content: TEST_CONVERT },
    { path: 'tests/test_cli.py', content: TEST_CLI },
  ],
};
