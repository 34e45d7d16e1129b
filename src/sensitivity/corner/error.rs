//! Why a corner, its B-derivative or a `hybridopt bderiv` case cannot be computed, by kind.
//!
//! The messages name the offending item as the JSON case or the corner's data hold it
//! (surface j, the sign vector b, `fields[i].signs`, `directions[i]`).

use std::path::PathBuf;

use super::{format_signs, MAX_ENUMERATED_SURFACES, MAX_PIECE_ENTRIES, MAX_SURFACES};
use super::{INDEPENDENCE_TOL, TRANSVERSALITY_TOL};

/// A failure of the corner's validation ([`super::Corner::new`]), of the B-derivative and its
/// pieces, of the piecewise-constant oracle, or of a `hybridopt bderiv` case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CornerError {
    /// The number of surfaces n or the dimension d of a corner is not supported: n = 0,
    /// n > [`MAX_SURFACES`] (a corner stores 2^n fields), d = 0, or n > d (n independent
    /// normals need n ≤ d). Give between 1 and `min(d, MAX_SURFACES)` normals of length d ≥ 1.
    #[error("{}", size_text(*n, *d))]
    Size { n: usize, d: usize },
    /// A case's `normals` give no surface, more than [`MAX_SURFACES`], or empty normals
    /// (`normals[0]` has d = 0 components). Fix the key `normals`.
    #[error("{}", case_size_text(*n))]
    CaseSize { n: usize, d: usize },
    /// A case's `directions` is empty. Give at least one direction of d numbers.
    #[error("directions is empty: give at least one direction (a list of d = {d} numbers)")]
    NoDirections { d: usize },
    /// A vector or list whose length does not match what the corner needs: `item` as the
    /// data name it (a field, a direction, a sign vector, `fields[i].value`, `normals[j]`),
    /// `found` its length, `expected` the length it must have, `of` what that length is.
    /// Give `expected` entries.
    #[error("{}", length_text(item, *found, *expected, *of))]
    Length {
        item: String,
        found: usize,
        expected: usize,
        of: LengthOf,
    },
    /// The number of fields is not one per sign vector (2^n for n surfaces; for the
    /// piecewise-constant oracle, one per orthant of R^n). Give exactly 2^n fields.
    #[error("{}", field_count_text(*n, *found, *orthants))]
    FieldCount {
        n: usize,
        found: usize,
        /// The oracle's fields (one per orthant), rather than a corner's.
        orthants: bool,
    },
    /// A NaN or an infinity in the data: `item` names the number as the message shows it
    /// (a normal's component, a field's, a direction's, a case key's entry). Every number
    /// must be finite.
    #[error("{item} is {value}: every number must be finite")]
    NonFinite { item: String, value: f64 },
    /// A normal that is the zero vector (its surface, or `None` for [`super::saltation`]'s
    /// single normal). A normal must be a nonzero vector: the guard's gradient vanishes at
    /// the corner, so the surface is not a transversal crossing there.
    #[error("{}", zero_normal_text(*surface, *norm))]
    ZeroNormal { surface: Option<usize>, norm: f64 },
    /// The n normals are (numerically) linearly dependent: the smallest over the largest
    /// singular value of the unit normals is `ratio`, at most [`INDEPENDENCE_TOL`]; `None`
    /// when the singular values could not be computed. The surfaces must intersect
    /// transversally: two guards with parallel gradients at the corner are not a corner.
    #[error("{}", dependent_text(*n, *ratio))]
    DependentNormals { n: usize, ratio: Option<f64> },
    /// A field with (nearly) no speed across a surface, `|η_jᵀΓ(b)| ≤ 1e-12 ‖η_j‖ ‖Γ(b)‖`:
    /// before the surface (`after` false) the crossing grazes it, so its time has no
    /// derivative; after it (`after` true) the trajectory slides along it. The data are not
    /// a transversal corner: move the point or change the fields.
    #[error("{}", orthogonal_text(*surface, signs, *speed, *after))]
    NotTransversal {
        surface: usize,
        signs: Vec<i32>,
        /// `η_jᵀΓ(b)`.
        speed: f64,
        after: bool,
    },
    /// The fields cross a surface in different directions: `η_jᵀΓ(b)` is `speed` for the
    /// sign vector `signs` but `reference` for the all-minus field, with opposite signs. Before
    /// the surface the crossing direction would depend on the order; after it the trajectory
    /// would cross back. Every field must cross every surface the same way.
    #[error("{}", reversal_text(*surface, signs, *speed, *reference, *after))]
    Reversal {
        surface: usize,
        signs: Vec<i32>,
        speed: f64,
        /// `η_jᵀΓ(−1, …, −1)`.
        reference: f64,
        after: bool,
    },
    /// [`super::saltation`]'s normal is orthogonal to the field before the crossing
    /// (`ηᵀf⁻ = speed`): the crossing grazes the surface. Give a transversal crossing.
    #[error("saltation: the normal is orthogonal to f_minus (ηᵀf⁻ = {speed:e}, below {TRANSVERSALITY_TOL:e} · ‖η‖ ‖f⁻‖): the crossing grazes the surface")]
    SaltationGrazing { speed: f64 },
    /// A normal speed `η_jᵀΓ(b)` overflows (not finite although the data are). Rescale the
    /// normals or the fields.
    #[error("surface {surface}, sign vector {}: the normal speed η_jᵀΓ(b) overflows ({speed}); rescale the data", format_signs(signs))]
    SpeedOverflow {
        surface: usize,
        signs: Vec<i32>,
        speed: f64,
    },
    /// [`super::saltation`]'s matrix overflows. Rescale the data.
    #[error("saltation: the matrix overflows; rescale the data")]
    SaltationOverflow,
    /// The value `B(δρ⁻)` is not finite (overflow, or a grazing field in a corner modified
    /// after [`super::Corner::new`]). Rescale the direction, check the corner's data.
    #[error("B-derivative component {component} is {value} (overflow or a grazing field); check the corner data and rescale the direction")]
    ValueOverflow { component: usize, value: f64 },
    /// A corner whose public fields were changed after [`super::Corner::new`] so that its
    /// sizes no longer fit: `n` normals of length `d`, `fields` fields. Build corners with
    /// `Corner::new`.
    #[error("corner data are inconsistent: {n} normals of length {d} and {fields} fields (expected 1 ≤ n ≤ {MAX_SURFACES}, d ≥ 1 and 2^n fields); build corners with Corner::new")]
    Inconsistent { n: usize, d: usize, fields: usize },
    /// A sign mask beyond the corner's fields (a corner changed after construction). Build
    /// corners with [`super::Corner::new`].
    #[error("no field for sign mask {mask}: the corner has {fields} fields")]
    NoField { mask: usize, fields: usize },
    /// A field with no speed across a surface in a corner changed after
    /// [`super::Corner::new`] (which rejects it). Build corners with `Corner::new`.
    #[error("surface {surface}: the normal speed of the field for sign vector {} is {speed}; build corners with Corner::new", format_signs(signs))]
    ZeroSpeed {
        surface: usize,
        signs: Vec<i32>,
        speed: f64,
    },
    /// A sign that is neither −1 nor 1: entry `entry` of `signs` is `value` (in a case file,
    /// `field` is the index into `fields`). Each sign is −1 (before the surface) or 1 (after).
    #[error("{}", sign_text(signs, *entry, *value, *field))]
    BadSign {
        signs: Vec<i32>,
        entry: usize,
        value: i32,
        field: Option<usize>,
    },
    /// A sign vector with more than [`MAX_SURFACES`] entries.
    #[error("sign vector {} has {} entries; at most {MAX_SURFACES} surfaces are supported", format_signs(signs), signs.len())]
    TooManySigns { signs: Vec<i32> },
    /// A crossing order that is not a permutation of the n surfaces `0..n`: of the wrong
    /// length (`surface` is `None`), naming a surface that does not exist (`surface ≥ n`), or
    /// naming one twice. List each surface exactly once.
    #[error("{}", order_text(order, *n, *surface))]
    Order {
        order: Vec<usize>,
        n: usize,
        surface: Option<usize>,
    },
    /// Enumerating the n! pieces of `B` ([`super::all_pieces`]) would need too much: n >
    /// [`MAX_ENUMERATED_SURFACES`], or more than [`MAX_PIECE_ENTRIES`] numbers (n!·d²).
    /// Evaluate `B` on the directions you need with [`super::bderivative`] instead.
    #[error("{}", pieces_text(*n, *d))]
    TooManyPieces { n: usize, d: usize },
    /// The piecewise-constant oracle's state has d = 0 or more than [`MAX_SURFACES`]
    /// components.
    #[error("piecewise-constant flow: the state has d = {d} components; 1 ≤ d ≤ {MAX_SURFACES} is supported")]
    FlowSize { d: usize },
    /// The oracle's start lies on a hyperplane `x_j = 0` (component `component` is 0): its
    /// orthant is undefined. Start off the hyperplanes.
    #[error(
        "start point component {component} is 0: the start must not lie on a hyperplane x_j = 0"
    )]
    OnHyperplane { component: usize },
    /// The oracle's duration is negative or not finite.
    #[error("flow duration is {duration}: it must be finite and ≥ 0")]
    Duration { duration: f64 },
    /// The oracle's flow slides at time `t` on `x_j = 0` (`coordinate` j): the field of
    /// the orthant just entered (`signs`) has component j = `component`, pointing back to
    /// (or along) the hyperplane. Such fields are not a transversal corner.
    #[error("piecewise-constant flow: sliding at t = {t} on x_{coordinate} = 0: the field of orthant {} has component {coordinate} = {component}, pointing back to (or along) the hyperplane just crossed", format_signs(signs))]
    Sliding {
        t: f64,
        coordinate: usize,
        signs: Vec<i32>,
        component: f64,
    },
    /// Two entries of a case's `fields` (indices `first` and `second`) have the same sign
    /// vector. Give each sign vector once.
    #[error("fields[{first}] and fields[{second}] both have signs {}: each sign vector must appear exactly once", format_signs(signs))]
    DuplicateSigns {
        first: usize,
        second: usize,
        signs: Vec<i32>,
    },
    /// A case's `fields` miss the sign vectors `missing` (of the 2^n for n surfaces; `given`
    /// fields were given). Give one field per sign vector.
    #[error("{}", missing_text(missing, *n, *given))]
    MissingSigns {
        missing: Vec<Vec<i32>>,
        n: usize,
        given: usize,
    },
    /// A case that is not valid JSON of the case's form (syntax, an unknown or missing key,
    /// a number out of range): serde's message, with line and column.
    #[error("case JSON: {message}")]
    Json { message: String },
    /// The B-derivative on `directions[index]` of a case failed (the source says why).
    #[error("directions[{index}]: {source}")]
    Direction {
        index: usize,
        source: Box<CornerError>,
    },
    /// A case file that cannot be used (the source says which key and why).
    #[error("{}: {source}", file.display())]
    File {
        file: PathBuf,
        source: Box<CornerError>,
    },
}

/// What the length of [`CornerError::Length`]'s item must match (and so how the message
/// says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthOf {
    /// The state dimension d (a field, a direction).
    Dimension,
    /// The number of surfaces n (a sign vector).
    Surfaces,
    /// The number of surfaces n, for a case's `fields[i].signs`.
    CaseSigns,
    /// The length of `normals[0]` (a ragged case's `normals[j]`).
    FirstNormal,
    /// The length of [`super::saltation`]'s normal (`f_minus`, `f_plus`; 0 for an empty
    /// normal).
    Normal,
}

fn size_text(n: usize, d: usize) -> String {
    if n == 0 {
        "corner has no surfaces: give n ≥ 1 normals (the rows of an n×d matrix)".into()
    } else if n > MAX_SURFACES {
        format!(
            "corner has n = {n} surfaces; at most {MAX_SURFACES} are supported (a corner \
             stores 2^n fields)"
        )
    } else if d == 0 {
        "normals have d = 0 components: the state dimension must be at least 1".into()
    } else {
        format!("n = {n} surfaces in R^{d}: n linearly independent normals need n ≤ d")
    }
}

fn case_size_text(n: usize) -> String {
    if n == 0 {
        "normals is empty: give n ≥ 1 surface normals, each a list of d numbers".into()
    } else if n > MAX_SURFACES {
        format!(
            "normals has n = {n} rows; at most {MAX_SURFACES} surfaces are supported (2^n \
             fields are required)"
        )
    } else {
        "normals[0] is empty: each normal needs d ≥ 1 components".into()
    }
}

fn length_text(item: &str, found: usize, expected: usize, of: LengthOf) -> String {
    match of {
        LengthOf::Dimension => format!("{item} has {found} components, expected d = {expected}"),
        LengthOf::Surfaces => format!("{item} has {found} entries, expected n = {expected}"),
        LengthOf::CaseSigns => {
            format!("{item} has {found} entries, expected n = {expected} (one -1 or 1 per surface)")
        }
        LengthOf::FirstNormal => format!(
            "{item} has {found} components but normals[0] has {expected}: every normal must \
             have the same length d (ragged normals)"
        ),
        LengthOf::Normal if expected == 0 => {
            "saltation: the normal is empty; it needs d ≥ 1 components".into()
        }
        LengthOf::Normal => {
            format!("saltation: {item} has {found} components but the normal has {expected}")
        }
    }
}

fn field_count_text(n: usize, found: usize, orthants: bool) -> String {
    let expected = 1usize << n;
    if orthants {
        format!(
            "piecewise-constant flow in R^{n} needs 2^d = {expected} fields (one per orthant), \
             got {found}"
        )
    } else {
        format!(
            "corner with n = {n} surfaces needs 2^n = {expected} fields (one per sign vector), \
             got {found}"
        )
    }
}

fn zero_normal_text(surface: Option<usize>, norm: f64) -> String {
    match surface {
        Some(j) => format!(
            "normal of surface {j} has norm {norm}: a normal must be a nonzero finite vector"
        ),
        None => "saltation: the normal is zero; it must be a nonzero vector".into(),
    }
}

fn dependent_text(n: usize, ratio: Option<f64>) -> String {
    match ratio {
        Some(r) => format!(
            "the {n} normals are linearly dependent (smallest/largest singular value of the \
             unit normals = {r:e}, below {INDEPENDENCE_TOL:e}): the surfaces must intersect \
             transversally, with linearly independent normals"
        ),
        None => "could not decide whether the normals are linearly independent (SVD did not \
                 converge)"
            .into(),
    }
}

fn orthogonal_text(surface: usize, signs: &[i32], speed: f64, after: bool) -> String {
    let role = if after {
        "a field after the crossing (b_j = +1) must keep moving away from the surface, else \
         the trajectory slides along it"
    } else {
        "a field from which the surface is still to be crossed (b_j = -1) must cross it \
         transversally, else the crossing time is not differentiable (grazing)"
    };
    format!(
        "the normal of surface {surface} is orthogonal to the field for sign vector {} \
         (η_jᵀΓ(b) = {speed:e}, below {TRANSVERSALITY_TOL:e} · ‖η_j‖ ‖Γ(b)‖): {role}",
        format_signs(signs)
    )
}

fn reversal_text(surface: usize, signs: &[i32], speed: f64, reference: f64, after: bool) -> String {
    let what = if after {
        "after crossing it the trajectory would cross it back (or slide)"
    } else {
        "the trajectory would cross it in opposite directions depending on the crossing order"
    };
    format!(
        "surface {surface}: the normal speed η_jᵀΓ(b) is {speed:e} for sign vector {} but \
         {reference:e} for {}: {what}; every field must cross surface {surface} in the same \
         direction",
        format_signs(signs),
        format_signs(&vec![-1; signs.len()])
    )
}

fn sign_text(signs: &[i32], entry: usize, value: i32, field: Option<usize>) -> String {
    match field {
        Some(i) => format!(
            "fields[{i}].signs[{entry}] = {value} (in {}): each sign must be -1 (before the \
             surface) or 1 (after it)",
            format_signs(signs)
        ),
        None => format!(
            "sign vector {}: entry {entry} is {value}; each sign must be -1 (before the \
             surface) or 1 (after it)",
            format_signs(signs)
        ),
    }
}

fn order_text(order: &[usize], n: usize, surface: Option<usize>) -> String {
    match surface {
        None => format!(
            "crossing order {order:?} has {} entries; it must list each of the n = {n} \
             surfaces 0..{} exactly once",
            order.len(),
            n.saturating_sub(1)
        ),
        Some(j) if j >= n => format!(
            "crossing order {order:?}: surface {j} does not exist (valid: 0..{})",
            n.saturating_sub(1)
        ),
        Some(j) => format!(
            "crossing order {order:?}: surface {j} appears twice; each surface must appear \
             exactly once"
        ),
    }
}

fn pieces_text(n: usize, d: usize) -> String {
    if n > MAX_ENUMERATED_SURFACES {
        format!(
            "all_pieces: n = {n} surfaces would give {n}! pieces; enumeration is limited to \
             n ≤ {MAX_ENUMERATED_SURFACES} (use bderivative to evaluate B on a direction)"
        )
    } else {
        let count: usize = (1..=n).product();
        let entries = count.saturating_mul(d.saturating_mul(d));
        format!(
            "all_pieces: {n}! pieces of size {d}×{d} would need {entries} numbers, more than \
             the limit of {MAX_PIECE_ENTRIES} (use bderivative to evaluate B on a direction)"
        )
    }
}

fn missing_text(missing: &[Vec<i32>], n: usize, given: usize) -> String {
    const SHOWN: usize = 8;
    let mut list: Vec<String> = missing
        .iter()
        .take(SHOWN)
        .map(|s| format_signs(s))
        .collect();
    if missing.len() > SHOWN {
        list.push(format!("… and {} more", missing.len() - SHOWN));
    }
    format!(
        "fields: missing the field for sign vector{} {}: give exactly one field per sign \
         vector (2^n = {} for n = {n} surfaces), got {given}",
        if missing.len() == 1 { "" } else { "s" },
        list.join(", "),
        1usize << n
    )
}
