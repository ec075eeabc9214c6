"""DataFusion's Python package over Dolt tables registered through the Arrow stream."""

import pytest

datafusion = pytest.importorskip("datafusion")
pyarrow = pytest.importorskip("pyarrow")

import prollystore.datafusion  # noqa: E402
import prollystore.dolt  # noqa: E402


def test_a_query_over_registered_tables_agrees_with_the_rows(vecdb):
    path = vecdb
    ctx = prollystore.datafusion.session_context(path, partitions=3)
    with prollystore.dolt.open(path) as db:
        for name in db.tables():
            whole = db.table(name).to_arrow()
            got = ctx.sql(f'SELECT count(*) AS n FROM "{name}"').to_pylist()[0]["n"]
            assert got == whole.num_rows, name
        items = db.table("items").to_arrow()
    rows = ctx.sql("SELECT * FROM items ORDER BY id").to_arrow_table()
    assert rows.column("id").to_pylist() == sorted(items.column("id").to_pylist())
    one = ctx.sql("SELECT name FROM items WHERE id = 2").to_pylist()
    assert one == [{"name": r["name"]} for r in items.to_pylist() if r["id"] == 2]


def test_another_state_and_a_subset_of_tables(vecdb):
    path = vecdb
    ctx = prollystore.datafusion.session_context(path, tables=["pairs"], at="main")
    with prollystore.dolt.open(path) as db:
        expected = db.table("pairs", at="main").to_arrow().num_rows
    assert ctx.sql("SELECT count(*) AS n FROM pairs").to_pylist()[0]["n"] == expected
    with pytest.raises(Exception):
        ctx.sql("SELECT * FROM items").collect()
