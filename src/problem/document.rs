//! The problem file as a TOML document with spans, so that every error names the file, the
//! key as a dotted path (`optimizer.solver`, `cost#2.target`: array entries are counted
//! from 1, as `#2`) and its line, and says what would be valid.
//!
//! Tagged tables (`[system]`, each `[[cost]]`) are written `kind = "x"` with the kind's
//! settings beside it. Before serde reads them they are rewritten as `{ x = { settings } }`,
//! so that the kind is serde's variant tag and the settings are read straight from the
//! document: an internally tagged serde enum would buffer its content and lose the line
//! of an error inside it.

use crate::error::Error;
use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// One step of a key path: a table key or an array entry (counted from 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Entry(usize),
}

/// A key step.
pub fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// The path as messages write it: `cost#2.target`.
pub fn render(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Entry(i) => s.push_str(&format!("#{}", i + 1)),
        }
    }
    s
}

/// Where a tagged table sits: a table at a top-level key, or every entry of an array.
#[derive(Debug, Clone, Copy)]
pub enum Tagged {
    Table(&'static str),
    Entries(&'static str),
}

/// A parsed problem file.
pub struct Document<'a> {
    pub text: &'a str,
    pub file: PathBuf,
    root: Spanned<DeTable<'a>>,
}

impl<'a> Document<'a> {
    /// Parses the TOML syntax (an error gives its line).
    pub fn parse(text: &'a str, file: &Path) -> Result<Document<'a>, Error> {
        let empty = Document {
            text,
            file: file.to_path_buf(),
            root: Spanned::new(0..0, DeTable::new()),
        };
        let root = DeTable::parse(text).map_err(|e| empty.toml_error(&e))?;
        Ok(Document { root, ..empty })
    }

    /// Reads the document into `T`, the tables at `tagged` retagged for serde; each place
    /// comes with its valid kinds, listed when a table there has no `kind`.
    pub fn read<T: DeserializeOwned>(&self, tagged: &[(Tagged, &[&str])]) -> Result<T, Error> {
        let mut root = self.root.clone();
        for (place, kinds) in tagged {
            match *place {
                Tagged::Table(k) => {
                    if let Some(v) = root.get_mut().get_mut(k) {
                        self.retag(v, &[key(k)], kinds)?;
                    }
                }
                Tagged::Entries(k) => {
                    if let Some(v) = root.get_mut().get_mut(k) {
                        if let DeValue::Array(a) = v.get_mut() {
                            for (i, e) in a.iter_mut().enumerate() {
                                self.retag(e, &[key(k), Seg::Entry(i)], kinds)?;
                            }
                        }
                    }
                }
            }
        }
        T::deserialize(toml::de::Deserializer::from(root)).map_err(|e| self.toml_error(&e))
    }

    /// `kind = "x"` and the settings → `{ x = { settings } }` (the key `x` carries the span
    /// of the kind's value, so that an unknown kind is reported at it).
    fn retag(
        &self, v: &mut Spanned<DeValue<'a>>, path: &[Seg], kinds: &[&str],
    ) -> Result<(), Error> {
        let span = v.span();
        let DeValue::Table(t) = v.get_mut() else {
            return Ok(()); // not a table: serde reports the type
        };
        let name = match t.remove("kind") {
            Some(kind) => match kind.get_ref() {
                DeValue::String(s) => Spanned::new(kind.span(), s.clone()),
                _ => {
                    let mut p = path.to_vec();
                    p.push(key("kind"));
                    return Err(self.error(
                        &p,
                        format!("must be a string; valid kinds: {}", kinds.join(", ")),
                    ));
                }
            },
            None => {
                return Err(self.error(
                    path,
                    format!("needs `kind`; valid kinds: {}", kinds.join(", ")),
                ))
            }
        };
        let rest = std::mem::take(t);
        let mut outer = DeTable::new();
        outer.insert(name, Spanned::new(span.clone(), DeValue::Table(rest)));
        *v = Spanned::new(span, DeValue::Table(outer));
        Ok(())
    }

    /// The error `message` about the key at `path`, with its line.
    pub fn error(&self, path: &[Seg], message: impl Display) -> Error {
        let line = self
            .line(path)
            .map_or(String::new(), |l| format!(" (line {l})"));
        let place = render(path);
        let message = if place.is_empty() {
            format!("{message}{line}")
        } else {
            format!("{place}: {message}{line}")
        };
        self.problem(message)
    }

    /// An error about the file as a whole.
    pub fn problem(&self, message: String) -> Error {
        Error::Problem {
            file: self.file.clone(),
            message,
        }
    }

    /// The line of the key at `path` (of its deepest part that exists).
    pub fn line(&self, path: &[Seg]) -> Option<usize> {
        let mut span = None;
        let mut here: Option<&Spanned<DeValue<'a>>> = None;
        for (i, seg) in path.iter().enumerate() {
            let next = match (i, seg, here.map(|v| v.get_ref())) {
                (0, Seg::Key(k), _) => self.root.get_ref().get_key_value(k.as_str()),
                (_, Seg::Key(k), Some(DeValue::Table(t))) => t.get_key_value(k.as_str()),
                (_, Seg::Entry(j), Some(DeValue::Array(a))) => {
                    if let Some(e) = a.get(*j) {
                        span = Some(e.span());
                        here = Some(e);
                    }
                    continue;
                }
                _ => None,
            };
            let Some((k, v)) = next else { break };
            span = Some(k.span());
            here = Some(v);
        }
        span.map(|s| self.line_at(s.start))
    }

    /// The 1-based line of byte `offset`.
    fn line_at(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        1 + self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    }

    /// The line of the first occurrence of `key` as a TOML key in the text (for messages
    /// of readers that name a key but not its table).
    pub fn line_of_text(&self, key: &str) -> Option<usize> {
        let text = self.text;
        text.lines()
            .position(|l| {
                let t = l.trim_start();
                t.starts_with(key) && t[key.len()..].trim_start().starts_with(['=', '.', ' '])
            })
            .map(|i| i + 1)
            .or_else(|| text.lines().position(|l| l.contains(key)).map(|i| i + 1))
    }

    /// A TOML or serde error: its key path (found from its span), what would be valid and
    /// its line.
    fn toml_error(&self, e: &toml::de::Error) -> Error {
        let Some(span) = e.span() else {
            return self.problem(e.message().to_string());
        };
        let line = self.line_at(span.start);
        let mut path = Vec::new();
        find(self.root.get_ref(), &span, &mut path);
        let place = render(&path);
        let msg = e.message().trim_end();
        let said = match unknown_variant(msg) {
            Some((value, valid)) if path.last() == Some(&key("kind")) => {
                let what = match path.first() {
                    Some(Seg::Key(t)) => format!("{t} "),
                    _ => String::new(),
                };
                format!("{place}: unknown {what}kind \"{value}\"; valid kinds: {valid}")
            }
            Some((value, valid)) => format!("{place} = \"{value}\" is unknown; valid: {valid}"),
            None if place.is_empty() => msg.to_string(),
            None => format!("{place}: {msg}"),
        };
        self.problem(format!("{said} (line {line})"))
    }
}

/// serde's "unknown variant `x`, expected `a` or `b`" as (`x`, "a, b").
fn unknown_variant(msg: &str) -> Option<(String, String)> {
    let rest = msg.strip_prefix("unknown variant `")?;
    let (value, expected) = rest.split_once('`')?;
    let valid: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    Some((value.to_string(), valid.join(", ")))
}

/// Whether `inner` lies within `outer`.
fn within(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// The path to the deepest key or value of `table` at `span`; false if there is none.
fn find(table: &DeTable<'_>, span: &Range<usize>, path: &mut Vec<Seg>) -> bool {
    for (k, v) in table.iter() {
        path.push(Seg::Key(k.get_ref().to_string()));
        if k.span() == *span || find_in(v, span, path) {
            return true;
        }
        path.pop();
    }
    false
}

fn find_in(v: &Spanned<DeValue<'_>>, span: &Range<usize>, path: &mut Vec<Seg>) -> bool {
    match v.get_ref() {
        DeValue::Table(t) if find(t, span, path) => return true,
        DeValue::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                path.push(Seg::Entry(i));
                if find_in(e, span, path) {
                    return true;
                }
                path.pop();
            }
        }
        _ => {}
    }
    within(&v.span(), span)
}

/// The names of an enum's variants as serde knows them (the names a file uses).
pub fn variants<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Probe(Option<&'static [&'static str]>);
    impl<'de> serde::Deserializer<'de> for &mut Probe {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self, _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("not an enum"))
        }
        fn deserialize_enum<V: serde::de::Visitor<'de>>(
            self, _name: &'static str, variants: &'static [&'static str], _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = Some(variants);
            Err(serde::de::Error::custom("probed"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            struct identifier ignored_any
        }
    }
    let mut p = Probe(None);
    let _ = T::deserialize(&mut p);
    p.0.unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Circle { r: f64 },
        Square { a: f64 },
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        shape: Vec<Shape>,
    }

    fn read(text: &str) -> Result<File, String> {
        let doc = Document::parse(text, Path::new("f.toml")).map_err(|e| e.to_string())?;
        doc.read::<File>(&[(Tagged::Entries("shape"), variants::<Shape>())])
            .map_err(|e| e.to_string())
    }

    #[test]
    fn errors_name_the_entry_key_line_and_valid_values() {
        let ok =
            read("[[shape]]\nkind = \"circle\"\nr = 1\n[[shape]]\nkind = \"square\"\na = 2.0\n")
                .unwrap();
        assert!(matches!(ok.shape[0], Shape::Circle { r } if r == 1.0));
        assert!(matches!(ok.shape[1], Shape::Square { a } if a == 2.0));
        let e =
            read("[[shape]]\nkind = \"circle\"\nr = 1\n[[shape]]\nkind = \"square\"\na = \"x\"\n")
                .unwrap_err();
        assert!(e.starts_with("f.toml: shape#2.a: invalid type"), "{e}");
        assert!(e.ends_with("(line 6)"), "{e}");
        let e =
            read("[[shape]]\nkind = \"circle\"\nr = 1\n[[shape]]\nkind = \"star\"\n").unwrap_err();
        assert_eq!(
            e,
            "f.toml: shape#2.kind: unknown shape kind \"star\"; valid kinds: circle, square (line 5)"
        );
        let e = read("[[shape]]\nr = 1\n").unwrap_err();
        assert_eq!(
            e,
            "f.toml: shape#1: needs `kind`; valid kinds: circle, square (line 1)"
        );
        let e = read("[[shape]]\nkind = \"circle\"\n").unwrap_err();
        assert!(
            e.contains("shape#1: missing field `r`") && e.ends_with("(line 1)"),
            "{e}"
        );
        let e = read("[[shape]]\nkind = \"circle\"\nr = 1\ns = 2\n").unwrap_err();
        assert!(
            e.contains("shape#1.s: ") && e.contains("s") && e.ends_with("(line 4)"),
            "{e}"
        );
        let e = read("[other]\n").unwrap_err();
        assert!(e.starts_with("f.toml: other: unknown field `other`"), "{e}");
    }

    #[test]
    fn variants_are_the_file_names() {
        assert_eq!(variants::<Shape>(), &["circle", "square"]);
        assert!(variants::<File>().is_empty());
        // the system kinds a file names are the built-in registry's, in its order
        assert_eq!(
            variants::<crate::systems::SystemSpec>(),
            &crate::systems::builtin::KINDS[..]
        );
    }
}
