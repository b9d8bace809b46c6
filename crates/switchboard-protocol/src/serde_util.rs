//! Small serde helpers for the ProtoJSON rules A2A 1.0 inherits:
//! RFC 3339 timestamps with a `Z`, `bytes` as base64, and `null` accepted
//! wherever a repeated field or map may appear.

use base64::Engine as _;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serializer};

/// Formats a timestamp the way A2A wants it: UTC, millisecond precision, `Z`.
pub fn format_timestamp(ts: &DateTime<Utc>) -> String {
    match millis_form(ts) {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => ts.to_rfc3339_opts(SecondsFormat::Millis, true),
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the form [`format_timestamp`] gives.
fn millis_form(ts: &DateTime<Utc>) -> Option<[u8; 24]> {
    fixed_width_utc(ts)
}

/// `ts` as `YYYY-MM-DDTHH:MM:SS.<fraction>Z` with `N - 21` digits of the
/// second (1 to 9: `N` is 22 to 30), written into a fixed buffer; `None`
/// where the form is not fixed-width (a year outside 0–9999, a leap second)
/// or `N` is out of range, for which the caller lets chrono format it.
///
/// Every stored and streamed event carries a timestamp, and every log line
/// one: chrono's general formatter (format items, a `String`) cost several
/// times the rest of writing an event's status; this writes the digits.
pub fn fixed_width_utc<const N: usize>(ts: &DateTime<Utc>) -> Option<[u8; N]> {
    use chrono::{Datelike, Timelike};
    let fraction = N.checked_sub(21).filter(|f| (1..=9).contains(f))?;
    // The accessors of a `DateTime` each convert it to local time first
    // (even for UTC); the naive parts are read directly.
    let naive = ts.naive_utc();
    let (date, time) = (naive.date(), naive.time());
    let year = u32::try_from(date.year()).ok().filter(|y| *y <= 9999)?;
    let nanos = time.nanosecond();
    if nanos >= 1_000_000_000 {
        return None;
    }
    let mut out = [b'0'; N];
    for (at, separator) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
    ] {
        out[at] = separator;
    }
    out[N - 1] = b'Z';
    let mut put = |at: usize, width: usize, mut value: u32| {
        for i in (at..at + width).rev() {
            // `value % 10` is a digit, so the cast keeps it whole.
            out[i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, date.month());
    put(8, 2, date.day());
    put(11, 2, time.hour());
    put(14, 2, time.minute());
    put(17, 2, time.second());
    // `fraction` is at most 9, so the power fits.
    put(20, fraction, nanos / 10u32.pow(9 - fraction as u32));
    Some(out)
}

/// Parses an RFC 3339 timestamp in any offset and normalises it to UTC.
pub fn parse_timestamp(s: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc))
}

/// `Option<DateTime<Utc>>` as an RFC 3339 string.
pub mod opt_timestamp {
    use super::*;

    /// Serializes an optional timestamp.
    pub fn serialize<S: Serializer>(v: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(ts) => match millis_form(ts) {
                Some(bytes) => match std::str::from_utf8(&bytes) {
                    Ok(text) => s.serialize_str(text),
                    Err(_) => s.serialize_str(&format_timestamp(ts)),
                },
                None => s.serialize_str(&format_timestamp(ts)),
            },
            None => s.serialize_none(),
        }
    }

    /// Deserializes an optional timestamp.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        let raw: Option<String> = Option::deserialize(d)?;
        match raw {
            None => Ok(None),
            Some(s) => parse_timestamp(&s).map(Some).map_err(|e| {
                serde::de::Error::custom(format!("invalid RFC 3339 timestamp {s:?}: {e}"))
            }),
        }
    }
}

/// Bytes as base64. Output uses the standard alphabet with padding; input
/// accepts standard or URL-safe alphabets, padded or not (as ProtoJSON does).
pub mod base64_bytes {
    use super::*;

    /// Serializes bytes as standard base64.
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(v))
    }

    /// Deserializes lenient base64.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        decode(&s).map_err(serde::de::Error::custom)
    }

    /// Decodes lenient base64 (standard or URL-safe, padding optional).
    pub fn decode(s: &str) -> Result<Vec<u8>, String> {
        use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
        let trimmed = s.trim_end_matches('=');
        STANDARD_NO_PAD
            .decode(trimmed)
            .or_else(|_| URL_SAFE_NO_PAD.decode(trimmed))
            .map_err(|e| format!("invalid base64: {e}"))
    }
}

/// Deserializes `null` as the type's default (empty list, empty map, false).
pub fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `true` when a bool is false; used to skip default booleans.
pub fn is_false(b: &bool) -> bool {
    !*b
}
