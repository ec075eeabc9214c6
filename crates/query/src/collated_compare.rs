//! Collated text as the collation's sort keys (function `dolt_collation_key`) and matched by
//! `dolt_collated_like`, and the optimizer rule that compares collated text with them
//! ([`CollatedComparisons`]); see [`crate::dolt_collations`] for the whole design.

use std::any::Any;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, BinaryBuilder, BooleanArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::FieldRef;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{
    exec_err, Column, DFSchema, DataFusionError, ExprSchema, Result, ScalarValue,
};
use datafusion::logical_expr::expr::{InList, ScalarFunction};
use datafusion::logical_expr::{
    lit, Between, BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use prollystore_arrow::dolt_types::SQL_TYPE_METADATA;
use prollystore_format::collation::Collation;
use prollystore_format::sql_type::SqlType;

use crate::rewrite::rewrite_node;

/// The name of the sort-key function: `dolt_collation_key(text, 'collation name')`.
pub(crate) const KEY: &str = "dolt_collation_key";

/// The collation a collated text column's field names (`None`: not text, or code-point order).
pub(crate) fn field_collation(field: &Field) -> Option<Collation> {
    let text = field.metadata().get(SQL_TYPE_METADATA)?;
    let sql_type = SqlType::parse(text);
    if !matches!(sql_type, SqlType::Text { .. }) {
        return None;
    }
    let collation = Collation::from_name(sql_type.collation()?).ok()?;
    (!collation.is_code_point_order()).then_some(collation)
}

/// The collation expression `e` (over `schema`) is compared under, if it is collated text.
pub(crate) fn collation_of(e: &Expr, schema: &dyn ExprSchema) -> Option<Collation> {
    match e {
        Expr::Column(c) => field_collation(schema.field_from_column(c).ok()?),
        Expr::Alias(a) => collation_of(&a.expr, schema),
        Expr::Cast(c) if is_text(&c.data_type) => collation_of(&c.expr, schema),
        Expr::TryCast(c) if is_text(&c.data_type) => collation_of(&c.expr, schema),
        Expr::ScalarFunction(f) if f.func.name() != KEY && returns_text(e, schema) => {
            f.args.iter().find_map(|a| collation_of(a, schema))
        }
        _ => None,
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn returns_text(e: &Expr, schema: &dyn ExprSchema) -> bool {
    e.get_type(schema).is_ok_and(|t| is_text(&t))
}

/// Whether `e` can stand beside collated text: text or NULL.
fn text_or_null(e: &Expr, schema: &DFSchema) -> bool {
    e.get_type(schema)
        .is_ok_and(|t| is_text(&t) || t == DataType::Null)
}

/// `e`'s sort key under `c` (a text literal's computed here, as a later pass would fold it).
pub(crate) fn keyed(e: Expr, c: Collation) -> Expr {
    if let Expr::Literal(
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)),
        _,
    ) = &e
    {
        let mut key = Vec::new();
        c.sort_key(s.as_bytes(), &mut key);
        return lit(ScalarValue::Binary(Some(key)));
    }
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(CollationKey::new())));
    Expr::ScalarFunction(ScalarFunction::new_udf(UDF.clone(), vec![e, lit(c.name())]))
}

/// `e` keyed if it is collated text.
pub(crate) fn key_if_collated(e: Expr, schema: &DFSchema) -> (Expr, bool) {
    match collation_of(&e, schema) {
        Some(c) => (keyed(e, c), true),
        None => (e, false),
    }
}

/// The sort-key function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct CollationKey {
    signature: Signature,
}

impl CollationKey {
    fn new() -> CollationKey {
        CollationKey {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

/// The keys of `text` (any text array) under `c`.
fn keys(text: &ArrayRef, c: Collation) -> Result<ArrayRef> {
    if text.data_type() == &DataType::Null {
        return Ok(new_null_array(&DataType::Binary, text.len()));
    }
    let text = utf8(text)?;
    let text = text.as_string::<i32>();
    let mut out = BinaryBuilder::with_capacity(text.len(), text.values().len() * 4);
    let mut key = Vec::new();
    for s in text.iter() {
        match s {
            Some(s) => {
                key.clear();
                c.sort_key(s.as_bytes(), &mut key);
                out.append_value(&key);
            }
            None => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

impl ScalarUDFImpl for CollationKey {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        KEY
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Binary)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [text, name] = args.args.as_slice() else {
            return exec_err!("{KEY} takes a text and a collation name");
        };
        let c = named_collation(KEY, name)?;
        match text {
            ColumnarValue::Array(a) => keys(a, c).map(ColumnarValue::Array),
            ColumnarValue::Scalar(s) => {
                let key = keys(&s.to_array()?, c)?;
                ScalarValue::try_from_array(&key, 0).map(ColumnarValue::Scalar)
            }
        }
    }
}

/// The name of the collated `LIKE`: `dolt_collated_like(text, pattern, 'collation', 'escape')`.
pub(crate) const LIKE: &str = "dolt_collated_like";

static LIKE_UDF: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(CollatedLike::new())));

/// `LIKE` under a collation ([`Collation::like_pattern`]).
#[derive(Debug, PartialEq, Eq, Hash)]
struct CollatedLike {
    signature: Signature,
}

impl CollatedLike {
    fn new() -> CollatedLike {
        CollatedLike {
            signature: Signature::any(4, Volatility::Immutable),
        }
    }
}

/// A text literal argument of function `f`.
fn text_literal<'a>(f: &str, what: &str, arg: &'a ColumnarValue) -> Result<&'a str> {
    match arg {
        ColumnarValue::Scalar(
            ScalarValue::Utf8(Some(n))
            | ScalarValue::Utf8View(Some(n))
            | ScalarValue::LargeUtf8(Some(n)),
        ) => Ok(n),
        _ => exec_err!("{f}: the {what} must be a text literal"),
    }
}

/// The collation a function's argument names.
fn named_collation(f: &str, arg: &ColumnarValue) -> Result<Collation> {
    let name = text_literal(f, "collation", arg)?;
    Collation::from_name(name).or_else(|e| exec_err!("{f}: {e}"))
}

/// Any text array as `Utf8`.
fn utf8(a: &ArrayRef) -> Result<ArrayRef> {
    Ok(match a.data_type() {
        DataType::Utf8 => a.clone(),
        _ => cast(a, &DataType::Utf8)?,
    })
}

impl ScalarUDFImpl for CollatedLike {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        LIKE
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [text, pattern, collation, escape] = args.args.as_slice() else {
            return exec_err!("{LIKE} takes a text, a pattern, a collation and an escape");
        };
        let c = named_collation(LIKE, collation)?;
        let escape = text_literal(LIKE, "escape", escape)?
            .chars()
            .next()
            .unwrap_or('\\');
        let n = args.number_rows;
        let text = utf8(&text.to_array(n)?)?;
        let text = text.as_string::<i32>();
        let compiled = match pattern {
            ColumnarValue::Scalar(p) if p.is_null() => {
                return Ok(ColumnarValue::Scalar(ScalarValue::Boolean(None)))
            }
            ColumnarValue::Scalar(_) => {
                let p = utf8(&pattern.to_array(1)?)?;
                Some(c.like_pattern(p.as_string::<i32>().value(0).as_bytes(), escape))
            }
            ColumnarValue::Array(_) => None,
        };
        let patterns = utf8(&pattern.to_array(n)?)?;
        let patterns = patterns.as_string::<i32>();
        let out: BooleanArray = (0..n)
            .map(|i| {
                if text.is_null(i) || patterns.is_null(i) {
                    return None;
                }
                let t = text.value(i).as_bytes();
                Some(match &compiled {
                    Some(p) => p.matches(t),
                    None => c
                        .like_pattern(patterns.value(i).as_bytes(), escape)
                        .matches(t),
                })
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

/// The optimizer rule for comparisons (module docs). Idempotent.
#[derive(Debug)]
pub(crate) struct CollatedComparisons;

impl OptimizerRule for CollatedComparisons {
    fn name(&self) -> &str {
        "dolt_collated_comparisons"
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        // Most plans compare no collated text: leave them without a walk that copies schemas.
        if !compares_collated_text(&plan) {
            return Ok(Transformed::no(plan));
        }
        plan.transform_up_with_subqueries(|node| match node {
            // The filters offered to a scan stay as written (module docs).
            LogicalPlan::TableScan(_) => Ok(Transformed::no(node)),
            node => rewrite_node(node, |_| false, compared)?.transform_data(|node| match node {
                LogicalPlan::Join(mut join) => {
                    let (left, right) = (join.left.schema().clone(), join.right.schema().clone());
                    let mut changed = false;
                    join.on = join
                        .on
                        .into_iter()
                        .map(
                            |(l, r)| match collation_of(&l, &left).or(collation_of(&r, &right)) {
                                Some(c) => {
                                    changed = true;
                                    (keyed(l, c), keyed(r, c))
                                }
                                None => (l, r),
                            },
                        )
                        .collect();
                    Ok(Transformed::new_transformed(
                        LogicalPlan::Join(join),
                        changed,
                    ))
                }
                node => Ok(Transformed::no(node)),
            }),
        })
    }
}

/// `e` (over `schema`) with its collated text compared as [`CollatedComparisons`] compares
/// it: for the filters a scan applies itself.
pub(crate) fn collated(e: Expr, schema: &DFSchema) -> Result<Expr> {
    e.transform_up(|e| compared(e, schema)).map(|t| t.data)
}

/// Whether [`CollatedComparisons`] would key anything in `plan`: a second optimizer pass then
/// has work (the common keys of a filter computed once). Cheap: no schema is copied.
pub(crate) fn compares_collated_text(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        let inputs = Inputs::of(node);
        if let LogicalPlan::Join(join) = node {
            found |= join.on.iter().any(|(l, r)| {
                collation_of(l, join.left.schema().as_ref()).is_some()
                    || collation_of(r, join.right.schema().as_ref()).is_some()
            });
        }
        let _ = node.apply_expressions(|e| {
            e.apply(|sub| {
                let operands: &[&Expr] = match sub {
                    Expr::BinaryExpr(b) if compares(b.op) => &[&b.left, &b.right],
                    Expr::InList(i) => &[&i.expr],
                    Expr::Between(b) => &[&b.expr],
                    Expr::Like(l) => &[&l.expr],
                    _ => &[],
                };
                found |= operands.iter().any(|o| collation_of(o, &inputs).is_some());
                Ok(if found {
                    TreeNodeRecursion::Stop
                } else {
                    TreeNodeRecursion::Continue
                })
            })
        });
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    found
}

/// The columns a node's expressions refer to, looked up in its inputs' schemas (a scan's
/// own) without merging them.
#[derive(Debug)]
struct Inputs<'a>(Vec<&'a DFSchema>);

impl<'a> Inputs<'a> {
    fn of(node: &'a LogicalPlan) -> Inputs<'a> {
        let inputs = node.inputs();
        if inputs.is_empty() {
            Inputs(vec![node.schema().as_ref()])
        } else {
            Inputs(inputs.into_iter().map(|i| i.schema().as_ref()).collect())
        }
    }
}

impl ExprSchema for Inputs<'_> {
    fn field_from_column(&self, col: &Column) -> Result<&FieldRef> {
        let mut last = None;
        for schema in &self.0 {
            match schema.field_from_column(col) {
                Ok(f) => return Ok(f),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| DataFusionError::Plan(format!("no column {col}"))))
    }
}

/// One sub-expression of [`CollatedComparisons`]: collated text compared or matched.
fn compared(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    Ok(match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if compares(op) => {
            match collation_of(&left, schema).or(collation_of(&right, schema)) {
                Some(c) if text_or_null(&left, schema) && text_or_null(&right, schema) => {
                    Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
                        Box::new(keyed(*left, c)),
                        op,
                        Box::new(keyed(*right, c)),
                    )))
                }
                _ => Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right })),
            }
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => match collation_of(&expr, schema) {
            Some(c) if list.iter().all(|v| text_or_null(v, schema)) => {
                Transformed::yes(Expr::InList(InList {
                    expr: Box::new(keyed(*expr, c)),
                    list: list.into_iter().map(|v| keyed(v, c)).collect(),
                    negated,
                }))
            }
            _ => Transformed::no(Expr::InList(InList {
                expr,
                list,
                negated,
            })),
        },
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => match collation_of(&expr, schema) {
            Some(c) if text_or_null(&low, schema) && text_or_null(&high, schema) => {
                Transformed::yes(Expr::Between(Between {
                    expr: Box::new(keyed(*expr, c)),
                    negated,
                    low: Box::new(keyed(*low, c)),
                    high: Box::new(keyed(*high, c)),
                }))
            }
            _ => Transformed::no(Expr::Between(Between {
                expr,
                negated,
                low,
                high,
            })),
        },
        Expr::Like(like) if !like.case_insensitive => match collation_of(&like.expr, schema) {
            Some(c) if text_or_null(&like.pattern, schema) => {
                let escape = like.escape_char.unwrap_or('\\');
                let matched = Expr::ScalarFunction(ScalarFunction::new_udf(
                    LIKE_UDF.clone(),
                    vec![
                        *like.expr,
                        *like.pattern,
                        lit(c.name()),
                        lit(escape.to_string()),
                    ],
                ));
                Transformed::yes(if like.negated {
                    Expr::Not(Box::new(matched))
                } else {
                    matched
                })
            }
            _ => Transformed::no(Expr::Like(like)),
        },
        e => Transformed::no(e),
    })
}

/// Whether `op` compares its operands (`=`, `<`, `IS DISTINCT FROM`, …).
pub(crate) fn compares(op: Operator) -> bool {
    use Operator::*;
    matches!(
        op,
        Eq | NotEq | Lt | LtEq | Gt | GtEq | IsDistinctFrom | IsNotDistinctFrom
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_text_as_the_collation() {
        let c = Collation::from_name("utf8mb4_0900_ai_ci").unwrap();
        let text: ArrayRef = Arc::new(datafusion::arrow::array::StringArray::from(vec![
            Some("banana"),
            Some("Apple"),
            None,
            Some("apple"),
            Some("Éclair"),
        ]));
        let k = keys(&text, c).unwrap();
        let k = k.as_binary::<i32>();
        assert!(k.is_null(2));
        assert_eq!(k.value(1), k.value(3), "case-insensitive");
        assert!(k.value(1) < k.value(0));
        assert!(k.value(0) < k.value(4), "É sorts as E");
    }
}
