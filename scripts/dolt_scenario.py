#!/usr/bin/env python3
"""Makes a Dolt write scenario folder by running the real `dolt` CLI.

    scripts/dolt_scenario.py OPS.jsonl OUTDIR [--dolt /work/dolt-bin/dolt] [--title TEXT]

OPS.jsonl holds the operations in the format of `shared/vectors/dolt-write/README.md`, without
the fields the generator records (`create_table`/`alter_table` schema fields, `generated`,
`fast_forward`, `conflicts`; any present are ignored and recorded again). Each op is applied with
dolt exactly as that README says: a throwaway HOME whose global config holds only the init
author and `metrics.disabled`, `TZ=UTC`, no inherited `DOLT_*` variables, `dolt init` followed by
`dolt commit --amend` with pinned dates, `dolt add -A` + `dolt commit --date --author` with
`DOLT_AUTHOR_DATE`/`DOLT_COMMITTER_DATE`, every SQL op as one `dolt sql` reading stdin.

OUTDIR gets the scenario layout the conformance runner reads: `ops.jsonl` (recorded fields
filled in), `apply.sh` (the commands that were run), `before/` (the database after `init`),
`after/`, `expected/steps.jsonl`, `expected/refs.json`, `expected/branch_v.txt`,
`expected/tag_v.txt` and per branch `expected/branch/<B>/` (`tables.txt`, `<T>.csv`,
`<T>.schema.txt`, `log*.txt`), and a README.md with one row per recorded step.
"""

import argparse
import csv
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

NUMERIC = ("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double", "bit")
BINARY = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")
RECORDED = {
    "create_table": ["columns", "primary_key", "indexes", "foreign_keys", "checks", "charset",
                     "collation", "table_comment", "schema_show"],
    "alter_table": ["columns", "primary_key", "indexes", "foreign_keys", "checks", "charset",
                    "collation", "table_comment", "schema_show", "other_tables"],
    "insert": ["generated"],
    "merge": ["fast_forward", "conflicts"],
}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Failure(Exception):
    pass


class Dolt:
    """Runs dolt in DB with a throwaway HOME; every command is also written to apply.sh."""

    def __init__(self, dolt, db, author):
        self.dolt = dolt
        self.db = db
        self.home = tempfile.mkdtemp(prefix="dolt-scenario-home-")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("DOLT_")}
        self.env.update({"HOME": self.home, "TZ": "UTC"})
        self.script = []
        self.sql_count = 0
        os.makedirs(db, exist_ok=True)
        name, email = author
        for key, value in (("user.name", name), ("user.email", email),
                           ("metrics.disabled", "true")):
            self.run(["config", "--global", "--add", key, value], log=False)
        os.makedirs(db, exist_ok=True)

    def run(self, args, env=None, stdin=None, log=True, check=True):
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run([self.dolt] + args, cwd=self.db, env=e, input=stdin,
                           capture_output=True, text=False)
        if log:
            prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items())
            line = prefix + '"$DOLT" ' + " ".join(shlex.quote(a) for a in args)
            if stdin is not None:
                self.sql_count += 1
                tag = f"DOLT_SQL_{self.sql_count}"
                line += f" <<'{tag}'\n" + stdin.decode() + f"{tag}"
            self.script.append(line)
        if check and p.returncode != 0:
            raise Failure(f"dolt {' '.join(args)}: exit {p.returncode}\n"
                          f"{p.stdout.decode(errors='replace')}{p.stderr.decode(errors='replace')}")
        return p

    def comment(self, text):
        self.script.append("# " + text)

    def sql(self, statements):
        self.run(["sql"], stdin=statements.encode())

    def query(self, q, branch=None):
        """Rows of a query as dicts (not logged)."""
        args = (["--branch", branch] if branch else []) + ["sql", "-r", "json", "-q", q]
        out = self.run(args, log=False).stdout.decode()
        out = out.strip()
        return json.loads(out).get("rows", []) if out else []

    def text(self, args):
        return self.run(args, log=False).stdout


def sql_string(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


def sql_value(value, sql_type):
    if value is None:
        return "NULL"
    base = sql_type.split("(")[0].split(" ")[0].lower()
    if base in NUMERIC:
        return value
    if base in BINARY:
        if not value.startswith("hex:"):
            raise Failure(f"binary value {value!r} does not start with hex:")
        return "X'" + value[4:] + "'"
    return sql_string(value)


def quote_ident(name):
    return "`" + name.replace("`", "``") + "`"


# ---- reading `dolt schema show` ----------------------------------------------------------

def tokens(text):
    """Splits a column definition into tokens: quoted strings, parenthesised groups and words."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "'\"`":
            j = i + 1
            while j < len(text):
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < len(text) and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            j, depth = i, 0
            while j < len(text):
                ch = text[j]
                if ch in "'\"`":
                    k = j + 1
                    while k < len(text) and text[k] != ch:
                        k += 2 if text[k] == "\\" else 1
                    j = k + 1
                    continue
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                elif ch.isspace() and depth == 0:
                    break
                j += 1
            out.append(text[i:j])
            i = j
    return out


def unquote(s):
    q = s[0]
    body = s[1:-1]
    if q == "`":
        return body.replace("``", "`")
    out, i = [], 0
    esc = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "Z": "\x1a", "b": "\b"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(esc.get(body[i + 1], body[i + 1]))
            i += 2
        elif c == q and i + 1 < len(body) and body[i + 1] == q:
            out.append(q)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def ident_list(text):
    """`a`,`b` (inside parentheses, maybe with prefix lengths) -> names."""
    return [unquote(m) for m in re.findall(r"`(?:[^`]|``)*`", text)]


STOP = {"NOT", "NULL", "DEFAULT", "AUTO_INCREMENT", "COMMENT", "GENERATED", "ON", "AS"}


def parse_column(line):
    toks = tokens(line)
    name = unquote(toks[0])
    i = 1
    type_parts = []
    while i < len(toks) and toks[i].upper() not in STOP:
        type_parts.append(toks[i])
        i += 1
    col = {"name": name, "type": " ".join(type_parts), "nullable": True, "default": None,
           "auto_increment": False, "comment": None}
    while i < len(toks):
        t = toks[i].upper()
        if t == "NOT" and i + 1 < len(toks) and toks[i + 1].upper() == "NULL":
            col["nullable"] = False
            i += 2
        elif t == "NULL":
            i += 1
        elif t == "DEFAULT":
            col["default"] = toks[i + 1]
            i += 2
        elif t == "AUTO_INCREMENT":
            col["auto_increment"] = True
            i += 1
        elif t == "COMMENT":
            col["comment"] = unquote(toks[i + 1])
            i += 2
        else:
            i += 1
    return col


def parse_schema_show(text):
    """The fields a create_table op records, from `dolt schema show T` (header removed)."""
    lines = text.rstrip().rstrip(";").split("\n")
    body, tail = lines[1:-1], lines[-1]
    cols, pk, indexes, fks, checks = [], [], [], [], []
    for raw in body:
        line = raw.strip().rstrip(",")
        if line.startswith("`"):
            cols.append(parse_column(line))
        elif line.startswith("PRIMARY KEY"):
            pk = ident_list(line)
        elif line.startswith(("KEY ", "UNIQUE KEY ", "FULLTEXT KEY ", "SPATIAL KEY ",
                              "VECTOR KEY ")):
            m = re.match(r"(\w+ )?KEY (`(?:[^`]|``)*`) \((.*)\)", line)
            indexes.append({"name": unquote(m.group(2)), "columns": ident_list(m.group(3)),
                            "unique": line.startswith("UNIQUE")})
        elif line.startswith("CONSTRAINT"):
            m = re.match(r"CONSTRAINT (`(?:[^`]|``)*`) (.*)", line)
            cname, rest = unquote(m.group(1)), m.group(2)
            if rest.startswith("CHECK "):
                expr = rest[len("CHECK ("):]
                enforced = expr.endswith(" NOT ENFORCED")
                if enforced:
                    expr = expr[: -len(" NOT ENFORCED")]
                checks.append({"name": cname, "expr": expr[:-1]})
            else:
                m2 = re.match(r"FOREIGN KEY \((.*?)\) REFERENCES (`(?:[^`]|``)*`) \((.*?)\)(.*)",
                              rest)
                tail_fk = m2.group(4)
                on_del = re.search(r"ON DELETE (CASCADE|RESTRICT|SET NULL|NO ACTION)", tail_fk)
                on_upd = re.search(r"ON UPDATE (CASCADE|RESTRICT|SET NULL|NO ACTION)", tail_fk)
                fks.append({"name": cname, "columns": ident_list(m2.group(1)),
                            "parent_table": unquote(m2.group(2)),
                            "parent_columns": ident_list(m2.group(3)),
                            "on_update": on_upd.group(1) if on_upd else None,
                            "on_delete": on_del.group(1) if on_del else None})
        else:
            raise Failure(f"schema line not understood: {line!r}")
    charset = re.search(r"DEFAULT CHARSET=(\w+)", tail).group(1)
    collation = re.search(r"COLLATE=(\w+)", tail).group(1)
    comment = re.search(r"COMMENT=('(?:[^'\\]|\\.|'')*')", tail)
    return {"columns": cols, "primary_key": pk, "indexes": indexes, "foreign_keys": fks,
            "checks": checks, "charset": charset, "collation": collation,
            "table_comment": unquote(comment.group(1)) if comment else None}


def schema_show(d, table, branch=None):
    args = (["--branch", branch] if branch else []) + ["schema", "show", table]
    out = d.text(args).decode()
    return out.split("\n", 1)[1].rstrip("\n")


def describe(d, table):
    show = schema_show(d, table)
    fields = parse_schema_show(show)
    tags = {}
    out = d.text(["schema", "tags", "-r", "csv", table]).decode()
    for t, c, tag in list(csv.reader(io.StringIO(out)))[1:]:
        if t == table:
            tags[c] = int(tag)
    for c in fields["columns"]:
        c["tag"] = tags[c["name"]]
    fields["schema_show"] = show
    return fields


# ---- the state dolt is in after a step -----------------------------------------------------

def show_commit(d, spec):
    text = d.text(["show", "--no-pretty", spec]).decode()
    meta = {}
    for key in ("Timestamp", "UserTimestamp", "Height"):
        meta[key] = re.search(r"^\s*" + key + r": (.*)$", text, re.M).group(1).strip()
    root = re.search(r"RootValue: \{\s*#(\w+)", text).group(1)
    parents_block = re.search(r"Parents: \{(.*?)\}", text, re.S).group(1)
    return meta, root, re.findall(r"#(\w+)", parents_block)


def current_branch(d):
    return d.query("select active_branch() as b")[0]["b"]


def hashof(d, spec):
    return d.query(f"select dolt_hashof({sql_string(spec)}) as h")[0]["h"]


def step_state(d, step, op):
    commit = hashof(d, "HEAD")
    meta, root, parents = show_commit(d, commit)
    db_root = d.query("select dolt_hashof_db('HEAD') as h")[0]["h"]
    if db_root != root:
        raise Failure(f"step {step}: dolt_hashof_db {db_root} != RootValue {root}")
    tables = {}
    for r in d.query("show tables"):
        name = list(r.values())[0]
        tables[name] = d.query(f"select dolt_hashof_table({sql_string(name)}) as h")[0]["h"]
    out = {"step": step, "op": op["op"], "branch": current_branch(d), "commit": commit,
           "parents": parents, "height": int(meta["Height"]), "root": root,
           "tables": dict(sorted(tables.items())),
           "commit_timestamp": meta["Timestamp"], "commit_user_timestamp": meta["UserTimestamp"]}
    auto = {}
    for r in d.query("select table_name, auto_increment from information_schema.tables "
                     "where table_schema = database() and auto_increment is not null "
                     "order by table_name"):
        name = r["table_name"] if "table_name" in r else r["TABLE_NAME"]
        ai = r.get("auto_increment", r.get("AUTO_INCREMENT"))
        if any(c["auto_increment"] for c in d.schemas.get(name, {}).get("columns", [])):
            auto[name] = int(ai)
    if auto:
        out["auto_increment"] = auto
    return out


# ---- applying ops --------------------------------------------------------------------------

def date_env(date, committer_date=None):
    return {"DOLT_AUTHOR_DATE": date, "DOLT_COMMITTER_DATE": committer_date or date}


def where(columns, values, types):
    return " AND ".join(f"{quote_ident(c)} = {sql_value(v, types[c])}"
                        for c, v in zip(columns, values))


def apply(d, ops, out_dir):
    steps, recorded_ops = [], []
    d.schemas = {}
    for step, op in enumerate(ops):
        kind = op["op"]
        op = {k: v for k, v in op.items() if k not in RECORDED.get(kind, [])}
        label = {"init": lambda: f"init {op['branch']} {op['message']}",
                 "commit": lambda: f"commit {op['message']}",
                 "branch": lambda: f"branch {op['name']}",
                 "checkout": lambda: f"checkout {op['branch']}",
                 "merge": lambda: f"merge {op['branch']} {op['message']}",
                 "tag": lambda: f"tag {op['name']} {op['message']}",
                 "delete_branch": lambda: f"delete_branch {op['name']}"}.get(
            kind, lambda: f"{kind} {op.get('table', '')}")()
        d.comment(f"step {step}: {label}")
        types = {c["name"]: c["type"] for c in d.schemas.get(op.get("table"), {}).get(
            "columns", [])}
        if kind == "init":
            if step != 0:
                raise Failure("init must be the first op")
            env = date_env(op["date"])
            d.run(["init", "--initial-branch", op["branch"], "--date", op["date"]], env=env)
            d.script.append("# dolt init stores time.Now() as the committer timestamp even with "
                            "--date; amending the root commit with the pinned dates makes it "
                            "deterministic")
            d.run(["commit", "--amend", "-m", op["message"], "--date", op["date"]], env=env)
            shutil.copytree(os.path.join(d.db, ".dolt"), os.path.join(out_dir, "before", ".dolt"))
            steps.append(step_state(d, step, op))
        elif kind == "create_table":
            d.sql(op["sql"].rstrip().rstrip(";") + ";\n")
            op.update(describe(d, op["table"]))
            d.schemas[op["table"]] = op
        elif kind == "alter_table":
            others = {t: schema_show(d, t) for t in d.schemas if t != op["table"]}
            d.sql(op["sql"].rstrip().rstrip(";") + ";\n")
            name = op.get("new_table", op["table"])
            d.schemas.pop(op["table"], None)
            op.update(describe(d, name))
            changed = [{"table": t, "schema_show": schema_show(d, t)} for t in sorted(others)
                       if t in d.schemas and schema_show(d, t) != others[t]]
            if changed:
                op["other_tables"] = changed
            d.schemas[name] = op
        elif kind == "insert":
            table = op["table"]
            ai = [c["name"] for c in d.schemas[table]["columns"]
                  if c["auto_increment"] and c["name"] not in op["columns"]]
            before = set()
            if ai:
                before = {str(r[ai[0]]) for r in d.query(
                    f"select {quote_ident(ai[0])} from {quote_ident(table)}")}
            rows = ",\n".join("(" + ", ".join(sql_value(v, types[c])
                                              for c, v in zip(op["columns"], r)) + ")"
                              for r in op["rows"])
            cols = ", ".join(quote_ident(c) for c in op["columns"])
            d.sql(f"INSERT INTO {quote_ident(table)} ({cols}) VALUES\n{rows};\n")
            if ai:
                now = [r[ai[0]] for r in d.query(
                    f"select {quote_ident(ai[0])} from {quote_ident(table)} "
                    f"order by {quote_ident(ai[0])}")]
                new = [str(v) for v in now if str(v) not in before]
                if len(new) != len(op["rows"]):
                    raise Failure(f"step {step}: {len(new)} generated values for "
                                  f"{len(op['rows'])} rows")
                op["generated"] = {ai[0]: new}
        elif kind == "update":
            table = op["table"]
            pk = d.schemas[table]["primary_key"]
            stmts = []
            for r in op["rows"]:
                vals = dict(zip(op["columns"], r))
                sets = ", ".join(f"{quote_ident(c)} = {sql_value(v, types[c])}"
                                 for c, v in zip(op["columns"], r))
                cond = where(pk, [vals[k] for k in pk], types)
                stmts.append(f"UPDATE {quote_ident(table)} SET {sets} WHERE {cond};\n")
            d.sql("".join(stmts))
        elif kind == "delete":
            table = op["table"]
            pk = d.schemas[table]["primary_key"]
            if "keys" in op:
                stmts = [f"DELETE FROM {quote_ident(table)} WHERE {where(pk, k, types)};\n"
                         for k in op["keys"]]
            else:
                cols = [c["name"] for c in d.schemas[table]["columns"]]
                stmts = ["DELETE FROM {} WHERE {} LIMIT 1;\n".format(
                    quote_ident(table),
                    " AND ".join(f"{quote_ident(c)} <=> {sql_value(v, types[c])}"
                                 for c, v in zip(cols, r))) for r in op["rows"]]
            d.sql("".join(stmts))
        elif kind == "drop_table":
            d.sql(f"DROP TABLE {quote_ident(op['table'])};\n")
            d.schemas.pop(op["table"], None)
        elif kind == "commit":
            d.run(["add", "-A"])
            env = date_env(op["date"], op.get("committer_date"))
            if "committer_name" in op:
                env["DOLT_COMMITTER_NAME"] = op["committer_name"]
            if "committer_email" in op:
                env["DOLT_COMMITTER_EMAIL"] = op["committer_email"]
            d.run(["commit", "-m", op["message"], "--date", op["date"], "--author",
                   f"{op['author_name']} <{op['author_email']}>"], env=env)
            steps.append(step_state(d, step, op))
        elif kind == "branch":
            d.run(["branch", op["name"], op["from"]])
        elif kind == "checkout":
            d.run(["checkout", op["branch"]])
            d.schemas = {t: describe(d, t) for t in
                         (list(r.values())[0] for r in d.query("show tables"))}
        elif kind == "tag":
            d.run(["tag", "-m", op["message"], op["name"], op["ref"]], env=date_env(op["date"]))
            t = d.query(f"select * from dolt_tags where tag_name = {sql_string(op['name'])}")[0]
            steps.append({"step": step, "op": "tag", "branch": current_branch(d),
                          "tag": op["name"], "commit": t["tag_hash"], "tagger": t["tagger"],
                          "tagger_email": t["email"], "message": t["message"],
                          "nondeterministic": {"tag_date": t["date"]}})
        elif kind == "merge":
            head, theirs = hashof(d, "HEAD"), hashof(d, op["branch"])
            base = d.query(f"select dolt_merge_base('HEAD', {sql_string(op['branch'])}) as b")[0]["b"]
            p = d.run(["merge", "-m", op["message"], "--author",
                       f"{op['author_name']} <{op['author_email']}>", op["branch"]],
                      env=date_env(op["date"]), check=False)
            conflicts = sorted(r["table"] for r in d.query("select `table` from dolt_conflicts"))
            if p.returncode != 0 or conflicts:
                raise Failure(f"step {step}: merge did not complete (conflicts {conflicts}):\n"
                              f"{p.stdout.decode()}{p.stderr.decode()}")
            op["fast_forward"] = base == theirs or base == head and hashof(d, "HEAD") == theirs
            op["conflicts"] = []
            s = step_state(d, step, op)
            s.update({"fast_forward": op["fast_forward"], "merge_base": base, "theirs": theirs,
                      "conflicts": []})
            steps.append(s)
            d.schemas = {t: describe(d, t) for t in
                         (list(r.values())[0] for r in d.query("show tables"))}
        elif kind == "delete_branch":
            d.run(["branch", "-D" if op.get("force") else "-d", op["name"]])
        else:
            raise Failure(f"step {step}: unknown op {kind!r}")
        recorded_ops.append(op)
    return recorded_ops, steps


def write_expected(d, out_dir):
    exp = os.path.join(out_dir, "expected")
    current = current_branch(d)
    branches = {r["name"]: r["hash"] for r in d.query(
        "select name, hash from dolt_branches order by name")}
    tags = {r["tag_name"]: r["tag_hash"] for r in d.query(
        "select tag_name, tag_hash from dolt_tags order by tag_name")}
    with open(os.path.join(exp, "refs.json"), "w") as f:
        json.dump({"current": current, "branches": branches, "tags": tags}, f, indent=1)
        f.write("\n")
    with open(os.path.join(exp, "branch_v.txt"), "wb") as f:
        f.write(d.text(["branch", "-v"]))
    with open(os.path.join(exp, "tag_v.txt"), "wb") as f:
        f.write(d.text(["tag", "-v"]))
    for b in branches:
        bdir = os.path.join(exp, "branch", b)
        os.makedirs(bdir)
        for name, args in (("log", ["log", b]), ("log_oneline", ["log", "--oneline", b])):
            raw = d.text(args)
            open(os.path.join(bdir, name + ".txt"), "wb").write(raw)
            open(os.path.join(bdir, name + ".plain.txt"), "wb").write(
                ANSI.sub("", raw.decode()).encode())
        names = sorted(list(r.values())[0] for r in d.query("show tables", branch=b))
        open(os.path.join(bdir, "tables.txt"), "w").write("".join(n + "\n" for n in names))
        for t in names:
            show = d.text(["schema", "show", b, t])
            open(os.path.join(bdir, t + ".schema.txt"), "wb").write(show)
            fields = parse_schema_show(show.decode().split("\n", 1)[1].rstrip("\n"))
            order = fields["primary_key"] or [c["name"] for c in fields["columns"]]
            q = f"SELECT * FROM {quote_ident(t)} ORDER BY " + ", ".join(map(quote_ident, order))
            open(os.path.join(bdir, t + ".csv"), "wb").write(
                d.text(["--branch", b, "sql", "-r", "csv", "-q", q]))
    return current, branches, tags


def dir_size(path):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ops")
    ap.add_argument("out")
    ap.add_argument("--dolt", default=os.environ.get("PROLLY_DOLT", "/work/dolt-bin/dolt"))
    ap.add_argument("--title", default="", help="one paragraph for README.md")
    args = ap.parse_args()
    ops = [json.loads(l) for l in open(args.ops, encoding="utf-8") if l.strip()]
    if not ops or ops[0]["op"] != "init":
        sys.exit("the first op must be init")
    if os.path.exists(args.out):
        sys.exit(f"{args.out} exists; give a new folder")
    work = tempfile.mkdtemp(prefix="dolt-scenario-")
    db = os.path.join(work, "db")
    out = args.out
    os.makedirs(os.path.join(out, "expected"))
    d = Dolt(args.dolt, db, (ops[0]["author_name"], ops[0]["author_email"]))
    try:
        recorded, steps = apply(d, ops, out)
        d.comment(f"step {len(ops) - 1} done")
        d.script.pop()
        current, branches, tags = write_expected(d, out)
    except Failure as e:
        sys.exit(f"dolt_scenario: {e}")
    with open(os.path.join(out, "ops.jsonl"), "w", encoding="utf-8") as f:
        for op in recorded:
            f.write(json.dumps(op, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "expected", "steps.jsonl"), "w", encoding="utf-8") as f:
        for s in steps:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")
    name = os.path.basename(os.path.abspath(out))
    author = ops[0]
    header = [
        "#!/usr/bin/env bash",
        f"# Replays scenario '{name}' with the dolt CLI (written by dolt_scenario.py from "
        "ops.jsonl).",
        "#   apply.sh DBDIR      env DOLT (default `dolt` from PATH); uses a throwaway HOME.",
        "# Prints the branch heads at the end; they must match expected/refs.json.",
        "set -euo pipefail",
        "DOLT=${DOLT:-dolt}",
        "DB=${1:?usage: apply.sh DBDIR}",
        "export TZ=UTC HOME=$(mktemp -d)",
        'for v in $(env | grep -o "^DOLT_[A-Z_]*" || true); do unset "$v"; done',
        f'"$DOLT" config --global --add user.name {shlex.quote(author["author_name"])} >/dev/null',
        f'"$DOLT" config --global --add user.email {shlex.quote(author["author_email"])} '
        ">/dev/null",
        '"$DOLT" config --global --add metrics.disabled true >/dev/null',
        'mkdir -p "$DB"; cd "$DB"',
    ]
    footer = ['"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"',
              '"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"']
    with open(os.path.join(out, "apply.sh"), "w", encoding="utf-8") as f:
        f.write("\n".join(header + d.script + footer) + "\n")
    os.chmod(os.path.join(out, "apply.sh"), 0o755)
    shutil.copytree(os.path.join(db, ".dolt"), os.path.join(out, "after", ".dolt"))
    counts = {}
    for op in recorded:
        counts[op["op"]] = counts.get(op["op"], 0) + 1
    rows = [f"| {s['step']} | {s['op']} | {s['branch']} | {s['commit']} | {s.get('root', '')} | "
            f"{recorded[s['step']].get('message', '')} |" for s in steps]
    readme = [f"# Scenario `{name}`", "", args.title or "(no description given)", "",
              "Operations: " + ", ".join(f"{k} x{v}" for k, v in counts.items())
              + f" ({len(recorded)} in all).", "",
              f"Sizes: before/ {dir_size(os.path.join(out, 'before'))} bytes, after/ "
              f"{dir_size(os.path.join(out, 'after'))} bytes.", "",
              "Final refs: " + ", ".join(f"{b} = {h}" for b, h in branches.items())
              + f"; current branch {current}.", "",
              "| step | op | branch | commit | root | what |", "|---|---|---|---|---|---|"] + rows
    readme += ["", "Made by `scripts/dolt_scenario.py` with `dolt` "
               + d.text(["version"]).decode().split("\n")[0].strip()
               + "; `apply.sh` replays it with plain dolt. File formats: "
               "`shared/vectors/dolt-write/README.md`."]
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(readme) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(d.home, ignore_errors=True)


if __name__ == "__main__":
    main()
