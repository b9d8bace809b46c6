//! JSON Canonicalization Scheme (RFC 8785): one byte string per JSON value.
//!
//! A signature covers bytes, but JSON has many spellings of one value
//! (key order, whitespace, `1.0` vs `1`, escapes). JCS fixes one: no
//! whitespace, object members sorted by the UTF-16 code units of their
//! names, strings escaped as ECMAScript's `JSON.stringify` does, and numbers
//! written as ECMAScript writes an IEEE-754 double. Signer and verifier both
//! canonicalize, so the signed card survives re-serialization in between
//! (another SDK, another field order).
//!
//! Used for agent card signatures ([`crate::AgentCard::signing_payload`]).

use serde_json::Value;

/// A value JCS cannot express.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JcsError {
    /// NaN and the infinities have no JSON form.
    #[error("number {0} has no canonical JSON form")]
    NonFinite(f64),
    /// Nesting deeper than [`MAX_DEPTH`] (a guard against hostile input).
    #[error("JSON nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 64;

/// The canonical form of `value`.
pub fn canonicalize(value: &Value) -> Result<String, JcsError> {
    let mut out = String::new();
    write_value(&mut out, value, 1)?;
    Ok(out)
}

fn write_value(out: &mut String, value: &Value, depth: usize) -> Result<(), JcsError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n)?,
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            if depth > MAX_DEPTH {
                return Err(JcsError::TooDeep);
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, depth + 1)?;
            }
            out.push(']');
        }
        Value::Object(members) => {
            if depth > MAX_DEPTH {
                return Err(JcsError::TooDeep);
            }
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (name, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, name);
                out.push(':');
                write_value(out, item, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// `JSON.stringify`'s escaping: `"` and `\`, the short forms of
/// backspace, tab, newline, form feed and carriage return, `\u00xx`
/// (lower-case hex) for the other control characters, everything else
/// as is (no escaping of `/` or non-ASCII).
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as ECMAScript's `Number.prototype.toString` writes the double
/// nearest to it (RFC 8785 §3.2.2.3). Integers beyond 2^53 are therefore
/// rounded, exactly as a JavaScript verifier would see them.
fn write_number(out: &mut String, n: &serde_json::Number) -> Result<(), JcsError> {
    let x = match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => i as f64,
        (None, Some(u)) => u as f64,
        _ => n.as_f64().unwrap_or(f64::NAN),
    };
    out.push_str(&es_number(x)?);
    Ok(())
}

fn es_number(x: f64) -> Result<String, JcsError> {
    if !x.is_finite() {
        return Err(JcsError::NonFinite(x));
    }
    if x == 0.0 {
        return Ok("0".into()); // also -0
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, as
    // ECMAScript requires: "d.ddde±x".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = exp + 1; // the decimal point sits after n digits
    let mut s = String::new();
    if x < 0.0 {
        s.push('-');
    }
    if k <= n && n <= 21 {
        s.push_str(&digits);
        s.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        s.push_str(&digits[..n as usize]);
        s.push('.');
        s.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        s.push_str("0.");
        s.extend(std::iter::repeat_n('0', (-n) as usize));
        s.push_str(&digits);
    } else {
        s.push_str(&digits[..1]);
        if k > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if n - 1 < 0 { '-' } else { '+' });
        s.push_str(&(n - 1).abs().to_string());
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_as_ecmascript_writes_them() {
        // RFC 8785 Appendix B and the ECMAScript rules' edges.
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (9007199254740992.0, "9007199254740992"),
            (333333333.3333333, "333333333.3333333"),
            (0.1, "0.1"),
            (4.5, "4.5"),
        ];
        for (x, want) in cases {
            assert_eq!(es_number(*x).unwrap(), *want, "{x}");
        }
        assert!(es_number(f64::NAN).is_err());
    }

    #[test]
    fn members_sorted_by_utf16_and_strings_escaped() {
        // RFC 8785 §3.2.3's sorting example: by UTF-16 code units, so the
        // surrogate pair of U+1F600 sorts before U+FB33.
        let v = json!({
            "\u{20ac}": "Euro Sign",
            "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\u{1f600}": "Emoji: Grinning Face",
            "\u{80}": "Control",
            "\u{f6}": "Latin Small Letter O With Diaeresis"
        });
        assert_eq!(
            canonicalize(&v).unwrap(),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\
             \"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\
             \"\u{1f600}\":\"Emoji: Grinning Face\",\
             \"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
        assert_eq!(
            canonicalize(&json!({"b": [1.0, "x\u{1}\n/é"], "a": {"z": null, "y": true}})).unwrap(),
            r#"{"a":{"y":true,"z":null},"b":[1,"x\u0001\n/é"]}"#
        );
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut v = json!(1);
        for _ in 0..(MAX_DEPTH + 1) {
            v = json!([v]);
        }
        assert_eq!(canonicalize(&v), Err(JcsError::TooDeep));
    }
}
