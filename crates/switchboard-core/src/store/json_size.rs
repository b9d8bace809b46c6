//! The length of a value's compact JSON, counted without writing it.
//!
//! The in-memory store measures every event it keeps (its byte bound and the
//! per-principal quota count JSON bytes, as the SQL stores do), on every
//! commit and under its lock. Serializing into a counting writer costs as much
//! as serializing: `serde_json` escapes each string byte by byte and hands
//! each token to the writer. Here a [`serde::Serializer`] adds up the lengths
//! instead: a string's length plus what escaping adds (nothing, for almost
//! every string: one vectorized pass finds that out), and integers by their
//! digit count. It follows `serde_json`'s compact
//! format exactly (the tests compare both on the protocol's types and on
//! arbitrary JSON), so a quota means the same bytes in every store.

use std::fmt;

use serde::ser::{self, Serialize};

/// The size of `value` as compact JSON (what `serde_json::to_vec` would
/// write), in bytes; `u64::MAX` for a value `serde_json` cannot write (a map
/// whose keys are not strings).
pub fn json_bytes<T: Serialize + ?Sized>(value: &T) -> u64 {
    let mut size = JsonSize(0);
    match value.serialize(&mut size) {
        Ok(()) => size.0,
        Err(_) => u64::MAX,
    }
}

/// The running count.
#[derive(Debug)]
struct JsonSize(u64);

impl JsonSize {
    fn add(&mut self, n: u64) {
        self.0 = self.0.saturating_add(n);
    }
}

/// A value `serde_json` refuses to write, so it has no size.
#[derive(Debug)]
pub struct Unsized;

impl fmt::Display for Unsized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the value has no JSON form")
    }
}

impl std::error::Error for Unsized {}

impl ser::Error for Unsized {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unsized
    }
}

/// What escaping adds to each byte: 1 for `\"`, `\\`, `\b`, `\f`, `\n`,
/// `\r`, `\t`; 5 for the other control characters (`\u00XX`); 0 otherwise.
static ESCAPE_EXTRA: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = 5;
        b += 1;
    }
    table[0x08] = 1;
    table[0x0c] = 1;
    table[b'\n' as usize] = 1;
    table[b'\r' as usize] = 1;
    table[b'\t' as usize] = 1;
    table[b'"' as usize] = 1;
    table[b'\\' as usize] = 1;
    table
};

/// What escaping adds to `bytes`. Text rarely needs escaping, so the
/// string is first checked whole for a byte below 0x20, a quote or a
/// backslash (a fold without early exit, which the compiler vectorizes),
/// and only a string holding one is counted byte by byte.
#[inline]
fn escape_extra(bytes: &[u8]) -> u64 {
    let clean = bytes.iter().fold(true, |clean, &b| {
        clean & (b >= 0x20) & (b != b'"') & (b != b'\\')
    });
    if clean {
        return 0;
    }
    bytes
        .iter()
        .map(|&b| u64::from(ESCAPE_EXTRA[usize::from(b)]))
        .sum()
}

/// A string with its quotes.
fn str_size(s: &str) -> u64 {
    s.len() as u64 + 2 + escape_extra(s.as_bytes())
}

fn u64_digits(v: u64) -> u64 {
    v.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

fn i64_size(v: i64) -> u64 {
    u64_digits(v.unsigned_abs()) + u64::from(v < 0)
}

fn u128_digits(v: u128) -> u64 {
    v.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

/// Floats are rare in events; `serde_json` writes them its own way (shortest
/// round-trip digits, `null` when not finite), so it counts them.
fn float_size<F: Serialize>(v: F) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, &v) {
        Ok(()) => count.0,
        Err(_) => u64::MAX,
    }
}

/// Counts `Display` output as a JSON string body (escapes included).
struct StrCounter(u64);

impl fmt::Write for StrCounter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len() as u64 + escape_extra(s.as_bytes());
        Ok(())
    }
}

/// `serde_json`'s marker for a `RawValue`, written verbatim.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl<'a> ser::Serializer for &'a mut JsonSize {
    type Ok = ();
    type Error = Unsized;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Unsized> {
        self.add(if v { 4 } else { 5 });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Unsized> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), Unsized> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), Unsized> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Unsized> {
        self.add(i64_size(v));
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), Unsized> {
        self.add(u128_digits(v.unsigned_abs()) + u64::from(v < 0));
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Unsized> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), Unsized> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), Unsized> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), Unsized> {
        self.add(u64_digits(v));
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), Unsized> {
        self.add(u128_digits(v));
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Unsized> {
        self.add(float_size(v));
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Unsized> {
        self.add(float_size(v));
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Unsized> {
        self.serialize_str(v.encode_utf8(&mut [0u8; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Unsized> {
        self.add(str_size(v));
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Unsized> {
        // An array of numbers, as serde_json writes bytes.
        let digits: u64 = v.iter().map(|&b| u64_digits(u64::from(b))).sum();
        self.add(2 + digits + (v.len() as u64).saturating_sub(1));
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Unsized> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsized> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsized> {
        self.add(4);
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsized> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Unsized> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Unsized> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unsized> {
        // {"variant":value}
        self.add(str_size(variant) + 3);
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Unsized> {
        self.add(2);
        Ok(Compound::new(self))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Unsized> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'a>, Unsized> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Unsized> {
        // {"variant":[...]}
        self.add(str_size(variant) + 3 + 2);
        Ok(Compound::new(self))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Unsized> {
        self.add(2);
        Ok(Compound::new(self))
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Compound<'a>, Unsized> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound {
                raw: true,
                ..Compound::new(self)
            });
        }
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Unsized> {
        // {"variant":{...}}
        self.add(str_size(variant) + 3 + 2);
        Ok(Compound::new(self))
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Unsized> {
        let mut counter = StrCounter(2);
        fmt::write(&mut counter, format_args!("{value}")).map_err(|_| Unsized)?;
        self.add(counter.0);
        Ok(())
    }
}

/// A sequence, map or struct being counted: a comma before every element
/// but the first.
#[derive(Debug)]
pub struct Compound<'a> {
    size: &'a mut JsonSize,
    first: bool,
    /// A `RawValue`: its one field is written as it is.
    raw: bool,
}

impl<'a> Compound<'a> {
    fn new(size: &'a mut JsonSize) -> Self {
        Compound {
            size,
            first: true,
            raw: false,
        }
    }

    fn comma(&mut self) {
        if !std::mem::replace(&mut self.first, false) {
            self.size.add(1);
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsized> {
        self.comma();
        value.serialize(&mut *self.size)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Unsized> {
        self.comma();
        // "key":value
        self.size.add(str_size(key) + 1);
        value.serialize(&mut *self.size)
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Unsized;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsized> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsized> {
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Unsized;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsized> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsized> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Unsized;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsized> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsized> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Unsized;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsized> {
        self.element(value)
    }
    fn end(self) -> Result<(), Unsized> {
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Unsized;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unsized> {
        self.comma();
        // "key":
        key.serialize(KeySize(&mut *self.size))?;
        self.size.add(1);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsized> {
        value.serialize(&mut *self.size)
    }
    fn end(self) -> Result<(), Unsized> {
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Unsized;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsized> {
        if self.raw {
            return value.serialize(RawSize(&mut *self.size));
        }
        self.field(key, value)
    }
    fn end(self) -> Result<(), Unsized> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Unsized;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsized> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Unsized> {
        Ok(())
    }
}

/// A map key: `serde_json` writes strings as they are and quotes numbers
/// and booleans; anything else is an error.
struct KeySize<'a>(&'a mut JsonSize);

/// A `RawValue`'s text, written without quotes or escapes.
struct RawSize<'a>(&'a mut JsonSize);

/// The methods a key or raw-value serializer refuses.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Unsized> { Err(Unsized) })*
    };
}

impl ser::Serializer for KeySize<'_> {
    type Ok = ();
    type Error = Unsized;
    type SerializeSeq = ser::Impossible<(), Unsized>;
    type SerializeTuple = ser::Impossible<(), Unsized>;
    type SerializeTupleStruct = ser::Impossible<(), Unsized>;
    type SerializeTupleVariant = ser::Impossible<(), Unsized>;
    type SerializeMap = ser::Impossible<(), Unsized>;
    type SerializeStruct = ser::Impossible<(), Unsized>;
    type SerializeStructVariant = ser::Impossible<(), Unsized>;

    fn serialize_str(self, v: &str) -> Result<(), Unsized> {
        self.0.serialize_str(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Unsized> {
        self.0.serialize_char(v)
    }
    fn serialize_bool(self, v: bool) -> Result<(), Unsized> {
        self.0.add(2);
        self.0.serialize_bool(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Unsized> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), Unsized> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), Unsized> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Unsized> {
        self.0.add(2);
        self.0.serialize_i64(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Unsized> {
        self.0.add(2);
        self.0.serialize_i128(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Unsized> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), Unsized> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), Unsized> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), Unsized> {
        self.0.add(2);
        self.0.serialize_u64(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Unsized> {
        self.0.add(2);
        self.0.serialize_u128(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Unsized> {
        if !v.is_finite() {
            return Err(Unsized);
        }
        self.0.add(2);
        self.0.serialize_f32(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Unsized> {
        if !v.is_finite() {
            return Err(Unsized);
        }
        self.0.add(2);
        self.0.serialize_f64(v)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Unsized> {
        self.0.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Unsized> {
        value.serialize(self)
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Unsized> {
        self.0.collect_str(value)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Unsized> {
        Err(Unsized)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unsized> {
        Err(Unsized)
    }
    refuse! {
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

impl ser::Serializer for RawSize<'_> {
    type Ok = ();
    type Error = Unsized;
    type SerializeSeq = ser::Impossible<(), Unsized>;
    type SerializeTuple = ser::Impossible<(), Unsized>;
    type SerializeTupleStruct = ser::Impossible<(), Unsized>;
    type SerializeTupleVariant = ser::Impossible<(), Unsized>;
    type SerializeMap = ser::Impossible<(), Unsized>;
    type SerializeStruct = ser::Impossible<(), Unsized>;
    type SerializeStructVariant = ser::Impossible<(), Unsized>;

    fn serialize_str(self, v: &str) -> Result<(), Unsized> {
        self.0.add(v.len() as u64);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Unsized> {
        Err(Unsized)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unsized> {
        Err(Unsized)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unsized> {
        Err(Unsized)
    }
    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

#[cfg(test)]
mod tests {
    use super::json_bytes;
    use serde_json::json;

    fn same<T: serde::Serialize + ?Sized>(value: &T) {
        let written = serde_json::to_vec(value).map(|v| v.len() as u64);
        assert_eq!(
            Ok(json_bytes(value)),
            written.map_err(|e| e.to_string()),
            "{}",
            serde_json::to_string(value).unwrap_or_default()
        );
    }

    #[test]
    fn strings_count_what_escaping_adds() {
        for s in [
            "",
            "plain",
            "eight by",
            "sixteen bytes ok",
            "a \"quoted\" word",
            "back\\slash",
            "tab\there, newline\n, cr\r, bell\u{7}, nul\u{0}, esc\u{1b}, del\u{7f}",
            "\u{8}\u{c}\u{1f}",
            "non-ASCII: ünïcødé ☃ 𝄞 and \u{2028}",
            "0123456789abcdef\"0123456789abcdef\\",
        ] {
            same(s);
            same(&s.repeat(9));
        }
        // Every byte value in every position of a word.
        for b in 0u8..128 {
            for at in 0..9 {
                let mut s = "x".repeat(9);
                s.insert(at, char::from(b));
                same(s.as_str());
            }
        }
    }

    #[test]
    fn numbers_and_structures_count_as_serde_json_writes_them() {
        for v in [0u64, 9, 10, 99, 100, 12_345, u64::MAX] {
            same(&v);
        }
        for v in [0i64, -1, -9, -10, i64::MIN, i64::MAX] {
            same(&v);
        }
        same(&u128::MAX);
        same(&i128::MIN);
        for v in [0.0f64, -0.5, 1e300, 1.0 / 3.0, f64::NAN, f64::INFINITY] {
            same(&v);
        }
        same(&1.5f32);
        same(&json!(null));
        same(&json!({"a": [1, 2.5, "x", true, false, null, {}, []], "b": {"c\"": "d\n"}}));
        same(&Some("x"));
        same(&None::<u8>);
        same(&'☃');
        same(&serde_bytes_like());
        let mut keyed = std::collections::BTreeMap::new();
        keyed.insert(7u32, "seven");
        keyed.insert(11u32, "eleven");
        same(&keyed);
        let mut flags = std::collections::BTreeMap::new();
        flags.insert(true, 1);
        same(&flags);
        let raw = serde_json::value::RawValue::from_string("{\"raw\": [1, 2]}".into());
        if let Ok(raw) = raw {
            same(&raw);
        }
    }

    fn serde_bytes_like() -> Vec<u8> {
        vec![0, 9, 10, 255]
    }

    #[test]
    fn enums_count_as_serde_json_writes_them() {
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, &'static str),
            Struct { a: u8, b: Option<String> },
        }
        #[derive(serde::Serialize)]
        struct Wrap(E);
        for e in [
            E::Unit,
            E::New(3),
            E::Tuple(1, "t"),
            E::Struct { a: 1, b: None },
            E::Struct {
                a: 2,
                b: Some("s".into()),
            },
        ] {
            same(&e);
            same(&Wrap(e));
        }
        same(&(1, "two", [3.5]));
    }

    #[test]
    fn protocol_events_count_as_serde_json_writes_them() {
        use switchboard_protocol::types::StreamResponse;
        let events = json!([
            {"task": {"id": "t-1", "contextId": "c-\"1\"", "status": {"state": "TASK_STATE_WORKING",
              "timestamp": "2026-12-07T18:00:00.123Z",
              "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "line\nnext\ttab \u{1}"}]}},
              "history": [{"messageId": "u", "role": "ROLE_USER", "parts": [{"text": "hi ☃"},
                {"data": {"n": 1.25, "k": [true, null]}, "mediaType": "application/json"}],
                "metadata": {"x": {"y": "z"}}}],
              "artifacts": [{"artifactId": "a", "name": "report", "parts": [{"url": "https://example.com/f?a=1&b=2",
                "mediaType": "text/plain", "filename": "f.txt"}, {"raw": "aGVsbG8="}]}],
              "metadata": {"a2a.hint": "reasoning"}}},
            {"statusUpdate": {"taskId": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED",
              "timestamp": "2026-12-07T18:00:01Z"}, "metadata": {}}},
            {"artifactUpdate": {"taskId": "t-1", "contextId": "c", "append": true, "lastChunk": false,
              "artifact": {"artifactId": "a", "parts": [{"text": "chunk \\ 2"}]}}}
        ]);
        let events: Vec<StreamResponse> = match serde_json::from_value(events) {
            Ok(events) => events,
            Err(e) => panic!("fixture: {e}"),
        };
        for event in &events {
            same(event);
        }
        same(&events);
    }

    #[test]
    fn a_map_with_keys_serde_json_refuses_has_no_size() {
        let mut m = std::collections::BTreeMap::new();
        m.insert(vec![1u8], 2);
        assert!(serde_json::to_vec(&m).is_err());
        assert_eq!(json_bytes(&m), u64::MAX);
    }
}
