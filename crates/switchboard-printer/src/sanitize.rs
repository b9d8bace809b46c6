//! Agent text made safe for a terminal.
//!
//! What an agent sends (message and artifact text, status messages, task
//! and tracker ids, error messages) is printed to the user's terminal, and a
//! terminal obeys control characters and escape sequences inside it: an
//! agent could clear the screen (`ESC [2J`), set the window title
//! (`ESC ]0;…BEL`), move the cursor to overwrite earlier lines (`\r`,
//! `ESC [A`), or with some terminals write to the clipboard (OSC 52). So
//! human output keeps only printable text, newlines and tabs: every other
//! C0 control, DEL, every C1 control, and whole escape sequences (CSI,
//! OSC, DCS, SOS/PM/APC strings, in both their 7-bit `ESC x` and 8-bit C1
//! forms) are removed. So are the Unicode bidirectional embedding,
//! override and isolate controls (U+202A–U+202E, U+2066–U+2069): invisible
//! themselves, they make the terminal show text in an order other than the
//! one it has (an override turns `exe.txt` into what reads as `txt.exe`),
//! so what the user reads is not what the agent said. Without them the
//! text shows in its logical order; the bidi marks (U+200E, U+200F, U+061C),
//! which reorder nothing across their neighbours' runs, stay for the
//! right-to-left scripts that use them. JSON output needs none of this:
//! JSON escapes control characters itself, and a program reads the logical
//! order.

use std::borrow::Cow;

/// `text` without control characters and escape sequences (see the
/// [module docs](self)); borrowed when there was nothing to remove.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_control(c) {
            out.push(c);
            continue;
        }
        // The 7-bit form `ESC x` of a sequence introducer becomes its C1 form.
        let introducer = match c {
            '\x1b' => match chars.peek().copied() {
                Some(next @ '\x40'..='\x5f') => {
                    chars.next();
                    char::from_u32(u32::from(next) + 0x40).unwrap_or('\u{80}')
                }
                Some('\x20'..='\x2f') => {
                    // `ESC` intermediates… final: a two-or-more-byte escape.
                    while chars.next_if(|c| ('\x20'..='\x2f').contains(c)).is_some() {}
                    chars.next();
                    continue;
                }
                // `ESC` + a final byte (e.g. `ESC 7`, `ESC c`), or alone.
                _ => {
                    chars.next_if(|c| ('\x30'..='\x7e').contains(c));
                    continue;
                }
            },
            c => c,
        };
        match introducer {
            // CSI: parameters and intermediates, up to a final byte.
            '\u{9b}' => {
                while chars.next_if(|c| ('\x20'..='\x3f').contains(c)).is_some() {}
                chars.next_if(|c| ('\x40'..='\x7e').contains(c));
            }
            // OSC, DCS, SOS, PM, APC: a string ended by ST (`ESC \` or
            // U+9C), or by BEL (OSC's common terminator). An unterminated
            // one runs to the end of the text.
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || c == '\u{9c}' {
                        break;
                    }
                    if c == '\x1b' && chars.next_if_eq(&'\\').is_some() {
                        break;
                    }
                }
            }
            // Any other control character: dropped by itself.
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// C0 (but newline and tab), DEL, C1, and the bidi embedding, override and
/// isolate controls.
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            printable("héllo\n\tworld ✓"),
            Cow::Borrowed("héllo\n\tworld ✓")
        ));
    }

    #[test]
    fn escape_sequences_and_controls_are_removed() {
        for (input, expected) in [
            // Title (OSC ended by BEL), then clear screen (CSI).
            ("\x1b]0;title\x07\x1b[2Jhi", "hi"),
            // OSC 52 (clipboard) ended by ST.
            ("a\x1b]52;c;aGk=\x1b\\b", "ab"),
            // Colour and cursor movement, with parameters.
            ("\x1b[1;31mred\x1b[0m\x1b[10A", "red"),
            // 8-bit CSI and OSC.
            ("x\u{9b}2Jy\u{9d}0;t\u{9c}z", "xyz"),
            // DCS ended by ST; a two-byte escape; charset designation.
            ("\x1bPq#0\x1b\\1\x1bc2\x1b(B3", "123"),
            // C0 controls but newline and tab; DEL; a lone C1.
            ("a\rb\x08c\x00d\x7fe\u{85}f\n\tg", "abcdef\n\tg"),
            // Bidi override and isolates: the text in its logical order;
            // the right-to-left mark stays.
            ("invoice\u{202e}fdp.exe", "invoicefdp.exe"),
            (
                "a\u{2066}b\u{2067}c\u{2068}d\u{2069}e\u{202a}f\u{202c}",
                "abcdef",
            ),
            ("\u{5e9}\u{200f}\u{5dc}", "\u{5e9}\u{200f}\u{5dc}"),
            // Unterminated: runs to the end.
            ("ok\x1b]0;never ends", "ok"),
            ("ok\x1b", "ok"),
        ] {
            assert_eq!(printable(input), expected, "{input:?}");
        }
    }
}
