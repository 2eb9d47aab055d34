//! Generates typed Rust for the Muse Session Protocol from its JSON Schema.
//!
//! The pipeline, one folder a stage: [`schema`] (text to JSON, inline types hoisted, `$ref`s
//! and keywords checked), [`model`] (the checked model: built, named, fingerprinted),
//! [`emit`] (tokens), [`render`] (formatted source, written only-if-changed and atomically).
//! The schema dialect it reads is documented in [`dialect`].
//!
//! ```
//! // A schema of one definition, generated in memory: file name -> formatted source.
//! let schema = r#"{"$defs": {"Greeting": {"type": "object", "description": "A greeting.",
//!     "properties": {"text": {"type": "string", "description": "What is said."}},
//!     "required": ["text"]}}}"#;
//! let output = msp_codegen::generate(schema, &msp_codegen::Options::new("demo.schema.json"))?;
//! let source: String = output.files.values().cloned().collect();
//! assert!(source.contains("pub struct Greeting"));
//! assert!(source.contains("/// What is said."));
//! // A keyword it cannot map is an error naming the JSON pointer; nothing is written.
//! let bad = schema.replace(r#""type": "string""#, r#""allOf": []"#);
//! let Err(error) = msp_codegen::generate(&bad, &msp_codegen::Options::new("demo.schema.json"))
//! else {
//!     panic!("allOf is refused")
//! };
//! assert!(error.to_string().contains("/$defs/Greeting/properties/text"), "{error}");
//! # Ok::<(), msp_codegen::Error>(())
//! ```

#[doc = include_str!("../dialect.md")]
pub mod dialect {}
pub mod emit;
pub mod error;
pub mod model;
pub mod render;
pub mod schema;

#[path = "../runtime/pattern.rs"]
pub mod pattern;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use error::{Error, ErrorKind};
pub use model::Model;
pub use render::write::{write, WriteReport};

/// How to generate.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// The schema's path as shown in errors and in the generated header.
    pub schema_path: String,
    /// Markdown added to the crate docs of the output (usage examples, which become doc tests).
    pub crate_doc: Option<String>,
    /// The command the generated header tells readers to run to regenerate; by default
    /// `msp-codegen generate SCHEMA --out <DIR>`.
    pub command: Option<String>,
    /// The protocol's name in the crate docs; by default the schema's `title`.
    pub protocol: Option<String>,
    /// The path doc tests reach the output by (`my_crate`, or `my_crate::protocol`); without
    /// it the generator's examples are shown but not run.
    pub crate_path: Option<String>,
    /// Module output: the output's path inside the crate that holds it (`crate::protocol`);
    /// its root file is then `mod.rs`. `None`: the output is a whole crate (`lib.rs`).
    pub module: Option<String>,
}

impl Options {
    /// Options for the schema shown as `schema_path`, with no crate docs of its own.
    pub fn new(schema_path: impl Into<String>) -> Self {
        Options {
            schema_path: schema_path.into(),
            crate_doc: None,
            command: None,
            protocol: None,
            crate_path: None,
            module: None,
        }
    }

    /// Generates a module at `path` (`crate::protocol`) of a bigger crate instead of a crate.
    pub fn module(mut self, path: impl Into<String>) -> Self {
        self.module = Some(path.into());
        self
    }

    /// Sets the path doc tests reach the output by.
    pub fn crate_path(mut self, path: impl Into<String>) -> Self {
        self.crate_path = Some(path.into());
        self
    }

    /// Sets the protocol's name for the crate docs.
    pub fn protocol(mut self, name: impl Into<String>) -> Self {
        self.protocol = Some(name.into());
        self
    }

    /// Adds Markdown to the crate docs.
    pub fn crate_doc(mut self, markdown: impl Into<String>) -> Self {
        self.crate_doc = Some(markdown.into());
        self
    }

    /// Sets the regenerate command shown in each file's header.
    pub fn command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// How this project generates `msp-types`: its schema, its crate docs, its command.
    pub fn project() -> Self {
        Options::new(PROJECT_SCHEMA_PATH)
            .protocol("Muse Session Protocol")
            .crate_path("msp_types")
            .crate_doc(PROJECT_CRATE_DOC)
            .command("cargo run -p msp-codegen -- generate")
    }
}

/// The project's schema, embedded (`codegen/msp.schema.json` links to the workspace's
/// `schema/msp.schema.json`, so that the packaged crate carries it).
pub const PROJECT_SCHEMA: &str = include_str!("../msp.schema.json");
/// Where the project's schema lives in its repository.
pub const PROJECT_SCHEMA_PATH: &str = "schema/msp.schema.json";
/// The crate docs of `msp-types` (`codegen/msp-types.md` links to `docs/msp-types.md`).
pub const PROJECT_CRATE_DOC: &str = include_str!("../msp-types.md");

/// Generated files by name, and the model they came from.
pub struct Output {
    /// File name (relative to the output folder) to source text.
    pub files: BTreeMap<String, String>,
    /// The checked model.
    pub model: Model,
}

/// Schema text in, generated files out.
pub fn generate(schema_text: &str, options: &Options) -> Result<Output, Error> {
    let located = |mut e: Error| {
        e.file = options.schema_path.clone();
        if e.line.is_none() {
            e.line = e
                .pointer
                .as_deref()
                .and_then(|p| schema::load::locate(schema_text, p));
        }
        e
    };
    let doc = schema::load::parse(schema_text).map_err(located)?;
    let model = model::build_document(&doc).map_err(located)?;
    let command = match &options.command {
        Some(command) => command.clone(),
        None => format!("msp-codegen generate {} --out <DIR>", options.schema_path),
    };
    let header = format!(
        "Generated by msp-codegen from {}; do not edit. Regenerate: {command}",
        options.schema_path
    );
    let files = render(&model, &header, options)?;
    Ok(Output { files, model })
}

/// Emits and formats every file, the largest first, on up to one thread per core. Formatting
/// dominates generation and files are independent, so this divides the wall time.
fn render(
    model: &Model,
    header: &str,
    options: &Options,
) -> Result<BTreeMap<String, String>, Error> {
    let protocol = options.protocol.as_deref().or(model.title.as_deref());
    let mut jobs = emit::jobs(model);
    jobs.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.path.cmp(&b.path)));
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let work = || -> Result<Vec<(String, String)>, Error> {
        let emitter = emit::Emitter::new(model)
            .protocol(protocol)
            .crate_doc(options.crate_doc.as_deref())
            .module(options.module.is_some());
        let mut done = Vec::new();
        loop {
            let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) else {
                return Ok(done);
            };
            let text = match emitter.unit(job) {
                emit::Unit::Code(code) => render::format::format(code, header, &job.path)?,
                emit::Unit::Verbatim(text) => format!("// {header}\n\n{text}"),
                emit::Unit::Text(text) => format!("// {header}\n\n{text}"),
            };
            // The generator's own examples name the crate they run in (the crate docs are the
            // caller's own text).
            let text = match job.path.as_str() {
                "lib.rs" => text,
                _ => emit::docs::examples(&text, options.crate_path.as_deref()),
            };
            let (path, text) = match &options.module {
                None => (job.path.clone(), text),
                Some(root) => (
                    match job.path.as_str() {
                        "lib.rs" => "mod.rs".to_owned(),
                        other => other.to_owned(),
                    },
                    mount(&text, root),
                ),
            };
            done.push((path, text));
        }
    };
    let parts: Vec<Result<Vec<(String, String)>, Error>> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut parts = vec![work()];
        parts.extend(helpers.into_iter().map(|h| match h.join() {
            Ok(part) => part,
            Err(panic) => std::panic::resume_unwind(panic),
        }));
        parts
    });
    let mut files = BTreeMap::new();
    for part in parts {
        files.extend(part?);
    }
    Ok(files)
}

/// `text` for a module at `root` (`crate::protocol`): every path the output writes starts at
/// `crate::` (or `$crate::`), and is moved under `root`; comments (the header, descriptions,
/// examples) are left as written.
fn mount(text: &str, root: &str) -> String {
    let root = format!("{}::", root.trim_end_matches("::"));
    text.split_inclusive('\n')
        .map(|line| match line.trim_start().starts_with("//") {
            true => std::borrow::Cow::Borrowed(line),
            false => std::borrow::Cow::Owned(line.replace("crate::", &root)),
        })
        .collect()
}

/// Reads the schema at `schema_path` and generates from it.
pub fn generate_file(schema_path: &std::path::Path, shown_as: &str) -> Result<Output, Error> {
    let text = std::fs::read_to_string(schema_path).map_err(|e| Error::io(shown_as, &e))?;
    generate(&text, &Options::new(shown_as))
}
