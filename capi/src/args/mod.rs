//! The pointers the exported functions take, typed by what the C caller promises of them.
//!
//! A C caller passes `const char *grp`, `const pmix_proc_t *procs, size_t nprocs` or
//! `pmix_info_t **results` and promises, as the standard's prototype says, that each is NULL
//! or points to what its type names. The entry points take these arguments as the types
//! below instead of raw pointers: each has a raw pointer's layout (`repr(transparent)`), so
//! the C ABI is the same, and the C caller's promise comes with it. Rust code makes one only
//! through an `unsafe` constructor that repeats the promise (or as NULL), so the entry points
//! are safe functions and their bodies read their arguments through the checked methods
//! here: NULL, counts past what the wire can carry and arrays past the address space are
//! refused with `PMIX_ERR_BAD_PARAM` before anything is read, or ignored where the call's
//! contract says so (a destruct of NULL, a free of an array no allocation can be).
//!
//! Some promises rest on another argument: an array on the count passed beside it, typed
//! data on the type passed beside it, where `PMIx_Get` answers on the call's infos. The C
//! caller makes them for the one call it passes them to; a Rust caller's `unsafe` constructor
//! makes them for the call it passes the argument to, with the count or type it passes
//! beside it. These types are not `Copy`, so one promise serves one call.
//!
//! This is where the entry points' `unsafe` lives; what a C value holds (an info's value, an
//! app's argv) is read by `values`. This file holds the pointer types and their promises;
//! the methods that read or write one kind of C object through them are apart: the model's
//! structs (`structs.rs`), data buffers (`buffers.rs`), fabrics (`fabric.rs`), and string
//! arrays, whose pointer types are their own (`argv.rs`).

mod argv;
mod buffers;
mod fabric;
mod structs;

pub use argv::{Argv, ArgvMut, ArgvOwned};

use std::ffi::{CStr, c_char, c_void};
use std::marker::PhantomData;
use std::ptr;

use pmix::model::{
    App, Cpuset, DataArray, DataType, Fabric, Info, Proc, Query, Status, Topology, Value,
};

use crate::boundary::{
    c_strdup, calloc_array, free, is_process_env, read_cstr, read_fixed, read_text, slice_of,
    slice_of_mut, write_fixed,
};
use crate::types::{
    CApp, CByteObject, CDataArray, CDataBuffer, CFabric, CInfo, CPdata, CProc, CQuery, CRegattr,
    CSourced, CValue,
};
use crate::values::{
    Family, app_text, append, argv_bytes, argv_insert, argv_replace, clear_fabric, consume,
    copy_object, copy_regattr, destruct_array, destruct_cpuset, destruct_topology, destruct_value,
    empty_fabric, empty_info, free_argv, free_array, loaded, object_size, print_object, read_argv,
    read_cpuset, read_fabric, read_info, read_infos, read_object, read_objects, read_proc,
    read_procs, read_topology, read_value, release_buffer, sourced_source, take_payload,
    undef_value, unload_allocated, unload_as_openpmix, unread, write_fabric, write_object,
    write_objects, write_value,
};

/// A string argument (`const char *`): NULL or NUL-terminated.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct Str<'a>(*const c_char, PhantomData<&'a c_char>);

impl<'a> Str<'a> {
    /// # Safety
    /// `p` is NULL or a NUL-terminated string that outlives the argument.
    pub unsafe fn new(p: *const c_char) -> Self {
        Self(p, PhantomData)
    }

    /// No string.
    pub fn null() -> Self {
        Self(std::ptr::null(), PhantomData)
    }

    /// The string as text (a name: a key, a namespace, a command), bytes that are not UTF-8
    /// replaced; `None` for NULL.
    pub(crate) fn text(self) -> Option<String> {
        // SAFETY: NULL or a string (the promise the argument carries).
        unsafe { read_cstr(self.0) }
    }

    pub(crate) fn is_null(self) -> bool {
        self.0.is_null()
    }

    /// The string's bytes before its NUL, at most `max` of them (a fixed-size field of
    /// `max` bytes need not end in a NUL); empty for NULL.
    pub(crate) fn bytes_within(self, max: usize) -> &'a [u8] {
        if self.0.is_null() {
            return &[];
        }
        let mut len = 0;
        // SAFETY: a string (the promise the argument carries): readable up to its NUL, and
        // never past `max`.
        while len < max && unsafe { *self.0.add(len) } != 0 {
            len += 1;
        }
        // SAFETY: the `len` bytes just read.
        unsafe { std::slice::from_raw_parts(self.0.cast::<u8>(), len) }
    }

    /// The string's bytes before its NUL, `None` for NULL.
    pub(crate) fn bytes(self) -> Option<&'a [u8]> {
        // SAFETY: NULL or a string (the promise the argument carries).
        (!self.0.is_null()).then(|| unsafe { CStr::from_ptr(self.0) }.to_bytes())
    }

    /// The string as text; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn required(self) -> Result<String, Status> {
        self.text().ok_or(Status::ERR_BAD_PARAM)
    }
}

/// One struct passed by pointer (`const pmix_proc_t *leader`): NULL or a `T`.
#[repr(transparent)]
#[derive(Debug)]
pub struct In<'a, T>(*const T, PhantomData<&'a T>);

impl<T> Clone for In<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for In<'_, T> {}

impl<'a, T> In<'a, T> {
    /// # Safety
    /// `p` is NULL or an initialised `T` that outlives the argument.
    pub unsafe fn new(p: *const T) -> Self {
        Self(p, PhantomData)
    }

    /// No struct.
    pub fn null() -> Self {
        Self(std::ptr::null(), PhantomData)
    }

    /// The struct, `None` for NULL.
    pub(crate) fn get(self) -> Option<&'a T> {
        // SAFETY: NULL or a `T` (the promise the argument carries).
        unsafe { self.0.as_ref() }
    }

    /// The struct; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn required(self) -> Result<&'a T, Status> {
        self.get().ok_or(Status::ERR_BAD_PARAM)
    }
}

/// An array argument with its count beside it (`const pmix_info_t *info, size_t ninfo`):
/// NULL, or as many initialised `T` as the count says. The methods take that count.
#[repr(transparent)]
#[derive(Debug)]
pub struct Array<'a, T>(*const T, PhantomData<&'a T>);

impl<'a, T> Array<'a, T> {
    /// # Safety
    /// `p` is NULL or holds as many initialised `T` as the count passed beside it, and
    /// outlives the argument.
    pub unsafe fn new(p: *const T) -> Self {
        Self(p, PhantomData)
    }

    /// No array (for a count of 0).
    pub fn null() -> Self {
        Self(std::ptr::null(), PhantomData)
    }

    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// The `n` elements, `n` being the count the caller passed beside the array; empty for
    /// 0; `PMIX_ERR_BAD_PARAM` for NULL with a count, or a count no array can have.
    pub(crate) fn slice(&self, n: usize) -> Result<&'a [T], Status> {
        // SAFETY: the array holds the `n` its caller passed beside it (the promise the
        // argument carries); `slice_of` refuses NULL and counts no array can have.
        unsafe { slice_of(self.0, n) }
    }
}

impl<T> Array<'_, T> {
    /// The `n` elements read as C objects of type `t` (the type whose C struct `T` is), each
    /// taken from its value by `take`; a value of another kind is `PMIX_ERR_BAD_PARAM`.
    fn objects<U>(
        &self,
        n: usize,
        t: DataType,
        take: impl Fn(Value) -> Option<U>,
    ) -> Result<Vec<U>, Status> {
        let mut out = Vec::with_capacity(n.min(64));
        for e in self.slice(n)? {
            // SAFETY: an initialised object of type `t` (the promise the argument carries,
            // `T` being `t`'s C struct).
            let value = unsafe { read_object(t, (&raw const *e).cast()) }?;
            out.push(take(value).ok_or(Status::ERR_BAD_PARAM)?);
        }
        Ok(out)
    }
}

/// An array argument the call fills in place (`pmix_pdata_t *data, size_t ndata`): NULL,
/// or as many initialised `T` as the count beside it says, not otherwise borrowed.
#[repr(transparent)]
#[derive(Debug)]
pub struct ArrayMut<'a, T>(*mut T, PhantomData<&'a mut T>);

impl<'a, T> ArrayMut<'a, T> {
    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// # Safety
    /// `p` is NULL or holds as many initialised `T` as the count passed beside it, not
    /// otherwise borrowed, and outlives the argument.
    pub unsafe fn new(p: *mut T) -> Self {
        Self(p, PhantomData)
    }

    /// The `n` elements, `n` being the count the caller passed beside the array; as
    /// [`Array::slice`] otherwise.
    pub(crate) fn slice(self, n: usize) -> Result<&'a mut [T], Status> {
        // SAFETY: the array holds the `n` its caller passed beside it (the promise the
        // argument carries); `slice_of_mut` refuses NULL and counts no array can have.
        unsafe { slice_of_mut(self.0, n) }
    }
}

/// A struct the call reads and writes in place (`pmix_fabric_t *fabric`,
/// `pmix_data_buffer_t *buffer`): NULL or an initialised `T`, not otherwise borrowed while
/// the call reads or writes it (`PMIx_Data_copy_payload` may name one buffer twice: it reads
/// all it needs before it writes), whose pointers are what the call's prototype says of
/// them: NULL or blocks this library filled it with, and blocks of libc's allocator where
/// the call releases them or takes them over.
#[repr(transparent)]
#[derive(Debug)]
pub struct InOut<'a, T>(*mut T, PhantomData<&'a mut T>);

impl<'a, T> InOut<'a, T> {
    /// # Safety
    /// `p` is NULL or an initialised `T`, not otherwise borrowed, that outlives the argument.
    pub unsafe fn new(p: *mut T) -> Self {
        Self(p, PhantomData)
    }

    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// The struct; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn get(self) -> Result<&'a mut T, Status> {
        // SAFETY: NULL or a `T` of the caller's, not otherwise borrowed (the promise the
        // argument carries).
        unsafe { self.0.as_mut() }.ok_or(Status::ERR_BAD_PARAM)
    }
}

impl<T: Family> InOut<'_, T> {
    /// Release what the structure holds, leaving it empty (`X_destruct`; nothing for NULL).
    pub(crate) fn destruct(self) {
        if let Ok(p) = self.get() {
            // SAFETY: its pointers are NULL or blocks of libc's allocator nothing else
            // releases (the promise of the argument).
            unsafe { p.release() };
        }
    }
}

/// The data a load call copies (`PMIx_Value_load`'s `const void *data`): NULL, or the
/// address of an object of the type passed beside it (an `int` for `PMIX_INT`, a
/// `pmix_proc_t` for `PMIX_PROC`), except for a string (`PMIX_STRING`, `PMIX_REGEX` text), whose
/// data is the `char *` itself, and a pointer (`PMIX_POINTER`), whose data is the address
/// itself, never read.
#[repr(transparent)]
#[derive(Debug)]
pub struct Data<'a>(*const c_void, PhantomData<&'a c_void>);

impl Data<'_> {
    /// # Safety
    /// `p` is NULL or an object of the type passed beside it, outliving the argument.
    pub unsafe fn new(p: *const c_void) -> Self {
        Self(p, PhantomData)
    }

    /// The object, of type `t` (the type the caller passed beside it).
    pub(crate) fn value(self, t: DataType) -> Result<Value, Status> {
        // SAFETY: NULL or an object of type `t` (the promise the argument carries).
        unsafe { loaded(self.0, t) }
    }
}

impl Data<'_> {
    /// A deep copy of the object, of type `t`, in a block of libc's allocator (a string's
    /// copy is of the `char *` itself, which `data` then is); NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn copy(self, t: DataType) -> Result<*mut c_void, Status> {
        if self.0.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        if t == DataType::STRING {
            // SAFETY: for a string, the data is the string (the promise of `copy`'s callers).
            return Ok(c_strdup(unsafe { read_text(self.0.cast()) }.unwrap_or_default())?.cast());
        }
        // SAFETY: an object of type `t` (the promise the argument carries).
        unsafe { copy_object(t, self.0) }
    }

    /// The object, of type `t`, as `PMIx_Data_print` prints it after `prefix` (a string's
    /// data is the `char *` itself).
    pub(crate) fn print(self, prefix: &str, t: DataType) -> Result<String, Status> {
        // SAFETY: an object of type `t` (the promise the argument carries).
        unsafe { print_object(prefix, self.0, t) }
    }
}

/// The objects a pack or unpack call reads or fills (`void *src`, `void *dest`): NULL, or as
/// many objects of the type passed beside it as the count says, side by side (strings as
/// `char *`s); for unpacking, room for them.
#[repr(transparent)]
#[derive(Debug)]
pub struct Objects<'a>(*mut c_void, PhantomData<&'a mut c_void>);

impl Objects<'_> {
    /// # Safety
    /// `p` is NULL, or holds (or has room for) as many objects of the type passed beside it
    /// as the count says, and outlives the argument.
    pub unsafe fn new(p: *mut c_void) -> Self {
        Self(p, PhantomData)
    }

    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// The `n` objects of type `t`; NULL with a count is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn read(self, t: DataType, n: usize) -> Result<Vec<Value>, Status> {
        if n > 0 && self.0.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: `n` objects of type `t` (the promise the argument carries).
        unsafe { read_objects(t, self.0, n) }
    }

    /// Write one object of type `t` there, given as its bytes (`bytes.len()` is the type's
    /// size, else `PMIX_ERR_BAD_PARAM`); NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn write_one(self, t: DataType, bytes: &[u8]) -> Result<(), Status> {
        if self.0.is_null() || object_size(t) != Some(bytes.len()) {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: room for one object of type `t` (the promise the argument carries), of
        // `bytes.len()` bytes (checked); unaligned, as C's `void *` may be.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), self.0.cast::<u8>(), bytes.len()) };
        Ok(())
    }

    /// Write `values`, of type `t`, there (room for at least as many, the count passed
    /// beside it being no smaller); on failure none stays written.
    pub(crate) fn write(self, t: DataType, values: &[Value]) -> Result<(), Status> {
        if self.0.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: room for the count's objects of type `t` (the promise the argument
        // carries), which the caller of this method checked to be at least `values.len()`.
        unsafe { write_objects(t, values, self.0) }
    }
}

/// A block of bytes a call takes over (`PMIx_Data_buffer_load`'s `char *bytes`): NULL or a
/// block of libc's allocator of the size passed beside it, no longer the caller's.
#[repr(transparent)]
#[derive(Debug)]
pub struct Block(*mut c_char);

impl Block {
    /// # Safety
    /// `p` is NULL or a block of libc's allocator of the size passed beside it, handed over.
    pub unsafe fn new(p: *mut c_char) -> Self {
        Self(p)
    }

    /// The block, for a structure that takes it over (`PMIx_Byte_object_load`).
    pub(crate) fn into_raw(self) -> *mut c_char {
        self.0
    }
}

/// An array the call releases (`X_free(p, n)`, `X_release(p)`): NULL or an array of libc's
/// allocator of at least as many `T` as the count passed beside it (one for a release),
/// their blocks libc's too, no longer used by the caller.
#[repr(transparent)]
#[derive(Debug)]
pub struct Owned<T>(*mut T);

impl<T: Family> Owned<T> {
    /// # Safety
    /// `p` is NULL or such an array, handed over.
    pub unsafe fn new(p: *mut T) -> Self {
        Self(p)
    }

    /// Release what the first `n` structures hold, and the array (`n` the count passed
    /// beside it). A count past what any array can hold leaves it alone (leaked).
    pub(crate) fn free(self, n: usize) {
        // SAFETY: NULL or an array of at least `n` structures of libc's, handed over (the
        // promise of the argument).
        unsafe { free_array(self.0, n) };
    }
}

/// Where `PMIx_Value_unload` hands out a value's data (`void **data`): writable; for the
/// types OpenPMIx 4.2 copies into the caller's storage, `*data` points to room for one
/// object of the value's type.
#[repr(transparent)]
#[derive(Debug)]
pub struct Unloaded<'a>(*mut *mut c_void, PhantomData<&'a mut c_void>);

impl Unloaded<'_> {
    /// # Safety
    /// `p` is NULL or writable; `*p` as the type says.
    pub unsafe fn new(p: *mut *mut c_void) -> Self {
        Self(p, PhantomData)
    }

    /// Hand out `val`'s data there and its size through `sz`: the standard's form (a copy
    /// from libc's allocator) when `strict`, else OpenPMIx 4.2's. NULL anywhere is
    /// `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn unload(
        self,
        val: In<'_, CValue>,
        sz: Out<'_, usize>,
        strict: bool,
    ) -> Result<(), Status> {
        let val = val.get().ok_or(Status::ERR_BAD_PARAM)?;
        if sz.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: writable (the promise the argument carries).
        let data = unsafe { self.0.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
        let mut size = None;
        let unloaded = if strict {
            // SAFETY: an initialised value (the promise of `val`).
            unsafe { unload_allocated(val, data, &mut size) }
        } else {
            // SAFETY: as above; `*data` as OpenPMIx's form needs it (this argument's promise).
            unsafe { unload_as_openpmix(val, data, &mut size) }
        };
        // The size is written only where the data was (a NULL string leaves it as it was).
        if let Some(n) = size {
            sz.set(n);
        }
        unloaded
    }
}

/// A struct an `_nb` call writes (and, for a struct this library filled, reads) on the
/// library's thread (the `_nb` fabric calls' `fabric`): NULL or room for a `T`, initialised
/// where the call reads it (an update, a deregistration; not a registration), not otherwise
/// borrowed, and kept by the caller, untouched, until the call's callback, as the standard
/// asks of every `_nb` argument.
#[repr(transparent)]
#[derive(Debug)]
pub struct Held<T>(*mut T);

// SAFETY: the struct is the caller's, kept for the library's thread until the callback
// (the promise the argument carries); only that thread touches it meanwhile, and what it
// holds are blocks of libc's allocator, which any thread may read and release.
unsafe impl Send for Held<CFabric> {}

impl<T> Held<T> {
    /// # Safety
    /// `p` is NULL or room for a `T` as the type says, that the caller keeps until the
    /// call's callback.
    pub unsafe fn new(p: *mut T) -> Self {
        Self(p)
    }

    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// The struct, initialised (an update's, a deregistration's), for as long as `self` is
    /// borrowed.
    pub(crate) fn get(&mut self) -> InOut<'_, T> {
        InOut(self.0, PhantomData)
    }

    /// Where to write the struct (a registration's), for as long as `self` is borrowed.
    pub(crate) fn out(&mut self) -> Out<'_, T> {
        Out(self.0, PhantomData)
    }
}

/// A handle this library handed out as a `void *` (`PMIx_Info_list_start`'s list): NULL or
/// the `T` that made it, not yet released, and not otherwise borrowed during the call.
#[repr(transparent)]
#[derive(Debug)]
pub struct Handle<'a, T>(*mut c_void, PhantomData<&'a mut T>);

impl<'a, T> Handle<'a, T> {
    /// # Safety
    /// `p` is NULL or a handle this library made of a `T` and handed out, not yet released,
    /// not otherwise borrowed while the argument lives.
    pub unsafe fn new(p: *mut c_void) -> Self {
        Self(p, PhantomData)
    }

    /// A handle of `value`, for a C caller to pass back, released by [`release`].
    ///
    /// [`release`]: Self::release
    pub(crate) fn make(value: T) -> *mut c_void {
        Box::into_raw(Box::new(value)).cast()
    }

    /// What the handle holds; NULL is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn get(self) -> Result<&'a mut T, Status> {
        // SAFETY: NULL or a `T` of `make`'s, not yet released (the promise the argument
        // carries).
        unsafe { self.0.cast::<T>().as_mut() }.ok_or(Status::ERR_BAD_PARAM)
    }

    /// Release what the handle holds (nothing for NULL); the caller does not use it again.
    pub(crate) fn release(self) {
        if !self.0.is_null() {
            // SAFETY: a box `make` made, released once (the promise of the argument).
            drop(unsafe { Box::from_raw(self.0.cast::<T>()) });
        }
    }
}

/// Where the call writes what it answers (`pmix_info_t **results`, `size_t *nresults`, a
/// `pmix_byte_object_t *` to fill): NULL, or room for a `T`, which is overwritten without
/// being read or released.
#[repr(transparent)]
#[derive(Debug)]
pub struct Out<'a, T>(*mut T, PhantomData<&'a mut T>);

impl<'a, T> Out<'a, T> {
    /// # Safety
    /// `p` is NULL or room for a `T`, not otherwise borrowed, that outlives the argument.
    pub unsafe fn new(p: *mut T) -> Self {
        Self(p, PhantomData)
    }

    /// Nowhere to write.
    pub fn null() -> Self {
        Self(std::ptr::null_mut(), PhantomData)
    }

    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// Write `v` there; `false` (and `v` dropped) for NULL.
    pub(crate) fn set(self, v: T) -> bool {
        if self.0.is_null() {
            return false;
        }
        // SAFETY: room for a `T` (the promise the argument carries); what it held is not
        // read or dropped, as C's plain assignment.
        unsafe { self.0.write(v) };
        true
    }
}

/// A `pmix_key_t` argument (512 bytes) to write into.
pub type KeyOut<'a> = Out<'a, [c_char; 512]>;

/// A `pmix_nspace_t` argument (256 bytes) to write into.
pub type NspaceOut<'a> = Out<'a, [c_char; 256]>;

impl<const N: usize> Out<'_, [c_char; N]> {
    /// Write `s` into the fixed-size string field there (`pmix_nspace_t`, a `pmix_key_t`),
    /// cut short to leave room for its NUL and the rest zeroed; `false` for NULL.
    pub(crate) fn fixed(self, s: impl AsRef<[u8]>) -> bool {
        let mut field = [0 as c_char; N];
        write_fixed(&mut field, s);
        self.set(field)
    }
}

impl<T: Family> Out<'_, T> {
    /// Write the structure's empty form there (`X_construct`: what it held is not read or
    /// released).
    pub(crate) fn construct(self) {
        self.set(T::empty());
    }
}

/// Where `PMIx_Get` answers (`pmix_value_t **val`): NULL or writable; when the call's infos
/// ask for `PMIX_GET_STATIC_VALUES`, `*val` is NULL or a value of the caller's, not otherwise
/// borrowed, that the answer is written into.
#[repr(transparent)]
#[derive(Debug)]
pub struct ValueOut<'a>(*mut *mut CValue, PhantomData<&'a mut CValue>);

impl ValueOut<'_> {
    /// # Safety
    /// `p` is NULL or writable, and `*p` as the type says for the call's infos; both outlive
    /// the argument.
    pub unsafe fn new(p: *mut *mut CValue) -> Self {
        Self(p, PhantomData)
    }

    pub(crate) fn is_null(&self) -> bool {
        self.0.is_null()
    }

    /// Hand `v` to the caller: in a new `pmix_value_t` from libc's allocator (which the
    /// caller releases) whose address is written there, or, with `into_callers` (the call's
    /// `PMIX_GET_STATIC_VALUES`), into the value whose address the caller left there. NULL,
    /// or no value of the caller's, is `PMIX_ERR_BAD_PARAM`.
    pub(crate) fn value(self, v: &Value, into_callers: bool) -> Result<(), Status> {
        if self.0.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        if into_callers {
            // SAFETY: with static values, `*val` is NULL or a value of the caller's, not
            // otherwise borrowed (the promise the argument carries).
            let callers = unsafe { (*self.0).as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
            return write_value(v, callers);
        }
        let out: *mut CValue = calloc_array(1)?;
        // SAFETY: `out` is a fresh zeroed value of ours.
        let fresh = unsafe { &mut *out };
        if let Err(s) = write_value(v, fresh) {
            // SAFETY: ours, holding nothing allocated.
            unsafe { free(out) };
            return Err(s);
        }
        // SAFETY: writable (the promise the argument carries); what it held is not read.
        unsafe { self.0.write(out) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_impossible_counts_are_bad_params_before_anything_is_read() {
        assert_eq!(Str::null().required(), Err(Status::ERR_BAD_PARAM));
        assert_eq!(
            In::<CProc>::null().proc().err(),
            Some(Status::ERR_BAD_PARAM)
        );
        assert_eq!(Array::<CInfo>::null().infos(0), Ok(Vec::new()));
        assert_eq!(
            Array::<CInfo>::null().infos(1).err(),
            Some(Status::ERR_BAD_PARAM)
        );
        let procs = [CProc {
            nspace: [0; 256],
            rank: 0,
        }; 2];
        // SAFETY: `procs` holds two procs; the counts past them are refused unread.
        let array = unsafe { Array::new(procs.as_ptr()) };
        assert_eq!(array.slice(2).map(<[_]>::len), Ok(2));
        assert_eq!(array.procs(1 << 40).err(), Some(Status::ERR_BAD_PARAM));
        assert!(!Out::<usize>::null().set(3));
        let mut n = 0usize;
        // SAFETY: room for a usize.
        assert!(unsafe { Out::new(&raw mut n) }.set(3));
        assert_eq!(n, 3);
    }
}
