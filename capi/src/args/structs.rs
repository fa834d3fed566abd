//! The model's structs read and written through the pointer types: processes, values, infos,
//! apps, queries, published data, registered attributes, sourced values and data arrays.

use super::*;

impl In<'_, CProc> {
    /// The process named; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn proc(self) -> Result<Proc, Status> {
        read_proc(self.required()?)
    }
}

impl In<'_, CByteObject> {
    /// The bytes of a byte object the call needs (a credential, output to deliver); NULL is
    /// `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn bytes(self) -> Result<Vec<u8>, Status> {
        let bo = self.required()?;
        // SAFETY: a byte object's `bytes` holds `size` bytes (the promise of its type).
        Ok(unsafe { slice_of(bo.bytes.cast::<u8>(), bo.size)? }.to_vec())
    }
}

impl In<'_, CValue> {
    /// The value; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn value(self) -> Result<Value, Status> {
        // SAFETY: an initialised value (the promise the argument carries).
        unsafe { read_value(self.required()?) }
    }
}

impl In<'_, CSourced> {
    /// The topology passed (`pmix_topology_t`), `None` for NULL.
    pub(crate) fn topology(self) -> Result<Option<Topology>, Status> {
        // SAFETY: a topology: its source NULL or a string, its object NULL or an hwloc
        // topology (the promise the argument carries).
        self.get().map(|t| unsafe { read_topology(t) }).transpose()
    }

    /// The cpuset passed (`pmix_cpuset_t`), `None` for NULL.
    pub(crate) fn cpuset(self) -> Result<Option<Cpuset>, Status> {
        // SAFETY: a cpuset: its source NULL or a string, its object NULL or an hwloc
        // bitmap (the promise the argument carries).
        self.get().map(|c| unsafe { read_cpuset(c) }).transpose()
    }
}

impl In<'_, CPdata> {
    /// The value the published data holds; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn value(self) -> Result<Value, Status> {
        // SAFETY: initialised published data (the promise the argument carries).
        unsafe { read_value(&self.required()?.value) }
    }
}

impl In<'_, CRegattr> {
    /// A deep copy of the registration, its blocks from libc's allocator; NULL is
    /// `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn copy(self) -> Result<CRegattr, Status> {
        // SAFETY: an initialised registration (the promise the argument carries).
        unsafe { copy_regattr(self.required()?) }
    }
}

impl In<'_, CInfo> {
    /// The info; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn one(self) -> Result<Info, Status> {
        // SAFETY: an initialised info (the promise the argument carries).
        unsafe { read_info(self.required()?) }
    }

    /// The info's value alone (its key is not read); NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn value(self) -> Result<Value, Status> {
        // SAFETY: an initialised info (the promise the argument carries).
        unsafe { read_value(&self.required()?.value) }
    }

    /// The one info the pointer names (`PMIx_Process_monitor`'s `monitor`); NULL is
    /// `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn info(self) -> Result<Vec<Info>, Status> {
        let one = Array(self.required()?, PhantomData);
        one.infos(1)
    }
}

impl In<'_, CApp> {
    /// The application as `PMIx_App_string` prints it, `None` for NULL.
    pub(crate) fn text(self) -> Option<String> {
        // SAFETY: an initialised application (the promise the argument carries).
        self.get().map(|app| unsafe { app_text(app) })
    }
}

/// One info of an array read on its own: its key, and what it reads as (none for one left
/// as `PMIX_INFO_CREATE` made it) or why it could not be read.
pub(crate) type EachInfo = (String, Result<Vec<Info>, Status>);

impl Array<'_, CInfo> {
    /// The `n` infos (those left as `PMIX_INFO_CREATE` made them are skipped).
    pub(crate) fn infos(self, n: usize) -> Result<Vec<Info>, Status> {
        self.slice(n)?;
        // SAFETY: checked above to hold `n` infos; each is initialised (the promise).
        unsafe { read_infos(self.0, n) }
    }

    /// Each of the `n` infos on its own, with its key: its reading (none for one left as
    /// `PMIX_INFO_CREATE` made it) or why it could not be read, for a caller that leaves
    /// out what it cannot read.
    pub(crate) fn each_info(self, n: usize) -> Result<Vec<EachInfo>, Status> {
        Ok(self
            .slice(n)?
            .iter()
            // SAFETY: each an initialised info of the array (the promise the argument
            // carries).
            .map(|i| (read_fixed(&i.key), unsafe { read_infos(i, 1) }))
            .collect())
    }
}

impl Array<'_, CProc> {
    /// The `n` processes.
    pub(crate) fn procs(self, n: usize) -> Result<Vec<Proc>, Status> {
        self.slice(n)?;
        // SAFETY: checked above to hold `n` procs.
        unsafe { read_procs(self.0, n) }
    }
}

impl Array<'_, CApp> {
    /// The `n` applications to spawn.
    pub(crate) fn apps(self, n: usize) -> Result<Vec<App>, Status> {
        self.objects(n, DataType::APP, |v| match v {
            Value::App(app) => Some(*app),
            _ => None,
        })
    }
}

impl Array<'_, CQuery> {
    /// The `n` queries.
    pub(crate) fn queries(self, n: usize) -> Result<Vec<Query>, Status> {
        self.objects(n, DataType::QUERY, |v| match v {
            Value::Query(q) => Some(*q),
            _ => None,
        })
    }
}

impl InOut<'_, CSourced> {
    /// The source the topology or cpuset names, `None` for none; NULL is
    /// `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn source(&self) -> Result<Option<String>, Status> {
        // SAFETY: as `get`, for a shared borrow while `self` is borrowed.
        let c = unsafe { self.0.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: its source is NULL or a string (the promise of the argument).
        Ok(unsafe { sourced_source(c) })
    }

    /// Release the topology's hwloc object and source, leaving it empty (nothing for NULL).
    pub(crate) fn destruct_topology(self) {
        if let Ok(t) = self.get() {
            // SAFETY: a topology of this library, or one the caller made of hwloc's, that
            // nothing else releases (the promise of the argument's type).
            unsafe { destruct_topology(t) };
        }
    }

    /// Release the cpuset's hwloc bitmap and source, leaving it empty (nothing for NULL).
    pub(crate) fn destruct_cpuset(self) {
        if let Ok(c) = self.get() {
            // SAFETY: a cpuset of this library, or one the caller made of hwloc's, that
            // nothing else releases (the promise of the argument's type).
            unsafe { destruct_cpuset(c) };
        }
    }
}

impl InOut<'_, CRegattr> {
    /// Add a copy of `line` at the end of the registration's description (made when it has
    /// none).
    pub(crate) fn append_description(&mut self, line: &[u8]) -> Result<(), Status> {
        // SAFETY: as `get`, while `self` is borrowed mutably.
        let r = unsafe { self.0.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the description is NULL or an array of libc's allocator (the promise of
        // the argument).
        unsafe { argv_insert(&mut r.description, line, false) }
    }
}

impl InOut<'_, CValue> {
    /// Release what the value holds, leaving it `PMIX_UNDEF` (nothing for NULL).
    pub(crate) fn destruct_value(self) {
        if let Ok(v) = self.get() {
            // SAFETY: a value whose blocks come from libc's allocator (the promise of the
            // argument).
            unsafe { destruct_value(v) };
        }
    }
}

impl InOut<'_, CDataArray> {
    /// Release the array's elements and their block (nothing for NULL).
    pub(crate) fn destruct_array(self) {
        if let Ok(d) = self.get() {
            // SAFETY: a data array whose blocks come from libc's allocator (the promise of
            // the argument).
            unsafe { destruct_array(d) };
        }
    }
}

impl Out<'_, CValue> {
    /// Write `v` there as a `pmix_value_t` whose blocks come from libc's allocator (what
    /// the value held before is not released); NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn set_value(self, v: &Value) -> Result<(), Status> {
        if self.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut written = undef_value();
        // On failure the value is left `PMIX_UNDEF`, as a load that could not be made.
        let outcome = write_value(v, &mut written);
        self.set(written);
        outcome
    }
}

impl Out<'_, CDataArray> {
    /// Write `array` there as a `pmix_data_array_t` whose blocks come from libc's
    /// allocator; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn set_array(self, array: DataArray) -> Result<(), Status> {
        if self.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let value = Value::DataArray(Box::new(array));
        // SAFETY: room for a data array (the promise the argument carries).
        unsafe { write_object(&value, self.0.cast()) }
    }
}

impl Out<'_, CInfo> {
    /// Write `key` and `value` into the info there (`PMIx_Info_load`), leaving its flags as
    /// they are; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn load(self, key: &str, value: &Value) -> Result<(), Status> {
        if self.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut written = empty_info();
        write_fixed(&mut written.key, key);
        // On failure the key is loaded and the value left `PMIX_UNDEF`.
        let outcome = write_value(value, &mut written.value);
        // SAFETY: room for an info (the promise the argument carries); two of its fields
        // are written, without reading or dropping what they held.
        unsafe {
            (&raw mut (*self.0).key).write(written.key);
            (&raw mut (*self.0).value).write(written.value);
        }
        outcome
    }
}
