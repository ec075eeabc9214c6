//! A `SELECT` of rows by whole primary key, planned straight to the table's key lookup.
//!
//! `SELECT * FROM t WHERE id = 42` is most of what an application asks of a database, and
//! DataFusion's SQL planner, analyzer and optimizers take four fifths of its time (two
//! thirds of a million instructions for a plan that ends as one scan; `docs/PERF.md`,
//! "Session 41"). A statement of this shape gets the same scan without them, as TiDB plans
//! its "point get": the scan [`DoltTable::scan`] builds for the same filters, since the
//! table says it returns exactly the rows that pass them
//! ([`DoltTable::looks_up_exactly`]): nothing is left for a plan above it to do but choose
//! and name columns. The shape, and nothing else (any other statement is DataFusion's):
//!
//! * one table of the session's catalog (a Dolt table, as DataFusion would resolve the name:
//!   `t`, `` `state`.t ``, with or without an alias), no join, `DISTINCT`, grouping, order,
//!   `LIMIT` or `WITH`;
//! * items that are `*` or columns (`c`, `t.c`), each with or without an alias, no name twice;
//! * `WHERE` a conjunction of `key = literal` and `key IN (literal, …)` that covers the whole
//!   primary key, with integer literals for integer keys (in the column's range) and quoted
//!   strings for text keys.
//!
//! Every answer is the one DataFusion's plan gives (`tests::point_selects_answer_as_planned`
//! runs every such query of the Dolt-checked tests, and keys of every key column of the
//! test databases, both ways).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{Column, DataFusionError, ScalarValue, TableReference};
use datafusion::execution::context::SessionState;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::{
    self, BinaryOperator, GroupByExpr, Ident, ObjectNamePart, Query, Select, SelectItem, SetExpr,
    Statement, TableFactor, TableWithJoins, UnaryOperator, Value, WildcardAdditionalOptions,
};
use prollystore_dolt::schema::SqlType;

use crate::error::Result;
use crate::table::DoltTable;

/// A planned point `SELECT`: the table's scan and the names of its columns.
pub(crate) struct PointSelect {
    scan: Arc<dyn ExecutionPlan>,
    /// The scan's schema with the select list's names.
    schema: SchemaRef,
}

impl PointSelect {
    /// The schema of the rows, named as the select list names them.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Reads the rows.
    pub(crate) async fn run(&self, task: Arc<TaskContext>) -> Result<Vec<RecordBatch>> {
        let batches = datafusion::physical_plan::collect(self.scan.clone(), task).await?;
        if self.scan.schema() == self.schema {
            return Ok(batches);
        }
        Ok(batches
            .into_iter()
            .map(|b| RecordBatch::try_new(self.schema.clone(), b.columns().to_vec()))
            .collect::<std::result::Result<_, _>>()
            .map_err(DataFusionError::from)?)
    }
}

/// A literal of the `WHERE` clause.
enum Literal<'a> {
    Integer(i128),
    Text(&'a str),
}

/// A column as the statement names it: its qualifier (if any) and name.
type ColumnRef<'a> = (Option<&'a Ident>, &'a Ident);

/// The parts of a statement of the point shape.
struct Shape<'a> {
    table: &'a ast::ObjectName,
    alias: Option<&'a Ident>,
    items: &'a [SelectItem],
    /// Each filter: a column and the values it equals (one for `=`).
    filters: Vec<(ColumnRef<'a>, Vec<Literal<'a>>)>,
}

/// The point plan of `statement`, if it has the shape this module plans (see the module
/// documentation); `None` for any other statement, which DataFusion then plans.
pub(crate) async fn plan(
    state: &SessionState,
    statement: &DfStatement,
) -> Result<Option<PointSelect>> {
    let Some(shape) = shape(statement) else {
        return Ok(None);
    };
    let normalize = state
        .config()
        .options()
        .sql_parser
        .enable_ident_normalization;
    let name = |id: &Ident| match id.quote_style {
        None if normalize => id.value.to_ascii_lowercase(),
        _ => id.value.clone(),
    };
    // The table, resolved as DataFusion resolves a name.
    let parts: Option<Vec<String>> = shape
        .table
        .0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(id) => Some(name(id)),
            _ => None,
        })
        .collect();
    let reference = match parts.as_deref() {
        Some([t]) => TableReference::bare(t.as_str()),
        Some([s, t]) => TableReference::partial(s.as_str(), t.as_str()),
        Some([c, s, t]) => TableReference::full(c.as_str(), s.as_str(), t.as_str()),
        _ => return Ok(None),
    };
    let options = state.config().options();
    let resolved = reference.clone().resolve(
        &options.catalog.default_catalog,
        &options.catalog.default_schema,
    );
    let Some(schema) = state
        .catalog_list()
        .catalog(&resolved.catalog)
        .and_then(|c| c.schema(&resolved.schema))
    else {
        return Ok(None);
    };
    let Ok(Some(provider)) = schema.table(&resolved.table).await else {
        return Ok(None);
    };
    let Some(table) = provider.as_any().downcast_ref::<DoltTable>() else {
        return Ok(None);
    };
    let fields = provider.schema();
    // A column named as DataFusion finds it: qualified (if at all) by the alias if there is
    // one, else by the table's one-part name.
    let qualifier = match (shape.alias, &reference) {
        (Some(alias), _) => Some(name(alias)),
        (None, TableReference::Bare { table }) => Some(table.to_string()),
        (None, _) => None,
    };
    let find = |(q, column): ColumnRef<'_>| -> Option<usize> {
        if let Some(q) = q {
            if qualifier.as_deref() != Some(name(q).as_str()) {
                return None;
            }
        }
        fields.index_of(&name(column)).ok()
    };
    // The items: columns of the table, named as written or by their aliases.
    let mut columns = Vec::new();
    let mut named: Vec<Field> = Vec::new();
    for item in shape.items {
        let (expr, alias) = match item {
            SelectItem::Wildcard(options) if wildcard_plain(options) => {
                for (i, f) in fields.fields().iter().enumerate() {
                    columns.push(i);
                    named.push(f.as_ref().clone());
                }
                continue;
            }
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias)),
            _ => return Ok(None),
        };
        let Some(i) = column_ref(expr).and_then(find) else {
            return Ok(None);
        };
        columns.push(i);
        let field = fields.field(i).clone();
        named.push(match alias {
            Some(a) => field.with_name(name(a)),
            None => field,
        });
    }
    // No name twice (DataFusion refuses it or renames; its answer then).
    for (n, f) in named.iter().enumerate() {
        if named[..n].iter().any(|g| g.name() == f.name()) {
            return Ok(None);
        }
    }
    // The filters, with each literal of its column's type: the filters DataFusion's
    // optimizer would hand the scan.
    let dolt = &table.table().schema;
    let visible = dolt.visible_columns();
    let mut filters = Vec::with_capacity(shape.filters.len());
    for (column, values) in &shape.filters {
        let Some(i) = find(*column) else {
            return Ok(None);
        };
        let Some(sql_type) = visible
            .get(i)
            .and_then(|&c| dolt.columns.get(c))
            .map(|c| &c.sql_type)
        else {
            return Ok(None);
        };
        let field = fields.field(i);
        let typed: Option<Vec<Expr>> = values
            .iter()
            .map(|v| typed(v, sql_type, field.data_type()).map(|s| Expr::Literal(s, None)))
            .collect();
        let Some(mut typed) = typed else {
            return Ok(None);
        };
        let column = Box::new(Expr::Column(Column::new_unqualified(field.name())));
        filters.push(if typed.len() == 1 {
            Expr::BinaryExpr(datafusion::logical_expr::BinaryExpr::new(
                column,
                datafusion::logical_expr::Operator::Eq,
                Box::new(typed.remove(0)),
            ))
        } else {
            Expr::InList(InList::new(column, typed, false))
        });
    }
    let refs: Vec<&Expr> = filters.iter().collect();
    if !table.looks_up_exactly(&refs) {
        return Ok(None);
    }
    let scan =
        datafusion::catalog::TableProvider::scan(table, state, Some(&columns), &filters, None)
            .await?;
    let schema = Arc::new(Schema::new_with_metadata(
        named,
        scan.schema().metadata().clone(),
    ));
    Ok(Some(PointSelect { scan, schema }))
}

/// `*` with none of its options (`EXCEPT`, `REPLACE`, …).
fn wildcard_plain(options: &WildcardAdditionalOptions) -> bool {
    let WildcardAdditionalOptions {
        wildcard_token: _,
        opt_ilike,
        opt_exclude,
        opt_except,
        opt_replace,
        opt_rename,
    } = options;
    opt_ilike.is_none()
        && opt_exclude.is_none()
        && opt_except.is_none()
        && opt_replace.is_none()
        && opt_rename.is_none()
}

/// `literal` as a value of a column of `sql_type` stored as `data_type`, where it is that
/// value exactly: an integer in an integer column's range, a string for text.
fn typed(literal: &Literal<'_>, sql_type: &SqlType, data_type: &DataType) -> Option<ScalarValue> {
    match (literal, sql_type) {
        (Literal::Integer(v), SqlType::Int { .. }) => {
            let v = *v;
            Some(match data_type {
                DataType::Int8 => ScalarValue::Int8(Some(v.try_into().ok()?)),
                DataType::Int16 => ScalarValue::Int16(Some(v.try_into().ok()?)),
                DataType::Int32 => ScalarValue::Int32(Some(v.try_into().ok()?)),
                DataType::Int64 => ScalarValue::Int64(Some(v.try_into().ok()?)),
                DataType::UInt8 => ScalarValue::UInt8(Some(v.try_into().ok()?)),
                DataType::UInt16 => ScalarValue::UInt16(Some(v.try_into().ok()?)),
                DataType::UInt32 => ScalarValue::UInt32(Some(v.try_into().ok()?)),
                DataType::UInt64 => ScalarValue::UInt64(Some(v.try_into().ok()?)),
                _ => return None,
            })
        }
        (Literal::Text(s), SqlType::Text { .. }) if *data_type == DataType::Utf8 => {
            Some(ScalarValue::Utf8(Some((*s).to_string())))
        }
        _ => None,
    }
}

/// The parts of `statement` if it is a `SELECT` of the point shape.
fn shape(statement: &DfStatement) -> Option<Shape<'_>> {
    let DfStatement::Statement(s) = statement else {
        return None;
    };
    let Statement::Query(query) = s.as_ref() else {
        return None;
    };
    let Query {
        with,
        body,
        order_by,
        limit_clause,
        fetch,
        locks,
        for_clause,
        settings,
        format_clause,
        pipe_operators,
    } = query.as_ref();
    if with.is_some()
        || order_by.is_some()
        || limit_clause.is_some()
        || fetch.is_some()
        || !locks.is_empty()
        || for_clause.is_some()
        || settings.is_some()
        || format_clause.is_some()
        || !pipe_operators.is_empty()
    {
        return None;
    }
    let SetExpr::Select(select) = body.as_ref() else {
        return None;
    };
    let Select {
        select_token: _,
        distinct,
        top,
        top_before_distinct: _,
        projection,
        exclude,
        into,
        from,
        lateral_views,
        prewhere,
        selection,
        group_by,
        cluster_by,
        distribute_by,
        sort_by,
        having,
        named_window,
        qualify,
        window_before_qualify: _,
        value_table_mode,
        connect_by,
        flavor: _,
    } = select.as_ref();
    let grouped = match group_by {
        GroupByExpr::Expressions(exprs, modifiers) => !exprs.is_empty() || !modifiers.is_empty(),
        GroupByExpr::All(_) => true,
    };
    if distinct.is_some()
        || top.is_some()
        || exclude.is_some()
        || into.is_some()
        || !lateral_views.is_empty()
        || prewhere.is_some()
        || grouped
        || !cluster_by.is_empty()
        || !distribute_by.is_empty()
        || !sort_by.is_empty()
        || having.is_some()
        || !named_window.is_empty()
        || qualify.is_some()
        || value_table_mode.is_some()
        || connect_by.is_some()
    {
        return None;
    }
    let [TableWithJoins { relation, joins }] = from.as_slice() else {
        return None;
    };
    if !joins.is_empty() {
        return None;
    }
    let TableFactor::Table {
        name,
        alias,
        args,
        with_hints,
        version,
        with_ordinality,
        partitions,
        json_path,
        sample,
        index_hints,
    } = relation
    else {
        return None;
    };
    if args.is_some()
        || !with_hints.is_empty()
        || version.is_some()
        || *with_ordinality
        || !partitions.is_empty()
        || json_path.is_some()
        || sample.is_some()
        || !index_hints.is_empty()
        || alias.as_ref().is_some_and(|a| !a.columns.is_empty())
    {
        return None;
    }
    let mut filters = Vec::new();
    conjuncts(selection.as_ref()?, &mut filters)?;
    Some(Shape {
        table: name,
        alias: alias.as_ref().map(|a| &a.name),
        items: projection,
        filters,
    })
}

/// Adds the terms of the conjunction `e` to `out`, if each is `column = literal`,
/// `literal = column` or `column IN (literal, …)`.
fn conjuncts<'a>(e: &'a ast::Expr, out: &mut Vec<(ColumnRef<'a>, Vec<Literal<'a>>)>) -> Option<()> {
    match e {
        ast::Expr::Nested(inner) => conjuncts(inner, out),
        ast::Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out)?;
            conjuncts(right, out)
        }
        ast::Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } => {
            let (column, value) = match (column_ref(left), column_ref(right)) {
                (Some(c), None) => (c, literal(right)?),
                (None, Some(c)) => (c, literal(left)?),
                _ => return None,
            };
            out.push((column, vec![value]));
            Some(())
        }
        ast::Expr::InList {
            expr,
            list,
            negated: false,
        } => {
            let values: Option<Vec<Literal<'a>>> = list.iter().map(literal).collect();
            out.push((column_ref(expr)?, values?));
            Some(())
        }
        _ => None,
    }
}

/// `e` as a column: `c` or `q.c`.
fn column_ref(e: &ast::Expr) -> Option<ColumnRef<'_>> {
    match e {
        ast::Expr::Identifier(id) => Some((None, id)),
        ast::Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [q, c] => Some((Some(q), c)),
            _ => None,
        },
        _ => None,
    }
}

/// `e` as an integer (`42`, `-42`) or a single-quoted string.
fn literal(e: &ast::Expr) -> Option<Literal<'_>> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            Value::Number(text, false) if text.bytes().all(|b| b.is_ascii_digit()) => {
                text.parse().ok().map(Literal::Integer)
            }
            Value::SingleQuotedString(s) => Some(Literal::Text(s)),
            _ => None,
        },
        ast::Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match literal(expr)? {
            Literal::Integer(v) => Some(Literal::Integer(-v)),
            Literal::Text(_) => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use datafusion::arrow::compute::concat_batches;
    use datafusion::arrow::util::display::array_value_to_string;
    use datafusion::common::config::Dialect;

    use super::*;
    use crate::DoltSession;

    /// Runs `sql` through [`DoltSession::query`] and through DataFusion's own planning
    /// (a DataFrame), asserts the two answers are equal (headers, columns with their types
    /// and metadata, rows), and says whether the point plan was used.
    async fn both_ways(session: &DoltSession, sql: &str) -> bool {
        let state = session.context().state();
        let rewritten = crate::as_of::rewrite(sql).unwrap();
        let statement = state.sql_to_statement(&rewritten, &Dialect::MySQL).unwrap();
        let point = plan(&state, &statement).await.unwrap().is_some();
        if !point {
            return false;
        }
        let ours = session.query(sql).await;
        let theirs = match session.plan(sql, true).await {
            Ok((df, items)) => {
                let schema = df.schema().inner().clone();
                df.collect()
                    .await
                    .map(|b| (crate::headers(items, &schema), b))
            }
            Err(e) => Err(DataFusionError::Plan(e.to_string())),
        };
        let (ours, (headers, batches)) = match (ours, theirs) {
            (Ok(o), Ok(t)) => (o, t),
            (Err(_), Err(_)) => panic!("{sql}: planned as a point query, fails in DataFusion"),
            (o, t) => panic!("{sql}: ours {:?}, DataFusion's {:?}", o.err(), t.err()),
        };
        assert_eq!(ours.headers, headers, "{sql}");
        let rows = |b: &[RecordBatch]| b.iter().map(|b| b.num_rows()).sum::<usize>();
        assert_eq!(rows(&ours.batches), rows(&batches), "{sql}");
        // The rows' schemas (a DataFrame's own is its plan's before the analyzer typed it).
        if let (Some(first), Some(theirs)) = (ours.batches.first(), batches.first()) {
            assert_eq!(first.schema(), theirs.schema(), "{sql}: schema");
            let got = concat_batches(&first.schema(), &ours.batches).unwrap();
            let want = concat_batches(&theirs.schema(), &batches).unwrap();
            assert_eq!(got, want, "{sql}");
        }
        point
    }

    /// `value` of a key column as a SQL literal.
    fn literal_text(column: &dyn datafusion::arrow::array::Array, row: usize) -> String {
        let text = array_value_to_string(column, row).unwrap();
        match column.data_type() {
            DataType::Utf8 => format!("'{}'", text.replace('\'', "''")),
            _ => text,
        }
    }

    /// Every Dolt-checked query and point queries of every keyed table of the test database
    /// (integer, collated text, two-column, `BIGINT UNSIGNED` keys; other states; aliases,
    /// qualified and reordered columns; keys that are not there; `IN` lists) answer the same
    /// through the point plan as through DataFusion's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn point_selects_answer_as_planned() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let session = DoltSession::open(dir.join("sysdb"), None).unwrap();
        let mut queries: Vec<String> = std::fs::read_to_string(dir.join("queries.sql"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| l.split_once(' ').map_or(l, |(_, q)| q).to_string())
            .collect();
        let at = session.catalog().state(crate::DEFAULT_STATE).unwrap();
        let db = std::sync::Arc::new(prollystore_sql::open(dir.join("sysdb")).unwrap());
        let mut names = at.root_table_names();
        names.sort();
        for name in &names {
            let Some(table) = at.dolt_table(name).unwrap() else {
                continue;
            };
            let keys = DoltTable::new(db.clone(), table).key_names();
            if keys.is_empty() {
                continue;
            }
            let sample = session
                .query(&format!("SELECT {} FROM {name}", keys.join(", ")))
                .await
                .unwrap();
            let mut wheres = Vec::new();
            for b in &sample.batches {
                for row in 0..b.num_rows() {
                    let terms: Vec<String> = keys
                        .iter()
                        .enumerate()
                        .map(|(i, k)| format!("{k} = {}", literal_text(b.column(i), row)))
                        .collect();
                    wheres.push(terms.join(" AND "));
                }
            }
            for w in &wheres {
                queries.push(format!("SELECT * FROM {name} WHERE {w}"));
                queries.push(format!(
                    "select {k} as again, a.{k} from {name} as a where ({w})",
                    k = keys[0]
                ));
                queries.push(format!("SELECT * FROM `main`.{name} WHERE {w}"));
                queries.push(format!(
                    "SELECT * FROM {} WHERE {}",
                    name.to_uppercase(),
                    w.to_uppercase()
                ));
            }
            if keys.len() == 1 {
                let first = sample.batches.first().unwrap();
                let values: Vec<String> = (0..first.num_rows().min(3))
                    .rev()
                    .map(|r| literal_text(first.column(0), r))
                    .collect();
                queries.push(format!(
                    "SELECT * FROM {name} WHERE {} IN ({})",
                    keys[0],
                    values.join(", ")
                ));
            }
        }
        queries.extend(
            [
                "SELECT * FROM t WHERE id = 999999",
                "SELECT * FROM t WHERE id = -1",
                "SELECT * FROM t WHERE id = 99999999999",
                "SELECT * FROM u WHERE k = 'apple'",
                "SELECT * FROM u WHERE k = 'APPLE'",
                "SELECT * FROM u WHERE k = 'eclair'",
                "SELECT * FROM u WHERE k = 'nothing'",
                "SELECT * FROM `feat`.t WHERE id = 10",
                "SELECT * FROM t AS OF 'v1' WHERE id = 2",
                "SELECT * FROM t WHERE id = 1 AND id = 2",
                "SELECT name FROM t WHERE 2 = id",
                "SELECT * FROM more WHERE id = 18446744073709551615",
                "SELECT * FROM pk2 WHERE a = 1",
                "SELECT * FROM pk2 WHERE a = 1 AND b = 'y' AND c = 20",
                "SELECT * FROM t WHERE id = 1 LIMIT 1",
                "SELECT id, name, name FROM t WHERE id = 1",
                "SELECT t.id FROM t AS x WHERE id = 1",
                "SELECT x.id FROM t WHERE id = 1",
            ]
            .map(str::to_string),
        );
        let mut points = 0;
        for q in &queries {
            if both_ways(&session, q).await {
                points += 1;
            }
        }
        assert!(
            points >= 140,
            "{points} of {} queries planned as points",
            queries.len()
        );
    }
}
