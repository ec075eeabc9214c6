//! The walk our plan rules share: every expression of every plan node (subqueries too)
//! rewritten bottom up, each node's expressions keeping their names (what the nodes above
//! refer to them by) and the node's schema recomputed for the types that changed.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Expr, LogicalPlan};

/// Rewrites `plan`: in each node `visit` accepts, `f(sub_expression, schema of the node's
/// inputs)` on every sub-expression of its expressions, bottom up, except expressions
/// `keep` accepts whole.
pub(crate) fn rewrite_plan(
    plan: LogicalPlan,
    visit: impl Fn(&LogicalPlan) -> bool,
    keep: impl Fn(&Expr) -> bool,
    f: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| {
        if !visit(&node) {
            return Ok(Transformed::no(node));
        }
        rewrite_node(node, &keep, &f)
    })
    .map(|t| t.data)
}

/// The columns a node's expressions refer to: its inputs' (a scan's own).
pub(crate) fn input_schema(node: &LogicalPlan) -> DFSchema {
    let mut schema = DFSchema::empty();
    for input in node.inputs() {
        schema.merge(input.schema());
    }
    if node.inputs().is_empty() {
        schema = node.schema().as_ref().clone();
    }
    schema
}

/// One node of [`rewrite_plan`]: `f` on every sub-expression of its expressions (but those
/// `keep` accepts), names kept, schema recomputed if anything changed.
pub(crate) fn rewrite_node(
    node: LogicalPlan,
    keep: impl Fn(&Expr) -> bool,
    f: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<Transformed<LogicalPlan>> {
    let schema = input_schema(&node);
    let names = NamePreserver::new(&node);
    let node = node.map_expressions(|e| {
        if keep(&e) {
            return Ok(Transformed::no(e));
        }
        let saved = names.save(&e);
        let e = e.transform_up(|e| f(e, &schema))?;
        Ok(if e.transformed {
            Transformed::yes(saved.restore(e.data))
        } else {
            e
        })
    })?;
    if node.transformed {
        node.map_data(|p| p.recompute_schema())
    } else {
        Ok(node)
    }
}
