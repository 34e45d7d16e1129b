//! `--shard I/N`: the I-th of N deterministic slices of a sweep's points, round robin
//! (point i belongs to shard `i mod N + 1`), so that every slice gets a share of each
//! region of a grid.

use crate::error::Error;
use serde::{Deserialize, Serialize};

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The whole sweep (1/1).
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Parses `I/N` with 1 ≤ I ≤ N.
    pub fn parse(spec: &str) -> Result<Shard, Error> {
        let err = |message: String| Error::Flag {
            flag: "--shard".into(),
            value: spec.into(),
            message,
        };
        let usage = "expected I/N with 1 ≤ I ≤ N, e.g. --shard 2/8";
        let (i, n) = spec.split_once('/').ok_or_else(|| err(usage.into()))?;
        let parse = |s: &str| s.trim().parse::<usize>().map_err(|_| err(usage.into()));
        let (index, count) = (parse(i)?, parse(n)?);
        if count == 0 || index == 0 || index > count {
            return Err(err(format!(
                "shard {index} of {count}: {usage} (shards are numbered from 1)"
            )));
        }
        Ok(Shard { index, count })
    }

    /// Whether this is the whole sweep.
    pub fn is_all(&self) -> bool {
        self.count == 1
    }

    /// The indices of this shard's points among `total`: i with i mod N = I − 1.
    pub fn indices(&self, total: usize) -> Vec<usize> {
        (self.index - 1..total).step_by(self.count).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_points() {
        let total = 10;
        let mut seen = vec![0; total];
        for i in 1..=3 {
            for k in (Shard { index: i, count: 3 }).indices(total) {
                seen[k] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert_eq!(Shard { index: 2, count: 3 }.indices(total), vec![1, 4, 7]);
        assert_eq!(Shard { index: 4, count: 4 }.indices(2), Vec::<usize>::new());
        assert_eq!(Shard::parse(" 2/ 8").unwrap(), Shard { index: 2, count: 8 });
        for bad in ["0/3", "4/3", "1/0", "x/3", "3", "-1/2"] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--shard {bad}:")), "{e}");
        }
    }
}
