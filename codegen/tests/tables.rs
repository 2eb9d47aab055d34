//! The runtime macros' tables as the generator writes them: one entry a line, gates, draws and
//! rules in place, types as Rust writes them.

use serde_json::json;

/// The generated file that declares `item` (`pub struct Limits`).
fn area(schema: serde_json::Value, item: &str) -> String {
    let options = msp_codegen::Options::new("tables.schema.json");
    let output =
        msp_codegen::generate(&schema.to_string(), &options).unwrap_or_else(|e| panic!("{e}"));
    let file = output.files.values().find(|text| text.contains(item));
    file.unwrap_or_else(|| panic!("{item} in none of {:?}", output.files.keys()))
        .clone()
}

/// The text from `start` to the end of the line `end` after it.
fn cut<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let at = text
        .find(start)
        .unwrap_or_else(|| panic!("{start} not in\n{text}"));
    let len = text[at..]
        .find(end)
        .unwrap_or_else(|| panic!("{end} not after {start}"))
        + end.len();
    &text[at..at + len]
}

#[test]
fn struct_tables_are_one_entry_a_line_with_gates_draws_and_rules() {
    let text = area(
        json!({"$defs": {"Limits": {"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^[a-z]{2,}$"},
            "step": {"type": "integer", "minimum": -5, "maximum": 100},
            "ratio": {"type": "number"},
            "note": {"type": ["string", "null"]},
            "at": {"type": ["string", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "fresh": {"type": "boolean", "x-msp-stability": "experimental"}
        }, "required": ["code", "at"], "dependentRequired": {"step": ["ratio"]}}}}),
        "pub struct Limits ",
    );
    assert_eq!(
        cut(&text, "crate::support::impl_serde!(", "\n);\n"),
        "crate::support::impl_serde!(
    Limits {
        nullable at = \"at\",
        required code = \"code\",
        #[cfg(feature = \"experimental\")] optional fresh = \"fresh\",
        tristate note = \"note\",
        optional ratio = \"ratio\",
        optional step = \"step\",
        optional tags = \"tags\",
    } unknown
);
"
    );
    assert_eq!(
        cut(
            &text,
            "#[cfg(feature = \"sample\")]\ncrate::sample::impl_sample!(",
            "\n);\n"
        ),
        "#[cfg(feature = \"sample\")]
crate::sample::impl_sample!(
    Limits {
        nullable at = \"at\",
        required code = \"code\" => matching(\"^[a-z]{2,}$\"),
        #[cfg(feature = \"experimental\")] optional fresh = \"fresh\",
        tristate note = \"note\",
        optional ratio = \"ratio\" => number(),
        optional step = \"step\" => integer(min -5f64 max 100f64),
        optional tags = \"tags\",
    } unknown; step needs ratio
);
"
    );
    assert_eq!(
        cut(&text, "crate::support::builder! {", "\n}\n"),
        "crate::support::builder! {
    Limits, LimitsBuilder, LimitsBuilderRest, unknown, \" A builder of [`Limits`]: set members by name; `build()` compiles once the required ones (`code`) are.\";
    required [
        T0 code code: String => String, \"code\", code;
    ]
    optional [
        nullable at at: String => String, \"at\";
        #[cfg(feature = \"experimental\")] optional fresh fresh: bool => bool, \"fresh\";
        tristate note note [note_null]: String => String, \"note\";
        optional ratio ratio: serde_json::Number => serde_json::Number, \"ratio\";
        optional step step: i64 => i64, \"step\";
        optional tags tags: Vec<String> => Vec<String>, \"tags\";
    ]
}
"
    );
}

#[test]
fn empty_tables_stay_on_one_line_and_enums_list_their_values() {
    let text = area(
        json!({"$defs": {
            "Nothing": {"type": "object", "properties": {}},
            "Mode": {"enum": ["on", "off \"quoted\""], "x-msp-stability": "experimental"}
        }}),
        "pub struct Nothing ",
    );
    assert!(
        text.contains("\ncrate::support::impl_serde!(Nothing {} unknown);\n"),
        "{text}"
    );
    assert!(
        text.contains("\n    Nothing, NothingBuilder, NothingBuilderRest, unknown, \" A builder of [`Nothing`]: set members by name, then `build()`.\";\n    required []\n    optional []\n}\n"),
        "{text}"
    );
    let text = area(
        json!({"$defs": {"Mode": {"enum": ["on", "off \"quoted\""], "x-msp-stability": "experimental"}}}),
        "pub enum Mode ",
    );
    assert!(
        text.contains("#[cfg(feature = \"experimental\")]\ncrate::support::impl_string_enum!(\n    Mode \"Mode\" {\n        On = \"on\",\n        OffQuoted = \"off \\\"quoted\\\"\",\n    } closed\n);\n"),
        "{text}"
    );
}
