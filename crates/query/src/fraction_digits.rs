//! A DATETIME or TIMESTAMP chosen from columns of one type keeps that type's fraction
//! digits: `COALESCE(dt, NULL)`, `IF(c, dt, dt2)`, `CASE … THEN dt … END` and
//! `NULLIF(dt, x)` of `DATETIME(3)` columns print three digits, as Dolt prints them
//! (DataFusion's result field carries no SQL type, which printed six). The rule
//! [`FractionDigits`], after type coercion, gives such a select item its columns' SQL type.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, plan_err, DFSchema, ExprSchema, Result, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    lit, ColumnarValue, Expr, LogicalPlan, Projection, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::analyzer::AnalyzerRule;
use prollystore_arrow::dolt_types::SQL_TYPE_METADATA;
use prollystore_format::sql_type::SqlType;

/// The rule (module docs).
#[derive(Debug)]
pub(crate) struct FractionDigits;

impl AnalyzerRule for FractionDigits {
    fn name(&self) -> &str {
        "dolt_fraction_digits"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        let typed = plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Projection(p) => typed(p),
            node => Ok(Transformed::no(node)),
        })?;
        if !typed.transformed {
            return Ok(typed.data);
        }
        // The nodes above a typed projection show its fields: their schemas again.
        typed
            .data
            .transform_up_with_subqueries(|node| node.recompute_schema().map(Transformed::yes))
            .map(|t| t.data)
    }
}

/// `p` with its items that choose among datetimes of one SQL type given that type.
fn typed(p: Projection) -> Result<Transformed<LogicalPlan>> {
    let input = p.input.schema();
    let types: Vec<Option<String>> = p
        .expr
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (_, field) = p.schema.qualified_field(i);
            (!field.metadata().contains_key(SQL_TYPE_METADATA))
                .then(|| chosen_type(unaliased(e), input))
                .flatten()
        })
        .collect();
    if types.iter().all(Option::is_none) {
        return Ok(Transformed::no(LogicalPlan::Projection(p)));
    }
    let mut exprs = Vec::with_capacity(p.expr.len());
    for (i, (e, sql_type)) in p.expr.into_iter().zip(types).enumerate() {
        match sql_type {
            Some(t) => {
                let (qualifier, name) = match &e {
                    Expr::Alias(a) => (a.relation.clone(), a.name.clone()),
                    _ => {
                        let (q, f) = p.schema.qualified_field(i);
                        (q.cloned(), f.name().clone())
                    }
                };
                let typed = Expr::ScalarFunction(ScalarFunction::new_udf(
                    UDF.clone(),
                    vec![unaliased(&e).clone(), lit(t)],
                ));
                exprs.push(typed.alias_qualified(qualifier, name));
            }
            None => exprs.push(e),
        }
    }
    let projection = Projection::try_new(exprs, p.input)?;
    Ok(Transformed::yes(LogicalPlan::Projection(projection)))
}

/// The function that gives its value a field of that SQL type:
/// `dolt_sql_type(value, 'datetime(3)')` (the value as it is). A function rather than an
/// alias with metadata: the physical plan keeps a function's field, not an alias's.
static UDF: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
    Arc::new(ScalarUDF::new_from_impl(SqlTyped {
        signature: Signature::any(2, Volatility::Immutable),
    }))
});

#[derive(Debug, PartialEq, Eq, Hash)]
struct SqlTyped {
    signature: Signature,
}

impl ScalarUDFImpl for SqlTyped {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        "dolt_sql_type"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(args.first().cloned().unwrap_or(DataType::Null))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let (Some(value), Some(Some(ScalarValue::Utf8(Some(t))))) =
            (args.arg_fields.first(), args.scalar_arguments.get(1))
        else {
            return plan_err!("dolt_sql_type takes a value and its SQL type's text");
        };
        let meta = HashMap::from([(SQL_TYPE_METADATA.to_string(), t.clone())]);
        Ok(Arc::new(
            Field::new(self.name(), value.data_type().clone(), true).with_metadata(meta),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match args.args.into_iter().next() {
            Some(v) => Ok(v),
            None => exec_err!("dolt_sql_type takes a value"),
        }
    }
}

fn unaliased(e: &Expr) -> &Expr {
    match e {
        Expr::Alias(a) => unaliased(&a.expr),
        e => e,
    }
}

/// The SQL type text of a DATETIME or TIMESTAMP column `e` is, or chooses among columns of
/// (NULLs aside); `None` if there is none, or several.
fn chosen_type(e: &Expr, schema: &DFSchema) -> Option<String> {
    let mut found: Option<String> = None;
    let mut same = |t: Option<String>| -> bool {
        match (t, &found) {
            (None, _) => false,
            (Some(t), Some(f)) => t == *f,
            (Some(t), None) => {
                found = Some(t);
                true
            }
        }
    };
    let values: Vec<&Expr> = match e {
        Expr::ScalarFunction(f) => match f.func.name() {
            "coalesce" => f.args.iter().collect(),
            "if" => f.args.iter().skip(1).collect(),
            "nullif" => f.args.iter().take(1).collect(),
            _ => return None,
        },
        Expr::Case(c) => c
            .when_then_expr
            .iter()
            .map(|(_, then)| then.as_ref())
            .chain(c.else_expr.as_deref())
            .collect(),
        _ => return None,
    };
    for v in values {
        if is_null(v) {
            continue;
        }
        if !same(datetime_type(v, schema)) {
            return None;
        }
    }
    found
}

/// Whether `e` is a NULL literal (also cast to a type, as type coercion casts it).
fn is_null(e: &Expr) -> bool {
    match e {
        Expr::Literal(s, _) => s.is_null(),
        Expr::Cast(c) => is_null(&c.expr),
        _ => false,
    }
}

/// The SQL type text of `e` if it is a DATETIME or TIMESTAMP column (also under a cast that
/// only changes its Arrow unit or zone, as type coercion adds).
fn datetime_type(e: &Expr, schema: &DFSchema) -> Option<String> {
    match e {
        Expr::Column(c) => {
            let text = schema
                .field_from_column(c)
                .ok()?
                .metadata()
                .get(SQL_TYPE_METADATA)?;
            matches!(
                SqlType::parse(text),
                SqlType::Datetime(_) | SqlType::Timestamp(_)
            )
            .then(|| text.clone())
        }
        Expr::Cast(c) if c.data_type.is_temporal() => datetime_type(&c.expr, schema),
        _ => None,
    }
}
