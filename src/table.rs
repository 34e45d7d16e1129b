//! Time tables read from CSV files with a header: a column `t` in time order and named
//! columns of numbers (a previous run's `trajectory.csv`, a measured or hand-drawn motion).
//! Shared by multiple shooting's state guess and the control guess. Messages are plain
//! text; the caller wraps them with the file and the key that named it.

/// A parsed table: the header and the non-empty rows, each with its line number.
pub(crate) struct Table<'a> {
    header: Vec<&'a str>,
    rows: Vec<(usize, Vec<&'a str>)>,
    /// The `t` column, checked finite and non-decreasing (a time given twice marks an
    /// event: the row before it, then the row after it).
    pub t: Vec<f64>,
}

impl<'a> Table<'a> {
    /// Parses the text: a header line, then rows; blank lines are skipped. Needs a column
    /// `t` in non-decreasing order and at least one row (how many more, the caller says).
    pub fn parse(text: &'a str) -> Result<Table<'a>, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let header: Vec<&str> = lines
            .next()
            .ok_or_else(|| "the file is empty".to_string())?
            .1
            .split(',')
            .map(str::trim)
            .collect();
        let mut table = Table {
            header,
            rows: Vec::new(),
            t: Vec::new(),
        };
        let tc = table
            .column("t")
            .ok_or_else(|| "no column `t`".to_string())?;
        for (r, (_, line)) in lines.enumerate() {
            // rows are numbered as the guess table always did: the header is line 1
            table
                .rows
                .push((r + 2, line.split(',').map(str::trim).collect()));
            let row = table.rows.len() - 1;
            let t = table.number(row, tc, "t")?;
            if table.t.last().is_some_and(|&p| t < p) {
                return Err(format!(
                    "line {}: t = {t} goes back in time; the rows must be in time order",
                    r + 2
                ));
            }
            table.t.push(t);
        }
        if table.t.is_empty() {
            return Err("no rows below the header".into());
        }
        Ok(table)
    }

    /// The first column of that name (a `trajectory.csv` lists the states before the
    /// outputs, some of which share their names).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| *h == name)
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Row `row`'s cell in column `c` (empty if the row is short).
    pub fn cell(&self, row: usize, c: usize) -> &'a str {
        self.rows[row].1.get(c).copied().unwrap_or("")
    }

    /// The line number of row `row` in the file.
    pub fn line(&self, row: usize) -> usize {
        self.rows[row].0
    }

    /// Row `row`'s cell in column `c` as a finite number (`what` names the column).
    pub fn number(&self, row: usize, c: usize, what: &str) -> Result<f64, String> {
        let cell = self.cell(row, c);
        cell.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                format!(
                    "line {}, column `{what}`: {cell:?} is not a finite number",
                    self.line(row)
                )
            })
    }

    /// Column `c` as numbers, every row.
    pub fn numbers(&self, c: usize, what: &str) -> Result<Vec<f64>, String> {
        (0..self.len()).map(|r| self.number(r, c, what)).collect()
    }
}

/// The rows around `t` in the non-decreasing times `ts` (`t` inside their span): the row
/// `i` with `ts[i] ≤ t` (at a time two rows share, an event, the later one) and the weight
/// `w = (t − ts[i]) / (ts[i+1] − ts[i])` of the next row, 0 at a row's own time and at the
/// last row. Linear interpolation is `v_i + w (v_{i+1} − v_i)`.
pub(crate) fn bracket(ts: &[f64], t: f64) -> (usize, f64) {
    let i = ts.partition_point(|&ti| ti <= t).saturating_sub(1);
    if ts[i] == t || i + 1 == ts.len() {
        (i, 0.0)
    } else {
        (i, (t - ts[i]) / (ts[i + 1] - ts[i]))
    }
}

/// The value at `t` of the piecewise-linear function through `(ts[i], vs[i])`
/// ([`bracket`]).
pub(crate) fn interpolate(ts: &[f64], vs: &[f64], t: f64) -> f64 {
    let (i, w) = bracket(ts, t);
    if w == 0.0 {
        vs[i]
    } else {
        vs[i] + w * (vs[i + 1] - vs[i])
    }
}
