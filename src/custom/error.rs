//! Errors of expression-defined systems: where (the key), what, and for an expression the
//! text with a caret under the column and the names that were in scope.

/// An error inside one expression, at a column (characters from 0).
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError {
    pub col: usize,
    pub message: String,
}

impl ExprError {
    pub fn at(col: usize, message: String) -> Self {
        ExprError { col, message }
    }
}

/// An error in the `[system]` table of a `kind = "custom"` problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CustomError {
    /// An expression does not parse, or names something not in scope.
    #[error("{}", render_expr(key, expr, *col, message, scope))]
    Expr {
        /// The key of the expression, e.g. `[system] modes "flight": flow.v`.
        key: String,
        expr: String,
        col: usize,
        message: String,
        /// The names the expression may use there.
        scope: Vec<String>,
    },
    /// A structural error (missing or unknown name, wrong count, duplicate).
    #[error("{key}: {message}")]
    Schema { key: String, message: String },
}

impl CustomError {
    pub fn schema(key: impl Into<String>, message: impl Into<String>) -> Self {
        CustomError::Schema {
            key: key.into(),
            message: message.into(),
        }
    }
}

/// `key: message` then the expression with a caret under column `col` and the names in
/// scope, e.g.
///
/// ```text
/// [system] modes "flight": flow.v: unknown name `gg`
///     -gg - c*v
///      ^
///   names in scope: t, y, v, g, e, c, y0, v0
/// ```
fn render_expr(key: &str, expr: &str, col: usize, message: &str, scope: &[String]) -> String {
    // tabs and other control characters would shift the caret: show them as spaces
    let shown: String = expr
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let names = if scope.is_empty() {
        "(none)".to_string()
    } else {
        scope.join(", ")
    };
    format!(
        "{key}: {message}\n    {shown}\n    {}^\n  names in scope: {names}",
        " ".repeat(col)
    )
}

impl CustomError {
    /// The message with ` (line N)` of the problem `text` at the end of its first line:
    /// the line that holds the offending expression (quoted), else the first name the
    /// message quotes in backticks.
    pub fn located(&self, text: &str) -> String {
        let msg = self.to_string();
        let needle = match self {
            CustomError::Expr { expr, .. } if !expr.is_empty() => format!("\"{expr}\""),
            // a serde message quotes a name from the file only for an unknown field or
            // variant; otherwise (`missing field`, `invalid type: integer `1``) searching
            // for the quoted text could point at an unrelated line
            CustomError::Schema { key, message }
                if key == "[system]"
                    && !message.starts_with("unknown field")
                    && !message.starts_with("unknown variant") =>
            {
                return msg
            }
            _ => match msg.split('`').nth(1) {
                Some(name) if !name.is_empty() => name.to_string(),
                _ => return msg,
            },
        };
        let Some(line) = text.lines().position(|l| l.contains(&needle)) else {
            return msg;
        };
        match msg.split_once('\n') {
            Some((first, rest)) => format!("{first} (line {})\n{rest}", line + 1),
            None => format!("{msg} (line {})", line + 1),
        }
    }
}
