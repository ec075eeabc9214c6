//! Dolt's `AS OF` on a table (`SELECT … FROM t AS OF 'main~1'`), which DataFusion's SQL
//! parser does not know, written as the state's schema (`` FROM `main~1`.t ``) before the
//! query is parsed. The rewrite works on the SQL tokenizer's tokens, so string literals,
//! quoted names and comments that contain `AS OF` are left alone.

use datafusion::sql::sqlparser::dialect::MySqlDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer, Word};

use crate::error::{Error, Result};

/// `sql` with every `name AS OF 'state'` (or `AS OF state`) written `` `state`.name ``.
///
/// ```
/// use prollystore_query::as_of::rewrite;
/// assert_eq!(
///     rewrite("SELECT * FROM t AS OF 'main~1' WHERE x = 'AS OF y'").unwrap(),
///     "SELECT * FROM `main~1`.t WHERE x = 'AS OF y'"
/// );
/// ```
pub fn rewrite(sql: &str) -> Result<String> {
    if !sql.to_ascii_uppercase().contains("OF") {
        return Ok(sql.to_string());
    }
    let tokens = Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize()
        .map_err(|e| {
            Error::DataFusion(datafusion::error::DataFusionError::SQL(
                Box::new(e.into()),
                None,
            ))
        })?;
    let significant =
        |from: usize| (from..tokens.len()).find(|&i| !matches!(tokens[i], Token::Whitespace(_)));
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    let mut changed = false;
    while i < tokens.len() {
        let as_of = match &tokens[i] {
            Token::Word(w) if w.keyword == Keyword::AS && w.quote_style.is_none() => {
                significant(i + 1).and_then(|of| match &tokens[of] {
                    Token::Word(w) if w.keyword == Keyword::OF && w.quote_style.is_none() => {
                        significant(of + 1).map(|s| (s, &tokens[s]))
                    }
                    _ => None,
                })
            }
            _ => None,
        };
        let Some((state_at, state)) = as_of else {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        };
        let state = match state {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s.clone(),
            Token::Word(w) => w.value.clone(),
            other => {
                return Err(Error::Unsupported(format!(
                    "AS OF takes a branch, tag, commit or other state as a string ('main~1'), not {other}"
                )))
            }
        };
        if state.contains('`') {
            return Err(Error::Unsupported(format!(
                "AS OF {state:?}: a state name with a backtick"
            )));
        }
        // The table name is the last significant token before AS.
        while matches!(out.last(), Some(Token::Whitespace(_))) {
            out.pop();
        }
        let Some(Token::Word(table)) = out.pop() else {
            return Err(Error::Unsupported(
                "AS OF must follow a table name (FROM t AS OF 'main~1')".into(),
            ));
        };
        if matches!(out.last(), Some(Token::Period)) {
            return Err(Error::Unsupported(format!(
                "AS OF on a qualified name (…{}); name the state alone: FROM {} AS OF '{state}'",
                table, table
            )));
        }
        out.push(Token::Word(Word {
            value: state,
            quote_style: Some('`'),
            keyword: Keyword::NoKeyword,
        }));
        out.push(Token::Period);
        out.push(Token::Word(table));
        i = state_at + 1;
        changed = true;
    }
    if !changed {
        return Ok(sql.to_string());
    }
    Ok(out.iter().map(ToString::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn as_of_becomes_a_schema() {
        assert_eq!(
            rewrite("select a from t as of 'v1' join u AS OF `feat` on t.a = u.a").unwrap(),
            "select a from `v1`.t join `feat`.u on t.a = u.a"
        );
        assert_eq!(rewrite("select 'as of x'").unwrap(), "select 'as of x'");
        assert!(rewrite("select * from db.t as of 'x'").is_err());
        assert!(rewrite("select * from t as of 1").is_err());
    }
}
