//! Tokens of the expression language, each with the column (in characters, from 0) where
//! it starts, so that errors can put a caret under it.

use super::error::ExprError;

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Num(f64),
    Ident(String),
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    Comma,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Bang,
    End,
}

/// A token and its column.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub col: usize,
}

/// Splits `src` into tokens; the last is [`Tok::End`] at the column after the text.
pub fn lex(src: &str) -> Result<Vec<Token>, ExprError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        if ch.is_whitespace() {
            i += 1;
            continue;
        }
        let col = i;
        if ch.is_ascii_digit()
            || (ch == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let (v, next) = number(&chars, i)?;
            out.push(Token {
                tok: Tok::Num(v),
                col,
            });
            i = next;
            continue;
        }
        if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            out.push(Token {
                tok: Tok::Ident(name),
                col,
            });
            continue;
        }
        let two = |c2: char| chars.get(i + 1) == Some(&c2);
        let (tok, len) = match ch {
            '+' => (Tok::Plus, 1),
            '-' | '−' => (Tok::Minus, 1),
            '*' => (Tok::Star, 1),
            '/' => (Tok::Slash, 1),
            '^' => (Tok::Caret, 1),
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            ',' => (Tok::Comma, 1),
            '<' if two('=') => (Tok::Le, 2),
            '<' => (Tok::Lt, 1),
            '>' if two('=') => (Tok::Ge, 2),
            '>' => (Tok::Gt, 1),
            '=' if two('=') => (Tok::EqEq, 2),
            '!' if two('=') => (Tok::Ne, 2),
            '!' => (Tok::Bang, 1),
            '&' if two('&') => (Tok::AndAnd, 2),
            '|' if two('|') => (Tok::OrOr, 2),
            other => {
                return Err(ExprError::at(
                    col,
                    format!("unexpected character `{other}`"),
                ))
            }
        };
        out.push(Token { tok, col });
        i += len;
    }
    out.push(Token {
        tok: Tok::End,
        col: chars.len(),
    });
    Ok(out)
}

/// A decimal number `12`, `1.5`, `.5`, `2e-3` starting at `i`; returns it and the index
/// after it.
fn number(chars: &[char], mut i: usize) -> Result<(f64, usize), ExprError> {
    let start = i;
    let digits = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
    };
    digits(&mut i);
    if i < chars.len() && chars[i] == '.' {
        i += 1;
        digits(&mut i);
    }
    if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
        let mut j = i + 1;
        if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
            j += 1;
        }
        if j < chars.len() && chars[j].is_ascii_digit() {
            i = j;
            digits(&mut i);
        }
    }
    let text: String = chars[start..i].iter().collect();
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok((v, i)),
        _ => Err(ExprError::at(
            start,
            format!("`{text}` is not a finite number"),
        )),
    }
}
