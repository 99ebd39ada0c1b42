import type { ProjectTemplate } from './project-template.js';

export const pythonPackage: ProjectTemplate = {
  id: 'python-package',
  name: 'Python package',
  description: 'A src-layout Python package (temperature conversions) with pyproject.toml and tests that run under unittest and pytest.',
  language: 'python',
  files: [
    { path: '.gitignore', content: '__pycache__/\n*.egg-info/\n.venv/\ndist/\n' },
    { path: 'pyproject.toml', content: '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "tempconv"\nversion = "0.1.0"\nrequires-python = ">=3.9"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n' },
    { path: 'README.md', content: '# tempconv\n\n```sh\nPYTHONPATH=src python3 -m unittest discover -s tests\n# or: pip install -e . && pytest\n```\n' },
    { path: 'src/tempconv/__init__.py', content: '"""Temperature conversions."""\nfrom .convert import celsius_to_fahrenheit, fahrenheit_to_celsius\n\n__all__ = ["celsius_to_fahrenheit", "fahrenheit_to_celsius"]\n' },
    { path: 'src/tempconv/convert.py', content: 'ABSOLUTE_ZERO_C = -273.15\n\n\ndef celsius_to_fahrenheit(celsius: float) -> float:\n    if celsius < ABSOLUTE_ZERO_C:\n        raise ValueError("below absolute zero")\n    return celsius * 9 / 5 + 32\n\n\ndef fahrenheit_to_celsius(fahrenheit: float) -> float:\n    celsius = (fahrenheit - 32) * 5 / 9\n    if celsius < ABSOLUTE_ZERO_C:\n        raise ValueError("below absolute zero")\n    return celsius\n' },
    { path: 'tests/test_convert.py', content: 'import unittest\n\nfrom tempconv import celsius_to_fahrenheit, fahrenheit_to_celsius\n\n\nclass ConvertTest(unittest.TestCase):\n    def test_round_trip(self):\n        self.assertEqual(celsius_to_fahrenheit(100), 212)\n        self.assertAlmostEqual(fahrenheit_to_celsius(212), 100)\n\n    def test_absolute_zero(self):\n        with self.assertRaises(ValueError):\n            celsius_to_fahrenheit(-300)\n\n\nif __name__ == "__main__":\n    unittest.main()\n' },
  ],
};
