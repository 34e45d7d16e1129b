//! How serde reads a `[[cost]]` or `[[constraint]]` table (retagged by `document.rs` as
//! `{ kind = { keys } }`): the kinds come from the one list of quantities
//! ([`Quantity::KINDS`]) — each quantity is a constraint kind, a plain cost kind and a squared
//! one (`terminal`, `terminal_squared`) — plus the kinds of their own (`track`, `effort`,
//! `data`, `path`). A table's keys are those of its quantity, then the law's (`target`),
//! then the table's own (`weight`, `objective`; `equals`, `lower`, `upper`, `name`).
//! Unknown kinds and keys, missing and mistyped keys are serde's errors, raised where the
//! document's spans find them (the key, the value, the table).

use super::keys::{need, Keys};
use super::quantity_spec::QuantitySpec;
use super::schema::{ConstraintKindSpec, ConstraintSpec, CostKindSpec, CostSpec};
use crate::cost::Quantity;
use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, VariantAccess};
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// What a kind is.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// A quantity (its name in [`Quantity::KINDS`]); for a cost, squared or plain.
    Quantity {
        name: &'static str,
        squared: bool,
    },
    Track,
    Effort,
    Data,
    Path,
}

/// A kind a table can name: its name, its keys and what it is.
#[derive(Debug)]
struct Kind {
    name: &'static str,
    keys: Vec<&'static str>,
    shape: Shape,
}

/// The kinds of one array of tables, and their names (serde's variants).
struct Kinds {
    list: Vec<Kind>,
    names: Vec<&'static str>,
}

impl Kinds {
    fn new(list: Vec<Kind>) -> Kinds {
        let names = list.iter().map(|k| k.name).collect();
        Kinds { list, names }
    }
}

/// The keys every cost kind ends with.
const COST_KEYS: [&str; 2] = ["weight", "objective"];
/// The keys every constraint kind ends with.
const CONSTRAINT_KEYS: [&str; 4] = ["equals", "lower", "upper", "name"];

fn keys(own: &[&'static str], tail: &[&'static str]) -> Vec<&'static str> {
    own.iter().chain(tail).copied().collect()
}

/// Every quantity plain and squared, then `track`, `effort`, `data`.
fn cost_kinds() -> &'static Kinds {
    static KINDS: OnceLock<Kinds> = OnceLock::new();
    KINDS.get_or_init(|| {
        let mut list = Vec::new();
        for q in Quantity::KINDS {
            let (name, own) = (q.name, q.keys);
            // built once per process (a static), so its names live as long as it
            let squared_name: &'static str = Box::leak(format!("{name}_squared").into());
            list.push(Kind {
                name,
                keys: keys(own, &COST_KEYS),
                shape: Shape::Quantity {
                    name,
                    squared: false,
                },
            });
            let mut own_target = own.to_vec();
            own_target.push("target");
            list.push(Kind {
                name: squared_name,
                keys: keys(&own_target, &COST_KEYS),
                shape: Shape::Quantity {
                    name,
                    squared: true,
                },
            });
        }
        for (name, own, shape) in [
            ("track", &["output"][..], Shape::Track),
            ("effort", &[][..], Shape::Effort),
            ("data", &["file", "sigma"][..], Shape::Data),
        ] {
            list.push(Kind {
                name,
                keys: keys(own, &COST_KEYS),
                shape,
            });
        }
        Kinds::new(list)
    })
}

/// Every quantity, then `path`.
fn constraint_kinds() -> &'static Kinds {
    static KINDS: OnceLock<Kinds> = OnceLock::new();
    KINDS.get_or_init(|| {
        let mut list: Vec<Kind> = Quantity::KINDS
            .iter()
            .map(|q| Kind {
                name: q.name,
                keys: keys(q.keys, &CONSTRAINT_KEYS),
                shape: Shape::Quantity {
                    name: q.name,
                    squared: false,
                },
            })
            .collect();
        list.push(Kind {
            name: "path",
            keys: keys(&["output"], &CONSTRAINT_KEYS),
            shape: Shape::Path,
        });
        Kinds::new(list)
    })
}

/// A table's value from its kind's shape and its keys, built inside serde's visit of the
/// table (so that a missing key is reported at the table, not at the array).
trait FromKeys: Sized {
    fn from_keys<E: de::Error>(shape: Shape, keys: Keys) -> Result<Self, E>;
}

/// Reads one table of `kinds` as `T`.
fn read_table<'de, D: Deserializer<'de>, T: FromKeys>(
    d: D, what: &'static str, kinds: &'static Kinds,
) -> Result<T, D::Error> {
    d.deserialize_enum(what, &kinds.names, TableVisitor(kinds, PhantomData))
}

struct TableVisitor<T>(&'static Kinds, PhantomData<T>);

impl<'de, T: FromKeys> de::Visitor<'de> for TableVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "a table with `kind` = one of {}",
            self.0.names.join(", ")
        )
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<T, A::Error> {
        let (i, variant) = data.variant_seed(OneOf {
            names: &self.0.names,
            key: false,
        })?;
        let kind = &self.0.list[i];
        variant.struct_variant(&kind.keys, KeysVisitor(kind, PhantomData))
    }
}

/// A name among `names`: a kind (`unknown variant`) or a key (`unknown field`).
struct OneOf {
    names: &'static [&'static str],
    key: bool,
}

impl<'de> DeserializeSeed<'de> for OneOf {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> de::Visitor<'de> for OneOf {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "one of {}", self.names.join(", "))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        match self.names.iter().position(|n| *n == v) {
            Some(i) => Ok(i),
            None if self.key => Err(E::unknown_field(v, self.names)),
            None => Err(E::unknown_variant(v, self.names)),
        }
    }
}

struct KeysVisitor<T>(&'static Kind, PhantomData<T>);

impl<'de, T: FromKeys> de::Visitor<'de> for KeysVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "the keys of a `{}` table", self.0.name)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let names: &'static [&'static str] = &self.0.keys;
        let mut keys = Keys::default();
        while let Some(i) = map.next_key_seed(OneOf { names, key: true })? {
            keys.read(names[i], &mut map)?;
        }
        T::from_keys(self.0.shape, keys)
    }
}

/// The quantity of a `Shape::Quantity` kind, and its law's target (squared kinds).
fn quantity<E: de::Error>(
    name: &str, squared: bool, keys: &mut Keys,
) -> Result<(QuantitySpec, Option<f64>), E> {
    let q = QuantitySpec::from_keys(name, keys)?;
    let target = if squared {
        Some(need(keys.target.take(), "target")?)
    } else {
        None
    };
    Ok((q, target))
}

impl FromKeys for CostSpec {
    fn from_keys<E: de::Error>(shape: Shape, mut keys: Keys) -> Result<CostSpec, E> {
        let what = match shape {
            Shape::Quantity { name, squared } => {
                let (quantity, target) = quantity(name, squared, &mut keys)?;
                CostKindSpec::Weighed { quantity, target }
            }
            Shape::Track => CostKindSpec::Track {
                output: need(keys.entries.remove("output"), "output")?,
            },
            Shape::Effort => CostKindSpec::Effort,
            Shape::Data => CostKindSpec::Data {
                file: keys.file.take(),
                sigma: keys.sigma.take().unwrap_or_default(),
            },
            Shape::Path => unreachable!("no cost kind is a path"),
        };
        Ok(CostSpec {
            what,
            weight: keys.weight.unwrap_or(1.0),
            objective: keys.objective,
        })
    }
}

impl FromKeys for ConstraintSpec {
    fn from_keys<E: de::Error>(shape: Shape, mut keys: Keys) -> Result<ConstraintSpec, E> {
        let what = match shape {
            Shape::Quantity { name, .. } => {
                ConstraintKindSpec::Quantity(quantity(name, false, &mut keys)?.0)
            }
            Shape::Path => ConstraintKindSpec::Path {
                output: need(keys.entries.remove("output"), "output")?,
            },
            _ => unreachable!("constraint kinds are quantities and paths"),
        };
        Ok(ConstraintSpec {
            what,
            equals: keys.equals,
            lower: keys.lower,
            upper: keys.upper,
            name: keys.name,
        })
    }
}

impl<'de> de::Deserialize<'de> for CostSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CostSpec, D::Error> {
        read_table(d, "CostSpec", cost_kinds())
    }
}

impl<'de> de::Deserialize<'de> for ConstraintSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ConstraintSpec, D::Error> {
        read_table(d, "ConstraintSpec", constraint_kinds())
    }
}
