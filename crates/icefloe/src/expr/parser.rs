//! The row-filter language: text such as `id > 5 and category = 'a'` read into an
//! [`Expression`].
//!
//! The syntax is PyIceberg's row-filter syntax plus the forms that [`Expression`]'s
//! `Display` writes, so that every expression prints as text that reads back to it:
//!
//! ```text
//! filter     := or
//! or         := and ("or" and)*
//! and        := not ("and" not)*
//! not        := "not" not | primary
//! primary    := "(" or ")" | "true" | "false" | predicate
//! predicate  := column ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") value
//!             | value ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") column
//!             | column "is" ["not"] ("null" | "nan")
//!             | column ["not"] "in" "(" [value ("," value)*] ")"
//!             | column ["not"] "between" value "and" value
//!             | column ["not"] "like" string        -- 'abc%' is starts with, 'abc' is =
//!             | column ["not"] "starts" "with" value
//! column     := name ("." name)*                    -- a bare word, "quoted" or `quoted`
//! value      := ["-" | "+"] number | string | "true" | "false" | X'hex'
//!             | ["-" | "+"] ("nan" | "inf" | "infinity")
//! ```
//!
//! Keywords are case-insensitive. `not` binds tighter than `and`, which binds tighter
//! than `or`. A keyword is also a column name where an operator follows it (`not is null`
//! tests a column named `not`), so names that happen to be keywords need no quotes.
//!
//! Values are typed by how they are written: `5` is a long, `1.50` a decimal of scale 2
//! (as Java's `new BigDecimal("1.50")`), `1e3` and `inf` doubles, `'x'` a string (`''`
//! inside is one quote; dates, times, timestamps and UUIDs are written as strings and
//! converted when the expression is bound), `X'0aff'` binary.
//!
//! Errors are [`Error::InvalidArgument`] naming what was expected and where
//! (`expected a value after '>' at column 6`).

use std::str::FromStr;

use super::{Datum, Expression, Operation};
use crate::error::{Error, Result};

/// How deeply parentheses and `not` may nest (a guard for the recursive parser and for
/// the recursive code that later walks the expression).
const MAX_DEPTH: usize = 256;

impl Expression {
    /// Parses a row filter such as `id > 5 and category in ('a', 'b')` (see the module
    /// documentation for the syntax).
    pub fn parse(text: &str) -> Result<Expression> {
        let tokens = lex(text)?;
        let mut p = Parser {
            text,
            tokens,
            pos: 0,
            depth: 0,
        };
        let e = p.parse_or()?;
        match p.peek() {
            Tok::End => Ok(e),
            _ => Err(p.error_here("expected 'and', 'or' or the end of the filter")),
        }
    }
}

impl FromStr for Expression {
    type Err = Error;

    fn from_str(s: &str) -> Result<Expression> {
        Expression::parse(s)
    }
}

// ------------------------------------------------------------------------------------
// Tokens
// ------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A bare word: an identifier or a keyword.
    Word(String),
    /// A name in double quotes or backticks.
    Quoted(String),
    /// A string in single quotes.
    Str(String),
    /// `X'0aff'`.
    Hex(Vec<u8>),
    /// Digits with an optional fraction and exponent, without sign.
    Number(String),
    /// `=`, `==`, `!=`, `<>`, `<`, `<=`, `>`, `>=`.
    Cmp(&'static str),
    LParen,
    RParen,
    Comma,
    Dot,
    Minus,
    Plus,
    End,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// Byte offset of the token's first character.
    at: usize,
}

/// Where a byte offset is, for messages: `column 7`, or `line 2, column 3` in text of
/// several lines. Columns count characters from 1.
fn location(text: &str, at: usize) -> String {
    let before = text.get(..at).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).unwrap_or("").chars().count() + 1;
    if text.contains('\n') {
        let line = before.matches('\n').count() + 1;
        format!("line {line}, column {column}")
    } else {
        format!("column {column}")
    }
}

fn syntax_error(text: &str, at: usize, message: &str) -> Error {
    Error::invalid_argument(format!(
        "cannot parse filter: {message} at {}",
        location(text, at)
    ))
}

fn is_word_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn lex(text: &str) -> Result<Vec<Token>> {
    let mut out: Vec<Token> = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(at, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let next_char = text.get(at + c.len_utf8()..).and_then(|s| s.chars().next());
        let tok = match c {
            '(' => {
                chars.next();
                Tok::LParen
            }
            ')' => {
                chars.next();
                Tok::RParen
            }
            ',' => {
                chars.next();
                Tok::Comma
            }
            '-' => {
                chars.next();
                Tok::Minus
            }
            '+' => {
                chars.next();
                Tok::Plus
            }
            '=' | '!' | '<' | '>' => {
                chars.next();
                let two = match (c, next_char) {
                    ('=', Some('=')) => Some("=="),
                    ('!', Some('=')) => Some("!="),
                    ('<', Some('>')) => Some("<>"),
                    ('<', Some('=')) => Some("<="),
                    ('>', Some('=')) => Some(">="),
                    _ => None,
                };
                match (two, c) {
                    (Some(op), _) => {
                        chars.next();
                        Tok::Cmp(op)
                    }
                    (None, '=') => Tok::Cmp("="),
                    (None, '<') => Tok::Cmp("<"),
                    (None, '>') => Tok::Cmp(">"),
                    _ => {
                        return Err(syntax_error(
                            text,
                            at,
                            "unexpected character '!' (write '!=' for not equal)",
                        ))
                    }
                }
            }
            '\'' => {
                chars.next();
                Tok::Str(quoted(text, at, &mut chars, '\'', "string")?)
            }
            '"' | '`' => {
                chars.next();
                let name = quoted(text, at, &mut chars, c, "quoted column name")?;
                if name.is_empty() {
                    return Err(syntax_error(text, at, "empty quoted column name"));
                }
                Tok::Quoted(name)
            }
            'x' | 'X' if next_char == Some('\'') => {
                chars.next();
                chars.next();
                let hex = quoted(text, at, &mut chars, '\'', "hex literal")?;
                Tok::Hex(decode_hex(&hex).ok_or_else(|| {
                    syntax_error(
                        text,
                        at,
                        "expected an even number of hex digits in the binary value",
                    )
                })?)
            }
            '.' if !next_char.is_some_and(|n| n.is_ascii_digit())
                || matches!(
                    out.last(),
                    Some(Token {
                        tok: Tok::Word(_) | Tok::Quoted(_),
                        ..
                    })
                ) =>
            {
                chars.next();
                Tok::Dot
            }
            c if c.is_ascii_digit() || c == '.' => Tok::Number(number(text, at, &mut chars)?),
            c if is_word_start(c) => {
                let mut word = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if !is_word_char(c) {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                Tok::Word(word)
            }
            other => {
                return Err(syntax_error(
                    text,
                    at,
                    &format!("unexpected character '{other}'"),
                ))
            }
        };
        out.push(Token { tok, at });
    }
    out.push(Token {
        tok: Tok::End,
        at: text.len(),
    });
    Ok(out)
}

type Chars<'a> = std::iter::Peekable<std::str::CharIndices<'a>>;

/// The text up to the closing `quote` (the opening one is consumed); a doubled quote
/// stands for one.
fn quoted(text: &str, at: usize, chars: &mut Chars<'_>, quote: char, what: &str) -> Result<String> {
    let mut s = String::new();
    loop {
        match chars.next() {
            Some((_, c)) if c == quote => {
                if chars.peek().is_some_and(|&(_, n)| n == quote) {
                    chars.next();
                    s.push(quote);
                } else {
                    return Ok(s);
                }
            }
            Some((_, c)) => s.push(c),
            None => {
                return Err(syntax_error(
                    text,
                    at,
                    &format!("unterminated {what} (no closing {quote})"),
                ))
            }
        }
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Digits, an optional fraction and an optional exponent.
fn number(text: &str, at: usize, chars: &mut Chars<'_>) -> Result<String> {
    let mut s = String::new();
    let digits = |chars: &mut Chars<'_>, s: &mut String| {
        let mut n = 0;
        while let Some(&(_, c)) = chars.peek() {
            if !c.is_ascii_digit() {
                break;
            }
            s.push(c);
            chars.next();
            n += 1;
        }
        n
    };
    let mut count = digits(chars, &mut s);
    if chars.peek().is_some_and(|&(_, c)| c == '.') {
        chars.next();
        s.push('.');
        count += digits(chars, &mut s);
    }
    if count == 0 {
        return Err(syntax_error(text, at, "expected digits in the number"));
    }
    if chars.peek().is_some_and(|&(_, c)| c == 'e' || c == 'E') {
        chars.next();
        s.push('e');
        if let Some(&(_, sign @ ('+' | '-'))) = chars.peek() {
            chars.next();
            s.push(sign);
        }
        if digits(chars, &mut s) == 0 {
            return Err(syntax_error(
                text,
                at,
                "expected the digits of the exponent in the number",
            ));
        }
    }
    if let Some(&(_, c)) = chars.peek() {
        if is_word_char(c) || c == '.' {
            return Err(syntax_error(
                text,
                at,
                &format!("unexpected '{c}' after the number {s}"),
            ));
        }
    }
    Ok(s)
}

// ------------------------------------------------------------------------------------
// Parser
// ------------------------------------------------------------------------------------

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

/// Describes a token for messages.
fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Word(w) => format!("'{w}'"),
        Tok::Quoted(n) => format!("the quoted name \"{n}\""),
        Tok::Str(s) => format!("the string '{s}'"),
        Tok::Hex(_) => "a binary value".to_string(),
        Tok::Number(n) => format!("the number {n}"),
        Tok::Cmp(op) => format!("'{op}'"),
        Tok::LParen => "'('".to_string(),
        Tok::RParen => "')'".to_string(),
        Tok::Comma => "','".to_string(),
        Tok::Dot => "'.'".to_string(),
        Tok::Minus => "'-'".to_string(),
        Tok::Plus => "'+'".to_string(),
        Tok::End => "the end of the filter".to_string(),
    }
}

fn cmp_op(symbol: &str) -> Operation {
    match symbol {
        "<" => Operation::Lt,
        "<=" => Operation::LtEq,
        ">" => Operation::Gt,
        ">=" => Operation::GtEq,
        "!=" | "<>" => Operation::NotEq,
        _ => Operation::Eq,
    }
}

/// `items` joined with `op` as a balanced tree, so that long chains (`id = 1 or id = 2
/// or ...`) stay shallow.
fn balanced(
    mut items: Vec<Expression>,
    op: fn(Box<Expression>, Box<Expression>) -> Expression,
) -> Expression {
    if items.len() <= 1 {
        return items.pop().unwrap_or(Expression::True);
    }
    let right = items.split_off(items.len().div_ceil(2));
    op(Box::new(balanced(items, op)), Box::new(balanced(right, op)))
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        self.tokens
            .get(self.pos + ahead)
            .or_else(|| self.tokens.last())
            .map_or(&Tok::End, |t| &t.tok)
    }

    fn at(&self) -> usize {
        self.tokens
            .get(self.pos)
            .or_else(|| self.tokens.last())
            .map_or(self.text.len(), |t| t.at)
    }

    /// Consumes the current token if it is `tok`.
    fn eat(&mut self, tok: &Tok) -> bool {
        let found = self.peek() == tok;
        if found {
            self.pos += 1;
        }
        found
    }

    fn is_keyword(&self, ahead: usize, keyword: &str) -> bool {
        matches!(self.peek_at(ahead), Tok::Word(w) if w.eq_ignore_ascii_case(keyword))
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.is_keyword(0, keyword);
        if found {
            self.pos += 1;
        }
        found
    }

    /// An error at the current token: `message`, where, and what was found.
    fn error_here(&self, message: &str) -> Error {
        syntax_error(
            self.text,
            self.at(),
            &format!("{message} (found {})", describe(self.peek())),
        )
    }

    fn expect_keyword(&mut self, keyword: &str, message: &str) -> Result<()> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(self.error_here(message))
        }
    }

    /// Whether the token `ahead` starts the operator of a predicate (so that a keyword
    /// before it is a column name).
    fn operator_at(&self, ahead: usize) -> bool {
        match self.peek_at(ahead) {
            Tok::Cmp(_) | Tok::Dot => true,
            Tok::Word(w) => {
                let w = w.to_ascii_lowercase();
                match w.as_str() {
                    "is" | "in" | "like" | "between" => true,
                    "starts" => self.is_keyword(ahead + 1, "with"),
                    "not" => {
                        ["in", "like", "between"]
                            .iter()
                            .any(|k| self.is_keyword(ahead + 1, k))
                            || (self.is_keyword(ahead + 1, "starts")
                                && self.is_keyword(ahead + 2, "with"))
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(syntax_error(
                self.text,
                self.at(),
                &format!("the filter nests more than {MAX_DEPTH} levels deep"),
            ));
        }
        Ok(())
    }

    fn parse_or(&mut self) -> Result<Expression> {
        let mut items = vec![self.parse_and()?];
        while self.eat_keyword("or") {
            items.push(self.parse_and()?);
        }
        Ok(balanced(items, Expression::Or))
    }

    fn parse_and(&mut self) -> Result<Expression> {
        let mut items = vec![self.parse_not()?];
        while self.eat_keyword("and") {
            items.push(self.parse_not()?);
        }
        Ok(balanced(items, Expression::And))
    }

    fn parse_not(&mut self) -> Result<Expression> {
        if self.is_keyword(0, "not") && !self.operator_at(1) {
            self.pos += 1;
            self.enter()?;
            let child = self.parse_not()?;
            self.depth -= 1;
            return Ok(Expression::Not(Box::new(child)));
        }
        self.parse_primary()
    }

    fn parse_primary(&mut self) -> Result<Expression> {
        match self.peek() {
            Tok::LParen => {
                let open = self.at();
                self.pos += 1;
                self.enter()?;
                let e = self.parse_or()?;
                self.depth -= 1;
                if !self.eat(&Tok::RParen) {
                    return Err(self.error_here(&format!(
                        "expected ')' to close the '(' at {}",
                        location(self.text, open)
                    )));
                }
                Ok(e)
            }
            Tok::Word(w) if !self.operator_at(1) && w.eq_ignore_ascii_case("true") => {
                self.pos += 1;
                Ok(Expression::True)
            }
            Tok::Word(w) if !self.operator_at(1) && w.eq_ignore_ascii_case("false") => {
                self.pos += 1;
                Ok(Expression::False)
            }
            Tok::Word(_) | Tok::Quoted(_) => self.parse_predicate(),
            Tok::Number(_) | Tok::Str(_) | Tok::Hex(_) | Tok::Minus | Tok::Plus => {
                self.parse_reversed()
            }
            _ => Err(self.error_here("expected a predicate, 'not', 'true', 'false' or '('")),
        }
    }

    /// `value op column`, as `column flipped-op value`.
    fn parse_reversed(&mut self) -> Result<Expression> {
        let value = self.parse_value("at the start of a predicate")?;
        let Tok::Cmp(symbol) = self.peek().clone() else {
            return Err(self.error_here(
                "expected a comparison (=, !=, <, <=, >, >=) after the value at the start of a predicate",
            ));
        };
        self.pos += 1;
        let term = self.parse_column(&format!("after '{symbol}'"))?;
        Ok(Expression::predicate(
            cmp_op(symbol).flip(),
            term,
            vec![value],
        ))
    }

    /// A (possibly dotted) column name.
    fn parse_column(&mut self, context: &str) -> Result<String> {
        let mut name = String::new();
        loop {
            match self.peek().clone() {
                Tok::Word(w) | Tok::Quoted(w) => {
                    self.pos += 1;
                    name.push_str(&w);
                }
                _ if name.is_empty() => {
                    return Err(self.error_here(&format!("expected a column name {context}")))
                }
                _ => return Err(self.error_here("expected a column name after '.'")),
            }
            if *self.peek() != Tok::Dot {
                return Ok(name);
            }
            self.pos += 1;
            name.push('.');
        }
    }

    fn parse_predicate(&mut self) -> Result<Expression> {
        let term = self.parse_column("")?;
        if let Tok::Cmp(symbol) = self.peek().clone() {
            self.pos += 1;
            let value = self.parse_comparison_value(symbol)?;
            return Ok(Expression::predicate(cmp_op(symbol), term, vec![value]));
        }
        if self.eat_keyword("is") {
            let negated = self.eat_keyword("not");
            let op = if self.eat_keyword("null") {
                Operation::IsNull
            } else if self.eat_keyword("nan") {
                Operation::IsNan
            } else {
                let after = if negated { "'is not'" } else { "'is'" };
                return Err(self.error_here(&format!("expected 'null' or 'nan' after {after}")));
            };
            return Ok(Expression::unary(
                if negated { op.negate() } else { op },
                term,
            ));
        }
        let negated = self.is_keyword(0, "not") && self.operator_at(0);
        if negated {
            self.pos += 1;
        }
        let not = if negated { "not " } else { "" };
        if self.eat_keyword("in") {
            let values = self.parse_list(&format!("'{not}in'"))?;
            let op = if negated {
                Operation::NotIn
            } else {
                Operation::In
            };
            return Ok(Expression::predicate(op, term, values));
        }
        if self.eat_keyword("between") {
            let low = self.parse_value(&format!("after '{not}between'"))?;
            self.expect_keyword(
                "and",
                &format!("expected 'and' after the lower bound of '{not}between'"),
            )?;
            let high = self.parse_value(&format!("after '{not}between ... and'"))?;
            let range = Expression::And(
                Box::new(Expression::compare(Operation::GtEq, term.clone(), low)),
                Box::new(Expression::compare(Operation::LtEq, term, high)),
            );
            return Ok(if negated {
                Expression::Not(Box::new(range))
            } else {
                range
            });
        }
        if self.eat_keyword("like") {
            return self.parse_like(term, negated);
        }
        if self.eat_keyword("starts") {
            self.expect_keyword("with", &format!("expected 'with' after '{not}starts'"))?;
            let value = self.parse_value(&format!("after '{not}starts with'"))?;
            let op = if negated {
                Operation::NotStartsWith
            } else {
                Operation::StartsWith
            };
            return Ok(Expression::compare(op, term, value));
        }
        Err(self.error_here(&format!(
            "expected an operator (=, !=, <, <=, >, >=, is, in, between, like, starts with) after the column name '{term}'"
        )))
    }

    fn parse_comparison_value(&mut self, symbol: &str) -> Result<Datum> {
        if self.is_keyword(0, "null") {
            let hint = if cmp_op(symbol) == Operation::NotEq {
                "is not null"
            } else {
                "is null"
            };
            return Err(self.error_here(&format!(
                "expected a value after '{symbol}'; to test for null, write '{hint}'"
            )));
        }
        self.parse_value(&format!("after '{symbol}'"))
    }

    /// `( value, ... )`, possibly empty.
    fn parse_list(&mut self, after: &str) -> Result<Vec<Datum>> {
        if !self.eat(&Tok::LParen) {
            return Err(self.error_here(&format!("expected '(' after {after}")));
        }
        let mut values = Vec::new();
        if self.eat(&Tok::RParen) {
            return Ok(values);
        }
        loop {
            values.push(self.parse_value(&format!("in the list of {after}"))?);
            if self.eat(&Tok::RParen) {
                return Ok(values);
            }
            if !self.eat(&Tok::Comma) {
                return Err(self.error_here(&format!("expected ',' or ')' in the list of {after}")));
            }
        }
    }

    /// `like 'abc%'` is `starts with 'abc'`, `like 'abc'` is `= 'abc'`. `\%`, `\_` and
    /// `\\` stand for the character itself. Other wildcards are not supported: a `%`
    /// before the end, or `_` (any one character), is an error.
    fn parse_like(&mut self, term: String, negated: bool) -> Result<Expression> {
        let not = if negated { "not " } else { "" };
        let at = self.at();
        let Tok::Str(pattern) = self.peek().clone() else {
            return Err(self.error_here(&format!("expected a string pattern after '{not}like'")));
        };
        self.pos += 1;
        let mut literal = String::new();
        let mut prefix = false;
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if matches!(chars.peek(), Some('%' | '_' | '\\')) => {
                    if let Some(e) = chars.next() {
                        literal.push(e);
                    }
                }
                '%' if chars.peek().is_none() => prefix = true,
                '%' => {
                    return Err(syntax_error(
                        self.text,
                        at,
                        "'%' is supported only at the end of a like pattern (a prefix match); write '\\%' for a percent sign",
                    ))
                }
                '_' => {
                    return Err(syntax_error(
                        self.text,
                        at,
                        "'_' (any one character) is not supported in like patterns; write '\\_' for an underscore",
                    ))
                }
                c => literal.push(c),
            }
        }
        let op = match (prefix, negated) {
            (true, false) => Operation::StartsWith,
            (true, true) => Operation::NotStartsWith,
            (false, false) => Operation::Eq,
            (false, true) => Operation::NotEq,
        };
        Ok(Expression::compare(op, term, literal))
    }

    /// A literal value; `context` says where, for the error message.
    fn parse_value(&mut self, context: &str) -> Result<Datum> {
        let start = self.at();
        let sign = match self.peek() {
            Tok::Minus => Some("-"),
            Tok::Plus => Some("+"),
            _ => None,
        };
        if sign.is_some() {
            self.pos += 1;
        }
        let sign_text = sign.unwrap_or("");
        let tok = self.peek().clone();
        let value = match tok {
            Tok::Number(n) => self.number_value(sign_text, &n, start)?,
            Tok::Word(w) => match w.to_ascii_lowercase().as_str() {
                "nan" => Datum::Double(f64::NAN),
                "inf" | "infinity" if sign == Some("-") => Datum::Double(f64::NEG_INFINITY),
                "inf" | "infinity" => Datum::Double(f64::INFINITY),
                "true" if sign.is_none() => Datum::Boolean(true),
                "false" if sign.is_none() => Datum::Boolean(false),
                _ => return Err(self.value_error(context, sign)),
            },
            Tok::Str(s) if sign.is_none() => Datum::String(s),
            Tok::Hex(b) if sign.is_none() => Datum::Binary(b),
            _ => return Err(self.value_error(context, sign)),
        };
        self.pos += 1;
        Ok(value)
    }

    fn value_error(&self, context: &str, sign: Option<&str>) -> Error {
        match sign {
            Some(s) => self.error_here(&format!("expected a number after '{s}'")),
            None => self.error_here(&format!("expected a value {context}")),
        }
    }

    fn number_value(&self, sign: &str, digits: &str, at: usize) -> Result<Datum> {
        let text = format!("{sign}{digits}");
        if digits.contains('e') {
            return text
                .parse::<f64>()
                .map(Datum::Double)
                .map_err(|_| syntax_error(self.text, at, &format!("invalid number {text}")));
        }
        if digits.contains('.') {
            return Datum::decimal(&text).map_err(|_| {
                syntax_error(
                    self.text,
                    at,
                    &format!("the decimal {text} is out of range (at most 38 digits)"),
                )
            });
        }
        text.parse::<i64>().map(Datum::Long).map_err(|_| {
            syntax_error(
                self.text,
                at,
                &format!("the integer {text} is out of the range of a long"),
            )
        })
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
