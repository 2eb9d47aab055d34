//! The generator's error: what is wrong, where (file, JSON pointer, line), and what to do.

use std::fmt;

/// A schema the generator cannot turn into Rust, or output it cannot write.
///
/// Boxed, so that `Result<_, Error>` stays small on the generator's many paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorInfo>);

/// The details of an [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    /// What kind of problem this is.
    pub kind: ErrorKind,
    /// The schema file (or output path) the problem is in.
    pub file: String,
    /// JSON pointer of the offending node, when the problem is in the schema.
    pub pointer: Option<String>,
    /// 1-based line (and column) in `file`, when known.
    pub line: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

/// The broad class of an [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file is not JSON.
    Json,
    /// A `$ref` points nowhere, or refs form a cycle with no type in it.
    Reference,
    /// A keyword the generator does not know sits where it would change the types.
    UnknownKeyword,
    /// A shape the generator cannot map to Rust.
    Unsupported,
    /// Reading or writing files failed.
    Io,
}

impl std::ops::Deref for Error {
    type Target = ErrorInfo;

    fn deref(&self) -> &ErrorInfo {
        &self.0
    }
}

impl std::ops::DerefMut for Error {
    fn deref_mut(&mut self) -> &mut ErrorInfo {
        &mut self.0
    }
}

impl From<ErrorInfo> for Error {
    fn from(info: ErrorInfo) -> Self {
        Error(Box::new(info))
    }
}

impl Error {
    pub(crate) fn at(kind: ErrorKind, pointer: &str, message: impl Into<String>) -> Self {
        Error::from(ErrorInfo {
            kind,
            file: String::new(),
            pointer: Some(pointer.to_owned()),
            line: None,
            message: message.into(),
            help: None,
        })
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// A file that could not be read or written.
    pub fn io(file: &str, err: &std::io::Error) -> Self {
        Error::from(ErrorInfo {
            kind: ErrorKind::Io,
            file: file.to_owned(),
            pointer: None,
            line: None,
            message: err.to_string(),
            help: None,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        write!(f, "  --> {}", self.file)?;
        if let Some((line, column)) = self.line {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(pointer) = &self.pointer {
            let shown = if pointer.is_empty() { "#" } else { pointer };
            write!(f, " at {shown}")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
