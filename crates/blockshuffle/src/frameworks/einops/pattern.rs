//! The einops pattern language, parsed as einops 0.8 parses it
//! (`einops/parsing.py`, `ParsedExpression`, and the checks of
//! `einops/einops.py`, `_prepare_transformation_recipe`, that need no input).
//!
//! A side is axes separated by spaces: a name (`b`, `h_out`: a Python
//! identifier that neither starts nor ends with `_`), a parenthesised
//! composition of names (`(h p1)`), `...` (at most one per side), or a
//! unit axis (`1`, `()`; a `1` inside parentheses is ignored). Names and
//! `...` may not repeat on a side. For rearrange, both sides name the same
//! axes, `...` is on both or neither, and on the left it is not inside
//! parentheses; anonymous axes other than `1` are rejected.
//!
//! One deviation: a token of non-ASCII decimal digits (`١`), which einops
//! reads as a number, is rejected here as an invalid name.

/// What an axis of a side is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    /// A named axis: its index in [`Pattern::names`].
    Name(usize),
    /// The axes `...` stands for.
    Ellipsis,
}

/// One axis of a side: `...` alone, or a composition (empty for a unit axis).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Axis {
    /// `...` outside parentheses: as many axes as the input has left over.
    Ellipsis,
    /// A composition of named axes (and, on the right, `...` in parentheses).
    Group(Vec<Item>),
}

/// A parsed, checked rearrange pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// Every name, in the order the left side gives them.
    pub names: Vec<String>,
    pub left: Vec<Axis>,
    pub right: Vec<Axis>,
    /// The left side has `...`.
    pub ellipsis: bool,
}

/// A raw token of one side.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    /// `...` (or the single character `…`, which einops reads alike).
    Ellipsis,
}

/// One side as `ParsedExpression` leaves it.
#[derive(Debug, Default)]
struct Side {
    /// `None`: a lone `...`; `Some(items)`: a composition.
    axes: Vec<Option<Vec<Token>>>,
    /// Written with `...` (not only `…`).
    dots: bool,
    /// A `...` or `…` inside parentheses.
    ellipsis_parenthesised: bool,
    /// Names (and `…` for the ellipsis) in order, each once.
    identifiers: Vec<String>,
    /// The first number other than 1 (einops' anonymous axes).
    anonymous: Option<String>,
}

const ELLIPSIS: char = '…';

/// Whether einops accepts `name` as an axis name (a Python identifier,
/// approximated by Unicode alphanumerics, that neither starts nor ends
/// with `_`).
pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    (first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with('_')
        && !name.ends_with('_')
}

fn parse_side(text: &str) -> Result<Side, String> {
    let mut side = Side::default();
    let expression: String;
    let text = if text.contains('.') {
        if !text.contains("...") {
            return Err("dots are allowed only in an ellipsis `...`".into());
        }
        if text.matches("...").count() != 1 || text.matches('.').count() != 3 {
            return Err("dots are allowed only in one ellipsis `...` per side".into());
        }
        side.dots = true;
        expression = text.replace("...", "…");
        expression.as_str()
    } else {
        text
    };
    let mut group: Option<Vec<Token>> = None;
    let mut current = String::new();
    for c in text.chars().chain([' ']) {
        if c == '(' || c == ')' || c == ' ' {
            if !current.is_empty() {
                add_token(&mut side, &mut group, std::mem::take(&mut current))?;
            }
            match c {
                '(' if group.is_some() => {
                    return Err("parentheses inside parentheses (a composition is one level)".into())
                }
                '(' => group = Some(Vec::new()),
                ')' => match group.take() {
                    Some(g) => side.axes.push(Some(g)),
                    None => return Err("a `)` without its `(`".into()),
                },
                _ => {}
            }
        } else if c.is_alphanumeric() || c == '_' || c == ELLIPSIS {
            current.push(c);
        } else {
            return Err(format!("unknown character {c:?}"));
        }
    }
    if group.is_some() {
        return Err("a `(` without its `)`".into());
    }
    Ok(side)
}

/// `add_axis_name` of einops' parser.
fn add_token(side: &mut Side, group: &mut Option<Vec<Token>>, token: String) -> Result<(), String> {
    let ellipsis = token.chars().eq([ELLIPSIS]);
    let identifier = if ellipsis { ELLIPSIS.to_string() } else { token.clone() };
    if side.identifiers.contains(&identifier) {
        return Err(if ellipsis { "`...` twice".into() } else { format!("axis `{token}` twice") });
    }
    if ellipsis {
        side.identifiers.push(identifier);
        match group {
            None => side.axes.push(None),
            Some(g) => {
                g.push(Token::Ellipsis);
                side.ellipsis_parenthesised = true;
            }
        }
        return Ok(());
    }
    if token.chars().all(|c| c.is_ascii_digit()) {
        let value = token.trim_start_matches('0');
        if value == "1" {
            // A unit axis: an empty composition, or nothing inside one.
            if group.is_none() {
                side.axes.push(Some(Vec::new()));
            }
            return Ok(());
        }
        if value.is_empty() {
            return Err(format!("anonymous axis `{token}`: an axis length must be positive"));
        }
        side.anonymous.get_or_insert(token);
        return Ok(());
    }
    if !valid_name(&token) {
        return Err(if token.starts_with('_') || token.ends_with('_') {
            format!("invalid axis name `{token}`: a name may not start or end with `_`")
        } else {
            format!("invalid axis name `{token}`: not an identifier")
        });
    }
    side.identifiers.push(token.clone());
    match group {
        None => side.axes.push(Some(vec![Token::Name(token)])),
        Some(g) => g.push(Token::Name(token)),
    }
    Ok(())
}

impl Pattern {
    /// Parses `pattern` and checks what einops checks before it sees an input.
    pub fn parse(pattern: &str) -> Result<Pattern, String> {
        let sides: Vec<&str> = pattern.split("->").collect();
        let [left, right] = sides[..] else {
            return Err(format!("needs exactly one `->`, found {}", sides.len() - 1));
        };
        let left = parse_side(left).map_err(|e| format!("left side: {e}"))?;
        let right = parse_side(right).map_err(|e| format!("right side: {e}"))?;
        if !left.dots && right.dots {
            return Err("`...` on the right side but not on the left".into());
        }
        if left.dots && left.ellipsis_parenthesised {
            return Err("`...` inside parentheses on the left side".into());
        }
        if let Some(n) = left.anonymous.as_ref().or(right.anonymous.as_ref()) {
            return Err(format!("anonymous axis `{n}`: rearrange takes no axis lengths but 1 in the pattern"));
        }
        let only = |a: &Side, b: &Side| -> Vec<String> {
            a.identifiers.iter().filter(|n| !b.identifiers.contains(n)).map(|n| format!("`{n}`")).collect()
        };
        for (side, names) in [("left", only(&left, &right)), ("right", only(&right, &left))] {
            if !names.is_empty() {
                let names = names.join(", ").replace('…', "...");
                return Err(format!("{names} only on the {side} side (rearrange needs every axis on both)"));
            }
        }
        // Without `...` on the left, a `…` is one more name (as in einops).
        let ellipsis = left.dots;
        let names: Vec<String> = left.identifiers.iter().filter(|n| !ellipsis || *n != "…").cloned().collect();
        let convert = |side: Side| -> Vec<Axis> {
            let item = |t: Token| match t {
                Token::Ellipsis if ellipsis => Item::Ellipsis,
                Token::Ellipsis => Item::Name(names.iter().position(|n| n == "…").expect("on both sides")),
                Token::Name(n) => Item::Name(names.iter().position(|m| *m == n).expect("on both sides")),
            };
            side.axes
                .into_iter()
                .map(|a| match a {
                    None if ellipsis => Axis::Ellipsis,
                    None => Axis::Group(vec![item(Token::Ellipsis)]),
                    Some(g) => Axis::Group(g.into_iter().map(item).collect()),
                })
                .collect()
        };
        let (left, right) = (convert(left), convert(right));
        Ok(Pattern { names, left, right, ellipsis })
    }

    /// A left-side axis as the pattern writes it (`(h p1)`, `c`, `()`).
    pub fn show(&self, axis: &Axis) -> String {
        match axis {
            Axis::Ellipsis => "...".into(),
            Axis::Group(items) => {
                let words: Vec<&str> = items
                    .iter()
                    .map(|i| match i {
                        Item::Name(n) => self.names[*n].as_str(),
                        Item::Ellipsis => "...",
                    })
                    .collect();
                match words[..] {
                    [one] => one.to_string(),
                    _ => format!("({})", words.join(" ")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(p: &str) -> String {
        Pattern::parse(p).unwrap_err()
    }

    #[test]
    fn parses_compositions_units_and_ellipses() {
        let p = Pattern::parse("b (h p1) 1 ... -> (b ...) () h (p1 1)").unwrap();
        assert_eq!(p.names, ["b", "h", "p1"]);
        use Item::*;
        assert_eq!(
            p.left,
            [Axis::Group(vec![Name(0)]), Axis::Group(vec![Name(1), Name(2)]), Axis::Group(vec![]), Axis::Ellipsis]
        );
        assert_eq!(
            p.right,
            [
                Axis::Group(vec![Name(0), Ellipsis]),
                Axis::Group(vec![]),
                Axis::Group(vec![Name(1)]),
                Axis::Group(vec![Name(2)])
            ]
        );
        assert!(p.ellipsis);
        assert_eq!(p.show(&p.left[1]), "(h p1)");
        assert_eq!(p.show(&p.left[2]), "()");
        // `001` is a unit axis; `…` alone is a name when the left has no `...`.
        let p = Pattern::parse("001 a … -> … a").unwrap();
        assert_eq!((p.names.as_slice(), p.ellipsis), (&["a".to_string(), "…".to_string()][..], false));
        assert_eq!(Pattern::parse(" -> ").unwrap().left, []);
    }

    #[test]
    fn rejects_what_einops_rejects() {
        assert_eq!(err("a b"), "needs exactly one `->`, found 0");
        assert_eq!(err("a -> a -> a"), "needs exactly one `->`, found 2");
        assert_eq!(err("a.b -> a"), "left side: dots are allowed only in an ellipsis `...`");
        assert_eq!(err("... a ... -> a"), "left side: dots are allowed only in one ellipsis `...` per side");
        assert_eq!(err("a .... -> a"), "left side: dots are allowed only in one ellipsis `...` per side");
        assert_eq!(err("((a)) -> a"), "left side: parentheses inside parentheses (a composition is one level)");
        assert_eq!(err("a) -> a"), "left side: a `)` without its `(`");
        assert_eq!(err("a -> (a"), "right side: a `(` without its `)`");
        assert_eq!(err("a+b -> a"), "left side: unknown character '+'");
        assert_eq!(err("a\tb -> a b"), "left side: unknown character '\\t'");
        assert_eq!(err("b -> b b"), "right side: axis `b` twice");
        assert_eq!(err("0 a -> a"), "left side: anonymous axis `0`: an axis length must be positive");
        assert_eq!(err("(a 2) -> a"), "anonymous axis `2`: rearrange takes no axis lengths but 1 in the pattern");
        assert_eq!(err("_a -> _a"), "left side: invalid axis name `_a`: a name may not start or end with `_`");
        assert_eq!(err("2a -> 2a"), "left side: invalid axis name `2a`: not an identifier");
        assert_eq!(err("a… -> a"), "left side: invalid axis name `a…`: not an identifier");
        assert_eq!(err("c k -> (c k) 1 ..."), "`...` on the right side but not on the left");
        assert_eq!(err("(a ...) -> a ..."), "`...` inside parentheses on the left side");
        assert_eq!(err("... chan -> chan ... z"), "`z` only on the right side (rearrange needs every axis on both)");
        assert_eq!(err("k -> ()"), "`k` only on the left side (rearrange needs every axis on both)");
        assert_eq!(err("... a -> a"), "`...` only on the left side (rearrange needs every axis on both)");
        assert_eq!(err("... … -> a"), "left side: `...` twice");
    }
}
