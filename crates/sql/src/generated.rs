//! The MySQL expression engine ([`MySqlExpressions`], `prollystore-dolt`'s
//! [`Expressions`]): VIRTUAL and STORED generated columns, expression defaults and CHECK
//! constraints, their expressions parsed once per table from the schema text (MySQL dialect)
//! and evaluated per row over the row's values with MySQL's type and NULL rules, the result
//! converted to the column's declared type as Dolt shows it.
//!
//! Covered: column references, literals, arithmetic (`+ - * / DIV %`, unary minus),
//! comparisons (`= <> != < <= > >= <=>`, `[NOT] IN (list)`, `[NOT] BETWEEN`, `[NOT] LIKE`;
//! text under the column's collation as Dolt compares it), `AND`/`OR`/
//! `NOT`/`XOR`, `IS [NOT] NULL`, `IS [NOT] TRUE`/`FALSE`, the string
//! functions CONCAT, LOWER/LCASE, UPPER/UCASE, SUBSTRING/SUBSTR, LENGTH, CHAR_LENGTH, TRIM,
//! LTRIM, RTRIM, the control forms COALESCE, IFNULL, NULLIF, IF and CASE, and JSON_EXTRACT,
//! JSON_UNQUOTE and `->`/`->>` with simple paths (`$`, `.key`, `."key"`, `[n]`). Anything else is
//! an error naming the column and the expression.

use std::cmp::Ordering;

use sqlparser::ast::{
    BinaryOperator, CaseWhen, Expr as Ast, FunctionArg, FunctionArgExpr, FunctionArguments,
    InTarget, TrimWhereField, UnaryOperator, Value as Lit,
};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

use prollystore_format::collation::Collation;

use prollystore_dolt::codec::encode::{decimal_parts, parse_value};
use prollystore_dolt::{
    Column, Expression, ExpressionKind, Expressions, Result, Schema, SqlType, SqlValue,
};

/// Digits MySQL adds to the scale of a division's result (`div_precision_increment`).
const DIV_SCALE_INCREMENT: u32 = 4;

/// 2^63 as a float: whole JSON numbers below it in magnitude print as integers.
const TWO_POW_63: f64 = (1u64 << 63) as f64;

/// Largest decimal scale kept in intermediate results.
const MAX_SCALE: u32 = 30;

/// A value during evaluation.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Null,
    Int(i64),
    Uint(u64),
    /// A decimal: mantissa, scale (value = mantissa / 10^scale), and whether it is negative.
    /// The sign outlives rounding to zero, as in Dolt (`-0.001` shown with two digits is
    /// `-0.00`).
    Dec(i128, u32, bool),
    Double(f64),
    Text(String),
    Json(serde_json::Value),
}

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    NullSafeEq,
}

/// Functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Func {
    Concat,
    Lower,
    Upper,
    Length,
    CharLength,
    Coalesce,
    IfNull,
    NullIf,
    If,
    JsonExtract,
    JsonUnquote,
    Ltrim,
    Rtrim,
}

/// A compiled expression: column references resolved to row positions.
#[derive(Clone, Debug)]
enum Node {
    Column(usize),
    Lit(Val),
    Neg(Box<Node>),
    Not(Box<Node>),
    Arith(Arith, Box<Node>, Box<Node>),
    /// A comparison; text operands compare under the collation (bytewise without one).
    Cmp(Cmp, Option<Collation>, Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Xor(Box<Node>, Box<Node>),
    IsNull(Box<Node>, bool),
    /// `x IS TRUE` (`true`) or `x IS FALSE` (`false`): never NULL.
    IsTruth(Box<Node>, bool),
    /// `text LIKE pattern`, characters compared under the collation (bytewise without one).
    Like(Box<Node>, Box<Node>, Option<Collation>),
    Call(Func, Vec<Node>),
    Substring(Box<Node>, Box<Node>, Option<Box<Node>>),
    Trim {
        leading: bool,
        trailing: bool,
        what: Option<Box<Node>>,
        expr: Box<Node>,
    },
    Case {
        operand: Option<Box<Node>>,
        /// Conditions (values, with an operand) and results; each value compares with the
        /// operand under the pair's collation.
        whens: Vec<(Node, Node, Option<Collation>)>,
        otherwise: Option<Box<Node>>,
    },
    /// `NULLIF(a, b)`: NULL when `a = b` under the collation, else `a`.
    NullIf(Box<Node>, Box<Node>, Option<Collation>),
}

/// MySQL's expression rules as Dolt applies them: the engine that `prollystore-dolt` asks to
/// compile a table's generated columns, expression defaults and CHECK constraints.
#[derive(Clone, Copy, Debug, Default)]
pub struct MySqlExpressions;

impl Expressions for MySqlExpressions {
    fn compile(
        &self,
        schema: &Schema,
        text: &str,
        kind: ExpressionKind,
    ) -> std::result::Result<Box<dyn Expression>, String> {
        let scope = Scope::visible(schema).map_err(|e| e.to_string())?;
        let expr = match kind {
            ExpressionKind::Computed => compile_default(text, &scope)?,
            ExpressionKind::Virtual | ExpressionKind::Check => {
                DefaultExpr::Expr(compile(&parse(text)?, &scope)?)
            }
        };
        Ok(Box::new(Compiled { kind, expr }))
    }
}

/// Parses one expression (MySQL dialect).
fn parse(text: &str) -> R<Ast> {
    Parser::new(&MySqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| e.to_string())
}

/// A compiled expression and what it is for.
#[derive(Clone, Debug)]
struct Compiled {
    kind: ExpressionKind,
    expr: DefaultExpr,
}

impl Expression for Compiled {
    fn value(&self, row: &[Option<SqlValue>], column: &Column) -> R<Option<SqlValue>> {
        let v = match &self.expr {
            DefaultExpr::Now => Val::Text(now_text(column)),
            DefaultExpr::Expr(node) => eval(node, row)?,
        };
        if self.kind != ExpressionKind::Computed {
            return to_column_type(v, column);
        }
        if v == Val::Null {
            return Ok(None);
        }
        // Numbers, text and JSON convert as for VIRTUAL columns (MySQL's rounding and range
        // checks); temporal columns read the result's text as a value of the column.
        match to_column_type(v.clone(), column) {
            Ok(shown) => Ok(shown),
            Err(_) => parse_value(column, &text_of(&v)).map(Some),
        }
    }

    fn truth(&self, row: &[Option<SqlValue>]) -> R<Option<bool>> {
        match &self.expr {
            DefaultExpr::Now => Err("a time function has no truth".into()),
            DefaultExpr::Expr(node) => Ok(truth(&eval(node, row)?)),
        }
    }
}

type R<T> = std::result::Result<T, String>;

// ---------------------------------------------------------------------------------------------
// Compiling the parsed expression.

fn compile(e: &Ast, scope: &Scope) -> R<Node> {
    let b = |e: &Ast| compile(e, scope).map(Box::new);
    // A comparison of two compiled operands under their collation.
    let cmp = |op: Cmp, l: Box<Node>, r: Box<Node>| {
        let c = shared_collation(&l, &r, scope);
        Node::Cmp(op, c, l, r)
    };
    Ok(match e {
        Ast::Nested(inner) => compile(inner, scope)?,
        Ast::Identifier(id) => column(&id.value, scope)?,
        Ast::CompoundIdentifier(parts) => match parts.last() {
            Some(id) => column(&id.value, scope)?,
            None => return Err("empty identifier".into()),
        },
        Ast::Value(v) => Node::Lit(literal(&v.value)?),
        Ast::UnaryOp { op, expr } => match op {
            UnaryOperator::Minus => Node::Neg(b(expr)?),
            UnaryOperator::Plus => compile(expr, scope)?,
            UnaryOperator::Not | UnaryOperator::BangNot => Node::Not(b(expr)?),
            other => return Err(format!("unsupported operator {other}")),
        },
        Ast::BinaryOp { left, op, right } => {
            let (l, r) = (b(left)?, b(right)?);
            use BinaryOperator as B;
            match op {
                B::Plus => Node::Arith(Arith::Add, l, r),
                B::Minus => Node::Arith(Arith::Sub, l, r),
                B::Multiply => Node::Arith(Arith::Mul, l, r),
                B::Divide => Node::Arith(Arith::Div, l, r),
                B::MyIntegerDivide | B::DuckIntegerDivide => Node::Arith(Arith::IntDiv, l, r),
                B::Modulo => Node::Arith(Arith::Mod, l, r),
                B::Eq => cmp(Cmp::Eq, l, r),
                B::NotEq => cmp(Cmp::Ne, l, r),
                B::Lt => cmp(Cmp::Lt, l, r),
                B::LtEq => cmp(Cmp::Le, l, r),
                B::Gt => cmp(Cmp::Gt, l, r),
                B::GtEq => cmp(Cmp::Ge, l, r),
                B::Spaceship => cmp(Cmp::NullSafeEq, l, r),
                B::And => Node::And(l, r),
                B::Or => Node::Or(l, r),
                B::Xor => Node::Xor(l, r),
                B::Arrow => Node::Call(Func::JsonExtract, vec![*l, *r]),
                B::LongArrow => Node::Call(
                    Func::JsonUnquote,
                    vec![Node::Call(Func::JsonExtract, vec![*l, *r])],
                ),
                other => return Err(format!("unsupported operator {other}")),
            }
        }
        Ast::IsNull(x) => Node::IsNull(b(x)?, false),
        Ast::IsNotNull(x) => Node::IsNull(b(x)?, true),
        Ast::IsTrue(x) => Node::IsTruth(b(x)?, true),
        Ast::IsFalse(x) => Node::IsTruth(b(x)?, false),
        Ast::IsNotTrue(x) => Node::Not(Box::new(Node::IsTruth(b(x)?, true))),
        Ast::IsNotFalse(x) => Node::Not(Box::new(Node::IsTruth(b(x)?, false))),
        // `x IN (a, b)` is `x = a OR x = b` in MySQL's three-valued logic (TRUE if one is
        // equal, else NULL if one compare is NULL, else FALSE), and `x BETWEEN a AND b` is
        // `x >= a AND x <= b`. Dolt compares IN's text bytewise whatever the collation
        // (`'E' IN ('e')` is false on a `_ci` column, where `'E' = 'e'` is true); BETWEEN
        // under the collation.
        Ast::In {
            expr,
            target: InTarget::List(list),
            negated,
            global: false,
        } => {
            let x = compile(expr, scope)?;
            let mut alternatives = list
                .iter()
                .map(|e| Ok(Node::Cmp(Cmp::Eq, None, Box::new(x.clone()), b(e)?)));
            let first = alternatives
                .next()
                .ok_or_else(|| "IN with an empty list".to_string())??;
            let any = alternatives.try_fold(first, |acc, alt: R<Node>| {
                Ok::<_, String>(Node::Or(Box::new(acc), Box::new(alt?)))
            })?;
            negated_if(*negated, any)
        }
        Ast::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char: None,
        } => {
            let (x, p) = (b(expr)?, b(pattern)?);
            let c = shared_collation(&x, &p, scope);
            negated_if(*negated, Node::Like(x, p, c))
        }
        Ast::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let x = compile(expr, scope)?;
            let within = Node::And(
                Box::new(cmp(Cmp::Ge, Box::new(x.clone()), b(low)?)),
                Box::new(cmp(Cmp::Le, Box::new(x), b(high)?)),
            );
            negated_if(*negated, within)
        }
        Ast::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            let from = match substring_from {
                Some(f) => b(f)?,
                None => Box::new(Node::Lit(Val::Int(1))),
            };
            let len = substring_for.as_deref().map(b).transpose()?;
            Node::Substring(b(expr)?, from, len)
        }
        Ast::Trim {
            trim_where,
            trim_what,
            expr,
            trim_characters,
        } => {
            if trim_characters.is_some() {
                return Err("unsupported TRIM form".into());
            }
            let (leading, trailing) = match trim_where {
                None | Some(TrimWhereField::Both) => (true, true),
                Some(TrimWhereField::Leading) => (true, false),
                Some(TrimWhereField::Trailing) => (false, true),
            };
            Node::Trim {
                leading,
                trailing,
                what: trim_what.as_deref().map(b).transpose()?,
                expr: b(expr)?,
            }
        }
        Ast::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let operand = operand.as_deref().map(b).transpose()?;
            let whens = conditions
                .iter()
                .map(|CaseWhen { condition, result }| {
                    let c = compile(condition, scope)?;
                    let collation = operand
                        .as_deref()
                        .and_then(|o| shared_collation(o, &c, scope));
                    Ok((c, compile(result, scope)?, collation))
                })
                .collect::<R<_>>()?;
            Node::Case {
                operand,
                whens,
                otherwise: else_result.as_deref().map(b).transpose()?,
            }
        }
        Ast::Function(f) => {
            let name = f.name.to_string().to_ascii_lowercase();
            let args: Vec<Node> = match &f.args {
                FunctionArguments::None => Vec::new(),
                FunctionArguments::List(list) if list.duplicate_treatment.is_none() => list
                    .args
                    .iter()
                    .map(|a| match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => compile(x, scope),
                        other => Err(format!("unsupported argument {other}")),
                    })
                    .collect::<R<_>>()?,
                other => return Err(format!("unsupported arguments {other}")),
            };
            match function(&name, args)? {
                Node::Call(Func::NullIf, mut args) if args.len() == 2 => {
                    let (y, x) = (Box::new(args.remove(1)), Box::new(args.remove(0)));
                    let c = shared_collation(&x, &y, scope);
                    Node::NullIf(x, y, c)
                }
                node => node,
            }
        }
        other => return Err(format!("unsupported expression form {other}")),
    })
}

/// The columns an expression may name: the visible columns of a row, with each text
/// column's collation (its own, else the table's).
struct Scope<'s> {
    names: Vec<&'s str>,
    collations: Vec<Option<Collation>>,
}

impl<'s> Scope<'s> {
    /// The visible columns of `schema`, in row order.
    fn visible(schema: &'s Schema) -> Result<Scope<'s>> {
        let mut scope = Scope {
            names: Vec::new(),
            collations: Vec::new(),
        };
        for &i in &schema.visible_columns() {
            if let Some(c) = schema.columns.get(i) {
                scope.names.push(c.name.as_str());
                scope.collations.push(schema.column_collation(c)?);
            }
        }
        Ok(scope)
    }

    /// Columns without collations (text compares bytewise).
    #[cfg(test)]
    fn plain(names: &[&'s str]) -> Scope<'s> {
        Scope {
            names: names.to_vec(),
            collations: vec![None; names.len()],
        }
    }
}

/// The collation a text comparison of `l` and `r` uses, as Dolt chooses it: a column's (or a
/// function's of a column) over a literal's, none (bytewise) when the two sides' collations
/// differ (`ci_col = bin_col` compares bytes) or neither side has one.
fn shared_collation(l: &Node, r: &Node, scope: &Scope) -> Option<Collation> {
    match (collation_of(l, scope), collation_of(r, scope)) {
        (Some(a), Some(b)) => (a == b).then_some(a),
        (a, b) => a.or(b),
    }
}

/// The collation text from `node` carries, as Dolt derives it (found with `dolt sql` selects
/// over a `_ci` column): a column's; kept by LOWER, UPPER, the trims, SUBSTRING, NULLIF (its
/// first argument) and IF (its first branch); CONCAT's when its columns agree (bytewise when
/// they differ); lost by COALESCE, IFNULL and CASE results. `None` for literals and non-text.
fn collation_of(node: &Node, scope: &Scope) -> Option<Collation> {
    match node {
        Node::Column(i) => scope.collations.get(*i).copied().flatten(),
        Node::Call(Func::Lower | Func::Upper | Func::Ltrim | Func::Rtrim, args) => {
            args.first().and_then(|a| collation_of(a, scope))
        }
        Node::Call(Func::If, args) => args.get(1).and_then(|a| collation_of(a, scope)),
        Node::Call(Func::Concat, args) => {
            let mut found = args.iter().filter_map(|a| collation_of(a, scope));
            let first = found.next()?;
            found.all(|c| c == first).then_some(first)
        }
        Node::NullIf(x, ..) | Node::Substring(x, ..) | Node::Trim { expr: x, .. } => {
            collation_of(x, scope)
        }
        _ => None,
    }
}

/// `NOT node` when `negated`.
fn negated_if(negated: bool, node: Node) -> Node {
    if negated {
        Node::Not(Box::new(node))
    } else {
        node
    }
}

fn column(name: &str, scope: &Scope) -> R<Node> {
    scope
        .names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(name))
        .map(Node::Column)
        .ok_or_else(|| format!("unknown column {name:?}"))
}

fn literal(v: &Lit) -> R<Val> {
    Ok(match v {
        Lit::Null => Val::Null,
        Lit::Boolean(b) => Val::Int(i64::from(*b)),
        Lit::Number(n, _) => number_literal(n)?,
        Lit::SingleQuotedString(s) | Lit::DoubleQuotedString(s) => Val::Text(s.clone()),
        other => return Err(format!("unsupported literal {other}")),
    })
}

fn number_literal(n: &str) -> R<Val> {
    if let Ok(i) = n.parse::<i64>() {
        return Ok(Val::Int(i));
    }
    if let Ok(u) = n.parse::<u64>() {
        return Ok(Val::Uint(u));
    }
    if n.contains(['e', 'E']) {
        return n
            .parse::<f64>()
            .map(Val::Double)
            .map_err(|_| format!("bad number {n}"));
    }
    parse_decimal(n).ok_or_else(|| format!("bad number {n}"))
}

fn function(name: &str, args: Vec<Node>) -> R<Node> {
    let n = args.len();
    let arity = |ok: bool| {
        if ok {
            Ok(())
        } else {
            Err(format!("{name}() with {n} arguments"))
        }
    };
    let f = match name {
        "concat" => (arity(n >= 1)?, Func::Concat).1,
        "lower" | "lcase" => (arity(n == 1)?, Func::Lower).1,
        "upper" | "ucase" => (arity(n == 1)?, Func::Upper).1,
        "length" | "octet_length" => (arity(n == 1)?, Func::Length).1,
        "char_length" | "character_length" => (arity(n == 1)?, Func::CharLength).1,
        "coalesce" => (arity(n >= 1)?, Func::Coalesce).1,
        "ifnull" => (arity(n == 2)?, Func::IfNull).1,
        "nullif" => (arity(n == 2)?, Func::NullIf).1,
        "if" => (arity(n == 3)?, Func::If).1,
        "json_extract" => (arity(n == 2)?, Func::JsonExtract).1,
        "json_unquote" => (arity(n == 1)?, Func::JsonUnquote).1,
        "ltrim" => (arity(n == 1)?, Func::Ltrim).1,
        "rtrim" => (arity(n == 1)?, Func::Rtrim).1,
        "trim" => {
            arity(n == 1)?;
            let mut args = args;
            let expr = Box::new(args.remove(0));
            return Ok(Node::Trim {
                leading: true,
                trailing: true,
                what: None,
                expr,
            });
        }
        "substring" | "substr" | "mid" => {
            arity(n == 2 || n == 3)?;
            let mut it = args.into_iter();
            let (Some(s), Some(from)) = (it.next(), it.next()) else {
                return Err(format!("{name}() with {n} arguments"));
            };
            return Ok(Node::Substring(
                Box::new(s),
                Box::new(from),
                it.next().map(Box::new),
            ));
        }
        _ => return Err(format!("unsupported function {name}()")),
    };
    Ok(Node::Call(f, args))
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

fn eval(e: &Node, row: &[Option<SqlValue>]) -> R<Val> {
    Ok(match e {
        Node::Column(i) => match row.get(*i) {
            Some(Some(v)) => from_sql(v)?,
            _ => Val::Null,
        },
        Node::Lit(v) => v.clone(),
        Node::Neg(x) => negate(eval(x, row)?)?,
        Node::Not(x) => match truth(&eval(x, row)?) {
            None => Val::Null,
            Some(t) => Val::Int(i64::from(!t)),
        },
        Node::Arith(op, l, r) => arith(*op, eval(l, row)?, eval(r, row)?)?,
        Node::Cmp(op, c, l, r) => compare(*op, *c, &eval(l, row)?, &eval(r, row)?),
        Node::And(l, r) => match (truth(&eval(l, row)?), truth(&eval(r, row)?)) {
            (Some(false), _) | (_, Some(false)) => Val::Int(0),
            (Some(true), Some(true)) => Val::Int(1),
            _ => Val::Null,
        },
        Node::Or(l, r) => match (truth(&eval(l, row)?), truth(&eval(r, row)?)) {
            (Some(true), _) | (_, Some(true)) => Val::Int(1),
            (Some(false), Some(false)) => Val::Int(0),
            _ => Val::Null,
        },
        Node::Xor(l, r) => match (truth(&eval(l, row)?), truth(&eval(r, row)?)) {
            (Some(a), Some(b)) => Val::Int(i64::from(a != b)),
            _ => Val::Null,
        },
        Node::IsNull(x, negated) => Val::Int(i64::from((eval(x, row)? == Val::Null) != *negated)),
        Node::IsTruth(x, wanted) => Val::Int(i64::from(truth(&eval(x, row)?) == Some(*wanted))),
        Node::NullIf(x, y, c) => {
            let a = eval(x, row)?;
            if truth(&compare(Cmp::Eq, *c, &a, &eval(y, row)?)) == Some(true) {
                Val::Null
            } else {
                a
            }
        }
        Node::Like(x, p, c) => match (eval(x, row)?, eval(p, row)?) {
            (Val::Null, _) | (_, Val::Null) => Val::Null,
            (x, p) => Val::Int(i64::from(like(&text_of(&x), &text_of(&p), *c)?)),
        },
        Node::Call(f, args) => call(*f, args, row)?,
        Node::Substring(s, from, len) => {
            let s = eval(s, row)?;
            let from = eval(from, row)?;
            let len = match len {
                Some(l) => Some(eval(l, row)?),
                None => None,
            };
            if s == Val::Null || from == Val::Null || len == Some(Val::Null) {
                return Ok(Val::Null);
            }
            let s = text_of(&s);
            let chars: Vec<char> = s.chars().collect();
            let n = chars.len() as i64;
            let pos = to_i64(&from);
            let start = match pos.cmp(&0) {
                Ordering::Equal => return Ok(Val::Text(String::new())),
                Ordering::Greater => pos - 1,
                Ordering::Less => n + pos,
            };
            if start < 0 || start >= n {
                return Ok(Val::Text(String::new()));
            }
            let len = len.map_or(n, |l| to_i64(&l)).max(0);
            let end = start.saturating_add(len).min(n);
            Val::Text(chars[start as usize..end as usize].iter().collect())
        }
        Node::Trim {
            leading,
            trailing,
            what,
            expr,
        } => {
            let what = match what {
                Some(w) => eval(w, row)?,
                None => Val::Text(" ".into()),
            };
            let s = eval(expr, row)?;
            if s == Val::Null || what == Val::Null {
                return Ok(Val::Null);
            }
            let (what, mut s) = (text_of(&what), text_of(&s));
            if !what.is_empty() {
                if *leading {
                    while let Some(rest) = s.strip_prefix(what.as_str()) {
                        s = rest.to_string();
                    }
                }
                if *trailing {
                    while let Some(rest) = s.strip_suffix(what.as_str()) {
                        s = rest.to_string();
                    }
                }
            }
            Val::Text(s)
        }
        Node::Case {
            operand,
            whens,
            otherwise,
        } => {
            let subject = match operand {
                Some(o) => Some(eval(o, row)?),
                None => None,
            };
            for (cond, result, collation) in whens {
                let c = eval(cond, row)?;
                let hit = match &subject {
                    Some(s) => truth(&compare(Cmp::Eq, *collation, s, &c)) == Some(true),
                    None => truth(&c) == Some(true),
                };
                if hit {
                    return eval(result, row);
                }
            }
            match otherwise {
                Some(o) => eval(o, row)?,
                None => Val::Null,
            }
        }
    })
}

fn call(f: Func, args: &[Node], row: &[Option<SqlValue>]) -> R<Val> {
    let arg = |i: usize| -> R<Val> {
        match args.get(i) {
            Some(a) => eval(a, row),
            None => Ok(Val::Null),
        }
    };
    let text1 = |map: &dyn Fn(String) -> Val| -> R<Val> {
        Ok(match arg(0)? {
            Val::Null => Val::Null,
            v => map(text_of(&v)),
        })
    };
    Ok(match f {
        Func::Concat => {
            let mut out = String::new();
            for i in 0..args.len() {
                match arg(i)? {
                    Val::Null => return Ok(Val::Null),
                    v => out.push_str(&text_of(&v)),
                }
            }
            Val::Text(out)
        }
        Func::Lower => text1(&|s| Val::Text(lower(&s)))?,
        Func::Upper => text1(&|s| Val::Text(upper(&s)))?,
        Func::Length => text1(&|s| Val::Int(s.len() as i64))?,
        Func::CharLength => text1(&|s| Val::Int(s.chars().count() as i64))?,
        Func::Ltrim => text1(&|s| Val::Text(s.trim_start_matches(' ').to_string()))?,
        Func::Rtrim => text1(&|s| Val::Text(s.trim_end_matches(' ').to_string()))?,
        Func::Coalesce => {
            for i in 0..args.len() {
                let v = arg(i)?;
                if v != Val::Null {
                    return Ok(v);
                }
            }
            Val::Null
        }
        Func::IfNull => match arg(0)? {
            Val::Null => arg(1)?,
            v => v,
        },
        // Compiled to `Node::NullIf`, which knows the collation of its compare.
        Func::NullIf => return Err("NULLIF() with other than two arguments".into()),
        Func::If => {
            if truth(&arg(0)?) == Some(true) {
                arg(1)?
            } else {
                arg(2)?
            }
        }
        Func::JsonExtract => {
            let (doc, path) = (arg(0)?, arg(1)?);
            if doc == Val::Null || path == Val::Null {
                return Ok(Val::Null);
            }
            let doc = json_of(doc)?;
            match json_path(&doc, &text_of(&path))? {
                Some(v) => Val::Json(v.clone()),
                None => Val::Null,
            }
        }
        Func::JsonUnquote => match arg(0)? {
            Val::Null => Val::Null,
            Val::Json(serde_json::Value::String(s)) => Val::Text(s),
            Val::Json(j) => Val::Text(json_text(&j)),
            v => Val::Text(json_unquote(&text_of(&v))),
        },
    })
}

/// Lower case as Go's `strings.ToLower` (which Dolt uses): each character's simple
/// (one-character) mapping. Rust's mapping is the full one; they differ only where the full
/// mapping is longer: `İ` (whose simple lower case is `i`).
fn lower(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{130}' => 'i',
            c => single(c.to_lowercase()).unwrap_or(c),
        })
        .collect()
}

/// Upper case as Go's `strings.ToUpper`: simple mappings only. Where the full mapping is
/// longer, the character stays, except the Greek letters with ypogegrammeni, whose simple
/// upper case is the matching letter with prosgegrammeni.
fn upper(s: &str) -> String {
    s.chars()
        .map(|c| match u32::from(c) {
            0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => {
                char::from_u32(u32::from(c) + 8).unwrap_or(c)
            }
            0x1FB3 | 0x1FC3 | 0x1FF3 => char::from_u32(u32::from(c) + 9).unwrap_or(c),
            _ => single(c.to_uppercase()).unwrap_or(c),
        })
        .collect()
}

/// The only item of a one-item iterator.
fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    match (it.next(), it.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// SQL truth of a value (`None` for NULL).
fn truth(v: &Val) -> Option<bool> {
    match v {
        Val::Null => None,
        Val::Int(i) => Some(*i != 0),
        Val::Uint(u) => Some(*u != 0),
        Val::Dec(m, ..) => Some(*m != 0),
        Val::Double(d) => Some(*d != 0.0),
        Val::Text(s) => Some(text_to_double(s) != 0.0),
        Val::Json(j) => Some(!matches!(j, serde_json::Value::Null)),
    }
}

fn from_sql(v: &SqlValue) -> R<Val> {
    Ok(match v {
        SqlValue::Int(i) => Val::Int(*i),
        SqlValue::Uint(u) => Val::Uint(*u),
        SqlValue::Year(y) => Val::Int(i64::from(*y)),
        SqlValue::Float(f) => Val::Double(f64::from(*f)),
        SqlValue::Double(d) => Val::Double(*d),
        SqlValue::Decimal(s) => parse_decimal(s).ok_or_else(|| format!("bad decimal {s}"))?,
        SqlValue::Json(s) => Val::Json(
            serde_json::from_str(s).map_err(|e| format!("stored JSON does not parse: {e}"))?,
        ),
        SqlValue::Text(s) => Val::Text(s.clone()),
        SqlValue::Bytes(b) => Val::Text(String::from_utf8_lossy(b).into_owned()),
        other => Val::Text(other.to_text()),
    })
}

// ---------------------------------------------------------------------------------------------
// Numbers.

fn parse_decimal(s: &str) -> Option<Val> {
    let (neg, digits, exponent) = decimal_parts(s).ok()?;
    let mut m: i128 = 0;
    for b in digits.bytes() {
        m = m.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    let scale = exponent.unsigned_abs();
    Some(dec(if neg { -m } else { m }, scale))
}

/// A decimal value (negative when `m` is).
fn dec(m: i128, scale: u32) -> Val {
    Val::Dec(m, scale, m < 0)
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// `m / 10^drop`, rounded half away from zero.
fn div_round(m: i128, d: i128) -> i128 {
    let q = m / d;
    let r = m % d;
    if r.unsigned_abs() * 2 >= d.unsigned_abs() {
        q + if (m < 0) != (d < 0) { -1 } else { 1 }
    } else {
        q
    }
}

/// A decimal's mantissa at scale `to` (rounded half away from zero when shortening).
fn rescale(m: i128, from: u32, to: u32) -> R<i128> {
    let overflow = || "decimal overflow".to_string();
    if to >= from {
        m.checked_mul(pow10(to - from).ok_or_else(overflow)?)
            .ok_or_else(overflow)
    } else {
        Ok(div_round(m, pow10(from - to).ok_or_else(overflow)?))
    }
}

/// Numeric class of a value in arithmetic.
enum Num {
    Int(i128),
    Dec(i128, u32),
    Double(f64),
}

fn num_of(v: &Val) -> Num {
    match v {
        Val::Int(i) => Num::Int(i128::from(*i)),
        Val::Uint(u) => Num::Int(i128::from(*u)),
        Val::Dec(m, s, _) => Num::Dec(*m, *s),
        Val::Double(d) => Num::Double(*d),
        Val::Text(s) => Num::Double(text_to_double(s)),
        Val::Json(j) => Num::Double(j.as_f64().unwrap_or(0.0)),
        Val::Null => Num::Int(0),
    }
}

/// An integer or decimal as (mantissa, scale); callers have ruled out doubles (taken as 0).
fn exact(n: &Num) -> (i128, u32) {
    match n {
        Num::Int(i) => (*i, 0),
        Num::Dec(m, s) => (*m, *s),
        Num::Double(_) => (0, 0),
    }
}

fn to_f64(n: &Num) -> f64 {
    match n {
        Num::Int(i) => *i as f64,
        Num::Dec(m, s) => *m as f64 / 10f64.powi(*s as i32),
        Num::Double(d) => *d,
    }
}

fn int_result(v: i128) -> R<Val> {
    if let Ok(i) = i64::try_from(v) {
        Ok(Val::Int(i))
    } else if let Ok(u) = u64::try_from(v) {
        Ok(Val::Uint(u))
    } else {
        Err("BIGINT value is out of range".into())
    }
}

fn negate(v: Val) -> R<Val> {
    Ok(match num_of(&v) {
        _ if v == Val::Null => Val::Null,
        Num::Int(i) => int_result(-i)?,
        Num::Dec(m, s) => dec(-m, s),
        Num::Double(d) => Val::Double(-d),
    })
}

fn arith(op: Arith, l: Val, r: Val) -> R<Val> {
    if l == Val::Null || r == Val::Null {
        return Ok(Val::Null);
    }
    let (a, b) = (num_of(&l), num_of(&r));
    let overflow = || "value is out of range".to_string();
    if matches!(a, Num::Double(_)) || matches!(b, Num::Double(_)) {
        let (x, y) = (to_f64(&a), to_f64(&b));
        return Ok(match op {
            Arith::Add => Val::Double(x + y),
            Arith::Sub => Val::Double(x - y),
            Arith::Mul => Val::Double(x * y),
            Arith::Div if y == 0.0 => Val::Null,
            Arith::Div => Val::Double(x / y),
            Arith::IntDiv if y == 0.0 => Val::Null,
            Arith::IntDiv => int_result((x / y).trunc() as i128)?,
            Arith::Mod if y == 0.0 => Val::Null,
            Arith::Mod => Val::Double(x % y),
        });
    }
    if let (Num::Int(x), Num::Int(y)) = (&a, &b) {
        let (x, y) = (*x, *y);
        return match op {
            Arith::Add => int_result(x + y),
            Arith::Sub => int_result(x - y),
            Arith::Mul => int_result(x.checked_mul(y).ok_or_else(overflow)?),
            Arith::Div if y == 0 => Ok(Val::Null),
            Arith::Div => Ok(Val::Dec(
                div_round(x * pow10(DIV_SCALE_INCREMENT).unwrap_or(1), y),
                DIV_SCALE_INCREMENT,
                x != 0 && (x < 0) != (y < 0),
            )),
            Arith::IntDiv | Arith::Mod if y == 0 => Ok(Val::Null),
            Arith::IntDiv => int_result(x.checked_div(y).ok_or_else(overflow)?),
            Arith::Mod => int_result(x.checked_rem(y).ok_or_else(overflow)?),
        };
    }
    let ((am, asc), (bm, bsc)) = (exact(&a), exact(&b));
    let s = asc.max(bsc);
    Ok(match op {
        Arith::Add | Arith::Sub | Arith::Mod => {
            let (x, y) = (rescale(am, asc, s)?, rescale(bm, bsc, s)?);
            match op {
                Arith::Add => dec(x.checked_add(y).ok_or_else(overflow)?, s),
                Arith::Sub => dec(x.checked_sub(y).ok_or_else(overflow)?, s),
                _ if y == 0 => Val::Null,
                _ => dec(x.checked_rem(y).ok_or_else(overflow)?, s),
            }
        }
        Arith::Mul => {
            let scale = asc + bsc;
            if scale > MAX_SCALE {
                return Err("decimal scale too large".into());
            }
            dec(am.checked_mul(bm).ok_or_else(overflow)?, scale)
        }
        Arith::Div | Arith::IntDiv if bm == 0 => Val::Null,
        Arith::Div => {
            // value = (am / 10^asc) / (bm / 10^bsc), at scale asc + 4.
            let scale = asc + DIV_SCALE_INCREMENT;
            let num = am
                .checked_mul(pow10(bsc + DIV_SCALE_INCREMENT).ok_or_else(overflow)?)
                .ok_or_else(overflow)?;
            Val::Dec(div_round(num, bm), scale, am != 0 && (am < 0) != (bm < 0))
        }
        Arith::IntDiv => {
            let (x, y) = (rescale(am, asc, s)?, rescale(bm, bsc, s)?);
            int_result(x.checked_div(y).ok_or_else(overflow)?)?
        }
    })
}

/// MySQL's number from the start of a text (`' 3 '` is 3, `'12abc'` 12, `'abc'` 0).
fn text_to_double(s: &str) -> f64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_e = false;
    while let Some(&c) = b.get(end) {
        match c {
            b'+' | b'-' if end == 0 => {}
            b'0'..=b'9' => seen_digit = true,
            b'.' if !seen_dot && !seen_e => seen_dot = true,
            b'e' | b'E' if seen_digit && !seen_e => {
                // Only an exponent if digits follow (maybe after a sign).
                let rest = b.get(end + 1..).unwrap_or(&[]);
                let rest = rest
                    .strip_prefix(b"-")
                    .or(rest.strip_prefix(b"+"))
                    .unwrap_or(rest);
                if !rest.first().is_some_and(u8::is_ascii_digit) {
                    break;
                }
                seen_e = true;
                if matches!(b.get(end + 1), Some(b'+' | b'-')) {
                    end += 1;
                }
            }
            _ => break,
        }
        end += 1;
    }
    t.get(..end).and_then(|n| n.parse().ok()).unwrap_or(0.0)
}

fn to_i64(v: &Val) -> i64 {
    match num_of(v) {
        Num::Int(i) => i.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        Num::Dec(m, s) => {
            let r = div_round(m, pow10(s).unwrap_or(1));
            r.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
        }
        Num::Double(d) => d.round() as i64,
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison.

fn compare(op: Cmp, collation: Option<Collation>, l: &Val, r: &Val) -> Val {
    if op == Cmp::NullSafeEq {
        return Val::Int(i64::from(match (l, r) {
            (Val::Null, Val::Null) => true,
            (Val::Null, _) | (_, Val::Null) => false,
            _ => order(l, r, collation) == Ordering::Equal,
        }));
    }
    if *l == Val::Null || *r == Val::Null {
        return Val::Null;
    }
    let o = order(l, r, collation);
    let t = match op {
        Cmp::Eq | Cmp::NullSafeEq => o == Ordering::Equal,
        Cmp::Ne => o != Ordering::Equal,
        Cmp::Lt => o == Ordering::Less,
        Cmp::Le => o != Ordering::Greater,
        Cmp::Gt => o == Ordering::Greater,
        Cmp::Ge => o != Ordering::Less,
    };
    Val::Int(i64::from(t))
}

/// Orders two non-NULL values: as text when both are text (under `collation`, else bytewise),
/// else as numbers.
fn order(l: &Val, r: &Val, collation: Option<Collation>) -> Ordering {
    match (l, r) {
        (Val::Text(a), Val::Text(b)) => match collation {
            Some(c) => c.compare(a.as_bytes(), b.as_bytes()),
            None => a.as_bytes().cmp(b.as_bytes()),
        },
        (Val::Json(a), Val::Json(b)) => json_text(a).cmp(&json_text(b)),
        _ => match (num_of(l), num_of(r)) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (a @ (Num::Int(_) | Num::Dec(..)), b @ (Num::Int(_) | Num::Dec(..))) => {
                let ((am, asc), (bm, bsc)) = (exact(&a), exact(&b));
                let s = asc.max(bsc);
                match (rescale(am, asc, s), rescale(bm, bsc, s)) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => to_f64(&Num::Dec(am, asc)).total_cmp(&to_f64(&Num::Dec(bm, bsc))),
                }
            }
            (a, b) => to_f64(&a)
                .partial_cmp(&to_f64(&b))
                .unwrap_or(Ordering::Equal),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Text and JSON.

/// MySQL's LIKE: `%` matches any run of characters, `_` one character, and every other
/// character one equal to it under `collation` (compared one character at a time, so no
/// contractions or expansions, as MySQL's wildcard compare does), bytewise without one. A
/// backslash in the pattern (an escape, whose handling in Dolt's string literals is not
/// settled here) is an error rather than a guess.
fn like(text: &str, pattern: &str, collation: Option<Collation>) -> R<bool> {
    if pattern.contains('\\') {
        return Err(format!("LIKE pattern {pattern:?} with an escape"));
    }
    let same = |a: char, b: char| match collation {
        None => a == b,
        Some(c) => {
            let (mut x, mut y) = ([0u8; 4], [0u8; 4]);
            c.compare(
                a.encode_utf8(&mut x).as_bytes(),
                b.encode_utf8(&mut y).as_bytes(),
            ) == Ordering::Equal
        }
    };
    let (t, p): (Vec<char>, Vec<char>) = (text.chars().collect(), pattern.chars().collect());
    // Greedy match with backtracking to the last `%`: linear for most patterns, at worst
    // text length × pattern length.
    let (mut ti, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('%') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '_' || same(t[ti], c) => {
                ti += 1;
                pi += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return Ok(false),
            },
        }
    }
    Ok(p[pi..].iter().all(|&c| c == '%'))
}

/// A value's text in a string context.
fn text_of(v: &Val) -> String {
    match v {
        Val::Null => String::new(),
        Val::Int(i) => i.to_string(),
        Val::Uint(u) => u.to_string(),
        Val::Dec(m, s, neg) => dec_text(*m, *s, *s, *neg),
        // Go's `strconv.FormatFloat(d, 'f', -1, 64)`: shortest digits, never an exponent, which
        // is Rust's `Display` of a float.
        Val::Double(d) => d.to_string(),
        Val::Text(s) => s.clone(),
        Val::Json(j) => json_text(j),
    }
}

/// Decimal text of `m / 10^scale` with exactly `digits` fraction digits (rounded half away
/// from zero), with a minus sign when `negative` (even if it rounds to zero, as Dolt prints it).
fn dec_text(m: i128, scale: u32, digits: u32, negative: bool) -> String {
    let neg = negative || m < 0;
    // |m| at min(scale, digits) fraction digits; zeros are appended for the rest.
    let (a, at) = if digits < scale {
        // Beyond 10^38 every i128 rounds to zero.
        let a = pow10(scale - digits).map_or(0, |p| div_round(m, p).unsigned_abs());
        (a, digits)
    } else {
        (m.unsigned_abs(), scale)
    };
    let mut t = a.to_string();
    let frac = at as usize;
    if t.len() <= frac {
        t.insert_str(0, &"0".repeat(frac + 1 - t.len()));
    }
    let (int, fraction) = t.split_at(t.len() - frac);
    let mut s = String::with_capacity(t.len() + 2 + (digits - at) as usize);
    if neg {
        s.push('-');
    }
    s.push_str(int);
    if digits > 0 {
        s.push('.');
        s.push_str(fraction);
        s.extend(std::iter::repeat_n('0', (digits - at) as usize));
    }
    s
}

fn json_of(v: Val) -> R<serde_json::Value> {
    match v {
        Val::Json(j) => Ok(j),
        Val::Text(s) => serde_json::from_str(&s).map_err(|e| format!("invalid JSON text: {e}")),
        other => Err(format!("not a JSON document: {}", text_of(&other))),
    }
}

/// Follows a simple JSON path (`$`, `.key`, `."key"`, `[n]`); `None` where nothing is there.
pub fn json_path<'a>(
    doc: &'a serde_json::Value,
    path: &str,
) -> std::result::Result<Option<&'a serde_json::Value>, String> {
    let bad = || format!("unsupported JSON path {path:?}");
    let mut rest = path.trim().strip_prefix('$').ok_or_else(bad)?;
    let mut at = doc;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(Some(at));
        }
        if let Some(r) = rest.strip_prefix('.') {
            let (key, after) = if let Some(q) = r.strip_prefix('"') {
                let end = q.find('"').ok_or_else(bad)?;
                (
                    q.get(..end).ok_or_else(bad)?.to_string(),
                    q.get(end + 1..).unwrap_or(""),
                )
            } else {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                let key = r.get(..end).unwrap_or("").trim();
                if key.is_empty() || key.contains('*') {
                    return Err(bad());
                }
                (key.to_string(), r.get(end..).unwrap_or(""))
            };
            match at.get(key.as_str()) {
                Some(v) if at.is_object() => at = v,
                _ => return Ok(None),
            }
            rest = after;
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(bad)?;
            let n: usize = r
                .get(..end)
                .unwrap_or("")
                .trim()
                .parse()
                .map_err(|_| bad())?;
            at = match at {
                serde_json::Value::Array(a) => match a.get(n) {
                    Some(v) => v,
                    None => return Ok(None),
                },
                // MySQL treats a non-array as a one-element array.
                other if n == 0 => other,
                _ => return Ok(None),
            };
            rest = r.get(end + 1..).unwrap_or("");
        } else {
            return Err(bad());
        }
    }
}

/// `JSON_UNQUOTE`: a JSON string's text without its quotes and escapes; other text as it is.
/// A quoted text JSON would refuse for a raw control character in it (a tab written as `\t`
/// in an SQL literal is one) is unquoted all the same, as MySQL and Dolt do.
pub fn json_unquote(s: &str) -> String {
    if let Ok(serde_json::Value::String(u)) = serde_json::from_str::<serde_json::Value>(s) {
        if s.starts_with('"') {
            return u;
        }
    }
    let Some(inner) = s.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(c) => out.push(c),
                    None => return s.to_string(),
                }
            }
            Some(c) => out.push(c),
            None => return s.to_string(),
        }
    }
    out
}

/// JSON text as Dolt prints a computed JSON value: `", "` and `": "` separators, object keys by
/// length then bytes, numbers as shortest plain decimals (whole numbers without a point).
pub fn json_text(v: &serde_json::Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

fn write_json(out: &mut String, v: &serde_json::Value) {
    use serde_json::Value as J;
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            // Dolt holds JSON numbers as float64; whole ones in int64 range print as integers.
            if f.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&f) {
                out.push_str(&(f as i64).to_string());
            } else {
                out.push_str(&f.to_string());
            }
        }
        J::String(s) => write_json_string(out, s),
        J::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, x);
            }
            out.push(']');
        }
        J::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_string(out, k);
                out.push_str(": ");
                if let Some(x) = o.get(k.as_str()) {
                    write_json(out, x);
                }
            }
            out.push('}');
        }
    }
}

fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u00{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// Conversion to the column's type.

fn to_column_type(v: Val, col: &Column) -> R<Option<SqlValue>> {
    if v == Val::Null {
        // Dolt shows a NULL result in a JSON column as JSON null.
        return Ok(matches!(col.sql_type, SqlType::Json).then(|| SqlValue::Json("null".into())));
    }
    let range = |what: &str| format!("{what} out of range for {}", col.sql_type_text);
    Ok(Some(match &col.sql_type {
        SqlType::Int { unsigned, .. } => {
            let i: i128 = match num_of(&v) {
                Num::Int(i) => i,
                Num::Dec(m, s) => div_round(m, pow10(s).ok_or_else(|| range("value"))?),
                Num::Double(d) => {
                    let r = d.round();
                    if !r.is_finite() || r.abs() > 1.9e19 {
                        return Err(range("value"));
                    }
                    r as i128
                }
            };
            let (lo, hi) = col.sql_type.int_range().ok_or_else(|| range("value"))?;
            if i < lo || i > hi {
                return Err(range("value"));
            }
            if *unsigned {
                SqlValue::Uint(i as u64)
            } else {
                SqlValue::Int(i as i64)
            }
        }
        SqlType::Year => SqlValue::Year(u16::try_from(to_i64(&v)).map_err(|_| range("year"))?),
        SqlType::Decimal { precision, scale } => {
            let (m, s, neg) = match (&v, num_of(&v)) {
                (Val::Dec(_, _, neg), Num::Dec(m, s)) => (m, s, *neg),
                (_, Num::Int(i)) => (i, 0, i < 0),
                (_, Num::Dec(m, s)) => (m, s, m < 0),
                (_, Num::Double(d)) => {
                    match parse_decimal(&format!("{d:.*}", usize::from(*scale) + 9)) {
                        Some(Val::Dec(m, s, _)) => (m, s, d < 0.0),
                        _ => return Err(range("value")),
                    }
                }
            };
            let text = dec_text(m, s, u32::from(*scale), neg);
            let int_digits = text
                .trim_start_matches('-')
                .split('.')
                .next()
                .map_or(0, |d| d.trim_start_matches('0').len());
            if int_digits > usize::from(precision.saturating_sub(*scale)) {
                return Err(range("value"));
            }
            SqlValue::Decimal(text)
        }
        SqlType::Double => SqlValue::Double(to_f64(&num_of(&v))),
        SqlType::Float => SqlValue::Float(to_f64(&num_of(&v)) as f32),
        SqlType::Text { .. } => SqlValue::Text(text_of(&v)),
        SqlType::Binary { fixed, .. } => {
            let mut b = text_of(&v).into_bytes();
            if let Some(n) = fixed {
                if b.len() < *n as usize {
                    b.resize(*n as usize, 0);
                }
            }
            SqlValue::Bytes(b)
        }
        SqlType::Json => SqlValue::Json(json_text(&match v {
            Val::Json(j) => j,
            Val::Text(s) => json_of(Val::Text(s))?,
            Val::Int(i) => serde_json::Value::from(i),
            Val::Uint(u) => serde_json::Value::from(u),
            other => serde_json::Value::from(to_f64(&num_of(&other))),
        })),
        other => return Err(format!("results of type {other:?} are not supported")),
    }))
}

// ---------------------------------------------------------------------------------------------
// Column defaults written as expressions, with the same expression forms.

/// What an expression default or a STORED generated column gives for one row.
#[derive(Clone, Debug)]
enum DefaultExpr {
    /// `CURRENT_TIMESTAMP`, `NOW()` and their synonyms, with or without a precision: the time
    /// of the write (UTC).
    Now,
    /// An expression of the row's visible columns.
    Expr(Node),
}

fn compile_default(text: &str, scope: &Scope) -> std::result::Result<DefaultExpr, String> {
    // `CURRENT_TIMESTAMP`, `(now())`, `current_timestamp(3)`: a time function with at most a
    // precision. Split on characters, never at byte offsets (the text comes from a schema).
    let lower = text.trim().to_ascii_lowercase();
    let inner = lower.trim_start_matches('(').trim_end_matches(')').trim();
    let (name, args) = inner.split_once('(').unwrap_or((inner, ""));
    if matches!(
        name.trim(),
        "current_timestamp" | "now" | "localtime" | "localtimestamp"
    ) && args.trim().chars().all(|c| c.is_ascii_digit())
    {
        return Ok(DefaultExpr::Now);
    }
    compile(&parse(text)?, scope).map(DefaultExpr::Expr)
}

/// The current UTC time as `dolt sql` prints a value of `column`'s type.
fn now_text(column: &Column) -> String {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let digits = match column.sql_type {
        SqlType::Datetime(d) | SqlType::Timestamp(d) => d,
        _ => 0,
    };
    let v = SqlValue::Datetime(
        micros - micros.rem_euclid(10i64.pow(6 - u32::from(digits.min(6)))),
        digits,
    );
    match column.sql_type {
        SqlType::Date => v.to_text().chars().take(10).collect(),
        _ => v.to_text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(expr: &str, row: &[Option<SqlValue>], names: &[&str]) -> Val {
        let ast = Parser::new(&MySqlDialect {})
            .try_with_sql(expr)
            .and_then(|mut p| p.parse_expr())
            .unwrap();
        eval(&compile(&ast, &Scope::plain(names)).unwrap(), row).unwrap()
    }

    #[test]
    fn time_defaults_are_recognised_and_odd_text_never_panics() {
        for t in [
            "CURRENT_TIMESTAMP",
            "CURRENT_TIMESTAMP(3)",
            "(now())",
            "NOW()",
            "localtime",
        ] {
            assert!(
                matches!(compile_default(t, &Scope::plain(&[])), Ok(DefaultExpr::Now)),
                "{t}"
            );
        }
        for t in ["( é)", "(é(", "((`id` + 3))", "now(x)", ""] {
            let _ = compile_default(t, &Scope::plain(&["id"]));
        }
        assert!(matches!(
            compile_default("((`id` + 3))", &Scope::plain(&["id"])),
            Ok(DefaultExpr::Expr(_))
        ));
    }

    /// IN, BETWEEN and IS TRUE/FALSE under MySQL's three-valued logic (a NULL compare makes
    /// IN NULL unless another item is equal; IS TRUE/FALSE is never NULL).
    #[test]
    fn in_between_and_truth_tests_follow_mysql() {
        let row = [Some(SqlValue::Int(2)), None];
        let names = ["a", "n"];
        for (expr, want) in [
            ("`a` IN (1, 2)", Val::Int(1)),
            ("`a` IN (1, 3)", Val::Int(0)),
            ("`a` IN (NULL, 2)", Val::Int(1)),
            ("`a` IN (NULL, 1)", Val::Null),
            ("`a` NOT IN (NULL, 1)", Val::Null),
            ("`a` NOT IN (1, 3)", Val::Int(1)),
            ("`n` IN (1, 2)", Val::Null),
            ("`a` BETWEEN 2 AND 3", Val::Int(1)),
            ("`a` BETWEEN 3 AND 1", Val::Int(0)),
            ("`a` NOT BETWEEN 3 AND 4", Val::Int(1)),
            ("`a` BETWEEN `n` AND 3", Val::Null),
            ("`a` BETWEEN `n` AND 1", Val::Int(0)),
            ("`n` IS TRUE", Val::Int(0)),
            ("`n` IS NOT FALSE", Val::Int(1)),
            ("`a` IS TRUE", Val::Int(1)),
            ("(`a` - 2) IS FALSE", Val::Int(1)),
            ("(`a` - 2) IS NOT TRUE", Val::Int(1)),
        ] {
            assert_eq!(run(expr, &row, &names), want, "{expr}");
        }
    }

    /// Text compares under the column's collation as Dolt compares it (expected values from
    /// `dolt sql` selects over a `utf8mb4_0900_ai_ci` column `nm` and a binary column `b`):
    /// `=`, `<` and BETWEEN use the column's collation over a literal's, IN compares bytes,
    /// and two columns of different collations compare bytes.
    #[test]
    fn text_compares_under_the_column_collation() {
        let ci = Collation::from_name("utf8mb4_0900_ai_ci").unwrap();
        let bin = Collation::from_name("utf8mb4_0900_bin").unwrap();
        let scope = Scope {
            names: vec!["nm", "b"],
            collations: vec![Some(ci), Some(bin)],
        };
        let at = |expr: &str, nm: &str, b: &str| {
            let ast = Parser::new(&MySqlDialect {})
                .try_with_sql(expr)
                .and_then(|mut p| p.parse_expr())
                .unwrap();
            let row = [
                Some(SqlValue::Text(nm.into())),
                Some(SqlValue::Text(b.into())),
            ];
            eval(&compile(&ast, &scope).unwrap(), &row).unwrap()
        };
        for (expr, nm, b, want) in [
            ("`nm` = 'abc'", "ABC", "abc", 1),
            ("`nm` = 'é'", "E", "x", 1),
            ("`b` = 'ABC'", "a", "abc", 0),
            ("concat(`nm`, '') = 'ABC'", "ABC", "abc", 1),
            ("lower(`b`) = 'abc'", "a", "ABC", 1),
            ("`nm` < 'B'", "a", "ABC", 1),
            ("`nm` < 'B'", "E", "x", 0),
            ("`nm` IN ('é', 'z')", "E", "x", 0),
            ("`nm` IN ('z', 'E')", "E", "x", 1),
            ("`nm` IN ('abc')", "ABC", "abc", 0),
            ("`nm` BETWEEN 'a' AND 'c'", "ABC", "abc", 1),
            ("'B' BETWEEN `nm` AND 'c'", "BAD", "x", 0),
            ("`nm` = `b`", "ABC", "abc", 0),
            ("`nm` < `b`", "ABC", "abc", 1),
            ("`b` < `nm`", "a", "ABC", 1),
            ("`nm` <> 'bad'", "BAD", "x", 0),
            ("CASE `nm` WHEN 'abc' THEN 1 ELSE 0 END", "ABC", "abc", 1),
            ("CASE 'abc' WHEN `nm` THEN 1 ELSE 0 END", "ABC", "abc", 1),
            ("NULLIF(`nm`, 'abc') IS NULL", "ABC", "abc", 1),
            ("NULLIF(`nm`, 'zz') = 'abc'", "ABC", "abc", 1),
            ("COALESCE(`nm`) = 'abc'", "ABC", "abc", 0),
            ("IFNULL(`nm`, 'x') = 'abc'", "ABC", "abc", 0),
            ("IF(1, `nm`, `b`) = 'abc'", "ABC", "abc", 1),
            ("SUBSTRING(`nm`, 1, 3) = 'abc'", "ABC", "abc", 1),
            ("UPPER(`nm`) = 'abc'", "ABC", "abc", 1),
            ("TRIM(`nm`) = 'abc'", "ABC", "abc", 1),
            ("CONCAT(`nm`, `b`) = 'abcabc'", "ABC", "abc", 0),
            ("CONCAT(`b`, `nm`) = 'ABCABC'", "ABC", "abc", 0),
            ("CASE WHEN 1 THEN `nm` END = 'abc'", "ABC", "abc", 0),
            ("`nm` LIKE 'a%'", "ABC", "abc", 1),
            ("`nm` LIKE '_B_'", "ABC", "abc", 1),
            ("`b` LIKE 'A%'", "a", "abc", 0),
            ("`b` LIKE 'A%'", "a", "ABC", 1),
            ("`nm` LIKE 'e'", "é", "x", 1),
            ("`nm` NOT LIKE 'b%'", "BAD", "x", 0),
            ("`b` LIKE `nm`", "ABC", "abc", 0),
            ("`b` LIKE '%'", "a", "", 1),
            ("`b` LIKE 'a%b%c'", "a", "axbyybzc", 1),
            ("`b` LIKE 'a%b%c'", "a", "axbyybz", 0),
            ("`b` LIKE '%%_'", "a", "", 0),
        ] {
            assert_eq!(
                at(expr, nm, b),
                Val::Int(want),
                "{expr} with nm={nm:?} b={b:?}"
            );
        }
    }

    #[test]
    fn arithmetic_follows_mysql() {
        let row = [Some(SqlValue::Int(1)), Some(SqlValue::Int(3))];
        let names = ["a", "b"];
        assert_eq!(run("(`a` / `b`)", &row, &names), Val::Dec(3333, 4, false));
        assert_eq!(run("(-`a` / 1000000)", &row, &names), Val::Dec(0, 4, true));
        assert_eq!(text_of(&run("(-`a` / 1000000)", &row, &names)), "-0.0000");
        assert_eq!(run("(`a` div `b`)", &row, &names), Val::Int(0));
        assert_eq!(run("(`a` / 0)", &row, &names), Val::Null);
        assert_eq!(run("' 3 ' + 1", &row, &names), Val::Double(4.0));
        assert_eq!(run("1.5 * 2.25", &row, &names), Val::Dec(3375, 3, false));
        assert_eq!(run("(`a` < 3) AND NULL", &row, &names), Val::Null);
        assert_eq!(run("(`a` > 3) AND NULL", &row, &names), Val::Int(0));
    }

    #[test]
    fn strings_and_json() {
        let row = [
            Some(SqlValue::Text("Ünïcode".into())),
            Some(SqlValue::Json(r#"{"x":[1,2],"name":"Ann"}"#.into())),
        ];
        let names = ["s", "j"];
        assert_eq!(
            run("SUBSTRING(`s`, 2, 3)", &row, &names),
            Val::Text("nïc".into())
        );
        assert_eq!(
            run("substring(`s`, -3)", &row, &names),
            Val::Text("ode".into())
        );
        assert_eq!(run("length(`s`)", &row, &names), Val::Int(9));
        assert_eq!(run("char_length(`s`)", &row, &names), Val::Int(7));
        assert_eq!(
            run("trim(both 'x' from 'xxaxx')", &row, &names),
            Val::Text("a".into())
        );
        assert_eq!(
            text_of(&run("json_extract(`j`, '$.x')", &row, &names)),
            "[1, 2]"
        );
        assert_eq!(
            run("json_unquote(json_extract(`j`, '$.name'))", &row, &names),
            Val::Text("Ann".into())
        );
        assert_eq!(run("`j`->>'$.name'", &row, &names), Val::Text("Ann".into()));
        assert_eq!(run("json_extract(`j`, '$.nope')", &row, &names), Val::Null);
        assert_eq!(upper("straße ᾳ"), "STRAßE ᾼ");
        assert_eq!(lower("İstanbul"), "istanbul");
        assert_eq!(text_of(&Val::Double(-1e-7)), "-0.0000001");
        assert_eq!(text_of(&Val::Double(2.5e15)), "2500000000000000");
        assert_eq!(dec_text(-5, 3, 2, true), "-0.01");
        assert_eq!(dec_text(-4, 3, 2, true), "-0.00");
        assert_eq!(dec_text(1234, 2, 4, false), "12.3400");
        assert_eq!(dec_text(7, 0, 0, false), "7");
        assert_eq!(dec_text(i128::MAX, 0, 60, false).len(), 39 + 61);
        assert_eq!(dec_text(i128::MAX, 80, 2, false), "0.00");
    }

    #[test]
    fn unsupported_forms_are_errors() {
        let ast = Parser::new(&MySqlDialect {})
            .try_with_sql("md5(`a`)")
            .and_then(|mut p| p.parse_expr())
            .unwrap();
        let e = compile(&ast, &Scope::plain(&["a"])).unwrap_err();
        assert!(e.contains("md5"), "{e}");
    }

    /// Expression text that parses: atoms combined by operators and functions.
    fn expr_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let atom = proptest::sample::select(ATOMS.to_vec()).prop_map(str::to_string);
        atom.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    proptest::sample::select(OPS.to_vec()),
                    inner.clone()
                )
                    .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
                (
                    proptest::sample::select(FUNCS.to_vec()),
                    proptest::collection::vec(inner.clone(), 1..4)
                )
                    .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, t, e)| format!("CASE WHEN {c} THEN {t} ELSE {e} END")),
                inner.clone().prop_map(|x| format!("-{x}")),
                inner.clone().prop_map(|x| format!("{x} IS NULL")),
                (inner.clone(), inner).prop_map(|(x, p)| format!("trim(leading {p} from {x})")),
            ]
        })
    }

    fn any_column(ty: &str) -> Column {
        Column {
            name: "c".into(),
            sql_type_text: ty.into(),
            sql_type: SqlType::parse(ty),
            encoding: prollystore_format::Encoding::Int64,
            tag: 0,
            primary_key: false,
            nullable: true,
            auto_increment: false,
            hidden: false,
            generated: true,
            virtual_: true,
            default_value: None,
            on_update: None,
            comment: None,
        }
    }

    proptest::proptest! {
        /// Any expression of the covered forms evaluates to a value or an error and converts
        /// to any column type without panicking, over rows of assorted values and NULLs.
        #[test]
        fn expressions_never_panic(
            text in expr_text(),
            a in proptest::option::of(proptest::num::i64::ANY),
            d in proptest::option::of("-?[0-9]{1,20}\\.[0-9]{0,30}"),
            x in proptest::option::of(proptest::num::f64::ANY),
            s in proptest::option::of("\\PC{0,8}"),
        ) {
            let row = [
                a.map(SqlValue::Int),
                d.map(SqlValue::Decimal),
                x.map(SqlValue::Double),
                s.clone().map(SqlValue::Text),
                s.map(SqlValue::Json),
            ];
            let names = ["a", "d", "x", "s", "j"];
            let ast = Parser::new(&MySqlDialect {})
                .try_with_sql(&text)
                .and_then(|mut p| p.parse_expr());
            let Ok(ast) = ast else {
                // Only nesting beyond the parser's depth limit is refused.
                return Ok(());
            };
            // Every form generated compiles, except functions given the wrong arity.
            let node = match compile(&ast, &Scope::plain(&names)) {
                Ok(node) => node,
                Err(e) => {
                    proptest::prop_assert!(e.contains("arguments"), "{text}: {e}");
                    return Ok(());
                }
            };
            if let Ok(v) = eval(&node, &row) {
                for ty in ["int", "bigint unsigned", "decimal(65,30)", "double", "varchar(10)",
                           "json", "float", "year", "decimal(5,2)", "tinyint"] {
                    let _ = to_column_type(v.clone(), &any_column(ty));
                }
            }
        }
    }

    const ATOMS: [&str; 16] = [
        "a",
        "d",
        "x",
        "s",
        "j",
        "1",
        "-1",
        "0",
        "2.5",
        "1e308",
        "9223372036854775807",
        "18446744073709551615",
        "0.000000000000000000000000000001",
        "'x'",
        "' 3 '",
        "NULL",
    ];
    const OPS: [&str; 16] = [
        "+", "-", "*", "/", "DIV", "%", "=", "<", ">=", "<=>", "AND", "OR", "XOR", "<>", "->",
        "->>",
    ];
    const FUNCS: [&str; 10] = [
        "concat",
        "coalesce",
        "lower",
        "upper",
        "length",
        "char_length",
        "json_extract",
        "substring",
        "ifnull",
        "if",
    ];
}
