//! The support functions of v5.0 as steps: the `*_string` forms (§3.5), the value and info
//! helpers (§3.2.8, §3.2.9), the buffer operations of chapter 11 and the topology helpers of
//! §12.4. A step is resolved for its caller into a [`SupportCall`]; [`run_rust`] runs it on
//! this crate, `crate::ffi::run_api` through a library's C functions.
//!
//! Each call observes the effect the standard defines, never only a status: the text of a
//! string function, the values a buffer gives back after a pack and the moves around it,
//! the copy, what a structure holds after a load or a transfer, a round trip through
//! compression, a topology, a parsed cpuset, the memory a destruct releases.
//!
//! The C structure helpers (`PMIx_Value_load`, `_unload`, `_xfer`, `PMIx_Info_load`,
//! `_xfer` and the `PMIx_Info_list_*` family) fill and copy C structures whose memory their
//! caller manages. The Rust API has nothing to call for them: its values own their data
//! (`Value` and `Info` constructors, `Clone`, a `Vec<Info>`), so [`run_rust`] answers
//! `PMIX_ERR_NOT_SUPPORTED` and the vectors name it. They come with the crate's C ABI (the
//! `capi` layer of the design).

use pmix::codec::{self, DataBuffer};
use pmix::model::strings;
use pmix::model::{
    AllocDirective, DataArray, DataRange, DataType, DeviceType, Info, InfoDirectives, IofChannel,
    JobState, LinkState, Persistence, ProcState, Scope, Status, Value,
};

use super::ApiOutput;
use crate::vector::{Call, CodeArg, InfoSpec, ValueSpec};

/// A string function of v5.0 §3.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringFunction {
    Error,
    ProcState,
    Scope,
    Persistence,
    DataRange,
    InfoDirectives,
    DataType,
    AllocDirective,
    IofChannel,
    JobState,
    LinkState,
    DeviceType,
    AttributeString,
    AttributeName,
}

const STRING_FUNCTIONS: [(StringFunction, &str); 14] = [
    (StringFunction::Error, "PMIx_Error_string"),
    (StringFunction::ProcState, "PMIx_Proc_state_string"),
    (StringFunction::Scope, "PMIx_Scope_string"),
    (StringFunction::Persistence, "PMIx_Persistence_string"),
    (StringFunction::DataRange, "PMIx_Data_range_string"),
    (
        StringFunction::InfoDirectives,
        "PMIx_Info_directives_string",
    ),
    (StringFunction::DataType, "PMIx_Data_type_string"),
    (
        StringFunction::AllocDirective,
        "PMIx_Alloc_directive_string",
    ),
    (StringFunction::IofChannel, "PMIx_IOF_channel_string"),
    (StringFunction::JobState, "PMIx_Job_state_string"),
    (StringFunction::LinkState, "PMIx_Link_state_string"),
    (StringFunction::DeviceType, "PMIx_Device_type_string"),
    (StringFunction::AttributeString, "PMIx_Get_attribute_string"),
    (StringFunction::AttributeName, "PMIx_Get_attribute_name"),
];

/// The string function of this C name.
pub fn string_function(c_name: &str) -> Option<StringFunction> {
    STRING_FUNCTIONS
        .iter()
        .find(|(_, n)| *n == c_name)
        .map(|(f, _)| *f)
}

impl StringFunction {
    pub fn c_name(self) -> &'static str {
        STRING_FUNCTIONS
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("", |(_, n)| n)
    }

    /// Whether the argument is a text (an attribute's name or key) rather than a code.
    pub fn takes_text(self) -> bool {
        matches!(
            self,
            StringFunction::AttributeString | StringFunction::AttributeName
        )
    }

    /// The number of the constant named `name` in the function's code set.
    fn code(self, name: &str) -> Option<i64> {
        Some(match self {
            StringFunction::Error => pmix::model::Status::from_name(name)?.0.into(),
            StringFunction::ProcState => ProcState::from_name(name)?.0.into(),
            StringFunction::Scope => Scope::from_name(name)?.0.into(),
            StringFunction::Persistence => Persistence::from_name(name)?.0.into(),
            StringFunction::DataRange => DataRange::from_name(name)?.0.into(),
            StringFunction::InfoDirectives => InfoDirectives::from_name(name)?.0.into(),
            StringFunction::DataType => DataType::from_name(name)?.0.into(),
            StringFunction::AllocDirective => AllocDirective::from_name(name)?.0.into(),
            StringFunction::IofChannel => IofChannel::from_name(name)?.0.into(),
            StringFunction::JobState => JobState::from_name(name)?.0.into(),
            StringFunction::LinkState => LinkState::from_name(name)?.0.into(),
            StringFunction::DeviceType => i64::try_from(DeviceType::from_name(name)?.0).ok()?,
            StringFunction::AttributeString | StringFunction::AttributeName => return None,
        })
    }
}

/// A string function's argument: a code's number, or the text of an attribute function.
#[derive(Clone, Debug, PartialEq)]
pub enum StringArg {
    Code(i64),
    Text(String),
}

/// A support step resolved for its caller.
#[derive(Clone, Debug)]
pub enum SupportCall {
    String {
        function: StringFunction,
        arg: StringArg,
    },
    /// Values of `data_type` packed in one call; `pack_as` is the type code the pack names.
    DataPack {
        data_type: DataType,
        values: Vec<Value>,
        pack_as: DataType,
        max: u32,
        past_end: bool,
    },
    DataCopy {
        value: Value,
    },
    DataPrint {
        value: Value,
        prefix: String,
    },
    DataUnload {
        data_type: DataType,
        values: Vec<Value>,
    },
    DataEmbed {
        data_type: DataType,
        values: Vec<Value>,
    },
    DataCopyPayload {
        data_type: DataType,
        values: Vec<Value>,
    },
    DataCompress {
        input: Vec<u8>,
    },
    ValueLoad {
        value: Value,
    },
    ValueUnload {
        value: Value,
    },
    ValueXfer {
        value: Value,
    },
    InfoLoad {
        info: Info,
    },
    InfoXfer {
        info: Info,
    },
    InfoList {
        add: Vec<Info>,
        xfer: Vec<Info>,
    },
    LoadTopology {
        source: Option<String>,
    },
    TopologyDestruct,
    ParseCpusetString {
        cpuset: String,
    },
}

/// The size of one value of type `t` as the C API lays it out (`openpmix/ABI.md` §2.4 on
/// x86-64), for the types a support step moves through C memory: the scalars, strings
/// (pointers), byte objects, processes, infos and environment variables. `None`: a type the
/// harness does not lay out, which loading refuses.
pub fn c_size(t: DataType) -> Option<usize> {
    Some(match t {
        DataType::BOOL
        | DataType::BYTE
        | DataType::INT8
        | DataType::UINT8
        | DataType::PERSIST
        | DataType::SCOPE
        | DataType::DATA_RANGE
        | DataType::PROC_STATE => 1,
        DataType::INT16 | DataType::UINT16 => 2,
        DataType::PID
        | DataType::INT
        | DataType::INT32
        | DataType::UINT
        | DataType::UINT32
        | DataType::FLOAT
        | DataType::STATUS
        | DataType::PROC_RANK => 4,
        DataType::STRING
        | DataType::SIZE
        | DataType::INT64
        | DataType::UINT64
        | DataType::DOUBLE
        | DataType::TIME => 8,
        DataType::TIMEVAL | DataType::BYTE_OBJECT => 16,
        DataType::ENVAR => 24,
        DataType::PROC => 260,
        DataType::INFO => 552,
        _ => return None,
    })
}

/// Resolve a support step; `None` for the calls of the other chapters.
pub(super) fn resolve(call: &Call, nspace: &str) -> Result<Option<SupportCall>, String> {
    let value = |v: &ValueSpec| {
        v.to_value(nspace)
            .map_err(|e| format!("field `value`: {e}"))
    };
    let info = |i: &InfoSpec| i.to_info(nspace).map_err(|e| format!("field `info`: {e}"));
    let infos = |list: &[InfoSpec]| list.iter().map(info).collect::<Result<Vec<_>, _>>();
    Ok(Some(match call {
        Call::String { function, arg } => {
            let f = string_function(function).ok_or_else(|| {
                format!("field `function`: {function} is not a string function of v5.0 §3.5")
            })?;
            let arg = match (arg, f.takes_text()) {
                (CodeArg::Name(text), true) => StringArg::Text(text.clone()),
                (CodeArg::Number(n), false) => StringArg::Code(*n),
                (CodeArg::Name(name), false) => StringArg::Code(f.code(name).ok_or_else(|| {
                    format!("field `arg`: {name} is no constant of {function}'s type")
                })?),
                (CodeArg::Number(_), true) => {
                    return Err(format!("field `arg`: {function} takes a text"));
                }
            };
            SupportCall::String { function: f, arg }
        }
        Call::DataPack {
            values,
            data_type,
            max,
            past_end,
        } => {
            let (t, values) = array(values, nspace, 1)?;
            let pack_as = match data_type {
                None => t,
                Some(CodeArg::Name(n)) => DataType::from_name(n)
                    .ok_or_else(|| format!("field `type`: no data type is named {n}"))?,
                Some(CodeArg::Number(n)) => DataType(
                    u16::try_from(*n).map_err(|_| format!("field `type`: {n} is no type code"))?,
                ),
            };
            let packed = u32::try_from(values.len()).map_err(|_| "too many values")?;
            SupportCall::DataPack {
                data_type: t,
                values,
                pack_as,
                max: max.unwrap_or(packed),
                past_end: *past_end,
            }
        }
        Call::DataCopy { value: v } => SupportCall::DataCopy {
            value: laid_out(value(v)?)?,
        },
        Call::DataPrint { value: v, prefix } => SupportCall::DataPrint {
            value: laid_out(value(v)?)?,
            prefix: prefix.clone(),
        },
        Call::DataUnload { values } => {
            let (data_type, values) = array(values, nspace, 2)?;
            SupportCall::DataUnload { data_type, values }
        }
        Call::DataEmbed { values } => {
            let (data_type, values) = array(values, nspace, 2)?;
            SupportCall::DataEmbed { data_type, values }
        }
        Call::DataCopyPayload { values } => {
            let (data_type, values) = array(values, nspace, 2)?;
            SupportCall::DataCopyPayload { data_type, values }
        }
        Call::DataCompress { text, repeat } => {
            if text.is_empty() || *repeat == 0 || text.len().saturating_mul(*repeat) > 1 << 24 {
                return Err("fields `text` and `repeat`: 1 byte to 16 MiB of input".into());
            }
            SupportCall::DataCompress {
                input: text.repeat(*repeat).into_bytes(),
            }
        }
        Call::ValueLoad { value: v } => SupportCall::ValueLoad {
            value: laid_out(value(v)?)?,
        },
        Call::ValueUnload { value: v } => {
            let v = value(v)?;
            let t = v.data_type();
            if t != DataType::STRING && !(c_size(t).is_some() && is_number(t)) {
                return Err("field `value`: value_unload takes a string or a number".into());
            }
            SupportCall::ValueUnload { value: v }
        }
        Call::ValueXfer { value: v } => SupportCall::ValueXfer { value: value(v)? },
        Call::InfoLoad { info: i } => SupportCall::InfoLoad {
            info: laid_out_info(info(i)?)?,
        },
        Call::InfoXfer { info: i } => SupportCall::InfoXfer { info: info(i)? },
        Call::InfoList { add, xfer } => {
            if add.is_empty() && xfer.is_empty() {
                return Err("fields `add` and `xfer`: the list needs an info".into());
            }
            SupportCall::InfoList {
                add: infos(add)?
                    .into_iter()
                    .map(laid_out_info)
                    .collect::<Result<_, _>>()?,
                xfer: infos(xfer)?,
            }
        }
        Call::LoadTopology { source } => SupportCall::LoadTopology {
            source: source.clone(),
        },
        Call::TopologyDestruct => SupportCall::TopologyDestruct,
        Call::ParseCpusetString { cpuset } => SupportCall::ParseCpusetString {
            cpuset: cpuset.clone(),
        },
        _ => return Ok(None),
    }))
}

/// An array's element type and elements, at least `min` of them, of a type laid out in C.
fn array(v: &ValueSpec, nspace: &str, min: usize) -> Result<(DataType, Vec<Value>), String> {
    let at = |e: String| format!("field `values`: {e}");
    let Value::DataArray(a) = v.to_value(nspace).map_err(at)? else {
        return Err(at("an array (`array` or `info_array`) of the values".into()));
    };
    if a.elements.len() < min {
        return Err(at(format!("at least {min} values")));
    }
    if c_size(a.data_type).is_none() {
        return Err(at(format!(
            "the harness lays out no {} in C",
            type_name(a.data_type)
        )));
    }
    Ok((a.data_type, a.elements))
}

/// A single value of a type the harness lays out in C.
fn laid_out(v: Value) -> Result<Value, String> {
    match c_size(v.data_type()) {
        Some(_) => Ok(v),
        None => Err(format!(
            "field `value`: the harness lays out no {} in C",
            type_name(v.data_type())
        )),
    }
}

fn laid_out_info(i: Info) -> Result<Info, String> {
    laid_out(i.value.clone()).map(|_| i)
}

fn is_number(t: DataType) -> bool {
    !matches!(
        t,
        DataType::STRING
            | DataType::BYTE_OBJECT
            | DataType::ENVAR
            | DataType::PROC
            | DataType::INFO
    )
}

fn type_name(t: DataType) -> String {
    t.name().map_or_else(|| t.0.to_string(), str::to_owned)
}

/// An array value of `elements` of type `t`, as a step's value.
pub fn array_of(t: DataType, elements: Vec<Value>) -> Value {
    Value::DataArray(Box::new(DataArray {
        data_type: t,
        elements,
    }))
}

/// The results of a compression round trip.
pub fn compression_results(
    compressed: bool,
    smaller: bool,
    restored: bool,
) -> Result<Vec<Info>, Status> {
    let mut out = vec![("compressed", compressed)];
    if compressed {
        out.extend([("smaller", smaller), ("restored", restored)]);
    }
    out.into_iter()
        .map(|(k, b)| Info::with_key(k, Value::Bool(b)).map_err(|e| e.status()))
        .collect()
}

/// How much the heap must shrink for a destruct to count as releasing a topology.
pub const RELEASED_AT_LEAST: usize = 1024;

/// Run `call` on this crate: the client's topology, the model's string functions and the
/// codec.
pub async fn run_rust(c: &pmix::client::Client, call: SupportCall) -> ApiOutput {
    match call {
        SupportCall::String { function, arg } => ApiOutput::value(Ok(string_of(function, arg))),
        SupportCall::DataPack {
            data_type,
            values,
            pack_as,
            max,
            past_end,
        } => ApiOutput::value(data_pack(data_type, &values, pack_as, max, past_end)),
        SupportCall::DataCopy { value } => ApiOutput::value(Ok(codec::copy(&value))),
        SupportCall::DataPrint { value, prefix } => {
            ApiOutput::value(Ok(Value::string(codec::print::print(&prefix, &value))))
        }
        SupportCall::DataUnload { data_type, values } => {
            ApiOutput::value(data_unload(data_type, &values))
        }
        SupportCall::DataEmbed { data_type, values } => {
            ApiOutput::value(data_embed(data_type, &values))
        }
        SupportCall::DataCopyPayload { data_type, values } => {
            ApiOutput::value(data_copy_payload(data_type, &values))
        }
        SupportCall::DataCompress { input } => {
            let block = codec::compress::compress(&input);
            let smaller = block.as_ref().is_some_and(|b| b.len() < input.len());
            let restored = block
                .as_deref()
                .and_then(codec::compress::decompress)
                .is_some_and(|back| back == input);
            ApiOutput::results(compression_results(block.is_some(), smaller, restored))
        }
        // The C structure helpers: nothing in the Rust API to call (see the module's doc).
        SupportCall::ValueLoad { .. }
        | SupportCall::ValueUnload { .. }
        | SupportCall::ValueXfer { .. }
        | SupportCall::InfoLoad { .. }
        | SupportCall::InfoXfer { .. }
        | SupportCall::InfoList { .. } => ApiOutput::status(Status::ERR_NOT_SUPPORTED),
        SupportCall::LoadTopology { source } => {
            let machine = match source {
                Some(s) => c.load_topology_of(&s).await,
                None => c.load_topology().await,
            };
            ApiOutput::value(super::st(
                machine.and_then(|m| m.to_topology().map(|t| Value::Topo(Box::new(t)))),
            ))
        }
        SupportCall::TopologyDestruct => {
            // The model's `Topology` is the `pmix_topology_t`; a copy the caller owns is
            // destructed by dropping it.
            let topology = match c.load_topology().await.map(|m| m.to_topology()) {
                Ok(Ok(t)) => Value::Topo(Box::new(t)),
                Ok(Err(e)) => return ApiOutput::status(e.status()),
                Err(s) => return ApiOutput::status(s),
            };
            // The heap is the process's: another vector's thread may allocate between the
            // two readings, so a release is looked for in a few tries.
            let released = (0..3).any(|_| {
                let copy = codec::copy(&topology);
                let before = crate::ffi::heap_in_use();
                drop(copy);
                let after = crate::ffi::heap_in_use();
                after.saturating_add(RELEASED_AT_LEAST) <= before
            });
            ApiOutput::value(Ok(Value::Bool(released)))
        }
        SupportCall::ParseCpusetString { cpuset } => ApiOutput::value(
            pmix::model::topology::parse_cpuset_string(&cpuset)
                .map(|c| Value::ProcCpuset(Box::new(c)))
                .map_err(|e| e.status()),
        ),
    }
}

fn string_of(function: StringFunction, arg: StringArg) -> Value {
    // Narrowing to the code set's width is what the C prototypes do to the argument.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let text: Option<String> = match (function, arg) {
        (StringFunction::AttributeString, StringArg::Text(t)) => {
            strings::attribute_string(&t).map(str::to_owned)
        }
        (StringFunction::AttributeName, StringArg::Text(t)) => {
            strings::attribute_name(&t).map(str::to_owned)
        }
        (f, StringArg::Code(n)) => Some(match f {
            StringFunction::Error => strings::error_string(Status(n as i32)),
            StringFunction::ProcState => strings::proc_state_string(ProcState(n as u8)).into(),
            StringFunction::Scope => strings::scope_string(Scope(n as u8)).into(),
            StringFunction::Persistence => strings::persistence_string(Persistence(n as u8)).into(),
            StringFunction::DataRange => strings::data_range_string(DataRange(n as u8)).into(),
            StringFunction::InfoDirectives => {
                strings::info_directives_string(InfoDirectives(n as u32))
            }
            StringFunction::DataType => strings::data_type_string(DataType(n as u16)).into(),
            StringFunction::AllocDirective => {
                strings::alloc_directive_string(AllocDirective(n as u8)).into()
            }
            StringFunction::IofChannel => strings::iof_channel_string(IofChannel(n as u16)),
            StringFunction::JobState => strings::job_state_string(JobState(n as u8)).into(),
            StringFunction::LinkState => strings::link_state_string(LinkState(n as u8)).into(),
            StringFunction::DeviceType => strings::device_type_string(DeviceType(n as u64)),
            StringFunction::AttributeString | StringFunction::AttributeName => return Value::Undef,
        }),
        // Resolution pairs each function with its kind of argument.
        (_, StringArg::Text(_)) => return Value::Undef,
    };
    Value::String(text.map(pmix::model::Text::from))
}

fn data_pack(
    t: DataType,
    values: &[Value],
    pack_as: DataType,
    max: u32,
    past_end: bool,
) -> Result<Value, Status> {
    let mut b = DataBuffer::new();
    b.pack_values(pack_as, values).map_err(|e| e.status())?;
    let got = b.unpack_values(t, max as usize).map_err(|e| e.status())?;
    if past_end {
        b.unpack_values(t, max as usize).map_err(|e| e.status())?;
    }
    Ok(array_of(t, got))
}

/// A buffer with each value packed by a call of its own, the first already unpacked.
fn packed_one_by_one(t: DataType, values: &[Value]) -> Result<DataBuffer, Status> {
    let mut b = DataBuffer::new();
    for v in values {
        b.pack_values(t, std::slice::from_ref(v))
            .map_err(|e| e.status())?;
    }
    b.unpack_values(t, 1).map_err(|e| e.status())?;
    Ok(b)
}

/// `n` values unpacked one call at a time.
fn unpack_n(b: &mut DataBuffer, t: DataType, n: usize) -> Result<Vec<Value>, Status> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.extend(b.unpack_values(t, 1).map_err(|e| e.status())?);
    }
    Ok(out)
}

fn data_unload(t: DataType, values: &[Value]) -> Result<Value, Status> {
    let mut a = packed_one_by_one(t, values)?;
    let payload = a.unload();
    let mut b = DataBuffer::load(payload, a.buffer_type());
    Ok(array_of(t, unpack_n(&mut b, t, values.len() - 1)?))
}

fn data_embed(t: DataType, values: &[Value]) -> Result<Value, Status> {
    let mut a = packed_one_by_one(t, values)?;
    let payload = a.unload();
    let mut first = DataBuffer::with_type(a.buffer_type());
    first.embed(&payload);
    let mut second = DataBuffer::with_type(a.buffer_type());
    second.embed(&payload);
    let mut got = unpack_n(&mut first, t, values.len() - 1)?;
    got.extend(unpack_n(&mut second, t, values.len() - 1)?);
    Ok(array_of(t, got))
}

fn data_copy_payload(t: DataType, values: &[Value]) -> Result<Value, Status> {
    let mut src = packed_one_by_one(t, values)?;
    let mut dest = DataBuffer::new();
    dest.pack_values(t, &values[..1]).map_err(|e| e.status())?;
    dest.copy_payload(&src).map_err(|e| e.status())?;
    let mut got = unpack_n(&mut dest, t, values.len())?;
    got.extend(unpack_n(&mut src, t, values.len() - 1)?);
    Ok(array_of(t, got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_function_is_named_once() {
        for (f, name) in STRING_FUNCTIONS {
            assert_eq!(string_function(name), Some(f));
            assert_eq!(f.c_name(), name);
        }
        assert_eq!(string_function("PMIx_Nope_string"), None);
    }

    #[test]
    fn codes_are_read_in_the_functions_code_set() {
        assert_eq!(StringFunction::Error.code("PMIX_ERR_NOT_FOUND"), Some(-46));
        assert_eq!(StringFunction::Scope.code("PMIX_GLOBAL"), Some(3));
        assert_eq!(StringFunction::Scope.code("PMIX_ERR_NOT_FOUND"), None);
        assert_eq!(StringFunction::AttributeName.code("PMIX_JOB_SIZE"), None);
    }

    #[test]
    fn the_buffer_moves_give_back_what_was_packed() {
        let values: Vec<Value> = (1..=3).map(Value::Uint32).collect();
        let rest = array_of(DataType::UINT32, values[1..].to_vec());
        assert_eq!(data_unload(DataType::UINT32, &values), Ok(rest.clone()));
        let Ok(Value::DataArray(twice)) = data_embed(DataType::UINT32, &values) else {
            panic!("embed gave no array");
        };
        assert_eq!(twice.elements.len(), 4);
        let Ok(Value::DataArray(copied)) = data_copy_payload(DataType::UINT32, &values) else {
            panic!("copy_payload gave no array");
        };
        assert_eq!(copied.elements.len(), 5);
        assert_eq!(
            data_pack(DataType::UINT32, &values, DataType(400), 3, false),
            Err(Status::ERR_UNKNOWN_DATA_TYPE)
        );
    }
}
