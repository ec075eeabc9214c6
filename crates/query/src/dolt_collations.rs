//! Text compared, sorted, grouped and matched under its column's collation, as Dolt does.
//! DataFusion knows only byte order: `WHERE name = 'alice'` on a case-insensitive column would
//! miss `Alice`, `ORDER BY name` would put `Cherry` before `banana`, `GROUP BY name` would make
//! two groups of `Apple` and `apple`, `LIKE 'al%'` would miss `ÁLICE` under an
//! accent-insensitive collation. Both rules put the collation's sort key
//! ([`prollystore_format::collation::Collation::sort_key`], function
//! [`crate::collated_compare::KEY`]) in place of collated text:
//!
//! - [`CollatedOrders`] (here), an analyzer rule after type coercion, where text is ordered or
//!   grouped: `ORDER BY`, `GROUP BY` (a group shows the first of its spellings in primary-key
//!   order, as Dolt reads and shows them), window `PARTITION BY` and `ORDER BY`, `MIN` and
//!   `MAX`. Not `DISTINCT` nor `COUNT(DISTINCT …)`: Dolt keeps every spelling there.
//! - [`crate::collated_compare::CollatedComparisons`], the last optimizer rule, where text is
//!   compared (`=`, `<`, `IN`, `BETWEEN`, join keys) or matched (`LIKE`). (Dolt compares an
//!   `IN` list's text as bytes unless it seeks a key with it; MySQL, and this rule, under the
//!   collation.) Running last, after filters were offered to the scan as written, a key
//!   equality is still a seek (the seek compares under the collation); the filters the scan
//!   applies to the rows it reads are keyed there ([`crate::collated_compare::collated`]).
//!
//! ENUM and SET values are ordered the same way, by the key [`crate::member_order`] gives
//! (their member numbers and bits), and JSON values by [`crate::json_order`]'s (kind, then
//! value), in `ORDER BY`, window orders, `MIN` and `MAX`.
//!
//! A text column is collated when its SQL type names a collation that is not code-point
//! order; an expression is when it is such a column, a cast of one to text, or a text
//! function of one (MySQL's derivation, simplified: a literal takes the column's collation).

use std::sync::Arc;

use datafusion::common::metadata::FieldMetadata;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result};
use datafusion::config::ConfigOptions;
use datafusion::datasource::source_as_provider;
use datafusion::functions_aggregate::first_last::first_value_udaf;
use datafusion::logical_expr::expr::{NullTreatment, Sort as SortExpr};
use datafusion::logical_expr::{Aggregate, Expr, ExprFunctionExt, LogicalPlan, Projection};
use datafusion::optimizer::analyzer::AnalyzerRule;

use crate::collated_compare::{collation_of, key_if_collated, keyed};
use crate::json_order::json_key;
use crate::member_order::member_key;
use crate::rewrite::rewrite_node;
use crate::table::DoltTable;
/// The analyzer rule for orders and groups (module docs). Idempotent: a key is binary,
/// never collated.
#[derive(Debug)]
pub(crate) struct CollatedOrders;

impl AnalyzerRule for CollatedOrders {
    fn name(&self) -> &str {
        "dolt_collated_orders"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Aggregate(agg) => rewrite_aggregate(agg),
            LogicalPlan::Sort(mut sort) => {
                let changed = key_order(&mut sort.expr, sort.input.schema());
                Ok(Transformed::new_transformed(
                    LogicalPlan::Sort(sort),
                    changed,
                ))
            }
            LogicalPlan::Window(_) => rewrite_node(node, |_| false, |e, s| ordered(e, s, &[])),
            node => Ok(Transformed::no(node)),
        })
        .map(|t| t.data)
    }
}

/// One sub-expression of [`CollatedOrders`]: the orders and partitions of window functions
/// and ordered aggregates keyed; `MIN` and `MAX` of collated text ranked by key.
fn ordered(e: Expr, schema: &DFSchema, read_order: &[SortExpr]) -> Result<Transformed<Expr>> {
    Ok(match e {
        Expr::WindowFunction(mut w) => {
            let params = &mut w.params;
            let mut changed = false;
            for e in params.partition_by.iter_mut() {
                let (k, c) = key_if_collated(e.clone(), schema);
                changed |= c;
                *e = k;
            }
            changed |= key_order(&mut params.order_by, schema);
            Transformed::new_transformed(Expr::WindowFunction(w), changed)
        }
        Expr::AggregateFunction(mut a) => {
            // MIN and MAX rank under the collation: the first value in key order (of equal
            // keys, the first read, as Dolt keeps it).
            if let (false, "min" | "max", [arg]) =
                (a.params.distinct, a.func.name(), a.params.args.as_slice())
            {
                let key = match collation_of(arg, schema) {
                    Some(c) => Some(keyed(arg.clone(), c)),
                    None => typed_key(arg, schema),
                };
                if let Some(key) = key {
                    let asc = a.func.name() == "min";
                    let arg = arg.clone();
                    let by_key = vec![key.sort(asc, false)];
                    let filter = a.params.filter.map(|f| *f);
                    let ranked = first_of(arg, by_key, read_order)?;
                    let ranked = match (ranked, filter) {
                        (Expr::AggregateFunction(mut f), Some(filter)) => {
                            f.params.filter = Some(Box::new(filter));
                            Expr::AggregateFunction(f)
                        }
                        (ranked, _) => ranked,
                    };
                    return Ok(Transformed::yes(ranked));
                }
            }
            let changed = key_order(&mut a.params.order_by, schema);
            Transformed::new_transformed(Expr::AggregateFunction(a), changed)
        }
        e => Transformed::no(e),
    })
}

/// `first_value(e)` in order `by`, then in `read_order`, ignoring NULLs when `by` is given
/// (the first spelling of a group, or the least or greatest value, as Dolt reads them).
fn first_of(e: Expr, by: Vec<SortExpr>, read_order: &[SortExpr]) -> Result<Expr> {
    let ranked = !by.is_empty();
    let order: Vec<SortExpr> = by.into_iter().chain(read_order.iter().cloned()).collect();
    let mut f = first_value_udaf().call(vec![e]).order_by(order);
    if ranked {
        f = f.null_treatment(NullTreatment::IgnoreNulls);
    }
    f.build()
}

/// The primary key of the one Dolt table `plan` reads through filters, as an ordering of
/// `plan`'s rows: the order Dolt reads them in, which a table read in parallel loses. Empty
/// when there is no such table or key.
fn read_order(plan: &LogicalPlan) -> Vec<SortExpr> {
    let mut node = plan;
    loop {
        match node {
            LogicalPlan::Filter(f) => node = &f.input,
            LogicalPlan::TableScan(scan) => {
                let Ok(provider) = source_as_provider(&scan.source) else {
                    return Vec::new();
                };
                let Some(table) = provider.as_any().downcast_ref::<DoltTable>() else {
                    return Vec::new();
                };
                let key: Vec<Column> = table
                    .key_names()
                    .into_iter()
                    .map(|n| Column::new(Some(scan.table_name.clone()), n))
                    .collect();
                if !key.iter().all(|c| plan.schema().has_column(c)) {
                    return Vec::new();
                }
                return key
                    .into_iter()
                    .map(|c| Expr::Column(c).sort(true, false))
                    .collect();
            }
            _ => return Vec::new(),
        }
    }
}

/// The order key of an ENUM, SET or JSON expression, which do not order as their text.
fn typed_key(e: &Expr, schema: &DFSchema) -> Option<Expr> {
    member_key(e, schema).or_else(|| json_key(e, schema))
}

/// Keys the collated, ENUM, SET and JSON expressions of an ordering; true if any was.
fn key_order(order: &mut [SortExpr], schema: &DFSchema) -> bool {
    let mut changed = false;
    for s in order.iter_mut() {
        if let Some(k) = typed_key(&s.expr, schema) {
            changed = true;
            s.expr = k;
            continue;
        }
        let (k, c) = key_if_collated(s.expr.clone(), schema);
        changed |= c;
        s.expr = k;
    }
    changed
}

/// An aggregate grouped by collated text groups by its key and shows the first spelling read
/// of each group (`first_value`); its aggregates are rewritten by [`ordered`]. A projection
/// above gives the rewritten aggregate's columns the names, qualifiers and metadata of the
/// original's, which the nodes above refer to.
fn rewrite_aggregate(agg: Aggregate) -> Result<Transformed<LogicalPlan>> {
    let schema = agg.input.schema().clone();
    if agg
        .group_expr
        .iter()
        .any(|g| matches!(g, Expr::GroupingSet(_)))
    {
        return rewrite_node(
            LogicalPlan::Aggregate(agg),
            |_| false,
            |e, s| ordered(e, s, &[]),
        );
    }
    let n_group = agg.group_expr.len();
    let n_aggr = agg.aggr_expr.len();
    let read_order = read_order(&agg.input);
    let mut changed = false;
    let mut group = Vec::with_capacity(n_group);
    let mut shown = Vec::new();
    // Where each original output column is found in the new aggregate's output.
    let mut from = Vec::with_capacity(n_group + n_aggr);
    for g in &agg.group_expr {
        match collation_of(g, &schema) {
            Some(c) => {
                changed = true;
                from.push(n_group + n_aggr + shown.len());
                shown.push(first_of(g.clone(), vec![], &read_order)?);
                group.push(keyed(g.clone(), c));
            }
            None => {
                from.push(group.len());
                group.push(g.clone());
            }
        }
    }
    let mut aggr = Vec::with_capacity(n_aggr + shown.len());
    for e in &agg.aggr_expr {
        let t = e
            .clone()
            .transform_up(|e| ordered(e, &schema, &read_order))?;
        changed |= t.transformed;
        aggr.push(t.data);
    }
    if !changed {
        return Ok(Transformed::no(LogicalPlan::Aggregate(agg)));
    }
    from.extend((0..n_aggr).map(|i| n_group + i));
    aggr.extend(shown);
    let rewritten = Aggregate::try_new(agg.input.clone(), group, aggr)?;
    let new_schema = rewritten.schema.clone();
    let mut exprs = Vec::with_capacity(from.len());
    for (i, &src) in from.iter().enumerate() {
        let (q, f) = agg.schema.qualified_field(i);
        let (nq, nf) = new_schema.qualified_field(src);
        let column = Expr::Column(Column::new(nq.cloned(), nf.name()));
        let meta = (!f.metadata().is_empty()).then(|| FieldMetadata::from(f.metadata().clone()));
        exprs.push(column.alias_qualified_with_metadata(q.cloned(), f.name(), meta));
    }
    let projection = Projection::try_new(exprs, Arc::new(LogicalPlan::Aggregate(rewritten)))?;
    Ok(Transformed::yes(LogicalPlan::Projection(projection)))
}
