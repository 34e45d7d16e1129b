//! Names from the problem file that become file or folder names: the problem's `name` (the
//! default results folder `results/<name>`, `results/sweep/<name>`, …) and each
//! objective's name (`seed_<objective>.png`, `direct_Z_<objective>.csv`, …). A name with a
//! path separator would write outside the results folder, so such names are refused when
//! the file is read, before any run starts.

/// What is valid, for the messages.
pub(super) const VALID: &str = "a name without `/`, `\\`, control characters or a leading `.` (letters, digits, `_`, `-` are safe everywhere)";

/// Why `s` cannot be part of a file name (None: it can). Refused: the empty name, a path
/// separator (`/`, `\`), a control character, and a leading `.` (`.` and `..` are a folder
/// and its parent; other names starting with `.` are hidden files).
pub(super) fn unusable(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(c) = s.chars().find(|&c| c == '/' || c == '\\' || c.is_control()) {
        return Some(format!("it contains {c:?}"));
    }
    if s.starts_with('.') {
        return Some("it starts with `.`".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::unusable;

    #[test]
    fn separators_parents_and_empty_names_are_refused() {
        for bad in [
            "",
            "..",
            ".",
            "../x",
            "a/b",
            "x/../../y",
            "a\\b",
            ".hidden",
            "a\nb",
        ] {
            assert!(unusable(bad).is_some(), "{bad:?} was accepted");
        }
        for good in [
            "cost",
            "int_vy2",
            "five_bar_seed",
            "y2-end",
            "run 1",
            "v1.2",
            "état",
        ] {
            assert_eq!(unusable(good), None, "{good:?} was refused");
        }
    }
}
