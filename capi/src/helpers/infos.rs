//! Values and infos (draft §3.2.8, §3.2.9): an info's directive flags, the truth of a value
//! (`PMIx_Value_true`: a flag given as a string), a value's number in another numeric type
//! (`PMIx_Value_get_number`), and the memory a value or an info takes.

use pmix::model::{DataType, Status, Value};

use crate::args::{In, InOut, Objects, Out};
use crate::boundary::{guard, guard_or};
use crate::types::{CInfo, CStatus, CValue, CValueData};
use crate::values::object_size;

/// The directive flags of `pmix_info_t` (ABI.md, `pmix_info_directives_t`).
const REQUIRED: u32 = 0x1;
const ARRAY_END: u32 = 0x2;
const PROCESSED: u32 = 0x4;
const QUALIFIER: u32 = 0x8;
const PERSISTENT: u32 = 0x10;

/// Read an info's flags; `false` for NULL.
fn has(p: In<'_, CInfo>, flag: u32) -> bool {
    p.get().is_some_and(|i| i.flags & flag != 0)
}

/// Change an info's flags (nothing for NULL).
fn set(p: InOut<'_, CInfo>, on: u32, off: u32) {
    if let Ok(i) = p.get() {
        i.flags = (i.flags | on) & !off;
    }
}

macro_rules! flag_calls {
    ($($(#[$doc:meta])* $name:ident: $how:tt $flag:expr;)*) => {
        $(flag_calls!(@one $(#[$doc])* $name $how $flag);)*
    };
    (@one $(#[$doc:meta])* $name:ident is $flag:expr) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(p: In<'_, CInfo>) -> bool {
            has(p, $flag)
        }
    };
    (@one $(#[$doc:meta])* $name:ident sets $flag:expr) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(p: InOut<'_, CInfo>) {
            set(p, $flag, 0)
        }
    };
}

flag_calls! {
    /// `PMIx_Info_is_required`.
    PMIx_Info_is_required: is REQUIRED;
    /// `PMIx_Info_is_end`: the last element of its array.
    PMIx_Info_is_end: is ARRAY_END;
    /// `PMIx_Info_was_processed`.
    PMIx_Info_was_processed: is PROCESSED;
    /// `PMIx_Info_is_qualifier`.
    PMIx_Info_is_qualifier: is QUALIFIER;
    /// `PMIx_Info_is_persistent`: its value is not the info's to release.
    PMIx_Info_is_persistent: is PERSISTENT;
    /// `PMIx_Info_required`.
    PMIx_Info_required: sets REQUIRED;
    /// `PMIx_Info_set_end`.
    PMIx_Info_set_end: sets ARRAY_END;
    /// `PMIx_Info_processed`.
    PMIx_Info_processed: sets PROCESSED;
    /// `PMIx_Info_qualifier`.
    PMIx_Info_qualifier: sets QUALIFIER;
    /// `PMIx_Info_persistent`.
    PMIx_Info_persistent: sets PERSISTENT;
}

/// `PMIx_Info_optional`: not required.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_optional(p: InOut<'_, CInfo>) {
    set(p, 0, REQUIRED)
}

/// `PMIx_Info_is_optional`: not required (a NULL info too).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_is_optional(p: In<'_, CInfo>) -> bool {
    !has(p, REQUIRED)
}

/// `pmix_boolean_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boolean {
    True = 0,
    False = 1,
    NonBool = 2,
}

/// What a string says as a flag: empty (the key alone) or blank is true; a number is true
/// unless zero; `yes`, `true`, `enable` (and `y`, `t`) are true, `no`, `false`, `disable`
/// (and `n`, `f`) false, in any case; anything else is no boolean.
fn string_truth(s: &[u8]) -> Boolean {
    let s = s.trim_ascii();
    if s.is_empty() {
        return Boolean::True;
    }
    if s[0].is_ascii_digit() {
        let digits: Vec<u8> = s.iter().copied().take_while(u8::is_ascii_digit).collect();
        return if digits.iter().all(|d| *d == b'0') {
            Boolean::False
        } else {
            Boolean::True
        };
    }
    let lower = s.to_ascii_lowercase();
    let starts = |word: &[u8]| lower.starts_with(word);
    if starts(b"yes") || starts(b"true") || starts(b"enable") || lower == b"y" || lower == b"t" {
        Boolean::True
    } else if starts(b"no")
        || starts(b"false")
        || starts(b"disable")
        || lower == b"n"
        || lower == b"f"
    {
        Boolean::False
    } else {
        Boolean::NonBool
    }
}

/// The truth of a value (draft §3.2.8, `PMIx_Value_true`): no value is true (the key alone
/// asks for the flag), a boolean is itself, a string as [`string_truth`] reads it; a value
/// that cannot be read is no boolean.
fn value_truth(v: Result<Value, Status>) -> Boolean {
    match v {
        Ok(Value::Undef) | Ok(Value::String(None)) => Boolean::True,
        Ok(Value::Bool(true)) => Boolean::True,
        Ok(Value::Bool(false)) => Boolean::False,
        Ok(Value::String(Some(s))) => string_truth(s.as_bytes()),
        _ => Boolean::NonBool,
    }
}

/// `PMIx_Value_true`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_true(v: In<'_, CValue>) -> Boolean {
    guard_or("PMIx_Value_true", Boolean::NonBool, || {
        value_truth(v.value())
    })
}

/// `PMIx_Info_true`: the truth of the info's value.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_true(p: In<'_, CInfo>) -> Boolean {
    guard_or("PMIx_Info_true", Boolean::NonBool, || {
        value_truth(p.value())
    })
}

/// OpenPMIx 6.1's statuses for a number that does not fit its destination.
const ERR_LOST_PRECISION: Status = Status(-400);
const ERR_CHANGE_SIGN: Status = Status(-401);

/// A numeric value, wide enough for every integer type and exact for them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Number {
    Integer(i128),
    Real(f64),
}

fn number_of(v: &Value) -> Option<Number> {
    use Number::{Integer, Real};
    Some(match *v {
        Value::Size(n) | Value::Uint64(n) => Integer(n.into()),
        Value::Int(n) | Value::Int32(n) => Integer(n.into()),
        Value::Int8(n) => Integer(n.into()),
        Value::Int16(n) => Integer(n.into()),
        Value::Int64(n) => Integer(n.into()),
        Value::Uint(n) | Value::Uint32(n) => Integer(n.into()),
        Value::Uint8(n) => Integer(n.into()),
        Value::Uint16(n) => Integer(n.into()),
        Value::Pid(p) => Integer(p.into()),
        Value::Rank(r) => Integer(r.0.into()),
        Value::Status(s) => Integer(s.0.into()),
        Value::Float(f) => Real(f.into()),
        Value::Double(d) => Real(d),
        _ => return None,
    })
}

/// The bytes of `n` as type `t`: the range and sign checks of `PMIx_Value_get_number`.
fn number_bytes(n: Number, t: DataType) -> Result<Vec<u8>, Status> {
    /// An integer into `T`, with the statuses for a negative into an unsigned type and for
    /// any other value out of range.
    fn fit<T: TryFrom<i128>>(i: i128, unsigned: bool) -> Result<T, Status> {
        if unsigned && i < 0 {
            return Err(ERR_CHANGE_SIGN);
        }
        T::try_from(i).map_err(|_| ERR_LOST_PRECISION)
    }
    /// A real number as an integer: only a whole one that fits.
    fn whole(r: f64) -> Result<i128, Status> {
        if r.fract() != 0.0 || !r.is_finite() || r.abs() > 1e38 {
            return Err(ERR_LOST_PRECISION);
        }
        Ok(r as i128)
    }
    let integer = match n {
        Number::Integer(i) => i,
        Number::Real(r) if t == DataType::DOUBLE => return Ok(r.to_ne_bytes().to_vec()),
        Number::Real(r) if t == DataType::FLOAT => {
            if r.is_finite() && r.abs() > f64::from(f32::MAX) {
                return Err(ERR_LOST_PRECISION);
            }
            return Ok((r as f32).to_ne_bytes().to_vec());
        }
        Number::Real(r) => {
            if r < 0.0
                && matches!(
                    t,
                    DataType::SIZE
                        | DataType::UINT
                        | DataType::UINT8
                        | DataType::UINT16
                        | DataType::UINT32
                        | DataType::UINT64
                        | DataType::PROC_RANK
                )
            {
                return Err(ERR_CHANGE_SIGN);
            }
            whole(r)?
        }
    };
    Ok(match t {
        DataType::INT8 => fit::<i8>(integer, false)?.to_ne_bytes().to_vec(),
        DataType::INT16 => fit::<i16>(integer, false)?.to_ne_bytes().to_vec(),
        DataType::INT | DataType::INT32 | DataType::PID | DataType::STATUS => {
            fit::<i32>(integer, false)?.to_ne_bytes().to_vec()
        }
        DataType::INT64 => fit::<i64>(integer, false)?.to_ne_bytes().to_vec(),
        DataType::UINT8 => fit::<u8>(integer, true)?.to_ne_bytes().to_vec(),
        DataType::UINT16 => fit::<u16>(integer, true)?.to_ne_bytes().to_vec(),
        DataType::UINT | DataType::UINT32 | DataType::PROC_RANK => {
            fit::<u32>(integer, true)?.to_ne_bytes().to_vec()
        }
        DataType::SIZE | DataType::UINT64 => fit::<u64>(integer, true)?.to_ne_bytes().to_vec(),
        DataType::FLOAT => (integer as f32).to_ne_bytes().to_vec(),
        DataType::DOUBLE => (integer as f64).to_ne_bytes().to_vec(),
        _ => return Err(Status::ERR_BAD_PARAM),
    })
}

/// `PMIx_Value_get_number`: the value's number as type `type_` at `dest`;
/// `PMIX_ERR_CHANGE_SIGN` for a negative number into an unsigned type,
/// `PMIX_ERR_LOST_PRECISION` for one that does not fit (or a fraction into an integer),
/// `PMIX_ERR_BAD_PARAM` when either type is not a number. Nothing is written on an error.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_get_number(
    value: In<'_, CValue>,
    dest: Objects<'_>,
    type_: u16,
) -> CStatus {
    guard("PMIx_Value_get_number", || {
        if value.get().is_none() || dest.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let n = number_of(&value.value()?).ok_or(Status::ERR_BAD_PARAM)?;
        let t = DataType(type_);
        dest.write_one(t, &number_bytes(n, t)?)
    })
}

/// The bytes of memory `v`'s payload takes beyond its `pmix_value_t`: a string's with its
/// NUL, a byte object's, and for a structure behind a pointer its size and what it holds.
fn payload_bytes(v: &Value) -> usize {
    let t = v.data_type();
    let held = match v {
        Value::String(s) => s.as_ref().map_or(0, |s| s.len() + 1),
        Value::ByteObject(b)
        | Value::CompressedString(b)
        | Value::CompressedByteObject(b)
        | Value::Regex(b) => b.0.len(),
        Value::DataArray(a) => a
            .elements
            .iter()
            .map(|e| object_size(a.data_type).unwrap_or(0) + payload_bytes(e))
            .sum(),
        Value::Info(i) => payload_bytes(&i.value),
        Value::Envar(e) => {
            e.envar.as_ref().map_or(0, |s| s.len() + 1)
                + e.value.as_ref().map_or(0, |s| s.len() + 1)
        }
        Value::ProcInfo(p) => {
            p.hostname.as_ref().map_or(0, |s| s.len() + 1)
                + p.executable_name.as_ref().map_or(0, |s| s.len() + 1)
        }
        _ => 0,
    };
    let behind_pointer = if crate::values::by_pointer(t) {
        object_size(t).unwrap_or(0)
    } else {
        0
    };
    held + behind_pointer
}

/// `PMIx_Value_get_size`: the memory the value takes, its `pmix_value_t` and its payload
/// (added to nothing: `*size` is set). `PMIX_ERR_UNKNOWN_DATA_TYPE` for a value of no type
/// or of one this library does not read.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_get_size(val: In<'_, CValue>, size: Out<'_, usize>) -> CStatus {
    guard("PMIx_Value_get_size", || {
        if val.get().is_none() || size.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        size.set(value_size(val.value())?);
        Ok(())
    })
}

/// The memory a value takes, its `pmix_value_t` and its payload; a value of no type, or of
/// one this library does not read, is `PMIX_ERR_UNKNOWN_DATA_TYPE`.
fn value_size(v: Result<Value, Status>) -> Result<usize, Status> {
    let v = v.map_err(|_| Status::ERR_UNKNOWN_DATA_TYPE)?;
    if matches!(v, Value::Undef) {
        return Err(Status::ERR_UNKNOWN_DATA_TYPE);
    }
    Ok(size_of::<CValue>() + payload_bytes(&v))
}

/// `PMIx_Info_get_size`: the memory the info takes, its `pmix_info_t` and its value's
/// payload.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_get_size(val: In<'_, CInfo>, size: Out<'_, usize>) -> CStatus {
    guard("PMIx_Info_get_size", || {
        if val.get().is_none() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let value_size = value_size(val.value())?;
        if size.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        size.set(size_of::<CInfo>() + value_size - size_of::<CValue>());
        Ok(())
    })
}

// The union is 24 bytes in every release: a value's size does not depend on its type.
const _: () = assert!(size_of::<CValueData>() == 24);

#[cfg(test)]
mod tests {
    use std::ffi::c_void;

    use super::*;
    use crate::values::write_value;

    fn c_value(v: &Value) -> CValue {
        let mut c = crate::values::undef_value();
        write_value(v, &mut c).unwrap();
        c
    }

    #[test]
    fn strings_read_as_flags_the_way_users_write_them() {
        for (text, truth) in [
            ("", Boolean::True),
            ("  ", Boolean::True),
            ("1", Boolean::True),
            ("0", Boolean::False),
            ("Yes", Boolean::True),
            ("TRUE", Boolean::True),
            ("enabled", Boolean::True),
            ("no", Boolean::False),
            ("f", Boolean::False),
            ("disable", Boolean::False),
            ("maybe", Boolean::NonBool),
        ] {
            assert_eq!(string_truth(text.as_bytes()), truth, "{text:?}");
        }
        let v = c_value(&Value::Bool(false));
        // SAFETY: a value of this test.
        assert_eq!(PMIx_Value_true(unsafe { In::new(&v) }), Boolean::False);
        let v = c_value(&Value::Uint32(1));
        // SAFETY: as above.
        assert_eq!(PMIx_Value_true(unsafe { In::new(&v) }), Boolean::NonBool);
    }

    #[test]
    fn a_number_converts_when_it_fits_and_says_why_when_not() {
        let v = c_value(&Value::Int64(-3));
        let (mut small, mut unsigned, mut real) = (0i8, 0u32, 0f64);
        // SAFETY: values of this test and destinations of the named types.
        let get = |v: &CValue, dest: *mut c_void, t: u16| unsafe {
            PMIx_Value_get_number(In::new(v), Objects::new(dest), t)
        };
        assert_eq!(get(&v, (&raw mut small).cast(), 7), 0);
        assert_eq!(small, -3);
        assert_eq!(get(&v, (&raw mut unsigned).cast(), 14), ERR_CHANGE_SIGN.0);
        assert_eq!(get(&v, (&raw mut real).cast(), 17), 0);
        assert_eq!(real, -3.0);
        let big = c_value(&Value::Uint64(300));
        assert_eq!(get(&big, (&raw mut small).cast(), 7), ERR_LOST_PRECISION.0);
        assert_eq!(small, -3, "nothing is written on an error");
        let half = c_value(&Value::Double(0.5));
        assert_eq!(
            get(&half, (&raw mut unsigned).cast(), 14),
            ERR_LOST_PRECISION.0
        );
        let text = c_value(&Value::String(Some("7".into())));
        assert_eq!(
            get(&text, (&raw mut unsigned).cast(), 14),
            Status::ERR_BAD_PARAM.0
        );
    }

    #[test]
    fn a_string_value_counts_its_bytes() {
        let mut v = c_value(&Value::String(Some("abc".into())));
        let mut size = 0;
        // SAFETY: a value of this test.
        let rc = unsafe { PMIx_Value_get_size(In::new(&v), Out::new(&raw mut size)) };
        assert_eq!(rc, 0);
        assert_eq!(size, size_of::<CValue>() + 4);
        // SAFETY: the value written above, released once.
        unsafe { crate::values::destruct_value(&mut v) };
    }
}
