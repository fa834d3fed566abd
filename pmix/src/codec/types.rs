//! The v41 encoding of each data type, as OpenPMIx 4.2 writes it.
//!
//! [`Codec`] is implemented by every Rust type that has a `PMIX_*` type code. The payload
//! written here is what follows the type tag and count of a pack call (see `buffer`); fields
//! nested inside a structure are never tagged, in either buffer type. The facts come from
//! `tests/data/golden/` (bytes produced by OpenPMIx 4.2.2's `PMIx_Data_pack`) and are
//! captured by `tests/data/golden/capture_golden.py`.
//!
//! Decoding is bounded: counts are checked against the bytes left, and nesting (a value
//! holding an array of values holding arrays …) stops at [`MAX_DEPTH`] levels.

use super::primitive::{Reader, Writer};
use crate::Error;
use crate::model::*;

/// How deep values may nest inside values before decoding gives up.
pub const MAX_DEPTH: u32 = 32;

/// A Rust type with a PMIx data type and its v41 encoding.
pub trait Codec: Sized {
    /// The type code a pack call of this type carries.
    const DATA_TYPE: DataType;
    /// Append the payload of one value.
    fn encode(&self, w: &mut Writer) -> Result<(), Error>;
    /// Read the payload of one value.
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error>;
}

fn nested(depth: u32) -> Result<u32, Error> {
    if depth >= MAX_DEPTH {
        return Err(Error::decode(
            Status::ERR_UNPACK_FAILURE,
            format!("values nested more than {MAX_DEPTH} deep"),
        ));
    }
    Ok(depth + 1)
}

macro_rules! codec_scalar {
    ($t:ty, $dt:ident, |$w:ident, $v:ident| $enc:expr, |$r:ident| $dec:expr) => {
        impl Codec for $t {
            const DATA_TYPE: DataType = DataType::$dt;
            fn encode(&self, $w: &mut Writer) -> Result<(), Error> {
                let $v = *self;
                $enc;
                Ok(())
            }
            #[allow(unused_braces)] // multi-line decoders are written as blocks
            fn decode($r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
                $dec
            }
        }
    };
}

codec_scalar!(bool, BOOL, |w, v| w.byte(u8::from(v)), |r| Ok(r
    .byte("bool")?
    != 0));
codec_scalar!(u8, UINT8, |w, v| w.byte(v), |r| r.byte("uint8"));
codec_scalar!(i8, INT8, |w, v| w.byte(v as u8), |r| Ok(
    r.byte("int8")? as i8
));
codec_scalar!(i16, INT16, |w, v| w.zigzag(i64::from(v)), |r| r
    .int16("int16"));
codec_scalar!(i32, INT32, |w, v| w.int32(v), |r| r.int32("int32"));
codec_scalar!(i64, INT64, |w, v| w.zigzag(v), |r| r.zigzag("int64"));
codec_scalar!(u16, UINT16, |w, v| w.varint(u64::from(v)), |r| r
    .uint16("uint16"));
codec_scalar!(u32, UINT32, |w, v| w.varint(u64::from(v)), |r| r
    .uint32("uint32"));
codec_scalar!(u64, UINT64, |w, v| w.varint(v), |r| r.varint("uint64"));
codec_scalar!(f32, FLOAT, |w, v| w.float(f64::from(v), true)?, |r| Ok(
    narrow_float(r.float("float")?)
));

/// A float travels as the text of an `f32`; reading it back as `f64` and narrowing is exact.
#[allow(clippy::cast_possible_truncation)]
fn narrow_float(v: f64) -> f32 {
    v as f32
}
codec_scalar!(f64, DOUBLE, |w, v| w.float(v, false)?, |r| r
    .float("double"));
codec_scalar!(Status, STATUS, |w, v| w.int32(v.0), |r| Ok(Status(
    r.int32("status")?
)));
codec_scalar!(Rank, PROC_RANK, |w, v| w.varint(u64::from(v.0)), |r| Ok(
    Rank(r.uint32("rank")?)
));
codec_scalar!(DataType, DATA_TYPE, |w, v| w.data_type(v), |r| r
    .data_type("data type"));
codec_scalar!(
    InfoDirectives,
    INFO_DIRECTIVES,
    |w, v| w.varint(u64::from(v.0)),
    |r| { Ok(InfoDirectives(r.uint32("info directives")?)) }
);
codec_scalar!(Scope, SCOPE, |w, v| w.byte(v.0), |r| Ok(Scope(
    r.byte("scope")?
)));
codec_scalar!(DataRange, DATA_RANGE, |w, v| w.byte(v.0), |r| Ok(
    DataRange(r.byte("range")?)
));
codec_scalar!(Persistence, PERSIST, |w, v| w.byte(v.0), |r| Ok(
    Persistence(r.byte("persistence")?)
));
codec_scalar!(ProcState, PROC_STATE, |w, v| w.byte(v.0), |r| Ok(
    ProcState(r.byte("proc state")?)
));
codec_scalar!(JobState, JOB_STATE, |w, v| w.byte(v.0), |r| Ok(JobState(
    r.byte("job state")?
)));
codec_scalar!(LinkState, LINK_STATE, |w, v| w.byte(v.0), |r| Ok(
    LinkState(r.byte("link state")?)
));
codec_scalar!(AllocDirective, ALLOC_DIRECTIVE, |w, v| w.byte(v.0), |r| {
    Ok(AllocDirective(r.byte("alloc directive")?))
});
codec_scalar!(
    IofChannel,
    IOF_CHANNEL,
    |w, v| w.varint(u64::from(v.0)),
    |r| { Ok(IofChannel(r.uint16("iof channel")?)) }
);
codec_scalar!(DeviceType, DEVTYPE, |w, v| w.varint(v.0), |r| Ok(
    DeviceType(r.varint("device type")?)
));
codec_scalar!(Locality, LOCTYPE, |w, v| w.varint(u64::from(v.0)), |r| Ok(
    Locality(r.uint16("locality")?)
));
codec_scalar!(StorageMedium, STOR_MEDIUM, |w, v| w.varint(v.0), |r| {
    Ok(StorageMedium(r.varint("storage medium")?))
});
codec_scalar!(
    StorageAccessibility,
    STOR_ACCESS,
    |w, v| w.varint(v.0),
    |r| { Ok(StorageAccessibility(r.varint("storage accessibility")?)) }
);
codec_scalar!(
    StoragePersistence,
    STOR_PERSIST,
    |w, v| w.varint(v.0),
    |r| { Ok(StoragePersistence(r.varint("storage persistence")?)) }
);
codec_scalar!(
    StorageAccessType,
    STOR_ACCESS_TYPE,
    |w, v| w.varint(u64::from(v.0)),
    |r| { Ok(StorageAccessType(r.uint16("storage access type")?)) }
);
codec_scalar!(Time, TIME, |w, v| w.varint(v.0 as u64), |r| Ok(Time(
    r.varint("time")? as i64
)));
codec_scalar!(
    Timeval,
    TIMEVAL,
    |w, v| {
        w.zigzag(v.sec);
        w.zigzag(v.usec)
    },
    |r| Ok(Timeval {
        sec: r.zigzag("timeval")?,
        usec: r.zigzag("timeval")?
    })
);
codec_scalar!(Pointer, POINTER, |w, _v| w.byte(1), |r| {
    // The placeholder byte says nothing; an address cannot cross processes.
    r.byte("pointer")?;
    Ok(Pointer(0))
});

impl Codec for Option<String> {
    const DATA_TYPE: DataType = DataType::STRING;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(self.as_deref())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        r.string("string")
    }
}

impl Codec for Option<Text> {
    const DATA_TYPE: DataType = DataType::STRING;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.text(self.as_ref().map(Text::as_bytes))
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        r.text("string")
    }
}

impl Codec for String {
    const DATA_TYPE: DataType = DataType::STRING;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(Some(self))
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        Ok(r.string("string")?.unwrap_or_default())
    }
}

/// `PMIX_SIZE` (`size_t`), a distinct type from `u64` only in the type code it carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);
codec_scalar!(Size, SIZE, |w, v| w.size(v.0), |r| Ok(Size(
    r.varint("size")?
)));

/// `PMIX_PID`: OpenPMIx writes a `UINT32` type tag before the number, in both buffer types.
fn encode_pid(w: &mut Writer, pid: Pid) {
    w.data_type(DataType::UINT32);
    w.varint(u64::from(pid as u32));
}

fn decode_pid(r: &mut Reader<'_>) -> Result<Pid, Error> {
    let tag = r.data_type("pid type")?;
    if tag != DataType::UINT32 {
        return Err(Error::decode(
            Status::ERR_PACK_MISMATCH,
            format!("pid carries type {} instead of PMIX_UINT32", tag.0),
        ));
    }
    Ok(r.uint32("pid")? as i32)
}

fn nspace_of(s: Option<String>, what: &str) -> Result<Nspace, Error> {
    let s = s.unwrap_or_default();
    if s.len() > MAX_NSLEN as usize {
        return Err(Error::decode(
            Status::ERR_UNPACK_FAILURE,
            format!("{what}: namespace too long"),
        ));
    }
    Ok(Nspace::from_checked(s))
}

fn key_of(s: Option<String>, what: &str) -> Result<Key, Error> {
    let s = s.unwrap_or_default();
    if s.len() > MAX_KEYLEN as usize {
        return Err(Error::decode(
            Status::ERR_UNPACK_FAILURE,
            format!("{what}: key too long"),
        ));
    }
    Ok(Key::from_checked(s))
}

impl Codec for Proc {
    const DATA_TYPE: DataType = DataType::PROC;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(Some(self.nspace.as_str()))?;
        w.varint(u64::from(self.rank.0));
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        let nspace = nspace_of(r.string("proc nspace")?, "proc")?;
        Ok(Proc {
            nspace,
            rank: Rank(r.uint32("proc rank")?),
        })
    }
}

impl Codec for Nspace {
    const DATA_TYPE: DataType = DataType::PROC_NSPACE;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(Some(self.as_str()))
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        nspace_of(r.string("nspace")?, "nspace")
    }
}

impl Codec for ByteObject {
    const DATA_TYPE: DataType = DataType::BYTE_OBJECT;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.sized_bytes(&self.0);
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        Ok(ByteObject(r.sized_bytes("byte object")?))
    }
}

impl Codec for Value {
    const DATA_TYPE: DataType = DataType::VALUE;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.data_type(self.data_type());
        encode_payload(w, self)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let t = r.data_type("value type")?;
        decode_payload(r, t, nested(depth)?)
    }
}

impl Codec for Info {
    const DATA_TYPE: DataType = DataType::INFO;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(Some(self.key.as_str()))?;
        w.varint(u64::from(self.flags.0));
        self.value.encode(w)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let key = key_of(r.string("info key")?, "info")?;
        let flags = InfoDirectives(r.uint32("info flags")?);
        let value = Value::decode(r, depth)?;
        Ok(Info { key, flags, value })
    }
}

impl Codec for PData {
    const DATA_TYPE: DataType = DataType::PDATA;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        self.proc.encode(w)?;
        w.string(Some(self.key.as_str()))?;
        self.value.encode(w)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let proc = Proc::decode(r, depth)?;
        let key = key_of(r.string("pdata key")?, "pdata")?;
        Ok(PData {
            proc,
            key,
            value: Value::decode(r, depth)?,
        })
    }
}

impl Codec for Kval {
    const DATA_TYPE: DataType = DataType::KVAL;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(Some(self.key.as_str()))?;
        self.value.encode(w)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let key = key_of(r.string("kval key")?, "kval")?;
        Ok(Kval {
            key,
            value: Value::decode(r, depth)?,
        })
    }
}

impl Codec for Envar {
    const DATA_TYPE: DataType = DataType::ENVAR;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.text(self.envar.as_ref().map(Text::as_bytes))?;
        w.text(self.value.as_ref().map(Text::as_bytes))?;
        w.byte(self.separator);
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        Ok(Envar {
            envar: r.text("envar name")?,
            value: r.text("envar value")?,
            separator: r.byte("envar separator")?,
        })
    }
}

fn encode_strings(w: &mut Writer, items: &[Option<String>]) -> Result<(), Error> {
    items.iter().try_for_each(|s| w.string(s.as_deref()))
}

fn decode_strings(r: &mut Reader<'_>, n: usize, what: &str) -> Result<Vec<Option<String>>, Error> {
    (0..n).map(|_| r.string(what)).collect()
}

fn encode_texts(w: &mut Writer, items: &[Option<Text>]) -> Result<(), Error> {
    items
        .iter()
        .try_for_each(|s| w.text(s.as_ref().map(Text::as_bytes)))
}

fn decode_texts(r: &mut Reader<'_>, n: usize, what: &str) -> Result<Vec<Option<Text>>, Error> {
    (0..n).map(|_| r.text(what)).collect()
}

fn encode_infos(w: &mut Writer, infos: &[Info]) -> Result<(), Error> {
    w.size(infos.len() as u64);
    infos.iter().try_for_each(|i| i.encode(w))
}

fn decode_infos(r: &mut Reader<'_>, depth: u32, what: &str) -> Result<Vec<Info>, Error> {
    let n = r.size_count(what, 3)?;
    (0..n).map(|_| Info::decode(r, depth)).collect()
}

impl Codec for App {
    const DATA_TYPE: DataType = DataType::APP;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.text(self.cmd.as_ref().map(Text::as_bytes))?;
        w.length(self.argv.len())?;
        encode_texts(w, &self.argv)?;
        w.length(self.env.len())?;
        encode_texts(w, &self.env)?;
        w.text(self.cwd.as_ref().map(Text::as_bytes))?;
        w.int32(self.maxprocs);
        encode_infos(w, &self.info)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let depth = nested(depth)?;
        let cmd = r.text("app cmd")?;
        let argc = r.count("app argc", 1)?;
        let argv = decode_texts(r, argc, "app argv")?;
        let envc = r.count("app envc", 1)?;
        let env = decode_texts(r, envc, "app env")?;
        let cwd = r.text("app cwd")?;
        let maxprocs = r.int32("app maxprocs")?;
        let info = decode_infos(r, depth, "app ninfo")?;
        Ok(App {
            cmd,
            argv,
            env,
            cwd,
            maxprocs,
            info,
        })
    }
}

impl Codec for Query {
    const DATA_TYPE: DataType = DataType::QUERY;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.length(self.keys.len())?;
        encode_strings(w, &self.keys)?;
        encode_infos(w, &self.qualifiers)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let depth = nested(depth)?;
        let n = r.count("query nkeys", 1)?;
        let keys = decode_strings(r, n, "query key")?;
        Ok(Query {
            keys,
            qualifiers: decode_infos(r, depth, "query nqual")?,
        })
    }
}

impl Codec for ProcInfo {
    const DATA_TYPE: DataType = DataType::PROC_INFO;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        self.proc.encode(w)?;
        w.text(self.hostname.as_ref().map(Text::as_bytes))?;
        w.text(self.executable_name.as_ref().map(Text::as_bytes))?;
        encode_pid(w, self.pid);
        w.byte(self.state.0);
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        Ok(ProcInfo {
            proc: Proc::decode(r, depth)?,
            hostname: r.text("proc info hostname")?,
            executable_name: r.text("proc info executable")?,
            pid: decode_pid(r)?,
            exit_code: 0,
            state: ProcState(r.byte("proc info state")?),
        })
    }
}

impl Codec for DataArray {
    const DATA_TYPE: DataType = DataType::DATA_ARRAY;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.data_type(self.data_type);
        w.size(self.elements.len() as u64);
        for v in &self.elements {
            if v.data_type() != self.data_type {
                return Err(Error::Encode {
                    status: Status::ERR_PACK_FAILURE,
                    reason: format!(
                        "data array of type {} holds a value of type {}",
                        self.data_type.0,
                        v.data_type().0
                    ),
                });
            }
            encode_payload(w, v)?;
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let depth = nested(depth)?;
        let data_type = r.data_type("data array type")?;
        let n = r.size_count("data array size", 1)?;
        // Undefined elements have no payload: a count of them would say nothing and could
        // not be bounded by the bytes left.
        if data_type == DataType::UNDEF && n > 0 {
            return Err(Error::decode(
                Status::ERR_UNPACK_FAILURE,
                "data array of PMIX_UNDEF elements",
            ));
        }
        let elements = (0..n)
            .map(|_| decode_payload(r, data_type, depth))
            .collect::<Result<_, _>>()?;
        Ok(DataArray {
            data_type,
            elements,
        })
    }
}

/// Append the payload of `v` (without its type code).
pub fn encode_payload(w: &mut Writer, v: &Value) -> Result<(), Error> {
    match v {
        Value::Undef => Ok(()),
        Value::Bool(x) => x.encode(w),
        Value::Byte(x) | Value::Uint8(x) => x.encode(w),
        Value::String(x) => x.encode(w),
        Value::Size(x) => Size(*x).encode(w),
        Value::Pid(x) => {
            encode_pid(w, *x);
            Ok(())
        }
        // C `int` is a zigzag INT32; `unsigned int` is sent as the INT32 of its bits.
        Value::Int(x) | Value::Int32(x) => x.encode(w),
        Value::Uint(x) => (*x as i32).encode(w),
        Value::Int8(x) => x.encode(w),
        Value::Int16(x) => x.encode(w),
        Value::Int64(x) => x.encode(w),
        Value::Uint16(x) => x.encode(w),
        Value::Uint32(x) => x.encode(w),
        Value::Uint64(x) => x.encode(w),
        Value::Float(x) => x.encode(w),
        Value::Double(x) => x.encode(w),
        Value::Timeval(x) => x.encode(w),
        Value::Time(x) => x.encode(w),
        Value::Status(x) => x.encode(w),
        Value::Value(x) => x.encode(w),
        Value::Proc(x) => x.encode(w),
        Value::App(x) => x.encode(w),
        Value::Info(x) => x.encode(w),
        Value::PData(x) => x.encode(w),
        Value::Buffer(x) => {
            w.byte(x.buffer_type);
            w.sized_bytes(&x.bytes);
            Ok(())
        }
        Value::ByteObject(x) => x.encode(w),
        Value::Kval(x) => x.encode(w),
        Value::Persist(x) => x.encode(w),
        Value::Pointer(x) => x.encode(w),
        Value::Scope(x) => x.encode(w),
        Value::DataRange(x) => x.encode(w),
        Value::Command(x) => x.encode(w),
        Value::InfoDirectives(x) => x.encode(w),
        Value::DataType(x) => x.encode(w),
        Value::ProcState(x) => x.encode(w),
        Value::ProcInfo(x) => x.encode(w),
        Value::DataArray(x) => x.encode(w),
        Value::Rank(x) => x.encode(w),
        Value::Query(x) => x.encode(w),
        Value::CompressedString(x) | Value::CompressedByteObject(x) => x.encode(w),
        Value::AllocDirective(x) => x.encode(w),
        Value::IofChannel(x) => x.encode(w),
        Value::Envar(x) => x.encode(w),
        Value::Coord(x) => x.encode(w),
        Value::RegAttr(x) => x.encode(w),
        Value::Regex(x) => {
            super::regex::encode(w, &x.0);
            Ok(())
        }
        Value::JobState(x) => x.encode(w),
        Value::LinkState(x) => x.encode(w),
        Value::ProcCpuset(x) => x.encode(w),
        Value::Geometry(x) => x.encode(w),
        Value::DeviceDist(x) => x.encode(w),
        Value::Endpoint(x) => x.encode(w),
        Value::Topo(x) => x.encode(w),
        Value::DevType(x) => x.encode(w),
        Value::LocType(x) => x.encode(w),
        Value::ProcNspace(x) => x.encode(w),
        Value::ProcStats(x) => x.encode(w),
        Value::DiskStats(x) => x.encode(w),
        Value::NetStats(x) => x.encode(w),
        Value::NodeStats(x) => x.encode(w),
        Value::DataBuffer(x) => {
            w.sized_bytes(&x.bytes);
            Ok(())
        }
        Value::StorMedium(x) => x.encode(w),
        Value::StorAccess(x) => x.encode(w),
        Value::StorPersist(x) => x.encode(w),
        Value::StorAccessType(x) => x.encode(w),
    }
}

/// Read the payload of a value of type `t`.
pub fn decode_payload(r: &mut Reader<'_>, t: DataType, depth: u32) -> Result<Value, Error> {
    fn d<T: Codec>(r: &mut Reader<'_>, depth: u32) -> Result<T, Error> {
        T::decode(r, depth)
    }
    Ok(match t {
        DataType::UNDEF => Value::Undef,
        DataType::BOOL => Value::Bool(d(r, depth)?),
        DataType::BYTE => Value::Byte(d(r, depth)?),
        DataType::STRING => Value::String(d(r, depth)?),
        DataType::SIZE => Value::Size(d::<Size>(r, depth)?.0),
        DataType::PID => Value::Pid(decode_pid(r)?),
        DataType::INT => Value::Int(d(r, depth)?),
        DataType::INT8 => Value::Int8(d(r, depth)?),
        DataType::INT16 => Value::Int16(d(r, depth)?),
        DataType::INT32 => Value::Int32(d(r, depth)?),
        DataType::INT64 => Value::Int64(d(r, depth)?),
        DataType::UINT => Value::Uint(d::<i32>(r, depth)? as u32),
        DataType::UINT8 => Value::Uint8(d(r, depth)?),
        DataType::UINT16 => Value::Uint16(d(r, depth)?),
        DataType::UINT32 => Value::Uint32(d(r, depth)?),
        DataType::UINT64 => Value::Uint64(d(r, depth)?),
        DataType::FLOAT => Value::Float(d(r, depth)?),
        DataType::DOUBLE => Value::Double(d(r, depth)?),
        DataType::TIMEVAL => Value::Timeval(d(r, depth)?),
        DataType::TIME => Value::Time(d(r, depth)?),
        DataType::STATUS => Value::Status(d(r, depth)?),
        DataType::VALUE => Value::Value(Box::new(Value::decode(r, depth)?)),
        DataType::PROC => Value::Proc(d(r, depth)?),
        DataType::APP => Value::App(Box::new(d(r, depth)?)),
        DataType::INFO => Value::Info(Box::new(d(r, depth)?)),
        DataType::PDATA => Value::PData(Box::new(d(r, depth)?)),
        DataType::BUFFER => {
            let buffer_type = r.byte("buffer type")?;
            Value::Buffer(Box::new(Buffer {
                buffer_type,
                bytes: r.sized_bytes("buffer")?,
            }))
        }
        DataType::BYTE_OBJECT => Value::ByteObject(d(r, depth)?),
        DataType::KVAL => Value::Kval(Box::new(d(r, depth)?)),
        DataType::PERSIST => Value::Persist(d(r, depth)?),
        DataType::POINTER => Value::Pointer(d(r, depth)?),
        DataType::SCOPE => Value::Scope(d(r, depth)?),
        DataType::DATA_RANGE => Value::DataRange(d(r, depth)?),
        DataType::COMMAND => Value::Command(d(r, depth)?),
        DataType::INFO_DIRECTIVES => Value::InfoDirectives(d(r, depth)?),
        DataType::DATA_TYPE => Value::DataType(d(r, depth)?),
        DataType::PROC_STATE => Value::ProcState(d(r, depth)?),
        DataType::PROC_INFO => Value::ProcInfo(Box::new(d(r, depth)?)),
        DataType::DATA_ARRAY => Value::DataArray(Box::new(d(r, depth)?)),
        DataType::PROC_RANK => Value::Rank(d(r, depth)?),
        DataType::QUERY => Value::Query(Box::new(d(r, depth)?)),
        DataType::COMPRESSED_STRING => Value::CompressedString(d(r, depth)?),
        DataType::ALLOC_DIRECTIVE => Value::AllocDirective(d(r, depth)?),
        DataType::IOF_CHANNEL => Value::IofChannel(d(r, depth)?),
        DataType::ENVAR => Value::Envar(Box::new(d(r, depth)?)),
        DataType::COORD => Value::Coord(Box::new(d(r, depth)?)),
        DataType::REGATTR => Value::RegAttr(Box::new(d(r, depth)?)),
        DataType::REGEX => Value::Regex(ByteObject(super::regex::decode(r)?)),
        DataType::JOB_STATE => Value::JobState(d(r, depth)?),
        DataType::LINK_STATE => Value::LinkState(d(r, depth)?),
        DataType::PROC_CPUSET => Value::ProcCpuset(Box::new(d(r, depth)?)),
        DataType::GEOMETRY => Value::Geometry(Box::new(d(r, depth)?)),
        DataType::DEVICE_DIST => Value::DeviceDist(Box::new(d(r, depth)?)),
        DataType::ENDPOINT => Value::Endpoint(Box::new(d(r, depth)?)),
        DataType::TOPO => Value::Topo(Box::new(d(r, depth)?)),
        DataType::DEVTYPE => Value::DevType(d(r, depth)?),
        DataType::LOCTYPE => Value::LocType(d(r, depth)?),
        DataType::COMPRESSED_BYTE_OBJECT => Value::CompressedByteObject(d(r, depth)?),
        DataType::PROC_NSPACE => Value::ProcNspace(d(r, depth)?),
        DataType::PROC_STATS => Value::ProcStats(Box::new(d(r, depth)?)),
        DataType::DISK_STATS => Value::DiskStats(Box::new(d(r, depth)?)),
        DataType::NET_STATS => Value::NetStats(Box::new(d(r, depth)?)),
        DataType::NODE_STATS => Value::NodeStats(Box::new(d(r, depth)?)),
        DataType::DATA_BUFFER => Value::DataBuffer(Box::new(Buffer {
            buffer_type: 0,
            bytes: r.sized_bytes("data buffer")?,
        })),
        DataType::STOR_MEDIUM => Value::StorMedium(d(r, depth)?),
        DataType::STOR_ACCESS => Value::StorAccess(d(r, depth)?),
        DataType::STOR_PERSIST => Value::StorPersist(d(r, depth)?),
        DataType::STOR_ACCESS_TYPE => Value::StorAccessType(d(r, depth)?),
        other => {
            return Err(Error::decode(
                Status::ERR_UNKNOWN_DATA_TYPE,
                format!("no decoder for data type {}", other.0),
            ));
        }
    })
}
