//! A built-in tool's JSON schema, made from its parameters: the tree HTTP backends send as
//! the tool's definition, and the compact text a CLI backend's prompt shows. The text is
//! serialised straight from the parameters, not printed from a tree made for it: a run on an
//! agent CLI needs only the text, and making the tree was most of the cost of a start.

use serde::{Serialize, Serializer};
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

/// The same schema as compact JSON text, written from the parameters by serde without the
/// tree: keys in the order the tree has them in the binary (a crate there turns on
/// serde_json's `preserve_order`).
pub(super) fn text(params: &[Param]) -> String {
    let schema = Schema {
        properties: Properties(params),
        kind: "object",
        required: required(params).collect(),
    };
    serde_json::to_string(&schema).expect("a schema is written to memory")
}

#[derive(Serialize)]
struct Schema<'a> {
    properties: Properties<'a>,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    required: Vec<&'static str>,
}

/// The parameters as the schema's `properties` object, in their order.
struct Properties<'a>(&'a [Param]);

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Property {
            description: &'static str,
            #[serde(rename = "type")]
            kind: &'static str,
        }
        serializer.collect_map(self.0.iter().map(|p| {
            let property = Property {
                description: p.description,
                kind: p.kind,
            };
            (p.name, property)
        }))
    }
}

/// The names of the required parameters, in order.
fn required(params: &[Param]) -> impl Iterator<Item = &'static str> + '_ {
    params.iter().filter(|p| p.required).map(|p| p.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text is the tree, whichever key order serde_json gives the tree in this build:
    /// parameters out of name order, optional ones among the required, text to escape.
    #[test]
    fn the_text_is_the_tree() {
        let params = [
            Param::required("zeta", "string", "A \"quoted\"\nline\tand \u{1} and é."),
            Param::optional("alpha", "integer", "Optional."),
            Param::required("mid", "boolean", "Back\\slash."),
        ];
        for params in [&params[..], &params[1..2], &[]] {
            let parsed: Value = serde_json::from_str(&text(params)).unwrap();
            assert_eq!(parsed, tree(params));
        }
        let text = text(&params);
        assert!(text.starts_with(r#"{"properties":{"zeta":{"description":"A \"quoted\"\nline\tand \u0001 and é.","type":"string"},"alpha""#), "{text}");
        assert!(
            text.ends_with(r#""type":"object","required":["zeta","mid"]}"#),
            "{text}"
        );
    }
}
