//! Measured data as a cost term (docs/theory.md, "Least squares"; docs/guide/identification.md):
//! a record of samples `d_{i,c}` of outputs `y_c` at times `t_i`, each with its standard
//! deviation `σ_{i,c}`, and the weighted residuals
//!
//! ```text
//! r_{i,c} = √w · (y_c(t_i) − d_{i,c}) / σ_{i,c},        ψ_data = Σ_{i,c} r_{i,c}²
//! ```
//!
//! (only the measured cells count). Every sample time is a breakpoint of the run, so
//! `y(t_i)` is read from a step's end, never from an interpolant, and the direct method's
//! `S(t_i)` is the step's own sensitivity. A sample at the instant of an event is read
//! **after** it (the record is right-continuous: the state after every event at `t_i`);
//! a sample at the horizon's end reads the final state.

/// One measured cell: the value and its standard deviation σ (> 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Datum {
    pub value: f64,
    pub sigma: f64,
}

/// One measured output of the record.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// The output's index in the system's list.
    pub output: usize,
    /// The output's name (the CSV column's header).
    pub name: String,
}

/// A measured record: sample times (strictly increasing), the outputs measured and the
/// cells (`cells[i][c]`: `None` where the file leaves the cell empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    /// Where the record came from (the file, for messages and reports).
    pub source: String,
    pub times: Vec<f64>,
    pub channels: Vec<Channel>,
    pub cells: Vec<Vec<Option<Datum>>>,
}

impl Samples {
    /// The number of measured cells (the residual vector's length).
    pub fn count(&self) -> usize {
        self.cells.iter().flatten().filter(|c| c.is_some()).count()
    }

    /// The measured cells in residual order (time-major, then the channels in file
    /// order): `(sample index, channel index, datum)`.
    pub fn measured(&self) -> impl Iterator<Item = (usize, usize, Datum)> + '_ {
        self.cells.iter().enumerate().flat_map(|(i, row)| {
            row.iter()
                .enumerate()
                .filter_map(move |(c, d)| d.map(|d| (i, c, d)))
        })
    }

    /// The residuals `√w (y_c − d)/σ` of sample `i` from the outputs `y` there, pushed in
    /// residual order.
    pub fn residuals_at<D: crate::model::Scalar>(
        &self, i: usize, y: &[D], weight: f64, out: &mut Vec<D>,
    ) {
        let sw = weight.sqrt();
        for (c, d) in self.cells[i].iter().enumerate() {
            if let Some(d) = d {
                out.push((y[self.channels[c].output] - d.value) * (sw / d.sigma));
            }
        }
    }
}
