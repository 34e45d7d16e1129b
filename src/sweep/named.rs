//! Values by name in a fixed order (θ's order, or the grid's axes), written as a JSON
//! object whose keys keep that order (a `BTreeMap` would sort `u[10]` before `u[2]`) and
//! read back in the order of the file.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `(name, value)` pairs in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Named(pub Vec<(String, f64)>);

impl Named {
    /// Pairs `names` with `values` (the shorter sets the length).
    pub fn zip<'a>(names: impl IntoIterator<Item = &'a str>, values: &[f64]) -> Named {
        Named(
            names
                .into_iter()
                .zip(values)
                .map(|(n, &v)| (n.to_string(), v))
                .collect(),
        )
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Named {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

struct NamedVisitor;

impl<'de> Visitor<'de> for NamedVisitor {
    type Value = Named;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of numbers by name")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Named, A::Error> {
        let mut v = Vec::new();
        while let Some((k, x)) = map.next_entry::<String, f64>()? {
            v.push((k, x));
        }
        Ok(Named(v))
    }
}

impl<'de> Deserialize<'de> for Named {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Named, D::Error> {
        d.deserialize_map(NamedVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_survives_a_round_trip() {
        let n = Named::zip(["u[2]", "u[10]", "a"], &[1.0, 0.1 + 0.2, -3e-300]);
        let s = serde_json::to_string(&n).unwrap();
        assert_eq!(s, r#"{"u[2]":1.0,"u[10]":0.30000000000000004,"a":-3e-300}"#);
        let back: Named = serde_json::from_str(&s).unwrap();
        assert_eq!(back, n);
        assert_eq!(back.get("u[10]"), Some(0.1 + 0.2));
        assert_eq!(back.get("b"), None);
    }
}
