//! A model failure located: the time and the mode where it happened.

use super::definition::Setup;
use crate::error::{Error, ModelError};
use crate::model::HybridSystem;

/// Maps a model failure to a located error.
pub(crate) fn located<'s, S: HybridSystem>(
    setup: &'s Setup<'_, S>, t: f64, mode: usize,
) -> impl Fn(ModelError) -> Error + 's {
    move |e| Error::Model {
        t,
        mode: setup.dims.mode_name(mode),
        source: e,
    }
}
