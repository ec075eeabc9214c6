//! Dolt's three-way merge of one JSON document both sides of a merge changed (Dolt's
//! `MergeJSON` / `ThreeWayJsonDiffer`): when base, ours and theirs are all objects they merge
//! key by key, recursively: a key only one side changed takes that side's value, keys both
//! sides changed to the same value are kept, nested objects merge the same way, and anything
//! else both sides changed (a scalar or an array set to different values, a key deleted on one
//! side and changed on the other, a key added on both sides with different values) is a
//! conflict. When one of the three is not an object, the two sides must be equal.
//!
//! Documents are read as Dolt stores them (compact text, object keys in byte order); values
//! other than objects are kept as their stored text, so a merged document is spelled as Dolt
//! writes it (members in key byte order, no spaces).

/// A parsed document: objects down to their members, anything else as its stored text.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node<'a> {
    /// Members by key (the key's stored text, quotes included), in stored order.
    Object(Vec<(&'a str, Node<'a>)>),
    /// A string, number, literal or array as stored.
    Raw(&'a str),
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn skip_ws(&mut self) {
        let rest = &self.text.as_bytes()[self.at..];
        self.at += rest
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// A string starting at the cursor; returns its text with quotes.
    fn string(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        if bytes.get(start) != Some(&b'"') {
            return None;
        }
        let mut i = start + 1;
        loop {
            match bytes.get(i)? {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        self.at = i + 1;
        self.text.get(start..self.at)
    }

    fn value(&mut self) -> Option<Node<'a>> {
        self.skip_ws();
        match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                self.skip_ws();
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Some(Node::Object(members));
                }
                loop {
                    self.skip_ws();
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.at += 1;
                    let v = self.value()?;
                    members.push((key, v));
                    self.skip_ws();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Some(Node::Object(members));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(Node::Raw),
            b'[' => {
                let start = self.at;
                let bytes = self.text.as_bytes();
                let mut depth = 0usize;
                loop {
                    match *bytes.get(self.at)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'[' | b'{' => depth += 1,
                        b']' | b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return self.text.get(start..self.at).map(Node::Raw);
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                let start = self.at;
                let bytes = self.text.as_bytes();
                while bytes.get(self.at).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
                (self.at > start)
                    .then(|| self.text.get(start..self.at))
                    .flatten()
                    .map(Node::Raw)
            }
        }
    }
}

fn parse(text: &str) -> Option<Node<'_>> {
    let mut p = Parser { text, at: 0 };
    let v = p.value()?;
    p.skip_ws();
    (p.at == text.len()).then_some(v)
}

fn write(out: &mut String, n: &Node<'_>) {
    match n {
        Node::Raw(t) => out.push_str(t),
        Node::Object(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push(':');
                write(out, v);
            }
            out.push('}');
        }
    }
}

fn text_of(n: &Node<'_>) -> String {
    let mut s = String::new();
    write(&mut s, n);
    s
}

fn same(a: Option<&Node<'_>>, b: Option<&Node<'_>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => text_of(a) == text_of(b),
        _ => false,
    }
}

/// A member key's text without its quotes.
fn key_bytes(key: &str) -> &[u8] {
    key.as_bytes()
        .get(1..key.len().saturating_sub(1))
        .unwrap_or_default()
}

/// The merge of three documents, `None` on a conflict.
fn merge_nodes<'a>(base: &Node<'a>, ours: &Node<'a>, theirs: &Node<'a>) -> Option<Node<'a>> {
    let (Node::Object(b), Node::Object(o), Node::Object(t)) = (base, ours, theirs) else {
        return same(Some(ours), Some(theirs)).then(|| ours.clone());
    };
    let get = |m: &'_ [(&'a str, Node<'a>)], k: &str| -> Option<Node<'a>> {
        m.iter().find(|(key, _)| *key == k).map(|(_, v)| v.clone())
    };
    let mut keys: Vec<&'a str> = b.iter().chain(o).chain(t).map(|(k, _)| *k).collect();
    // Dolt keeps an object's members in the byte order of their keys.
    keys.sort_by(|x, y| key_bytes(x).cmp(key_bytes(y)));
    keys.dedup();
    let mut merged = Vec::with_capacity(keys.len());
    for k in keys {
        let (bv, ov, tv) = (get(b, k), get(o, k), get(t, k));
        let value = if same(tv.as_ref(), bv.as_ref()) {
            ov
        } else if same(ov.as_ref(), bv.as_ref()) {
            tv
        } else {
            match (&bv, &ov, &tv) {
                (None, Some(o), Some(t)) => Some(same(Some(o), Some(t)).then(|| o.clone())?),
                (_, None, None) => None,
                (Some(b), Some(o), Some(t)) => Some(merge_nodes(b, o, t)?),
                _ => return None,
            }
        };
        if let Some(v) = value {
            merged.push((k, v));
        }
    }
    Some(Node::Object(merged))
}

/// Dolt's merge of JSON documents `base`, `ours`, `theirs` (stored text): the merged
/// document's text, or `None` when Dolt reports a conflict (or a document does not parse).
pub(crate) fn merge_json(base: &str, ours: &str, theirs: &str) -> Option<String> {
    let (b, o, t) = (parse(base)?, parse(ours)?, parse(theirs)?);
    merge_nodes(&b, &o, &t).map(|n| text_of(&n))
}

#[cfg(test)]
mod tests {
    use super::merge_json;

    /// The cases Dolt 2.3.1 merged (and refused) in a session with `dolt merge`, the merged
    /// text as `dolt sql` printed it.
    #[test]
    fn merges_as_dolt_merged() {
        let base = r#"{"a":1,"b":{"x":1,"y":2},"c":[1,2],"zz":1.5}"#;
        let ours = r#"{"a":2,"b":{"x":5,"y":2},"c":[1,2],"zz":1.5}"#;
        let theirs = r#"{"a":1,"b":{"x":1,"y":3},"bb":true,"zz":1.5}"#;
        assert_eq!(
            merge_json(base, ours, theirs).as_deref(),
            Some(r#"{"a":2,"b":{"x":5,"y":3},"bb":true,"zz":1.5}"#)
        );
        assert_eq!(
            merge_json(
                r#"{"a":1}"#,
                r#"{"a":1,"ccc":1}"#,
                r#"{"a":1,"aaaa":{"q":1},"b":1}"#
            )
            .as_deref(),
            Some(r#"{"a":1,"aaaa":{"q":1},"b":1,"ccc":1}"#)
        );
        // Conflicts: a scalar, an array, both changed differently.
        assert_eq!(merge_json(r#"{"k":1}"#, r#"{"k":2}"#, r#"{"k":3}"#), None);
        assert_eq!(
            merge_json(r#"{"a":[1,2]}"#, r#"{"a":[1,3]}"#, r#"{"a":[2,2]}"#),
            None
        );
        // Not objects: equal sides merge, others conflict.
        assert_eq!(
            merge_json("[1]", "[1,2]", "[1,2]").as_deref(),
            Some("[1,2]")
        );
        assert_eq!(merge_json("[1]", "[2]", "[3]"), None);
        // Deleted on one side, changed on the other.
        assert_eq!(merge_json(r#"{"a":1}"#, r#"{}"#, r#"{"a":2}"#), None);
        // Bad input never panics.
        for bad in ["{", "{\"a\"", "[", "\"", "{\"a\":}", "", "{\"a\":1,}"] {
            let _ = merge_json(bad, "{}", "{}");
        }
    }
}
