"""Re-draws the recorded-runs cell of notebooks 06-14 from docs/runs and saves its output in place.

Each training notebook ends with a cell that draws the project's own 8-seed runs as they stand
(notebook.ShowRecorded; the line after its "%%" is MARKER). After the runs move on, this script
executes, in the notebook's kernel, the notebook's set-up cells (those whose first line is a
"//#@title" form) and then that cell, and writes back that cell's outputs only: every other
cell, with its outputs, stays as it was, so nothing is trained. `make reports` runs it, after
the reports, on every notebook that has such a cell (Debian's python3-nbclient):

    /usr/bin/python3 docs/recorded_cells.py notebooks/06_copy_experiments.ipynb ...
"""

import os
import sys

import nbformat
from nbclient import NotebookClient

MARKER = "// The recorded runs (docs/runs)"


def recorded_index(nb):
    """The index of the notebook's recorded-runs cell, or None."""
    for i, cell in enumerate(nb.cells):
        lines = cell.source.splitlines()
        if cell.cell_type == "code" and len(lines) > 1 and lines[0] == "%%" and lines[1].startswith(MARKER):
            return i
    return None


def save_recorded(path):
    nb = nbformat.read(path, as_version=4)
    target = recorded_index(nb)
    if target is None:
        raise SystemExit(f"{path}: no cell starts with %% and then {MARKER!r}")
    setup = [i for i, c in enumerate(nb.cells[:target])
             if c.cell_type == "code" and c.source.startswith("//#@title")]
    work = nbformat.from_dict(nb)  # executed copy: its set-up outputs are thrown away
    client = NotebookClient(work, kernel_name=nb.metadata.kernelspec.name, timeout=1800,
                            allow_errors=False, record_timing=False,
                            resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
    with client.setup_kernel():
        for i in setup + [target]:
            client.execute_cell(work.cells[i], i)
    outputs = work.cells[target].outputs
    figures = sum("image/png" in o.get("data", {}) for o in outputs)
    said = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    if figures == 0 and "not recorded yet" not in said and "too few to draw" not in said:
        # a reader of the unrun notebook would see neither a figure nor why: keep the old outputs
        raise SystemExit(f"{path}: cell {target} produced no image/png output and no line saying why; the notebook is left as it was")
    cell = nb.cells[target]
    cell.outputs = outputs  # its execution count is kept: outputs are what changed
    nbformat.validate(nb)
    nbformat.write(nb, path)
    print(f"{path}: cell {target} ({cell.get('id')}) saved with {len(cell.outputs)} outputs, {figures} PNG figures")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for p in sys.argv[1:]:
        save_recorded(p)
