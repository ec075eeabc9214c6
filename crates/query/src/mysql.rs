//! MySQL's functions and operators that DataFusion lacks, as Dolt answers them. Two ways in:
//!
//! - [`translate`] rewrites the parsed statement where MySQL's syntax has a DataFusion
//!   equivalent: `doc -> path` and `doc ->> path` (to [`crate::mysql_json`]'s functions), `a DIV b` (to [`INT_DIVIDE`]), `GROUP_CONCAT(x [ORDER BY …] [SEPARATOR s])`
//!   (DataFusion's `string_agg` of the text), `CAST(x AS SIGNED | UNSIGNED)` (`BIGINT [UNSIGNED]`),
//!   `LOCATE(sub, s)` (`strpos(s, sub)`), `CURDATE()` (`current_date()`), `IFNULL` (`COALESCE`, its NULL choices dropped), `MOD(a, b)` (`a % b`),
//!   and a remainder by zero is NULL (`a % NULLIF(b, 0)`).
//! - [`register`] adds functions: `YEAR`, `MONTH`, `DAY`/`DAYOFMONTH`, `HOUR`, `MINUTE`,
//!   `SECOND`, `QUARTER`, `DAYOFWEEK`, `DAYOFYEAR`; `IF`; `HEX`; `DATE_FORMAT` (MySQL's
//!   format letters read as `to_char`'s); `STD`, `STDDEV` and `VARIANCE` (population, as in
//!   MySQL: DataFusion's `stddev` is the sample's).

use std::any::Any;
use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, StringBuilder};
use datafusion::arrow::compute::kernels::temporal::{date_part, DatePart};
use datafusion::arrow::compute::kernels::zip::zip;
use datafusion::arrow::compute::prep_null_mask_filter;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int32Type, Int64Type, TimeUnit};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

use crate::columnar::scalar_or_array;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    self, visit_expressions_mut, BinaryOperator, DataType as SqlDataType, Expr, FunctionArg,
    FunctionArgExpr, FunctionArgumentClause, FunctionArguments, Ident, ObjectName, ObjectNamePart,
    Value,
};

/// The name of the integer division `DIV` becomes.
pub(crate) const INT_DIVIDE: &str = "dolt_int_divide";

/// Rewrites MySQL syntax in `statement` into DataFusion's (module docs).
pub(crate) fn translate(statement: &mut DFStatement) -> Result<()> {
    match statement {
        DFStatement::Statement(s) => {
            let mut failure = None;
            let _ = visit_expressions_mut(s.as_mut(), |e| {
                if let Err(err) = translate_expr(e) {
                    failure = Some(err);
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            failure.map_or(Ok(()), Err)
        }
        DFStatement::Explain(explain) => translate(&mut explain.statement),
        _ => Ok(()),
    }
}

/// A function's name as written, lower case, if it is a plain one-part name.
fn function_name(name: &ObjectName) -> Option<String> {
    match name.0.as_slice() {
        [ObjectNamePart::Identifier(id)] => Some(id.value.to_ascii_lowercase()),
        _ => None,
    }
}

fn named(name: &str) -> ObjectName {
    ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))])
}

fn unnamed(e: Expr) -> FunctionArg {
    FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
}

/// A call of function `name`.
fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(ast::Function {
        name: named(name),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: args.into_iter().map(unnamed).collect(),
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

/// `NULLIF(e, 0)`.
fn nullif_zero(e: Expr) -> Expr {
    call(
        "nullif",
        vec![e, Expr::Value(Value::Number("0".into(), false).into())],
    )
}

fn is_nullif_zero(e: &Expr) -> bool {
    matches!(e, Expr::Function(f) if function_name(&f.name).as_deref() == Some("nullif"))
}

/// Whether `e` is text known without types: a string literal, or a JSON path's value.
fn is_text_value(e: &Expr) -> bool {
    match e {
        Expr::Value(v) => matches!(
            v.value,
            Value::SingleQuotedString(_) | Value::DoubleQuotedString(_)
        ),
        Expr::Nested(e) => is_text_value(e),
        Expr::Function(f) => matches!(
            function_name(&f.name).as_deref(),
            Some("json_extract" | "json_unquote")
        ),
        _ => false,
    }
}

/// The operand an expression the parser may have bound an arrow's path into starts with.
fn first_operand(e: &mut Expr) -> Option<&mut Box<Expr>> {
    match e {
        Expr::BinaryOp { left, .. } => Some(left),
        Expr::IsNull(x)
        | Expr::IsNotNull(x)
        | Expr::IsTrue(x)
        | Expr::IsFalse(x)
        | Expr::IsNotTrue(x)
        | Expr::IsNotFalse(x) => Some(x),
        Expr::Between { expr, .. }
        | Expr::InList { expr, .. }
        | Expr::Like { expr, .. }
        | Expr::ILike { expr, .. } => Some(expr),
        _ => None,
    }
}

/// Puts `doc <op> path` where the path is, the leftmost operand of `e`, and translates the
/// operations above it again; false if `e` is the path itself.
fn attach_document(e: &mut Expr, doc: &Expr, op: &BinaryOperator) -> Result<bool> {
    let Some(slot) = first_operand(e) else {
        return Ok(false);
    };
    if !attach_document(slot, doc, op)? {
        // The path as written: the cast text in arithmetic was given (`'$.n' + 1`) undone.
        let path = match &**slot {
            Expr::Cast {
                expr,
                data_type: SqlDataType::Double(_),
                ..
            } if is_text_value(expr) => (**expr).clone(),
            path => path.clone(),
        };
        **slot = Expr::BinaryOp {
            left: Box::new(doc.clone()),
            op: op.clone(),
            right: Box::new(path),
        };
        translate_expr(slot)?;
    }
    // This operation has a new operand (`doc -> path + 1`: text in arithmetic).
    translate_expr(e)?;
    Ok(true)
}

fn translate_expr(e: &mut Expr) -> Result<()> {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::MyIntegerDivide,
            right,
        } => {
            *e = call(INT_DIVIDE, vec![(**left).clone(), (**right).clone()]);
        }
        // JSON paths: `doc -> path` is JSON_EXTRACT, `doc ->> path` its unquoted text.
        Expr::BinaryOp {
            left,
            op: op @ (BinaryOperator::Arrow | BinaryOperator::LongArrow),
            right,
        } => {
            // The parser binds the arrows looser than MySQL does (`doc -> '$.k' > 3` comes as
            // `doc -> ('$.k' > 3)`): the path is the leftmost operand of what follows.
            let mut rest = (**right).clone();
            if attach_document(&mut rest, left, op)? {
                *e = rest;
                return Ok(());
            }
            let extract = call("json_extract", vec![(**left).clone(), (**right).clone()]);
            *e = match op {
                BinaryOperator::Arrow => extract,
                _ => call("json_unquote", vec![extract]),
            };
        }
        // Text in arithmetic is a double, as MySQL reads it (`'3' * 2`, `doc -> '$.n' + 1`);
        // DataFusion refuses to compute with text. (A text column's type is not known here.)
        Expr::BinaryOp { left, op, right }
            if matches!(
                op,
                BinaryOperator::Plus
                    | BinaryOperator::Minus
                    | BinaryOperator::Multiply
                    | BinaryOperator::Divide
            ) && (is_text_value(left) || is_text_value(right)) =>
        {
            for side in [left, right] {
                if is_text_value(side) {
                    **side = Expr::Cast {
                        kind: ast::CastKind::Cast,
                        expr: side.clone(),
                        data_type: SqlDataType::Double(ast::ExactNumberInfo::None),
                        format: None,
                    };
                }
            }
        }
        // A remainder by zero is NULL in MySQL (DataFusion fails the query).
        Expr::BinaryOp {
            op: BinaryOperator::Modulo,
            right,
            ..
        } if !is_nullif_zero(right) => {
            **right = nullif_zero((**right).clone());
        }
        // MySQL's text of the value (DataFusion's cast writes `1e20`, `2010-01-01T…`).
        Expr::Cast {
            data_type: SqlDataType::Char(length) | SqlDataType::Character(length),
            expr,
            ..
        } => {
            let length = match length {
                Some(ast::CharacterLength::IntegerLength { length, .. }) => Some(*length),
                _ => None,
            };
            let text = call(crate::mysql_text::TEXT, vec![(**expr).clone()]);
            *e = match length {
                Some(n) => call(
                    "left",
                    vec![
                        text,
                        Expr::Value(Value::Number(n.to_string(), false).into()),
                    ],
                ),
                None => text,
            };
        }
        Expr::Cast { data_type, .. } => match data_type {
            SqlDataType::Signed | SqlDataType::SignedInteger => {
                *data_type = SqlDataType::BigInt(None)
            }
            SqlDataType::Unsigned | SqlDataType::UnsignedInteger => {
                *data_type = SqlDataType::BigIntUnsigned(None)
            }
            _ => {}
        },
        Expr::Function(f) => match function_name(&f.name).as_deref() {
            Some("group_concat") => {
                let FunctionArguments::List(list) = &mut f.args else {
                    return plan_err!("GROUP_CONCAT needs a value");
                };
                let [FunctionArg::Unnamed(FunctionArgExpr::Expr(value))] = list.args.as_mut_slice()
                else {
                    return plan_err!("GROUP_CONCAT of more than one value is not supported");
                };
                let text = call(crate::mysql_text::TEXT, vec![value.clone()]);
                let mut separator = Value::SingleQuotedString(",".into());
                list.clauses.retain(|c| match c {
                    FunctionArgumentClause::Separator(s) => {
                        separator = s.clone();
                        false
                    }
                    _ => true,
                });
                list.args = vec![unnamed(text), unnamed(Expr::Value(separator.into()))];
                f.name = named("string_agg");
            }
            Some("locate") => {
                if let FunctionArguments::List(list) = &mut f.args {
                    if list.args.len() == 2 {
                        list.args.swap(0, 1);
                        f.name = named("strpos");
                    }
                }
            }
            Some("curdate") => f.name = named("current_date"),
            // MySQL's IFNULL(a, b) is COALESCE(a, b) (DataFusion's `ifnull`, its `nvl`,
            // makes text of two datetimes).
            Some("ifnull" | "coalesce") => {
                f.name = named("coalesce");
                // A NULL choice never is chosen: without it, DataFusion needs no common type
                // of NULL and the others (it has none with bytes: `COALESCE(b, NULL)`).
                if let FunctionArguments::List(list) = &mut f.args {
                    let null = |a: &FunctionArg| {
                        matches!(a, FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))
                            if v.value == Value::Null)
                    };
                    if !list.args.iter().all(null) {
                        list.args.retain(|a| !null(a));
                    }
                }
            }
            Some("mod") => {
                if let FunctionArguments::List(list) = &f.args {
                    if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(a)), FunctionArg::Unnamed(FunctionArgExpr::Expr(b))] =
                        list.args.as_slice()
                    {
                        *e = Expr::BinaryOp {
                            left: Box::new(a.clone()),
                            op: BinaryOperator::Modulo,
                            right: Box::new(nullif_zero(b.clone())),
                        };
                    }
                }
            }
            _ => {}
        },
        _ => {}
    }
    Ok(())
}

/// Registers the functions (module docs) in `ctx`.
pub(crate) fn register(ctx: &SessionContext) {
    for (name, part) in [
        ("year", DatePart::Year),
        ("month", DatePart::Month),
        ("day", DatePart::Day),
        ("dayofmonth", DatePart::Day),
        ("hour", DatePart::Hour),
        ("minute", DatePart::Minute),
        ("second", DatePart::Second),
        ("quarter", DatePart::Quarter),
        ("dayofweek", DatePart::DayOfWeekSunday0),
        ("dayofyear", DatePart::DayOfYear),
    ] {
        ctx.register_udf(ScalarUDF::new_from_impl(TimePart::new(name, part)));
    }
    ctx.register_udf(ScalarUDF::new_from_impl(If::new()));
    ctx.register_udf(ScalarUDF::new_from_impl(Hex::new()));
    ctx.register_udf(ScalarUDF::new_from_impl(IntDivide::new()));
    ctx.register_udf(ScalarUDF::new_from_impl(DateFormat::new()));
    // MySQL's STD, STDDEV and VARIANCE are the population's.
    let stddev_pop = datafusion::functions_aggregate::stddev::stddev_pop_udaf();
    let var_pop = datafusion::functions_aggregate::variance::var_pop_udaf();
    ctx.register_udaf(stddev_pop.as_ref().clone().with_aliases(["std", "stddev"]));
    ctx.register_udaf(var_pop.as_ref().clone().with_aliases(["variance"]));
}

/// A part of a date or time as an integer (`YEAR(d)`, …; `DAYOFWEEK` counts from Sunday = 1).
#[derive(Debug, PartialEq, Eq)]
struct TimePart {
    name: &'static str,
    part: DatePart,
    signature: Signature,
}

impl std::hash::Hash for TimePart {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // The name says which part.
        self.name.hash(state);
    }
}

impl TimePart {
    fn new(name: &'static str, part: DatePart) -> TimePart {
        TimePart {
            name,
            part,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for TimePart {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)] => Ok(args.to_vec()),
            [DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null] => {
                Ok(vec![DataType::Timestamp(TimeUnit::Microsecond, None)])
            }
            [t] => plan_err!("{}() takes a date or a time, not {t}", self.name),
            _ => plan_err!("{}() takes one value", self.name),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value] = args.args.as_slice() else {
            return exec_err!("{}() takes one value", self.name);
        };
        let is_scalar = matches!(value, ColumnarValue::Scalar(_));
        let parts = date_part(&value.to_array(args.number_rows)?, self.part)?;
        let parts: ArrayRef = if self.part == DatePart::DayOfWeekSunday0 {
            let sunday0 = parts.as_primitive::<Int32Type>();
            Arc::new(sunday0.unary::<_, Int32Type>(|d| d + 1))
        } else {
            parts
        };
        scalar_or_array(parts, is_scalar)
    }
}

/// `IF(condition, then, else)`: `then` where the condition is true, else `else` (a NULL
/// condition is not true).
#[derive(Debug, PartialEq, Eq, Hash)]
struct If {
    signature: Signature,
}

impl If {
    fn new() -> If {
        If {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for If {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        "if"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        let [_, a, b] = args else {
            return plan_err!("IF() takes a condition and two values");
        };
        let Some(common) = comparison_coercion(a, b) else {
            return plan_err!("IF(): {a} and {b} have no common type");
        };
        Ok(vec![DataType::Boolean, common.clone(), common])
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(args.get(1).cloned().unwrap_or(DataType::Null))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [condition, a, b] = args.args.as_slice() else {
            return exec_err!("IF() takes a condition and two values");
        };
        let n = args.number_rows;
        let condition = condition.to_array(n)?;
        let condition = condition.as_boolean();
        // A NULL condition chooses `else` (`prep_null_mask_filter` wants a null mask).
        let condition = if condition.null_count() > 0 {
            prep_null_mask_filter(condition)
        } else {
            condition.clone()
        };
        let chosen = zip(&condition, &a.to_array(n)?, &b.to_array(n)?)?;
        Ok(ColumnarValue::Array(chosen))
    }
}

/// `HEX(x)`: the bytes of text or binary, or an integer's 64-bit two's complement, as upper
/// case hexadecimal.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Hex {
    signature: Signature,
}

impl Hex {
    fn new() -> Hex {
        Hex {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for Hex {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        "hex"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [t] if t.is_integer() => Ok(vec![DataType::Int64]),
            [DataType::Binary | DataType::LargeBinary | DataType::BinaryView] => {
                Ok(vec![DataType::Binary])
            }
            [DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null] => {
                Ok(vec![DataType::Utf8])
            }
            [t] => plan_err!("HEX() takes text, bytes or an integer, not {t}"),
            _ => plan_err!("HEX() takes one value"),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value] = args.args.as_slice() else {
            return exec_err!("HEX() takes one value");
        };
        let is_scalar = matches!(value, ColumnarValue::Scalar(_));
        let values = value.to_array(args.number_rows)?;
        let mut out = StringBuilder::with_capacity(values.len(), values.len() * 8);
        let mut text = String::new();
        for i in 0..values.len() {
            if values.is_null(i) {
                out.append_null();
                continue;
            }
            text.clear();
            match values.data_type() {
                DataType::Int64 => {
                    let v = values.as_primitive::<Int64Type>().value(i);
                    let _ = write!(text, "{:X}", v as u64);
                }
                DataType::Binary => {
                    for b in values.as_binary::<i32>().value(i) {
                        let _ = write!(text, "{b:02X}");
                    }
                }
                _ => {
                    for b in values.as_string::<i32>().value(i).as_bytes() {
                        let _ = write!(text, "{b:02X}");
                    }
                }
            }
            out.append_value(&text);
        }
        scalar_or_array(Arc::new(out.finish()), is_scalar)
    }
}

/// `a DIV b`: the integer quotient, truncated toward zero; NULL for a zero divisor.
#[derive(Debug, PartialEq, Eq, Hash)]
struct IntDivide {
    signature: Signature,
}

impl IntDivide {
    fn new() -> IntDivide {
        IntDivide {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for IntDivide {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        INT_DIVIDE
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        let [a, b] = args else {
            return plan_err!("DIV takes two numbers");
        };
        let integral = |t: &DataType| t.is_integer() || *t == DataType::Null;
        if integral(a) && integral(b) {
            Ok(vec![DataType::Int64, DataType::Int64])
        } else if (a.is_numeric() || integral(a)) && (b.is_numeric() || integral(b)) {
            Ok(vec![DataType::Float64, DataType::Float64])
        } else {
            plan_err!("DIV takes two numbers, not {a} and {b}")
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [a, b] = args.args.as_slice() else {
            return exec_err!("DIV takes two numbers");
        };
        let n = args.number_rows;
        let (a, b) = (a.to_array(n)?, b.to_array(n)?);
        let quotient: Int64Array = match a.data_type() {
            DataType::Int64 => {
                let (a, b) = (a.as_primitive::<Int64Type>(), b.as_primitive::<Int64Type>());
                a.iter()
                    .zip(b.iter())
                    .map(|(a, b)| match (a?, b?) {
                        (_, 0) => None,
                        (a, b) => Some(a.wrapping_div(b)),
                    })
                    .collect()
            }
            _ => {
                let (a, b) = (
                    a.as_primitive::<Float64Type>(),
                    b.as_primitive::<Float64Type>(),
                );
                a.iter()
                    .zip(b.iter())
                    .map(|(a, b)| {
                        let (a, b) = (a?, b?);
                        (b != 0.0).then(|| (a / b).trunc() as i64)
                    })
                    .collect()
            }
        };
        Ok(ColumnarValue::Array(Arc::new(quotient)))
    }
}

/// `DATE_FORMAT(d, format)`: DataFusion's `to_char` with MySQL's format letters translated
/// to its (`%i` minutes, `%s` seconds, `%M` the month's name, `%W` the weekday's, …).
#[derive(Debug, PartialEq, Eq, Hash)]
struct DateFormat {
    signature: Signature,
}

impl DateFormat {
    fn new() -> DateFormat {
        DateFormat {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

/// MySQL's `DATE_FORMAT` letters as chrono's (`to_char`'s).
fn chrono_format(mysql: &str) -> Result<String> {
    let mut out = String::with_capacity(mysql.len() + 8);
    let mut chars = mysql.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(letter) = chars.next() else {
            out.push('%');
            break;
        };
        out.push_str(match letter {
            'Y' => "%Y",
            'y' => "%y",
            'm' => "%m",
            'c' => "%-m",
            'd' => "%d",
            'e' => "%-d",
            'H' => "%H",
            'k' => "%-H",
            'h' | 'I' => "%I",
            'l' => "%-I",
            'i' => "%M",
            's' | 'S' => "%S",
            'f' => "%6f",
            'p' => "%p",
            'M' => "%B",
            'b' => "%b",
            'W' => "%A",
            'a' => "%a",
            'j' => "%j",
            'w' => "%w",
            'T' => "%H:%M:%S",
            'r' => "%I:%M:%S %p",
            '%' => "%%",
            other => return plan_err!("DATE_FORMAT: the format letter %{other} is not supported"),
        });
    }
    Ok(out)
}

impl ScalarUDFImpl for DateFormat {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        "date_format"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [DataType::Date32 | DataType::Timestamp(..), _] => {
                Ok(vec![args[0].clone(), DataType::Utf8])
            }
            [DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null, _] => {
                Ok(vec![
                    DataType::Timestamp(TimeUnit::Microsecond, None),
                    DataType::Utf8,
                ])
            }
            [t, _] => plan_err!("DATE_FORMAT() takes a date or a time, not {t}"),
            _ => plan_err!("DATE_FORMAT() takes a date and a format"),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let Some(ColumnarValue::Scalar(ScalarValue::Utf8(format))) = args.args.get(1) else {
            return exec_err!("DATE_FORMAT() takes a format written in the query");
        };
        let format = format.as_deref().map(chrono_format).transpose()?;
        args.args[1] = ColumnarValue::Scalar(ScalarValue::Utf8(format));
        datafusion::functions::datetime::to_char().invoke_with_args(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_format_letters_become_chronos() {
        assert_eq!(
            chrono_format("%Y-%m-%d %H:%i:%s").unwrap(),
            "%Y-%m-%d %H:%M:%S"
        );
        assert_eq!(
            chrono_format("%W %M %e, 100%%").unwrap(),
            "%A %B %-d, 100%%"
        );
        assert!(chrono_format("%U").is_err());
    }
}
