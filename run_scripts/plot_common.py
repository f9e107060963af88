"""Shared by the plot_*.py scripts (imported from this folder): matplotlib without a
display, and the command line and loading of the scripts that plot one results file or
one triada-explore sweep."""
import argparse
import json
import os
import sys


def pyplot(prog):
    """matplotlib.pyplot on the Agg backend, or one error line and exit if it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover
        sys.exit(f"{prog}: error: matplotlib is needed ({e})")
    return plt


def parse(description, name, what, default_out):
    """The command line `NAME [-o DIR]` of a plot script."""
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(name, help=what)
    ap.add_argument("-o", "--out", default=None, help=f"output directory (default: {default_out})")
    return ap.parse_args()


def load_results(prog, description, json_help, schema):
    """Parses `JSON [-o DIR]`, reads the file and checks it is `schema` (a name, or a tuple
    of the names accepted) with records.
    Returns (doc, the JSON's directory, the output directory, created if need be)."""
    a = parse(description, "json", json_help, "the JSON's directory")
    try:
        with open(a.json) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{prog}: error: {a.json}: {e}")
    names = (schema,) if isinstance(schema, str) else tuple(schema)
    if doc.get("schema") not in names or not doc.get("records"):
        sys.exit(f"{prog}: error: {a.json}: not a {' or '.join(names)} file with records")
    dirn = os.path.dirname(os.path.abspath(a.json))
    out = a.out or dirn
    os.makedirs(out, exist_ok=True)
    return doc, dirn, out


def load_sweep(prog, description):
    """Parses `OUT [-o DIR]` for a script that plots a triada-explore sweep (doc/explore.md)
    and reads its table with the reports (triada.explore.results; triada-explore runs
    the script with the package importable, by hand set PYTHONPATH=build/python).
    Returns (rows, OUT, the output directory, created if need be)."""
    a = parse(description, "sweep", "a triada-explore output folder (results.csv, cache/)",
              "the sweep's")
    try:
        from triada.explore import results
    except ImportError as e:
        sys.exit(f"{prog}: error: the triada package is needed (PYTHONPATH=build/python): {e}")
    try:
        rows = results(a.sweep)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"{prog}: error: {a.sweep}: not a triada-explore output folder ({e})")
    out = a.out or a.sweep
    os.makedirs(out, exist_ok=True)
    return rows, os.path.abspath(a.sweep), out
