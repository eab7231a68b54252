//! A built-in tool's JSON schema, made from its parameters: the tree HTTP backends send as
//! the tool's definition, and the compact text a CLI backend's prompt shows. The text is
//! written straight from the parameters, not printed from a tree made for it: a run on an
//! agent CLI needs only the text, and making the tree was most of the cost of a start.

use std::sync::OnceLock;

use serde_json::Value;

use super::Param;

/// The JSON schema of an arguments object with these parameters.
pub(super) fn tree(params: &[Param]) -> Value {
    let properties: serde_json::Map<String, Value> = params
        .iter()
        .map(|p| {
            let property = serde_json::json!({"description": p.description, "type": p.kind});
            (p.name.to_string(), property)
        })
        .collect();
    let mut schema = serde_json::json!({"properties": properties, "type": "object"});
    let required: Vec<&str> = required(params).collect();
    if !required.is_empty() {
        schema["required"] = serde_json::json!(required);
    }
    schema
}

/// What serde_json prints of [`tree`]`(params)`, byte for byte.
pub(super) fn text(params: &[Param]) -> String {
    // serde_json prints an object's keys as they were put in when its `preserve_order` is on
    // (the ACP SDK turns it on in the binary), else sorted.
    let in_order = keeps_order();
    let mut properties: Vec<&Param> = params.iter().collect();
    if !in_order {
        properties.sort_by_key(|p| p.name);
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"{\"properties\":{");
    for (i, p) in properties.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(&mut out, p.name);
        out.extend_from_slice(b":{\"description\":");
        string(&mut out, p.description);
        out.extend_from_slice(b",\"type\":");
        string(&mut out, p.kind);
        out.push(b'}');
    }
    out.push(b'}');
    let required: Vec<&str> = required(params).collect();
    let write_required = |out: &mut Vec<u8>| {
        if required.is_empty() {
            return;
        }
        out.extend_from_slice(b",\"required\":[");
        for (i, name) in required.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            string(out, name);
        }
        out.push(b']');
    };
    if in_order {
        out.extend_from_slice(b",\"type\":\"object\"");
        write_required(&mut out);
    } else {
        write_required(&mut out);
        out.extend_from_slice(b",\"type\":\"object\"");
    }
    out.push(b'}');
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// The names of the required parameters, in order.
fn required(params: &[Param]) -> impl Iterator<Item = &'static str> + '_ {
    params.iter().filter(|p| p.required).map(|p| p.name)
}

/// `value` as a JSON string, escaped as serde_json escapes it.
fn string(out: &mut Vec<u8>, value: &str) {
    serde_json::to_writer(&mut *out, value).expect("a string is written to memory");
}

/// Whether serde_json keeps an object's keys in the order they were put in (its
/// `preserve_order` feature, which a crate elsewhere in the build may turn on).
fn keeps_order() -> bool {
    static KEEPS: OnceLock<bool> = OnceLock::new();
    *KEEPS.get_or_init(|| {
        let mut map = serde_json::Map::new();
        map.insert("b".into(), Value::Null);
        map.insert("a".into(), Value::Null);
        map.keys().next().is_some_and(|key| key == "b")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text is what serde_json prints of the tree, whichever key order the build gives
    /// it: parameters out of name order, optional ones among the required, text to escape.
    #[test]
    fn the_text_is_the_trees() {
        let params = [
            Param::required("zeta", "string", "A \"quoted\"\nline\tand \u{1} and é."),
            Param::optional("alpha", "integer", "Optional."),
            Param::required("mid", "boolean", "Back\\slash."),
        ];
        for params in [&params[..], &params[1..2], &[]] {
            assert_eq!(text(params), tree(params).to_string());
        }
    }
}
