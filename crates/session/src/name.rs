//! A session's name: what lists, pages and terminals show, so it holds only characters that
//! print. A control character would reach every terminal that lists it (an escape sequence
//! recolours or rewrites the screen), and a bidirectional override would show a name other
//! than the one stored.

use thiserror::Error;

/// The longest session name taken (lists and pages show it whole).
pub const MAX_NAME: usize = 200;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum NameError {
    #[error("a session's name has 1 to {MAX_NAME} characters (this one has {chars})")]
    Length { chars: usize },
    #[error(
        "a session's name holds only characters that print: character {at} is U+{code:04X}, a control or other non-printing character"
    )]
    NotPrinting { at: usize, code: u32 },
}

/// A name is refused unless it has 1 to `MAX_NAME` characters (spaces around it not
/// counted), each one that prints.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if let Some((i, c)) = name.chars().enumerate().find(|&(_, c)| !prints(c)) {
        return Err(NameError::NotPrinting {
            at: i + 1,
            code: c as u32,
        });
    }
    let chars = name.trim().chars().count();
    if chars == 0 || chars > MAX_NAME {
        return Err(NameError::Length { chars });
    }
    Ok(())
}

/// Whether `c` prints: not a control character (C0, DEL, C1), not a line or paragraph
/// separator, and not one of Unicode's format characters (category Cf: bidirectional
/// controls, zero-width spaces, the byte order mark, tags), except the two joiners that
/// several scripts and emoji need to be written at all.
/// `name` as a terminal may show it: a character that does not print (in a name stored
/// before names were checked) is written as its escape, `\u{1b}`, never sent raw.
pub fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    if name.chars().all(prints) {
        return name.into();
    }
    name.chars()
        .map(|c| {
            if prints(c) {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
            }
        })
        .collect::<String>()
        .into()
}

fn prints(c: char) -> bool {
    const JOINERS: [char; 2] = ['\u{200C}', '\u{200D}'];
    !(c.is_control() || FORMAT.iter().any(|r| r.contains(&c))) || JOINERS.contains(&c)
}

/// Unicode's format characters (general category Cf, Unicode 16), and the line and paragraph
/// separators (Zl, Zp).
const FORMAT: &[std::ops::RangeInclusive<char>] = &[
    '\u{00AD}'..='\u{00AD}',
    '\u{0600}'..='\u{0605}',
    '\u{061C}'..='\u{061C}',
    '\u{06DD}'..='\u{06DD}',
    '\u{070F}'..='\u{070F}',
    '\u{0890}'..='\u{0891}',
    '\u{08E2}'..='\u{08E2}',
    '\u{180E}'..='\u{180E}',
    '\u{200B}'..='\u{200F}',
    '\u{2028}'..='\u{202E}',
    '\u{2060}'..='\u{2064}',
    '\u{2066}'..='\u{206F}',
    '\u{FEFF}'..='\u{FEFF}',
    '\u{FFF9}'..='\u{FFFB}',
    '\u{110BD}'..='\u{110BD}',
    '\u{110CD}'..='\u{110CD}',
    '\u{13430}'..='\u{1343F}',
    '\u{1BCA0}'..='\u{1BCA3}',
    '\u{1D173}'..='\u{1D17A}',
    '\u{E0001}'..='\u{E0001}',
    '\u{E0020}'..='\u{E007F}',
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_does_not_print_is_shown_escaped() {
        assert_eq!(shown("5x9 — 三"), "5x9 — 三");
        assert_eq!(shown("\u{1b}[31mred"), "\\u{1b}[31mred");
    }

    #[test]
    fn names_that_print_are_taken() {
        for name in [
            "5x9 main",
            "  spaced  ",
            "Fanorona — the full board",
            "fanorona 法諾羅納",
            "علی\u{200C}رضا",
            "👨\u{200D}👩\u{200D}👧 family",
            &"x".repeat(MAX_NAME),
        ] {
            assert_eq!(check_name(name), Ok(()), "{name:?}");
        }
    }

    #[test]
    fn control_and_other_non_printing_characters_are_refused() {
        for (name, at, code) in [
            ("\u{1b}[31mred", 1, 0x1b),
            ("tab\there", 4, 9),
            ("new\nline", 4, 10),
            ("bell\u{7}", 5, 7),
            ("del\u{7f}", 4, 0x7f),
            ("c1\u{9b}31m", 3, 0x9b),
            ("\u{202E}evil", 1, 0x202e),
            ("zero\u{200B}width", 5, 0x200b),
            ("bom\u{FEFF}", 4, 0xfeff),
            ("para\u{2029}", 5, 0x2029),
            ("tag\u{E0041}", 4, 0xe0041),
            // Refused before its length: the character is what is wrong.
            ("\0", 1, 0),
        ] {
            assert_eq!(
                check_name(name),
                Err(NameError::NotPrinting { at, code }),
                "{name:?}"
            );
        }
        let e = check_name("a\u{1b}b").unwrap_err().to_string();
        assert!(
            !e.contains('\n') && e.contains("U+001B") && e.contains("character 2"),
            "{e}"
        );
    }

    #[test]
    fn names_have_1_to_200_characters() {
        assert_eq!(check_name(""), Err(NameError::Length { chars: 0 }));
        assert_eq!(check_name("   "), Err(NameError::Length { chars: 0 }));
        let long = "y".repeat(MAX_NAME + 1);
        assert_eq!(check_name(&long), Err(NameError::Length { chars: 201 }));
    }
}
