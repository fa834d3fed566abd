//! The structs of values that hold lists: argv lists (`char **`), attribute registrations
//! (`pmix_regattr_t`) and data buffers (`pmix_data_buffer_t`). Each is read into the model,
//! written for a caller (every block from libc's allocator) and destructed, as
//! [`super::read_object`], [`super::write_object`] and [`super::destruct_object`] do for the
//! value types that hold them. Applications and queries, which hold infos, are in `read`,
//! `write` and `release`.

use std::ffi::c_char;
use std::ptr;

use pmix::model::{Buffer, DataType, RegAttr, Status, Text};

use super::basic::opt_strdup;
use crate::boundary::{
    c_bytes, c_strdup, calloc_array, free, read_cstr, read_fixed, read_text, slice_of, write_fixed,
};
use crate::types::{CDataBuffer, CRegattr};

/// The packed bytes of a `pmix_data_buffer_t`: the `bytes_used` at `base_ptr`, whether
/// unpacked yet or not.
///
/// # Safety
/// `b.base_ptr` points to `b.bytes_used` bytes (or `bytes_used` is 0).
pub(super) unsafe fn read_data_buffer(b: &CDataBuffer) -> Result<Buffer, Status> {
    // SAFETY: the caller's promise.
    let bytes = unsafe { slice_of(b.base_ptr.cast::<u8>().cast_const(), b.bytes_used)? };
    Ok(Buffer {
        buffer_type: 0,
        bytes: bytes.to_vec(),
    })
}

/// A NULL-terminated array of strings (`char **`), each read as UTF-8 (names, keys).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of strings.
pub(crate) unsafe fn read_argv(argv: *const *mut c_char) -> Vec<Option<String>> {
    // SAFETY: the caller's promise.
    unsafe { read_list(argv, |s| read_cstr(s)) }
}

/// A NULL-terminated array of strings (`char **`), each as its bytes (a command line, an
/// environment).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of strings.
pub(crate) unsafe fn read_argv_text(argv: *const *mut c_char) -> Vec<Option<Text>> {
    // SAFETY: the caller's promise.
    unsafe { read_list(argv, |s| read_text(s)) }
}

/// # Safety
/// `argv` is NULL or a NULL-terminated array of strings; `read` reads one of them.
unsafe fn read_list<T>(
    argv: *const *mut c_char,
    read: impl Fn(*const c_char) -> Option<T>,
) -> Vec<Option<T>> {
    let mut out = Vec::new();
    if argv.is_null() {
        return out;
    }
    let mut i = 0;
    loop {
        // SAFETY: the array is NULL-terminated, so every index up to the NULL is in it.
        let s = unsafe { *argv.add(i) };
        if s.is_null() {
            return out;
        }
        out.push(read(s));
        i += 1;
    }
}

/// A `pmix_regattr_t`; an empty key string is none.
///
/// # Safety
/// Its name is NULL or a string; its description NULL or a NULL-terminated array of strings.
pub(super) unsafe fn read_regattr(r: &CRegattr) -> RegAttr {
    let string = read_fixed(&r.string);
    RegAttr {
        // SAFETY: the caller's promise, field by field.
        name: unsafe { read_cstr(r.name) },
        string: (!string.is_empty()).then_some(string),
        data_type: DataType(r.type_),
        // SAFETY: as above.
        description: unsafe { read_argv(r.description) },
    }
}

/// A `pmix_data_buffer_t` holding a copy of `b`'s bytes in a block of libc's allocator,
/// packed to its end and unpacked from its start, as `PMIx_Data_load` leaves a buffer. An
/// empty one holds no block, as `PMIX_DATA_BUFFER_CONSTRUCT` leaves it.
pub(super) fn c_data_buffer(b: &Buffer) -> Result<CDataBuffer, Status> {
    let len = b.bytes.len();
    if len == 0 {
        return Ok(empty_data_buffer());
    }
    let base = c_bytes(&b.bytes)?;
    Ok(CDataBuffer {
        base_ptr: base,
        // SAFETY: one past the end of the `len` bytes of `base`.
        pack_ptr: unsafe { base.add(len) },
        unpack_ptr: base,
        bytes_allocated: len,
        bytes_used: len,
    })
}

pub(super) fn empty_data_buffer() -> CDataBuffer {
    CDataBuffer {
        base_ptr: ptr::null_mut(),
        pack_ptr: ptr::null_mut(),
        unpack_ptr: ptr::null_mut(),
        bytes_allocated: 0,
        bytes_used: 0,
    }
}

/// A NULL-terminated `char **` of `list` (a `None` element ends it early, as C reads it).
pub(crate) fn write_argv<S: AsRef<[u8]>>(list: &[Option<S>]) -> Result<*mut *mut c_char, Status> {
    let argv: *mut *mut c_char = calloc_array(list.len() + 1)?;
    for (i, s) in list.iter().map_while(Option::as_ref).enumerate() {
        match c_strdup(s) {
            // SAFETY: `argv` has `list.len() + 1` slots.
            Ok(p) => unsafe { *argv.add(i) = p },
            Err(status) => {
                // SAFETY: the slots so far hold strings of ours, the rest NULL.
                unsafe { free_argv(argv) };
                return Err(status);
            }
        }
    }
    Ok(argv)
}

/// A `pmix_regattr_t` of `r`, its name and description in blocks of libc's allocator.
pub(super) fn c_regattr(r: &RegAttr) -> Result<CRegattr, Status> {
    let mut c = CRegattr {
        name: ptr::null_mut(),
        string: [0; 512],
        type_: r.data_type.0,
        description: ptr::null_mut(),
    };
    write_fixed(&mut c.string, r.string.as_deref().unwrap_or(""));
    let filled = (|| {
        c.name = opt_strdup(r.name.as_deref())?;
        c.description = write_argv(&r.description)?;
        Ok(())
    })();
    if let Err(s) = filled {
        // SAFETY: every pointer of `c` is NULL or a block written above.
        unsafe { destruct_regattr(&mut c) };
        return Err(s);
    }
    Ok(c)
}

/// # Safety
/// As [`super::destruct_object`].
pub(super) unsafe fn destruct_regattr(r: &mut CRegattr) {
    // SAFETY: the caller's promise.
    unsafe {
        free(r.name);
        free_argv(r.description);
    }
    r.name = ptr::null_mut();
    r.description = ptr::null_mut();
}

/// Release a data buffer's block and leave it empty (`PMIX_DATA_BUFFER_DESTRUCT`).
///
/// # Safety
/// As [`super::destruct_object`].
pub(super) unsafe fn destruct_data_buffer(b: &mut CDataBuffer) {
    // SAFETY: the caller's promise.
    unsafe { free(b.base_ptr) };
    *b = empty_data_buffer();
}

/// Release a NULL-terminated `char **` and its strings.
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of libc blocks.
pub(crate) unsafe fn free_argv(argv: *mut *mut c_char) {
    if argv.is_null() {
        return;
    }
    let mut i = 0;
    // SAFETY: the array is NULL-terminated.
    unsafe {
        while !(*argv.add(i)).is_null() {
            free(*argv.add(i));
            i += 1;
        }
        free(argv);
    }
}

/// A deep copy of `r`: its name (read as text), key, type and description (byte for byte),
/// in blocks of libc's allocator.
///
/// # Safety
/// Its name is NULL or a string; its description NULL or a NULL-terminated array of strings.
pub(crate) unsafe fn copy_regattr(r: &CRegattr) -> Result<CRegattr, Status> {
    // SAFETY: the caller's promise.
    let name = match unsafe { read_cstr(r.name) } {
        Some(s) => c_strdup(&s)?,
        None => ptr::null_mut(),
    };
    let description = if r.description.is_null() {
        ptr::null_mut()
    } else {
        // SAFETY: the caller's promise.
        let lines: Vec<Option<&[u8]>> = unsafe { super::argv::argv_bytes(r.description) }
            .into_iter()
            .map(Some)
            .collect();
        match write_argv(&lines) {
            Ok(d) => d,
            Err(s) => {
                // SAFETY: the name made above.
                unsafe { free(name) };
                return Err(s);
            }
        }
    };
    Ok(CRegattr {
        name,
        string: r.string,
        type_: r.type_,
        description,
    })
}
