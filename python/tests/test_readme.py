"""The examples in python/README.md run (against the golden vectors' `vecdb`)."""

import contextlib
import io
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _examples():
    text = README.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("index", range(len(_examples())))
def test_readme_example_runs(index, vecdb, tmp_path):
    code = _examples()[index]
    if "Writer(" in code:
        # Writing examples get a writable copy of a freshly initialised database.
        from test_dolt_write import writable_copy

        vecdb = writable_copy(tmp_path)
    if "s3://" in code:
        # Needs a bucket: the same calls run against MinIO in test_parts_s3.py.
        pytest.skip("the s3:// example runs against MinIO in test_parts_s3.py")
    code = code.replace("path/to/doltdb", str(vecdb))
    if "prollystore.dask" in code:
        pytest.importorskip("dask.dataframe")
    if "duckdb" in code:
        pytest.importorskip("duckdb")
        pytest.importorskip("polars")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README example {index}", "exec"), {})
    if "merged.get(7)" in code:
        assert "(7, 'SEVEN', 70) []" in out.getvalue()
